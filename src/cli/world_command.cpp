// `fieldproof world WORLD.sdf`: the embedded world with a stack per vehicle (the reference stack
// unless --stack or --stack-command names another), a goal sent at t = 0; prints where each
// vehicle went, whether it arrived, the simulated time and RTF.
// Exit 0 every vehicle arrived, 1 not, 2 bad input.
#include <cctype>
#include <cmath>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/cli_util.hpp"
#include "cli/commands.hpp"
#include "fieldproof/engine/world_drive.hpp"
#include "fieldproof/util/example_defaults.hpp"
#include "fieldproof/world/robot_model.hpp"

namespace fieldproof::cli {
namespace {

struct WorldArgs {
  std::string world;
  std::vector<std::string> spawns;
  std::string goal;
  std::string until = "60s";
  int64_t seed = 0;
  bool process = false;
  std::string stack{util::kDefaultStackPlugin};
  std::string stack_command;
  double max_rtf = 0.0;
  std::string model;  // empty: util::kDefaultRobotModel, the scenario table's default
};

bool parse_number(const std::string& text, double* out) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) return false;
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);
  return end && *end == '\0' && std::isfinite(*out);
}

// "X,Y" or "X,Y,YAW" (metres, radians): true and *pose; false when the text is not 2 or 3
// finite numbers separated by commas.
bool parse_pose(const std::string& text, world::Pose2D* pose) {
  std::vector<double> v;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    double d = 0;
    if (!parse_number(text.substr(start, comma == std::string::npos ? comma : comma - start), &d)) {
      return false;
    }
    v.push_back(d);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (v.size() < 2 || v.size() > 3) return false;
  *pose = world::Pose2D{v[0], v[1], v.size() == 3 ? v[2] : 0.0};
  return true;
}

int run_world(const WorldArgs& a) {
  engine::WorldDriveOptions o;
  o.session.world_file = a.world;
  o.session.seed = static_cast<uint64_t>(a.seed);
  o.session.max_rtf = a.max_rtf;
  o.session.on_warning = [](const std::string& w) {
    std::fprintf(stderr, "warning: %s\n", w.c_str());
  };
  if (a.seed < 0 || a.seed > 2147483647) {
    std::fprintf(stderr, "fieldproof world: --seed must be between 0 and 2^31-1\n");
    return kExitInvalid;
  }
  if (a.max_rtf < 0 || !std::isfinite(a.max_rtf)) {
    std::fprintf(stderr, "fieldproof world: --max-rtf must be >= 0 (0 = unpaced)\n");
    return kExitInvalid;
  }
  if (a.spawns.empty()) {
    std::fprintf(stderr,
                 "fieldproof world: give at least one --spawn NAME@FRAME or NAME@X,Y[,YAW]\n");
    return kExitInvalid;
  }
  const std::string command = !a.stack_command.empty()
                                  ? a.stack_command
                                  : (a.process ? std::string(util::kDefaultStackProgram) : "");
  const Result<engine::StackSpec> stack =
      engine::resolve_stack(a.stack, command, std::filesystem::current_path());
  if (!stack.ok()) {
    std::fprintf(stderr, "fieldproof world: %s\n", stack.status().message().c_str());
    return kExitFailed;
  }
  // The vehicles' model; one given explicitly also sets the reference stack's footprint radius
  // and speed limits from it (capped at the stack's own defaults, 0.5 m/s and 1 rad/s).
  const world::RobotModel model = world::load_robot_model(
      a.model.empty() ? std::string(util::kDefaultRobotModel) : a.model,
      std::filesystem::current_path(), world::model_search_path(engine::executable_dir()));
  for (const std::string& w : model.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  if (!model.ok()) {
    for (const std::string& e : model.errors) {
      std::fprintf(stderr, "fieldproof world: --model: %s\n", e.c_str());
    }
    return kExitInvalid;
  }
  engine::StackSpec vehicle_stack = *stack;
  if (!a.model.empty()) {
    const world::VehicleParams& p = model.params;
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "{\"inflation\":{\"robot_radius\":%.17g},\"controller\":{\"max_linear\":%.17g,"
                  "\"max_angular\":%.17g}}",
                  std::hypot(p.length / 2, p.width / 2), std::min(0.5, p.max_linear),
                  std::min(1.0, p.max_angular));
    vehicle_stack.params_json = buf;
  }
  for (const std::string& s : a.spawns) {
    const auto at = s.find('@');
    engine::VehicleSetup v;
    if (at != std::string::npos && at > 0 && at + 1 < s.size()) {
      v.name = s.substr(0, at);
      const std::string where = s.substr(at + 1);
      // A frame name holds no comma; anything with one must be a pose.
      if (where.find(',') == std::string::npos) {
        v.frame = where;
      } else if (world::Pose2D p; parse_pose(where, &p)) {
        v.pose = p;
      } else {
        v.name.clear();
      }
    }
    if (v.name.empty()) {
      std::fprintf(stderr,
                   "fieldproof world: --spawn '%s': expected NAME@FRAME or NAME@X,Y[,YAW] "
                   "(metres, radians), e.g. ugv1@dock or ugv1@2.5,-1,1.57\n",
                   s.c_str());
      return kExitInvalid;
    }
    v.stack = vehicle_stack;
    v.params = model.params;
    o.session.vehicles.push_back(v);
  }
  if (!a.goal.empty()) {
    if (a.goal.find(',') == std::string::npos) {
      o.goal_frame = a.goal;
    } else if (world::Pose2D g; parse_pose(a.goal, &g)) {
      o.goal = g;
    } else {
      std::fprintf(stderr,
                   "fieldproof world: --goal '%s': expected X,Y[,YAW] (metres, radians) or a "
                   "frame\n",
                   a.goal.c_str());
      return kExitInvalid;
    }
  }
  const auto until = parse_duration(a.until);
  if (!until.ok() || *until <= Duration::zero()) {
    std::fprintf(stderr, "fieldproof world: --until '%s': %s\n", a.until.c_str(),
                 until.ok() ? "must be > 0" : until.status().message().c_str());
    return kExitInvalid;
  }
  o.until = SimTime::zero() + *until;

  const engine::WorldDriveResult r = engine::drive_world(o);
  if (r.exit_code == kExitInvalid) {
    std::fprintf(stderr, "fieldproof world: %s\n", r.error.c_str());
    return kExitInvalid;
  }
  for (const engine::VehicleOutcome& v : r.vehicles) {
    std::printf("%s: from (%.2f, %.2f, %.2f) to (%.2f, %.2f, %.2f)", v.name.c_str(), v.start.x,
                v.start.y, v.start.yaw, v.end.x, v.end.y, v.end.yaw);
    if (r.goal) {
      std::printf(", goal (%.2f, %.2f) %.2f m away: %s", r.goal->x, r.goal->y, v.distance_to_goal,
                  v.arrived ? "arrived" : "did not arrive");
    }
    std::printf(" (status %s%s%s)\n", v.status.c_str(), v.reason.empty() ? "" : ": ",
                v.reason.c_str());
  }
  std::printf("simulated %s s in %s s of wall time, RTF %.1f\n", format_seconds(r.sim_time).c_str(),
              format_seconds(r.wall).c_str(), r.rtf);
  if (!r.error.empty()) std::fprintf(stderr, "fieldproof world: %s\n", r.error.c_str());
  return r.exit_code == 0 ? kExitOk : kExitFailed;
}

}  // namespace

