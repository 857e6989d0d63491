#include "fieldproof/stacks/costmap.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace fieldproof::stacks {

Status InflationOptions::validate() const {
  if (!std::isfinite(robot_radius) || robot_radius < 0) {
    return Status(StatusCode::kInvalidArgument,
                  "inflation.robot_radius must be a finite number >= 0 (metres)");
  }
  if (!std::isfinite(margin) || margin < 0) {
    return Status(StatusCode::kInvalidArgument,
                  "inflation.margin must be a finite number >= 0 (metres)");
  }
  return {};
}

Result<Costmap> Costmap::build(const world::OccupancyGrid& grid, const InflationOptions& options) {
  if (Status s = options.validate(); !s.ok()) return s;
  if (!std::isfinite(grid.resolution) || grid.resolution <= 0) {
    return Status(StatusCode::kInvalidArgument, "occupancy grid: resolution must be > 0");
  }
  if (!std::isfinite(grid.origin_x) || !std::isfinite(grid.origin_y)) {
    return Status(StatusCode::kInvalidArgument, "occupancy grid: origin must be finite");
  }
  if (grid.width <= 0 || grid.height <= 0 ||
      grid.cells.size() != static_cast<size_t>(grid.width) * static_cast<size_t>(grid.height)) {
    std::ostringstream os;
    os << "occupancy grid: " << grid.width << " x " << grid.height << " cells declared but "
       << grid.cells.size() << " values given";
    return Status(StatusCode::kInvalidArgument, os.str());
  }
  Costmap cm;
  cm.resolution_ = grid.resolution;
  cm.origin_x_ = grid.origin_x;
  cm.origin_y_ = grid.origin_y;
  cm.width_ = grid.width;
  cm.height_ = grid.height;
  cm.options_ = options;
  cm.cost_.assign(grid.cells.size(), kFree);

  // The disk of cells around an obstacle cell. Distances are between cell centres; half a cell
  // is added to the radius because the obstacle fills its whole cell, not just its centre.
  const double res = grid.resolution;
  const double lethal_r = options.robot_radius + 0.5 * res;
  const double outer_r = lethal_r + options.margin;
  const int reach = static_cast<int>(std::ceil(outer_r / res));
  for (int dy = -reach; dy <= reach; ++dy) {
    for (int dx = -reach; dx <= reach; ++dx) {
      if (dx == 0 && dy == 0) continue;
      const double d = std::sqrt(static_cast<double>(dx * dx + dy * dy)) * res;
      uint8_t c = kFree;
      if (d < lethal_r) {
        c = kLethal;
      } else if (d < outer_r && options.margin > 0) {
        const double f = 1.0 - (d - lethal_r) / options.margin;  // 1 at the lethal edge, 0 outside
        c = static_cast<uint8_t>(std::clamp(std::lround(f * kMaxCaution), 1L, 252L));
      }
      if (c != kFree) cm.stamps_.push_back({dx, dy, c});
    }
  }

  const auto occupied = [&](int x, int y) {
    return grid.in_bounds(x, y) && grid.at(x, y) != world::OccupancyGrid::kFree;
  };
  for (int y = 0; y < grid.height; ++y) {
    for (int x = 0; x < grid.width; ++x) {
      if (!occupied(x, y)) continue;
      cm.cost_[static_cast<size_t>(y) * grid.width + x] = kObstacle;
      // Cells whose four neighbours are all occupied add nothing: their disk is covered by the
      // disks of the boundary cells around them.
      if (occupied(x - 1, y) && occupied(x + 1, y) && occupied(x, y - 1) && occupied(x, y + 1)) {
        continue;
      }
      cm.stamp({x, y});
    }
  }
  return cm;
}

void Costmap::stamp(Cell c) {
  for (const Stamp& s : stamps_) {
    const int x = c.x + s.dx;
    const int y = c.y + s.dy;
    if (x < 0 || y < 0 || x >= width_ || y >= height_) continue;
    uint8_t& v = cost_[static_cast<size_t>(y) * width_ + x];
    v = std::max(v, s.cost);
  }
}

void Costmap::add_obstacle(Cell c) {
  if (!in_bounds(c)) return;
  uint8_t& v = cost_[static_cast<size_t>(c.y) * width_ + c.x];
  if (v == kObstacle) return;
  v = kObstacle;
  stamp(c);
}

std::optional<Cell> Costmap::cell_of(Point2 p) const {
  const double fx = std::floor((p.x - origin_x_) / resolution_);
  const double fy = std::floor((p.y - origin_y_) / resolution_);
  if (!(fx >= 0 && fy >= 0 && fx < width_ && fy < height_)) return std::nullopt;
  return Cell{static_cast<int>(fx), static_cast<int>(fy)};
}

uint8_t Costmap::cost_at(Point2 p) const {
  const auto c = cell_of(p);
  return c ? cost(*c) : kObstacle;
}

}  // namespace fieldproof::stacks
