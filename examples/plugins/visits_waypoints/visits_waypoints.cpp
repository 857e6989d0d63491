// example.visits_waypoints: plan (the waypoints resolved in the world) and the streaming checker.
#include "visits_waypoints.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fieldproof_example {

namespace {

using fieldproof::Duration;
using fieldproof::SimTime;
using fieldproof::to_seconds;
using fieldproof::assertions::AssertionType;
using fieldproof::assertions::Checker;
using fieldproof::assertions::PlanContext;
using fieldproof::assertions::PlanError;
using fieldproof::assertions::PlannedAssertion;
using fieldproof::assertions::Sample;
using fieldproof::assertions::Verdict;
using fieldproof::scenario::AssertionSpec;
using fieldproof::scenario::MetricSpec;
using fieldproof::scenario::ParamKind;
using fieldproof::scenario::ParamSpec;
using fieldproof::scenario::ParamValue;
using fieldproof::scenario::Ref;
using fieldproof::scenario::TypeSpec;
using nlohmann::json;

std::string text(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

struct Waypoint {
  std::string label;  // the frame, or "(x, y)"
  double x = 0;
  double y = 0;
  double closest_m = std::numeric_limits<double>::infinity();
  std::optional<SimTime> visited_at;  // none: not yet
};

class VisitsWaypointsChecker : public Checker {
 public:
  explicit VisitsWaypointsChecker(const PlannedAssertion& p) : Checker(p) {
    const json& r = p.resolved;
    tolerance_ = r.at("tolerance_m").get<double>();
    // Times arrive as SimTime (integer nanoseconds); the deadline is the spec's Duration.
    if (p.spec.within) within_ = SimTime::zero() + *p.spec.within;
    for (const auto& w : r.at("waypoints")) {
      Waypoint wp;
      wp.label = w.at("label").get<std::string>();
      wp.x = w.at("x").get<double>();
      wp.y = w.at("y").get<double>();
      waypoints_.push_back(std::move(wp));
    }
  }

  void on_sample(const Sample& s, SimTime t) override {
    // Poses before the timeline starts (t < 0) do not count: the vehicle may be spawned on one.
    if (resolved() || t < SimTime::zero() || s.kind != Sample::Kind::kPose ||
        s.vehicle != planned().vehicle) {
      return;
    }
    last_sim_ = s.sim;
    for (auto& w : waypoints_) {
      const double d = std::hypot(s.pose.x - w.x, s.pose.y - w.y);
      if (d < w.closest_m) w.closest_m = d;
      if (!w.visited_at && d <= tolerance_) {
        w.visited_at = t;
        ++visited_;
        note(t, s, {{"visited", w.label}, {"distance_m", std::round(d * 1000) / 1000}});
      }
    }
    if (visited_ == waypoints_.size()) {
      completed_at_ = t;
      resolve(Verdict::kPassed,
              planned().vehicle + " visited all " + std::to_string(waypoints_.size()) +
                  " waypoints (the last at " + text("%.3g", to_seconds(t)) + " s)",
              t, s.sim, evidence());
    }
  }

  void on_tick(SimTime t) override {
    if (!resolved() && within_ && t > *within_)
      fail(t, "within " + text("%g", to_seconds(*within_)) + " s");
  }

  void on_finish(SimTime t) override {
    if (!resolved()) fail(t, "by the end of the timeline");
  }

  json metrics() const override {
    json m = {{"visited", {{"value", static_cast<double>(visited_)}, {"unit", ""}}}};
    if (completed_at_) m["completed_at_s"] = {{"value", to_seconds(*completed_at_)}, {"unit", "s"}};
    return m;
  }

 private:
  json evidence() const {
    json visited = json::array();
    json missing = json::array();
    for (const auto& w : waypoints_) {
      if (w.visited_at) {
        visited.push_back({{"waypoint", w.label}, {"t_s", to_seconds(*w.visited_at)}});
      } else {
        missing.push_back({{"waypoint", w.label},
                           {"closest_m", std::isfinite(w.closest_m) ? json(w.closest_m) : json()}});
      }
    }
    return {{"visited", visited}, {"missing", missing}};
  }

  void fail(SimTime t, const std::string& when) {
    std::string names;
    for (const auto& w : waypoints_) {
      if (!w.visited_at) names += (names.empty() ? "" : ", ") + w.label;
    }
    resolve(Verdict::kFailed,
            planned().vehicle + " did not visit " + names + " " + when + " (" +
                std::to_string(visited_) + " of " + std::to_string(waypoints_.size()) +
                " visited, tolerance " + text("%g", tolerance_) + " m)",
            t, last_sim_, evidence());
  }

  double tolerance_ = 0.5;
  std::optional<SimTime> within_;
  std::vector<Waypoint> waypoints_;
  size_t visited_ = 0;
  std::optional<SimTime> completed_at_;
  SimTime last_sim_;
};

class VisitsWaypointsType : public AssertionType {
 public:
  std::string_view name() const override { return kVisitsWaypoints; }

  PlannedAssertion plan(const AssertionSpec& spec, const PlanContext& ctx) const override {
    PlannedAssertion p{spec, spec.vehicle, json::object(), {}};
    // The validator checked the keys and that the vehicle is one of the scenario's.
    if (spec.vehicle.empty()) throw PlanError(spec.path + ".vehicle", "a vehicle is required");
    p.watch.poses.insert(spec.vehicle);
    const ParamValue* list = spec.params.get("waypoints");
    if (list == nullptr || list->items.empty()) {
      throw PlanError(spec.path + ".waypoints", "one or more waypoints are required");
    }
    json waypoints = json::array();
    for (size_t i = 0; i < list->items.size(); ++i) {
      const auto& placement = list->items[i].placement;
      // A frame the world does not have is refused here, naming the item.
      const auto pose = ctx.place(placement, spec.path + ".waypoints[" + std::to_string(i) + "]");
      const std::string label =
          placement.is_frame() ? placement.frame
                               : "(" + text("%.2f", pose.x) + ", " + text("%.2f", pose.y) + ")";
      waypoints.push_back({{"label", label}, {"x", pose.x}, {"y", pose.y}});
    }
    p.resolved["waypoints"] = waypoints;
    const ParamValue* tol = spec.params.get("tolerance_m");
    p.resolved["tolerance_m"] = tol != nullptr ? tol->number : 0.5;
    if (spec.within) p.resolved["within_s"] = to_seconds(*spec.within);
    return p;
  }

  std::unique_ptr<Checker> checker(const PlannedAssertion& planned) const override {
    return std::make_unique<VisitsWaypointsChecker>(planned);
  }
};

ParamSpec param(std::string name, ParamKind kind, std::string description) {
  ParamSpec p;
  p.name = std::move(name);
  p.kind = kind;
  p.description = std::move(description);
  return p;
}

}  // namespace

TypeSpec visits_waypoints_spec() {
  TypeSpec t;
  t.type = kVisitsWaypoints;
  t.summary = "The vehicle's ground truth visits every waypoint of a list, in any order.";
  ParamSpec vehicle =
      param("vehicle", ParamKind::kName, "the vehicle whose ground-truth pose is read");
  vehicle.required = true;
  vehicle.ref = Ref::kVehicle;  // the validator checks it is one of the scenario's
  ParamSpec waypoints =
      param("waypoints", ParamKind::kList, "the places to visit, in any order (one or more)");
  waypoints.required = true;
  waypoints.fields = {param("item", ParamKind::kPlacement, "a frame of the world, or x, y")};
  waypoints.min_items = 1;
  ParamSpec tolerance = param("tolerance_m", ParamKind::kNumber, "how close counts as a visit");
  tolerance.default_value = "0.5";
  tolerance.minimum = 0;
  tolerance.exclusive_minimum = true;
  ParamSpec within = param("within_s", ParamKind::kDuration,
                           "deadline after the timeline starts; the end of the timeline when "
                           "absent");
  t.params = {vehicle, waypoints, tolerance, within};
  t.metrics = {MetricSpec{"visited", "", "waypoints visited"},
               MetricSpec{"completed_at_s", "s", "when the last waypoint was visited"}};
  return t;
}

std::unique_ptr<AssertionType> make_visits_waypoints_type() {
  return std::make_unique<VisitsWaypointsType>();
}

}  // namespace fieldproof_example
