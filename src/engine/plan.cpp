#include "fieldproof/engine/plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <yaml-cpp/yaml.h>

#include "fieldproof/assertions/plugin.hpp"
#include "fieldproof/time/seconds.hpp"
#include "fieldproof/util/example_defaults.hpp"
#include "fieldproof/util/input_file.hpp"
#include "fieldproof/world/robot_model.hpp"

namespace fieldproof::engine {

using nlohmann::json;

namespace {

// Whether the scenario document says outputs.record at all (it loaded already, so it parses).
bool record_key_given(const std::string& file) {
  try {
    const Result<std::string> in =
        util::read_input_file(file, util::kMaxScenarioBytes, "the scenario");
    if (!in.ok()) return false;
    const YAML::Node root = YAML::Load(*in);
    const YAML::Node out = root["outputs"];
    return out && out.IsMap() && out["record"];
  } catch (const std::exception&) {
    return false;
  }
}

std::string pos_prefix(const scenario::Scenario& s, const scenario::SourcePos& pos,
                       const std::string& path) {
  std::string out = s.file;
  if (pos.line > 0) out += ":" + std::to_string(pos.line) + ":" + std::to_string(pos.column);
  out += ": ";
  if (!path.empty()) out += path + ": ";
  return out;
}

json param_json(const scenario::ParamValue& v) {
  using K = scenario::ParamValue::Kind;
  switch (v.kind) {
    case K::kNull:
      return nullptr;
    case K::kBool:
      return v.boolean;
    case K::kInteger:
      return v.integer;
    case K::kNumber:
      return v.number;
    case K::kString:
      return v.string;
    case K::kDuration:
      return to_seconds(v.duration);
    case K::kPlacement:
      if (v.placement.is_frame()) return v.placement.frame;
      return json{{"x", v.placement.x},
                  {"y", v.placement.y},
                  {"yaw", v.placement.yaw ? json(*v.placement.yaw) : json()}};
    case K::kList: {
      json a = json::array();
      for (const auto& i : v.items) a.push_back(param_json(i));
      return a;
    }
    case K::kMap: {
      json o = json::object();
      for (size_t i = 0; i < v.keys.size(); ++i) o[v.keys[i]] = param_json(v.items[i]);
      return o;
    }
  }
  return nullptr;
}

// Vehicle parameters (a flat map; dotted keys "controller.max_linear" nest) as the stack's JSON.
std::string stack_params(const scenario::ParamValue& params) {
  if (params.kind != scenario::ParamValue::Kind::kMap || params.keys.empty()) return "";
  json o = json::object();
  for (size_t i = 0; i < params.keys.size(); ++i) {
    json* at = &o;
    std::string key = params.keys[i];
    for (auto dot = key.find('.'); dot != std::string::npos; dot = key.find('.')) {
      at = &(*at)[key.substr(0, dot)];
      key = key.substr(dot + 1);
    }
    const auto& v = params.items[i];
    (*at)[key] = v.kind == scenario::ParamValue::Kind::kDuration
                     ? json(format_seconds(v.duration) + "s")
                     : param_json(v);
  }
  return o.dump();
}

std::string placement_label(const scenario::Placement& p, const world::Pose2D& pose) {
  if (p.is_frame()) return p.frame;
  char buf[64];
  std::snprintf(buf, sizeof buf, "(%.2f, %.2f)", pose.x, pose.y);
  return buf;
}

// The map the stacks plan on: the scenario's map section when written (exactly at its
// resolution, refused above scenario::kMaxMapCells cells: the world's extent is only known here),
// else the world's default. A vehicle spawned outside the map is a warning.
world::MapOptions plan_map(const scenario::Scenario& s, const world::World& w,
                           const std::vector<PlannedVehicle>& vehicles,
                           std::vector<std::string>& errors, std::vector<std::string>& warnings) {
  world::MapOptions map;
  const scenario::MapSection& ms = s.map;
  if (!ms.given) return map;
  map.resolution = ms.resolution;
  map.max_cells = static_cast<int64_t>(scenario::kMaxMapCells);
  if (ms.bounds) {
    map.bounds =
        world::MapBounds{ms.bounds->x_min, ms.bounds->y_min, ms.bounds->x_max, ms.bounds->y_max};
  }
  const world::MapBounds b = w.map_bounds(map);
  const double cells = std::ceil((b.max_x - b.min_x) / map.resolution) *
                       std::ceil((b.max_y - b.min_y) / map.resolution);
  if (cells > scenario::kMaxMapCells) {
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "the world's extent, %.6g x %.6g m, at %.6g m per cell is %.6g cells, more than "
                  "the %.6g a map may have: give map.resolution a coarser value or map.bounds",
                  b.max_x - b.min_x, b.max_y - b.min_y, map.resolution, cells,
                  scenario::kMaxMapCells);
    errors.push_back(pos_prefix(s, ms.pos, "map") + buf);
    return map;
  }
  for (const PlannedVehicle& v : vehicles) {
    if (v.spawn.x < b.min_x || v.spawn.x > b.max_x || v.spawn.y < b.min_y || v.spawn.y > b.max_y) {
      char buf[200];
      std::snprintf(buf, sizeof buf,
                    "vehicle %s spawns at (%.2f, %.2f), outside the map [%.2f, %.2f] x [%.2f, "
                    "%.2f]: its stack cannot plan from there",
                    v.name.c_str(), v.spawn.x, v.spawn.y, b.min_x, b.max_x, b.min_y, b.max_y);
      warnings.push_back(pos_prefix(s, ms.pos, "map.bounds") + buf);
    }
  }
  return map;
}

// A vehicle's stack, resolved: the program or the library found and checked (a plugin by its ELF
// symbols, nothing loaded). Problems go to errors with the scenario's file:line:column.
StackSpec plan_stack(const scenario::Scenario& s, const scenario::Vehicle& v,
                     const std::string& path, const PlanOptions& options,
                     std::vector<std::string>& errors, std::vector<std::string>& warnings) {
  namespace fs = std::filesystem;
  StackSpec spec;
  const std::string params = stack_params(v.parameters);
  spec.params_json = params.empty() ? "{}" : params;
  const fs::path base = fs::absolute(fs::path(s.file)).parent_path();
  const fs::path tools = options.tool_dir.empty() ? executable_dir() : options.tool_dir;
  switch (v.stack.kind) {
    case scenario::Stack::Kind::kNone:
      break;
    case scenario::Stack::Kind::kPlugin: {
      spec.kind = StackSpec::Kind::kPlugin;
      spec.as_written = v.stack.plugin;
      const Resolved found = find_stack_plugin(v.stack.plugin, base, stack_plugin_dirs(tools));
      const std::string where = pos_prefix(s, v.stack.program_pos, path + ".stack.plugin");
      if (!found) {
        errors.push_back(where + found.error);
        break;
      }
      spec.plugin = found.path;
      if (const Status bad = check_stack_plugin(found.path); !bad.ok()) {
        errors.push_back(where + found.path + ": " + bad.message());
      }
      if (!v.stack.arguments.empty()) {
        warnings.push_back(pos_prefix(s, v.stack.pos, path + ".stack.arguments") +
                           "a stack plugin takes no arguments (they are left out): give it "
                           "parameters instead");
      }
      if (!v.stack.cwd.empty() || !v.stack.env.empty()) {
        warnings.push_back(pos_prefix(s, v.stack.pos, path + ".stack") +
                           "cwd and env apply to a process stack only (left out for a plugin)");
      }
      break;
    }
    case scenario::Stack::Kind::kCommand: {
      spec.kind = StackSpec::Kind::kProcess;
      spec.as_written = v.stack.command.front();
      const Resolved found = find_program(v.stack.command.front(), base, {tools});
      if (!found) {
        errors.push_back(pos_prefix(s, v.stack.program_pos, path + ".stack.command[0]") +
                         found.error);
        break;
      }
      spec.argv = v.stack.command;
      spec.argv.front() = found.path;
      spec.argv.insert(spec.argv.end(), v.stack.arguments.begin(), v.stack.arguments.end());
      spec.env = v.stack.env;
      // The default working directory is the scenario's folder, so `command: [python3,
      // my_nav.py]` finds its script beside the scenario (files of the run go to
      // $FIELDPROOF_RUN_DIR).
      spec.cwd = base.lexically_normal().string();
      if (!v.stack.cwd.empty()) {
        const fs::path cwd = (base / v.stack.cwd).lexically_normal();
        std::error_code ec;
        if (!fs::is_directory(cwd, ec)) {
          errors.push_back(pos_prefix(s, v.stack.pos, path + ".stack.cwd") + "'" + cwd.string() +
                           "' is not a directory");
        }
        spec.cwd = cwd.string();
      }
      break;
    }
  }
  return spec;
}

}  // namespace

