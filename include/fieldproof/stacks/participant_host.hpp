// The stack as a lock-step participant: the process host's loop (fieldproof-ugv-nav), usable over
// any Link (ZeroMQ in the process, in-process in tests). The stack ticks on simulated time — it
// sleeps until its next control tick, and messages delivered meanwhile run inside the wait — and
// publishes its outputs stamped when it produced them. A wall-clock watchdog thread runs the
// lifecycle manager's heartbeat check while simulated time stands still (a paused world); what it
// produces is published at the stack's announced safe time (its next tick).
//
//   auto p = lockstep::participant_from_environment({.name = "ugv1_nav"});
//   UgvNavParticipantHost host(*p, *node, {});
//   host.run();                 // until stop(), the coordinator ends the run, or `until`
#pragma once

#include <atomic>
#include <functional>
#include <string>

#include "fieldproof/lockstep/participant.hpp"
#include "fieldproof/stacks/ugv_nav_node.hpp"
#include "fieldproof/time/duration.hpp"
#include "fieldproof/util/mutex.hpp"

namespace fieldproof::stacks {

struct ParticipantHostOptions {
  // Wall period of the watchdog thread; zero: no thread (the first tick after a pause still
  // finds the silence).
  Duration wall_check_period = milliseconds(250);
  // Wall clock of the watchdog thread's schedule; empty: the steady clock.
  WallNow wall_now{};
  // Problems met (a payload that does not parse, a refused publish): one line each.
  std::function<void(const std::string&)> on_problem{};
  // Every message published, as it is handed to the participant (from the loop's thread or the
  // watchdog thread, under the host's lock).
  std::function<void(const BusMessage&)> on_published{};
};

class UgvNavParticipantHost {
 public:
  UgvNavParticipantHost(lockstep::Participant& participant, UgvNavNode& node,
                        ParticipantHostOptions options = {});
  ~UgvNavParticipantHost();

  // Subscribes, then runs the control loop on the calling thread (which must be the
  // participant's main thread) until stop(), the participant failing or leaving, or simulated
  // time reaching `until`. Then the stack shuts down (the active goal aborted, the lifecycle
  // inactive) and publishes that. Returns false when the participant failed.
  bool run(SimTime until = SimTime::infinite());
  // From any thread (a signal-handling thread): run() returns soon.
  void stop();

  uint64_t problems() const { return problems_.load(); }

 private:
  void publish_locked(SimTime floor) FIELDPROOF_REQUIRES(mutex_);
  void problem(const std::string& what);

  lockstep::Participant& participant_;
  ParticipantHostOptions options_;
  Mutex mutex_;  // the node is called from the loop, the deliveries and the watchdog thread
  UgvNavNode* const node_ FIELDPROOF_PT_GUARDED_BY(mutex_);
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> problems_{0};
};

}  // namespace fieldproof::stacks
