#include <gtest/gtest.h>

#include "fieldproof/stacks/costmap.hpp"
#include "stacks/stack_test_util.hpp"

namespace fieldproof::stacks {
namespace {

using testing::free_grid;
using testing::set_occupied;

TEST(Costmap, ObstacleCellIsObstacleAndNeighboursWithinRadiusAreLethal) {
  auto g = free_grid(21, 21, 0.1);
  set_occupied(g, 10, 10);
  auto cm = testing::must_build(g, {.robot_radius = 0.3, .margin = 0.2});
  ASSERT_TRUE(cm);
  EXPECT_EQ(cm->cost({10, 10}), kObstacle);
  // Lethal below radius + half a cell (0.35 m): 3 cells straight, 2 diagonal (0.283 m).
  EXPECT_EQ(cm->cost({13, 10}), kLethal);
  EXPECT_EQ(cm->cost({10, 7}), kLethal);
  EXPECT_EQ(cm->cost({12, 12}), kLethal);
  // In the caution band (0.35 .. 0.55 m), decaying with distance.
  const uint8_t c4 = cm->cost({14, 10});
  const uint8_t c5 = cm->cost({15, 10});
  EXPECT_GT(c4, kFree);
  EXPECT_LT(c4, kLethal);
  EXPECT_GT(c4, c5);
  // Beyond the band: free.
  EXPECT_EQ(cm->cost({16, 10}), kFree);
  EXPECT_EQ(cm->cost({0, 0}), kFree);
}

TEST(Costmap, InflationIsSymmetric) {
  auto g = free_grid(31, 31, 0.05);
  set_occupied(g, 15, 15);
  auto cm = testing::must_build(g, {.robot_radius = 0.36, .margin = 0.15});
  ASSERT_TRUE(cm);
  for (int d = 0; d <= 15; ++d) {
    EXPECT_EQ(cm->cost({15 + d, 15}), cm->cost({15 - d, 15})) << d;
    EXPECT_EQ(cm->cost({15, 15 + d}), cm->cost({15 + d, 15})) << d;
  }
}

TEST(Costmap, ZeroRadiusAndMarginLeavesOnlyObstacles) {
  auto g = free_grid(5, 5, 0.1);
  set_occupied(g, 2, 2);
  auto cm = testing::must_build(g, {.robot_radius = 0.0, .margin = 0.0});
  ASSERT_TRUE(cm);
  int non_free = 0;
  for (int y = 0; y < 5; ++y) {
    for (int x = 0; x < 5; ++x) non_free += cm->cost({x, y}) != kFree;
  }
  EXPECT_EQ(non_free, 1);
}

TEST(Costmap, OutsideTheGridCountsAsObstacle) {
  auto cm = testing::must_build(free_grid(4, 4), {});
  ASSERT_TRUE(cm);
  EXPECT_EQ(cm->cost({-1, 0}), kObstacle);
  EXPECT_EQ(cm->cost_at({100.0, 0.1}), kObstacle);
  EXPECT_FALSE(cm->cell_of({std::nan(""), 0.0}).has_value());
}

TEST(Costmap, AddedObstacleIsInflatedAndCostsNeverDrop) {
  auto g = free_grid(20, 20, 0.1);
  auto cm = testing::must_build(g, {.robot_radius = 0.2, .margin = 0.1});
  ASSERT_TRUE(cm);
  cm->add_obstacle({5, 5});
  EXPECT_EQ(cm->cost({5, 5}), kObstacle);
  EXPECT_EQ(cm->cost({7, 5}), kLethal);
  cm->add_obstacle({7, 5});
  EXPECT_EQ(cm->cost({5, 5}), kObstacle);
  cm->add_obstacle({-3, 500});  // ignored
}

TEST(Costmap, MalformedGridIsRefusedWithAReason) {
  auto g = free_grid(4, 4);
  g.cells.pop_back();
  auto cm = Costmap::build(g, {});
  ASSERT_FALSE(cm.ok());
  EXPECT_NE(cm.status().message().find("15 values"), std::string::npos) << cm.status().message();
  g = free_grid(4, 4);
  g.resolution = 0;
  EXPECT_FALSE(Costmap::build(g, {}).ok());
  EXPECT_FALSE(Costmap::build(free_grid(4, 4), {.robot_radius = -1.0, .margin = 0.1}).ok());
  EXPECT_FALSE(Costmap::build(free_grid(4, 4), {.robot_radius = 0.3, .margin = std::nan("")}).ok());
}

}  // namespace
}  // namespace fieldproof::stacks