json RunPlan::to_json() const {
  const scenario::TimeSection& t = scenario.time;
  json j;
  j["scenario"] = scenario.name;
  j["file"] = scenario.file;
  j["world"] = {{"file", scenario.world.string()},
                {"name", world_name},
                {"physics_step_s", to_seconds(physics_step)},
                {"real_time_factor", world_rtf}};
  j["seed"] = scenario.seed;
  j["seed_given"] = scenario.seed_given;
  json time = {{"mode", std::string(scenario::to_string(t.mode))},
               {"rtf", t.rtf ? json(*t.rtf) : json()},
               {"target_rtf", target_rtf},
               {"tolerance", t.tolerance},
               {"max_drift_s", to_seconds(t.max_drift)},
               {"on_drift", std::string(scenario::to_string(t.on_drift))},
               {"timeout_s", to_seconds(t.timeout)}};
  if (t.mode == scenario::TimeMode::kLockstep) {
    time["step_s"] = to_seconds(t.step);
    time["ack_timeout_s"] = to_seconds(t.ack_timeout);
  }
  j["time"] = time;
  json vs = json::array();
  for (const auto& v : vehicles) {
    vs.push_back({{"name", v.name},
                  {"spawn", v.spawn_label},
                  {"pose", {{"x", v.spawn.x}, {"y", v.spawn.y}, {"yaw", v.spawn.yaw}}},
                  {"model", {{"uri", v.model}, {"file", v.model_file}}},
                  {"stack", v.stack}});
  }
  j["vehicles"] = vs;
  j["outputs"] = {{"record", record},
                  {"recording", record ? json("recording/" + record_file) : json()},
                  {"topics", record_topics}};
  json tl = json::array();
  for (const auto& e : timeline) {
    json o = {
        {"label", e.entry->label}, {"action", e.entry->action}, {"at_s", to_seconds(e.entry->at)}};
    if (!e.entry->vehicle.empty()) o["vehicle"] = e.entry->vehicle;
    if (e.entry->every) o["every_s"] = to_seconds(*e.entry->every);
    if (e.entry->after) o["after"] = *e.entry->after;
    if (e.entry->when) {
      const scenario::Signal& sig = e.entry->when->signal;
      o["when"] = {{"condition", e.entry->when->condition}};
      if (!e.when_topic.empty()) {
        o["when"]["topic"] = e.when_topic;
        o["when"]["field"] = sig.field;
      } else {
        o["when"]["metric"] = sig.metric;
      }
      if (!e.when_vehicle.empty()) o["when"]["vehicle"] = e.when_vehicle;
    }
    if (e.entry->until) o["until_s"] = to_seconds(*e.entry->until);
    if (e.entry->action == "sim.step") o["step_s"] = to_seconds(e.step);
    json params = param_json(e.entry->params);
    if (e.goal) {
      params["goal"] = {
          {"label", e.goal_label}, {"x", e.goal->x}, {"y", e.goal->y}, {"yaw", e.goal->yaw}};
    }
    o["params"] = params;
    tl.push_back(o);
  }
  j["timeline"] = tl;
  json as = json::array();
  for (const auto& a : assertions) {
    json o = {{"name", a.spec.name}, {"type", a.spec.type}, {"resolved", a.resolved}};
    if (!a.vehicle.empty()) o["vehicle"] = a.vehicle;
    as.push_back(o);
  }
  j["assertions"] = as;
  json ks = json::array();
  for (const auto& k : kpis) {
    json o = {{"name", k.spec.name}, {"type", k.spec.type}, {"resolved", k.resolved}};
    if (!k.vehicle.empty()) o["vehicle"] = k.vehicle;
    ks.push_back(o);
  }
  j["kpis"] = ks;
  j["unsupported"] = unsupported;
  return j;
}

