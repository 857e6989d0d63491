// Helpers shared by the assertion types (internal to the assertions part).
#pragma once

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "fieldproof/time/duration.hpp"

namespace fieldproof::assertions::detail {

// Rounds to a decimal unit (1e-3, 1e-4) without binary noise in the printed value.
inline double round_to(double v, double unit) {
  const double scale = std::round(1.0 / unit);
  return std::round(v * scale) / scale;
}
inline SimTime sim_at(double t) {
  return SimTime::from_ns(static_cast<int64_t>(std::llround(t * 1e9)));
}
inline double sim_s(SimTime t) { return static_cast<double>(t.ns()) / 1e9; }
inline std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}
// "2.5 s", "1 s", "0.125 s".
inline std::string seconds_text(double s) {
  std::string t = fmt("%.3f", s);
  while (t.back() == '0') t.pop_back();
  if (t.back() == '.') t.pop_back();
  return t + " s";
}
inline nlohmann::json metric(double value, const char* unit) {
  return {{"value", value}, {"unit", unit}};
}

}  // namespace fieldproof::assertions::detail
