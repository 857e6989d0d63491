#include "fieldproof/stacks/ugv_nav_stack.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace fieldproof::stacks {
namespace {

constexpr size_t kMaxScanRays = 100'000;

bool finite_pose(const Pose2D& p) {
  return std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.yaw);
}

std::string fmt_xy(double x, double y) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "(%.2f, %.2f)", x, y);
  return buf;
}

}  // namespace

Status UgvNavOptions::validate() const {
  if (vehicle.empty() || vehicle.find_first_of("/ \t\n") != std::string::npos) {
    return Status(StatusCode::kInvalidArgument,
                  "vehicle must be a non-empty name without '/' or spaces");
  }
  if (pose_source == PoseSource::kGroundTruth && world.empty()) {
    return Status(StatusCode::kInvalidArgument,
                  "pose_source ground_truth needs the world's name (world)");
  }
  if (Status s = inflation.validate(); !s.ok()) return s;
  if (Status s = planner.validate(); !s.ok()) return s;
  if (Status s = controller.validate(); !s.ok()) return s;
  if (Status s = lifecycle.validate(); !s.ok()) return s;
  if (control_period <= Duration::zero() || control_period.is_infinite()) {
    return Status(StatusCode::kInvalidArgument, "control_period must be > 0 and finite");
  }
  if (feedback_period <= Duration::zero() || feedback_period.is_infinite()) {
    return Status(StatusCode::kInvalidArgument, "feedback_period must be > 0 and finite");
  }
  if (!std::isfinite(blocked_check_distance) || blocked_check_distance < 0) {
    return Status(StatusCode::kInvalidArgument, "blocked_check_distance must be >= 0 (metres)");
  }
  if (pose_timeout < Duration::zero() || pose_timeout.is_infinite()) {
    return Status(StatusCode::kInvalidArgument,
                  "pose_timeout must be >= 0 and finite (0: never stale)");
  }
  if (!std::isfinite(scan_match_tolerance) || scan_match_tolerance < 0) {
    return Status(StatusCode::kInvalidArgument, "scan_match_tolerance must be >= 0 (metres)");
  }
  if (max_replans < 1) return Status(StatusCode::kInvalidArgument, "max_replans must be >= 1");
  if (progress_timeout < Duration::zero() || progress_timeout.is_infinite()) {
    return Status(StatusCode::kInvalidArgument,
                  "progress_timeout must be >= 0 and finite (0 disables the progress checker)");
  }
  if (!std::isfinite(progress_distance) || progress_distance < 0) {
    return Status(StatusCode::kInvalidArgument, "progress_distance must be >= 0 (metres)");
  }
  if (replan_interval < Duration::zero() || replan_interval.is_infinite()) {
    return Status(StatusCode::kInvalidArgument, "replan_interval must be >= 0 and finite");
  }
  return {};
}

Result<std::unique_ptr<UgvNavStack>> UgvNavStack::create(UgvNavOptions options,
                                                         const world::OccupancyGrid& static_map,
                                                         WallNow wall_now) {
  const auto fail = [](std::string e) {
    return Status(StatusCode::kInvalidArgument, std::move(e));
  };
  if (Status s = options.validate(); !s.ok()) return fail("ugv_nav options: " + s.message());
  if (!wall_now) return fail("ugv_nav: no wall clock given (wall_now is empty)");
  auto cm = Costmap::build(static_map, options.inflation);
  if (!cm.ok()) return fail("ugv_nav: " + cm.status().message());
  return std::unique_ptr<UgvNavStack>(
      new UgvNavStack(std::move(options), *cm, std::move(wall_now)));
}

UgvNavStack::UgvNavStack(UgvNavOptions options, Costmap costmap, WallNow wall_now)
    : options_(std::move(options)),
      costmap_(std::move(costmap)),
      lifecycle_(options_.lifecycle, std::move(wall_now)),
      controller_(options_.controller) {}

void UgvNavStack::emit(std::variant<CmdVel, NavStatus, NavFeedback, LifecycleTransition> m) {
  if (const CmdVel* c = std::get_if<CmdVel>(&m)) moving_ = !(*c == CmdVel{});
  outbox_.push_back({now_, std::move(m)});
}

void UgvNavStack::drain_lifecycle() {
  for (LifecycleTransition& t : lifecycle_.take()) emit(std::move(t));
}

