// `fieldproof world WORLD.sdf`: the embedded world with a stack per vehicle (the reference stack
// unless --stack or --stack-command names another), a goal sent at t = 0; prints where each
// vehicle went, whether it arrived, the simulated time and RTF.
// Exit 0 every vehicle arrived, 1 not, 2 bad input.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/cli_util.hpp"
#include "cli/commands.hpp"
#include "fieldproof/engine/world_drive.hpp"
#include "fieldproof/util/example_defaults.hpp"

namespace fieldproof::cli {
namespace {

// The options are read straight into the engine's request; only --process is the CLI's own.
struct WorldArgs {
  engine::WorldDriveRequest request;
  bool process = false;  // the same as --stack-command util::kDefaultStackProgram
};

// Each line of `text` on stderr after `prefix`.
void print_lines(const char* prefix, const std::string& text) {
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    std::fprintf(stderr, "%s%s\n", prefix, text.substr(start, end - start).c_str());
    start = end + 1;
  }
}

int run_world(const WorldArgs& a) {
  engine::WorldDriveRequest request = a.request;
  if (request.stack_command.empty() && a.process) {
    request.stack_command = std::string(util::kDefaultStackProgram);
  }
  request.base_dir = std::filesystem::current_path();
  request.on_warning = [](const std::string& w) {
    std::fprintf(stderr, "warning: %s\n", w.c_str());
  };
  const engine::WorldDriveResult r = engine::drive_world(request);
  if (r.refused) {
    print_lines("fieldproof world: ", r.error);
    return r.exit_code == kExitInvalid ? kExitInvalid : kExitFailed;
  }
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
  cmd->add_option("world", args->request.world, "the SDF world file")->required();
  cmd->add_option("--spawn", args->request.spawns,
                  "a vehicle at a frame of the world or at a pose: NAME@FRAME or NAME@X,Y[,YAW] "
                  "(metres, radians; repeat for more vehicles)");
  cmd->add_option("--goal", args->request.goal,
                  "the goal: X,Y[,YAW] (metres, radians) or a frame of the world");
  cmd->add_option("--until", args->request.until, "simulated time limit (default 60s)");
  cmd->add_option("--seed", args->request.seed, "the world's seed (0 to 2^31-1)");
  cmd->add_option("--stack", args->request.stack_plugin,
                  "each vehicle's stack plugin: a path, or a name found as N, libN.so or N.so "
                  "here, on FIELDPROOF_PLUGIN_PATH and in the installed stack folder (default " +
                      std::string(util::kDefaultStackPlugin) + ", the reference stack)");
  cmd->add_option("--stack-command", args->request.stack_command,
                  "run each vehicle's stack as this program instead (argv split at spaces; "
                  "found here, on PATH or beside fieldproof)");
  cmd->add_flag("--process", args->process,
                "the same as --stack-command " + std::string(util::kDefaultStackProgram) +
                    ": the reference stack as a process (ipc), not in-process");
  cmd->add_option("--max-rtf", args->request.max_rtf,
                  "pace cap (simulated / wall time; 0 = unpaced)");
  cmd->add_option("--model", args->request.model,
                  "the vehicles' robot model: a model.sdf, a model folder, model://NAME or a "
                  "short name (default " +
                      std::string(util::kDefaultRobotModel) +
                      ", the reference UGV; docs/robots.md)");
  cmd->callback([args, exit_code] { *exit_code = run_world(*args); });
}

}  // namespace fieldproof::cli
