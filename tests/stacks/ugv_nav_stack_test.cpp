#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <sstream>

#include "fieldproof/stacks/ugv_nav_stack.hpp"
#include "stacks/stack_test_util.hpp"

namespace fieldproof::stacks {
namespace {

using testing::fill_rect;
using testing::free_grid;

// A 12 x 8 m room with walls, 0.1 m cells.
world::OccupancyGrid room() {
  auto g = free_grid(120, 80, 0.1);
  testing::add_border(g);
  return g;
}

// Closed loop of the stack with a unicycle: physics at 10 ms, ground-truth pose every step,
// scans ray-marched over `truth` (which may hold obstacles the stack's map does not) at 10 Hz,
// the stack ticked when due, the wall clock moving with simulated time.
struct Harness {
  world::OccupancyGrid truth;
  testing::FakeWall wall;
  std::unique_ptr<UgvNavStack> stack;
  Pose2D pose;
  SimTime t = SimTime::zero();
  CmdVel cmd;
  std::vector<StackOutput> log;
  int zero_cmds_while_goal = 0;

  Harness(const world::OccupancyGrid& map, world::OccupancyGrid truth_grid, Pose2D start,
          UgvNavOptions options = {})
      : truth(std::move(truth_grid)), pose(start) {
    auto created = UgvNavStack::create(options, map, wall.fn());
    EXPECT_TRUE(created.ok()) << created.status().message();
    if (created.ok()) stack = std::move(created).value();
    step_for(milliseconds(100));  // bring-up: the lifecycle activates on the first tick
  }

  void collect() {
    for (StackOutput& o : stack->take_outbox()) {
      if (const CmdVel* c = std::get_if<CmdVel>(&o.message)) cmd = *c;
      log.push_back(std::move(o));
    }
  }

  void goal(const std::string& id, Pose2D p) {
    stack->on_goal(t, {id, p});
    collect();
  }

  // Runs until `end` or until `stop` is true.
  void step_for(Duration d, const std::function<bool()>& stop = {}) {
    const SimTime end = t + d;
    while (t < end) {
      stack->on_pose(t, pose);
      if (t.ns() % 100'000'000 == 0) stack->on_scan(t, testing::scan_grid(truth, pose));
      if (t >= stack->next_tick()) stack->tick(t);
      collect();
      if (stop && stop()) return;
      pose = testing::integrate(pose, cmd, milliseconds(10));
      t += milliseconds(10);
      wall.advance(milliseconds(10));
    }
  }

