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
// Spawn and remove: /world/<w>/create and /world/<w>/remove are subscribed (see
// World::handle_message). A vehicle spawned over the bus gets its cmd_vel subscription at once,
// inside the delivery, so a cmd_vel stamped after the create reaches it (one stamped at the very
// same time is delivered in the same batch as the create, before the subscription exists, and is
// lost, as a message on a topic nobody takes yet). A removed vehicle's subscription is dropped.
// Refused creates and removes count as rejected inputs.
//
// Thread safety: call from the participant's main thread only, except post(); the World must not
// be used by another thread meanwhile.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "fieldproof/lockstep/participant.hpp"
#include "fieldproof/util/mutex.hpp"
#include "fieldproof/world/world.hpp"

namespace fieldproof::world {

class WorldParticipant {
 public:
  WorldParticipant(World& world, lockstep::Participant& participant);

  // Subscribes cmd_vel of vehicles spawned since and drops those of vehicles removed since
  // (run_until calls it on entry and after posted functions; bus creates and removes at once).
  void refresh_subscriptions();
  // Runs `fn` on the world's thread (inside run_until) before the next physics step, after the
  // deliveries stamped before that step; functions run in the order posted. Thread-safe, from
  // any thread, the world's own included. A function posted when no run_until is running waits
  // for the next one. An exception it throws is counted as a rejected input.
  void post(std::function<void(World&)> fn);
  // Steps in lock-step until the world's time reaches `until` (rounded up to the step grid).
  // False when the participant failed or left before.
  bool run_until(SimTime until);
  // The world's messages on a topic of `topics` (its key) are published on the mapped topic
  // instead, the same stamp and payload: the engine relays them (its faults, docs/network.md).
  // Call before run_until.
  void divert(std::map<std::string, std::string> topics) { diverted_ = std::move(topics); }
  // Incoming messages the world refused (bad payload, NaN command, unknown vehicle).
  uint64_t rejected_inputs() const { return rejected_; }
  const std::string& last_rejection() const { return last_rejection_; }

 private:
  void publish_outbox();
  void run_posted();
  void rejected(const std::string& why);

  World& world_;
  lockstep::Participant& participant_;
  std::set<std::string> subscribed_;  // cmd_vel topics
  std::map<std::string, std::string> diverted_;
  Mutex posted_mu_;
  std::vector<std::function<void(World&)>> posted_ FIELDPROOF_GUARDED_BY(posted_mu_);
  uint64_t rejected_ = 0;
  std::string last_rejection_;
};

}  // namespace fieldproof::world
