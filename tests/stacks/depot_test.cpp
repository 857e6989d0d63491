// The stack driving the world's reference UGV in examples/worlds/depot.sdf, in closed loop and in
// process (no coordinator): world.step() at the physics step, the stack ticked when due, bus
// payloads passed both ways. The stack's map is the world's static geometry over the yard.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "fieldproof/msgs/ign.hpp"
#include "fieldproof/msgs/navigation.hpp"
#include "fieldproof/stacks/ugv_nav_node.hpp"
#include "fieldproof/world/world.hpp"
#include "stacks/stack_test_util.hpp"

namespace fieldproof::stacks {
namespace {

// The map of the walled yard (its walls plus 0.5 m, at 5 cm), as the depot's example scenarios
// state it in their map section; the world's own extent would be its 40 x 30 m ground.
world::MapOptions yard_map() {
  world::MapOptions m;
  m.bounds = world::MapBounds{-15.6, -10.6, 15.6, 10.6};
  return m;
}

struct DepotRun {
  std::unique_ptr<world::World> world;
  std::unique_ptr<UgvNavNode> node;
  testing::FakeWall wall;
  std::vector<msgs::NavStatus> statuses;
  double closest_goal = 1e9;
  int touching_steps = 0;

  explicit DepotRun(UgvNavOptions options = {}, uint64_t seed = 7) {
    world::WorldOptions wo;
    wo.seed = seed;
    auto loaded = world::World::load("examples/worlds/depot.sdf", wo);
    for (const auto& e : loaded.errors) ADD_FAILURE() << e;
    world = std::move(loaded.world);
    if (!world) return;
    const auto spawned = world->spawn_vehicle("ugv1", "dock");
    EXPECT_TRUE(spawned.ok()) << spawned.message();
    options.world = world->name();
    auto created = UgvNavNode::create(options, world->occupancy_grid(yard_map()), wall.fn());
    EXPECT_TRUE(created.ok()) << created.status().message();
    if (created.ok()) node = std::move(created).value();
  }

