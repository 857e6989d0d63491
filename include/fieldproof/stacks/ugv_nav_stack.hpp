// The reference navigation stack, transport-independent: it takes the vehicle's pose, scans and
// navigate_to_pose goals, and on each tick of simulated time produces cmd_vel, goal statuses,
// feedback and lifecycle transitions into an outbox. The two hosts (the in-process plugin,
// plugin_api.hpp, and the process fieldproof-ugv-nav) only move messages in and out.
//
// Deterministic: the same calls with the same arguments give the same outbox, bit for bit; the
// only wall-clock input is the injected WallNow of the lifecycle manager's heartbeats. Not thread
// safe: the host serialises the calls.
//
//   auto stack = UgvNavStack::create(options, world.occupancy_grid(0.05), wall_now).value();
//   stack->on_pose(t, {x, y, yaw});
//   stack->on_goal(t, {"g1", {10.0, -1.0, 0.0}});
//   stack->tick(t);                        // at stack->next_tick(), every control_period
//   for (const StackOutput& out : stack->take_outbox()) ...
#pragma once

#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "fieldproof/stacks/controller.hpp"
#include "fieldproof/stacks/costmap.hpp"
#include "fieldproof/stacks/lifecycle.hpp"
#include "fieldproof/stacks/planner.hpp"
#include "fieldproof/stacks/types.hpp"
#include "fieldproof/time/duration.hpp"
#include "fieldproof/util/status.hpp"
#include "fieldproof/world/occupancy_grid.hpp"

namespace fieldproof::stacks {

// Where the stack takes the vehicle's pose from.
enum class PoseSource : uint8_t {
  kOdometry,     // /model/<vehicle>/odometry: wheel odometry, drifting (no localisation)
  kGroundTruth,  // /world/<world>/pose/info: the simulator's pose, as a perfect localisation
};

struct UgvNavOptions {
  std::string vehicle = "ugv1";
  PoseSource pose_source = PoseSource::kOdometry;
  std::string world;  // the world's name, needed for PoseSource::kGroundTruth
  InflationOptions inflation;
  PlannerOptions planner;
  ControllerOptions controller;
  LifecycleOptions lifecycle;
  Duration control_period = milliseconds(50);    // the control loop (20 Hz of simulated time)
  Duration feedback_period = milliseconds(200);  // navigate_to_pose feedback (5 Hz)
  // m of path ahead checked against the latest scan; scan hits farther than this plus the
  // inflation are not used (far hits carry the pose's heading error the most).
  double blocked_check_distance = 2.0;
  // A scan hit within this distance of an obstacle of the map is the map itself, not news
  // (covers the lidar's noise and some odometry drift).
  double scan_match_tolerance = 0.25;
  // No pose for longer than this: stand still until one comes (0: never stale).
  Duration pose_timeout = milliseconds(500);
  int max_replans = 5;                           // failed replans in a row before aborting
  Duration replan_interval = milliseconds(500);  // between replans while blocked
  // The progress checker: a goal whose straight-line distance has not shrunk by
  // progress_distance within progress_timeout is aborted (blocked too long, circling an obstacle
  // the replans keep finding new ways around). Zero timeout: off.
  Duration progress_timeout = seconds(30);
  double progress_distance = 0.25;
  // While /model/<vehicle>/link_state says the link to the ground station is down, stand still
  // with the goal kept (the progress checker waits too) and drive on when it is back.
  bool stop_on_link_loss = true;
  // OK when valid, otherwise kInvalidArgument saying what is wrong with which field.
  [[nodiscard]] Status validate() const;
};

// Parses options from JSON (every field optional; durations as text "50ms", lengths in metres):
//   {"vehicle":"ugv1","pose_source":"odometry"|"ground_truth","world":"depot","inflation":{"robot_radius":0.36,"margin":0.15},
//    "controller":{"max_linear":0.5,...},"planner":{...},"lifecycle":{"heartbeat_timeout":"4s"},
//    "control_period":"50ms","feedback_period":"200ms","blocked_check_distance":2.0,
//    "scan_match_tolerance":0.15,"max_replans":5,"replan_interval":"500ms",
//    "progress_timeout":"30s","progress_distance":0.25,"pose_timeout":"500ms",
//    "stop_on_link_loss":true}
// Unknown keys and wrong types are errors naming the key.
Result<UgvNavOptions> parse_ugv_nav_options(std::string_view json);

// One message of the outbox. stamp is the simulated time the stack produced it at.
struct StackOutput {
  SimTime stamp;
  std::variant<CmdVel, NavStatus, NavFeedback, LifecycleTransition> message;
};

class UgvNavStack {
 public:
  // Builds the stack over the static map; an invalid_argument Status saying why when the options
  // or the grid are invalid. wall_now must be callable for the stack's whole life.
  static Result<std::unique_ptr<UgvNavStack>> create(UgvNavOptions options,
                                                     const world::OccupancyGrid& static_map,
                                                     WallNow wall_now);