std::vector<StackOutput> UgvNavStack::take_outbox() {
  std::vector<StackOutput> out;
  out.swap(outbox_);
  return out;
}

void UgvNavStack::finish(GoalStatus status, const std::string& reason) {
  if (!goal_) return;
  if (moving_ || status != GoalStatus::kSucceeded) emit(CmdVel{});
  emit(NavStatus{goal_->goal.id, status, reason});
  goal_.reset();
  controller_.clear();
}

void UgvNavStack::on_pose(SimTime stamp, const Pose2D& pose) {
  if (!finite_pose(pose)) {
    ++ignored_inputs_;
    return;
  }
  now_ = std::max(now_, stamp);
  pose_ = pose;
  pose_stamp_ = stamp;
}

void UgvNavStack::on_scan(SimTime stamp, const LaserScan& scan) {
  if (!std::isfinite(scan.angle_min) || !std::isfinite(scan.angle_increment) ||
      !std::isfinite(scan.range_min) || !std::isfinite(scan.range_max) ||
      scan.ranges.size() > kMaxScanRays) {
    ++ignored_inputs_;
    return;
  }
  now_ = std::max(now_, stamp);
  scan_ = scan;
  scan_fresh_ = true;
}

void UgvNavStack::on_goal(SimTime stamp, const NavGoal& goal) {
  now_ = std::max(now_, stamp);
  const auto reject = [&](std::string reason) {
    emit(NavStatus{goal.id, GoalStatus::kRejected, std::move(reason)});
  };
  if (lifecycle_.state() != LifecycleState::kActive) {
    return reject("the stack is not active (lifecycle state " +
                  std::string(to_string(lifecycle_.state())) + ")");
  }
  if (goal.id.empty()) return reject("the goal has no id");
  if (!finite_pose(goal.pose)) return reject("the goal pose is not finite (NaN or infinity)");
  const Point2 gp{goal.pose.x, goal.pose.y};
  const auto cell = costmap_.cell_of(gp);
  if (!cell) {
    char buf[160];
    std::snprintf(
        buf, sizeof buf, " is outside the map [%.2f, %.2f] x [%.2f, %.2f]", costmap_.origin_x(),
        costmap_.origin_x() + costmap_.width() * costmap_.resolution(), costmap_.origin_y(),
        costmap_.origin_y() + costmap_.height() * costmap_.resolution());
    return reject("goal " + fmt_xy(gp.x, gp.y) + buf);
  }
  const uint8_t cost = costmap_.cost(*cell);
  if (cost == kObstacle) return reject("goal " + fmt_xy(gp.x, gp.y) + " is inside an obstacle");
  if (cost == kLethal) {
    char buf[128];
    std::snprintf(buf, sizeof buf,
                  " is within %.2f m (the robot's radius) of an obstacle: the robot cannot stand "
                  "there",
                  options_.inflation.robot_radius);
    return reject("goal " + fmt_xy(gp.x, gp.y) + buf);
  }
  if (goal_) {
    finish(GoalStatus::kCanceled, "preempted by goal " + goal.id);
  }
  emit(NavStatus{goal.id, GoalStatus::kAccepted, ""});
  goal_ = ActiveGoal{};
  goal_->goal = goal;
  goal_->next_replan = now_;
  goal_->next_feedback = now_;
  goal_->progress_at = now_;
}

bool UgvNavStack::cancel(SimTime stamp, const std::string& id) {
  if (!goal_ || goal_->goal.id != id) return false;
  now_ = std::max(now_, stamp);
  finish(GoalStatus::kCanceled, "canceled on request");
  return true;
}

void UgvNavStack::check_wall() {
  if (lifecycle_.check()) {
    drain_lifecycle();
    finish(GoalStatus::kAborted, "lifecycle went inactive: " + lifecycle_.last_reason());
  }
}

void UgvNavStack::shutdown(SimTime now, const std::string& reason) {
  now_ = std::max(now_, now);
  finish(GoalStatus::kAborted, "the stack is shutting down: " + reason);
  lifecycle_.deactivate(reason);
  drain_lifecycle();
}

