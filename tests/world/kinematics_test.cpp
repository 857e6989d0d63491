#include <gtest/gtest.h>

#include <cmath>

#include "fieldproof/msgs/ign.hpp"
#include "fieldproof/world/world.hpp"
#include "world_test_util.hpp"

namespace fieldproof::world {
namespace {

using testing::ideal_ugv;

std::unique_ptr<World> empty_world(WorldOptions o = {}) {
  return World::empty("flat", milliseconds(1), std::move(o));
}

// The drive integrates each step along the exact arc of constant (v, w), so with no acceleration
// limit the only error against the closed form is floating-point rounding: about 1e-16 relative
// per step, 1e4 steps, positions of a few metres -> well below 1e-9 m.
TEST(Kinematics, ConstantTwistEndsOnTheClosedFormArc) {
  auto w = empty_world();
  ASSERT_TRUE(w->spawn_vehicle("ugv1", Pose2D{0, 0, 0}, ideal_ugv()).ok());
  const double v = 0.5, om = 0.3, t = 10.0;
  ASSERT_TRUE(w->set_cmd_vel("ugv1", {v, om}).ok());
  ASSERT_EQ(w->step_n(10'000), 10'000);
  const auto s = w->vehicle("ugv1");
  ASSERT_TRUE(s);
  EXPECT_NEAR(s->pose.x, v / om * std::sin(om * t), 1e-9);
  EXPECT_NEAR(s->pose.y, v / om * (1 - std::cos(om * t)), 1e-9);
  EXPECT_NEAR(s->pose.yaw, om * t - 2 * M_PI * std::round(om * t / (2 * M_PI)), 1e-9);
}

TEST(Kinematics, StraightLineFromARotatedStart) {
  auto w = empty_world();
  ASSERT_TRUE(w->spawn_vehicle("ugv1", Pose2D{1, 2, M_PI / 4}, ideal_ugv()).ok());
  ASSERT_TRUE(w->set_cmd_vel("ugv1", {0.8, 0.0}).ok());
  w->step_n(2'500);
  const auto s = w->vehicle("ugv1");
  EXPECT_NEAR(s->pose.x, 1 + 2.0 * std::cos(M_PI / 4), 1e-9);
  EXPECT_NEAR(s->pose.y, 2 + 2.0 * std::sin(M_PI / 4), 1e-9);
}

TEST(Kinematics, AccelerationLimitRampsTheVelocity) {
  auto w = empty_world();
  UgvParams p = ideal_ugv();
  p.max_linear_accel = 1.0;
  ASSERT_TRUE(w->spawn_vehicle("ugv1", Pose2D{}, p).ok());
  ASSERT_TRUE(w->set_cmd_vel("ugv1", {1.0, 0.0}).ok());
  w->step_n(500);
  auto s = w->vehicle("ugv1");
  EXPECT_NEAR(s->velocity.linear_x, 0.5, 1e-9);
  // Discrete ramp: sum over k = 1..500 of (k * 1e-3) * 1e-3 = 0.12525 m (continuous: 0.125).
  EXPECT_NEAR(s->pose.x, 0.12525, 1e-9);
}

TEST(Kinematics, AngularAccelerationLimitRampsTheTurnRate) {
  auto w = empty_world();
  UgvParams p = ideal_ugv();
  p.max_angular_accel = 2.0;
  ASSERT_TRUE(w->spawn_vehicle("ugv1", Pose2D{}, p).ok());
  ASSERT_TRUE(w->set_cmd_vel("ugv1", {0.0, 1.0}).ok());
  w->step_n(250);
  EXPECT_NEAR(w->vehicle("ugv1")->velocity.angular_z, 0.5, 1e-9);
}

TEST(Kinematics, VelocityLimitsClampCommands) {
  auto w = empty_world();
  ASSERT_TRUE(w->spawn_vehicle("ugv1", Pose2D{}, ideal_ugv()).ok());
  ASSERT_TRUE(w->set_cmd_vel("ugv1", {5.0, -9.0}).ok());
  w->step_n(10);
  const auto s = w->vehicle("ugv1");
  EXPECT_EQ(s->velocity.linear_x, UgvParams{}.max_linear);
  EXPECT_EQ(s->velocity.angular_z, -UgvParams{}.max_angular);
}

TEST(Commands, NanCommandIsRefusedAndNeverEntersTheState) {
  std::vector<std::string> warnings;
  WorldOptions o;
  o.on_warning = [&](const std::string& m) { warnings.push_back(m); };
  auto w = empty_world(std::move(o));
  ASSERT_TRUE(w->spawn_vehicle("ugv1", Pose2D{}, ideal_ugv()).ok());
  ASSERT_TRUE(w->set_cmd_vel("ugv1", {0.3, 0.0}).ok());
  const Status s = w->set_cmd_vel("ugv1", {std::nan(""), 0.0});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("nan"), std::string::npos) << s.message();
  EXPECT_FALSE(w->set_cmd_vel("ugv1", {0.0, std::numeric_limits<double>::infinity()}).ok());
  EXPECT_EQ(warnings.size(), 2u);
  EXPECT_EQ(w->warning_count(), 2u);
  w->step_n(100);
  const auto st = w->vehicle("ugv1");
  EXPECT_EQ(st->command.linear_x, 0.3);  // the last good command stays
  EXPECT_TRUE(std::isfinite(st->pose.x) && std::isfinite(st->pose.y));
}

TEST(Commands, NanCommandOverTheBusIsRefused) {
  auto w = empty_world();
  ASSERT_TRUE(w->spawn_vehicle("ugv1", Pose2D{}, ideal_ugv()).ok());
  ignition::msgs::Twist t;
  t.mutable_linear()->set_x(std::nan(""));
  EXPECT_FALSE(w->handle_message("/model/ugv1/cmd_vel", msgs::kTwist, msgs::serialize(t)).ok());
  t.mutable_linear()->set_x(0.4);
  EXPECT_TRUE(w->handle_message("/model/ugv1/cmd_vel", msgs::kTwist, msgs::serialize(t)).ok());
  EXPECT_EQ(w->vehicle("ugv1")->command.linear_x, 0.4);
}

TEST(Commands, CommandForAnUnknownVehicleIsAnError) {
  auto w = empty_world();
  EXPECT_FALSE(w->set_cmd_vel("ghost", {0.1, 0}).ok());
  EXPECT_FALSE(w->handle_message("/model/ghost/teleport", msgs::kTwist, "").ok());
  EXPECT_FALSE(w->handle_message("/model/ghost/cmd_vel", msgs::kTwist, "\xff\xff").ok());
}

TEST(Spawn, InsideAnObstacleIsRefused) {
  LoadResult r = World::load(testing::depot_path());
  ASSERT_TRUE(r.world);
  const Status s = r.world->spawn_vehicle("ugv1", Pose2D{2.0, -0.5, 0.0});  // the crate
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("crate::link::collision"), std::string::npos) << s.message();
  EXPECT_TRUE(r.world->vehicles().empty());
}

TEST(Spawn, OverlappingAnotherVehicleIsRefused) {
  auto w = empty_world();
  ASSERT_TRUE(w->spawn_vehicle("ugv1", Pose2D{}).ok());
  EXPECT_FALSE(w->spawn_vehicle("ugv2", Pose2D{0.3, 0.1, 1.0}).ok());
  EXPECT_TRUE(w->spawn_vehicle("ugv2", Pose2D{1.0, 0.0, 0.0}).ok());
}

TEST(Spawn, AtAFrameOfTheWorld) {
  LoadResult r = World::load(testing::depot_path());
  ASSERT_TRUE(r.world);
  ASSERT_TRUE(r.world->spawn_vehicle("ugv1", "dock").ok());
  EXPECT_NEAR(r.world->vehicle("ugv1")->pose.x, -11.9, 1e-9);
  const Status s = r.world->spawn_vehicle("ugv2", "nowhere");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("goal_a"), std::string::npos) << s.message();  // lists the frames
}

TEST(Spawn, BadNamesAndTakenNamesAreRefused) {
  LoadResult r = World::load(testing::depot_path());
  ASSERT_TRUE(r.world);
  EXPECT_FALSE(r.world->spawn_vehicle("", Pose2D{}).ok());
  EXPECT_FALSE(r.world->spawn_vehicle("a/b", Pose2D{}).ok());
  EXPECT_FALSE(r.world->spawn_vehicle("crate", Pose2D{}).ok());  // a static model's name
  EXPECT_FALSE(r.world->spawn_vehicle("x", Pose2D{std::nan(""), 0, 0}).ok());
}

TEST(Spawn, StaticModelsCanBeAddedAndRemovedWhileRunning) {
  auto w = empty_world();
  ASSERT_TRUE(w->spawn_vehicle("ugv1", Pose2D{}, ideal_ugv()).ok());
  w->step_n(100);
  ASSERT_TRUE(w->spawn_static("box", {testing::box_shape(3, 0, 1, 1)}).ok());
  EXPECT_EQ(w->static_shapes().size(), 1u);
  EXPECT_FALSE(w->spawn_static("onto", {testing::box_shape(0, 0, 1, 1)}).ok());  // onto ugv1
  ASSERT_TRUE(w->remove("box").ok());
  EXPECT_TRUE(w->static_shapes().empty());
  ASSERT_TRUE(w->remove("ugv1").ok());
  EXPECT_TRUE(w->vehicles().empty());
  EXPECT_FALSE(w->remove("ugv1").ok());
}

}  // namespace
}  // namespace fieldproof::world
