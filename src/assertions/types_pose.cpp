// reach_pose and no_collision (docs/assertions.md).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "builtin.hpp"
#include "fieldproof/assertions/checker.hpp"
#include "util.hpp"

namespace fieldproof::assertions {

using nlohmann::json;
using namespace detail;  // NOLINT(google-build-using-namespace): the part's own helpers

// ---- reach_pose ----
namespace {

// A pose as reach_pose's evidence shows it.
struct Seen {
  SimTime t;
  SimTime sim;
  world::Pose2D pose;
  double distance = 0;
  std::optional<double> heading_error;
  json to_json() const {
    json j = {{"t_s", round_to(to_seconds(t), 1e-3)}, {"sim_s", to_seconds(sim)},
              {"x", round_to(pose.x, 1e-4)},          {"y", round_to(pose.y, 1e-4)},
              {"yaw", round_to(pose.yaw, 1e-4)},      {"distance_m", round_to(distance, 1e-4)}};
    if (heading_error) j["heading_error_rad"] = round_to(*heading_error, 1e-4);
    return j;
  }
};

class ReachPoseChecker : public Checker {
 public:
  explicit ReachPoseChecker(const PlannedAssertion& p) : Checker(p) {
    const json& r = p.resolved;
    target_ = {r["target"]["x"].get<double>(), r["target"]["y"].get<double>(),
               r["target"]["yaw"].get<double>()};
    tolerance_ = r["tolerance_m"].get<double>();
    if (r.contains("yaw_tolerance_rad")) yaw_tolerance_ = r["yaw_tolerance_rad"].get<double>();
    label_ = r["target_label"].get<std::string>();
  }
  void on_sample(const Sample& s, SimTime t) override {
    if (s.kind != Sample::Kind::kPose || s.vehicle != planned().vehicle) return;
    if (window().closed(t)) return on_tick(t);
    const double d = std::hypot(s.pose.x - target_.x, s.pose.y - target_.y);
    std::optional<double> heading;
    if (yaw_tolerance_ >= 0) heading = std::abs(std::remainder(s.pose.yaw - target_.yaw, 2 * M_PI));
    ++samples_;
    final_ = {t, s.sim, s.pose, d, heading};
    note(t, s, "distance_m", d);
    if (t < SimTime::zero()) return;  // before the timeline: seen, not judged
    if (!closest_ || d < closest_->distance) closest_ = final_;
    const bool yaw_ok = !heading || *heading <= yaw_tolerance_;
    if (d <= tolerance_ && yaw_ok) {
      reached_at_ = t;
      std::string how = planned().vehicle + " came within " + fmt("%.2f", tolerance_) + " m of " +
                        label_ + " (" + fmt("%.2f", d) + " m";
      if (heading) how += ", heading off by " + fmt("%.3f", *heading) + " rad";
      resolve(
          Verdict::kPassed, how + ") at " + seconds_text(t), t, s.sim,
          {{"reached", final_->to_json()}, {"final", final_->to_json()}, {"samples", samples_}});
    }
  }
  void on_tick(SimTime t) override {
    if (window().has_end() && window().closed(t))
      fail(window().end(), "within " + seconds_text(window().end()));
  }
  void on_finish(SimTime t) override { fail(t, "by the end of the timeline"); }
  json metrics() const override {
    json m = json::object();
    if (closest_) m["closest_m"] = metric(round_to(closest_->distance, 1e-4), "m");
    if (reached_at_) m["reached_at_s"] = metric(round_to(to_seconds(*reached_at_), 1e-3), "s");
    if (final_) m["final_distance_m"] = metric(round_to(final_->distance, 1e-4), "m");
    return m;
  }

 private:
  void fail(SimTime t, const std::string& when) {
    std::string closest = closest_ ? fmt("%.2f", closest_->distance) + " m" : "no pose seen";
    resolve(Verdict::kFailed,
            planned().vehicle + " did not come within " + fmt("%.2f", tolerance_) + " m of " +
                label_ + " " + when + " (closest " + closest + ")",
            t, final_ ? final_->sim : t,
            {{"closest", closest_ ? closest_->to_json() : json()},
             {"final", final_ ? final_->to_json() : json()},
             {"samples", samples_}});
  }
  world::Pose2D target_;
  double tolerance_ = 0.5;
  double yaw_tolerance_ = -1;
  std::string label_;
  std::optional<Seen> closest_;  // none until a pose within the timeline
  std::optional<Seen> final_;
  std::optional<SimTime> reached_at_;
  uint64_t samples_ = 0;
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
      if (!target->placement.is_frame() && !target->placement.yaw) {
        throw PlanError(spec.path + ".yaw_tolerance_rad",
                        "a heading tolerance needs a target with a yaw");
      }
      p.resolved["yaw_tolerance_rad"] = y->number;
    }
    if (spec.within) p.resolved["within_s"] = to_seconds(*spec.within);
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
  void on_sample(const Sample& s, SimTime t) override {
    if (s.kind != Sample::Kind::kContact || s.vehicle != planned().vehicle) return;
    if (t < SimTime::zero()) return;  // before the timeline
    ++messages_;
    std::vector<std::string> counted;
    for (const auto& c : s.contacts) {
      bool ignored = false;
      for (const auto& i : ignore_) {
        if (c == i || c.rfind(i + "::", 0) == 0) ignored = true;
      }
      if (ignored) {
        ++ignored_;
        if (ignored_names_.size() < 20 &&
            std::find(ignored_names_.begin(), ignored_names_.end(), c) == ignored_names_.end())
          ignored_names_.push_back(c);
      } else {
        counted.push_back(c);
      }
    }
    if (counted.empty()) return;
    contacts_ += counted.size();
    note(t, s);
    resolve(Verdict::kFailed,
            planned().vehicle + " touched " + counted.front() + " at " + seconds_text(t), t, s.sim,
            {{"contact",
              {{"t_s", round_to(to_seconds(t), 1e-3)},
               {"sim_s", to_seconds(s.sim)},
               {"vehicle", planned().vehicle},
               {"with", counted},
               {"count", counted.size()}}},
             {"with", counted},
             {"ignored_contacts", ignored_},
             {"ignored", ignored_names_},
             {"messages", messages_}});
  }
  void on_finish(SimTime t) override {
    resolve(Verdict::kPassed, planned().vehicle + " touched nothing", t, t,
            {{"ignored_contacts", ignored_}, {"ignored", ignored_names_}, {"messages", messages_}});
  }
  json metrics() const override {
    return {{"contacts", metric(static_cast<double>(contacts_), "")}};
  }

 private:
  std::vector<std::string> ignore_;
  size_t contacts_ = 0;
  uint64_t ignored_ = 0;
  std::vector<std::string> ignored_names_;
  uint64_t messages_ = 0;
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
    const std::string topic = string_param(spec.params, "topic");
    p.resolved["topic"] =
        topic.empty() ? topic_of(spec.vehicle, "contacts") : topic_of(spec.vehicle, topic);
    return p;
  }
  std::unique_ptr<Checker> checker(const PlannedAssertion& p) const override {
    return std::make_unique<NoCollisionChecker>(p);
  }
};

}  // namespace

namespace detail {
void add_pose_types(AssertionTypes& types) {
  types.add(std::make_unique<ReachPoseType>());
  types.add(std::make_unique<NoCollisionType>());
}
}  // namespace detail

}  // namespace fieldproof::assertions