  std::vector<NavStatus> statuses() const {
    std::vector<NavStatus> out;
    for (const auto& o : log) {
      if (const auto* s = std::get_if<NavStatus>(&o.message)) out.push_back(*s);
    }
    return out;
  }
  std::optional<NavStatus> final_status(const std::string& id) const {
    std::optional<NavStatus> last;
    for (const auto& s : statuses()) {
      if (s.id == id && s.status != GoalStatus::kAccepted) last = s;
    }
    return last;
  }
  std::function<bool()> until_done(const std::string& id) const {
    return [this, id] { return final_status(id).has_value(); };
  }
};

TEST(UgvNavStack, ActivatesItsLifecycleOnTheFirstTick) {
  Harness h(room(), room(), {1.0, 1.0, 0.0});
  EXPECT_EQ(h.stack->lifecycle_state(), LifecycleState::kActive);
  std::vector<std::string> seen;
  for (const auto& o : h.log) {
    if (const auto* l = std::get_if<LifecycleTransition>(&o.message)) {
      seen.push_back(l->node + ":" + std::string(to_string(l->state)));
    }
  }
  ASSERT_EQ(seen.size(), 6u);
  EXPECT_EQ(seen[0], "planner_server:inactive");
  EXPECT_EQ(seen[5], "bt_navigator:active");
}

TEST(UgvNavStack, ReachesAGoalAroundAMappedObstacle) {
  auto map = room();
  fill_rect(map, 5.5, 0.0, 6.5, 5.0);
  Harness h(map, map, {2.0, 2.0, 0.0});
  h.goal("g1", {10.0, 2.0, 0.0});
  h.step_for(seconds(120), h.until_done("g1"));
  const auto s = h.final_status("g1");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->status, GoalStatus::kSucceeded) << s->reason;
  EXPECT_LT(std::hypot(h.pose.x - 10.0, h.pose.y - 2.0), 0.15);
  EXPECT_EQ(h.cmd, CmdVel{});
  EXPECT_EQ(h.statuses().front().status, GoalStatus::kAccepted);
}

TEST(UgvNavStack, BlockedPathStopsAndReplansAroundTheNewObstacle) {
  // The map is an empty room; the world has a box across the straight line to the goal.
  auto truth = room();
  fill_rect(truth, 6.0, 1.0, 6.6, 5.0);
  Harness h(room(), truth, {2.0, 3.0, 0.0});
  h.goal("g1", {10.0, 3.0, 0.0});
  bool stopped_before_replan = false;
  int replans_seen = 0;
  double closest = 1e9;
  h.step_for(seconds(120), [&] {
    if (h.stack->replans() > replans_seen) {
      replans_seen = h.stack->replans();
      stopped_before_replan = h.cmd == CmdVel{};
    }
    // Distance from the vehicle's centre to the box.
    const double dx = std::max({6.0 - h.pose.x, 0.0, h.pose.x - 6.6});
    const double dy = std::max({1.0 - h.pose.y, 0.0, h.pose.y - 5.0});
    closest = std::min(closest, std::hypot(dx, dy));
    return h.final_status("g1").has_value();
  });
  EXPECT_GE(replans_seen, 1);
  EXPECT_TRUE(stopped_before_replan);
  const auto s = h.final_status("g1");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->status, GoalStatus::kSucceeded) << s->reason;
  EXPECT_GT(closest, 0.25);  // the chassis half-width is 0.2 m
}

TEST(UgvNavStack, PathBlockedForGoodIsAbortedAfterTheReplans) {
  // A wall the map does not know closes the room from side to side.
  auto truth = room();
  fill_rect(truth, 6.0, 0.0, 6.4, 8.0);
  UgvNavOptions o;
  o.max_replans = 3;
  Harness h(room(), truth, {2.0, 3.0, 0.0}, o);
  h.goal("g1", {10.0, 3.0, 0.0});
  h.step_for(seconds(120), h.until_done("g1"));
  const auto s = h.final_status("g1");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->status, GoalStatus::kAborted);
  EXPECT_NE(s->reason.find("path blocked"), std::string::npos) << s->reason;
  EXPECT_NE(s->reason.find("3 replans"), std::string::npos) << s->reason;
  EXPECT_LT(h.pose.x, 6.0 - 0.3);
  EXPECT_EQ(h.cmd, CmdVel{});
}

TEST(UgvNavStack, UnreachableGoalIsAcceptedThenAborted) {
  auto map = room();
  fill_rect(map, 6.0, 0.0, 6.4, 8.0);  // the map itself is cut in two
  Harness h(map, map, {2.0, 3.0, 0.0});
  h.goal("g1", {10.0, 3.0, 0.0});
  h.step_for(seconds(2), h.until_done("g1"));
  const auto st = h.statuses();
  ASSERT_EQ(st.size(), 2u);
  EXPECT_EQ(st[0].status, GoalStatus::kAccepted);
  EXPECT_EQ(st[1].status, GoalStatus::kAborted);
  EXPECT_NE(st[1].reason.find("no path"), std::string::npos) << st[1].reason;
}

TEST(UgvNavStack, GoalInsideAnObstacleIsRejectedWithAReason) {
  auto map = room();
  fill_rect(map, 5.0, 3.0, 6.0, 4.0);
  Harness h(map, map, {2.0, 2.0, 0.0});
  h.goal("g1", {5.5, 3.5, 0.0});
  const auto st = h.statuses();
  ASSERT_EQ(st.size(), 1u);
  EXPECT_EQ(st[0].status, GoalStatus::kRejected);
  EXPECT_NE(st[0].reason.find("inside an obstacle"), std::string::npos) << st[0].reason;
  h.goal("g2", {6.2, 3.5, 0.0});  // beside it, closer than the robot's radius
  EXPECT_EQ(h.statuses().back().status, GoalStatus::kRejected);
  EXPECT_NE(h.statuses().back().reason.find("radius"), std::string::npos);
  EXPECT_FALSE(h.stack->has_goal());
}

