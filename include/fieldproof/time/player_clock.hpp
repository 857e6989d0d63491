// PlayerClock: the time a log player plays by — "log time" (the recording's stamps) mapped onto
// "steady time" (what the person watching experiences), with pause, rate, jump and play-next.
//
// Two implementations:
//   * TimeControllerClock controls time. The whole mapping is ONE reference snapshot
//     {ref.steady, ref.log} re-taken at every control action (pause, resume, set_rate, jump,
//     play_next):
//         running: log(steady) = ref.log + round(rate x (steady - ref.steady))
//         paused:  log(steady) = ref.log
//     Nothing accumulates, so nothing drifts. round() is to nearest, ties away from zero, on the
//     exact product (long double, 64-bit mantissa: exact for any |steady - ref.steady| < 2^63 ns
//     up to the last bit of the double rate). The inverse used by sleep_until is the smallest
//     steady time whose log time is >= the target (so sleep_until wakes exactly at the first
//     steady instant at which now() >= t).
//   * ExternalClock follows someone else's time (the coordinator's grants, another player's
//     published clock): feed() gives it samples; it may extrapolate between them; a watchdog stops
//     time when samples stop. It refuses every control action with a warning.
//
// Steady time and waiting are injected (SteadyTime): production uses SystemSteadyTime (the steady
// clock through SystemClock), tests use FakeSteadyTime, which moves only when advanced and wakes
// every waiter when it does — no test sleeps.
//
//   FakeSteadyTime steady;
//   TimeControllerClock clock({.start = SimTime::from_ns(5'000'000'000)}, steady);
//   steady.advance(seconds(1));                       // clock.now() == 6 s
//   (void)clock.set_rate(2.5);                        // from here 2.5 log-seconds per second
//   (void)clock.set_paused(true);                     // now() frozen, the rate is kept
//   clock.add_jump_handler([](const ClockJump& j) { drop_queue(j); }, {});
//   (void)clock.jump(SimTime::from_ns(1'000'000'000));
//   bool due = clock.sleep_until(t, milliseconds(100));   // false: paused (after <= 100 ms)
//
// Threads: every method of both clocks is thread-safe (one mutex + one condition variable per
// clock). Jump handlers and the clock publisher run outside that mutex and may call the clock's
// const methods (now(), is_paused(), rate()); a jump handler must not call jump().
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "fieldproof/time/duration.hpp"
#include "fieldproof/util/mutex.hpp"

