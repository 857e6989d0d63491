// geofence, min_distance and path_efficiency (docs/assertions.md).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "builtin.hpp"
#include "fieldproof/assertions/checker.hpp"
#include "util.hpp"

namespace fieldproof::assertions {

using nlohmann::json;
using scenario::ParamValue;
using namespace detail;  // NOLINT(google-build-using-namespace): the part's own helpers

namespace {

// ---- geofence ----

// A region of the plane with optional height bounds. clearance(): how far inside the boundary a
// point is (negative: how far past it); the boundary itself is inside (clearance 0).
struct Region {
  enum class Shape { kPolygon, kCircle, kBox };
  Shape shape = Shape::kBox;
  std::vector<world::Pose2D> vertices;  // kPolygon
  double cx = 0, cy = 0, r = 0;         // kCircle
  double x_min = 0, x_max = 0, y_min = 0, y_max = 0;
  std::optional<double> z_min, z_max;

  double planar(double x, double y) const {
    switch (shape) {
      case Shape::kCircle:
        return r - std::hypot(x - cx, y - cy);
      case Shape::kBox: {
        const double dx = std::max(x_min - x, x - x_max);  // > 0: outside along x
        const double dy = std::max(y_min - y, y - y_max);
        if (dx <= 0 && dy <= 0) return std::min(-dx, -dy);
        return -std::hypot(std::max(dx, 0.0), std::max(dy, 0.0));
      }
      case Shape::kPolygon: {
        double best = std::numeric_limits<double>::infinity();
        bool inside = false;
        const size_t n = vertices.size();
        for (size_t i = 0, j = n - 1; i < n; j = i++) {
          const world::Pose2D& a = vertices[j];
          const world::Pose2D& b = vertices[i];
          const double ex = b.x - a.x, ey = b.y - a.y;
          const double len2 = ex * ex + ey * ey;
          double u = len2 > 0 ? ((x - a.x) * ex + (y - a.y) * ey) / len2 : 0.0;
          u = std::clamp(u, 0.0, 1.0);
          best = std::min(best, std::hypot(x - (a.x + u * ex), y - (a.y + u * ey)));
          if ((b.y > y) != (a.y > y) && x < (a.x - b.x) * (y - b.y) / (a.y - b.y) + b.x) {
            inside = !inside;
          }
        }
        if (best <= 1e-12) return 0.0;  // on an edge: inside
        return inside ? best : -best;
      }
    }
    return 0.0;
  }
  // Poses are on the ground: z = 0.
  double clearance(double x, double y) const {
    double c = planar(x, y);
    if (z_min) c = std::min(c, 0.0 - *z_min);
    if (z_max) c = std::min(c, *z_max - 0.0);
    return c;
  }
  json to_json() const {
    json j;
    switch (shape) {
      case Shape::kPolygon: {
        json v = json::array();
        for (const auto& p : vertices) v.push_back({p.x, p.y});
        j["polygon"] = v;
        break;
      }
      case Shape::kCircle:
        j["circle"] = {{"x", cx}, {"y", cy}, {"radius_m", r}};
        break;
      case Shape::kBox:
        j["box"] = {{"x_min", x_min}, {"x_max", x_max}, {"y_min", y_min}, {"y_max", y_max}};
        break;
    }
    if (z_min) j["z_min"] = *z_min;
    if (z_max) j["z_max"] = *z_max;
    return j;
  }
  static Region from_json(const json& j) {
    Region g;
    if (j.contains("polygon")) {
      g.shape = Shape::kPolygon;
      for (const auto& v : j["polygon"])
        g.vertices.push_back({v[0].get<double>(), v[1].get<double>(), 0});
    } else if (j.contains("circle")) {
      g.shape = Shape::kCircle;
      g.cx = j["circle"]["x"].get<double>();
      g.cy = j["circle"]["y"].get<double>();
      g.r = j["circle"]["radius_m"].get<double>();
    } else {
      g.shape = Shape::kBox;
      const json& b = j["box"];
      g.x_min = b["x_min"].get<double>();
      g.x_max = b["x_max"].get<double>();
      g.y_min = b["y_min"].get<double>();
      g.y_max = b["y_max"].get<double>();
    }
    if (j.contains("z_min")) g.z_min = j["z_min"].get<double>();
    if (j.contains("z_max")) g.z_max = j["z_max"].get<double>();
    return g;
  }
};

double number_of(const ParamValue& v, const std::string& path) {
  if (v.kind == ParamValue::Kind::kNumber || v.kind == ParamValue::Kind::kInteger) return v.number;
  throw PlanError(path, "a number is needed");
}

Region plan_region(const ParamValue& region, const std::string& path) {
  Region g;
  int shapes = 0;
  if (const ParamValue* poly = region.get("polygon");
      poly && poly->kind == ParamValue::Kind::kList) {
    ++shapes;
    g.shape = Region::Shape::kPolygon;
    for (size_t i = 0; i < poly->items.size(); ++i) {
      const ParamValue& v = poly->items[i];
      const std::string vp = path + ".polygon[" + std::to_string(i) + "]";
      if (v.kind != ParamValue::Kind::kList || v.items.size() != 2)
        throw PlanError(vp, "a vertex is [x, y]");
      g.vertices.push_back({number_of(v.items[0], vp), number_of(v.items[1], vp), 0});
    }
    if (g.vertices.size() < 3)
      throw PlanError(path + ".polygon", "a polygon has three or more vertices");
  }
  if (const ParamValue* c = region.get("circle"); c && c->kind == ParamValue::Kind::kMap) {
    ++shapes;
    g.shape = Region::Shape::kCircle;
    g.cx = number_param(*c, "x").value_or(0);
    g.cy = number_param(*c, "y").value_or(0);
    g.r = number_param(*c, "radius_m").value_or(0);
    if (g.r <= 0) throw PlanError(path + ".circle.radius_m", "the radius must be positive");
  }
  if (const ParamValue* b = region.get("box"); b && b->kind == ParamValue::Kind::kMap) {
    ++shapes;
    g.shape = Region::Shape::kBox;
    g.x_min = number_param(*b, "x_min").value_or(0);
    g.x_max = number_param(*b, "x_max").value_or(0);
    g.y_min = number_param(*b, "y_min").value_or(0);
    g.y_max = number_param(*b, "y_max").value_or(0);
    if (g.x_min > g.x_max || g.y_min > g.y_max)
      throw PlanError(path + ".box", "x_min must not exceed x_max, nor y_min y_max");
  }
  if (shapes != 1) throw PlanError(path, "give exactly one of polygon, circle or box");
  g.z_min = number_param(region, "z_min");
  g.z_max = number_param(region, "z_max");
  if (g.z_min && g.z_max && *g.z_min > *g.z_max)
    throw PlanError(path + ".z_min", "z_min must not exceed z_max");
  return g;
}

class GeofenceChecker : public Checker {
 public:
  explicit GeofenceChecker(const PlannedAssertion& p)
      : Checker(p), region_(Region::from_json(p.resolved["region"])) {
    outside_ = p.resolved["mode"].get<std::string>() == "outside";
  }
  void on_sample(const Sample& s, SimTime t) override {
    if (s.kind != Sample::Kind::kPose || s.vehicle != planned().vehicle) return;
    if (window().closed(t)) return on_tick(t);
    if (!window().contains(t)) return;
    const double inside = region_.clearance(s.pose.x, s.pose.y);
    // The clearance on the right side: inside mode, how far inside; outside mode, how far out.
    const double c = outside_ ? -inside : inside;
    ++samples_;
    note(t, s, "clearance_m", c);
    if (c < min_clearance_) {
      min_clearance_ = c;
      min_pose_ = pose_json(t, s, c);
    }
    const bool wrong = outside_ ? inside >= 0 : inside < 0;
    if (wrong) {
      resolve(Verdict::kFailed,
              planned().vehicle + " was " + (outside_ ? "inside" : "outside") + " the region at " +
                  xy_text(s.pose) + " at " + seconds_text(t) + " (clearance " + fmt("%.2f", c) +
                  " m)",
              t, s.sim,
              {{"violation", pose_json(t, s, c)},
               {"min_clearance", min_pose_},
               {"samples", samples_},
               {"region", planned().resolved["region"]},
               {"mode", planned().resolved["mode"]}});
    }
  }
  void on_tick(SimTime t) override {
    if (window().closed(t))
      settle(window().end(), "when the window closed at " + seconds_text(window().end_s()));
  }
  void on_finish(SimTime t) override { settle(t, "at the end of the timeline"); }
  json metrics() const override {
    json m = {{"samples", metric(static_cast<double>(samples_), "")}};
    if (samples_) m["min_clearance_m"] = metric(round_to(min_clearance_, 1e-4), "m");
    return m;
  }

