#include <gtest/gtest.h>

#include <cmath>

#include "fieldproof/msgs/ign.hpp"
#include "fieldproof/world/world.hpp"
#include "world_test_util.hpp"

namespace fieldproof::world {
namespace {

using testing::ideal_ugv;
using testing::on_topic;

std::unique_ptr<World> empty_world(WorldOptions o = {}) {
  return World::empty("flat", milliseconds(1), std::move(o));
}

ignition::msgs::LaserScan first_scan(World& w, const std::string& vehicle) {
  w.step_n(100);  // the first scan is due at 100 ms
  auto scans = on_topic(w.take_messages(), "/model/" + vehicle + "/scan");
  EXPECT_FALSE(scans.empty());
  if (scans.empty()) return {};
  return *msgs::parse<ignition::msgs::LaserScan>(scans.front().payload);
}

// Ray i looks at -pi + i * 2pi/360 in the body frame: 180 is straight ahead, 270 to the left.
TEST(Lidar, RangeToABoxAtAKnownDistance) {
  auto w = empty_world();
  ASSERT_TRUE(w->spawn_static("box", {testing::box_shape(5.0, 0.0, 1.0, 1.0)}).ok());
  ASSERT_TRUE(w->spawn_vehicle("ugv1", Pose2D{}, ideal_ugv()).ok());
  const auto scan = first_scan(*w, "ugv1");
  ASSERT_EQ(scan.ranges_size(), 360);
  EXPECT_EQ(scan.count(), 360u);
  EXPECT_DOUBLE_EQ(scan.angle_min(), -M_PI);
  EXPECT_NEAR(scan.ranges(180), 4.5, 1e-12);
  // 2 degrees off axis the ray meets the face x = 4.5 at 4.5 / cos(2°).
  EXPECT_NEAR(scan.ranges(182), 4.5 / std::cos(2 * M_PI / 180), 1e-12);
  EXPECT_TRUE(std::isinf(scan.ranges(270)) && scan.ranges(270) > 0);  // nothing to the left
}

TEST(Lidar, RangeToACylinderAndFromARotatedVehicle) {
  auto w = empty_world();
  ASSERT_TRUE(w->spawn_static("post", {testing::disc_shape(0.0, 4.0, 0.5)}).ok());
  ASSERT_TRUE(w->spawn_vehicle("ugv1", Pose2D{0, 0, M_PI / 2}, ideal_ugv()).ok());
  const auto scan = first_scan(*w, "ugv1");
  EXPECT_NEAR(scan.ranges(180), 3.5, 1e-12);  // ahead is +y now
}

TEST(Lidar, SeesOtherVehiclesButNotItself) {
  auto w = empty_world();
  ASSERT_TRUE(w->spawn_vehicle("ugv1", Pose2D{}, ideal_ugv()).ok());
  ASSERT_TRUE(w->spawn_vehicle("ugv2", Pose2D{3.0, 0.0, 0.0}, ideal_ugv()).ok());
  const auto scan = first_scan(*w, "ugv1");
  EXPECT_NEAR(scan.ranges(180), 2.7, 1e-12);  // ugv2's rear face
  EXPECT_TRUE(std::isinf(scan.ranges(0)));    // behind: not its own chassis
}

TEST(Lidar, BeyondRangeIsPositiveInfinity) {
  auto w = empty_world();
  ASSERT_TRUE(w->spawn_static("far", {testing::box_shape(20.0, 0.0, 1.0, 1.0)}).ok());
  ASSERT_TRUE(w->spawn_vehicle("ugv1", Pose2D{}, ideal_ugv()).ok());
  const auto scan = first_scan(*w, "ugv1");
  EXPECT_EQ(scan.range_max(), 12.0);
  EXPECT_TRUE(std::isinf(scan.ranges(180)) && scan.ranges(180) > 0);
}

TEST(Lidar, CloserThanRangeMinIsNegativeInfinity) {
  auto w = empty_world();
  ASSERT_TRUE(
      w->spawn_static("box", {testing::box_shape(0.9, 0.0, 1.0, 1.0)}).ok());  // face at 0.4
  UgvParams p = ideal_ugv();
  p.lidar_range_min = 0.5;
  ASSERT_TRUE(w->spawn_vehicle("ugv1", Pose2D{}, p).ok());
  const auto scan = first_scan(*w, "ugv1");
  EXPECT_TRUE(std::isinf(scan.ranges(180)) && scan.ranges(180) < 0);
}

TEST(Lidar, NoiseIsGaussianWithTheConfiguredSpread) {
  auto w = empty_world();
  ASSERT_TRUE(w->spawn_static("wall", {testing::box_shape(5.5, 0.0, 1.0, 40.0)}).ok());
  UgvParams p = ideal_ugv();
  p.lidar_noise_stddev = 0.01;
  ASSERT_TRUE(w->spawn_vehicle("ugv1", Pose2D{}, p).ok());
  w->step_n(2000);  // 20 scans
  double sum = 0, sum2 = 0;
  int n = 0;
  for (const auto& m : on_topic(w->take_messages(), "/model/ugv1/scan")) {
    const auto scan = *msgs::parse<ignition::msgs::LaserScan>(m.payload);
    const double err = scan.ranges(180) - 5.0;
    sum += err;
    sum2 += err * err;
    ++n;
  }
  ASSERT_EQ(n, 20);
  EXPECT_LT(std::abs(sum / n), 0.01);  // mean within a few sigma / sqrt(n)
  const double sd = std::sqrt(sum2 / n);
  EXPECT_GT(sd, 0.004);
  EXPECT_LT(sd, 0.02);
}

TEST(Contacts, DrivingIntoAWallGivesAContactAndNoPenetration) {
  auto w = empty_world();
  ASSERT_TRUE(w->spawn_static("wall", {testing::box_shape(3.0, 0.0, 0.2, 4.0)}).ok());
  ASSERT_TRUE(w->spawn_vehicle("ugv1", Pose2D{}, ideal_ugv()).ok());
  ASSERT_TRUE(w->set_cmd_vel("ugv1", {0.5, 0.0}).ok());
  w->step_n(10'000);
  const auto s = w->vehicle("ugv1");
  // Chassis front (x + 0.3) stops at the wall's face (2.9), never past it.
  EXPECT_LE(s->pose.x + 0.3, 2.9 + 1e-12);
  EXPECT_GT(s->pose.x + 0.3, 2.9 - 0.001);
  EXPECT_EQ(s->velocity.linear_x, 0.0);
  EXPECT_TRUE(s->touching);
  const auto contacts = on_topic(w->take_messages(), "/model/ugv1/contacts");
  ASSERT_FALSE(contacts.empty());
  const auto c = *msgs::parse<ignition::msgs::Contacts>(contacts.front().payload);
  ASSERT_EQ(c.contact_size(), 1);
  EXPECT_EQ(c.contact(0).collision1().name(), "ugv1::chassis::collision");
  EXPECT_EQ(c.contact(0).collision2().name(), "wall::link::collision");
  EXPECT_NEAR(c.contact(0).position(0).x(), 2.9, 1e-9);
  // Repeated at 10 Hz while touching: about 10 per second of the ~4.8 s spent at the wall.
  EXPECT_GT(contacts.size(), 40u);
}

TEST(Contacts, PassingCloseGivesNone) {
  auto w = empty_world();
  // The wall's near face at y = 0.3: 10 cm from the chassis side (y = 0.2).
  ASSERT_TRUE(w->spawn_static("wall", {testing::box_shape(5.0, 0.4, 8.0, 0.2)}).ok());
  ASSERT_TRUE(w->spawn_vehicle("ugv1", Pose2D{}, ideal_ugv()).ok());
  ASSERT_TRUE(w->set_cmd_vel("ugv1", {1.0, 0.0}).ok());
  w->step_n(10'000);
  EXPECT_GT(w->vehicle("ugv1")->pose.x, 9.5);
  EXPECT_TRUE(on_topic(w->take_messages(), "/model/ugv1/contacts").empty());
}

TEST(Contacts, ContactEndsWithAnEmptyMessageWhenBackingOff) {
  auto w = empty_world();
  ASSERT_TRUE(w->spawn_static("wall", {testing::box_shape(1.0, 0.0, 0.2, 4.0)}).ok());
  ASSERT_TRUE(w->spawn_vehicle("ugv1", Pose2D{}, ideal_ugv()).ok());
  ASSERT_TRUE(w->set_cmd_vel("ugv1", {0.5, 0.0}).ok());
  w->step_n(3000);
  ASSERT_TRUE(w->vehicle("ugv1")->touching);
  ASSERT_TRUE(w->set_cmd_vel("ugv1", {-0.5, 0.0}).ok());
  (void)w->take_messages();
  w->step_n(500);
  EXPECT_FALSE(w->vehicle("ugv1")->touching);
  const auto contacts = on_topic(w->take_messages(), "/model/ugv1/contacts");
  ASSERT_FALSE(contacts.empty());
  EXPECT_EQ(msgs::parse<ignition::msgs::Contacts>(contacts.back().payload)->contact_size(), 0);
}

TEST(Contacts, TwoVehiclesDrivingHeadOnStopAndTouch) {
  auto w = empty_world();
  ASSERT_TRUE(w->spawn_vehicle("a", Pose2D{0, 0, 0}, ideal_ugv()).ok());
  ASSERT_TRUE(w->spawn_vehicle("b", Pose2D{2, 0, M_PI}, ideal_ugv()).ok());
  ASSERT_TRUE(w->set_cmd_vel("a", {0.5, 0}).ok());
  ASSERT_TRUE(w->set_cmd_vel("b", {0.5, 0}).ok());
  w->step_n(4000);
  const auto a = w->vehicle("a"), b = w->vehicle("b");
  EXPECT_TRUE(a->touching);
  EXPECT_TRUE(b->touching);
  EXPECT_LE(a->pose.x + 0.3, b->pose.x - 0.3 + 1e-12);  // no overlap
  const auto contacts = on_topic(w->take_messages(), "/model/a/contacts");
  ASSERT_FALSE(contacts.empty());
  EXPECT_EQ(msgs::parse<ignition::msgs::Contacts>(contacts.front().payload)
                ->contact(0)
                .collision2()
                .name(),
            "b::chassis::collision");
}

TEST(Sensors, RatesAndStampsAreAsDocumented) {
  auto w = empty_world();
  ASSERT_TRUE(w->spawn_vehicle("ugv1", Pose2D{}).ok());
  w->step_n(1000);
  const auto all = w->take_messages();
  EXPECT_EQ(on_topic(all, "/clock").size(), 100u);
  EXPECT_EQ(on_topic(all, "/world/flat/stats").size(), 5u);
  EXPECT_EQ(on_topic(all, "/world/flat/pose/info").size(), 10u);
  EXPECT_EQ(on_topic(all, "/model/ugv1/odometry").size(), 50u);
  EXPECT_EQ(on_topic(all, "/model/ugv1/imu").size(), 100u);
  const auto scans = on_topic(all, "/model/ugv1/scan");
  ASSERT_EQ(scans.size(), 10u);
  EXPECT_EQ(scans.front().stamp, SimTime::from_ns(100'000'000));
  EXPECT_EQ(scans.front().type, msgs::kLaserScan);
  const auto scan = *msgs::parse<ignition::msgs::LaserScan>(scans.front().payload);
  EXPECT_EQ(msgs::stamp_of(scan.header()), scans.front().stamp);
  // Stamps never go backwards in the stream.
  for (size_t i = 1; i < all.size(); ++i) EXPECT_LE(all[i - 1].stamp, all[i].stamp);
}

TEST(Sensors, GroundTruthPosesNameEveryModel) {
  LoadResult r = World::load(testing::depot_path());
  ASSERT_TRUE(r.world);
  ASSERT_TRUE(r.world->spawn_vehicle("ugv1", "dock").ok());
  r.world->step_n(100);
  const auto poses = on_topic(r.world->take_messages(), "/world/depot/pose/info");
  ASSERT_EQ(poses.size(), 1u);
  const auto pv = *msgs::parse<ignition::msgs::Pose_V>(poses[0].payload);
  ASSERT_EQ(pv.pose_size(), 14);
  EXPECT_EQ(pv.pose(0).name(), "ugv1");
  EXPECT_NEAR(pv.pose(0).position().x(), -11.9, 1e-9);
}

TEST(Sensors, OdometryFollowsTheTruthWithDrift) {
  LoadResult r = World::load(testing::depot_path(), testing::seeded(3));
  ASSERT_TRUE(r.world);
  ASSERT_TRUE(r.world->spawn_vehicle("ugv1", "dock").ok());
  ASSERT_TRUE(r.world->set_cmd_vel("ugv1", {0.8, 0.0}).ok());
  r.world->step_n(8000);
  const auto s = r.world->vehicle("ugv1");
  const double truth = s->pose.x + 11.9, odom = s->odometry.x + 11.9;
  EXPECT_GT(truth, 5.0);
  EXPECT_NE(odom, truth);                          // noise and drift
  EXPECT_LT(std::abs(odom - truth), 0.1 * truth);  // but close
}

TEST(Sensors, ImuReportsTurnRateAndGravity) {
  auto w = empty_world();
  ASSERT_TRUE(w->spawn_vehicle("ugv1", Pose2D{}, ideal_ugv()).ok());
  ASSERT_TRUE(w->set_cmd_vel("ugv1", {0.5, 0.4}).ok());
  w->step_n(500);
  const auto imus = on_topic(w->take_messages(), "/model/ugv1/imu");
  ASSERT_FALSE(imus.empty());
  const auto imu = *msgs::parse<ignition::msgs::IMU>(imus.back().payload);
  EXPECT_NEAR(imu.angular_velocity().z(), 0.4, 1e-12);
  EXPECT_NEAR(imu.linear_acceleration().y(), 0.2, 1e-12);  // v * w
  EXPECT_NEAR(imu.linear_acceleration().z(), 9.80665, 1e-12);
}

}  // namespace
}  // namespace fieldproof::world

namespace fieldproof::world {
namespace {

// The sensor pass on several threads publishes exactly the serial pass's stream.
std::vector<WorldMessage> stream_with_threads(const char* threads) {
  setenv("FIELDPROOF_WORLD_THREADS", threads, 1);
  WorldOptions o;
  o.seed = 7;
  auto w = World::empty("flat", milliseconds(1), o);
  unsetenv("FIELDPROOF_WORLD_THREADS");
  EXPECT_TRUE(w->spawn_static("box", {testing::box_shape(5.0, 0.0, 1.0, 1.0)}).ok());
  for (int i = 0; i < 12; ++i) {
    EXPECT_TRUE(
        w->spawn_vehicle("ugv" + std::to_string(i), Pose2D{0.0, 2.0 * i, 0.0}, UgvParams{}).ok());
    EXPECT_TRUE(w->set_cmd_vel("ugv" + std::to_string(i), Twist2D{0.5, 0.1 * i}).ok());
  }
  w->step_n(1000);
  return w->take_messages();
}

TEST(WorldThreads, StreamIdenticalWithOneAndSeveralThreads) {
  const auto a = stream_with_threads("1");
  const auto b = stream_with_threads("3");
  ASSERT_EQ(a.size(), b.size());
  size_t scans = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].topic, b[i].topic) << i;
    ASSERT_EQ(a[i].stamp, b[i].stamp) << i;
    ASSERT_EQ(a[i].payload, b[i].payload) << a[i].topic;
    scans += a[i].topic.ends_with("/scan") ? 1 : 0;
  }
  EXPECT_GE(scans, 12u * 9);  // the lidar ran, so the threaded path was taken
}

// The same with the count as an option (the environment only its default).
std::vector<WorldMessage> stream_with_option(int threads) {
  setenv("FIELDPROOF_WORLD_THREADS", "0", 1);  // invalid: shows the option wins
  WorldOptions o;
  o.seed = 7;
  o.threads = threads;
  auto w = World::empty("flat", milliseconds(1), o);
  unsetenv("FIELDPROOF_WORLD_THREADS");
  EXPECT_EQ(w->sensor_threads(), threads);
  EXPECT_TRUE(w->spawn_static("box", {testing::box_shape(5.0, 0.0, 1.0, 1.0)}).ok());
  for (int i = 0; i < 12; ++i) {
    EXPECT_TRUE(
        w->spawn_vehicle("ugv" + std::to_string(i), Pose2D{0.0, 2.0 * i, 0.0}, UgvParams{}).ok());
    EXPECT_TRUE(w->set_cmd_vel("ugv" + std::to_string(i), Twist2D{0.5, 0.1 * i}).ok());
  }
  w->step_n(1000);
  return w->take_messages();
}

TEST(WorldThreads, OptionOneAndThreeGiveTheSameStream) {
  const auto a = stream_with_option(1);
  const auto b = stream_with_option(3);
  const auto env = stream_with_threads("2");
  ASSERT_EQ(a.size(), b.size());
  ASSERT_EQ(a.size(), env.size());
  size_t scans = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].topic, b[i].topic) << i;
    ASSERT_EQ(a[i].stamp, b[i].stamp) << i;
    ASSERT_EQ(a[i].payload, b[i].payload) << a[i].topic;
    ASSERT_EQ(a[i].payload, env[i].payload) << a[i].topic;
    scans += a[i].topic.ends_with("/scan") ? 1 : 0;
  }
  EXPECT_EQ(scans, 12u * 10);  // every scan of 1 s at 10 Hz: the threaded path ran
}