  // Inputs, each at the simulated time it was delivered. A pose or scan with NaN/inf fields is
  // ignored (counted in ignored_inputs()).
  void on_pose(SimTime stamp, const Pose2D& pose);
  void on_scan(SimTime stamp, const LaserScan& scan);
  // A navigate_to_pose goal: rejected (with the reason) when the stack is not active, the pose is
  // not finite, the id empty, or the goal lies outside the map or in an obstacle; otherwise
  // accepted, preempting the active goal (which is canceled).
  void on_goal(SimTime stamp, const NavGoal& goal);
  // The vehicle's radio link (fieldproof.msgs.LinkState on /model/<v>/link_state): with
  // stop_on_link_loss, no driving while it is down.
  void on_link(SimTime stamp, bool up);
  bool link_up() const { return link_up_; }
  // Cancels the active goal if its id matches; false otherwise.
  bool cancel(SimTime stamp, const std::string& id);

  // The control loop: lifecycle (autostart, heartbeats, watchdog), planning, blocked check,
  // replanning, control, feedback. Call at next_tick() (later is fine; earlier is a no-op).
  void tick(SimTime now);
  SimTime next_tick() const { return next_tick_; }

  // The wall-clock watchdog alone, for a host that calls it on a wall timer while simulated time
  // stands still (a paused world). Outputs are stamped at the last simulated time seen.
  void check_wall();

  // Aborts the active goal and deactivates the lifecycle (the host is ending).
  void shutdown(SimTime now, const std::string& reason);

  std::vector<StackOutput> take_outbox();

  LifecycleState lifecycle_state() const { return lifecycle_.state(); }
  bool has_goal() const { return goal_.has_value(); }
  // The path being followed (world metres), empty when none.
  const std::vector<Point2>& path() const { return controller_.path(); }
  int replans() const { return replans_total_; }
  uint64_t ignored_inputs() const { return ignored_inputs_; }
  const UgvNavOptions& options() const { return options_; }
  const Costmap& costmap() const { return costmap_; }

 private:
  enum class Phase : uint8_t { kNeedPlan, kFollowing, kBlocked };
  struct ActiveGoal {
    NavGoal goal;
    Phase phase = Phase::kNeedPlan;
    int failed_replans = 0;
    SimTime next_replan;
    SimTime next_feedback;
    SimTime progress_at;  // when best_distance last improved
    double best_distance = std::numeric_limits<double>::infinity();
  };

  UgvNavStack(UgvNavOptions options, Costmap costmap, WallNow wall_now);
  void emit(std::variant<CmdVel, NavStatus, NavFeedback, LifecycleTransition> m);
  void drain_lifecycle();
  void finish(GoalStatus status, const std::string& reason);
  // The obstacle layer: scan hits the map does not explain are marked, cells a ray passes
  // through are cleared (ray tracing), within the range the blocked check needs.
  void update_marks();
  // The static map plus the marked cells; nullopt when nothing is marked.
  std::optional<Costmap> local_map() const;
  bool path_blocked(const Costmap& local) const;
  bool replan(const Costmap& map);

  UgvNavOptions options_;
  Costmap costmap_;
  LifecycleManager lifecycle_;
  PurePursuit controller_;
  SimTime now_ = SimTime::zero();
  SimTime next_tick_ = SimTime::zero();
  std::optional<Pose2D> pose_;
  SimTime pose_stamp_ = SimTime::zero();
  std::optional<LaserScan> scan_;
  bool scan_fresh_ = false;
  std::set<int64_t> marks_;  // cell indices of the obstacle layer (ordered: deterministic)
  std::optional<ActiveGoal> goal_;
  bool moving_ = false;  // the last cmd_vel was not zero
  bool link_up_ = true;   // no link_state yet: no link, nothing to wait for
  int replans_total_ = 0;
  uint64_t ignored_inputs_ = 0;
  std::vector<StackOutput> outbox_;
};

}  // namespace fieldproof::stacks
