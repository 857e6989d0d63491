// Seconds as a double, from the integer time types (duration.hpp): the one conversion the parts
// share, for the two places the design lets a time be a double: what is printed (a reason, a
// JSON field) and a formula that needs seconds (a rate, a speed), converted at that point.
//
//   const double speed = distance_m / to_seconds(t - t_last);
//   j["sim_s"] = to_seconds(sample.sim);
//
// The value is ns / 1e9 (the division every part made with its own helper before), so figures
// stay bit-identical. An infinity is not mapped to a floating infinity: check is_infinite() first
// where one can occur.
#pragma once

#include "fieldproof/time/duration.hpp"

namespace fieldproof {

constexpr double to_seconds(Duration d) { return static_cast<double>(d.ns()) / 1e9; }
constexpr double to_seconds(SimTime t) { return static_cast<double>(t.ns()) / 1e9; }

}  // namespace fieldproof