TEST(WorldThreads, OptionUnsetTakesTheEnvironment) {
  setenv("FIELDPROOF_WORLD_THREADS", "5", 1);
  EXPECT_EQ(World::empty("flat", milliseconds(1), {})->sensor_threads(), 5);
  WorldOptions o;
  o.threads = 2;
  EXPECT_EQ(World::empty("flat", milliseconds(1), o)->sensor_threads(), 2);
  unsetenv("FIELDPROOF_WORLD_THREADS");
  const int def = World::empty("flat", milliseconds(1), {})->sensor_threads();
  EXPECT_GE(def, 1);
  EXPECT_LE(def, 4);
}

TEST(WorldThreads, BadThreadOptionIsRefused) {
  for (int bad : {-1, 65}) {
    WorldOptions o;
    o.threads = bad;
    EXPECT_THROW(World::empty("flat", milliseconds(1), o), std::invalid_argument) << bad;
    const auto loaded = World::load_string(
        "<sdf version='1.9'><world name='w'></world></sdf>", o, "bad.sdf");
    EXPECT_EQ(loaded.world, nullptr) << bad;
    ASSERT_EQ(loaded.errors.size(), 1u) << bad;
    EXPECT_NE(loaded.errors[0].find("WorldOptions::threads"), std::string::npos)
        << loaded.errors[0];
  }
}

