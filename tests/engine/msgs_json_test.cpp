// Bus messages decoded to JSON by reflection: proto field names, every field printed, enums by
// name, 64-bit integers as numbers, header stamps readable; refusals of unknown types and bad
// payloads.
#include "fieldproof/msgs/json.hpp"

#include <gtest/gtest.h>

#include "fieldproof/msgs/ign.hpp"
#include "fieldproof/msgs/lifecycle.pb.h"
#include "fieldproof/msgs/navigation.pb.h"

namespace fieldproof::msgs {
namespace {

TEST(MsgsJson, TwistKeepsProtoFieldNames) {
  ignition::msgs::Twist t;
  t.mutable_linear()->set_x(0.5);
  t.mutable_angular()->set_z(-0.25);
  Decoder d;
  const Decoded m = d.decode(kTwist, serialize(t));
  ASSERT_TRUE(m.ok) << m.error;
  EXPECT_DOUBLE_EQ(m.json["linear"]["x"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(m.json["angular"]["z"].get<double>(), -0.25);
}

TEST(MsgsJson, DefaultPrimitivesAndUnsetSubMessagesArePrinted) {
  ignition::msgs::Twist t;
  t.mutable_angular()->set_z(1.0);  // linear never set
  Decoder d;
  const Decoded m = d.decode(kTwist, serialize(t));
  ASSERT_TRUE(m.ok);
  ASSERT_TRUE(m.json["linear"].contains("x"));
  EXPECT_EQ(m.json["linear"]["x"].get<double>(), 0.0);
  EXPECT_EQ(m.json["angular"]["y"].get<double>(), 0.0);
  EXPECT_TRUE(m.json["header"]["stamp"].contains("sec"));
}

TEST(MsgsJson, HeaderStampIsReadableAndReturned) {
  ignition::msgs::Odometry o;
  set_stamp(o.mutable_header(), SimTime::from_ns(12'345'000'000), "ugv1/odom");
  Decoder d;
  const Decoded m = d.decode(kOdometry, serialize(o));
  ASSERT_TRUE(m.ok);
  EXPECT_TRUE(m.json["header"]["stamp"]["sec"].is_number_integer());
  EXPECT_EQ(m.json["header"]["stamp"]["sec"].get<int64_t>(), 12);
  EXPECT_EQ(m.json["header"]["stamp"]["nsec"].get<int64_t>(), 345'000'000);
  ASSERT_TRUE(m.stamp.has_value());
  EXPECT_EQ(m.stamp->ns(), 12'345'000'000);
  EXPECT_EQ(m.json["header"]["data"][0]["key"], "frame_id");
}

TEST(MsgsJson, MessageWithoutHeaderStampHasNoStamp) {
  ignition::msgs::Twist t;
  t.mutable_linear()->set_x(1.0);
  Decoder d;
  EXPECT_FALSE(d.decode(kTwist, serialize(t)).stamp.has_value());
  fieldproof::msgs::LifecycleState l;  // a type without a header at all
  l.set_node("bt_navigator");
  EXPECT_FALSE(d.decode(kLifecycleState, l.SerializeAsString()).stamp.has_value());
}

TEST(MsgsJson, EnumsArePrintedByName) {
  fieldproof::msgs::NavigateToPoseStatus s;
  s.set_id("drive");
  s.set_status(fieldproof::msgs::NavigateToPoseStatus::SUCCEEDED);
  Decoder d;
  const Decoded m = d.decode(kNavigateToPoseStatus, s.SerializeAsString());
  ASSERT_TRUE(m.ok);
  EXPECT_EQ(m.json["status"], "SUCCEEDED");
  EXPECT_EQ(m.json["id"], "drive");
  EXPECT_EQ(m.json["reason"], "");
}

TEST(MsgsJson, RepeatedFieldsAreArrays) {
  ignition::msgs::LaserScan s;
  for (double r : {1.5, 2.0, 0.25}) s.add_ranges(r);
  Decoder d;
  const Decoded m = d.decode(kLaserScan, serialize(s));
  ASSERT_TRUE(m.ok);
  ASSERT_TRUE(m.json["ranges"].is_array());
  ASSERT_EQ(m.json["ranges"].size(), 3u);
  EXPECT_DOUBLE_EQ(m.json["ranges"][2].get<double>(), 0.25);
  EXPECT_TRUE(m.json["intensities"].is_array());
  EXPECT_TRUE(m.json["intensities"].empty());
}

TEST(MsgsJson, RepeatedMessagesAreArraysOfObjects) {
  ignition::msgs::Pose_V v;
  auto* p = v.add_pose();
  p->set_name("ugv1");
  p->mutable_position()->set_x(3.0);
  Decoder d;
  const Decoded m = d.decode(kPoseV, serialize(v));
  ASSERT_TRUE(m.ok);
  EXPECT_EQ(m.json["pose"][0]["name"], "ugv1");
  EXPECT_DOUBLE_EQ(m.json["pose"][0]["position"]["x"].get<double>(), 3.0);
}

TEST(MsgsJson, UnknownTypeIsAnError) {
  Decoder d;
  const Decoded m = d.decode("no.such.Type", "");
  EXPECT_FALSE(m.ok);
  EXPECT_NE(m.error.find("unknown message type 'no.such.Type'"), std::string::npos);
  EXPECT_FALSE(d.knows("no.such.Type"));
  EXPECT_TRUE(d.knows(kOdometry));
}

TEST(MsgsJson, GarbagePayloadIsAnError) {
  Decoder d;
  const Decoded m = d.decode(kOdometry, std::string("\xff\xff\xff\xff", 4));
  EXPECT_FALSE(m.ok);
  EXPECT_NE(m.error.find("not a valid ignition.msgs.Odometry"), std::string::npos);
}

TEST(MsgsJson, StampOnlyDecodeBuildsNoJson) {
  ignition::msgs::Odometry o;
  set_stamp(o.mutable_header(), SimTime::from_ns(2'000'000'000));
  Decoder d;
  const Decoded m = d.decode(kOdometry, serialize(o), /*want_json=*/false);
  ASSERT_TRUE(m.ok);
  EXPECT_TRUE(m.json.is_null());
  EXPECT_EQ(m.stamp->ns(), 2'000'000'000);
}

TEST(MsgsJson, ScratchMessageIsClearedBetweenPayloads) {
  Decoder d;
  ignition::msgs::Twist a;
  a.mutable_linear()->set_x(2.0);
  ASSERT_TRUE(d.decode(kTwist, serialize(a)).ok);
  const Decoded m = d.decode(kTwist, serialize(ignition::msgs::Twist()));
  EXPECT_EQ(m.json["linear"]["x"].get<double>(), 0.0);
}

}  // namespace
}  // namespace fieldproof::msgs
