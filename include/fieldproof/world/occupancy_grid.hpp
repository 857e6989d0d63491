// A 2-D occupancy grid of the world's static collision shapes, for planners.
//
// Cells are row-major, row 0 at the origin's y: cell (ix, iy) covers
// [origin_x + ix*resolution, origin_x + (ix+1)*resolution) × the same in y, and its value is
// kOccupied when any static collision shape (box, cylinder, sphere, cut at the vehicles' plane)
// overlaps that square, kFree otherwise. The grid is axis-aligned with the world frame.
//
//   fieldproof::world::OccupancyGrid g = world.occupancy_grid(0.05);   // 5 cm cells
//   if (g.occupied_at(3.0, -1.2)) { ... }
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace fieldproof::world {

// A rectangle of the world frame (metres), min < max on both axes: what a map covers.
struct MapBounds {
  double min_x = 0.0;
  double min_y = 0.0;
  double max_x = 0.0;
  double max_y = 0.0;
};

struct OccupancyGrid {
  static constexpr uint8_t kFree = 0;
  static constexpr uint8_t kOccupied = 100;

  double resolution = 0.05;    // metres per cell (> 0)
  double origin_x = 0.0;       // world x of the lower-left corner of cell (0, 0)
  double origin_y = 0.0;       // world y of the lower-left corner of cell (0, 0)
  int width = 0;               // cells along x
  int height = 0;              // cells along y
  std::vector<uint8_t> cells;  // width * height values, index = iy * width + ix

  bool in_bounds(int ix, int iy) const { return ix >= 0 && iy >= 0 && ix < width && iy < height; }
  uint8_t at(int ix, int iy) const { return cells[static_cast<size_t>(iy) * width + ix]; }
  // The cell holding world point (x, y); false when outside the grid.
  bool cell_of(double x, double y, int* ix, int* iy) const {
    const double fx = std::floor((x - origin_x) / resolution);
    const double fy = std::floor((y - origin_y) / resolution);
    if (!(fx >= 0 && fy >= 0 && fx < width && fy < height)) return false;
    *ix = static_cast<int>(fx);
    *iy = static_cast<int>(fy);
    return true;
  }
  // True for points inside an occupied cell; points outside the grid count as occupied.
  bool occupied_at(double x, double y) const {
    int ix = 0, iy = 0;
    if (!cell_of(x, y, &ix, &iy)) return true;
    return at(ix, iy) != kFree;
  }
  // World coordinates of the centre of cell (ix, iy).
  double center_x(int ix) const { return origin_x + (ix + 0.5) * resolution; }
  double center_y(int iy) const { return origin_y + (iy + 0.5) * resolution; }
};

}  // namespace fieldproof::world
