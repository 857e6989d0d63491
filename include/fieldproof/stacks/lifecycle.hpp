// The lifecycle manager with heartbeats (Nav2's lifecycle_manager with bonds, in small): it brings
// the managed nodes unconfigured -> inactive -> active, and watches the servers' heartbeats on
// WALL time. A server silent for `heartbeat_timeout` of wall time takes every node to inactive —
// including while the simulation is paused, which is the point: simulated time stands still, the
// wall-clock watchdog does not (the known limit of the time document). Single-threaded: the
// caller serialises the calls.
//
//   LifecycleManager lm({.servers = {"planner_server", "controller_server"}}, wall_now);
//   lm.startup();                            // -> transitions to inactive, then active
//   lm.heartbeat("planner_server");          // each time the server runs
//   if (lm.check()) ...                      // true when a transition happened; see take()
#pragma once

#include <string>
#include <vector>

#include "fieldproof/stacks/types.hpp"
#include "fieldproof/time/duration.hpp"
#include "fieldproof/util/status.hpp"

namespace fieldproof::stacks {

struct LifecycleOptions {
  // The servers whose heartbeats are watched.
  std::vector<std::string> servers = {"planner_server", "controller_server"};
  // Managed nodes whose state is published (the servers plus the navigator).
  std::vector<std::string> nodes = {"planner_server", "controller_server", "bt_navigator"};
  Duration heartbeat_timeout = seconds(4);
  // Which clock the heartbeat watchdog counts `heartbeat_timeout` on: the host's (auto: a host
  // gives the wall clock when the stack follows time and simulated time when it regulates, as in
  // lockstep, so a loaded machine cannot fail a lockstep run through a watchdog), the wall clock,
  // or simulated time (the last time the stack saw).
  enum class Clock { kAuto, kWall, kSim };
  Clock heartbeat_clock = Clock::kAuto;
  // After a heartbeat loss, go back to active once every server beats again (Nav2's bond
  // respawn). Off: stay inactive until startup() is called again.
  bool reactivate = true;
  [[nodiscard]] Status validate() const;
};

class LifecycleManager {
 public:
  LifecycleManager(LifecycleOptions options, WallNow wall_now);

  // unconfigured -> inactive -> active; every server counts as just heard from.
  void startup();
  // active -> inactive (e.g. on shutdown of the host).
  void deactivate(const std::string& reason);

  // A server reports it is alive (at wall_now()). May reactivate (see options).
  void heartbeat(const std::string& server);
  // Checks every server's silence against the timeout at wall_now(); true when it took the stack
  // to inactive now. The reason names the silent server and for how long.
  bool check();

  LifecycleState state() const { return state_; }
  const std::string& last_reason() const { return last_reason_; }
  // Transitions since the last call, one per managed node per transition, in order.
  std::vector<LifecycleTransition> take();

 private:
  void transition(LifecycleState to, const std::string& reason);

  LifecycleOptions options_;
  WallNow wall_now_;
  LifecycleState state_ = LifecycleState::kUnconfigured;
  bool lost_ = false;  // inactive because of a heartbeat loss
  std::vector<SimTime> last_beat_;
  std::string last_reason_;
  std::vector<LifecycleTransition> pending_;
};

}  // namespace fieldproof::stacks
