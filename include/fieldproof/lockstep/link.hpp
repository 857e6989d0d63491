// Link: what the participant library talks through. One link = one connection to a coordinator
// (in-process: InProcessCoordinator::make_link(); ZeroMQ: connect() in transport.hpp).
//
//   std::unique_ptr<Link> link = coordinator.make_link();
//   link->send(Announce{"ugv1", "main", Role::kRegulating, SimTime::zero()});
//   while (auto f = link->receive(Duration::infinite())) { ... }
//
// Contract:
//  * send() may be called from several threads at once; frames from one thread keep their order.
//  * receive() is called by one thread at a time (the participant library guarantees it). It
//    waits up to `timeout` (Duration::infinite() = until a frame arrives or the link is closed,
//    Duration::zero() = poll) and returns the next frame in arrival order, or nullopt on timeout
//    or once the link is closed.
//  * When the coordinator is gone (shut down, unreachable) the link delivers Error{kShutdown}
//    once; the participant library treats it as the end of the run.
//  * close() may be called from any thread, wakes a blocked receive(), and makes later sends
//    no-ops. The destructor closes.
#pragma once

#include <optional>

#include "fieldproof/lockstep/protocol.hpp"
#include "fieldproof/time/duration.hpp"

namespace fieldproof::lockstep {

class Link {
 public:
  virtual ~Link() = default;
  virtual void send(Frame frame) = 0;
  virtual std::optional<Frame> receive(Duration timeout) = 0;
  virtual void close() = 0;
};

}  // namespace fieldproof::lockstep
