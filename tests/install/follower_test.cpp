// The example stack's controller (examples/stacks/cpp_goal_follower/follower.cpp), compiled in
// the tree and driven by hand: the goal protocol and the obstacle behaviour, without a world.
#include "follower.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace goal_follower {
namespace {

using fieldproof::milliseconds;
using fieldproof::seconds;
using fieldproof::msgs::Lifecycle;
using fieldproof::msgs::LifecycleStateCode;
using fieldproof::msgs::NavFeedback;
using fieldproof::msgs::NavGoal;
using fieldproof::msgs::NavStatus;
using fieldproof::msgs::NavStatusCode;

constexpr double kInf = std::numeric_limits<double>::infinity();

// A 360-ray scan with nothing in range, or a wall `distance` ahead spanning +-0.6 m.
Scan scan(double wall_ahead = kInf) {
  Scan s;
  s.angle_min = -M_PI;
  s.angle_step = 2 * M_PI / 360;
  s.range_min = 0.12;
  s.range_max = 12.0;
  for (int i = 0; i < 360; ++i) {
    const double a = s.angle_min + s.angle_step * i;
    double r = kInf;
    if (std::cos(a) > 0) {
      const double along = wall_ahead;
      const double lateral = along * std::tan(a);
      if (std::abs(lateral) <= 0.6) r = along / std::cos(a);
    }
    s.ranges.push_back(r);
  }
  return s;
}

std::vector<NavStatus> statuses(const std::vector<Output>& out) {
  std::vector<NavStatus> s;
  for (const Output& o : out) {
    if (const auto* st = std::get_if<NavStatus>(&o)) s.push_back(*st);
  }
  return s;
}

const CmdVel* last_cmd(const std::vector<Output>& out) {
  const CmdVel* c = nullptr;
  for (const Output& o : out) {
    if (const auto* v = std::get_if<CmdVel>(&o)) c = v;
  }
  return c;
}

SimTime at(int64_t ms) { return SimTime::zero() + milliseconds(ms); }

// A follower that has seen odometry at the origin (facing +x) and an empty scan: active.
GoalFollower ready(Params p = {}) {
  GoalFollower f(p);
  f.start(at(0));
  f.on_pose(at(10), {0, 0, 0});
  f.on_scan(at(20), scan());
  f.take_outputs();
  return f;
}

TEST(GoalFollower, IsInactiveUntilOdometryAndAScanArriveThenActive) {
  GoalFollower f(Params{});
  f.start(at(0));
  f.on_pose(at(10), {0, 0, 0});
  auto out = f.take_outputs();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(std::get<Lifecycle>(out[0]).state, LifecycleStateCode::kInactive);
  EXPECT_EQ(std::get<Lifecycle>(out[0]).node, "goal_follower");
  f.on_scan(at(20), scan());
  out = f.take_outputs();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(std::get<Lifecycle>(out[0]).state, LifecycleStateCode::kActive);
}

TEST(GoalFollower, AcceptsAGoalAndDrivesTowardsIt) {
  GoalFollower f = ready();
  f.on_goal(at(100), {"g1", 5, 0, 0});
  const auto s = statuses(f.take_outputs());
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].id, "g1");
  EXPECT_EQ(s[0].status, NavStatusCode::kAccepted);
  f.tick(at(150));
  const auto out = f.take_outputs();
  const CmdVel* c = last_cmd(out);
  ASSERT_NE(c, nullptr);
  EXPECT_DOUBLE_EQ(c->linear, 0.8);
  EXPECT_DOUBLE_EQ(c->angular, 0.0);
  bool feedback = false;
  for (const Output& o : out) feedback |= std::holds_alternative<NavFeedback>(o);
  EXPECT_TRUE(feedback);
}

TEST(GoalFollower, RejectsAGoalBeyondMaxGoalDistanceOrNotFinite) {
  GoalFollower f = ready();
  f.on_goal(at(100), {"far", 80, 0, 0});
  f.on_goal(at(100), {"nan", std::nan(""), 0, 0});
  const auto s = statuses(f.take_outputs());
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].status, NavStatusCode::kRejected);
  EXPECT_NE(s[0].reason.find("max_goal_distance"), std::string::npos) << s[0].reason;
  EXPECT_EQ(s[1].status, NavStatusCode::kRejected);
  f.tick(at(150));
  EXPECT_EQ(last_cmd(f.take_outputs()), nullptr) << "a rejected goal moved the vehicle";
}

