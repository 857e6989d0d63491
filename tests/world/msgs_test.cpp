#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/dynamic_message.h>
#include <gtest/gtest.h>

#include "fieldproof/msgs/ign.hpp"
#include "fieldproof/msgs/navigation.hpp"
#include "fieldproof/msgs/schema.hpp"

namespace fieldproof::msgs {
namespace {

TEST(MsgsStamp, PositiveTimeSplitsExactly) {
  const SecNsec s = to_sec_nsec(SimTime::from_ns(1'250'000'001));
  EXPECT_EQ(s.sec, 1);
  EXPECT_EQ(s.nsec, 250'000'001);
}

TEST(MsgsStamp, NegativeTimeBorrowsFromSeconds) {
  const SecNsec s = to_sec_nsec(SimTime::from_ns(-1));
  EXPECT_EQ(s.sec, -1);
  EXPECT_EQ(s.nsec, 999'999'999);
  EXPECT_EQ(from_sec_nsec(s.sec, s.nsec).ns(), -1);
}

TEST(MsgsStamp, HeaderStampRoundTripsLargeTimes) {
  ignition::msgs::Header h;
  const SimTime t = SimTime::from_ns(9'123'456'789'012'345'678);
  set_stamp(&h, t, "ugv1/base_link");
  EXPECT_EQ(stamp_of(h), t);
  EXPECT_EQ(header_value(h, "frame_id"), "ugv1/base_link");
}

TEST(MsgsSerialize, TwistRoundTripsThroughPayload) {
  ignition::msgs::Twist cmd;
  cmd.mutable_linear()->set_x(0.5);
  cmd.mutable_angular()->set_z(-0.25);
  auto back = parse<ignition::msgs::Twist>(serialize(cmd));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->linear().x(), 0.5);
  EXPECT_EQ(back->angular().z(), -0.25);
}

TEST(MsgsSerialize, GarbagePayloadIsRefused) {
  EXPECT_FALSE(parse<ignition::msgs::Twist>(std::string("\xff\xff\xff\xff", 4)).has_value());
}

TEST(MsgsNavigation, GoalRoundTripsWithYaw) {
  auto back = decode_nav_goal(encode(NavGoal{"g1", 10.0, -1.0, 1.2}));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->id, "g1");
  EXPECT_DOUBLE_EQ(back->x, 10.0);
  EXPECT_DOUBLE_EQ(back->y, -1.0);
  EXPECT_NEAR(back->yaw, 1.2, 1e-12);
}

TEST(MsgsNavigation, StatusAndFeedbackAndLifecycleRoundTrip) {
  auto s = decode_nav_status(encode(NavStatus{"g2", NavStatusCode::kAborted, "blocked"}));
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->status, NavStatusCode::kAborted);
  EXPECT_EQ(s->reason, "blocked");
  EXPECT_EQ(to_string(s->status), "aborted");
  auto f = decode_nav_feedback(encode(NavFeedback{"g2", 3.5}));
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->distance_remaining, 3.5);
  auto l = decode_lifecycle(encode(Lifecycle{"planner", LifecycleStateCode::kInactive}));
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->node, "planner");
  EXPECT_EQ(to_string(l->state), "inactive");
}

// A reader with nothing but the FileDescriptorSet can build the type and decode a payload: what
// Foxglove does with an MCAP schema.
TEST(MsgsSchema, FileDescriptorSetIsSelfContainedForEveryKnownType) {
  for (const std::string& name : known_types()) {
    auto fds = file_descriptor_set(name);
    ASSERT_TRUE(fds.has_value()) << name;
    google::protobuf::FileDescriptorSet set;
    ASSERT_TRUE(set.ParseFromString(*fds)) << name;
    google::protobuf::DescriptorPool pool;
    for (const auto& file : set.file()) {
      ASSERT_NE(pool.BuildFile(file), nullptr) << name << ": " << file.name();
    }
    EXPECT_NE(pool.FindMessageTypeByName(name), nullptr) << name;
  }
}

TEST(MsgsSchema, DecodesALaserScanWithOnlyTheSchema) {
  ignition::msgs::LaserScan scan;
  scan.set_count(3);
  scan.add_ranges(1.5);
  auto fds = file_descriptor_set(kLaserScan);
  ASSERT_TRUE(fds.has_value());
  google::protobuf::FileDescriptorSet set;
  ASSERT_TRUE(set.ParseFromString(*fds));
  google::protobuf::DescriptorPool pool;
  for (const auto& file : set.file()) ASSERT_NE(pool.BuildFile(file), nullptr);
  google::protobuf::DynamicMessageFactory factory(&pool);
  const auto* d = pool.FindMessageTypeByName(std::string(kLaserScan));
  ASSERT_NE(d, nullptr);
  std::unique_ptr<google::protobuf::Message> m(factory.GetPrototype(d)->New());
  ASSERT_TRUE(m->ParseFromString(serialize(scan)));
  EXPECT_EQ(m->GetReflection()->GetUInt32(*m, d->FindFieldByName("count")), 3u);
}

TEST(MsgsSchema, UnknownTypeGivesNothing) {
  EXPECT_FALSE(file_descriptor_set("no.such.Type").has_value());
}

}  // namespace
}  // namespace fieldproof::msgs
