#include <gtest/gtest.h>

#include <cmath>

#include "fieldproof/stacks/planner.hpp"
#include "stacks/stack_test_util.hpp"

namespace fieldproof::stacks {
namespace {

using testing::fill_rect;
using testing::free_grid;
using testing::set_occupied;

constexpr double kSqrt2 = 1.4142135623730951;

Costmap bare(const world::OccupancyGrid& g) {
  auto cm = testing::must_build(g, {.robot_radius = 0.0, .margin = 0.0});
  EXPECT_TRUE(cm);
  return *cm;
}

bool adjacent(Cell a, Cell b) {
  return std::abs(a.x - b.x) <= 1 && std::abs(a.y - b.y) <= 1 && !(a == b);
}

TEST(Astar, FindsTheOctileShortestPathOnAnEmptyGrid) {
  const Costmap cm = bare(free_grid(10, 10));
  double cost = 0;
  const auto path = astar(cm, {0, 0}, {7, 3}, {}, &cost);
  ASSERT_FALSE(path.empty());
  EXPECT_EQ(path.front(), (Cell{0, 0}));
  EXPECT_EQ(path.back(), (Cell{7, 3}));
  EXPECT_NEAR(cost, 4.0 + 3.0 * kSqrt2, 1e-9);
  EXPECT_EQ(path.size(), 8u);  // 7 steps
  for (size_t i = 1; i < path.size(); ++i) EXPECT_TRUE(adjacent(path[i - 1], path[i]));
}

TEST(Astar, FindsTheShortestPathAroundAWall) {
  // A wall at x = 5 from y = 0 to y = 7 on a 10 x 10 grid: the way round is over its top.
  auto g = free_grid(10, 10);
  for (int y = 0; y <= 7; ++y) set_occupied(g, 5, y);
  const Costmap cm = bare(g);
  double cost = 0;
  const auto path = astar(cm, {2, 2}, {8, 2}, {}, &cost);
  ASSERT_FALSE(path.empty());
  for (const Cell c : path) EXPECT_NE(cm.cost(c), kObstacle);
  // The true shortest cost by exhaustive relaxation (Bellman-Ford) must match A*'s.
  double brute = 0;
  {
    const int n = 100;
    std::vector<double> d(n, 1e18);
    d[2 * 10 + 2] = 0;
    for (int it = 0; it < n; ++it) {
      for (int y = 0; y < 10; ++y) {
        for (int x = 0; x < 10; ++x) {
          if (cm.cost({x, y}) == kObstacle) continue;
          for (int dy = -1; dy <= 1; ++dy) {
            for (int dx = -1; dx <= 1; ++dx) {
              if (!dx && !dy) continue;
              const Cell nb{x + dx, y + dy};
              if (!cm.in_bounds(nb) || cm.cost(nb) == kObstacle) continue;
              if (dx && dy &&
                  (cm.cost({x + dx, y}) == kObstacle || cm.cost({x, y + dy}) == kObstacle)) {
                continue;
              }
              const double w = (dx && dy) ? kSqrt2 : 1.0;
              d[nb.y * 10 + nb.x] = std::min(d[nb.y * 10 + nb.x], d[y * 10 + x] + w);
            }
          }
        }
      }
    }
    brute = d[2 * 10 + 8];
  }
  EXPECT_NEAR(cost, brute, 1e-9);
}

TEST(Astar, FindsNoPathWhenTheGoalIsWalledOff) {
  auto g = free_grid(10, 10);
  for (int y = 0; y < 10; ++y) set_occupied(g, 5, y);
  const Costmap cm = bare(g);
  size_t expansions = 0;
  EXPECT_TRUE(astar(cm, {1, 1}, {8, 8}, {}, nullptr, &expansions).empty());
  EXPECT_EQ(expansions, 50u);  // every reachable cell, then gives up
}

TEST(Astar, DoesNotCutCorners) {
  // Two obstacles touching at a corner: the diagonal between them is closed.
  auto g = free_grid(4, 4);
  set_occupied(g, 1, 0);
  set_occupied(g, 0, 1);
  const Costmap cm = bare(g);
  EXPECT_TRUE(astar(cm, {0, 0}, {3, 3}, {}).empty());
}

TEST(Astar, BreaksTiesTheSameWayEveryTime) {
  const Costmap cm = bare(free_grid(30, 30));
  const auto a = astar(cm, {0, 0}, {29, 17}, {});
  for (int i = 0; i < 3; ++i) EXPECT_EQ(astar(cm, {0, 0}, {29, 17}, {}), a);
}

TEST(Astar, RespectsTheExpansionBound) {
  const Costmap cm = bare(free_grid(50, 50));
  PlannerOptions o;
  o.max_expansions = 5;
  EXPECT_TRUE(astar(cm, {0, 0}, {49, 49}, o).empty());
}

TEST(Shortcut, StraightensAnOpenGridPathToTwoPoints) {
  const Costmap cm = bare(free_grid(20, 20));
  const auto cells = astar(cm, {0, 0}, {19, 7}, {});
  const auto s = shortcut(cm, cells);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s.front(), (Cell{0, 0}));
  EXPECT_EQ(s.back(), (Cell{19, 7}));
}

TEST(PlanPath, GoesAroundAnObstacleWithClearance) {
  // 10 x 6 m room, a 1 x 3 m block in the middle from the bottom wall; start left, goal right.
  auto g = free_grid(100, 60, 0.1);
  testing::add_border(g);
  fill_rect(g, 4.5, 0.0, 5.5, 3.5);
  auto cm = testing::must_build(g, {.robot_radius = 0.3, .margin = 0.2});
  ASSERT_TRUE(cm);
  const auto r = plan_path(*cm, {2.0, 1.5}, {8.0, 1.5});
  ASSERT_TRUE(r.ok()) << r.reason;
  EXPECT_GE(r.path.size(), 3u);
  EXPECT_DOUBLE_EQ(r.path.front().x, 2.0);
  EXPECT_DOUBLE_EQ(r.path.back().x, 8.0);
  // Every point along the smoothed path keeps the robot off the block.
  for (size_t i = 1; i < r.path.size(); ++i) {
    for (int k = 0; k <= 50; ++k) {
      const double t = k / 50.0;
      const Point2 q{r.path[i - 1].x + t * (r.path[i].x - r.path[i - 1].x),
                     r.path[i - 1].y + t * (r.path[i].y - r.path[i - 1].y)};
      EXPECT_LT(cm->cost_at(q), kLethal) << q.x << "," << q.y;
    }
  }
  // It must pass above the block (y > 3.5 + radius) somewhere.
  double max_y = 0;
  for (const Point2 p : r.path) max_y = std::max(max_y, p.y);
  EXPECT_GT(max_y, 3.8);
  // Longer than the straight line, shorter than a silly detour.
  EXPECT_GT(path_length(r.path), 6.0);
  EXPECT_LT(path_length(r.path), 11.0);
}

TEST(PlanPath, ExplainsEndsOutsideTheMapOrInObstacles) {
  auto g = free_grid(50, 50, 0.1);
  fill_rect(g, 2.0, 2.0, 3.0, 3.0);
  auto cm = testing::must_build(g, {.robot_radius = 0.3, .margin = 0.1});
  ASSERT_TRUE(cm);
  auto r = plan_path(*cm, {1.0, 1.0}, {7.0, 1.0});
  EXPECT_EQ(r.error, PlanError::kGoalOutsideMap);
  EXPECT_NE(r.reason.find("outside the map"), std::string::npos) << r.reason;
  r = plan_path(*cm, {-1.0, 1.0}, {4.0, 1.0});
  EXPECT_EQ(r.error, PlanError::kStartOutsideMap);
  r = plan_path(*cm, {1.0, 1.0}, {2.5, 2.5});
  EXPECT_EQ(r.error, PlanError::kGoalInObstacle);
  EXPECT_NE(r.reason.find("inside an obstacle"), std::string::npos) << r.reason;
  r = plan_path(*cm, {1.0, 1.0}, {3.2, 2.5});
  EXPECT_EQ(r.error, PlanError::kGoalInObstacle);
  EXPECT_NE(r.reason.find("radius"), std::string::npos) << r.reason;
  r = plan_path(*cm, {2.5, 2.5}, {1.0, 1.0});
  EXPECT_EQ(r.error, PlanError::kStartInObstacle);
}

TEST(PlanPath, LeavesALethalBandAroundTheStart) {
  // The robot stands 0.2 m from a wall, closer than its 0.3 m radius (a conservative circle).
  auto g = free_grid(50, 50, 0.1);
  fill_rect(g, 0.0, 0.0, 5.0, 0.95);
  auto cm = testing::must_build(g, {.robot_radius = 0.3, .margin = 0.1});
  ASSERT_TRUE(cm);
  ASSERT_EQ(cm->cost_at({2.0, 1.2}), kLethal);
  const auto r = plan_path(*cm, {2.0, 1.2}, {2.0, 4.0});
  ASSERT_TRUE(r.ok()) << r.reason;
}

TEST(PlanPath, ShortcutsNeverCrossTheLethalBandBeyondTheEscape) {
  // Start in the lethal band of a long wall, goal far along it: the smoothed path must leave the
  // band first instead of running along the wall inside it.
  auto g = free_grid(100, 50, 0.1);
  fill_rect(g, 0.0, 0.0, 10.0, 0.95);
  auto cm = testing::must_build(g, {.robot_radius = 0.3, .margin = 0.1});
  ASSERT_TRUE(cm);
  const Point2 start{1.0, 1.2};
  ASSERT_EQ(cm->cost_at(start), kLethal);
  const auto r = plan_path(*cm, start, {9.0, 1.6});
  ASSERT_TRUE(r.ok()) << r.reason;
  for (size_t i = 1; i < r.path.size(); ++i) {
    for (int k = 0; k <= 100; ++k) {
      const double t = k / 100.0;
      const Point2 q{r.path[i - 1].x + t * (r.path[i].x - r.path[i - 1].x),
                     r.path[i - 1].y + t * (r.path[i].y - r.path[i - 1].y)};
      if (std::hypot(q.x - start.x, q.y - start.y) > PlannerOptions{}.escape_distance) {
        EXPECT_LT(cm->cost_at(q), kLethal) << q.x << "," << q.y;
      }
    }
  }
}

}  // namespace
}  // namespace fieldproof::stacks
