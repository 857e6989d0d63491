// Executors: run a participant's callbacks (subscriptions, timers) in lock-step.
//
//   Participant p(link, {.name = "planner"});
//   p.subscribe("scan", on_scan);
//   p.create_timer(milliseconds(100), on_tick);
//   SingleThreadedExecutor exec(p);
//   exec.spin_until(SimTime::from_ns(10'000'000'000));   // or spin() until stop()
//
// While idle an executor thread announces its next timer (or +inf); while a callback runs it
// holds the clock (its safe time is the callback's time: a delivery lowered it to the message's
// stamp, a timer fires at the due time it announced); when the callbacks of the current time are
// done it announces again. All deliveries for the current time are processed before announcing.
#pragma once

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "fieldproof/lockstep/participant.hpp"

namespace fieldproof::lockstep {

// Runs the participant's main thread callbacks on the calling thread.
class SingleThreadedExecutor {
 public:
  explicit SingleThreadedExecutor(Participant& participant);
  // Until stop() or failure. Returns false on failure / leave.
  bool spin();
  // Until the grant reaches `until` (true), stop() or failure (false).
  bool spin_until(SimTime until);
  // Thread-safe; wakes a spin within the link's receive timeout.
  void stop();

 private:
  Participant* participant_;
};

// n thread participants: the calling thread runs the participant's main thread, and n - 1 worker
// threads "worker-1" .. "worker-<n-1>" (registered at construction) run their own callbacks.
// Register a worker's subscriptions and timers on worker(i) before spinning.
class MultiThreadedExecutor {
 public:
  MultiThreadedExecutor(Participant& participant, size_t threads);
  // The workers leave (they no longer hold time); the participant's main thread stays.
  ~MultiThreadedExecutor();
  size_t size() const { return threads_.size(); }
  // i = 0: the main thread; 1..n-1: the workers.
  ParticipantThread& worker(size_t i) { return *threads_.at(i); }
  bool spin();
  bool spin_until(SimTime until);
  void stop();

 private:
  Participant* participant_;
  std::vector<ParticipantThread*> threads_;
};

}  // namespace fieldproof::lockstep
