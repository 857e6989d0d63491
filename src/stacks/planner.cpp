#include "fieldproof/stacks/planner.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <queue>

namespace fieldproof::stacks {
namespace {

constexpr double kSqrt2 = 1.4142135623730951;

std::string fmt_point(Point2 p) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "(%.2f, %.2f)", p.x, p.y);
  return buf;
}

std::string map_extent(const Costmap& m) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "[%.2f, %.2f] x [%.2f, %.2f]", m.origin_x(),
                m.origin_x() + m.width() * m.resolution(), m.origin_y(),
                m.origin_y() + m.height() * m.resolution());
  return buf;
}

double octile(Cell a, Cell b) {
  const double dx = std::abs(a.x - b.x);
  const double dy = std::abs(a.y - b.y);
  return std::max(dx, dy) + (kSqrt2 - 1.0) * std::min(dx, dy);
}

struct OpenEntry {
  double f;
  double h;
  int64_t index;
};

// std::priority_queue pops the largest: "larger" here means worse (higher f, then h, then index).
struct Worse {
  bool operator()(const OpenEntry& a, const OpenEntry& b) const {
    if (a.f != b.f) return a.f > b.f;
    if (a.h != b.h) return a.h > b.h;
    return a.index > b.index;
  }
};

}  // namespace

Status PlannerOptions::validate() const {
  if (!std::isfinite(caution_weight) || caution_weight < 0) {
    return Status(StatusCode::kInvalidArgument,
                  "planner.caution_weight must be a finite number >= 0");
  }
  if (!std::isfinite(escape_distance) || escape_distance < 0) {
    return Status(StatusCode::kInvalidArgument,
                  "planner.escape_distance must be a finite number >= 0 (metres)");
  }
  return {};
}

std::vector<Cell> astar(const Costmap& map, Cell start, Cell goal, const PlannerOptions& options,
                        double* cost_out, size_t* expansions_out) {
  if (expansions_out) *expansions_out = 0;
  if (!map.in_bounds(start) || !map.in_bounds(goal) || map.cost(goal) >= kLethal) return {};
  const int w = map.width();
  const size_t n = static_cast<size_t>(w) * static_cast<size_t>(map.height());
  const double esc_cells = options.escape_distance / map.resolution();
  const double esc2 = esc_cells * esc_cells;

  // Multiplier of a step's length when entering cell c; a negative value means impassable.
  const auto factor = [&](Cell c) -> double {
    const uint8_t v = map.cost(c);
    if (v == kObstacle) return -1.0;
    if (v == kLethal) {
      const double dx = c.x - start.x;
      const double dy = c.y - start.y;
      if (dx * dx + dy * dy > esc2) return -1.0;
      return 1.0 + options.caution_weight;
    }
    return 1.0 + options.caution_weight * static_cast<double>(v) / kMaxCaution;
  };
  const auto index = [w](Cell c) { return static_cast<int64_t>(c.y) * w + c.x; };

  std::vector<double> g(n, std::numeric_limits<double>::infinity());
  std::vector<int64_t> parent(n, -1);
  std::vector<uint8_t> closed(n, 0);
  std::priority_queue<OpenEntry, std::vector<OpenEntry>, Worse> open;
  g[index(start)] = 0.0;
  open.push({octile(start, goal), octile(start, goal), index(start)});

  static constexpr int kDx[8] = {1, -1, 0, 0, 1, 1, -1, -1};
  static constexpr int kDy[8] = {0, 0, 1, -1, 1, -1, 1, -1};
  size_t expansions = 0;
  bool found = false;
  while (!open.empty()) {
    const OpenEntry top = open.top();
    open.pop();
    if (closed[top.index]) continue;
    closed[top.index] = 1;
    ++expansions;
    const Cell c{static_cast<int>(top.index % w), static_cast<int>(top.index / w)};
    if (c == goal) {
      found = true;
      break;
    }
    if (options.max_expansions != 0 && expansions >= options.max_expansions) break;
    for (int k = 0; k < 8; ++k) {
      const Cell nb{c.x + kDx[k], c.y + kDy[k]};
      if (!map.in_bounds(nb)) continue;
      const int64_t ni = index(nb);
      if (closed[ni]) continue;
      const double fac = factor(nb);
      if (fac < 0) continue;
      double len = 1.0;
      if (k >= 4) {
        // No corner cutting: both cells beside a diagonal step must be passable too.
        if (factor({c.x + kDx[k], c.y}) < 0 || factor({c.x, c.y + kDy[k]}) < 0) continue;
        len = kSqrt2;
      }
      const double ng = g[top.index] + len * fac;
      if (ng < g[ni]) {
        g[ni] = ng;
        parent[ni] = top.index;
        const double h = octile(nb, goal);
        open.push({ng + h, h, ni});
      }
    }
  }
  if (expansions_out) *expansions_out = expansions;
  if (!found) return {};
  std::vector<Cell> path;
  for (int64_t i = index(goal); i != -1; i = parent[i]) {
    path.push_back({static_cast<int>(i % w), static_cast<int>(i / w)});
  }
  std::reverse(path.begin(), path.end());
  if (cost_out) *cost_out = g[index(goal)];
  return path;
}

