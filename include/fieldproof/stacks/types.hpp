// Plain value types of the reference navigation stack (stacks/ugv_nav): poses, velocity commands,
// laser scans, navigate_to_pose goals, statuses and feedback, lifecycle states. No protobuf here;
// src/stacks/codec.* maps them to the bus payloads (ignition.msgs and fieldproof.msgs).
//
//   stacks::NavGoal goal{.id = "g1", .pose = {10.0, -1.0, 0.0}};
//   stacks::Pose2D p{0.0, 0.0, 0.0};
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "fieldproof/time/duration.hpp"

namespace fieldproof::stacks {

// Reads the wall clock (on a steady time line, in ns). Injected everywhere the stack needs wall
// time (the lifecycle manager's heartbeats); tests pass a fake. Same shape as fieldproof::WallNow
// of the time part.
using WallNow = std::function<SimTime()>;

struct Point2 {
  double x = 0.0;
  double y = 0.0;
};

// A planar pose in the world frame: metres and radians (yaw about z, counter-clockwise from +x).
struct Pose2D {
  double x = 0.0;
  double y = 0.0;
  double yaw = 0.0;
};

// A velocity command for a differential-drive base (ignition.msgs.Twist linear.x, angular.z).
struct CmdVel {
  double linear = 0.0;   // m/s, forward
  double angular = 0.0;  // rad/s, counter-clockwise
  bool operator==(const CmdVel&) const = default;
};

// A planar laser scan in the sensor's frame, which is taken to coincide with the vehicle's pose.
// Ray i points at angle_min + i * angle_increment; a range that is not finite, below range_min or
// at/above range_max is "no return".
struct LaserScan {
  double angle_min = 0.0;
  double angle_increment = 0.0;
  double range_min = 0.0;
  double range_max = 0.0;
  std::vector<double> ranges;
};

struct NavGoal {
  std::string id;
  Pose2D pose;
};

enum class GoalStatus : uint8_t { kAccepted, kRejected, kSucceeded, kAborted, kCanceled };

// "accepted", "rejected", "succeeded", "aborted", "canceled".
std::string_view to_string(GoalStatus status);

struct NavStatus {
  std::string id;
  GoalStatus status = GoalStatus::kAccepted;
  std::string reason;  // empty for accepted and succeeded; why otherwise
};

struct NavFeedback {
  std::string id;
  double distance_remaining = 0.0;  // metres along the current path from the vehicle to the goal
};

enum class LifecycleState : uint8_t { kUnconfigured, kInactive, kActive, kFinalized };

// "unconfigured", "inactive", "active", "finalized".
std::string_view to_string(LifecycleState state);

struct LifecycleTransition {
  std::string node;  // the managed node: planner_server, controller_server, bt_navigator
  LifecycleState state = LifecycleState::kUnconfigured;
  std::string reason;  // why the transition happened ("configure", "heartbeat lost: ...")
};

}  // namespace fieldproof::stacks