namespace {

// Assertion plugins first: their types are part of the tables the scenario is validated against.
// A plugin that does not load is a warning.
assertions::PluginSet load_assertion_plugins(const std::filesystem::path& file,
                                             const PlanOptions& options,
                                             std::vector<std::string>& warnings) {
  assertions::PluginLoadOptions plugin_options;
  plugin_options.libraries = scenario::scenario_plugin_paths(file);
  plugin_options.search_path =
      options.plugin_path ? *options.plugin_path : assertions::plugin_search_path_from_env();
  plugin_options.load_code = options.load_plugin_code;
  assertions::PluginSet plugins = assertions::load_plugins(plugin_options);
  for (const auto& p : plugins.problems) {
    warnings.push_back("assertion plugin " + p.to_string() + " (its types stay unknown)");
  }
  return plugins;
}

// Every error in one round: what was read despite the errors is checked against the world too
// (its frames, models and physics step), in file order.
void report_load_errors(const std::filesystem::path& file, const scenario::ValidationResult& v,
                        std::vector<std::string>& errors) {
  std::vector<scenario::Diagnostic> all = v.errors;
  if (v.partial && std::filesystem::exists(v.partial->world)) {
    world::WorldOptions quiet;
    auto loaded = world::World::load(v.partial->world.string(), quiet);
    if (loaded.world) {
      scenario::WorldFacts facts;
      facts.physics_step = loaded.world->step_size();
      for (const auto& [n, f] : loaded.world->frames()) facts.frames.push_back(n);
      facts.models = loaded.world->static_models();
      for (auto& d : scenario::validate_against_world(*v.partial, facts)) {
        const std::string text = d.to_string();
        const bool repeated = std::any_of(all.begin(), all.end(),
                                          [&](const auto& e) { return e.to_string() == text; });
        if (!repeated) all.push_back(std::move(d));
      }
    }
  }
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return a.pos.line != b.pos.line ? a.pos.line < b.pos.line : a.pos.column < b.pos.column;
  });
  for (const auto& e : all) errors.push_back(e.to_string());
  if (errors.empty()) errors.push_back(file.string() + ": the scenario did not load");
}

