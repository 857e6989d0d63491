#include <gtest/gtest.h>

#include <cmath>

#include "fieldproof/stacks/controller.hpp"
#include "stacks/stack_test_util.hpp"

namespace fieldproof::stacks {
namespace {

constexpr double kPi = 3.14159265358979323846;

struct DriveResult {
  Pose2D pose;
  bool done = false;
  int steps = 0;
  double max_v = 0;
  double max_w = 0;
};

// Closed loop: controller at 20 Hz, unicycle integrated in 50 ms steps of integer ns.
DriveResult drive(PurePursuit& pp, Pose2D pose, int max_steps = 4000) {
  DriveResult r;
  for (; r.steps < max_steps; ++r.steps) {
    const ControlOutput out = pp.compute(pose);
    if (out.done) {
      r.done = true;
      break;
    }
    r.max_v = std::max(r.max_v, std::abs(out.cmd.linear));
    r.max_w = std::max(r.max_w, std::abs(out.cmd.angular));
    pose = testing::integrate(pose, out.cmd, milliseconds(50));
  }
  r.pose = pose;
  return r;
}

TEST(PurePursuit, DrivesAUnicycleToTheGoalWithinTolerance) {
  ControllerOptions o;
  PurePursuit pp(o);
  pp.set_path({{0, 0}, {3, 0}, {3, 3}, {6, 4}}, kPi / 2);
  const DriveResult r = drive(pp, {0, 0, 0});
  ASSERT_TRUE(r.done);
  EXPECT_LE(std::hypot(r.pose.x - 6, r.pose.y - 4), o.goal_tolerance_xy);
  EXPECT_LE(std::abs(normalize_angle(r.pose.yaw - kPi / 2)), o.goal_tolerance_yaw);
  EXPECT_LE(r.max_v, o.max_linear + 1e-12);
  EXPECT_LE(r.max_w, o.max_angular + 1e-12);
}

TEST(PurePursuit, RotatesInPlaceWhenThePathIsBehind) {
  PurePursuit pp;
  pp.set_path({{0, 0}, {-3, 0}}, kPi);
  const ControlOutput out = pp.compute({0, 0, 0});
  EXPECT_EQ(out.cmd.linear, 0.0);
  EXPECT_NE(out.cmd.angular, 0.0);
  EXPECT_FALSE(out.done);
}

TEST(PurePursuit, SlowsDownNearTheGoal) {
  ControllerOptions o;
  PurePursuit far(o);
  far.set_path({{0, 0}, {5, 0}}, 0);
  PurePursuit near(o);
  near.set_path({{0, 0}, {0.5, 0}}, 0);
  const double v_far = far.compute({0, 0, 0}).cmd.linear;
  const double v_near = near.compute({0, 0, 0}).cmd.linear;
  EXPECT_DOUBLE_EQ(v_far, o.max_linear);
  EXPECT_LT(v_near, v_far);
  EXPECT_GE(v_near, o.min_linear);
}

TEST(PurePursuit, TurnsToTheGoalYawOnceInPosition) {
  PurePursuit pp;
  pp.set_path({{0, 0}, {1, 0}}, kPi / 2);
  const ControlOutput out = pp.compute({1.0, 0.05, 0.0});
  EXPECT_EQ(out.cmd.linear, 0.0);
  EXPECT_GT(out.cmd.angular, 0.0);
  const ControlOutput done = pp.compute({1.0, 0.05, kPi / 2 - 0.05});
  EXPECT_TRUE(done.done);
  EXPECT_EQ(done.cmd, CmdVel{});
}

TEST(PurePursuit, DistanceRemainingDecreasesAlongTheDrive) {
  PurePursuit pp;
  pp.set_path({{0, 0}, {4, 0}, {4, 2}}, 0);
  Pose2D pose{0, 0, 0};
  double last = 1e9;
  for (int i = 0; i < 300; ++i) {
    const ControlOutput out = pp.compute(pose);
    if (out.done) break;
    EXPECT_LE(out.distance_remaining, last + 1e-9) << i;
    last = out.distance_remaining;
    pose = testing::integrate(pose, out.cmd, milliseconds(50));
  }
  EXPECT_LT(last, 0.5);
}

TEST(PurePursuit, StandsStillWithoutAPathOrWithANanPose) {
  PurePursuit pp;
  EXPECT_EQ(pp.compute({0, 0, 0}).cmd, CmdVel{});
  pp.set_path({{0, 0}, {1, 0}}, 0);
  EXPECT_EQ(pp.compute({std::nan(""), 0, 0}).cmd, CmdVel{});
}

TEST(ControllerOptions, InvalidValuesAreNamed) {
  ControllerOptions o;
  o.max_linear = -1;
  EXPECT_NE(o.validate().message().find("max_linear"), std::string::npos);
  o = {};
  o.min_linear = 2.0;
  EXPECT_NE(o.validate().message().find("min_linear"), std::string::npos);
  EXPECT_TRUE(ControllerOptions{}.validate().ok());
}

TEST(NormalizeAngle, WrapsIntoMinusPiPi) {
  EXPECT_NEAR(normalize_angle(3 * kPi / 2), -kPi / 2, 1e-12);
  EXPECT_NEAR(normalize_angle(-3 * kPi / 2), kPi / 2, 1e-12);
  EXPECT_NEAR(normalize_angle(kPi), kPi, 1e-12);
  EXPECT_EQ(normalize_angle(std::nan("")), 0.0);
}

}  // namespace
}  // namespace fieldproof::stacks
