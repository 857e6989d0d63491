// Small simulated worlds for the stack's tests: grids, a unicycle integrated in integer-ns steps,
// a ray-marched laser scan over a grid, and a fake wall clock.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <optional>

#include "fieldproof/stacks/costmap.hpp"
#include "fieldproof/stacks/types.hpp"
#include "fieldproof/time/duration.hpp"
#include "fieldproof/world/occupancy_grid.hpp"

namespace fieldproof::stacks::testing {

// Costmap::build, as an optional (nullopt on error) so tests can use ->.
inline std::optional<Costmap> must_build(const world::OccupancyGrid& g, InflationOptions o) {
  auto built = Costmap::build(g, o);
  if (!built.ok()) return std::nullopt;
  return *built;
}

// A free grid of w x h cells with the lower-left corner at (0, 0).
inline world::OccupancyGrid free_grid(int w, int h, double res = 0.1) {
  world::OccupancyGrid g;
  g.resolution = res;
  g.width = w;
  g.height = h;
  g.cells.assign(static_cast<size_t>(w) * h, world::OccupancyGrid::kFree);
  return g;
}

inline void set_occupied(world::OccupancyGrid& g, int x, int y) {
  g.cells[static_cast<size_t>(y) * g.width + x] = world::OccupancyGrid::kOccupied;
}

// Fills the world-coordinate rectangle [x0, x1] x [y0, y1] (cells whose centre lies inside).
inline void fill_rect(world::OccupancyGrid& g, double x0, double y0, double x1, double y1) {
  for (int y = 0; y < g.height; ++y) {
    for (int x = 0; x < g.width; ++x) {
      const double cx = g.center_x(x);
      const double cy = g.center_y(y);
      if (cx >= x0 && cx <= x1 && cy >= y0 && cy <= y1) set_occupied(g, x, y);
    }
  }
}

// Walls around the grid's border.
inline void add_border(world::OccupancyGrid& g) {
  for (int x = 0; x < g.width; ++x) {
    set_occupied(g, x, 0);
    set_occupied(g, x, g.height - 1);
  }
  for (int y = 0; y < g.height; ++y) {
    set_occupied(g, 0, y);
    set_occupied(g, g.width - 1, y);
  }
}

// A unicycle integrated exactly along arcs (so the step size does not bias the result).
inline Pose2D integrate(Pose2D p, CmdVel c, Duration dt) {
  const double t = static_cast<double>(dt.ns()) / 1e9;
  if (std::abs(c.angular) < 1e-9) {
    p.x += c.linear * t * std::cos(p.yaw);
    p.y += c.linear * t * std::sin(p.yaw);
  } else {
    const double r = c.linear / c.angular;
    const double yaw1 = p.yaw + c.angular * t;
    p.x += r * (std::sin(yaw1) - std::sin(p.yaw));
    p.y -= r * (std::cos(yaw1) - std::cos(p.yaw));
    p.yaw = std::atan2(std::sin(yaw1), std::cos(yaw1));
  }
  return p;
}

// A 360-ray scan ray-marched over the grid (occupied cells and the outside are walls).
inline LaserScan scan_grid(const world::OccupancyGrid& g, const Pose2D& p, double range_max = 8.0,
                           int rays = 360) {
  LaserScan s;
  s.angle_min = -3.14159265358979323846;
  s.angle_increment = 2.0 * 3.14159265358979323846 / rays;
  s.range_min = 0.12;
  s.range_max = range_max;
  const double step = g.resolution / 4.0;
  for (int i = 0; i < rays; ++i) {
    const double a = p.yaw + s.angle_min + i * s.angle_increment;
    double r = s.range_min;
    double hit = std::numeric_limits<double>::infinity();
    for (; r < range_max; r += step) {
      if (g.occupied_at(p.x + r * std::cos(a), p.y + r * std::sin(a))) {
        hit = r;
        break;
      }
    }
    s.ranges.push_back(hit);
  }
  return s;
}

// A wall clock the test moves by hand.
struct FakeWall {
  int64_t ns = 1'000'000'000;
  WallNow fn() {
    return [this] { return SimTime::from_ns(ns); };
  }
  void advance(Duration d) { ns += d.ns(); }
};

}  // namespace fieldproof::stacks::testing