// --seed replaces the scenario's seed. False (with the error) when it is out of range.
bool apply_seed(const PlanOptions& options, scenario::Scenario& s, PlanResult& r) {
  if (!options.seed) return true;
  if (*options.seed < 0 || *options.seed > 2147483647) {
    r.errors.push_back("--seed " + std::to_string(*options.seed) +
                       ": a seed is between 0 and 2147483647 (2^31-1)");
    return false;
  }
  s.seed = *options.seed;
  s.seed_given = true;
  // The validator's note spoke of the scenario's seed; the run uses this one.
  for (std::string& n : r.notes) {
    if (n.rfind("seed: ", 0) == 0) n = "seed: " + std::to_string(s.seed) + " (--seed).";
  }
  return true;
}

// The world, loaded for its facts (name, physics step, real-time factor, frames), with the
// scenario checked against them. Null (with the errors) when it does not load or the scenario
// names what the world lacks. Its warnings, later ones too, go to r.warnings: r outlives it.
std::unique_ptr<world::World> load_plan_world(RunPlan& plan, PlanResult& r) {
  const scenario::Scenario& s = plan.scenario;
  world::WorldOptions wo;
  wo.on_warning = [&r](const std::string& w) { r.warnings.push_back(w); };
  if (!std::filesystem::exists(s.world)) {
    r.errors.push_back(pos_prefix(s, {}, "world") + "the world file " + s.world.string() +
                       " does not exist (a path relative to the scenario's directory)");
    return nullptr;
  }
  // A FIFO, a device or a huge file would hang or exhaust the loader: refused unread.
  if (const Status st = util::check_input_file(s.world, util::kMaxWorldBytes, "the world file");
      !st.ok()) {
    r.errors.push_back(pos_prefix(s, {}, "world") + st.message());
    return nullptr;
  }
  auto loaded = world::World::load(s.world.string(), wo);
  for (const auto& w : loaded.warnings) r.warnings.push_back(w);
  if (!loaded.world) {
    // Named as the scenario's world: key, so the scenario file is named too.
    for (const auto& e : loaded.errors) r.errors.push_back(pos_prefix(s, {}, "world") + e);
    return nullptr;
  }
  world::World& w = *loaded.world;
  plan.world_name = w.name();
  plan.physics_step = w.step_size();
  plan.world_rtf = w.target_real_time_factor();
  plan.target_rtf = s.time.target_rtf(plan.world_rtf);
  plan.frames = w.frames();
  scenario::WorldFacts facts;
  facts.physics_step = w.step_size();
  for (const auto& [n, f] : plan.frames) facts.frames.push_back(n);
  facts.models = w.static_models();
  for (const auto& d : scenario::validate_against_world(s, facts))
    r.errors.push_back(d.to_string());
  // The world's refusals already name unknown frames and models: stop before repeating them.
  if (!r.errors.empty()) return nullptr;
  return std::move(loaded.world);
}