TEST(UgvNavStack, GoalOutsideTheMapIsRejectedWithAReason) {
  Harness h(room(), room(), {2.0, 2.0, 0.0});
  h.goal("g1", {30.0, 2.0, 0.0});
  const auto st = h.statuses();
  ASSERT_EQ(st.size(), 1u);
  EXPECT_EQ(st[0].status, GoalStatus::kRejected);
  EXPECT_NE(st[0].reason.find("outside the map [0.00, 12.00] x [0.00, 8.00]"), std::string::npos)
      << st[0].reason;
}

TEST(UgvNavStack, MalformedGoalsAreRejected) {
  Harness h(room(), room(), {2.0, 2.0, 0.0});
  h.goal("", {3.0, 2.0, 0.0});
  h.goal("g1", {std::nan(""), 2.0, 0.0});
  h.goal("g2", {3.0, 2.0, std::numeric_limits<double>::infinity()});
  const auto st = h.statuses();
  ASSERT_EQ(st.size(), 3u);
  for (const auto& s : st) EXPECT_EQ(s.status, GoalStatus::kRejected);
  EXPECT_NE(st[0].reason.find("no id"), std::string::npos);
  EXPECT_NE(st[1].reason.find("not finite"), std::string::npos);
}

TEST(UgvNavStack, NewGoalPreemptsAndCancelsTheOldOne) {
  Harness h(room(), room(), {2.0, 2.0, 0.0});
  h.goal("g1", {10.0, 2.0, 0.0});
  h.step_for(seconds(2));
  h.goal("g2", {2.0, 6.0, 0.0});
  auto st = h.statuses();
  ASSERT_EQ(st.size(), 3u);
  EXPECT_EQ(st[1].id, "g1");
  EXPECT_EQ(st[1].status, GoalStatus::kCanceled);
  EXPECT_NE(st[1].reason.find("preempted by goal g2"), std::string::npos);
  EXPECT_EQ(st[2].id, "g2");
  EXPECT_EQ(st[2].status, GoalStatus::kAccepted);
  h.step_for(seconds(60), h.until_done("g2"));
  ASSERT_TRUE(h.final_status("g2").has_value());
  EXPECT_EQ(h.final_status("g2")->status, GoalStatus::kSucceeded);
}

TEST(UgvNavStack, CancelStopsTheVehicle) {
  Harness h(room(), room(), {2.0, 2.0, 0.0});
  h.goal("g1", {10.0, 2.0, 0.0});
  h.step_for(seconds(2));
  EXPECT_FALSE(h.stack->cancel(h.t, "other"));
  EXPECT_TRUE(h.stack->cancel(h.t, "g1"));
  h.collect();
  EXPECT_EQ(h.final_status("g1")->status, GoalStatus::kCanceled);
  EXPECT_EQ(h.cmd, CmdVel{});
}

TEST(UgvNavStack, StandsStillWhileItsLinkIsDownAndDrivesOnWhenItReturns) {
  UgvNavOptions o;
  o.progress_timeout = seconds(5);  // shorter than the outage: it must not abort the goal
  Harness h(room(), room(), {2.0, 2.0, 0.0}, o);
  h.goal("g1", {10.0, 2.0, 0.0});
  h.step_for(seconds(2));
  EXPECT_NE(h.cmd, CmdVel{});
  h.stack->on_link(h.t, false);
  h.collect();
  EXPECT_EQ(h.cmd, CmdVel{});  // at once, not at the next tick
  const Pose2D held = h.pose;
  h.step_for(seconds(8));
  EXPECT_EQ(h.cmd, CmdVel{});
  EXPECT_LT(std::hypot(h.pose.x - held.x, h.pose.y - held.y), 0.05);
  EXPECT_FALSE(h.final_status("g1").has_value());
  h.stack->on_link(h.t, true);
  h.step_for(seconds(60), h.until_done("g1"));
  ASSERT_TRUE(h.final_status("g1").has_value());
  EXPECT_EQ(h.final_status("g1")->status, GoalStatus::kSucceeded) << h.final_status("g1")->reason;
}