void UgvNavStack::update_marks() {
  if (!scan_ || !pose_) return;
  const LaserScan& s = *scan_;
  const Pose2D& p = *pose_;
  const double res = costmap_.resolution();
  const int k = static_cast<int>(std::ceil(options_.scan_match_tolerance / res));
  const double max_range = options_.blocked_check_distance + options_.inflation.robot_radius +
                           options_.inflation.margin + res;
  const int w = costmap_.width();
  const auto index = [w](Cell c) { return static_cast<int64_t>(c.y) * w + c.x; };
  // Clear along every ray first (what the ray passed through is free now), then mark the hits,
  // so a hit is never cleared by a neighbouring ray of the same scan.
  std::vector<Cell> hits;
  for (size_t i = 0; i < s.ranges.size(); ++i) {
    const double r = s.ranges[i];
    if (std::isnan(r) || r < s.range_min) continue;  // includes -inf: too close to tell
    const bool hit = std::isfinite(r) && r < s.range_max;
    const double a = p.yaw + s.angle_min + static_cast<double>(i) * s.angle_increment;
    const double ca = std::cos(a);
    const double sa = std::sin(a);
    const double clear_to = std::min(hit ? r - res : s.range_max, max_range);
    if (!marks_.empty()) {
      for (double d = 0.0; d < clear_to; d += 0.5 * res) {
        const auto c = costmap_.cell_of({p.x + d * ca, p.y + d * sa});
        if (!c) break;
        marks_.erase(index(*c));
      }
    }
    if (!hit || r > max_range) continue;
    const auto c = costmap_.cell_of({p.x + r * ca, p.y + r * sa});
    if (!c) continue;
    // A hit within the tolerance of a mapped obstacle is the map itself.
    bool known = false;
    for (int dy = -k; dy <= k && !known; ++dy) {
      for (int dx = -k; dx <= k; ++dx) {
        if (costmap_.cost({c->x + dx, c->y + dy}) == kObstacle) {
          known = true;
          break;
        }
      }
    }
    if (!known) hits.push_back(*c);
  }
  for (const Cell c : hits) marks_.insert(index(c));
}

std::optional<Costmap> UgvNavStack::local_map() const {
  if (marks_.empty()) return std::nullopt;
  Costmap local = costmap_;
  const int w = costmap_.width();
  for (const int64_t i : marks_) {
    local.add_obstacle({static_cast<int>(i % w), static_cast<int>(i / w)});
  }
  return local;
}

bool UgvNavStack::path_blocked(const Costmap& local) const {
  if (!pose_ || !controller_.has_path()) return false;
  const std::vector<Point2> pts = controller_.ahead(*pose_, options_.blocked_check_distance);
  const double step = 0.5 * costmap_.resolution();
  for (size_t i = 1; i < pts.size(); ++i) {
    const double len = std::hypot(pts[i].x - pts[i - 1].x, pts[i].y - pts[i - 1].y);
    const int n = std::max(1, static_cast<int>(std::ceil(len / step)));
    for (int j = 0; j <= n; ++j) {
      const double t = static_cast<double>(j) / n;
      const Point2 q{pts[i - 1].x + t * (pts[i].x - pts[i - 1].x),
                     pts[i - 1].y + t * (pts[i].y - pts[i - 1].y)};
      // Only what the scan added counts. Near the vehicle, the lethal band is the planner's
      // escape route (PlannerOptions::escape_distance): only a hit itself blocks there.
      const uint8_t now_cost = local.cost_at(q);
      const uint8_t map_cost = costmap_.cost_at(q);
      if (std::hypot(q.x - pose_->x, q.y - pose_->y) <= options_.planner.escape_distance) {
        if (now_cost == kObstacle && map_cost != kObstacle) return true;
      } else if (now_cost >= kLethal && map_cost < kLethal) {
        return true;
      }
    }
  }
  return false;
}

bool UgvNavStack::replan(const Costmap& map) {
  const PlanResult r = plan_path(map, {pose_->x, pose_->y},
                                 {goal_->goal.pose.x, goal_->goal.pose.y}, options_.planner);
  if (!r.ok()) return false;
  controller_.set_path(r.path, goal_->goal.pose.yaw);
  return true;
}

void UgvNavStack::on_link(SimTime stamp, bool up) {
  now_ = std::max(now_, stamp);
  link_up_ = up;
  // Stop at once, not at the next control tick.
  if (!up && options_.stop_on_link_loss && moving_) emit(CmdVel{});
}