// Where robot models are found: relative to the scenario's folder, then on the search path.
struct ModelLookup {
  std::filesystem::path base;
  std::vector<std::filesystem::path> search;
};

// Vehicles: placed in the world (a spawn inside an obstacle is refused here, nothing started),
// each with its robot model and its stack resolved.
void plan_vehicles(RunPlan& plan, world::World& w, const PlanContext& ctx,
                   const ModelLookup& lookup, const PlanOptions& options, PlanResult& r) {
  const scenario::Scenario& s = plan.scenario;
  std::map<std::string, world::RobotModel> models;
  for (const scenario::Vehicle& sv : s.vehicles) {
    PlannedVehicle pv;
    pv.name = sv.name;
    const std::string path = "vehicles[" + std::to_string(&sv - s.vehicles.data()) + "]";
    try {
      pv.spawn = ctx.place(sv.spawn, path + ".spawn");
    } catch (const PlanError& e) {
      r.errors.push_back(pos_prefix(s, sv.spawn.pos, e.path()) + e.what());
      continue;
    }
    pv.spawn_label = placement_label(sv.spawn, pv.spawn);
    // The robot model, read once per URI (a fleet of one model shares it).
    auto cached = models.find(sv.model);
    if (cached == models.end()) {
      cached =
          models.emplace(sv.model, world::load_robot_model(sv.model, lookup.base, lookup.search))
              .first;
      for (const auto& warning : cached->second.warnings) r.warnings.push_back(warning);
    }
    const world::RobotModel& model = cached->second;
    if (!model.ok()) {
      for (const auto& e : model.errors) {
        r.errors.push_back(pos_prefix(s, sv.model_pos, path + ".model") + e);
      }
      continue;
    }
    pv.model = sv.model;
    pv.model_file = model.file.string();
    pv.setup.params = model.params;
    pv.setup.model_file = std::filesystem::absolute(model.file).lexically_normal().string();
    if (auto st = w.spawn_vehicle(sv.name, pv.spawn, model.params); !st.ok()) {
      r.errors.push_back(pos_prefix(s, sv.spawn.pos, path + ".spawn") + st.message());
      continue;
    }
    pv.setup.name = sv.name;
    pv.setup.pose = pv.spawn;
    pv.setup.stack = plan_stack(s, sv, path, options, r.errors, r.warnings);
    pv.stack = pv.setup.stack.describe();
    plan.vehicles.push_back(pv);
  }
}

// navigate_to_pose: its goal resolved in the world.
void plan_goal(const PlanContext& ctx, const scenario::TimelineEntry& e, PlannedEntry& pe,
               PlanResult& r) {
  const auto* goal = e.params.get("goal");
  if (!goal) return;
  try {
    pe.goal = ctx.place(goal->placement, e.path + ".goal");
    pe.goal_label = placement_label(goal->placement, *pe.goal);
  } catch (const PlanError& err) {
    r.errors.push_back(pos_prefix(ctx.scenario, goal->pos, err.path()) + err.what());
  }
}

// sim.step: the simulated time it advances (steps of the physics step, or a duration).
void plan_sim_step(const RunPlan& plan, const scenario::TimelineEntry& e, PlannedEntry& pe,
                   PlanResult& r) {
  const scenario::Scenario& s = plan.scenario;
  scenario::SourcePos at = e.pos;
  std::string field = e.path;
  if (const auto* n = e.params.get("steps"); n && n->kind == scenario::ParamValue::Kind::kInteger) {
    at = n->pos;
    field = e.path + ".steps";
    const int64_t ps = plan.physics_step.ns();
    if (ps > 0 && n->integer > (INT64_MAX - 1) / ps) {
      r.errors.push_back(pos_prefix(s, at, field) + std::to_string(n->integer) + " steps of " +
                         format_seconds(plan.physics_step) +
                         " s overflow simulated time (at most about 292 years)");
    } else {
      pe.step = plan.physics_step * n->integer;
    }
  } else if (const auto* d = e.params.get("duration_s");
             d && d->kind == scenario::ParamValue::Kind::kDuration) {
    at = d->pos;
    field = e.path + ".duration_s";
    pe.step = d->duration;
  }
  // Paced at the target real-time factor, a step longer than the run's wall-clock budget
  // would only end in a timeout, after writing a recording of all of it: refused here.
  if (plan.target_rtf > 0 && std::isfinite(plan.target_rtf) && pe.step.ns() > 0) {
    const double wall_s = to_seconds(pe.step) / plan.target_rtf;
    if (wall_s > to_seconds(s.time.timeout)) {
      char rtf[32];
      std::snprintf(rtf, sizeof rtf, "%g", plan.target_rtf);
      r.errors.push_back(
          pos_prefix(s, at, field) + "a step of " + format_seconds(pe.step) +
          " s at the run's real-time factor " + rtf + " takes " +
          format_seconds(Duration::from_ns(static_cast<int64_t>(std::min(wall_s, 9.2e9) * 1e9))) +
          " s of wall time, more than time.timeout_s " + format_seconds(s.time.timeout) +
          " s: shorten it or raise time.timeout_s");
    }
  }
}