 private:
  static json pose_json(SimTime t, const Sample& s, double c) {
    return {{"t_s", round_to(to_seconds(t), 1e-3)},
            {"sim_s", to_seconds(s.sim)},
            {"x", round_to(s.pose.x, 1e-4)},
            {"y", round_to(s.pose.y, 1e-4)},
            {"clearance_m", round_to(c, 1e-4)}};
  }
  void settle(SimTime t, const std::string& when) {
    if (samples_ == 0) {
      resolve(Verdict::kFailed,
              "no pose of " + planned().vehicle + " was seen in " + window().describe(), t, t,
              {{"min_clearance", nullptr},
               {"samples", 0},
               {"region", planned().resolved["region"]},
               {"mode", planned().resolved["mode"]}});
      return;
    }
    resolve(Verdict::kPassed,
            planned().vehicle + " stayed " + (outside_ ? "outside" : "inside") + " the region " +
                when + " (min clearance " + fmt("%.2f", min_clearance_) + " m over " +
                std::to_string(samples_) + " poses)",
            t, t,
            {{"min_clearance", min_pose_},
             {"samples", samples_},
             {"region", planned().resolved["region"]},
             {"mode", planned().resolved["mode"]}});
  }
  Region region_;
  bool outside_ = false;
  uint64_t samples_ = 0;
  double min_clearance_ = std::numeric_limits<double>::infinity();
  json min_pose_;
};

class GeofenceType : public AssertionType {
 public:
  std::string_view name() const override { return "geofence"; }
  PlannedAssertion plan(const scenario::AssertionSpec& spec, const PlanContext&) const override {
    PlannedAssertion p{spec, spec.vehicle, json::object(), {}};
    if (spec.vehicle.empty()) throw PlanError(spec.path + ".vehicle", "geofence needs a vehicle");
    p.watch.poses.insert(spec.vehicle);
    const ParamValue* region = spec.params.get("region");
    if (!region || region->kind != ParamValue::Kind::kMap)
      throw PlanError(spec.path + ".region", "geofence needs a region");
    p.resolved["region"] = plan_region(*region, spec.path + ".region").to_json();
    const std::string mode = string_param(spec.params, "mode");
    p.resolved["mode"] = mode.empty() ? "inside" : mode;
    return p;
  }
  std::unique_ptr<Checker> checker(const PlannedAssertion& p) const override {
    return std::make_unique<GeofenceChecker>(p);
  }
};

// ---- min_distance ----

// Resolves `to` (vehicle, model or target) into resolved["to"] and the watch.
void plan_to(const ParamValue& params, const std::string& path, const PlanContext& ctx,
             json& resolved, Watch& watch) {
  const ParamValue* to = params.get("to");
  if (!to || to->kind != ParamValue::Kind::kMap)
    throw PlanError(path + ".to", "give to: vehicle, model or target");
  const std::string vehicle = string_param(*to, "vehicle");
  const std::string model = string_param(*to, "model");
  const ParamValue* target = to->get("target");
  const bool has_target = target && target->kind == ParamValue::Kind::kPlacement;
  const int given = (vehicle.empty() ? 0 : 1) + (model.empty() ? 0 : 1) + (has_target ? 1 : 0);
  if (given != 1) throw PlanError(path + ".to", "give exactly one of vehicle, model or target");
  if (!vehicle.empty()) {
    if (!ctx.scenario.vehicle(vehicle))
      throw PlanError(path + ".to.vehicle", "no vehicle '" + vehicle + "' in the scenario");
    resolved["to"] = {{"vehicle", vehicle}};
    watch.poses.insert(vehicle);
  } else if (!model.empty()) {
    resolved["to"] = {{"model", model}};
    watch.poses.insert(model);
  } else {
    const world::Pose2D p = ctx.place(target->placement, path + ".to.target");
    resolved["to"] = {{"target", {{"x", p.x}, {"y", p.y}}}};
    resolved["to"]["label"] = target->placement.is_frame() ? target->placement.frame : xy_text(p);
  }
}

DistanceMeter distance_meter(const std::string& vehicle, const json& to) {
  if (to.contains("target")) {
    return {vehicle, "",
            world::Pose2D{to["target"]["x"].get<double>(), to["target"]["y"].get<double>(), 0}};
  }
  const std::string other =
      to.contains("vehicle") ? to["vehicle"].get<std::string>() : to["model"].get<std::string>();
  return {vehicle, other, std::nullopt};
}

std::string to_text(const json& to) {
  if (to.contains("vehicle")) return to["vehicle"].get<std::string>();
  if (to.contains("model")) return to["model"].get<std::string>();
  return to["label"].get<std::string>();
}

class MinDistanceChecker : public Checker {
 public:
  explicit MinDistanceChecker(const PlannedAssertion& p)
      : Checker(p), meter_(distance_meter(p.vehicle, p.resolved["to"])) {
    min_ = p.resolved["min_m"].get<double>();
    other_ = to_text(p.resolved["to"]);
  }
  void on_sample(const Sample& s, SimTime t) override {
    if (s.kind != Sample::Kind::kPose) return;
    if (window().closed(t)) return on_tick(t);
    if (!window().contains(t)) return;
    if (!meter_.add(s, t)) return;
    const double d = meter_.distance();
    note(t, s, "distance_m", d);
    if (d < min_) {
      resolve(Verdict::kFailed,
              planned().vehicle + " came within " + fmt("%.2f", d) + " m of " + other_ + " at " +
                  seconds_text(t) + " (min " + fmt("%.2f", min_) + " m)",
              t, s.sim, {{"closest", meter_.closest_evidence()}, {"samples", meter_.measured()}});
    }
  }
  void on_tick(SimTime t) override {
    if (window().closed(t))
      settle(window().end(), "when the window closed at " + seconds_text(window().end_s()));
  }
  void on_finish(SimTime t) override { settle(t, "at the end of the timeline"); }
  json metrics() const override { return meter_.metrics(); }