namespace fieldproof {

// ---------------------------------------------------------------------------------------------
// Steady time: reading it and waiting on it.

// A steady (monotonic) time line and the way to wait on it. A clock calls wait_until() with its
// own mutex locked in `lock` and its own condition variable; register_waiter() tells the time
// line about that pair so a hand-driven time line (FakeSteadyTime) can wake it when time moves.
class SteadyTime {
 public:
  virtual ~SteadyTime() = default;
  // Now on the steady time line (monotonic). Thread-safe.
  virtual SimTime now() const = 0;
  // Blocks until steady time reaches `until` or `cv` is notified; may return early (the caller
  // re-checks its condition). `mu` is held on entry and on return.
  virtual void wait_until(Mutex& mu, CondVar& cv, SimTime until) FIELDPROOF_REQUIRES(mu) = 0;
  // A clock's (mutex, condition variable): registered for the clock's lifetime.
  virtual void register_waiter(Mutex* /*mutex*/, CondVar* /*cv*/) {}
  virtual void unregister_waiter(Mutex* /*mutex*/, CondVar* /*cv*/) {}
};

// The real steady clock (SystemClock::now()); waits are condition-variable timed waits.
class SystemSteadyTime final : public SteadyTime {
 public:
  SimTime now() const override;
  void wait_until(Mutex& mu, CondVar& cv, SimTime until) FIELDPROOF_REQUIRES(mu) override;
  // A process-wide instance.
  static SystemSteadyTime& instance();
};

// A steady time line that moves only when advanced (tests). advance()/set() wake every waiter of
// every registered clock (each clock's mutex is taken before its condition variable is notified,
// so a wake-up is never lost). Waiting for a time that is never reached blocks until a notify.
class FakeSteadyTime final : public SteadyTime {
 public:
  explicit FakeSteadyTime(SimTime start = SimTime::from_ns(1'000'000'000)) : now_(start.ns()) {}
  SimTime now() const override { return SimTime::from_ns(now_.load()); }
  void wait_until(Mutex& mu, CondVar& cv, SimTime until) FIELDPROOF_REQUIRES(mu) override;
  void register_waiter(Mutex* mutex, CondVar* cv) override;
  void unregister_waiter(Mutex* mutex, CondVar* cv) override;

  // Moves time forward by d (>= 0; a negative d is ignored) / to t (ignored if before now()).
  void advance(Duration d);
  void set(SimTime t);
  // How many wait_until calls are blocked right now.
  size_t blocked_waits() const;
  // Blocks until at least n wait_until calls are blocked (a test waits for its sleeper to be
  // asleep before acting: no sleep, no race).
  void wait_for_blocked(size_t n) const;

 private:
  std::atomic<int64_t> now_;
  mutable Mutex blocked_mutex_;  // a leaf lock: nothing else is taken while holding it
  mutable CondVar blocked_cv_;
  size_t blocked_ FIELDPROOF_GUARDED_BY(blocked_mutex_) = 0;
  Mutex registry_mutex_;
  std::vector<std::pair<Mutex*, CondVar*>> waiters_ FIELDPROOF_GUARDED_BY(registry_mutex_);
};

// ---------------------------------------------------------------------------------------------
// The player clock interface.

// A discontinuity of the clock: jump(), or (ExternalClock) a sample that goes backwards.
struct ClockJump {
  SimTime from;  // now() just before
  SimTime to;    // now() just after
};

using JumpCallback = std::function<void(const ClockJump&)>;
// Called with the player time at each publication.
using ClockPublisher = std::function<void(SimTime)>;
// Where warnings go (a refused control action on an ExternalClock...). May be empty.
using ClockLogger = std::function<void(std::string_view)>;

class PlayerClock {
 public:
  virtual ~PlayerClock() = default;

  // The current player (log) time.
  virtual SimTime now() const = 0;

  // Blocks until now() >= until, and returns true then. Returns false:
  //   * on timeout: real_time_timeout of steady time passed (Duration::infinite(): no timeout);
  //   * when a jump happened while waiting (the caller re-plans from the new time);
  //   * at once when the clock is paused during the wait (by another thread), or when wakeup()
  //     is called (rosbag2's clock behaves the same: its tests expect an immediate false);
  //   * a call made while paused returns false once the clock is resumed, jumped, woken or the
  //     timeout passes — even if `until` is already reached (nothing plays while paused;
  //     play_next() is the way to release one message).
  // A rate change while waiting does not end the wait: the steady deadline is recomputed.
  virtual bool sleep_until(SimTime until, Duration real_time_timeout) = 0;

  // Ends every sleep_until running now (they return false at once); the callers re-check what
  // they wait for (a player's stop flag, a new queue). A sleep_until that starts after the call
  // is not affected.
  virtual void wakeup() = 0;

  // Pause stops time (now() repeats the same value); resume restarts it from that value. Pausing
  // a paused clock (or resuming a running one) is an ok no-op. The rate is kept across a pause.
  virtual Status set_paused(bool paused) = 0;
  virtual bool is_paused() const = 0;

  // Log seconds per steady second; must be finite and > 0 (to stop time, pause). Kept across a
  // pause.
  virtual Status set_rate(double rate) = 0;
  virtual double rate() const = 0;

  // Moves now() to `to` (backwards or forwards), calling every jump handler's pre callback before
  // and post callback after, with {from, to}. Wakes sleep_until callers (which return false).
  virtual Status jump(SimTime to) = 0;

  // Play-next while paused (the seed's "play_next via a jump to the next message's stamp"): the
  // player calls this with the stamp of the message it is about to release. Allowed only while
  // paused and forward (next_message_time >= now()): the paused time moves to next_message_time
  // (a re-anchor), jump handlers are NOT called (this is playback, not a discontinuity: the queue
  // stays valid) and sleepers are not woken. The player then publishes that one message itself.
  virtual Status play_next(SimTime next_message_time) = 0;

  // Jump handlers. Either callback may be empty. Returns an id (>= 1) for remove_jump_handler,
  // which returns false for an unknown id. A removed handler is never called again once
  // remove_jump_handler has returned.
  virtual uint64_t add_jump_handler(JumpCallback pre, JumpCallback post) = 0;
  virtual bool remove_jump_handler(uint64_t id) = 0;

  // Publishes the clock: `publisher` is called with now() every 1/hz of steady time (hz = 0
  // turns it off; negative or non-finite refused), on a thread of the clock: at once, then at
  // start + k x period (integer grid; deadlines missed by a slow callback are skipped). Replaces
  // any previous publisher (stopped and joined first), so it must not be called from inside the
  // publisher callback. A publisher that throws is ignored and called again next period.
  virtual Status set_clock_publisher(double hz, ClockPublisher publisher) = 0;
};

// Jump-handler bookkeeping shared by the implementations.
class JumpHandlers {
 public:
  uint64_t add(JumpCallback pre, JumpCallback post);
  bool remove(uint64_t id);
  void call_pre(const ClockJump& jump);
  void call_post(const ClockJump& jump);

 private:
  struct Entry {
    JumpCallback pre;
    JumpCallback post;
  };
  // Calls are made under call_mutex_ (not the clock's mutex), so remove() waits for a running
  // call to end: after remove() returns the handler is never called.
  RecursiveMutex call_mutex_;
  std::map<uint64_t, Entry> entries_ FIELDPROOF_GUARDED_BY(call_mutex_);
  uint64_t next_id_ FIELDPROOF_GUARDED_BY(call_mutex_) = 1;
};

// ---------------------------------------------------------------------------------------------
// TimeControllerClock

struct TimeControllerClockOptions {
  // now() at construction (the first message's stamp, or where playback starts).
  SimTime start = SimTime::zero();
  // Initial rate (> 0, finite; otherwise the constructor throws TimeError).
  double rate = 1.0;
  // Start paused.
  bool start_paused = false;
};

class TimeControllerClock final : public PlayerClock {
 public:
  // `steady` must outlive the clock.
  explicit TimeControllerClock(TimeControllerClockOptions options = {},
                               SteadyTime& steady = SystemSteadyTime::instance());
  ~TimeControllerClock() override;
  TimeControllerClock(const TimeControllerClock&) = delete;
  TimeControllerClock& operator=(const TimeControllerClock&) = delete;

  SimTime now() const override;
  bool sleep_until(SimTime until, Duration real_time_timeout) override;
  // The number of jumps made so far. A caller that plans from a state a jump may change (the
  // player's next message) reads it while it plans and passes it to the overload below: a jump
  // made between the plan and the wait then ends the wait at once (no lost wake-up).
  uint64_t jump_count() const;
  bool sleep_until(SimTime until, Duration real_time_timeout, uint64_t jumps_seen);
  void wakeup() override;
  Status set_paused(bool paused) override;
  bool is_paused() const override;
  Status set_rate(double rate) override;
  double rate() const override;
  Status jump(SimTime to) override;
  Status play_next(SimTime next_message_time) override;
  uint64_t add_jump_handler(JumpCallback pre, JumpCallback post) override;
  bool remove_jump_handler(uint64_t id) override;
  Status set_clock_publisher(double hz, ClockPublisher publisher) override;

  // The pure conversions (exposed for tests and the docs), with an explicit snapshot.
  struct Snapshot {
    SimTime steady;
    SimTime log;
  };
  // ref.log + round(rate x (steady - ref.steady)): exact for every result below 2^63 ns; only a
  // result that does not fit int64 saturates (to SimTime::infinite() / the minimum).
  static SimTime steady_to_log(const Snapshot& ref, double rate, SimTime steady);
  // The smallest steady s with steady_to_log(ref, rate, s) >= log (saturating).
  static SimTime log_to_steady(const Snapshot& ref, double rate, SimTime log);

  // Publications made so far.
  uint64_t publications() const { return publications_.load(); }

 private:
  SimTime now_locked() const FIELDPROOF_REQUIRES(mutex_);
  void reanchor_locked() FIELDPROOF_REQUIRES(mutex_);
  void publish_loop(uint64_t generation, Duration period, ClockPublisher publisher);
  void stop_publisher();

  SteadyTime& steady_;
  mutable Mutex mutex_;
  CondVar cv_;
  Snapshot ref_ FIELDPROOF_GUARDED_BY(mutex_);
  double rate_ FIELDPROOF_GUARDED_BY(mutex_) = 1.0;
  bool paused_ FIELDPROOF_GUARDED_BY(mutex_) = false;
  uint64_t jumps_ FIELDPROOF_GUARDED_BY(mutex_) = 0;     // bumped by each jump
  uint64_t pauses_ FIELDPROOF_GUARDED_BY(mutex_) = 0;    // bumped by each pause
  uint64_t wakeups_ FIELDPROOF_GUARDED_BY(mutex_) = 0;   // bumped by each wakeup()
  uint64_t controls_ FIELDPROOF_GUARDED_BY(mutex_) = 0;  // bumped by each control action
  uint64_t publisher_generation_ FIELDPROOF_GUARDED_BY(mutex_) = 0;
  Mutex jump_mutex_;  // serialises jump() (pre, change, post)
  JumpHandlers handlers_;
  Mutex publisher_mutex_;  // serialises set_clock_publisher / the destructor
  std::thread publisher_thread_;
  std::atomic<uint64_t> publications_{0};
};

// ---------------------------------------------------------------------------------------------
// ExternalClock

struct ExternalClockOptions {
  // now() before the first sample.
  SimTime initial = SimTime::zero();
  // Extrapolate between samples from a least-squares fit of log vs steady time over the last
  // `window` samples (>= 2). Off: now() is the last sample.
  bool extrapolate = false;
  size_t window = 8;
  // No sample for this long (steady time) stops time: now() keeps the value it had when the
  // source went silent; is_silent() becomes true and on_silent is called once. A new sample ends
  // the silence. Duration::infinite(): no watchdog.
  Duration watchdog = Duration::infinite();
  // Called (outside the clock's lock) when the watchdog fires. May be empty.
  std::function<void(SimTime last_sample)> on_silent;
  // Warnings: refused control actions, samples going backwards.
  ClockLogger logger;
};

// Follows an external clock. Extrapolation (when on): with the fitted rate r (log ns per steady
// ns, from the window), now() = last.log + r x (steady - last.steady), clamped to
//   [last.log, last.log + P]   where P = the mean log-time step between the window's samples
// (never more than one sample period ahead of the last sample) and never below a value already
// returned (time never runs backwards while following). Without a fit (fewer than 2 samples, or
// a non-positive rate) now() is the last sample. The watchdog evaluates that formula at
// min(steady, last.steady + watchdog), so time stops where the silence began.
// A sample earlier than the previous one is a jump of the source: the window restarts and the
// jump handlers are called with {from, to}.
// set_paused, set_rate, jump, play_next and set_clock_publisher are refused (Status refused,
// plus a warning to the logger): this clock does not control time. It is never paused
// (is_paused() is false; a silent source is is_silent()), and silence does not end a
// sleep_until: the wait goes on until a sample makes now() reach `until`, a backward sample
// (a jump) or the timeout. rate() is the fitted rate (1.0 before any fit).
class ExternalClock final : public PlayerClock {
 public:
  explicit ExternalClock(ExternalClockOptions options = {},
                         SteadyTime& steady = SystemSteadyTime::instance());
  ~ExternalClock() override;
  ExternalClock(const ExternalClock&) = delete;
  ExternalClock& operator=(const ExternalClock&) = delete;

  // A sample of the followed clock, received at steady time `received` (normally steady.now()).
  void feed(SimTime sample, SimTime received);
  void feed(SimTime sample);

  SimTime now() const override;
  bool sleep_until(SimTime until, Duration real_time_timeout) override;
  void wakeup() override;
  Status set_paused(bool paused) override;
  bool is_paused() const override { return false; }
  Status set_rate(double rate) override;
  double rate() const override;
  Status jump(SimTime to) override;
  Status play_next(SimTime next_message_time) override;
  uint64_t add_jump_handler(JumpCallback pre, JumpCallback post) override;
  bool remove_jump_handler(uint64_t id) override;
  Status set_clock_publisher(double hz, ClockPublisher publisher) override;

  // True while the watchdog says the source is silent (evaluated now, may fire on_silent).
  bool is_silent() const;
  uint64_t samples() const;

 private:
  struct Sample {
    SimTime steady;
    SimTime log;
  };
  SimTime now_locked(SimTime steady, bool* fire_silent) const FIELDPROOF_REQUIRES(mutex_);
  Status refuse(const char* what) const;
  void refit_locked() FIELDPROOF_REQUIRES(mutex_);

  ExternalClockOptions options_;
  SteadyTime& steady_;
  mutable Mutex mutex_;
  mutable CondVar cv_;
  std::deque<Sample> window_ FIELDPROOF_GUARDED_BY(mutex_);
  mutable SimTime floor_ FIELDPROOF_GUARDED_BY(mutex_);  // the largest value returned so far
  mutable bool silent_ FIELDPROOF_GUARDED_BY(mutex_) = false;
  uint64_t samples_ FIELDPROOF_GUARDED_BY(mutex_) = 0;
  uint64_t jumps_ FIELDPROOF_GUARDED_BY(mutex_) = 0;
  uint64_t wakeups_ FIELDPROOF_GUARDED_BY(mutex_) = 0;  // bumped by each wakeup()
  double fitted_rate_ FIELDPROOF_GUARDED_BY(mutex_) = 0.0;  // 0: no fit
  Duration period_ FIELDPROOF_GUARDED_BY(mutex_);           // mean log step of the window
  Mutex feed_mutex_;  // serialises feed() (a backward sample calls the jump handlers)
  JumpHandlers handlers_;
};

}  // namespace fieldproof
