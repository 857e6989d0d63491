// The scenario's network section as the network part's configuration (docs/network.md).
#pragma once

#include "fieldproof/network/network.hpp"
#include "fieldproof/scenario/scenario.hpp"

namespace fieldproof::engine {

// Every link, the ground station, the outages and the uplink topics: the scenario's telemetry
// plus navigate_to_pose/status (the timeline's goals are answered through the link), the goal and
// the status reliable (resent until they cross, as an action's middleware would). In lockstep
// the ack timeout applies to the ground links.
network::NetworkConfig network_config(const scenario::Scenario& s);

}  // namespace fieldproof::engine
