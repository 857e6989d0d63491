// reach_pose and no_collision (seed 004).
#include <algorithm>
#include <cmath>
#include <limits>

#include "builtin.hpp"
#include "fieldproof/assertions/checker.hpp"
#include "util.hpp"

namespace fieldproof::assertions {

using nlohmann::json;
using namespace detail;  // NOLINT(google-build-using-namespace): the part's own helpers

// ---- reach_pose ----
namespace {

class ReachPoseChecker : public Checker {
 public:
  explicit ReachPoseChecker(const PlannedAssertion& p) : Checker(p) {
    const json& r = p.resolved;
    target_ = {r["target"]["x"].get<double>(), r["target"]["y"].get<double>(),
               r["target"]["yaw"].get<double>()};
    tolerance_ = r["tolerance_m"].get<double>();
    if (r.contains("yaw_tolerance_rad")) yaw_tolerance_ = r["yaw_tolerance_rad"].get<double>();
    if (r.contains("within_s")) within_ = r["within_s"].get<double>();
    label_ = r["target_label"].get<std::string>();
  }
  void on_sample(const Sample& s, double t) override {
    if (s.kind != Sample::Kind::kPose || s.vehicle != planned().vehicle || resolved()) return;
    const double d = std::hypot(s.pose.x - target_.x, s.pose.y - target_.y);
    final_ = d;
    if (d < closest_) closest_ = d;
    note(t, s, {{"distance_m", round_to(d, 1e-3)}});
    bool yaw_ok = true;
    if (yaw_tolerance_ >= 0) {
      const double dy = std::remainder(s.pose.yaw - target_.yaw, 2 * M_PI);
      yaw_ok = std::abs(dy) <= yaw_tolerance_;
    }
    if (d <= tolerance_ && yaw_ok && t >= 0) {
      reached_at_ = t;
      resolve(Verdict::kPassed,
              planned().vehicle + " came within " + fmt("%.2f", tolerance_) + " m of " + label_ +
                  " (" + fmt("%.2f", d) + " m) at " + seconds_text(t),
              t, s.sim, {{"distance_m", d}});
    }
    last_sim_ = s.sim;
  }
  void on_tick(double t) override {
    if (!resolved() && within_ >= 0 && t > within_) fail(t, "within " + seconds_text(within_));
  }
  void on_finish(double t) override {
    if (!resolved()) fail(t, "by the end of the timeline");
  }
  json metrics() const override {
    json m = json::object();
    if (std::isfinite(closest_)) m["closest_m"] = metric(closest_, "m");
    if (reached_at_ >= 0) m["reached_at_s"] = metric(reached_at_, "s");
    if (std::isfinite(final_)) m["final_distance_m"] = metric(final_, "m");
    return m;
  }

 private:
  void fail(double t, const std::string& when) {
    std::string closest = std::isfinite(closest_) ? fmt("%.2f", closest_) + " m" : "no pose seen";
    resolve(Verdict::kFailed,
            planned().vehicle + " did not come within " + fmt("%.2f", tolerance_) + " m of " +
                label_ + " " + when + " (closest " + closest + ")",
            t, last_sim_, {{"closest_m", std::isfinite(closest_) ? json(closest_) : json()}});
  }
  world::Pose2D target_;
  double tolerance_ = 0.5;
  double yaw_tolerance_ = -1;
  double within_ = -1;
  std::string label_;
  double closest_ = std::numeric_limits<double>::infinity();
  double final_ = std::numeric_limits<double>::infinity();
  double reached_at_ = -1;
  SimTime last_sim_;
};

class ReachPoseType : public AssertionType {
 public:
  std::string_view name() const override { return "reach_pose"; }
  PlannedAssertion plan(const scenario::AssertionSpec& spec,
                        const PlanContext& ctx) const override {
    PlannedAssertion p{spec, spec.vehicle, json::object(), {}};
    p.watch.poses.insert(spec.vehicle);
    const scenario::ParamValue* target = spec.params.get("target");
    if (!target) throw PlanError(spec.path + ".target", "reach_pose needs a target");
    const world::Pose2D pose = ctx.place(target->placement, spec.path + ".target");
    p.resolved["target"] = {{"x", pose.x}, {"y", pose.y}, {"yaw", pose.yaw}};
    p.resolved["target_label"] = target->placement.is_frame()
                                     ? target->placement.frame
                                     : "(" + fmt("%.2f", pose.x) + ", " + fmt("%.2f", pose.y) + ")";
    const scenario::ParamValue* tol = spec.params.get("tolerance_m");
    p.resolved["tolerance_m"] = tol ? tol->number : 0.5;
    if (const auto* y = spec.params.get("yaw_tolerance_rad"); y && y->kind != y->Kind::kNull) {
      p.resolved["yaw_tolerance_rad"] = y->number;
    }
    if (spec.within) p.resolved["within_s"] = static_cast<double>(spec.within->ns()) / 1e9;
    return p;
  }
  std::unique_ptr<Checker> checker(const PlannedAssertion& p) const override {
    return std::make_unique<ReachPoseChecker>(p);
  }
};

// ---- no_collision ----

class NoCollisionChecker : public Checker {
 public:
  explicit NoCollisionChecker(const PlannedAssertion& p) : Checker(p) {
    for (const auto& i : p.resolved["ignore"]) ignore_.push_back(i.get<std::string>());
  }
  void on_sample(const Sample& s, double t) override {
    if (s.kind != Sample::Kind::kContact || s.vehicle != planned().vehicle || resolved()) return;
    if (t < 0) return;  // before the timeline
    std::vector<std::string> counted;
    for (const auto& c : s.contacts) {
      bool ignored = false;
      for (const auto& i : ignore_) {
        if (c == i || c.rfind(i + "::", 0) == 0) ignored = true;
      }
      if (!ignored) counted.push_back(c);
    }
    if (counted.empty()) return;
    contacts_ += counted.size();
    note(t, s);
    resolve(Verdict::kFailed,
            planned().vehicle + " touched " + counted.front() + " at " + seconds_text(t), t, s.sim,
            {{"with", counted}});
  }
  void on_finish(double t) override {
    resolve(Verdict::kPassed, planned().vehicle + " touched nothing", t, sim_at(t));
  }
  json metrics() const override {
    return {{"contacts", metric(static_cast<double>(contacts_), "")}};
  }

 private:
  std::vector<std::string> ignore_;
  size_t contacts_ = 0;
};

class NoCollisionType : public AssertionType {
 public:
  std::string_view name() const override { return "no_collision"; }
  PlannedAssertion plan(const scenario::AssertionSpec& spec, const PlanContext&) const override {
    PlannedAssertion p{spec, spec.vehicle, json::object(), {}};
    p.watch.contacts.insert(spec.vehicle);
    json ignore = json::array();
    if (const auto* i = spec.params.get("ignore"); i && i->kind == i->Kind::kList) {
      for (const auto& item : i->items) ignore.push_back(item.string);
    }
    p.resolved["ignore"] = ignore;
    p.resolved["topic"] = "/model/" + spec.vehicle + "/contacts";
    return p;
  }
  std::unique_ptr<Checker> checker(const PlannedAssertion& p) const override {
    return std::make_unique<NoCollisionChecker>(p);
  }
};

// ---- within_time ----

}  // namespace

namespace detail {
void add_pose_types(AssertionTypes& types) {
  types.add(std::make_unique<ReachPoseType>());
  types.add(std::make_unique<NoCollisionType>());
}
}  // namespace detail

}  // namespace fieldproof::assertions
