// example.visits_waypoints: the vehicle's ground-truth pose visits every waypoint of a list, in
// any order (seed 004, "Writing a plugin"). The type and its checker are plain C++ on the
// assertion API (fieldproof/assertions/checker.hpp); plugin.cpp only registers them, so the tests
// use them directly.
//
//   scenario::TypeSpec spec = visits_waypoints_spec();          // what the scenario may write
//   auto type = make_visits_waypoints_type();                   // plan() and checker()
#pragma once

#include <memory>

#include "fieldproof/assertions/checker.hpp"
#include "fieldproof/scenario/registry.hpp"

namespace fieldproof_example {

inline constexpr const char* kVisitsWaypoints = "example.visits_waypoints";

// The parameter table: vehicle, waypoints (placements, one or more), tolerance_m (0.5),
// within_s (optional deadline); metrics visited and completed_at_s.
fieldproof::scenario::TypeSpec visits_waypoints_spec();

std::unique_ptr<fieldproof::assertions::AssertionType> make_visits_waypoints_type();

}  // namespace fieldproof_example