 private:
  void settle(SimTime t, const std::string& when) {
    if (meter_.measured() == 0) {
      resolve(Verdict::kFailed,
              "no distance between " + planned().vehicle + " and " + other_ + " was measured in " +
                  window().describe(),
              t, t, {{"closest", nullptr}, {"samples", 0}});
      return;
    }
    resolve(Verdict::kPassed,
            planned().vehicle + " kept " + fmt("%.2f", min_) + " m from " + other_ + " " + when +
                " (closest " + fmt("%.2f", meter_.closest()) + " m at " +
                seconds_text(meter_.closest_at()) + ")",
            t, t, {{"closest", meter_.closest_evidence()}, {"samples", meter_.measured()}});
  }
  DistanceMeter meter_;
  double min_ = 0;
  std::string other_;
};

class MinDistanceType : public AssertionType {
 public:
  std::string_view name() const override { return "min_distance"; }
  PlannedAssertion plan(const scenario::AssertionSpec& spec,
                        const PlanContext& ctx) const override {
    PlannedAssertion p{spec, spec.vehicle, json::object(), {}};
    if (spec.vehicle.empty())
      throw PlanError(spec.path + ".vehicle", "min_distance needs a vehicle");
    p.watch.poses.insert(spec.vehicle);
    plan_to(spec.params, spec.path, ctx, p.resolved, p.watch);
    if (p.resolved["to"].value("vehicle", "") == spec.vehicle)
      throw PlanError(spec.path + ".to.vehicle", "the distance of a vehicle to itself");
    const auto min = number_param(spec.params, "min_m");
    if (!min) throw PlanError(spec.path + ".min_m", "min_distance needs min_m");
    p.resolved["min_m"] = *min;
    return p;
  }
  std::unique_ptr<Checker> checker(const PlannedAssertion& p) const override {
    return std::make_unique<MinDistanceChecker>(p);
  }
};

// ---- path_efficiency ----

class PathEfficiencyChecker : public Checker {
 public:
  explicit PathEfficiencyChecker(const PlannedAssertion& p) : Checker(p) {
    const json& r = p.resolved;
    action_ = r.value("action", "");
    min_ratio_ = r["min_ratio"].get<double>();
    if (r.contains("max_path_m")) max_path_ = r["max_path_m"].get<double>();
    if (r.contains("target")) {
      target_ = world::Pose2D{r["target"]["x"].get<double>(), r["target"]["y"].get<double>(), 0};
    }
  }
  void on_action(const std::string& label, ActionEvent event, SimTime t,
                 const std::string& status) override {
    if (action_.empty() || label != action_) return;
    if (event == ActionEvent::kStart) {
      open_ = true;
      return;
    }
    open_ = false;
    judge(t, action_ + " ended " + status);
  }
  void on_sample(const Sample& s, SimTime t) override {
    if (s.kind != Sample::Kind::kPose || s.vehicle != planned().vehicle) return;
    if (action_.empty()) {
      if (window().closed(t)) return on_tick(t);
      if (!window().contains(t)) return;
    } else if (!open_) {
      return;
    }
    meter_.add(s.pose, t);
    last_sim_ = s.sim;
    note(t, s, "path_m", meter_.path_m());
    if (max_path_ && meter_.path_m() > *max_path_) {
      resolve(Verdict::kFailed,
              planned().vehicle + " drove " + fmt("%.2f", meter_.path_m()) +
                  " m, more than max_path_m " + fmt("%.2f", *max_path_) + " at " + seconds_text(t),
              t, s.sim, evidence());
    }
  }
  void on_tick(SimTime t) override {
    if (action_.empty() && window().closed(t))
      judge(window().end(), "the window closed at " + seconds_text(window().end_s()));
  }
  void on_finish(SimTime t) override {
    if (!action_.empty() && meter_.poses() == 0 && !open_) {
      resolve(Verdict::kFailed, action_ + " did not run before the end of the timeline", t, t,
              evidence());
      return;
    }
    judge(t, "the timeline ended");
  }
  json metrics() const override { return meter_.metrics(target_); }

