// The world as a regulating participant of the lock-step coordinator: the thin glue between a
// transport-free World and fieldproof::lockstep.
//
//   InProcessCoordinator coord;
//   Participant p(coord.make_link(), options_named("world"));
//   WorldParticipant glue(world, p);       // subscribes every vehicle's cmd_vel
//   glue.run_until(SimTime::from_ns(60'000'000'000));
//
// Each iteration announces the end of the next physics step (sim_time + max_step_size), waits for
// the grant (cmd_vel deliveries stamped before it are applied inside the wait, in the bus order),
// steps the physics once and publishes the outbox stamped at the new time, in production order.
// So the world publishes nothing stamped before its announcement, and what a vehicle was told at
// time t acts from the step ending after t: the same run, whatever the transport.
//
// Under a coordinator, pause, step and run-to-time are the coordinator's controls (they hold the
// grant); the world's own pause is lifted at construction and /world/<w>/control is not
// subscribed. Leave WorldOptions::sink unset: the glue drains the outbox.
//
// Thread safety: call from the participant's main thread only; the World must not be used by
// another thread meanwhile.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "fieldproof/lockstep/participant.hpp"
#include "fieldproof/world/world.hpp"

namespace fieldproof::world {

class WorldParticipant {
 public:
  WorldParticipant(World& world, lockstep::Participant& participant);

  // Subscribes cmd_vel of vehicles spawned since (run_until calls it on entry).
  void refresh_subscriptions();
  // Steps in lock-step until the world's time reaches `until` (rounded up to the step grid).
  // False when the participant failed or left before.
  bool run_until(SimTime until);
  // Incoming messages the world refused (bad payload, NaN command, unknown vehicle).
  uint64_t rejected_inputs() const { return rejected_; }
  const std::string& last_rejection() const { return last_rejection_; }

 private:
  void publish_outbox();

  World& world_;
  lockstep::Participant& participant_;
  std::set<std::string> subscribed_;
  uint64_t rejected_ = 0;
  std::string last_rejection_;
};

}  // namespace fieldproof::world
