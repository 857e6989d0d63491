#include <gtest/gtest.h>

#include "fieldproof/stacks/lifecycle.hpp"
#include "stacks/stack_test_util.hpp"

namespace fieldproof::stacks {
namespace {

TEST(LifecycleManager, StartupGoesUnconfiguredInactiveActiveForEveryNode) {
  testing::FakeWall wall;
  LifecycleManager lm({}, wall.fn());
  EXPECT_EQ(lm.state(), LifecycleState::kUnconfigured);
  lm.startup();
  EXPECT_EQ(lm.state(), LifecycleState::kActive);
  const auto t = lm.take();
  ASSERT_EQ(t.size(), 6u);  // 3 nodes x (inactive, active)
  EXPECT_EQ(t[0].node, "planner_server");
  EXPECT_EQ(t[0].state, LifecycleState::kInactive);
  EXPECT_EQ(t[2].node, "bt_navigator");
  EXPECT_EQ(t[3].state, LifecycleState::kActive);
  EXPECT_TRUE(lm.take().empty());
}

TEST(LifecycleManager, OneSilentServerTakesTheStackInactiveAfterFourSecondsOfWallTime) {
  testing::FakeWall wall;
  LifecycleManager lm({}, wall.fn());
  lm.startup();
  lm.take();
  for (int i = 0; i < 39; ++i) {
    wall.advance(milliseconds(100));
    lm.heartbeat("controller_server");  // the planner stays silent
    EXPECT_FALSE(lm.check()) << i;
  }
  wall.advance(milliseconds(100));  // 4.0 s since the planner's last beat
  lm.heartbeat("controller_server");
  EXPECT_TRUE(lm.check());
  EXPECT_EQ(lm.state(), LifecycleState::kInactive);
  EXPECT_NE(lm.last_reason().find("planner_server silent for 4.000 s"), std::string::npos)
      << lm.last_reason();
  const auto t = lm.take();
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[1].state, LifecycleState::kInactive);
}

TEST(LifecycleManager, BeatingServersKeepItActiveHoweverLong) {
  testing::FakeWall wall;
  LifecycleManager lm({}, wall.fn());
  lm.startup();
  for (int i = 0; i < 1000; ++i) {
    wall.advance(seconds(3));
    lm.heartbeat("planner_server");
    lm.heartbeat("controller_server");
    ASSERT_FALSE(lm.check());
  }
  EXPECT_EQ(lm.state(), LifecycleState::kActive);
}

TEST(LifecycleManager, ReactivatesWhenEveryServerBeatsAgain) {
  testing::FakeWall wall;
  LifecycleManager lm({}, wall.fn());
  lm.startup();
  wall.advance(seconds(5));
  ASSERT_TRUE(lm.check());
  lm.take();
  lm.heartbeat("planner_server");
  EXPECT_EQ(lm.state(), LifecycleState::kInactive);  // the controller is still silent
  lm.heartbeat("controller_server");
  EXPECT_EQ(lm.state(), LifecycleState::kActive);
  EXPECT_EQ(lm.take().size(), 3u);
}

TEST(LifecycleManager, StaysInactiveWhenReactivationIsOff) {
  testing::FakeWall wall;
  LifecycleOptions o;
  o.reactivate = false;
  LifecycleManager lm(o, wall.fn());
  lm.startup();
  wall.advance(seconds(4));
  ASSERT_TRUE(lm.check());
  lm.heartbeat("planner_server");
  lm.heartbeat("controller_server");
  EXPECT_EQ(lm.state(), LifecycleState::kInactive);
  lm.startup();
  EXPECT_EQ(lm.state(), LifecycleState::kActive);
}

}  // namespace
}  // namespace fieldproof::stacks
