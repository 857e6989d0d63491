// The pace regulator: how far the grant may go given the wall time, for a maximum real-time
// factor. One anchor (sim, wall) and two pure conversions; every rate change and every resume
// re-anchors first, so nothing accumulates and nothing drifts (STYLE.md).
//
//   PaceRegulator pace(2.0);                       // at most 2x real time
//   pace.anchor(SimTime::zero(), wall);            // start
//   SimTime cap = pace.limit(wall + seconds(1));   // 2 s
//   SimTime w = pace.wall_at(SimTime::from_ns(3'000'000'000));   // wall + 1.5 s
//
// Guarantee: between anchors, limit(w) - anchor_sim <= max_rtf x (w - anchor_wall); paused wall
// time is never counted because a pause freezes the limit and the resume re-anchors at the grant.
// Wall time is always passed in (injected): this class reads no clock.
#pragma once

#include "fieldproof/time/duration.hpp"

namespace fieldproof::lockstep {

class PaceRegulator {
 public:
  // max_rtf <= 0: unlimited.
  explicit PaceRegulator(double max_rtf = 0.0) { set_rate_value(max_rtf); }

  bool unlimited() const { return max_rtf_ <= 0.0; }
  double max_rtf() const { return max_rtf_; }
  bool paused() const { return paused_; }

  // Sets the anchor: at wall time `wall` the simulated time is `sim`.
  void anchor(SimTime sim, SimTime wall) {
    anchor_sim_ = sim;
    anchor_wall_ = wall;
  }
  // Changes the rate at run time: re-anchors at (sim, wall) first.
  void set_max_rtf(double max_rtf, SimTime sim, SimTime wall) {
    anchor(sim, wall);
    set_rate_value(max_rtf);
  }
  // Freezes the limit at `sim` (the current grant).
  void pause(SimTime sim) {
    paused_ = true;
    anchor_sim_ = sim;
  }
  // Unfreezes, re-anchoring at (sim, wall).
  void resume(SimTime sim, SimTime wall) {
    paused_ = false;
    anchor(sim, wall);
  }

  // The largest simulated time allowed at wall time `wall`: infinite when unlimited, the anchor
  // while paused or when `wall` is before the anchor.
  SimTime limit(SimTime wall) const;
  // The earliest wall time at which limit() >= sim; infinite while paused; the anchor's wall time
  // when unlimited or sim is at or before the anchor.
  SimTime wall_at(SimTime sim) const;

 private:
  void set_rate_value(double r) { max_rtf_ = r > 0.0 ? r : 0.0; }
  double max_rtf_ = 0.0;
  bool paused_ = false;
  SimTime anchor_sim_;
  SimTime anchor_wall_;
};

// Measured real-time factor: simulated time elapsed over unpaused wall time elapsed since
// start(). 0 before any wall time elapsed.
class RtfMeter {
 public:
  void start(SimTime sim, SimTime wall) {
    start_sim_ = sim;
    start_wall_ = wall;
    paused_total_ = Duration::zero();
    started_ = true;
  }
  void pause(SimTime wall) {
    if (!paused_) pause_wall_ = wall;
    paused_ = true;
  }
  void resume(SimTime wall) {
    if (paused_) paused_total_ += wall - pause_wall_;
    paused_ = false;
  }
  bool started() const { return started_; }
  double rtf(SimTime sim, SimTime wall) const;

 private:
  bool started_ = false;
  bool paused_ = false;
  SimTime start_sim_;
  SimTime start_wall_;
  SimTime pause_wall_;
  Duration paused_total_;
};

}  // namespace fieldproof::lockstep
