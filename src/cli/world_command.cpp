// `fieldproof world WORLD.sdf`: the embedded world with the reference stack per vehicle, a goal
// sent at t = 0; prints where each vehicle went, whether it arrived, the simulated time and RTF.
// Exit 0 every vehicle arrived, 1 not, 2 bad input.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/cli_util.hpp"
#include "cli/commands.hpp"
#include "fieldproof/engine/world_drive.hpp"

namespace fieldproof::cli {
namespace {

struct WorldArgs {
  std::string world;
  std::vector<std::string> spawns;
  std::string goal;
  std::string until = "60s";
  int64_t seed = 0;
  bool process = false;
  double max_rtf = 0.0;
};

bool parse_number(const std::string& text, double* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);
  return end && *end == '\0' && std::isfinite(*out);
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
    std::fprintf(stderr, "fieldproof world: give at least one --spawn NAME@FRAME\n");
    return kExitInvalid;
  }
  std::string stack_error;
  const std::optional<engine::StackSpec> stack = reference_stack(a.process, &stack_error);
  if (!stack) {
    std::fprintf(stderr, "fieldproof world: %s\n", stack_error.c_str());
    return kExitFailed;
  }
  for (const std::string& s : a.spawns) {
    const auto at = s.find('@');
    if (at == std::string::npos || at == 0 || at + 1 == s.size()) {
      std::fprintf(stderr, "fieldproof world: --spawn '%s': expected NAME@FRAME\n", s.c_str());
      return kExitInvalid;
    }
    engine::VehicleSetup v;
    v.name = s.substr(0, at);
    v.frame = s.substr(at + 1);
    v.stack = *stack;
    o.session.vehicles.push_back(v);
  }
  if (!a.goal.empty()) {
    const auto comma = a.goal.find(',');
    double x = 0;
    double y = 0;
    if (comma != std::string::npos) {
      if (!parse_number(a.goal.substr(0, comma), &x) ||
          !parse_number(a.goal.substr(comma + 1), &y)) {
        std::fprintf(stderr, "fieldproof world: --goal '%s': expected X,Y (metres) or a frame\n",
                     a.goal.c_str());
        return kExitInvalid;
      }
      o.goal = world::Pose2D{x, y, 0.0};
    } else {
      o.goal_frame = a.goal;
    }
  }
  const auto until = parse_duration(a.until);
  if (!until || *until <= Duration::zero()) {
    std::fprintf(stderr, "fieldproof world: --until '%s': %s\n", a.until.c_str(),
                 until ? "must be > 0" : until.error().c_str());
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
      "world", "Drive vehicles of an SDF world to a goal with the reference stack");
  cmd->add_option("world", args->world, "the SDF world file")->required();
  cmd->add_option("--spawn", args->spawns, "a vehicle at a frame of the world: NAME@FRAME");
  cmd->add_option("--goal", args->goal, "the goal: X,Y in metres, or a frame of the world");
  cmd->add_option("--until", args->until, "simulated time limit (default 60s)");
  cmd->add_option("--seed", args->seed, "the world's seed (0 to 2^31-1)");
  cmd->add_flag("--process", args->process,
                "run each stack as the fieldproof-ugv-nav process (ipc), not in-process");
  cmd->add_option("--max-rtf", args->max_rtf, "pace cap (simulated / wall time; 0 = unpaced)");
  cmd->callback([args, exit_code] { *exit_code = run_world(*args); });
}

}  // namespace fieldproof::cli