void UgvNavStack::tick(SimTime now) {
  if (now < next_tick_) return;
  now_ = std::max(now_, now);
  next_tick_ = now_ + options_.control_period;

  if (lifecycle_.state() == LifecycleState::kUnconfigured) lifecycle_.startup();
  drain_lifecycle();
  // The watchdog first: the first tick after a long pause finds the servers silent.
  check_wall();
  // The servers run on simulated-time timers; running is what their heartbeat reports.
  for (const std::string& server : options_.lifecycle.servers) lifecycle_.heartbeat(server);
  drain_lifecycle();
  if (lifecycle_.state() != LifecycleState::kActive || !goal_ || !pose_) return;

  ActiveGoal& g = *goal_;
  const Pose2D pose = *pose_;
  if (!link_up_ && options_.stop_on_link_loss) {
    // Without the ground station, stand still and keep the goal: a pause, not a lack of progress.
    g.progress_at = now_;
    if (moving_) emit(CmdVel{});
    return;
  }
  // Blind: no pose for too long (the odometry stopped). Stand still and wait; the progress
  // checker ends the goal if it lasts.
  const bool stale =
      options_.pose_timeout > Duration::zero() && now_ - pose_stamp_ > options_.pose_timeout;
  const bool new_scan = scan_fresh_;
  if (new_scan) {
    scan_fresh_ = false;
    update_marks();
  }
  if (g.phase == Phase::kNeedPlan) {
    const std::optional<Costmap> local = local_map();
    const PlanResult r = plan_path(local ? *local : costmap_, {pose.x, pose.y},
                                   {g.goal.pose.x, g.goal.pose.y}, options_.planner);
    if (!r.ok()) return finish(GoalStatus::kAborted, r.reason);
    controller_.set_path(r.path, g.goal.pose.yaw);
    g.phase = Phase::kFollowing;
  }

  if (g.phase == Phase::kFollowing && new_scan) {
    const std::optional<Costmap> local = local_map();
    if (local && path_blocked(*local)) {
      g.phase = Phase::kBlocked;
      g.next_replan = now_;
      emit(CmdVel{});  // stop first
    }
  }

  if (g.phase == Phase::kBlocked) {
    if (now_ < g.next_replan) {
      if (moving_) emit(CmdVel{});
      return;
    }
    ++replans_total_;
    const std::optional<Costmap> local = local_map();
    if (replan(local ? *local : costmap_)) {
      // Drive on from the next tick: the vehicle stands for one control period.
      g.phase = Phase::kFollowing;
      g.failed_replans = 0;
      if (moving_) emit(CmdVel{});
      return;
    } else {
      ++g.failed_replans;
      if (g.failed_replans >= options_.max_replans) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "path blocked: no path around it after %d replans",
                      g.failed_replans);
        return finish(GoalStatus::kAborted, buf);
      }
      g.next_replan = now_ + options_.replan_interval;
      if (moving_) emit(CmdVel{});
      return;
    }
  }

  // The progress checker: the straight-line distance to the goal must shrink by
  // progress_distance within every progress_timeout (blocked too long, circling, or blind).
  const double to_goal = std::hypot(g.goal.pose.x - pose.x, g.goal.pose.y - pose.y);
  if (to_goal < g.best_distance - options_.progress_distance) {
    g.best_distance = to_goal;
    g.progress_at = now_;
  } else if (options_.progress_timeout > Duration::zero() &&
             now_ - g.progress_at >= options_.progress_timeout) {
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  "no progress: %.2f m from the goal, not %.2f m closer in %.1f s (blocked too "
                  "long)",
                  to_goal, options_.progress_distance, options_.progress_timeout.seconds_f());
    return finish(GoalStatus::kAborted, buf);
  }
  if (stale) {
    if (moving_) emit(CmdVel{});
    return;
  }
  const ControlOutput out = controller_.compute(pose);
  if (out.done) return finish(GoalStatus::kSucceeded, "");
  emit(out.cmd);
  if (now_ >= g.next_feedback) {
    emit(NavFeedback{g.goal.id, out.distance_remaining});
    g.next_feedback = now_ + options_.feedback_period;
  }
}

}  // namespace fieldproof::stacks
