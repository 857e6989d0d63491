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
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fieldproof/engine/session.hpp"

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

struct WorldDriveResult {
  int exit_code = 0;
  std::string error;  // bad input (exit 2) or why the run failed
  std::vector<VehicleOutcome> vehicles;
  std::optional<world::Pose2D> goal;
  SimTime sim_time;
  Duration wall;
  double rtf = 0.0;  // sim_time / wall
};

WorldDriveResult drive_world(const WorldDriveOptions& options);

}  // namespace fieldproof::engine