void add_world_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<WorldArgs>();
  CLI::App* cmd = app.add_subcommand(
      "world",
      "Drive vehicles of an SDF world to a goal with a stack (the reference stack by default)");
  cmd->add_option("world", args->world, "the SDF world file")->required();
  cmd->add_option("--spawn", args->spawns,
                  "a vehicle at a frame of the world or at a pose: NAME@FRAME or NAME@X,Y[,YAW] "
                  "(metres, radians; repeat for more vehicles)");
  cmd->add_option("--goal", args->goal,
                  "the goal: X,Y[,YAW] (metres, radians) or a frame of the world");
  cmd->add_option("--until", args->until, "simulated time limit (default 60s)");
  cmd->add_option("--seed", args->seed, "the world's seed (0 to 2^31-1)");
  cmd->add_option("--stack", args->stack,
                  "each vehicle's stack plugin: a path, or a name found as N, libN.so or N.so "
                  "here, on FIELDPROOF_PLUGIN_PATH and in the installed stack folder (default " +
                      std::string(util::kDefaultStackPlugin) + ", the reference stack)");
  cmd->add_option("--stack-command", args->stack_command,
                  "run each vehicle's stack as this program instead (argv split at spaces; "
                  "found here, on PATH or beside fieldproof)");
  cmd->add_flag("--process", args->process,
                "the same as --stack-command " + std::string(util::kDefaultStackProgram) +
                    ": the reference stack as a process (ipc), not in-process");
  cmd->add_option("--max-rtf", args->max_rtf, "pace cap (simulated / wall time; 0 = unpaced)");
  cmd->add_option("--model", args->model,
                  "the vehicles' robot model: a model.sdf, a model folder, model://NAME or a "
                  "short name (default " +
                      std::string(util::kDefaultRobotModel) +
                      ", the reference UGV; docs/robots.md)");
  cmd->callback([args, exit_code] { *exit_code = run_world(*args); });
}

}  // namespace fieldproof::cli