TEST(GoalFollower, ANewGoalPreemptsTheOldOneWhichIsCanceled) {
  GoalFollower f = ready();
  f.on_goal(at(100), {"g1", 5, 0, 0});
  f.on_goal(at(200), {"g2", 0, 5, 0});
  const auto s = statuses(f.take_outputs());
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[1].id, "g1");
  EXPECT_EQ(s[1].status, NavStatusCode::kCanceled);
  EXPECT_NE(s[1].reason.find("g2"), std::string::npos);
  EXPECT_EQ(s[2].id, "g2");
  EXPECT_EQ(s[2].status, NavStatusCode::kAccepted);
  f.tick(at(250));
  const CmdVel* c = last_cmd(f.take_outputs());
  ASSERT_NE(c, nullptr);
  EXPECT_GT(c->angular, 0.0) << "turns left towards g2";
}

TEST(GoalFollower, SucceedsWithinTheToleranceAndStops) {
  GoalFollower f = ready();
  f.on_goal(at(100), {"g1", 5, 0, 0});
  f.tick(at(150));
  f.on_pose(at(160), {4.8, 0.1, 0});
  f.take_outputs();
  f.tick(at(200));
  const auto out = f.take_outputs();
  const auto s = statuses(out);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].status, NavStatusCode::kSucceeded);
  const CmdVel* c = last_cmd(out);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->linear, 0.0);
  EXPECT_EQ(c->angular, 0.0);
}

TEST(GoalFollower, GoesRoundAnObstacleAheadWhenAvoiding) {
  GoalFollower f = ready();
  f.on_goal(at(100), {"g1", 10, 0, 0});
  f.on_scan(at(120), scan(1.2));
  f.tick(at(150));
  const CmdVel* c = last_cmd(f.take_outputs());
  ASSERT_NE(c, nullptr);
  EXPECT_NE(c->angular, 0.0) << "steers off the blocked line";
}

TEST(GoalFollower, WithoutAvoidanceStopsShortOfAnObstacleThenAborts) {
  Params p;
  p.avoid = false;
  p.blocked_timeout_s = 2;
  GoalFollower f = ready(p);
  f.on_goal(at(100), {"g1", 10, 0, 0});
  f.on_scan(at(120), scan(0.65));
  f.take_outputs();
  f.tick(at(150));
  auto out = f.take_outputs();
  EXPECT_TRUE(statuses(out).empty());
  for (int64_t t = 200; t < 2150; t += 50) {
    f.tick(at(t));
    out = f.take_outputs();
    EXPECT_TRUE(statuses(out).empty()) << "aborted early, at " << t << " ms";
    if (const CmdVel* c = last_cmd(out)) {
      EXPECT_EQ(c->linear, 0.0) << "moved at " << t << " ms";
    }
  }
  f.tick(at(2200));
  const auto s = statuses(f.take_outputs());
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].status, NavStatusCode::kAborted);
  EXPECT_NE(s[0].reason.find("blocked by an obstacle"), std::string::npos) << s[0].reason;
}

TEST(GoalFollower, ShutdownCancelsTheGoalAndReportsFinalized) {
  GoalFollower f = ready();
  f.on_goal(at(100), {"g1", 5, 0, 0});
  f.tick(at(150));
  f.take_outputs();
  f.shutdown(at(200), "stopped");
  const auto out = f.take_outputs();
  const auto s = statuses(out);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].status, NavStatusCode::kCanceled);
  EXPECT_EQ(std::get<Lifecycle>(out.back()).state, LifecycleStateCode::kFinalized);
}

TEST(GoalFollowerParams, ReadsKnownKeysAndRefusesUnknownOnesAndBadValues) {
  std::string error;
  const auto p = parse_params(R"({"max_linear": 0.5, "avoid": false})", &error);
  ASSERT_TRUE(p) << error;
  EXPECT_DOUBLE_EQ(p->max_linear, 0.5);
  EXPECT_FALSE(p->avoid);
  EXPECT_FALSE(parse_params(R"({"max_speed": 1})", &error));
  EXPECT_NE(error.find("parameters.max_speed: unknown parameter"), std::string::npos) << error;
  EXPECT_FALSE(parse_params(R"({"max_linear": -1})", &error));
  EXPECT_NE(error.find("parameters.max_linear: expected a number > 0"), std::string::npos);
  EXPECT_FALSE(parse_params("{", &error));
  EXPECT_NE(error.find("not valid JSON"), std::string::npos);
}

}  // namespace
}  // namespace goal_follower