  // Steps until the goal ends or `limit` of simulated time passes; the goal is sent at 0.5 s.
  void drive(const msgs::NavGoal& goal, Duration limit) {
    const auto subs = node->subscriptions();
    const SimTime end = world->sim_time() + limit;
    const SimTime goal_at = world->sim_time() + milliseconds(500);
    bool sent = false;
    while (world->sim_time() < end) {
      world->step();
      wall.advance(world->step_size());
      const SimTime now = world->sim_time();
      for (const world::WorldMessage& m : world->take_messages()) {
        if (std::find(subs.begin(), subs.end(), m.topic) == subs.end()) continue;
        const Status delivered = node->deliver({m.topic, m.stamp, std::string(m.type), m.payload});
        ASSERT_TRUE(delivered.ok()) << delivered.message();
      }
      if (!sent && now >= goal_at) {
        sent = true;
        ASSERT_TRUE(node->deliver({node->topics().goal, now, "", msgs::encode(goal)}).ok());
      }
      if (now >= node->next_tick()) node->tick(now);
      for (const BusMessage& m : node->take_messages()) {
        if (m.topic == node->topics().cmd_vel) {
          const auto s = world->handle_message(m.topic, m.type, m.payload);
          ASSERT_TRUE(s.ok()) << s.message();
        } else if (m.topic == node->topics().status) {
          statuses.push_back(*msgs::decode_nav_status(m.payload));
        }
      }
      const auto v = world->vehicle("ugv1");
      touching_steps += v->touching;
      closest_goal = std::min(closest_goal, std::hypot(v->pose.x - goal.x, v->pose.y - goal.y));
      if (!statuses.empty() && statuses.back().status != msgs::NavStatusCode::kAccepted) return;
    }
  }
  world::VehicleState vehicle() const { return *world->vehicle("ugv1"); }
};

TEST(Depot, ReachesGoalAAroundTheCrateWithoutTouchingAnything) {
  DepotRun run;
  ASSERT_TRUE(run.node);
  const auto goal_a = *run.world->frame("goal_a");
  // The straight line from the dock to goal_a crosses the crate: the path must go around it.
  run.drive({"a", goal_a.x, goal_a.y, goal_a.yaw}, seconds(180));
  ASSERT_GE(run.statuses.size(), 2u);
  EXPECT_EQ(run.statuses.back().status, msgs::NavStatusCode::kSucceeded)
      << run.statuses.back().reason;
  const auto v = run.vehicle();
  // Odometry drifts: the stack stops within its tolerance of where it believes the goal is.
  EXPECT_LT(std::hypot(v.pose.x - goal_a.x, v.pose.y - goal_a.y), 0.5);
  EXPECT_EQ(run.touching_steps, 0);
}

TEST(Depot, ReachesGoalBWithGroundTruthPoses) {
  UgvNavOptions o;
  o.pose_source = PoseSource::kGroundTruth;
  DepotRun run(o);
  ASSERT_TRUE(run.node);
  const auto goal_b = *run.world->frame("goal_b");
  run.drive({"b", goal_b.x, goal_b.y, goal_b.yaw}, seconds(180));
  ASSERT_GE(run.statuses.size(), 2u);
  EXPECT_EQ(run.statuses.back().status, msgs::NavStatusCode::kSucceeded)
      << run.statuses.back().reason;
  const auto v = run.vehicle();
  EXPECT_LT(std::hypot(v.pose.x - goal_b.x, v.pose.y - goal_b.y), 0.2);
  EXPECT_EQ(run.touching_steps, 0);
}

TEST(Depot, AbortsAGoalWalledInAfterTheMapWasMade) {
  DepotRun run;
  ASSERT_TRUE(run.node);
  // A pen of four walls around goal_a, spawned after the stack took its map: only the lidar
  // sees it.
  const auto g = *run.world->frame("goal_a");
  std::vector<world::StaticShape> pen;
  const auto wall = [&](double cx, double cy, double sx, double sy) {
    world::StaticShape s;
    s.link = "link";
    s.collision = "collision" + std::to_string(pen.size());
    s.pose = {cx, cy, 0.0};
    s.size_x = sx;
    s.size_y = sy;
    s.z_min = 0.0;
    s.z_max = 1.0;
    pen.push_back(s);
  };
  wall(g.x - 1.5, g.y, 0.2, 3.2);
  wall(g.x + 1.5, g.y, 0.2, 3.2);
  wall(g.x, g.y - 1.5, 3.2, 0.2);
  wall(g.x, g.y + 1.5, 3.2, 0.2);
  const auto spawned = run.world->spawn_static("pen", pen);
  ASSERT_TRUE(spawned.ok()) << spawned.message();
  run.drive({"a", g.x, g.y, g.yaw}, seconds(300));
  ASSERT_GE(run.statuses.size(), 2u);
  EXPECT_EQ(run.statuses.back().status, msgs::NavStatusCode::kAborted);
  EXPECT_NE(run.statuses.back().reason.find("path blocked"), std::string::npos)
      << run.statuses.back().reason;
  EXPECT_EQ(run.touching_steps, 0);
  EXPECT_EQ(run.vehicle().velocity.linear_x, 0.0);
}

TEST(Depot, AbortsAGoalTheMapShowsUnreachable) {
  auto loaded = world::World::load("examples/worlds/depot.sdf", {});
  ASSERT_TRUE(loaded.world);
  world::World& w = *loaded.world;
  ASSERT_TRUE(w.spawn_vehicle("ugv1", "dock").ok());
  const auto g = *w.frame("goal_c");
  std::vector<world::StaticShape> pen;
  for (int i = 0; i < 4; ++i) {
    world::StaticShape s;
    s.link = "link";
    s.collision = "c" + std::to_string(i);
    s.pose = {g.x + (i == 0   ? -1.2
                     : i == 1 ? 1.2
                              : 0.0),
              g.y + (i == 2   ? -1.2
                     : i == 3 ? 1.2
                              : 0.0),
              0.0};
    s.size_x = i < 2 ? 0.2 : 2.6;
    s.size_y = i < 2 ? 2.6 : 0.2;
    s.z_max = 1.0;
    pen.push_back(s);
  }
  ASSERT_TRUE(w.spawn_static("pen", pen).ok());
  testing::FakeWall wall;
  auto created = UgvNavNode::create({}, w.occupancy_grid(0.05), wall.fn());
  ASSERT_TRUE(created.ok()) << created.status().message();
  auto node = std::move(created).value();
  node->tick(SimTime::zero());
  const auto dock = *w.frame("dock");
  ignition::msgs::Odometry o;
  msgs::set_planar_pose(o.mutable_pose(), dock.x, dock.y, dock.yaw);
  ASSERT_TRUE(node->deliver({node->topics().pose, SimTime::zero(), "", msgs::serialize(o)}).ok());
  ASSERT_TRUE(node->deliver({node->topics().goal, SimTime::zero(), "",
                             msgs::encode(msgs::NavGoal{"c", g.x, g.y, g.yaw})})
                  .ok());
  node->tick(SimTime::from_ns(50'000'000));
  std::vector<msgs::NavStatus> st;
  for (const BusMessage& m : node->take_messages()) {
    if (m.topic == node->topics().status) st.push_back(*msgs::decode_nav_status(m.payload));
  }
  ASSERT_EQ(st.size(), 2u);
  EXPECT_EQ(st[0].status, msgs::NavStatusCode::kAccepted);
  EXPECT_EQ(st[1].status, msgs::NavStatusCode::kAborted);
  EXPECT_NE(st[1].reason.find("no path"), std::string::npos) << st[1].reason;
}

TEST(Depot, RejectsGoalsInsideTheCrateAndOutsideTheYard) {
  DepotRun run;
  ASSERT_TRUE(run.node);
  run.drive({"crate", 2.0, -0.5, 0.0}, seconds(1));
  ASSERT_EQ(run.statuses.size(), 1u);
  EXPECT_EQ(run.statuses[0].status, msgs::NavStatusCode::kRejected);
  EXPECT_NE(run.statuses[0].reason.find("inside an obstacle"), std::string::npos);
  run.statuses.clear();
  run.drive({"far", 40.0, 0.0, 0.0}, seconds(1));
  ASSERT_EQ(run.statuses.size(), 1u);
  EXPECT_EQ(run.statuses[0].status, msgs::NavStatusCode::kRejected);
  EXPECT_NE(run.statuses[0].reason.find("outside the map"), std::string::npos);
}

}  // namespace
}  // namespace fieldproof::stacks
