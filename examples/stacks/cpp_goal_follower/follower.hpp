// GoalFollower: the go-to-goal controller of the example stack, with no I/O. It is fed the
// vehicle's pose (odometry), lidar scans and navigation goals, and is ticked at a fixed rate of
// simulated time; everything it wants to publish comes back from take_outputs(). Nothing here
// reads a clock or draws a random number, so the same inputs give the same outputs.
//
//   GoalFollower f(params);
//   f.on_pose(t, {x, y, yaw});
//   f.on_scan(t, scan);
//   f.on_goal(t, {"g1", 10.0, -1.0, 0.0});   // ACCEPTED (or REJECTED) is queued at once
//   f.tick(t);                               // a cmd_vel, feedback now and then, the result
//   for (auto& o : f.take_outputs()) publish(o);
//
// Obstacles: the lidar points in a corridor as wide as the chassis plus a margin, straight
// towards the goal, block the direct way. With `avoid` the follower then steers to the nearest
// free heading on one side (kept until the direct way is free again: no dithering), which takes
// it around the crate in the depot; without it, it stops short of the obstacle and, blocked for
// blocked_timeout_s, aborts the goal.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "fieldproof/msgs/navigation.hpp"
#include "fieldproof/time/duration.hpp"

namespace goal_follower {

using fieldproof::SimTime;

struct Params {
  double max_linear = 0.8;               // m/s
  double max_angular = 1.2;              // rad/s
  double heading_gain = 2.0;             // rad/s per rad of heading error
  double goal_tolerance = 0.3;           // m: succeeded closer than this
  double lookahead = 1.6;                // m: how far ahead the corridor is checked
  double corridor_half_width = 0.45;     // m: half the chassis width (0.2) plus a margin
  double stop_distance = 0.6;            // m from the centre: nothing closer ahead than this
  bool avoid = true;                     // sidestep obstacles (false: stop in front of them)
  double blocked_timeout_s = 10.0;       // blocked this long: the goal is aborted
  double max_goal_distance = 50.0;       // m from the current pose: farther goals are rejected
  double feedback_period_s = 0.5;        // s between feedback messages
  int control_rate_hz = 20;              // ticks per second of simulated time
  std::string pose_source = "odometry";  // or "ground_truth" (/world/<world>/pose/info)
};

// Reads a JSON object of parameters (the vehicle's `parameters:` in the scenario). Unknown keys
// and values of the wrong type or range are errors naming the key; nullopt + *error then.
std::optional<Params> parse_params(const std::string& json_text, std::string* error);

struct Pose {
  double x = 0.0;
  double y = 0.0;
  double yaw = 0.0;
};

struct Scan {
  double angle_min = 0.0;  // rad, in the vehicle frame (the lidar is at the chassis centre)
  double angle_step = 0.0;
  double range_min = 0.0;
  double range_max = 0.0;
  std::vector<double> ranges;  // +inf: nothing in range; -inf: closer than range_min
};

struct CmdVel {
  double linear = 0.0;
  double angular = 0.0;
};

using Output = std::variant<CmdVel, fieldproof::msgs::NavStatus, fieldproof::msgs::NavFeedback,
                            fieldproof::msgs::Lifecycle>;

class GoalFollower {
 public:
  explicit GoalFollower(Params params, std::string node_name = "goal_follower");

  const Params& params() const { return params_; }
  // Publishes the first lifecycle state (inactive: configured, waiting for sensors).
  void start(SimTime t);
  void on_pose(SimTime t, const Pose& pose);
  void on_scan(SimTime t, Scan scan);
  void on_goal(SimTime t, const fieldproof::msgs::NavGoal& goal);
  void tick(SimTime t);
  // Cancels an active goal, stops the vehicle and reports the node finalized.
  void shutdown(SimTime t, const std::string& why);

  std::vector<Output> take_outputs();
  bool active() const { return active_; }

 private:
  // How far ahead (m) the corridor in direction `heading` (vehicle frame) is free; +inf if free
  // up to the scan's range.
  double free_distance(double heading) const;
  void finish(fieldproof::msgs::NavStatusCode code, const std::string& reason);
  void maybe_activate();
  void command(double linear, double angular);

  Params params_;
  std::string node_;
  std::vector<Output> out_;
  std::optional<Pose> pose_;
  std::optional<Scan> scan_;
  std::optional<fieldproof::msgs::NavGoal> goal_;
  bool active_ = false;
  bool finalized_ = false;
  bool moving_ = false;  // the last command was not a stop
  int side_ = 0;         // +1 left, -1 right while going around an obstacle; 0 direct
  SimTime blocked_since_ = SimTime::infinite();
  SimTime next_feedback_ = SimTime::zero();
};

}  // namespace goal_follower
