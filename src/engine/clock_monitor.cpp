#include "fieldproof/engine/clock_monitor.hpp"
#include "fieldproof/time/seconds.hpp"

#include <algorithm>
#include <cmath>

namespace fieldproof::engine {

using nlohmann::json;

namespace {
double round3(double v) { return std::round(v * 1e3) / 1e3; }
}  // namespace

ClockMonitor::ClockMonitor(ClockMonitorOptions options) : o_(std::move(options)) {}

void ClockMonitor::start(SimTime sim, SimTime wall) {
  origin_sim_ = last_sim_ = end_sim_ = sim;
  origin_wall_ = last_wall_ = end_wall_ = wall;
  next_sim_ = sim + o_.window;
}

void ClockMonitor::add_paused(Duration d) { extra_paused_ = extra_paused_ + d; }

void ClockMonitor::set_paused_wall(Duration total) {
  if (paused_wall_ && total > *paused_wall_) window_held_ = true;
  paused_wall_ = total;
}

double ClockMonitor::drift_at(SimTime sim, SimTime wall) const {
  Duration held = held_total_ + extra_paused_;
  if (held_) held = held + (wall - held_since_);
  if (paused_wall_) held = *paused_wall_ + extra_paused_;
  return to_seconds(sim - origin_sim_) -
         o_.target_rtf * (to_seconds(wall - origin_wall_) - to_seconds(held));
}

std::optional<ClockWindow> ClockMonitor::observe(SimTime sim, SimTime wall, bool held) {
  if (held != held_) {
    if (held) {
      held_since_ = wall;
    } else {
      held_total_ = held_total_ + (wall - held_since_);
    }
    held_ = held;
    window_held_ = true;
  }
  if (held) window_held_ = true;
  const bool by_sim = sim >= next_sim_;
  const bool by_wall = held && wall - last_wall_ >= o_.window;
  if (!by_sim && !by_wall) return std::nullopt;
  ClockWindow w;
  w.sim = sim;
  w.wall_s = to_seconds(wall - origin_wall_);
  const double dw = to_seconds(wall - last_wall_);
  w.rtf = dw > 0 ? to_seconds(sim - last_sim_) / dw : 0.0;
  w.drift_s = drift_at(sim, wall);
  w.held = window_held_;
  ++all_windows_;
  if (!w.held && dw > 0) {
    if (windows_ == 0) {
      rtf_min_ = rtf_max_ = w.rtf;
    } else {
      rtf_min_ = std::min(rtf_min_, w.rtf);
      rtf_max_ = std::max(rtf_max_, w.rtf);
    }
    ++windows_;
    rtf_sum_ += w.rtf;
    if (o_.time.mode != scenario::TimeMode::kLockstep && o_.pace > 0 &&
        std::abs(w.rtf - o_.target_rtf) > o_.time.tolerance) {
      w.violation = true;
      ++violations_;
    }
  }
  drift_s_ = w.drift_s;
  max_abs_drift_s_ = std::max(max_abs_drift_s_, std::abs(w.drift_s));
  last_sim_ = sim;
  last_wall_ = wall;
  window_held_ = held;
  while (next_sim_ <= sim) next_sim_ = next_sim_ + o_.window;
  return w;
}

void ClockMonitor::finish(SimTime sim, SimTime wall, Duration held_wall) {
  if (held_) {
    held_total_ = held_total_ + (wall - held_since_);
    held_ = false;
  }
  // The timeline's own record of its holds is authoritative (it saw every edge).
  held_total_ = std::max(held_total_, held_wall);
  end_sim_ = sim;
  end_wall_ = wall;
  drift_s_ = drift_at(sim, wall);
  max_abs_drift_s_ = std::max(max_abs_drift_s_, std::abs(drift_s_));
}

bool ClockMonitor::locked() const { return max_abs_drift_s_ <= to_seconds(o_.time.max_drift); }

json ClockMonitor::record(const LockstepStats& ls) const {
  const bool realtime = o_.time.mode == scenario::TimeMode::kRealtime;
  const double paused = to_seconds((paused_wall_ ? *paused_wall_ : held_total_) + extra_paused_);
  const double wall = to_seconds(end_wall_ - origin_wall_);
  json c;
  c["mode"] = std::string(scenario::to_string(o_.time.mode));
  c["target_rtf"] = o_.target_rtf;
  c["tolerance"] = o_.time.tolerance;
  c["max_drift_s"] = realtime ? json(to_seconds(o_.time.max_drift)) : json();
  c["on_drift"] = realtime ? json(std::string(scenario::to_string(o_.time.on_drift))) : json();
  c["pace_cap_rtf"] = o_.pace;
  c["physics_step_s"] = to_seconds(o_.physics_step);
  c["origin_sim_s"] = to_seconds(origin_sim_);
  c["sim_elapsed_s"] = to_seconds(end_sim_ - origin_sim_);
  c["wall_elapsed_s"] = round3(wall);
  c["paused_s"] = round3(paused);
  c["drift_s"] = round3(drift_s_);
  c["max_abs_drift_s"] = round3(max_abs_drift_s_);
  json rtf = {{"windows", windows_}};
  rtf["mean"] = windows_ ? json(round3(rtf_sum_ / static_cast<double>(windows_))) : json();
  rtf["min"] = windows_ ? json(round3(rtf_min_)) : json();
  rtf["max"] = windows_ ? json(round3(rtf_max_)) : json();
  // Over the whole timeline, held time left out (what the status line shows).
  rtf["overall"] = wall - paused > 0
                       ? json(round3(to_seconds(end_sim_ - origin_sim_) / (wall - paused)))
                       : json();
  c["rtf"] = rtf;
  c["violations"] = violations_;
  c["verdict"] = realtime ? json(locked() ? "locked" : "drifted") : json();
  if (o_.time.mode == scenario::TimeMode::kLockstep) {
    c["lockstep"] = {{"step_s", to_seconds(o_.time.step)},
                     {"vehicles", ls.vehicles},
                     {"origin_sim_s", to_seconds(origin_sim_)},
                     {"steps", ls.steps},
                     {"holds", ls.holds},
                     {"max_wait_s", round3(to_seconds(ls.max_wait))},
                     {"commands", ls.commands},
                     {"timeout", ls.timeout},
                     {"ack_timeout_s", to_seconds(o_.time.ack_timeout)}};
  } else {
    c["lockstep"] = nullptr;
  }
  return c;
}

}  // namespace fieldproof::engine
