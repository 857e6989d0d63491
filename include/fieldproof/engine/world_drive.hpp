// `fieldproof world`: drive vehicles of an SDF world to a goal with the reference stack, and say
// where they went. A Session with a goal sent to every vehicle at t = 0, run until every goal
// ends (succeeded, aborted, rejected, canceled) or `until`.
//
//   WorldDriveOptions o;
//   o.session.world_file = "examples/worlds/depot.sdf";
//   o.session.vehicles = {{.name = "ugv1", .frame = "dock"}};
//   o.goal_frame = "goal_a";
//   WorldDriveResult r = drive_world(o);
//   r.exit_code;   // 0 every vehicle arrived, 1 not, 2 bad input (r.error says what and where)
//
// Or from the command line's text: drive_world(WorldDriveRequest{...}) checks the arguments,
// resolves the stack, loads the robot model and parses the spawns, goal and limit first.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fieldproof/engine/session.hpp"
#include "fieldproof/util/example_defaults.hpp"

namespace fieldproof::engine {

struct WorldDriveOptions {
  SessionOptions session;
  std::optional<world::Pose2D> goal;  // a goal pose, or
  std::string goal_frame;             // a world frame; neither: no goal (the vehicles stand)
  SimTime until = SimTime::from_ns(60'000'000'000);
};

struct VehicleOutcome {
  std::string name;
  world::Pose2D start;
  world::Pose2D end;              // the last ground-truth pose seen
  std::string status;             // the last goal status ("succeeded", "aborted", ...; "none")
  std::string reason;             // the stack's reason, if any
  bool arrived = false;           // status succeeded
  double distance_to_goal = 0.0;  // from `end` (0 without a goal)
};

// What `fieldproof world` was given, as text; the names in messages are its options'.
struct WorldDriveRequest {
  std::string world;                // the SDF world file
  std::vector<std::string> spawns;  // NAME@FRAME or NAME@X,Y[,YAW] (metres, radians)
  std::string goal;                 // X,Y[,YAW] or a frame of the world; empty: no goal
  std::string until = "60s";        // a duration > 0
  int64_t seed = 0;                 // 0 to 2^31-1
  double max_rtf = 0.0;             // >= 0, 0 = unpaced
  std::string stack_plugin{util::kDefaultStackPlugin};  // used when stack_command is empty
  std::string stack_command;  // a program (argv split at spaces), or empty
  // The vehicles' robot model (empty: util::kDefaultRobotModel). One given explicitly also sets
  // the stack's inflation.robot_radius and controller speed limits from it, capped at 0.5 m/s and
  // 1 rad/s.
  std::string model;
  std::filesystem::path base_dir;                      // relative stack and model paths from here
  std::function<void(const std::string&)> on_warning;  // the model's and the session's warnings
};

struct WorldDriveResult {
  // True when the request was refused before any session was made (bad arguments: exit 2; a stack
  // that cannot be resolved: exit 1): only `error` says anything, one line per problem.
  bool refused = false;
  int exit_code = 0;
  std::string error;  // bad input (exit 2) or why the run failed
  std::vector<VehicleOutcome> vehicles;
  std::optional<world::Pose2D> goal;
  SimTime sim_time;
  Duration wall;
  double rtf = 0.0;  // sim_time / wall
};

WorldDriveResult drive_world(const WorldDriveOptions& options);

// The options a request asks for, every vehicle running `stack` (resolve_stack of the request's
// stack_plugin or stack_command); kInvalidArgument naming the option, one line per problem.
Result<WorldDriveOptions> world_drive_options(const WorldDriveRequest& request,
                                              const StackSpec& stack);

// world_drive_options, then drive_world. A refused request: exit 2, or 1 when the stack cannot be
// resolved (as `fieldproof world` has always answered).
WorldDriveResult drive_world(const WorldDriveRequest& request);

}  // namespace fieldproof::engine
