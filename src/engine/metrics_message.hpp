// The /fieldproof/metrics message (internal to the engine; docs/recording.md, side channels): once
// a second, the clocks, the pace, the lock-step state, the observer's rates, poses and lifecycle
// states, and the recording's size.
//
//   MetricsFrame f;
//   f.observer = observer.metrics();  f.sim = now;  f.wall_epoch_s = ...;  ...
//   recorder.write_side(SideChannel::kMetrics, now, metrics_message(f));
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fieldproof/record/recorder.hpp"
#include "fieldproof/time/duration.hpp"

namespace fieldproof::engine {

struct MetricsFrame {
  nlohmann::json observer = nlohmann::json::object();  // rates_hz, poses, lifecycle
  SimTime sim;
  double wall_s = 0.0;                   // wall seconds since the run started
  std::optional<double> wall_epoch_s;    // the calendar clock, epoch seconds
  std::string mode;
  double rtf = 0.0;
  double target_rtf = 0.0;
  double drift_s = 0.0;
  bool paused = false;
  struct Lockstep {
    Duration step;                      // step_s
    bool hold = false;                  // the world is held now (a pause, between sim.steps)
    uint64_t holds = 0;                 // holds of the stepping so far (entries at a due time)
    std::vector<std::string> vehicles;  // the regulating vehicles
    // The simulated time every regulating vehicle has acknowledged: the coordinator grants a
    // step only once all of them have announced past the previous one, so it is the grant.
    SimTime acknowledged;
    Duration max_ack_wait;  // the longest wall wait for a step's acknowledgements so far
  };
  std::optional<Lockstep> lockstep;  // lockstep mode only
  struct Recording {
    std::string file;  // relative to the run directory
    uint64_t bytes = 0;
    uint64_t messages = 0;
  };
  std::optional<Recording> recording;
};

// {wall, sim, wall_s, sim_s, mode, rtf, target_rtf, drift_s, paused, rates_hz, poses, lifecycle,
//  lockstep: {step, step_s, sim_s, hold, holds, acknowledgements: {vehicle: sim_s},
//             max_ack_wait_s}, recording: {file, bytes, messages}}.
nlohmann::json metrics_message(const MetricsFrame& f);

class Session;
// The world's static collision shapes as the recorder's scene (/fieldproof/scene). Call before
// the session starts (the world thread owns the world afterwards).
std::vector<record::SceneShape> scene_shapes(Session& session);

}  // namespace fieldproof::engine
