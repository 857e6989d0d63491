// The in-process transport: a CoordinatorCore behind a mutex, with Links that pass Frames as
// values (no sockets, no encoding). Bit-exact and as fast as the machine allows.
//
//   InProcessCoordinator coord(CoordinatorOptions{.start_paused = true});
//   Participant a(coord.make_link(), {.name = "a"});
//   Participant b(coord.make_link(), {.name = "b"});
//   coord.control(resume_request());
//   std::thread ta([&] { a.sleep_until(SimTime::from_ns(5'000'000)); });
//   ...
//
// Usable single-threaded: link->send() runs the core synchronously (under the coordinator's
// mutex) and queues its replies on the destination links; receive(Duration::zero()) pops.
// Multi-threaded: receive(timeout) blocks on the link's condition variable.
//
// Who calls poll() (pace regulator, heartbeats): a receive() that finds its queue empty calls
// core.poll() first and, when the core asked to be polled at wall time w, waits at most until w
// (converted with options.wall_now) before polling again. So as long as some participant waits
// in receive(), wall-time driven grants are issued without a helper thread. Tests with a fake
// wall clock call poll() themselves after moving the clock.
//
// Heartbeats: a receive() that is about to block counts as a heartbeat of its connection (the
// participant is alive and waiting), so an idle in-process participant is never taken for a
// silent one; a participant stuck outside receive() for ack_timeout still fails the run.
//
// Thread safety: every method may be called from any thread. The tap, grant observer and failure
// handler run under the coordinator's mutex: they must not call back into the coordinator.
// Links may outlive the coordinator object (they share its state); after the coordinator is
// destroyed they deliver Error{kShutdown} and nothing else.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "fieldproof/lockstep/coordinator.hpp"
#include "fieldproof/lockstep/link.hpp"
#include "fieldproof/lockstep/protocol.hpp"

namespace fieldproof::lockstep {

class InProcessCoordinator {
 public:
  explicit InProcessCoordinator(CoordinatorOptions options = {});
  // Shuts the core down: every link receives Error{kShutdown}.
  ~InProcessCoordinator();
  InProcessCoordinator(const InProcessCoordinator&) = delete;
  InProcessCoordinator& operator=(const InProcessCoordinator&) = delete;

  // A new connection. Closing or destroying the link is a disconnect (its participants leave).
  std::unique_ptr<Link> make_link();

  ControlReply control(const Control& request);
  CoordinatorStatus status();
  std::optional<SimTime> poll();
  void set_tap(std::function<void(const Publish&)> tap);
  void set_grant_observer(std::function<void(SimTime, uint64_t)> observer);
  void set_failure_handler(
      std::function<void(const std::string& participant, std::string reason)> handler);
  void shutdown(const std::string& reason);

  // Runs f(core) under the coordinator's mutex (for what the methods above do not cover).
  void with_core(const std::function<void(CoordinatorCore&)>& f);

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace fieldproof::lockstep