// Many lidars querying the static grid at once, with obstacles spanning several grid cells (the
// grid's visit marks): every thread count gives the serial stream, run after run.
std::vector<WorldMessage> crowded_stream(int threads) {
  WorldOptions o;
  o.seed = 11;
  o.threads = threads;
  auto w = World::empty("crowd", milliseconds(1), o);
  std::vector<StaticShape> walls;
  for (int k = 0; k < 16; ++k) {
    walls.push_back(testing::box_shape(-2.0 + 5.0 * k, -3.0, 4.5, 0.4));
    walls.push_back(testing::box_shape(-2.0 + 5.0 * k, 24.0, 4.5, 0.4));
    walls.push_back(testing::box_shape(1.0 + 5.0 * k, 10.5, 0.5, 6.0));
    for (int j = 0; j < 7; ++j) {
      walls.push_back(testing::box_shape(1.0 + 5.0 * k, 1.3 + 2.6 * j, 0.3, 0.3));
    }
  }
  EXPECT_TRUE(w->spawn_static("walls", walls).ok());
  int n = 0;
  for (int y = 0; y < 8; ++y) {
    for (int x = 0; x < 16; ++x) {
      const std::string name = "v" + std::to_string(n++);
      EXPECT_TRUE(
          w->spawn_vehicle(name, Pose2D{-1.0 + 5.0 * x, 2.6 * y, 0.3 * x}, UgvParams{}).ok());
      EXPECT_TRUE(w->set_cmd_vel(name, Twist2D{0.4, 0.5}).ok());
    }
  }
  w->step_n(1500);
  return w->take_messages();
}