// spawn_model: the robot model of a vehicle shape, and the pose resolved in the world.
void plan_spawn_model(const PlanContext& ctx, const ModelLookup& lookup,
                      const scenario::TimelineEntry& e, PlannedEntry& pe, PlanResult& r) {
  const scenario::Scenario& s = ctx.scenario;
  if (const auto* shape = e.params.get("shape"); shape && shape->string == "vehicle") {
    const auto* vm = e.params.get("vehicle_model");
    const world::RobotModel model = world::load_robot_model(
        vm ? vm->string : std::string(util::kDefaultRobotModel), lookup.base, lookup.search);
    for (const auto& warning : model.warnings) r.warnings.push_back(warning);
    for (const auto& err : model.errors) {
      r.errors.push_back(pos_prefix(s, vm ? vm->pos : e.pos, e.path + ".vehicle_model") + err);
    }
    pe.vehicle_model_file = model.file.string();
  }
  if (const auto* p = e.params.get("pose")) {
    try {
      pe.pose = ctx.place(p->placement, e.path + ".pose");
    } catch (const PlanError& err) {
      r.errors.push_back(pos_prefix(s, p->pos, err.path()) + err.what());
    }
  }
}

// A `when` trigger's signal resolved: the topic or the vehicle the observer must stream for it
// (added to the timeline's watch), and a distance's target.
void plan_when(RunPlan& plan, const PlanContext& ctx, const scenario::TimelineEntry& e,
               PlannedEntry& pe, PlanResult& r) {
  const scenario::Scenario& s = ctx.scenario;
  const scenario::Signal& sig = e.when->signal;
  const std::string veh = sig.vehicle.empty() ? e.vehicle : sig.vehicle;
  if (!sig.topic.empty()) {
    pe.when_topic = assertions::topic_of(veh, sig.topic);
    plan.timeline_watch.values.insert(pe.when_topic);
    return;
  }
  if (sig.metric == "sim_time" || sig.metric == "rtf") return;
  if (veh.empty()) {
    r.errors.push_back(pos_prefix(s, e.when->pos, e.path + ".when.vehicle") + "the metric " +
                       sig.metric +
                       " is a vehicle's: name the vehicle (when.vehicle or the entry's)");
  } else {
    pe.when_vehicle = veh;
    plan.timeline_watch.poses.insert(veh);
  }
  if (sig.target) {
    try {
      pe.when_target = ctx.place(*sig.target, e.path + ".when.target");
    } catch (const PlanError& err) {
      r.errors.push_back(pos_prefix(s, sig.target->pos, err.path()) + err.what());
    }
  }
}

// The timeline: each entry's action resolved in the world (goals, poses, steps, models) and its
// `when` trigger's signal.
void plan_timeline(RunPlan& plan, const PlanContext& ctx, const ModelLookup& lookup,
                   PlanResult& r) {
  for (const scenario::TimelineEntry& e : plan.scenario.timeline) {
    PlannedEntry pe;
    pe.entry = &e;
    if (e.action == "navigate_to_pose") {
      plan_goal(ctx, e, pe, r);
    } else if (e.action == "sim.step") {
      plan_sim_step(plan, e, pe, r);
    } else if (e.action == "spawn_model") {
      plan_spawn_model(ctx, lookup, e, pe, r);
    }
    if (e.when) plan_when(plan, ctx, e, pe, r);
    plan.timeline.push_back(pe);
  }
}

