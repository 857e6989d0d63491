// The scenario's network section as the network part's configuration (docs/network.md).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fieldproof/engine/timeline.hpp"
#include "fieldproof/network/faults.hpp"
#include "fieldproof/network/network.hpp"
#include "fieldproof/scenario/scenario.hpp"
#include "fieldproof/util/status.hpp"

namespace fieldproof::engine {

// Every link, the ground station, the outages and the uplink topics: the scenario's telemetry
// plus navigate_to_pose/status (the timeline's goals are answered through the link), the goal and
// the status reliable (resent until they cross, as an action's middleware would). In lockstep
// the ack timeout applies to the ground links.
network::NetworkConfig network_config(const scenario::Scenario& s);

// The world outputs the timeline's topic faults act on (/model/<vehicle>/<topic>), each once, in
// the order of the timeline: the session diverts them and the engine relays them.
std::vector<std::string> faulted_topics(const scenario::Scenario& s);

// What the faults need of the run.
struct FaultEnv {
  network::FaultRelay::PublishAt publish_at;  // the engine's publish_at
  std::function<SimTime()> now;               // the engine's now()
  // Session::kill_stack at now() (what was killed) / Session::restart_stack.
  std::function<Result<std::string>(const std::string& vehicle)> kill;
  std::function<Status(const std::string& vehicle)> restart;
  std::function<int(const std::string& vehicle)> stack_pid;  // Session::stack_pid (may be empty)
  // engine.log (and /fieldproof/events): fault.start, fault.end, stack.killed, stack.restarted.
  std::function<void(const std::string& name, const nlohmann::json& fields)> event;
};

// The timeline's fault.* actions for one run (docs/network.md, faults): the topic relay and the
// stack kills. on_action is the timeline's fault hook; on_raw takes what the world published on
// a diverted topic (Session::raw_topic), as `topic`.
class RunFaults {
 public:
  RunFaults(uint64_t seed, FaultEnv env);
  FaultOutcome on_action(const scenario::TimelineEntry& e, bool start);
  void on_raw(const std::string& topic, SimTime stamp, std::string payload,
              const std::string& type);

 private:
  FaultOutcome kill_stack(const scenario::TimelineEntry& e, bool start);
  FaultEnv env_;
  network::FaultRelay relay_;
};

}  // namespace fieldproof::engine
