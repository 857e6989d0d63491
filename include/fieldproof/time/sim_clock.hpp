// SimClock: the deterministic simulated clock and scheduler of a participant.
//
// Time is int64 nanoseconds and moves only when advance()/advance_to() is called. Timers live in
// a 4-ary min-heap of small entries {at_ns, sequence, slot}; callbacks sit in a slot table, so
// firing a timer allocates nothing.
//
//   SimClock clock({.step = milliseconds(1), .seed = 42, .bus = &bus});
//   clock.schedule_periodic(milliseconds(5), [&] { controller.tick(); }, SimTime::zero(), "ctrl");
//   TimerHandle h = clock.schedule(SimTime::from_ns(7'000'000), [] { ... });
//   while (clock.now() < end) clock.advance(clock.step());
//   h.cancel();                                   // safe at any time, idempotent
//
// Contracts (each has a test in tests/time/):
//   * advance(dt) runs, in order, every timer with at <= now + dt, setting now() to each timer's
//     time while its callback runs, then sets now() = now + dt. advance_to(t) is the same with an
//     absolute target. Both return the number of callbacks run. now() never goes backwards.
//   * Order: by time; equal times run in insertion order (FIFO). "Insertion" is the schedule()
//     call, and for a periodic timer each re-insertion: when a periodic timer fires at t, its next
//     occurrence t + period is inserted just before its callback runs, taking the next sequence
//     number then. So of two periodic timers with equal times, the one that fired first last time
//     fires first again; a timer scheduled (at the same future time) from inside a periodic
//     callback runs after that periodic timer's next occurrence.
//   * schedule_periodic(period, cb, phase) fires at phase + k*period for k = 0, 1, 2, ... (integer
//     arithmetic, no accumulation of rounding); if phase is before now(), the first firing is the
//     first phase + k*period >= now().
//   * A callback scheduled during an advance with at <= the advance's target runs in that same
//     advance (at == now() runs right after the callbacks already queued for now()).
//   * TimerHandle::cancel() never throws and is idempotent: inside the timer's own callback (a
//     periodic timer then stops), on a fired one-shot (no-op), twice, after the SimClock is
//     destroyed (no-op; handles never dangle).
//   * A callback that throws is caught; the clock counts it (callback_failures()), publishes a
//     SCHEDULER_CALLBACK_FAILED event on its Bus (topic kEventsTopic, stamp now(), JSON payload
//     {"event":"SCHEDULER_CALLBACK_FAILED","timer_id":N,"label":"...","message":"...",
//      "at_ns":T}) and goes on; a periodic timer that threw keeps firing.
//   * Refused with fieldproof::TimeError (message says what and why): schedule at a time before
//     now(), a period <= 0, a negative dt, advance_to before now(), an empty callback, and
//     advance()/advance_to() called from inside a callback of the same clock.
//
// Bus link: with options.bus set, failures are published there. With options.drive_bus also set,
// advance() drains that bus as it goes: at each time t, first all timers due at t run, then the
// bus messages stamped <= t are delivered (deliveries may schedule timers at t, which then run,
// and so on). Without drive_bus, call bus.deliver_until(now())
// yourself (documented helper: advance_and_deliver()).
//
// With drive_bus, an exception thrown by a bus subscriber is not a timer failure: it propagates
// out of advance() (now() is then the time of that delivery; call advance again to go on).
//
// Threads: a SimClock and its handles belong to one thread (no locking). The Bus it publishes to
// must outlive it. A clock must not be destroyed from inside one of its own callbacks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fieldproof/time/duration.hpp"
#include "fieldproof/time/random_source.hpp"
#include "fieldproof/time/time_error.hpp"

namespace fieldproof {

class Bus;
class SimClock;

namespace detail {
struct SimClockCore;  // shared with handles, so a handle outliving the clock is safe
}

// Cancels one scheduled timer. Copyable; all copies refer to the same timer. A default-constructed
// handle refers to nothing.
class TimerHandle {
 public:
  TimerHandle() = default;
  // Stops the timer if it is still pending (a periodic one never fires again). Never throws;
  // idempotent; a no-op on a fired one-shot, a cancelled timer, or after the clock is destroyed.
  void cancel() noexcept;
  // True while the timer will still fire (a periodic timer until cancelled; a one-shot until it
  // starts running).
  bool active() const noexcept;
  // The timer's id: unique per clock, increasing with each schedule call, starting at 1. 0 for
  // an empty handle. Reported in SCHEDULER_CALLBACK_FAILED events.
  uint64_t id() const noexcept { return id_; }

