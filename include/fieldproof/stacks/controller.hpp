// The path-following controller: pure pursuit over a polyline with a lookahead distance, speed
// limits, slowing down near the goal, rotating in place when the path is far off the heading,
// and a final rotation to the goal's yaw. Pure and deterministic: the same poses give the same
// commands.
//
//   stacks::PurePursuit pp(opts);
//   pp.set_path(plan.path, goal_yaw);
//   auto out = pp.compute(pose);         // out.cmd, out.done, out.distance_remaining
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "fieldproof/stacks/types.hpp"
#include "fieldproof/util/status.hpp"

namespace fieldproof::stacks {

struct ControllerOptions {
  double lookahead = 0.6;           // m, the carrot's distance along the path
  double max_linear = 0.5;          // m/s
  double max_angular = 1.0;         // rad/s
  double min_linear = 0.05;         // m/s, the slowest approach speed while not arrived
  double slowdown_distance = 1.0;   // m: within this of the goal, speed scales down linearly
  double rotate_threshold = 0.8;    // rad: a larger heading error to the carrot turns in place
  double angular_gain = 1.5;        // 1/s, for turning in place and the final yaw
  double goal_tolerance_xy = 0.15;  // m
  double goal_tolerance_yaw = 0.2;  // rad
  [[nodiscard]] Status validate() const;
};

struct ControlOutput {
  CmdVel cmd;
  bool done = false;                // within both tolerances: cmd is zero
  double distance_remaining = 0.0;  // m along the path from the vehicle's projection to the goal
};

class PurePursuit {
 public:
  explicit PurePursuit(ControllerOptions options = {}) : options_(options) {}

  // A new path (at least one point; the last is the goal) and the goal's yaw. Resets progress.
  void set_path(std::vector<Point2> path, double goal_yaw);
  void clear() { path_.clear(); }
  bool has_path() const { return !path_.empty(); }
  const std::vector<Point2>& path() const { return path_; }

  ControlOutput compute(const Pose2D& pose);

  // The point on the path where the vehicle projects (progress is monotone: the controller never
  // goes back along the path) and its arc length from the start.
  size_t progress_segment() const { return segment_; }
  // Distance along the path from the current projection to the goal.
  double remaining() const;
  // Points of the path from the vehicle's projection forward, up to `distance` metres.
  std::vector<Point2> ahead(const Pose2D& pose, double distance) const;

  const ControllerOptions& options() const { return options_; }

 private:
  void advance_projection(Point2 p);

  ControllerOptions options_;
  std::vector<Point2> path_;
  std::vector<double> cum_;  // arc length at each vertex
  double goal_yaw_ = 0.0;
  size_t segment_ = 0;  // projection lies on segment [segment_, segment_ + 1]
  double seg_t_ = 0.0;  // and at this fraction of it
  bool rotating_to_goal_ = false;
};

// Wraps an angle to (-pi, pi].
double normalize_angle(double a);

}  // namespace fieldproof::stacks
