// The grid planner: A* over a Costmap, 8-connected (no corner cutting), with the octile distance
// as its admissible heuristic, ties broken deterministically (lower f, then lower h, then lower
// cell index), followed by line-of-sight shortcutting. Pure and deterministic.
//
//   auto r = stacks::plan_path(costmap, {0.5, 0.5}, {8.0, 3.0});
//   if (!r.ok()) std::puts(r.reason.c_str());      // e.g. "no path from (0.50, 0.50) to ..."
//   for (Point2 p : r.path) ...                       // start, waypoints, goal (world metres)
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "fieldproof/stacks/costmap.hpp"
#include "fieldproof/stacks/types.hpp"
#include "fieldproof/util/status.hpp"

namespace fieldproof::stacks {

struct PlannerOptions {
  // A step through a caution cell of cost c costs length * (1 + caution_weight * c / 252): the
  // planner keeps its distance from obstacles when a detour is cheap. >= 0.
  double caution_weight = 3.0;
  // A start inside the lethal band (the inflation is conservative: a circle around a rectangle)
  // may leave it through lethal (never obstacle) cells within this distance of the start, m.
  double escape_distance = 0.6;
  // Bound on the cells expanded; 0 for no bound. Running out is reported as no path.
  size_t max_expansions = 0;
  bool shortcut = true;  // smooth the grid path by line-of-sight shortcuts
  [[nodiscard]] Status validate() const;
};

enum class PlanError : uint8_t {
  kNone,
  kStartOutsideMap,
  kGoalOutsideMap,
  kStartInObstacle,
  kGoalInObstacle,
  kNoPath,
};

struct PlanResult {
  PlanError error = PlanError::kNone;
  std::string reason;        // empty on success
  std::vector<Cell> cells;   // the raw A* path, start to goal
  std::vector<Point2> path;  // start point, shortcut waypoints (cell centres), goal point
  double cost = 0.0;         // A* cost of `cells`, in metres (weighted)
  size_t expansions = 0;
  bool ok() const { return error == PlanError::kNone; }
};

// A* between two cells. Returns the cells from start to goal (both included) or an empty vector.
// `cost` receives the path's cost in cells (1 per straight step, sqrt 2 per diagonal, times the
// caution factor). The goal must not be lethal; the start may be (see escape_distance).
std::vector<Cell> astar(const Costmap& map, Cell start, Cell goal, const PlannerOptions& options,
                        double* cost = nullptr, size_t* expansions = nullptr);

// Drops the cells a straight segment can skip: a segment may replace a stretch of the path when
// every cell it crosses costs no more than the most expensive cell of that stretch.
std::vector<Cell> shortcut(const Costmap& map, const std::vector<Cell>& cells);

// The whole planning step between world points: checks both ends, runs A*, shortcuts.
PlanResult plan_path(const Costmap& map, Point2 start, Point2 goal,
                     const PlannerOptions& options = {});

// Length of a polyline, metres.
double path_length(const std::vector<Point2>& path);

}  // namespace fieldproof::stacks
