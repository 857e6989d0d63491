#include <gtest/gtest.h>

#include <cmath>

#include "fieldproof/msgs/ign.hpp"
#include "fieldproof/world/world.hpp"
#include "world_test_util.hpp"

namespace fieldproof::world {
namespace {

using testing::hash_messages;
using testing::on_topic;

std::unique_ptr<World> depot(uint64_t seed) {
  LoadResult r = World::load(testing::depot_path(), testing::seeded(seed));
  EXPECT_TRUE(r.world);
  return std::move(r.world);
}

// Two vehicles driving circles near each other for 3 s: every sensor and the ground truth.
std::vector<WorldMessage> drive(uint64_t seed) {
  auto w = depot(seed);
  EXPECT_TRUE(w->spawn_vehicle("ugv1", "dock").ok());
  EXPECT_TRUE(w->spawn_vehicle("ugv2", Pose2D{-10.0, 2.0, 0.0}).ok());
  EXPECT_TRUE(w->set_cmd_vel("ugv1", {0.6, 0.4}).ok());
  EXPECT_TRUE(w->set_cmd_vel("ugv2", {0.5, -0.3}).ok());
  w->step_n(3000);
  return w->take_messages();
}

TEST(Determinism, SameSeedGivesBitIdenticalPoseAndScanStreams) {
  const auto a = drive(7), b = drive(7);
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(hash_messages(a), hash_messages(b));
  EXPECT_EQ(hash_messages(a, "/pose/info"), hash_messages(b, "/pose/info"));
  EXPECT_EQ(hash_messages(a, "/scan"), hash_messages(b, "/scan"));
}

TEST(Determinism, AnotherSeedGivesOtherNoiseButTheSameTruth) {
  const auto a = drive(7), b = drive(8);
  EXPECT_NE(hash_messages(a, "/scan"), hash_messages(b, "/scan"));
  EXPECT_NE(hash_messages(a, "/odometry"), hash_messages(b, "/odometry"));
  EXPECT_NE(hash_messages(a, "/imu"), hash_messages(b, "/imu"));
  EXPECT_EQ(hash_messages(a, "/pose/info"), hash_messages(b, "/pose/info"));
}

TEST(Determinism, NoiseOfAVehicleDoesNotDependOnTheOthers) {
  auto solo = depot(7);
  ASSERT_TRUE(solo->spawn_vehicle("ugv1", Pose2D{10, -8, 0}).ok());
  solo->step_n(300);
  auto pair = depot(7);
  ASSERT_TRUE(pair->spawn_vehicle("aaa", Pose2D{-12, 8, 0}).ok());  // far away, sorted first
  ASSERT_TRUE(pair->spawn_vehicle("ugv1", Pose2D{10, -8, 0}).ok());
  pair->step_n(300);
  EXPECT_EQ(hash_messages(solo->take_messages(), "/model/ugv1/"),
            hash_messages(pair->take_messages(), "/model/ugv1/"));
}

TEST(Control, PauseStopsTimeAndResumeRestartsIt) {
  auto w = depot(0);
  w->step_n(10);
  w->pause(true);
  EXPECT_TRUE(w->paused());
  EXPECT_FALSE(w->can_step());
  EXPECT_EQ(w->step_n(100), 0);
  EXPECT_EQ(w->sim_time(), SimTime::from_ns(10'000'000));
  w->pause(false);
  EXPECT_EQ(w->step_n(5), 5);
  EXPECT_EQ(w->iterations(), 15u);
}

TEST(Control, MultiStepAdvancesExactlyThatManyStepsThenHolds) {
  auto w = depot(0);
  w->multi_step(250);
  EXPECT_TRUE(w->paused());
  EXPECT_EQ(w->step_n(1000), 250);
  EXPECT_EQ(w->sim_time(), SimTime::from_ns(250'000'000));
  EXPECT_TRUE(w->paused());
}

TEST(Control, RunToSimTimeStopsThereAndPauses) {
  auto w = depot(0);
  w->pause(true);
  w->run_to_sim_time(SimTime::from_ns(1'500'000'000));
  EXPECT_FALSE(w->paused());
  EXPECT_EQ(w->step_n(10'000), 1500);
  EXPECT_EQ(w->sim_time(), SimTime::from_ns(1'500'000'000));
  EXPECT_TRUE(w->paused());
  w->run_to_sim_time(SimTime::from_ns(1'000'000'000));  // not ahead: stays paused
  EXPECT_EQ(w->step_n(10), 0);
}

TEST(Control, WorldControlMessagesDriveTheSameControls) {
  auto w = depot(0);
  ignition::msgs::WorldControl c;
  c.set_pause(true);
  ASSERT_TRUE(
      w->handle_message("/world/depot/control", msgs::kWorldControl, msgs::serialize(c)).ok());
  EXPECT_TRUE(w->paused());
  c.set_multi_step(20);
  ASSERT_TRUE(
      w->handle_message("/world/depot/control", msgs::kWorldControl, msgs::serialize(c)).ok());
  EXPECT_EQ(w->step_n(100), 20);
  ignition::msgs::WorldControl run;
  *run.mutable_run_to_sim_time() = msgs::to_time(SimTime::from_ns(50'000'000));
  ASSERT_TRUE(
      w->handle_message("/world/depot/control", msgs::kWorldControl, msgs::serialize(run)).ok());
  EXPECT_EQ(w->step_n(100), 30);
  EXPECT_FALSE(w->handle_message("/world/depot/control", msgs::kTwist, "").ok());
  ignition::msgs::WorldControl reset;
  reset.mutable_reset()->set_all(true);
  const Status s =
      w->handle_message("/world/depot/control", msgs::kWorldControl, msgs::serialize(reset));
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("not supported"), std::string::npos) << s.message();
}

TEST(Control, StatisticsReportPauseIterationsAndMeasuredRealTimeFactor) {
  int64_t wall = 0;
  WorldOptions o;
  o.wall_now = [&] { return SimTime::from_ns(wall); };
  LoadResult r = World::load(testing::depot_path(), std::move(o));
  ASSERT_TRUE(r.world);
  World& w = *r.world;
  // Each step takes 0.5 ms of (injected) wall clock: twice real time.
  for (int i = 0; i < 400; ++i) {
    wall += 500'000;
    w.step();
  }
  auto stats = on_topic(w.take_messages(), "/world/depot/stats");
  ASSERT_EQ(stats.size(), 2u);
  auto s = *msgs::parse<ignition::msgs::WorldStatistics>(stats.back().payload);
  EXPECT_NEAR(s.real_time_factor(), 2.0, 1e-9);
  EXPECT_EQ(s.iterations(), 400u);
  EXPECT_FALSE(s.paused());
  EXPECT_EQ(msgs::from_time(s.step_size()).ns(), 1'000'000);
  w.pause(true);
  stats = on_topic(w.take_messages(), "/world/depot/stats");
  ASSERT_EQ(stats.size(), 1u);  // published at once on a control change
  EXPECT_TRUE(msgs::parse<ignition::msgs::WorldStatistics>(stats[0].payload)->paused());
  EXPECT_TRUE(w.statistics().paused);
}

TEST(Control, SetPhysicsValidatesTheRealTimeFactor) {
  auto w = depot(0);
  EXPECT_TRUE(w->set_physics(2.5).ok());
  EXPECT_EQ(w->target_real_time_factor(), 2.5);
  EXPECT_TRUE(w->set_physics(std::numeric_limits<double>::infinity()).ok());
  EXPECT_FALSE(w->set_physics(0.0).ok());
  EXPECT_FALSE(w->set_physics(std::nan("")).ok());
}

TEST(Control, SinkReceivesMessagesInsteadOfTheOutbox) {
  std::vector<WorldMessage> got;
  WorldOptions o;
  o.sink = [&](WorldMessage&& m) { got.push_back(std::move(m)); };
  LoadResult r = World::load(testing::depot_path(), std::move(o));
  ASSERT_TRUE(r.world);
  r.world->step_n(100);
  EXPECT_EQ(on_topic(got, "/clock").size(), 10u);
  EXPECT_TRUE(r.world->take_messages().empty());
}

TEST(Control, InputTopicsNameControlAndEveryCmdVel) {
  auto w = depot(0);
  ASSERT_TRUE(w->spawn_vehicle("ugv1", "dock").ok());
  const auto topics = w->input_topics();
  ASSERT_EQ(topics.size(), 4u);
  EXPECT_EQ(topics[0], "/world/depot/control");
  EXPECT_EQ(topics[1], "/world/depot/create");
  EXPECT_EQ(topics[2], "/world/depot/remove");
  EXPECT_EQ(topics[3], "/model/ugv1/cmd_vel");
}

}  // namespace
}  // namespace fieldproof::world