// Assertions, each planned by its type (a built-in or a plugin's). A type this engine does not
// evaluate is listed in plan.unsupported; a plugin's, when plugin code is not loaded, only noted.
void plan_assertions(RunPlan& plan, const assertions::PluginSet& plugins, const PlanContext& ctx,
                     const PlanOptions& options, PlanResult& r) {
  const scenario::Scenario& s = plan.scenario;
  plan.assertion_types = plugins.types;
  const AssertionTypes& types = *plan.assertion_types;
  for (const scenario::AssertionSpec& a : s.assertions) {
    const AssertionType* type = types.find(a.type);
    const scenario::TypeSpec* tables = plugins.registry->assertion(a.type);
    if (!type && tables && !tables->plugin.empty() && !options.load_plugin_code) {
      // Checked against the plugin's tables by the loader; planning it would run the plugin.
      r.notes.push_back(a.path + " (" + a.type + ", plugin " + tables->plugin +
                        "): its parameters were checked against the plugin's tables; the plugin "
                        "is loaded and plans it when the scenario is run");
      continue;
    }
    if (!type) {
      plan.unsupported.push_back(a.path + ".type: " + a.type +
                                 " is not evaluated by this engine yet (reach_pose, "
                                 "no_collision, within_time are)");
      continue;
    }
    try {
      plan.assertions.push_back(type->plan(a, ctx));
    } catch (const PlanError& e) {
      r.errors.push_back(pos_prefix(s, a.pos, e.path()) + e.what());
    }
  }
}

// KPI collectors, planned from the kpis section.
void plan_kpis(RunPlan& plan, const PlanContext& ctx, PlanResult& r) {
  for (const scenario::KpiSpec& k : plan.scenario.kpis) {
    try {
      plan.kpis.push_back(assertions::plan_kpi(k, ctx));
    } catch (const PlanError& e) {
      r.errors.push_back(pos_prefix(plan.scenario, k.pos, e.path()) + e.what());
    }
  }
}

// outputs.record defaults to true (the scenario part's default is false when the key is absent,
// so look at the document itself).
void plan_outputs(RunPlan& plan, const PlanOptions& options) {
  const scenario::Scenario& s = plan.scenario;
  bool record_set = false;  // --set outputs.record=...
  for (const auto& o : options.overrides) record_set = record_set || o.path == "outputs.record";
  plan.record = s.outputs.record || (!record_set && !record_key_given(s.file));
  plan.record_file = s.outputs.record_file;
  plan.record_topics = s.outputs.topics;
}

}  // namespace

PlanResult plan_run(const std::filesystem::path& file, const PlanOptions& options) {
  PlanResult r;
  assertions::PluginSet plugins = load_assertion_plugins(file, options, r.warnings);
  scenario::LoadOptions load_options;
  load_options.registry = plugins.registry.get();
  scenario::ValidationResult v =
      scenario::load_scenario_file_with(file, options.overrides, load_options);
  for (const auto& w : v.warnings) r.warnings.push_back(w.to_string());
  r.notes = v.notes;
  if (!v.ok()) {
    report_load_errors(file, v, r.errors);
    return r;
  }
  RunPlan plan;
  plan.scenario = std::move(*v.scenario);
  if (!apply_seed(options, plan.scenario, r)) return r;
  const std::unique_ptr<world::World> w = load_plan_world(plan, r);
  if (!w) return r;

  const PlanContext ctx{plan.scenario, plan.frames};
  const ModelLookup lookup{std::filesystem::absolute(plan.scenario.file).parent_path(),
                           world::model_search_path(options.tool_dir)};
  plan_vehicles(plan, *w, ctx, lookup, options, r);
  plan.map = plan_map(plan.scenario, *w, plan.vehicles, r.errors, r.warnings);
  for (const scenario::GpsDeniedRegion& g : plan.scenario.gps_denied) {
    plan.gps_denied.push_back({g.name, world::MapBounds{g.x_min, g.y_min, g.x_max, g.y_max}});
  }
  plan_timeline(plan, ctx, lookup, r);
  plan_assertions(plan, plugins, ctx, options, r);
  plan_kpis(plan, ctx, r);
  plan_outputs(plan, options);
  if (!r.errors.empty()) return r;
  r.plan = std::move(plan);
  // PlannedEntry points into the scenario: re-seat after the move.
  for (size_t i = 0; i < r.plan->timeline.size(); ++i) {
    r.plan->timeline[i].entry = &r.plan->scenario.timeline[i];
  }
  return r;
}

}  // namespace fieldproof::engine
