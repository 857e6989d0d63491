#include <gtest/gtest.h>

#include <cmath>

#include "fieldproof/msgs/ign.hpp"
#include "fieldproof/msgs/navigation.hpp"
#include "fieldproof/stacks/ugv_nav_node.hpp"
#include "stacks/nav_wire.hpp"
#include "stacks/stack_test_util.hpp"

namespace fieldproof::stacks {
namespace {

constexpr double kPi = 3.14159265358979323846;

world::OccupancyGrid room() {
  auto g = testing::free_grid(120, 80, 0.1);
  testing::add_border(g);
  return g;
}

std::string odometry(double x, double y, double yaw) {
  ignition::msgs::Odometry m;
  msgs::set_planar_pose(m.mutable_pose(), x, y, yaw);
  return msgs::serialize(m);
}

std::string scan_payload(const LaserScan& s) {
  ignition::msgs::LaserScan m;
  m.set_angle_min(s.angle_min);
  m.set_angle_step(s.angle_increment);
  m.set_range_min(s.range_min);
  m.set_range_max(s.range_max);
  m.set_count(static_cast<uint32_t>(s.ranges.size()));
  for (double r : s.ranges) m.add_ranges(r);
  return msgs::serialize(m);
}

struct NodeFixture : ::testing::Test {
  testing::FakeWall wall;
  std::unique_ptr<UgvNavNode> node;
  void make(UgvNavOptions o = {}) {
    auto created = UgvNavNode::create(o, room(), wall.fn());
    ASSERT_TRUE(created.ok()) << created.status().message();
    node = std::move(created).value();
  }
};

TEST(NavWire, StatusBytesMatchTheGeneratedCode) {
  for (const GoalStatus s : {GoalStatus::kAccepted, GoalStatus::kRejected, GoalStatus::kSucceeded,
                             GoalStatus::kAborted, GoalStatus::kCanceled}) {
    const NavStatus st{"goal-7", s, s == GoalStatus::kAccepted ? "" : "why not"};
    const auto code = static_cast<msgs::NavStatusCode>(static_cast<int>(s) + 1);
    EXPECT_EQ(wire::encode_status(st), msgs::encode(msgs::NavStatus{st.id, code, st.reason}));
  }
}

TEST(NavWire, FeedbackAndLifecycleBytesMatchTheGeneratedCode) {
  for (const double d : {0.0, -0.0, 1.25, 1e-300, 12345.678}) {
    EXPECT_EQ(wire::encode_feedback({"g", d}), msgs::encode(msgs::NavFeedback{"g", d})) << d;
  }
  for (int s = 0; s < 4; ++s) {
    const LifecycleTransition t{"planner_server", static_cast<LifecycleState>(s), "x"};
    EXPECT_EQ(wire::encode_lifecycle(t),
              msgs::encode(
                  msgs::Lifecycle{"planner_server", static_cast<msgs::LifecycleStateCode>(s + 1)}));
  }
}

TEST(NavWire, DecodesTheLinkStateTheGeneratedCodeWrites) {
  for (const bool up : {true, false}) {
    const std::string p = msgs::encode(msgs::LinkStateMsg{"gcs_ugv1", up, up ? 0.95 : 0.0,
                                                          up ? "" : "timeline"});
    EXPECT_EQ(wire::decode_link_up(p), up);
  }
  EXPECT_FALSE(wire::decode_link_up(std::string("\xff\xff\xff", 3)).has_value());
}

TEST(NavWire, DecodesGoalsTheGeneratedCodeWrites) {
  const auto g = wire::decode_goal(msgs::encode(msgs::NavGoal{"g1", 3.5, -1.25, kPi / 2}));
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->id, "g1");
  EXPECT_DOUBLE_EQ(g->pose.x, 3.5);
  EXPECT_DOUBLE_EQ(g->pose.y, -1.25);
  EXPECT_NEAR(g->pose.yaw, kPi / 2, 1e-12);
  EXPECT_FALSE(wire::decode_goal(std::string("\x0a\x10short", 7)).has_value());
  EXPECT_FALSE(wire::decode_goal(std::string("\xff\xff\xff", 3)).has_value());
  EXPECT_TRUE(wire::decode_goal("").has_value());  // all defaults: then refused by the stack
}

TEST_F(NodeFixture, TopicsFollowTheVehicleName) {
  UgvNavOptions o;
  o.vehicle = "ugv3";
  make(o);
  EXPECT_EQ(node->subscriptions(),
            (std::vector<std::string>{"/model/ugv3/odometry", "/model/ugv3/scan",
                                      "/model/ugv3/navigate_to_pose/goal",
                                      "/model/ugv3/link_state"}));
  EXPECT_EQ(node->topics().cmd_vel, "/model/ugv3/cmd_vel");
  EXPECT_EQ(node->topics().status, "/model/ugv3/navigate_to_pose/status");
  EXPECT_EQ(node->topics().feedback, "/model/ugv3/navigate_to_pose/feedback");
  EXPECT_EQ(node->topics().lifecycle, "/model/ugv3/lifecycle");
}

TEST_F(NodeFixture, GroundTruthPosesComeFromTheWorldsPoseInfo) {
  UgvNavOptions o;
  o.pose_source = PoseSource::kGroundTruth;
  o.world = "depot";
  make(o);
  EXPECT_EQ(node->subscriptions().front(), "/world/depot/pose/info");
  node->tick(SimTime::zero());
  ignition::msgs::Pose_V poses;
  auto* other = poses.add_pose();
  other->set_name("ugv2");
  msgs::set_planar_pose(other, 9.0, 9.0, 0.0);
  auto* mine = poses.add_pose();
  mine->set_name("ugv1");
  msgs::set_planar_pose(mine, 2.0, 2.0, 0.0);
  EXPECT_TRUE(
      node->deliver({"/world/depot/pose/info", SimTime::zero(), "", msgs::serialize(poses)}).ok());
  EXPECT_TRUE(node->deliver({"/model/ugv1/navigate_to_pose/goal", SimTime::zero(), "",
                             msgs::encode(msgs::NavGoal{"g1", 4.0, 2.0, 0.0})})
                  .ok());
  node->tick(SimTime::zero() + milliseconds(50));
  // Driving forward along +x from (2, 2): the pose was ugv1's, not ugv2's.
  bool forward = false;
  for (const auto& m : node->take_messages()) {
    if (m.topic != "/model/ugv1/cmd_vel") continue;
    const auto t = msgs::parse<ignition::msgs::Twist>(m.payload);
    ASSERT_TRUE(t.has_value());
    forward = forward || t->linear().x() > 0.1;
  }
  EXPECT_TRUE(forward);
}

TEST_F(NodeFixture, BadPayloadsAndUnknownTopicsAreRefusedWithAReason) {
  make();
  EXPECT_NE(node->deliver({"/model/ugv1/odometry", SimTime::zero(), "", "\xff\xff"})
                .message()
                .find("not a valid ignition.msgs.Odometry"),
            std::string::npos);
  EXPECT_NE(node->deliver({"/model/ugv1/scan", SimTime::zero(), "", "\x0a\x50"})
                .message()
                .find("not a valid ignition.msgs.LaserScan"),
            std::string::npos);
  EXPECT_NE(node->deliver({"/model/ugv1/navigate_to_pose/goal", SimTime::zero(), "", "\x0a"})
                .message()
                .find("NavigateToPoseGoal"),
            std::string::npos);
  EXPECT_NE(
      node->deliver({"/elsewhere", SimTime::zero(), "", ""}).message().find("no subscription"),
      std::string::npos);
}

TEST_F(NodeFixture, OutputsAreDecodableBusMessages) {
  make();
  node->tick(SimTime::zero());
  ASSERT_TRUE(node->deliver({"/model/ugv1/odometry", SimTime::zero(), "", odometry(2, 2, 0)}).ok());
  const auto scan = testing::scan_grid(room(), {2, 2, 0});
  ASSERT_TRUE(node->deliver({"/model/ugv1/scan", SimTime::zero(), "", scan_payload(scan)}).ok());
  ASSERT_TRUE(node->deliver({"/model/ugv1/navigate_to_pose/goal", SimTime::zero(), "",
                             msgs::encode(msgs::NavGoal{"g1", 6.0, 4.0, 0.0})})
                  .ok());
  node->tick(SimTime::from_ns(50'000'000));
  int lifecycle = 0, status = 0, cmd = 0, feedback = 0;
  for (const BusMessage& m : node->take_messages()) {
    if (m.topic == "/model/ugv1/lifecycle") {
      EXPECT_EQ(m.type, msgs::kLifecycleState);
      ASSERT_TRUE(msgs::decode_lifecycle(m.payload).has_value());
      ++lifecycle;
    } else if (m.topic == "/model/ugv1/navigate_to_pose/status") {
      const auto s = msgs::decode_nav_status(m.payload);
      ASSERT_TRUE(s.has_value());
      EXPECT_EQ(s->status, msgs::NavStatusCode::kAccepted);
      ++status;
    } else if (m.topic == "/model/ugv1/cmd_vel") {
      EXPECT_EQ(m.type, msgs::kTwist);
      const auto t = msgs::parse<ignition::msgs::Twist>(m.payload);
      ASSERT_TRUE(t.has_value());
      EXPECT_EQ(msgs::stamp_of(t->header()), m.stamp);
      ++cmd;
    } else if (m.topic == "/model/ugv1/navigate_to_pose/feedback") {
      const auto f = msgs::decode_nav_feedback(m.payload);
      ASSERT_TRUE(f.has_value());
      EXPECT_NEAR(f->distance_remaining, std::hypot(4.0, 2.0), 0.3);
      ++feedback;
    } else {
      ADD_FAILURE() << m.topic;
    }
  }
  EXPECT_EQ(lifecycle, 6);
  EXPECT_EQ(status, 1);
  EXPECT_EQ(cmd, 1);
  EXPECT_EQ(feedback, 1);
}

}  // namespace
}  // namespace fieldproof::stacks
