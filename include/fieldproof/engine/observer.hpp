// The observer: from the coordinator's ordered stream to the samples the assertions and KPI
// collectors need (docs/assertions.md), in simulated time, only for what the plan
// watches (assertions::Watch, merged over the planned assertions and collectors).
//
//   ObserverOptions o;
//   o.watch = merged_watch;                     // poses, contacts, values, rates, latencies, ...
//   o.pose_topic = session.pose_topic();
//   o.on_sample = [&](const Sample& s) { evaluator.on_sample(s, t_of(s.sim)); };
//   o.write_line = [&](const json& j) { samples_jsonl.write(j); };
//   Observer obs(std::move(o));
//   for (const auto& t : obs.topics()) engine.subscribe(t, [&](const Publish& m) {
//   obs.on_message(m); }); obs.start(engine.now());
//   ... each wake of the engine: obs.on_tick(engine.now());
//
// What it produces (each sample goes to write_line as one JSON object with kind and sim, then to
// on_sample; no wall time except in the clock's lines, so the same seed gives the same lines):
// - pose: 10 Hz per watched model (vehicles and the world's models), from /world/<w>/pose/info;
// - contact: one per contact message of a watched vehicle;
// - value: one per message of a watched topic, the message decoded to JSON (msgs/json.hpp);
// - rate: once a simulated second per topic, once a full window has passed since start(): the
//   messages of (now - window, now] over the window;
// - latency: once a second per watched topic that had a message in the window: the ages
//   (receipt's simulated time - header.stamp) of the window's messages: count, mean, max, min,
//   p95; and `unstamped`, the window's messages without a header stamp (count 0 when all were);
// - lifecycle: once a second per node seen on a watched vehicle's /model/<v>/lifecycle (its last
//   state), and at every transition; "unavailable" for a watched vehicle none of whose nodes has
//   reported yet (node "");
// - resources: once a simulated second per watched vehicle (watch.resources): the stack's process
//   (stack_pid), or the engine's own process for an in-process stack: CPU in percent of one core
//   over the last wall interval, resident memory in MiB; also to on_resources as a resource line.
//   `fieldproof run` does not use this: it clears watch.resources and runs the ResourceMonitor
//   (src/engine/resources.hpp: every process, on the wall clock) and emit()s its samples;
// - clock: made by the clock monitor and passed in with emit().
// Once-a-second outputs are on the simulated-second grid from start(). Problems (a payload that
// does not decode, an unknown type, a process that cannot be read) become "error" lines in
// samples.jsonl, once per topic or process. Not thread-safe: call from the engine's thread.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "fieldproof/assertions/checker.hpp"
#include "fieldproof/lockstep/protocol.hpp"
#include "fieldproof/time/duration.hpp"

namespace fieldproof::engine {

struct ObserverOptions {
  assertions::Watch watch;
  std::string pose_topic;  // /world/<name>/pose/info
  Duration pose_period = milliseconds(100);
  // Wall clock (the "wall" field of lines, the CPU window); wall seconds count from wall0.
  std::function<SimTime()> wall_now;
  SimTime wall0 = SimTime::zero();
  // samples.jsonl (may be empty).
  std::function<void(const nlohmann::json&)> write_line;
  // The evaluator and KPI collectors (may be empty).
  std::function<void(const assertions::Sample&)> on_sample;
  // A resource line (resources.jsonl, /fieldproof/resources): process, vehicle, pid, cpu_pct,
  // memory_mb, sim, wall (may be empty).
  std::function<void(const nlohmann::json&)> on_resources;
  // The pid of a vehicle's process stack; 0 (or no function): the stack runs in the engine.
  std::function<int(const std::string& vehicle)> stack_pid;
  std::string proc_root = "/proc";  // tests point it at a fake tree
};

class Observer {
 public:
  explicit Observer(ObserverOptions options);
  ~Observer();
  Observer(const Observer&) = delete;
  Observer& operator=(const Observer&) = delete;

  // The absolute topics to subscribe to, sorted, each once.
  std::vector<std::string> topics() const;
  // Observation starts at `now` (rate windows and the once-a-second grid count from here); the
  // resource monitor takes its first reading.
  void start(SimTime now);
  // A message of a subscribed topic, received at simulated time `received` (its stamp when not
  // given: the engine's clock at a delivery is the message's stamp).
  void on_message(const lockstep::Publish& m);
  void on_message(const lockstep::Publish& m, SimTime received);
  // Emits the once-a-second outputs due at or before `now`.
  void on_tick(SimTime now);
  // A sample made elsewhere (the clock monitor's kClock): written and passed on.
  void emit(const assertions::Sample& sample);
  // What /fieldproof/metrics carries from the observer: {rates_hz: {topic: hz of the last window},
  // poses: {model: {x, y, yaw} last sampled}, lifecycle: {"<vehicle>/<node>": last state}}.
  nlohmann::json metrics() const;
  // How many samples were emitted (every kind).
  uint64_t sample_count() const;
  // Whether anything beyond the clock is observed.
  bool watching() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace fieldproof::engine