 private:
  friend class SimClock;
  TimerHandle(std::shared_ptr<detail::SimClockCore> core, uint32_t slot, uint32_t generation,
              uint64_t id)
      : core_(std::move(core)), slot_(slot), generation_(generation), id_(id) {}
  std::shared_ptr<detail::SimClockCore> core_;
  uint32_t slot_ = 0;
  uint32_t generation_ = 0;
  uint64_t id_ = 0;
};

struct SimClockOptions {
  // The backend's step: what step()/step_ns() report (used by loops calling advance(step())).
  // Must be > 0.
  Duration step = milliseconds(1);
  // Root seed of random_source().
  uint64_t seed = 0;
  // Where SCHEDULER_CALLBACK_FAILED events go (not owned; must outlive the clock). May be null.
  Bus* bus = nullptr;
  // If true (and bus set), advance() also delivers the bus's messages as time passes (see above).
  bool drive_bus = false;
  // now() at construction.
  SimTime start = SimTime::zero();
};

class SimClock {
 public:
  using Callback = std::function<void()>;
  using Handle = TimerHandle;  // the name the docs use

  explicit SimClock(SimClockOptions options = {});
  ~SimClock();
  SimClock(const SimClock&) = delete;
  SimClock& operator=(const SimClock&) = delete;

  SimTime now() const { return SimTime::from_ns(now_ns_); }
  int64_t now_ns() const { return now_ns_; }
  Duration step() const { return step_; }
  int64_t step_ns() const { return step_.ns(); }

  // Advance by dt (>= 0) / to t (>= now()). Return the number of callbacks run (including those
  // that threw).
  size_t advance(Duration dt);
  size_t advance_to(SimTime t);
  // advance(dt), then (if a bus is set) deliver its messages stamped <= now(); returns callbacks
  // run plus deliveries made. Useful without drive_bus.
  size_t advance_and_deliver(Duration dt);

  // One-shot at `at` (>= now()). `label` names the timer in failure reports.
  TimerHandle schedule(SimTime at, Callback callback, std::string label = {});
  // Every `period` (> 0) from `phase` on (see contracts above).
  TimerHandle schedule_periodic(Duration period, Callback callback, SimTime phase = SimTime::zero(),
                                std::string label = {});

  // The time of the earliest pending timer, or nullopt if none.
  std::optional<SimTime> next_wakeup() const;
  // Number of pending timers (cancelled ones excluded).
  size_t pending() const;

  // The root RandomSource (seed from the options, label "/"). Derive children from it.
  RandomSource& random_source() { return random_; }
  const RandomSource& random_source() const { return random_; }

  // Callbacks that threw so far.
  uint64_t callback_failures() const { return callback_failures_; }
  // The message of the last callback failure (empty if none).
  const std::string& last_failure() const { return last_failure_; }

 private:
  struct Entry {
    int64_t at_ns;
    uint64_t sequence;
    uint32_t slot;
    uint32_t generation;
  };
  struct EntryLess {
    bool operator()(const Entry& a, const Entry& b) const {
      return a.at_ns < b.at_ns || (a.at_ns == b.at_ns && a.sequence < b.sequence);
    }
  };

  size_t run_until(int64_t target_ns, const char* what);
  bool fire_top();  // fires the top entry if live; false if it was stale
  TimerHandle add(int64_t at_ns, int64_t period_ns, Callback callback, std::string label);
  void prune_stale_top() const;
  void report_failure(uint64_t id, const std::string& label, const std::string& message);

  int64_t now_ns_ = 0;
  Duration step_;
  uint64_t next_sequence_ = 0;
  // A 4-ary min-heap of Entry (see src/time/dary_heap.hpp); mutable so next_wakeup() can drop
  // cancelled entries from the top.
  mutable std::vector<Entry> heap_;
  std::shared_ptr<detail::SimClockCore> core_;
  Bus* bus_ = nullptr;
  bool drive_bus_ = false;
  bool in_advance_ = false;
  RandomSource random_;
  uint64_t callback_failures_ = 0;
  std::string last_failure_;
};

}  // namespace fieldproof