TEST(UgvNavStack, IgnoresLinkLossWhenToldTo) {
  UgvNavOptions o;
  o.stop_on_link_loss = false;
  Harness h(room(), room(), {2.0, 2.0, 0.0}, o);
  h.goal("g1", {10.0, 2.0, 0.0});
  h.stack->on_link(h.t, false);
  h.step_for(seconds(60), h.until_done("g1"));
  ASSERT_TRUE(h.final_status("g1").has_value());
  EXPECT_EQ(h.final_status("g1")->status, GoalStatus::kSucceeded);
}

TEST(UgvNavStack, FeedbackDistanceDecreasesAtAFewHertz) {
  Harness h(room(), room(), {2.0, 2.0, 0.0});
  h.goal("g1", {10.0, 6.0, 0.0});
  h.step_for(seconds(60), h.until_done("g1"));
  std::vector<std::pair<SimTime, double>> fb;
  for (const auto& o : h.log) {
    if (const auto* f = std::get_if<NavFeedback>(&o.message))
      fb.emplace_back(o.stamp, f->distance_remaining);
  }
  ASSERT_GT(fb.size(), 10u);
  EXPECT_NEAR(fb.front().second, std::hypot(8.0, 4.0), 0.5);
  for (size_t i = 1; i < fb.size(); ++i) {
    EXPECT_LE(fb[i].second, fb[i - 1].second + 1e-9) << i;
    EXPECT_EQ((fb[i].first - fb[i - 1].first).ns(), 200'000'000) << i;  // 5 Hz
  }
  EXPECT_LT(fb.back().second, 0.5);
}

TEST(UgvNavStack, FourSecondsOfWallSilenceGoInactiveAndAbortTheGoal) {
  Harness h(room(), room(), {2.0, 2.0, 0.0});
  h.goal("g1", {10.0, 6.0, 0.0});
  h.step_for(seconds(2));
  h.stack->on_pose(h.t, h.pose);  // the last message before the pause
  const SimTime stopped_at = h.t;
  // The world is paused: simulated time stands still, the wall clock does not. The last
  // heartbeat was at most one control period (50 ms) of wall time ago.
  h.wall.advance(milliseconds(3940));
  h.stack->check_wall();
  h.collect();
  EXPECT_EQ(h.stack->lifecycle_state(), LifecycleState::kActive);
  h.wall.advance(milliseconds(60));
  h.stack->check_wall();
  h.collect();
  EXPECT_EQ(h.stack->lifecycle_state(), LifecycleState::kInactive);
  const auto s = h.final_status("g1");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->status, GoalStatus::kAborted);
  EXPECT_NE(s->reason.find("lifecycle went inactive"), std::string::npos) << s->reason;
  EXPECT_NE(s->reason.find("silent for 4.0"), std::string::npos) << s->reason;
  EXPECT_EQ(h.cmd, CmdVel{});
  // Everything is stamped at the simulated time the world stopped at.
  EXPECT_EQ(h.log.back().stamp, stopped_at);
}

TEST(UgvNavStack, FirstTickAfterALongPauseFindsTheSilenceToo) {
  Harness h(room(), room(), {2.0, 2.0, 0.0});
  h.goal("g1", {10.0, 6.0, 0.0});
  h.step_for(seconds(2));
  h.wall.advance(seconds(10));  // nobody checked during the pause
  h.step_for(milliseconds(100));
  const auto s = h.final_status("g1");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->status, GoalStatus::kAborted);
  // The servers run again, so the manager reactivates; a new goal is accepted.
  EXPECT_EQ(h.stack->lifecycle_state(), LifecycleState::kActive);
  h.goal("g2", {3.0, 2.0, 0.0});
  EXPECT_EQ(h.statuses().back().status, GoalStatus::kAccepted);
}

