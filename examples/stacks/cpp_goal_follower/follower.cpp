#include "follower.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <numbers>

namespace goal_follower {
namespace {

using fieldproof::msgs::Lifecycle;
using fieldproof::msgs::LifecycleStateCode;
using fieldproof::msgs::NavFeedback;
using fieldproof::msgs::NavStatus;
using fieldproof::msgs::NavStatusCode;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kPi = std::numbers::pi;
// Candidate headings around an obstacle: 10 degree steps up to 150 degrees off the goal.
constexpr double kSearchStep = kPi / 18;
constexpr int kSearchSteps = 15;
// Closer than stop_distance + this to an obstacle ahead, the follower stops (the approach slows
// down in proportion to the gap, so it would otherwise creep towards stop_distance forever).
constexpr double kStopMargin = 0.1;

double wrap(double a) {
  a = std::fmod(a + kPi, 2 * kPi);
  if (a < 0) a += 2 * kPi;
  return a - kPi;
}

std::string format_m(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f m", v);
  return b;
}

std::string format_s(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g s", v);
  return b;
}

}  // namespace

std::optional<Params> parse_params(const std::string& json_text, std::string* error) {
  using nlohmann::json;
  Params p;
  json j;
  try {
    j = json::parse(json_text.empty() ? std::string("{}") : json_text);
  } catch (const json::parse_error& e) {
    *error = std::string("the parameters are not valid JSON: ") + e.what();
    return std::nullopt;
  }
  if (!j.is_object()) {
    *error = "the parameters must be a JSON object";
    return std::nullopt;
  }
  const auto positive = [&](const std::string& key, const json& v, double* out) {
    if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>())) {
      *error = "parameters." + key + ": expected a number > 0, got " + v.dump();
      return false;
    }
    *out = v.get<double>();
    return true;
  };
  for (const auto& [key, v] : j.items()) {
    bool ok = true;
    if (key == "max_linear") {
      ok = positive(key, v, &p.max_linear);
    } else if (key == "max_angular") {
      ok = positive(key, v, &p.max_angular);
    } else if (key == "heading_gain") {
      ok = positive(key, v, &p.heading_gain);
    } else if (key == "goal_tolerance") {
      ok = positive(key, v, &p.goal_tolerance);
    } else if (key == "lookahead") {
      ok = positive(key, v, &p.lookahead);
    } else if (key == "corridor_half_width") {
      ok = positive(key, v, &p.corridor_half_width);
    } else if (key == "stop_distance") {
      ok = positive(key, v, &p.stop_distance);
    } else if (key == "blocked_timeout_s") {
      ok = positive(key, v, &p.blocked_timeout_s);
    } else if (key == "max_goal_distance") {
      ok = positive(key, v, &p.max_goal_distance);
    } else if (key == "feedback_period_s") {
      ok = positive(key, v, &p.feedback_period_s);
    } else if (key == "avoid") {
      if (!v.is_boolean()) {
        *error = "parameters.avoid: expected true or false, got " + v.dump();
        return std::nullopt;
      }
      p.avoid = v.get<bool>();
    } else if (key == "control_rate_hz") {
      if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > 1000) {
        *error = "parameters.control_rate_hz: expected an integer in [1, 1000], got " + v.dump();
        return std::nullopt;
      }
      p.control_rate_hz = v.get<int>();
    } else if (key == "pose_source") {
      if (!v.is_string() || (v != "odometry" && v != "ground_truth")) {
        *error =
            "parameters.pose_source: expected \"odometry\" or \"ground_truth\", got " + v.dump();
        return std::nullopt;
      }
      p.pose_source = v.get<std::string>();
    } else {
      *error = "parameters." + key +
               ": unknown parameter (known: max_linear, max_angular, heading_gain, "
               "goal_tolerance, lookahead, corridor_half_width, stop_distance, avoid, "
               "blocked_timeout_s, max_goal_distance, feedback_period_s, control_rate_hz, "
               "pose_source)";
      return std::nullopt;
    }
    if (!ok) return std::nullopt;
  }
  if (p.stop_distance >= p.lookahead) {
    *error = "parameters.stop_distance must be less than parameters.lookahead";
    return std::nullopt;
  }
  return p;
}

GoalFollower::GoalFollower(Params params, std::string node_name)
    : params_(std::move(params)), node_(std::move(node_name)) {}

void GoalFollower::start(SimTime) {
  out_.push_back(Lifecycle{node_, LifecycleStateCode::kInactive});
}

void GoalFollower::maybe_activate() {
  if (active_ || finalized_ || !pose_ || !scan_) return;
  active_ = true;
  out_.push_back(Lifecycle{node_, LifecycleStateCode::kActive});
}

void GoalFollower::on_pose(SimTime, const Pose& pose) {
  pose_ = pose;
  maybe_activate();
}

void GoalFollower::on_scan(SimTime, Scan scan) {
  scan_ = std::move(scan);
  maybe_activate();
}

void GoalFollower::on_goal(SimTime t, const fieldproof::msgs::NavGoal& goal) {
  const auto reject = [&](const std::string& why) {
    out_.push_back(NavStatus{goal.id, NavStatusCode::kRejected, why});
  };
  if (finalized_) return reject("the follower is shutting down");
  if (!std::isfinite(goal.x) || !std::isfinite(goal.y) || !std::isfinite(goal.yaw)) {
    return reject("the goal pose is not finite");
  }
  const Pose from = pose_.value_or(Pose{});
  const double d = std::hypot(goal.x - from.x, goal.y - from.y);
  if (d > params_.max_goal_distance) {
    return reject("the goal is " + format_m(d) + " away, more than max_goal_distance " +
                  format_m(params_.max_goal_distance));
  }
  if (goal_) {
    out_.push_back(NavStatus{goal_->id, NavStatusCode::kCanceled, "preempted by goal " + goal.id});
  }
  goal_ = goal;
  side_ = 0;
  blocked_since_ = SimTime::infinite();
  next_feedback_ = t;
  out_.push_back(NavStatus{goal.id, NavStatusCode::kAccepted, ""});
}

