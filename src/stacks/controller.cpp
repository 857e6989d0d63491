#include "fieldproof/stacks/controller.hpp"

#include <algorithm>
#include <cmath>

namespace fieldproof::stacks {
namespace {

constexpr double kPi = 3.14159265358979323846;

bool positive(double v) { return std::isfinite(v) && v > 0; }

}  // namespace

double normalize_angle(double a) {
  if (!std::isfinite(a)) return 0.0;
  a = std::fmod(a, 2.0 * kPi);
  if (a <= -kPi) a += 2.0 * kPi;
  if (a > kPi) a -= 2.0 * kPi;
  return a;
}

Status ControllerOptions::validate() const {
  if (!positive(lookahead))
    return Status(StatusCode::kInvalidArgument, "controller.lookahead must be > 0 (metres)");
  if (!positive(max_linear))
    return Status(StatusCode::kInvalidArgument, "controller.max_linear must be > 0 (m/s)");
  if (!positive(max_angular))
    return Status(StatusCode::kInvalidArgument, "controller.max_angular must be > 0 (rad/s)");
  if (!std::isfinite(min_linear) || min_linear < 0 || min_linear > max_linear) {
    return Status(StatusCode::kInvalidArgument,
                  "controller.min_linear must be between 0 and max_linear (m/s)");
  }
  if (!std::isfinite(slowdown_distance) || slowdown_distance < 0) {
    return Status(StatusCode::kInvalidArgument,
                  "controller.slowdown_distance must be >= 0 (metres)");
  }
  if (!positive(rotate_threshold))
    return Status(StatusCode::kInvalidArgument,
                  "controller.rotate_threshold must be > 0 (radians)");
  if (!positive(angular_gain))
    return Status(StatusCode::kInvalidArgument, "controller.angular_gain must be > 0");
  if (!positive(goal_tolerance_xy))
    return Status(StatusCode::kInvalidArgument,
                  "controller.goal_tolerance_xy must be > 0 (metres)");
  if (!positive(goal_tolerance_yaw))
    return Status(StatusCode::kInvalidArgument,
                  "controller.goal_tolerance_yaw must be > 0 (radians)");
  return {};
}

void PurePursuit::set_path(std::vector<Point2> path, double goal_yaw) {
  path_ = std::move(path);
  goal_yaw_ = goal_yaw;
  cum_.assign(path_.size(), 0.0);
  for (size_t i = 1; i < path_.size(); ++i) {
    cum_[i] = cum_[i - 1] + std::hypot(path_[i].x - path_[i - 1].x, path_[i].y - path_[i - 1].y);
  }
  segment_ = 0;
  seg_t_ = 0.0;
  rotating_to_goal_ = false;
}

void PurePursuit::advance_projection(Point2 p) {
  if (path_.size() < 2) return;
  // Search forward from the current segment, a bounded window, for the closest projection; the
  // projection never moves backwards.
  double best_d2 = -1.0;
  size_t best_seg = segment_;
  double best_t = seg_t_;
  const double here = cum_[segment_] + seg_t_ * (cum_[segment_ + 1] - cum_[segment_]);
  const double window_end = here + 2.0 * options_.lookahead + 1.0;
  for (size_t s = segment_; s + 1 < path_.size(); ++s) {
    if (s > segment_ && cum_[s] > window_end) break;
    const Point2 a = path_[s];
    const Point2 b = path_[s + 1];
    const double vx = b.x - a.x;
    const double vy = b.y - a.y;
    const double l2 = vx * vx + vy * vy;
    double t = l2 > 0 ? ((p.x - a.x) * vx + (p.y - a.y) * vy) / l2 : 0.0;
    t = std::clamp(t, 0.0, 1.0);
    if (s == segment_) t = std::max(t, seg_t_);
    const double qx = a.x + t * vx - p.x;
    const double qy = a.y + t * vy - p.y;
    const double d2 = qx * qx + qy * qy;
    if (best_d2 < 0 || d2 < best_d2) {
      best_d2 = d2;
      best_seg = s;
      best_t = t;
    }
  }
  segment_ = best_seg;
  seg_t_ = best_t;
}

double PurePursuit::remaining() const {
  if (path_.size() < 2) return 0.0;
  const double seg_len = cum_[segment_ + 1] - cum_[segment_];
  return cum_.back() - (cum_[segment_] + seg_t_ * seg_len);
}

std::vector<Point2> PurePursuit::ahead(const Pose2D& pose, double distance) const {
  std::vector<Point2> out{{pose.x, pose.y}};
  if (path_.empty()) return out;
  if (path_.size() == 1) {
    out.push_back(path_[0]);
    return out;
  }
  const Point2 a = path_[segment_];
  const Point2 b = path_[segment_ + 1];
  Point2 prev{a.x + seg_t_ * (b.x - a.x), a.y + seg_t_ * (b.y - a.y)};
  out.push_back(prev);
  double left = distance;
  for (size_t i = segment_ + 1; i < path_.size() && left > 0; ++i) {
    const double d = std::hypot(path_[i].x - prev.x, path_[i].y - prev.y);
    if (d >= left) {
      const double t = d > 0 ? left / d : 0.0;
      out.push_back({prev.x + t * (path_[i].x - prev.x), prev.y + t * (path_[i].y - prev.y)});
      break;
    }
    out.push_back(path_[i]);
    left -= d;
    prev = path_[i];
  }
  return out;
}

ControlOutput PurePursuit::compute(const Pose2D& pose) {
  ControlOutput out;
  if (path_.empty() || !std::isfinite(pose.x) || !std::isfinite(pose.y) ||
      !std::isfinite(pose.yaw)) {
    return out;  // nothing to follow, or no usable pose: stand still
  }
  const Point2 p{pose.x, pose.y};
  advance_projection(p);
  const Point2 goal = path_.back();
  const double to_goal = std::hypot(goal.x - p.x, goal.y - p.y);
  out.distance_remaining = std::max(remaining(), to_goal);

  // Arrived in position: turn to the goal's yaw (latched, so noise around the tolerance does not
  // make the vehicle alternate between driving and turning).
  if (to_goal <= options_.goal_tolerance_xy) rotating_to_goal_ = true;
  if (rotating_to_goal_) {
    out.distance_remaining = to_goal;
    const double err = normalize_angle(goal_yaw_ - pose.yaw);
    if (std::abs(err) <= options_.goal_tolerance_yaw) {
      out.done = true;
      return out;
    }
    out.cmd.angular =
        std::clamp(options_.angular_gain * err, -options_.max_angular, options_.max_angular);
    return out;
  }

  // The carrot: lookahead metres along the path from the projection (the goal near the end).
  const std::vector<Point2> pts = ahead(pose, options_.lookahead);
  Point2 carrot = pts.back();
  if (std::hypot(carrot.x - p.x, carrot.y - p.y) < 1e-6) carrot = goal;
  const double dx = carrot.x - p.x;
  const double dy = carrot.y - p.y;
  const double c = std::cos(pose.yaw);
  const double s = std::sin(pose.yaw);
  const double lx = c * dx + s * dy;  // carrot in the vehicle's frame
  const double ly = -s * dx + c * dy;
  const double alpha = std::atan2(ly, lx);
  if (std::abs(alpha) > options_.rotate_threshold) {
    out.cmd.angular =
        std::clamp(options_.angular_gain * alpha, -options_.max_angular, options_.max_angular);
    return out;
  }
  const double ld = std::max(std::hypot(lx, ly), 1e-6);
  const double curvature = 2.0 * ly / (ld * ld);
  double v = options_.max_linear;
  if (options_.slowdown_distance > 0) {
    v *= std::min(1.0, out.distance_remaining / options_.slowdown_distance);
  }
  v = std::max(v, options_.min_linear);
  double w = v * curvature;
  if (std::abs(w) > options_.max_angular) {
    // Keep the curvature, lower the speed.
    v *= options_.max_angular / std::abs(w);
    w = std::copysign(options_.max_angular, w);
  }
  out.cmd = {v, w};
  return out;
}

}  // namespace fieldproof::stacks