 private:
  json evidence() const {
    json e = meter_.metrics(target_);
    for (auto it = e.begin(); it != e.end(); ++it) *it = json((*it)["value"]);
    e["samples"] = meter_.poses();
    return e;
  }
  void judge(SimTime t, const std::string& when) {
    if (meter_.poses() < 2) {
      resolve(Verdict::kFailed,
              "fewer than two poses of " + planned().vehicle + " in the window (" +
                  std::to_string(meter_.poses()) + "; " + when + ")",
              t, meter_.poses() ? last_sim_ : t, evidence());
      return;
    }
    const double e = meter_.efficiency(target_);
    const std::string how = "efficiency " + fmt("%.2f", e) + " (straight " +
                            fmt("%.2f", meter_.straight_m(target_)) + " m over a path of " +
                            fmt("%.2f", meter_.path_m()) + " m; " + when + ")";
    if (e < min_ratio_) {
      resolve(Verdict::kFailed, how + " is below min_ratio " + fmt("%.2f", min_ratio_), t,
              last_sim_, evidence());
    } else {
      resolve(Verdict::kPassed, how, t, last_sim_, evidence());
    }
  }
  std::string action_;
  bool open_ = false;
  double min_ratio_ = 0.5;
  std::optional<double> max_path_;
  std::optional<world::Pose2D> target_;
  PathMeter meter_;
  SimTime last_sim_;
};

class PathEfficiencyType : public AssertionType {
 public:
  std::string_view name() const override { return "path_efficiency"; }
  PlannedAssertion plan(const scenario::AssertionSpec& spec,
                        const PlanContext& ctx) const override {
    PlannedAssertion p{spec, spec.vehicle, json::object(), {}};
    if (spec.vehicle.empty())
      throw PlanError(spec.path + ".vehicle", "path_efficiency needs a vehicle");
    p.watch.poses.insert(spec.vehicle);
    const std::string action = string_param(spec.params, "action");
    if (!action.empty()) {
      if (!ctx.scenario.entry(action))
        throw PlanError(spec.path + ".action", "no timeline entry '" + action + "'");
      if (spec.after || spec.within)
        throw PlanError(spec.path + ".action",
                        "the window is the action's run: give action or after_s/within_s");
      p.resolved["action"] = action;
    }
    if (const ParamValue* t = spec.params.get("target");
        t && t->kind == ParamValue::Kind::kPlacement) {
      const world::Pose2D pose = ctx.place(t->placement, spec.path + ".target");
      p.resolved["target"] = {{"x", pose.x}, {"y", pose.y}};
    }
    p.resolved["min_ratio"] = number_param(spec.params, "min_ratio").value_or(0.5);
    if (auto m = number_param(spec.params, "max_path_m")) p.resolved["max_path_m"] = *m;
    return p;
  }
  std::unique_ptr<Checker> checker(const PlannedAssertion& p) const override {
    return std::make_unique<PathEfficiencyChecker>(p);
  }
};

}  // namespace

namespace detail {
void add_geometry_types(AssertionTypes& types) {
  types.add(std::make_unique<GeofenceType>());
  types.add(std::make_unique<MinDistanceType>());
  types.add(std::make_unique<PathEfficiencyType>());
}

// Shared with the KPI collectors (kpis.cpp).
void plan_target(const ParamValue& params, const std::string& path, const PlanContext& ctx,
                 json& resolved, Watch& watch) {
  plan_to(params, path, ctx, resolved, watch);
}
DistanceMeter make_distance_meter(const std::string& vehicle, const json& to) {
  return distance_meter(vehicle, to);
}
}  // namespace detail

}  // namespace fieldproof::assertions
