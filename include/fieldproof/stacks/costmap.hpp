// The planner's cost grid: the world's static occupancy grid with every obstacle inflated by the
// robot's radius (lethal: the body would touch it) plus a margin (caution: passable at a price).
// Pure and deterministic; no threads, no wall clock.
//
//   world::OccupancyGrid g = world.occupancy_grid(0.05);
//   auto cm = stacks::Costmap::build(g, {.robot_radius = 0.35, .margin = 0.15});
//   if (!cm.ok()) return cm.status().message();
//   uint8_t c = cm->cost({12, 30});          // kFree .. kObstacle
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fieldproof/stacks/types.hpp"
#include "fieldproof/time/duration.hpp"
#include "fieldproof/util/status.hpp"
#include "fieldproof/world/occupancy_grid.hpp"

namespace fieldproof::stacks {

struct Cell {
  int x = 0;
  int y = 0;
  auto operator<=>(const Cell&) const = default;
};

// Cost values of a cell.
inline constexpr uint8_t kFree = 0;
inline constexpr uint8_t kMaxCaution = 252;  // 1..252: within the margin, higher is closer
inline constexpr uint8_t kLethal = 253;      // the robot's centre here puts its body on an obstacle
inline constexpr uint8_t kObstacle = 254;    // an occupied cell of the map (or a scan hit)

struct InflationOptions {
  double robot_radius = 0.36;  // m: circumscribed radius of the footprint (0.6 x 0.4 m chassis)
  double margin = 0.15;        // m: caution band beyond the radius, cost decays to 0 across it
  // OK when valid, otherwise kInvalidArgument saying what is wrong with which field.
  [[nodiscard]] Status validate() const;
};

class Costmap {
 public:
  // Inflates `grid`. An error message (never an exception) for a malformed grid (non-positive
  // resolution, cells.size() != width*height) or invalid options.
  static Result<Costmap> build(const world::OccupancyGrid& grid, const InflationOptions& options);

  int width() const { return width_; }
  int height() const { return height_; }
  double resolution() const { return resolution_; }
  double origin_x() const { return origin_x_; }
  double origin_y() const { return origin_y_; }
  const InflationOptions& options() const { return options_; }

  bool in_bounds(Cell c) const { return c.x >= 0 && c.y >= 0 && c.x < width_ && c.y < height_; }
  // kObstacle outside the grid.
  uint8_t cost(Cell c) const {
    return in_bounds(c) ? cost_[static_cast<size_t>(c.y) * width_ + c.x] : kObstacle;
  }
  // The cell holding a world point; nullopt outside the grid (or for a NaN).
  std::optional<Cell> cell_of(Point2 p) const;
  Point2 center(Cell c) const {
    return {origin_x_ + (c.x + 0.5) * resolution_, origin_y_ + (c.y + 0.5) * resolution_};
  }
  // Cost at a world point; kObstacle outside the grid.
  uint8_t cost_at(Point2 p) const;

  // Marks an obstacle (e.g. a scan hit) and inflates it like the map's; costs only ever grow.
  // Out-of-grid cells are ignored.
  void add_obstacle(Cell c);

 private:
  struct Stamp {
    int dx;
    int dy;
    uint8_t cost;
  };
  void stamp(Cell c);

  double resolution_ = 0.05;
  double origin_x_ = 0.0;
  double origin_y_ = 0.0;
  int width_ = 0;
  int height_ = 0;
  InflationOptions options_;
  std::vector<Stamp> stamps_;  // the inflation disk around an obstacle cell
  std::vector<uint8_t> cost_;
};

}  // namespace fieldproof::stacks
