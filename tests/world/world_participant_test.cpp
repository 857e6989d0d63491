// The world as a lock-step participant over the in-process transport.
#include "fieldproof/world/world_participant.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "fieldproof/lockstep/inprocess.hpp"
#include "fieldproof/msgs/ign.hpp"
#include "world_test_util.hpp"

namespace fieldproof::world {
namespace {

using lockstep::InProcessCoordinator;
using lockstep::Participant;
using lockstep::ParticipantOptions;
using lockstep::Publish;

ParticipantOptions named(const std::string& name) {
  ParticipantOptions o;
  o.name = name;
  return o;
}

SimTime secs_ms(int64_t ms) { return SimTime::from_ns(ms * 1'000'000); }

struct Tapped {
  std::vector<Publish> messages;
  uint64_t hash() const {
    std::vector<WorldMessage> ws;
    for (const auto& m : messages) ws.push_back({m.topic, m.stamp, {}, m.payload});
    return testing::hash_messages(ws);
  }
  size_t count(const std::string& topic) const {
    size_t n = 0;
    for (const auto& m : messages) n += m.topic == topic;
    return n;
  }
};

TEST(WorldParticipant, StepsOnTheGrantsAndPublishesTheOutboxInOrder) {
  InProcessCoordinator coord;
  Tapped tap;
  coord.set_tap([&](const Publish& m) { tap.messages.push_back(m); });
  auto w = World::empty("flat", milliseconds(1));
  ASSERT_TRUE(w->spawn_vehicle("ugv1", Pose2D{}).ok());
  Participant p(coord.make_link(), named("world"));
  WorldParticipant glue(*w, p);
  ASSERT_TRUE(glue.run_until(secs_ms(1000)));
  EXPECT_EQ(w->sim_time(), secs_ms(1000));
  EXPECT_EQ(p.now(), secs_ms(1000));
  // Messages stamped at the last grant are ordered (and tapped) when time moves past it.
  ASSERT_TRUE(p.sleep_until(secs_ms(1001)));
  EXPECT_EQ(tap.count("/clock"), 100u);
  EXPECT_EQ(tap.count("/model/ugv1/scan"), 10u);
  EXPECT_EQ(tap.count("/model/ugv1/odometry"), 50u);
  for (size_t i = 1; i < tap.messages.size(); ++i) {
    ASSERT_LE(tap.messages[i - 1].stamp, tap.messages[i].stamp);
  }
  for (const auto& m : tap.messages) {
    if (m.topic == "/model/ugv1/scan") {
      EXPECT_EQ(m.type, msgs::kLaserScan);
    }
  }
}

// A driver participant commands the UGV at 0.5 s over the bus; two runs give the same stream.
Tapped drive_over_the_bus(double* final_x) {
  InProcessCoordinator coord;
  Tapped tap;
  coord.set_tap([&](const Publish& m) { tap.messages.push_back(m); });
  auto w = World::empty("flat", milliseconds(1));
  EXPECT_TRUE(w->spawn_vehicle("ugv1", Pose2D{}).ok());
  Participant world_p(coord.make_link(), named("world"));
  Participant driver(coord.make_link(), named("driver"));
  WorldParticipant glue(*w, world_p);
  std::thread t([&] {
    EXPECT_TRUE(driver.sleep_until(secs_ms(500)));
    ignition::msgs::Twist cmd;
    cmd.mutable_linear()->set_x(1.0);
    driver.publish("/model/ugv1/cmd_vel", msgs::serialize(cmd), std::string(msgs::kTwist));
    driver.sleep_until(secs_ms(2000));
    driver.leave();
  });
  EXPECT_TRUE(glue.run_until(secs_ms(2000)));
  t.join();
  EXPECT_EQ(glue.rejected_inputs(), 0u) << glue.last_rejection();
  *final_x = w->vehicle("ugv1")->pose.x;
  return tap;
}

TEST(WorldParticipant, CmdVelOverTheBusDrivesTheVehicleFromItsStamp) {
  double x = 0;
  (void)drive_over_the_bus(&x);
  // From 0.5 s: 1 s ramp at 1 m/s² (0.5 m) then 0.5 s at 1 m/s (0.5 m), discretised at 1 ms.
  EXPECT_NEAR(x, 1.0, 0.002);
}

TEST(WorldParticipant, TwoRunsGiveTheSameOrderedStream) {
  double xa = 0, xb = 0;
  const Tapped a = drive_over_the_bus(&xa), b = drive_over_the_bus(&xb);
  EXPECT_EQ(a.messages.size(), b.messages.size());
  EXPECT_EQ(a.hash(), b.hash());
  EXPECT_EQ(xa, xb);
}

TEST(WorldParticipant, BadCommandsOverTheBusAreCountedNotApplied) {
  InProcessCoordinator coord;
  auto w = World::empty("flat", milliseconds(1));
  ASSERT_TRUE(w->spawn_vehicle("ugv1", Pose2D{}).ok());
  Participant world_p(coord.make_link(), named("world"));
  Participant driver(coord.make_link(), named("driver"));
  WorldParticipant glue(*w, world_p);
  std::thread t([&] {
    driver.sleep_until(secs_ms(10));
    driver.publish("/model/ugv1/cmd_vel", "\xff\xff\xff", std::string(msgs::kTwist));
    ignition::msgs::Twist nan_cmd;
    nan_cmd.mutable_angular()->set_z(std::nan(""));
    driver.publish("/model/ugv1/cmd_vel", msgs::serialize(nan_cmd), std::string(msgs::kTwist));
    driver.leave();
  });
  EXPECT_TRUE(glue.run_until(secs_ms(100)));
  t.join();
  EXPECT_EQ(glue.rejected_inputs(), 2u);
  EXPECT_EQ(w->vehicle("ugv1")->pose.x, 0.0);
}

}  // namespace
}  // namespace fieldproof::world