TEST(WorldThreads, CrowdedStaticGridSameStreamOnFourThreads) {
  const auto serial = crowded_stream(1);
  size_t scans = 0;
  for (const auto& m : serial) scans += m.topic.ends_with("/scan") ? 1 : 0;
  EXPECT_EQ(scans, 128u * 15);
  for (int run = 0; run < 3; ++run) {
    const auto threaded = crowded_stream(4);
    ASSERT_EQ(serial.size(), threaded.size()) << run;
    for (size_t i = 0; i < serial.size(); ++i) {
      ASSERT_EQ(serial[i].topic, threaded[i].topic) << run << " " << i;
      ASSERT_EQ(serial[i].payload, threaded[i].payload) << run << " " << serial[i].topic;
    }
  }
}

// Each vehicle's odometry header names its own child frame, or none: a vehicle without one,
// after one with, carries only its frame_id (the messages are built afresh for every vehicle).
TEST(WorldOdometry, ChildFrameIsEachVehiclesOwn) {
  auto w = empty_world();
  UgvParams with = ideal_ugv();
  with.odometry_child_frame = "a/base_link";
  UgvParams other = ideal_ugv();
  other.odometry_child_frame = "c/base";
  ASSERT_TRUE(w->spawn_vehicle("a", Pose2D{0.0, 0.0, 0.0}, with).ok());
  ASSERT_TRUE(w->spawn_vehicle("b", Pose2D{0.0, 3.0, 0.0}, ideal_ugv()).ok());
  ASSERT_TRUE(w->spawn_vehicle("c", Pose2D{0.0, 6.0, 0.0}, other).ok());
  w->step_n(100);
  const auto msgs_ = w->take_messages();
  const auto header_of = [&](const std::string& v) {
    const auto odo = on_topic(msgs_, "/model/" + v + "/odometry");
    EXPECT_GE(odo.size(), 4u) << v;
    return msgs::parse<ignition::msgs::Odometry>(odo.back().payload)->header();
  };
  const auto a = header_of("a"), b = header_of("b"), c = header_of("c");
  EXPECT_EQ(msgs::header_value(a, "child_frame_id"), "a/base_link");
  EXPECT_EQ(b.data_size(), 1);
  EXPECT_EQ(msgs::header_value(b, "child_frame_id"), "");
  EXPECT_EQ(msgs::header_value(b, "frame_id"), "b/odom");
  EXPECT_EQ(msgs::header_value(c, "child_frame_id"), "c/base");
  EXPECT_EQ(msgs::stamp_of(c), SimTime::zero() + milliseconds(100));
}

TEST(WorldThreads, BadThreadCountIsRefused) {
  setenv("FIELDPROOF_WORLD_THREADS", "0", 1);
  EXPECT_THROW(World::empty("flat", milliseconds(1), {}), std::invalid_argument);
  setenv("FIELDPROOF_WORLD_THREADS", "2x", 1);
  EXPECT_THROW(World::empty("flat", milliseconds(1), {}), std::invalid_argument);
  unsetenv("FIELDPROOF_WORLD_THREADS");
}

}  // namespace
}  // namespace fieldproof::world