double GoalFollower::free_distance(double heading) const {
  if (!scan_) return kInf;
  const double ch = std::cos(heading);
  const double sh = std::sin(heading);
  double nearest = kInf;
  for (size_t i = 0; i < scan_->ranges.size(); ++i) {
    double r = scan_->ranges[i];
    if (std::isnan(r) || r == kInf) continue;
    if (r == -kInf) r = scan_->range_min;
    const double a = scan_->angle_min + scan_->angle_step * static_cast<double>(i);
    const double px = r * std::cos(a);
    const double py = r * std::sin(a);
    const double along = px * ch + py * sh;
    const double lateral = -px * sh + py * ch;
    if (along > 0 && std::abs(lateral) < params_.corridor_half_width) {
      nearest = std::min(nearest, along);
    }
  }
  return nearest;
}

void GoalFollower::command(double linear, double angular) {
  const bool moving = linear != 0.0 || angular != 0.0;
  // A stop is sent once; motion on every tick.
  if (moving || moving_) out_.push_back(CmdVel{linear, angular});
  moving_ = moving;
}

void GoalFollower::finish(NavStatusCode code, const std::string& reason) {
  out_.push_back(NavStatus{goal_->id, code, reason});
  goal_.reset();
  side_ = 0;
  blocked_since_ = SimTime::infinite();
  command(0.0, 0.0);
}

void GoalFollower::tick(SimTime t) {
  if (!goal_ || !active_ || finalized_) {
    command(0.0, 0.0);
    return;
  }
  const Pose& p = *pose_;
  const double dx = goal_->x - p.x;
  const double dy = goal_->y - p.y;
  const double distance = std::hypot(dx, dy);
  if (t >= next_feedback_) {
    out_.push_back(NavFeedback{goal_->id, distance});
    next_feedback_ = t + fieldproof::Duration::from_ns(
                             static_cast<int64_t>(std::llround(params_.feedback_period_s * 1e9)));
  }
  if (distance < params_.goal_tolerance) {
    finish(NavStatusCode::kSucceeded, "");
    return;
  }

  const double to_goal = wrap(std::atan2(dy, dx) - p.yaw);
  // Obstacles beyond the goal do not block it.
  const double look = std::min(params_.lookahead, distance);
  double target = to_goal;
  bool blocked = false;
  if (free_distance(to_goal) <= look) {
    if (params_.avoid) {
      // Keep going round on the side already chosen; choose left first, then right.
      bool found = false;
      for (int k = 1; k <= kSearchSteps && !found; ++k) {
        for (int side : {+1, -1}) {
          if (side_ != 0 && side != side_) continue;
          const double h = wrap(to_goal + side * k * kSearchStep);
          if (free_distance(h) > params_.lookahead) {
            target = h;
            side_ = side;
            found = true;
            break;
          }
        }
      }
      blocked = !found;
    } else {
      blocked = free_distance(0.0) <= params_.stop_distance + kStopMargin;
    }
  } else {
    side_ = 0;
  }

  const double angular =
      std::clamp(params_.heading_gain * target, -params_.max_angular, params_.max_angular);
  // Turn on the spot for a large heading error, slow down near the goal and near what is ahead.
  double linear = 0.0;
  if (!blocked && std::abs(target) < kPi / 3) {
    const double ahead = free_distance(0.0);
    linear = params_.max_linear * std::cos(target);
    linear = std::min(linear, std::max(0.15, distance));
    // Slows down approaching an obstacle; stopped within kStopMargin of stop_distance.
    linear = std::min(linear, std::max(0.0, ahead - params_.stop_distance));
    if (ahead <= params_.stop_distance + kStopMargin) linear = 0.0;
  }
  if (blocked || (linear == 0.0 && free_distance(0.0) <= params_.stop_distance + kStopMargin)) {
    if (blocked_since_.is_infinite()) blocked_since_ = t;
    if (t - blocked_since_ >= fieldproof::Duration::from_ns(static_cast<int64_t>(
                                  std::llround(params_.blocked_timeout_s * 1e9)))) {
      finish(NavStatusCode::kAborted, "blocked by an obstacle " + format_m(free_distance(0.0)) +
                                          " ahead for " + format_s(params_.blocked_timeout_s) +
                                          ", " + format_m(distance) + " from the goal");
      return;
    }
    command(0.0, blocked && !params_.avoid ? 0.0 : angular);
    return;
  }
  blocked_since_ = SimTime::infinite();
  command(linear, angular);
}

void GoalFollower::shutdown(SimTime, const std::string& why) {
  if (finalized_) return;
  if (goal_) finish(NavStatusCode::kCanceled, why);
  command(0.0, 0.0);
  finalized_ = true;
  active_ = false;
  out_.push_back(Lifecycle{node_, LifecycleStateCode::kFinalized});
}

std::vector<Output> GoalFollower::take_outputs() {
  std::vector<Output> out;
  out.swap(out_);
  return out;
}

}  // namespace goal_follower
