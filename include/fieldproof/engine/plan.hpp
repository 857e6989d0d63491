// From a scenario file to a RunPlan: load and validate (scenario part), load the world for its
// facts (physics step, real-time factor, frames, models), validate_against_world, place the
// vehicles, resolve the timeline and plan every assertion with its type (evaluator.hpp). What
// `fieldproof validate` and `fieldproof run --dry-run` print, and what `fieldproof run` runs.
//
//   PlanResult r = plan_run("examples/scenarios/ugv_nav_to_goal.yaml");
//   if (!r.plan) { for (auto& e : r.errors) puts(e.c_str()); return 2; }
//   puts(r.plan->to_json().dump(2).c_str());
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fieldproof/assertions/kpis.hpp"
#include "fieldproof/engine/evaluator.hpp"
#include "fieldproof/engine/session.hpp"
#include "fieldproof/scenario/overrides.hpp"
#include "fieldproof/scenario/scenario.hpp"

namespace fieldproof::engine {

struct PlannedVehicle {
  std::string name;
  world::Pose2D spawn;
  std::string spawn_label;  // the frame, or "(x, y)"
  std::string stack;        // "<library> (plugin)", "<program> (process)", "none"
  std::string model;        // the model as written (`ugv`, model://NAME, a path)
  std::string model_file;   // the model file it resolved to
  VehicleSetup setup;
};

struct PlannedEntry {
  const scenario::TimelineEntry* entry = nullptr;  // into RunPlan::scenario
  std::optional<world::Pose2D> goal;               // navigate_to_pose
  std::string goal_label;
  std::optional<world::Pose2D> pose;  // spawn_model: where, resolved in the world
  std::string vehicle_model_file;     // spawn_model of shape vehicle: its robot model's file
  Duration step;                      // sim.step: the simulated time it advances
  // when: the signal resolved (the absolute topic of a topic signal; the vehicle of a pose
  // metric; the target of distance_to).
  std::string when_topic;
  std::string when_vehicle;
  std::optional<world::Pose2D> when_target;
};

struct RunPlan {
  scenario::Scenario scenario;
  std::string world_name;
  Duration physics_step;
  double world_rtf = 1.0;
  double target_rtf = 1.0;
  std::map<std::string, world::Pose2D> frames;
  // The map the stacks plan on: the scenario's map section (exactly as written, at most
  // scenario::kMaxMapCells cells), else the world's extent at 5 cm.
  world::MapOptions map;
  // The scenario's gps_denied regions, for the world (navsat reports no fix inside them).
  std::vector<world::GpsDeniedRegion> gps_denied;
  std::vector<PlannedVehicle> vehicles;
  std::vector<PlannedEntry> timeline;
  std::vector<PlannedAssertion> assertions;
  std::vector<assertions::PlannedKpi> kpis;  // the kpis section's collectors, planned
  // What the timeline's `when` triggers need the observer to stream (poses, topic values).
  assertions::Watch timeline_watch;
  // The types the assertions were planned with: the built-ins and the plugins that loaded (the
  // scenario's `plugins:` and FIELDPROOF_PLUGIN_PATH; assertions/plugin.hpp). Never null.
  std::shared_ptr<const AssertionTypes> assertion_types;
  // outputs.record (true unless the scenario says false): recording/<record_file> is written,
  // with record_topics as the allow-list (empty: every visible topic).
  bool record = true;
  std::string record_file = "recording.mcap";
  std::vector<std::string> record_topics;
  // What this engine cannot run yet (a mode, an action, a trigger): `run` refuses with these.
  std::vector<std::string> unsupported;

  // The resolved plan, as the dry run prints it.
  nlohmann::json to_json() const;
};

struct PlanResult {
  std::optional<RunPlan> plan;
  std::vector<std::string> errors;  // file:line:column: path: message
  std::vector<std::string> warnings;
  std::vector<std::string> notes;  // what the time mode means for the run
};

struct PlanOptions {
  std::optional<int64_t> seed;  // overrides the scenario's (0 to 2^31-1)
  // The folder of fieldproof's own programs: a bare command is looked for there after PATH, and
  // stack plugins in its ../lib/fieldproof/stacks and ../lib. Empty: this executable's folder.
  std::filesystem::path tool_dir;
  // Assertion plugin directories, FIELDPROOF_PLUGIN_PATH's syntax; nullopt: the environment's.
  // A plugin that does not load is a warning (its type then stays unknown to the validation).
  std::optional<std::string> plugin_path;
  // false (validate): no assertion plugin is loaded; their types' tables are read from the
  // libraries (assertions/plugin.hpp) and their assertions are checked against them but not
  // planned (the plan is then for validation only, never run).
  bool load_plugin_code = true;
  // Scenario values replaced by path before validation (`--set PATH=VALUE`, overrides.hpp).
  std::vector<scenario::Override> overrides;
};

PlanResult plan_run(const std::filesystem::path& scenario_file, const PlanOptions& options = {});

}  // namespace fieldproof::engine
