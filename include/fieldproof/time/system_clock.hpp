// SystemClock: steady (wall) time for hardware and free-running use, and a periodic thread.
//
// This (with src/lockstep/pace_regulator.cpp) is the only code that reads std::chrono's
// steady_clock; everything else that needs wall time takes a WallNow function, injected, so tests
// drive it by hand:
//
//   WallNow wall = SystemClock::wall_now();          // production
//   SimTime fake{}; WallNow wall = [&] { return fake; };   // tests
//
//   PeriodicThread loop;
//   loop.start(milliseconds(10), [](const PeriodicTick& t) { process(t.index); });
//   ...
//   loop.stop();                                       // joins
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include "fieldproof/time/duration.hpp"
#include "fieldproof/time/random_source.hpp"
#include "fieldproof/time/time_error.hpp"
#include "fieldproof/util/mutex.hpp"

namespace fieldproof {

// A source of wall time (nanoseconds on a monotonic time line). Injected wherever wall time is
// needed outside the time part.
using WallNow = std::function<SimTime()>;

// A source of calendar time: nanoseconds since the Unix epoch, UTC. For records only (run.json's
// started_utc / ended_utc): never for pacing or durations, which use WallNow. Injected like it.
using UtcNow = std::function<int64_t()>;

// ISO 8601 UTC with milliseconds: "2026-12-01T00:05:24.123Z" (times before 1970 clamp to it).
std::string format_utc(int64_t unix_ns);

class SystemClock {
 public:
  explicit SystemClock(uint64_t seed = 0) : random_(seed) {}

  // Monotonic steady time in nanoseconds since the steady clock's epoch (unspecified; compare,
  // do not print as a date). Thread-safe.
  SimTime now() const;
  int64_t now_ns() const { return now().ns(); }
  // A WallNow reading the steady clock (thread-safe, no state).
  static WallNow wall_now();
  // A UtcNow reading the system (calendar) clock (thread-safe, no state).
  static UtcNow utc_now();

  RandomSource& random_source() { return random_; }

 private:
  RandomSource random_;
};

struct PeriodicTick {
  uint64_t index = 0;    // k: 0, 1, 2, ...
  SimTime deadline;      // start + k * period, integer arithmetic: no drift
  SimTime woke;          // the wall time when the callback was called (>= deadline)
  uint64_t skipped = 0;  // deadlines skipped so far because a callback overran
};

struct PeriodicThreadOptions {
  // Sleep until this long before each deadline, then spin (yielding) until it: trades a little CPU
  // for wake-up precision, as the OS sleep overshoots by tens of microseconds. The initial margin.
  Duration spin = microseconds(200);
  // Calibrate the margin from the measured oversleep (default sleep only): after each sleep the
  // margin becomes max(2 x oversleep, 15/16 x margin), kept within [min_spin, max_spin].
  bool calibrate = true;
  Duration min_spin = microseconds(20);
  Duration max_spin = milliseconds(2);
  // Wall time source; empty = SystemClock::wall_now(). Tests inject a fake.
  WallNow now;
  // Sleeps until the given wall time (may return early); empty = a condition-variable wait on the
  // steady clock that stop() interrupts. Tests inject a fake that moves their fake time. If `now`
  // is not on the steady clock's time line, inject this too: the default reads times as steady.
  std::function<void(SimTime until)> sleep_until;
};

// Calls a callback every period on its own thread, at deadline_k = start + k * period (start = the
// wall time at start()). If a callback overruns, the deadlines that are a whole period or more in
// the past are skipped (counted in PeriodicTick::skipped and skipped()) and the next call is at
// the latest deadline not yet passed by a period, on the same grid: the phase never drifts.
// A callback that throws is caught and counted (failures()); the thread goes on.
// Not copyable; stop() or the destructor joins.
class PeriodicThread {
 public:
  using Callback = std::function<void(const PeriodicTick&)>;

  explicit PeriodicThread(PeriodicThreadOptions options = {});
  ~PeriodicThread();
  PeriodicThread(const PeriodicThread&) = delete;
  PeriodicThread& operator=(const PeriodicThread&) = delete;

  // Starts the thread; the first call is at start (k = 0). Throws TimeError if period <= 0, the
  // callback is empty, or it is already running.
  void start(Duration period, Callback callback);
  // Stops and joins. Idempotent. Called from inside the callback it only requests the stop (the
  // thread ends after the callback returns; a later stop() or the destructor joins).
  void stop();
  bool running() const { return running_.load(); }
  uint64_t ticks() const { return ticks_.load(); }
  uint64_t skipped() const { return skipped_.load(); }
  uint64_t failures() const { return failures_.load(); }
  // The current (calibrated) spin margin.
  Duration spin() const { return Duration::from_ns(spin_ns_.load()); }

  // deadline_k = start + k * period (saturating): the integer grid the thread follows.
  static SimTime deadline(SimTime start, Duration period, uint64_t k);

 private:
  void run(Duration period, Callback callback);
  void wait_until(SimTime t);

  PeriodicThreadOptions options_;
  std::thread thread_;
  Mutex mutex_;  // guards no data: stop() stores stop_requested_ under it (no lost wake-up)
  CondVar cv_;
  std::atomic<bool> stop_requested_{false};
  std::atomic<bool> running_{false};
  std::atomic<uint64_t> ticks_{0};
  std::atomic<uint64_t> skipped_{0};
  std::atomic<uint64_t> failures_{0};
  std::atomic<int64_t> spin_ns_{0};
};

}  // namespace fieldproof