TEST(UgvNavStack, NoProgressAbortsTheGoalAsBlockedTooLong) {
  testing::FakeWall wall;
  UgvNavOptions o;
  o.progress_timeout = seconds(3);
  auto created = UgvNavStack::create(o, room(), wall.fn());
  ASSERT_TRUE(created.ok()) << created.status().message();
  auto stack = std::move(created).value();
  stack->tick(SimTime::zero());
  stack->on_pose(SimTime::zero(), {2.0, 2.0, 0.0});
  stack->on_goal(SimTime::zero(), {"g1", {8.0, 2.0, 0.0}});
  // The wheels spin, the vehicle does not move (stuck): the pose never changes.
  std::optional<NavStatus> final_status;
  SimTime final_at;
  for (SimTime t = SimTime::zero(); t < SimTime::from_ns(10'000'000'000) && !final_status;
       t += milliseconds(50)) {
    stack->on_pose(t, {2.0, 2.0, 0.0});
    stack->tick(t);
    wall.advance(milliseconds(50));
    for (const auto& out : stack->take_outbox()) {
      const auto* st = std::get_if<NavStatus>(&out.message);
      if (st && st->status != GoalStatus::kAccepted) {
        final_status = *st;
        final_at = out.stamp;
      }
    }
  }
  ASSERT_TRUE(final_status.has_value());
  EXPECT_EQ(final_status->status, GoalStatus::kAborted);
  EXPECT_NE(final_status->reason.find("blocked too long"), std::string::npos)
      << final_status->reason;
  // The first tick with the goal (50 ms) measured the distance; 3 s later it gives up.
  EXPECT_EQ(final_at.ns(), 3'050'000'000);
}

TEST(UgvNavStack, StandsStillWhenThePoseStopsComing) {
  Harness h(room(), room(), {2.0, 2.0, 0.0});
  h.goal("g1", {10.0, 2.0, 0.0});
  h.step_for(seconds(2));
  ASSERT_GT(h.cmd.linear, 0.1);
  // The odometry stops: after pose_timeout (500 ms) the stack commands a stop and waits.
  const SimTime last_pose = h.t;
  h.stack->on_pose(h.t, h.pose);
  for (SimTime t = h.t; t <= last_pose + seconds(1); t += milliseconds(50)) {
    h.stack->tick(t);
    h.collect();
    if (t - last_pose <= milliseconds(500)) {
      EXPECT_GT(h.cmd.linear, 0.1) << t.ns();
    }
  }
  EXPECT_EQ(h.cmd, CmdVel{});
  EXPECT_TRUE(h.stack->has_goal());
  // The pose comes back: it drives on.
  h.t = last_pose + seconds(1);
  h.step_for(seconds(1));
  EXPECT_GT(h.cmd.linear, 0.1);
}

TEST(UgvNavStack, GoalIsRejectedWhileInactive) {
  UgvNavOptions o;
  o.lifecycle.reactivate = false;
  Harness h(room(), room(), {2.0, 2.0, 0.0}, o);
  h.wall.advance(seconds(5));
  h.stack->check_wall();
  h.goal("g1", {3.0, 2.0, 0.0});
  EXPECT_EQ(h.statuses().back().status, GoalStatus::kRejected);
  EXPECT_NE(h.statuses().back().reason.find("not active (lifecycle state inactive)"),
            std::string::npos);
}

std::string serialise(const std::vector<StackOutput>& log) {
  std::ostringstream os;
  os.precision(17);
  for (const auto& o : log) {
    os << o.stamp.ns() << ' ';
    std::visit(
        [&](const auto& m) {
          using T = std::decay_t<decltype(m)>;
          if constexpr (std::is_same_v<T, CmdVel>) {
            os << "cmd " << m.linear << ' ' << m.angular;
          } else if constexpr (std::is_same_v<T, NavStatus>) {
            os << "status " << m.id << ' ' << to_string(m.status) << ' ' << m.reason;
          } else if constexpr (std::is_same_v<T, NavFeedback>) {
            os << "feedback " << m.id << ' ' << m.distance_remaining;
          } else {
            os << "lifecycle " << m.node << ' ' << to_string(m.state);
          }
        },
        o.message);
    os << '\n';
  }
  return os.str();
}

TEST(UgvNavStack, SameInputsGiveAnIdenticalCommandStream) {
  auto truth = room();
  fill_rect(truth, 6.0, 1.0, 6.6, 5.0);
  const auto run = [&] {
    Harness h(room(), truth, {2.0, 3.0, 0.1});
    h.goal("g1", {10.0, 3.0, 1.0});
    h.step_for(seconds(60), h.until_done("g1"));
    return serialise(h.log);
  };
  const std::string a = run();
  EXPECT_GT(a.size(), 10'000u);
  EXPECT_EQ(run(), a);
  EXPECT_EQ(run(), a);
}

TEST(UgvNavStack, NonFiniteInputsAreIgnoredAndCounted) {
  Harness h(room(), room(), {2.0, 2.0, 0.0});
  h.stack->on_pose(h.t, {std::nan(""), 0.0, 0.0});
  LaserScan bad;
  bad.angle_increment = std::numeric_limits<double>::infinity();
  h.stack->on_scan(h.t, bad);
  EXPECT_EQ(h.stack->ignored_inputs(), 2u);
}

TEST(UgvNavStack, CreateRefusesBadOptionsAndGrids) {
  testing::FakeWall wall;
  UgvNavOptions o;
  o.control_period = Duration::zero();
  auto bad = UgvNavStack::create(o, room(), wall.fn());
  EXPECT_FALSE(bad.ok());
  std::string error = bad.status().message();
  EXPECT_NE(error.find("control_period"), std::string::npos) << error;
  auto g = room();
  g.cells.clear();
  bad = UgvNavStack::create({}, g, wall.fn());
  EXPECT_FALSE(bad.ok());
  error = bad.status().message();
  EXPECT_NE(error.find("occupancy grid"), std::string::npos) << error;
  bad = UgvNavStack::create({}, room(), WallNow{});
  EXPECT_FALSE(bad.ok());
  error = bad.status().message();
  EXPECT_NE(error.find("wall clock"), std::string::npos) << error;
}

TEST(UgvNavOptionsJson, ParsesNestedFieldsAndDurations) {
  const auto o = parse_ugv_nav_options(
      R"({"vehicle":"ugv7","controller":{"max_linear":0.8},"lifecycle":{"heartbeat_timeout":"2.5s"},
          "control_period":"20ms","inflation":{"robot_radius":0.3}})");
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o.value().vehicle, "ugv7");
  EXPECT_DOUBLE_EQ(o.value().controller.max_linear, 0.8);
  EXPECT_EQ(o.value().lifecycle.heartbeat_timeout.ns(), 2'500'000'000);
  EXPECT_EQ(o.value().control_period.ns(), 20'000'000);
  EXPECT_DOUBLE_EQ(o.value().inflation.robot_radius, 0.3);
  EXPECT_TRUE(parse_ugv_nav_options("").ok());
}

TEST(UgvNavOptionsJson, RefusesUnknownKeysWrongTypesAndBadValues) {
  auto o = parse_ugv_nav_options(R"({"controller":{"max_speed":1}})");
  ASSERT_FALSE(o.ok());
  EXPECT_NE(o.status().message().find("unknown key 'controller.max_speed'"), std::string::npos)
      << o.status().message();
  o = parse_ugv_nav_options(R"({"max_replans":"five"})");
  ASSERT_FALSE(o.ok());
  EXPECT_NE(o.status().message().find("'max_replans' must be an integer"), std::string::npos)
      << o.status().message();
  o = parse_ugv_nav_options(R"({"control_period":"fast"})");
  ASSERT_FALSE(o.ok());
  EXPECT_NE(o.status().message().find("control_period"), std::string::npos) << o.status().message();
  o = parse_ugv_nav_options(R"({"controller":{"max_linear":-1}})");
  ASSERT_FALSE(o.ok());
  EXPECT_NE(o.status().message().find("max_linear"), std::string::npos) << o.status().message();
  EXPECT_FALSE(parse_ugv_nav_options("{not json").ok());
  EXPECT_FALSE(parse_ugv_nav_options("[1,2]").ok());
}

}  // namespace
}  // namespace fieldproof::stacks