namespace {

// True when the straight segment between the centres of a and b crosses only cells costing at
// most `limit` (never lethal), its two end cells aside (they are on the path already).
bool line_of_sight(const Costmap& map, Cell a, Cell b, uint8_t limit) {
  const Point2 pa = map.center(a);
  const Point2 pb = map.center(b);
  const double len = std::hypot(pb.x - pa.x, pb.y - pa.y);
  const int steps = std::max(1, static_cast<int>(std::ceil(len / (0.25 * map.resolution()))));
  for (int i = 0; i <= steps; ++i) {
    const double t = static_cast<double>(i) / steps;
    const auto c = map.cell_of({pa.x + t * (pb.x - pa.x), pa.y + t * (pb.y - pa.y)});
    if (!c) return false;
    if (*c == a || *c == b) continue;
    const uint8_t v = map.cost(*c);
    if (v >= kLethal || v > limit) return false;
  }
  return true;
}

}  // namespace

std::vector<Cell> shortcut(const Costmap& map, const std::vector<Cell>& cells) {
  if (cells.size() <= 2) return cells;
  std::vector<Cell> out{cells.front()};
  size_t anchor = 0;
  while (anchor + 1 < cells.size()) {
    uint8_t limit = map.cost(cells[anchor]);
    size_t last_ok = anchor + 1;
    limit = std::max(limit, map.cost(cells[anchor + 1]));
    for (size_t j = anchor + 2; j < cells.size(); ++j) {
      // A shortcut never crosses the lethal band (the escape route near the start is walked
      // cell by cell), however costly the stretch it replaces.
      const uint8_t lj = std::min(std::max(limit, map.cost(cells[j])), kMaxCaution);
      if (!line_of_sight(map, cells[anchor], cells[j], lj)) break;
      limit = lj;
      last_ok = j;
    }
    out.push_back(cells[last_ok]);
    anchor = last_ok;
  }
  return out;
}

double path_length(const std::vector<Point2>& path) {
  double len = 0.0;
  for (size_t i = 1; i < path.size(); ++i) {
    len += std::hypot(path[i].x - path[i - 1].x, path[i].y - path[i - 1].y);
  }
  return len;
}

PlanResult plan_path(const Costmap& map, Point2 start, Point2 goal, const PlannerOptions& options) {
  PlanResult r;
  if (Status s = options.validate(); !s.ok()) {
    r.error = PlanError::kNoPath;
    r.reason = s.message();
    return r;
  }
  const auto sc = map.cell_of(start);
  if (!sc) {
    r.error = PlanError::kStartOutsideMap;
    r.reason = "start " + fmt_point(start) + " is outside the map " + map_extent(map);
    return r;
  }
  const auto gc = map.cell_of(goal);
  if (!gc) {
    r.error = PlanError::kGoalOutsideMap;
    r.reason = "goal " + fmt_point(goal) + " is outside the map " + map_extent(map);
    return r;
  }
  if (map.cost(*sc) == kObstacle) {
    r.error = PlanError::kStartInObstacle;
    r.reason = "start " + fmt_point(start) + " is inside an obstacle";
    return r;
  }
  if (map.cost(*gc) == kObstacle) {
    r.error = PlanError::kGoalInObstacle;
    r.reason = "goal " + fmt_point(goal) + " is inside an obstacle";
    return r;
  }
  if (map.cost(*gc) == kLethal) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f", map.options().robot_radius);
    r.error = PlanError::kGoalInObstacle;
    r.reason = "goal " + fmt_point(goal) + " is within " + buf +
               " m (the robot's radius) of an obstacle: the robot cannot stand there";
    return r;
  }
  r.cells = astar(map, *sc, *gc, options, &r.cost, &r.expansions);
  if (r.cells.empty()) {
    r.error = PlanError::kNoPath;
    r.reason = "no path from " + fmt_point(start) + " to " + fmt_point(goal);
    return r;
  }
  r.cost *= map.resolution();
  const std::vector<Cell> way = options.shortcut ? shortcut(map, r.cells) : r.cells;
  r.path.push_back(start);
  for (size_t i = 1; i + 1 < way.size(); ++i) r.path.push_back(map.center(way[i]));
  r.path.push_back(goal);
  return r;
}

}  // namespace fieldproof::stacks
