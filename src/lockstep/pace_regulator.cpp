#include "fieldproof/lockstep/pace_regulator.hpp"

#include <cmath>
#include <cstdint>

namespace fieldproof::lockstep {

namespace {
constexpr long double kMaxNs = static_cast<long double>(INT64_MAX);

int64_t clamp_ns(long double v) {
  if (v >= kMaxNs) return INT64_MAX;
  if (v <= -kMaxNs) return INT64_MIN + 1;
  return static_cast<int64_t>(v);
}
}  // namespace

SimTime PaceRegulator::limit(SimTime wall) const {
  if (unlimited()) return SimTime::infinite();
  if (paused_ || wall <= anchor_wall_) return anchor_sim_;
  const Duration dw = wall - anchor_wall_;
  if (dw.is_infinite()) return SimTime::infinite();
  const int64_t ds = clamp_ns(std::floor(static_cast<long double>(dw.ns()) * max_rtf_));
  return anchor_sim_ + Duration::from_ns(ds);
}

SimTime PaceRegulator::wall_at(SimTime sim) const {
  if (paused_) return SimTime::infinite();
  if (unlimited() || sim <= anchor_sim_) return anchor_wall_;
  if (sim.is_infinite()) return SimTime::infinite();
  const Duration ds = sim - anchor_sim_;
  int64_t dw = clamp_ns(std::ceil(static_cast<long double>(ds.ns()) / max_rtf_));
  SimTime w = anchor_wall_ + Duration::from_ns(dw);
  // Floating point rounding: make sure the limit really reaches sim at w, and not one ns earlier.
  while (limit(w) < sim && !w.is_infinite()) w += Duration::from_ns(1);
  while (w > anchor_wall_ && limit(w - Duration::from_ns(1)) >= sim) w = w - Duration::from_ns(1);
  return w;
}

double RtfMeter::rtf(SimTime sim, SimTime wall) const {
  if (!started_) return 0.0;
  Duration paused = paused_total_;
  if (paused_) paused += wall - pause_wall_;
  const Duration wall_elapsed = (wall - start_wall_) - paused;
  if (wall_elapsed <= Duration::zero()) return 0.0;
  const Duration sim_elapsed = sim - start_sim_;
  return static_cast<double>(sim_elapsed.ns()) / static_cast<double>(wall_elapsed.ns());
}

}  // namespace fieldproof::lockstep
