// The clock monitor: what the run's clock did over the timeline (docs/scenarios.md, "What every
// mode records"): one-second metrics windows of the real-time factor, violations of target ±
// tolerance, the drift of simulated against wall time with held (paused) time left out, and in
// realtime mode the verdict locked / drifted. run.json's clock is record().
//
//   ClockMonitor cm(options);
//   cm.start(SimTime::zero(), wall_now());          // the timeline's origin
//   if (auto w = cm.observe(engine.now(), wall_now(), timeline.held())) { ... w->rtf ... }
//   cm.finish(engine.now(), wall_now());
//   run["clock"] = cm.record(lockstep_stats);
//
// A window closes once a second of simulated time has passed since the last one (on the
// simulated-second grid from the origin), or, while the world is held, once a second of wall
// time has (so a paused world still has windows, whose factor is about 0: the `when: {metric:
// rtf}` trigger sees the pause). Windows that overlap a hold are left out of rtf's statistics and
// the violations (a pause is asked for, not a failure of the pace); in lockstep windows are never
// violations (the acknowledgements pace them) and when the run is unpaced (pace 0) there is no
// target to miss. drift_s = simulated seconds - target_rtf x (wall seconds - held seconds) since
// the origin. Not thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fieldproof/scenario/scenario.hpp"
#include "fieldproof/time/duration.hpp"

namespace fieldproof::engine {

struct ClockMonitorOptions {
  scenario::TimeSection time;  // mode, tolerance, max_drift, on_drift, step
  double target_rtf = 1.0;
  double pace = 1.0;  // the pace cap in force (0: unpaced)
  Duration physics_step = milliseconds(1);
  Duration window = seconds(1);
};

// One closed metrics window.
struct ClockWindow {
  SimTime sim;             // the window's end (simulated)
  double wall_s = 0.0;     // wall seconds since the origin at its end
  double rtf = 0.0;        // simulated / wall over the window
  double drift_s = 0.0;    // at its end
  bool held = false;       // the world was held during (part of) it
  bool violation = false;  // outside target ± tolerance (counted)
};

// Lock-step counters the engine collects (lockstep mode only).
struct LockstepStats {
  std::vector<std::string> vehicles;
  uint64_t steps = 0;     // steps of step_s the world took
  uint64_t holds = 0;     // how often the stepping waited for the engine (entries at a due time)
  Duration max_wait;      // the longest wall wait for the acknowledgements of a step
  uint64_t commands = 0;  // clock commands the engine sent
  // The step nobody acknowledged: {step, sim_s, reason}; null when none.
  nlohmann::json timeout;
};

class ClockMonitor {
 public:
  explicit ClockMonitor(ClockMonitorOptions options);

  void start(SimTime sim, SimTime wall);
  // Called at each wake of the engine; returns the window that closed, if one did.
  std::optional<ClockWindow> observe(SimTime sim, SimTime wall, bool held);
  // Wall time held outside the timeline's own holds (e.g. `fieldproof clock pause`).
  void add_paused(Duration d);
  // The coordinator's total paused wall time so far (Session::paused_wall(): the timeline's holds
  // and `fieldproof clock pause`, a sim.step's advance left out). Once given, it is the paused
  // time of the drift and of paused_s; a window during which it grew counts as held.
  void set_paused_wall(Duration total);
  // The end of the timeline: the final drift.
  void finish(SimTime sim, SimTime wall, Duration held_wall);

  double drift_s() const { return drift_s_; }
  double max_abs_drift_s() const { return max_abs_drift_s_; }
  uint64_t violations() const { return violations_; }
  uint64_t windows() const { return windows_; }
  // realtime: whether the drift stayed within max_drift_s.
  bool locked() const;
  // run.json's clock (lockstep filled in lockstep mode).
  nlohmann::json record(const LockstepStats& lockstep) const;

 private:
  double drift_at(SimTime sim, SimTime wall) const;

  ClockMonitorOptions o_;
  SimTime origin_sim_;
  SimTime origin_wall_;
  SimTime last_sim_;
  SimTime last_wall_;
  SimTime next_sim_;
  SimTime end_sim_;
  SimTime end_wall_;
  bool window_held_ = false;
  bool held_ = false;
  SimTime held_since_;
  Duration held_total_;
  Duration extra_paused_;
  std::optional<Duration> paused_wall_;  // the coordinator's, when known
  uint64_t windows_ = 0;                 // windows counted in the rtf statistics
  uint64_t all_windows_ = 0;
  uint64_t violations_ = 0;
  double rtf_sum_ = 0.0;
  double rtf_min_ = 0.0;
  double rtf_max_ = 0.0;
  double drift_s_ = 0.0;
  double max_abs_drift_s_ = 0.0;
};

}  // namespace fieldproof::engine
