// The only reader of std::chrono::steady_clock (and of the calendar clock, for the record's UTC
// timestamps) in the project besides the lock-step pace regulator (tests/lint/clock_allowlist.txt).
#include "fieldproof/time/system_clock.hpp"
#include "fieldproof/util/mutex.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>
#include <utility>

namespace fieldproof {
namespace {

SimTime steady_now() {
  const auto d = std::chrono::steady_clock::now().time_since_epoch();
  return SimTime::from_ns(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
}

std::chrono::steady_clock::time_point to_steady(SimTime t) {
  return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(t.ns()));
}

}  // namespace

SimTime SystemClock::now() const { return steady_now(); }

WallNow SystemClock::wall_now() {
  return [] { return steady_now(); };
}

UtcNow SystemClock::utc_now() {
  return [] {
    const auto d = std::chrono::system_clock::now().time_since_epoch();
    return static_cast<int64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
  };
}

std::string format_utc(int64_t unix_ns) {
  using namespace std::chrono;
  const int64_t ms_total = std::max<int64_t>(unix_ns, 0) / 1'000'000;
  const sys_days day{days{ms_total / 86'400'000}};
  const int64_t ms_of_day = ms_total % 86'400'000;
  const year_month_day ymd{day};
  char b[40];
  std::snprintf(b, sizeof b, "%04d-%02u-%02uT%02d:%02d:%02d.%03dZ", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                static_cast<int>(ms_of_day / 3'600'000), static_cast<int>(ms_of_day / 60'000 % 60),
                static_cast<int>(ms_of_day / 1000 % 60), static_cast<int>(ms_of_day % 1000));
  return b;
}

// ---- PeriodicThread ----

PeriodicThread::PeriodicThread(PeriodicThreadOptions options) : options_(std::move(options)) {
  if (!options_.now) options_.now = SystemClock::wall_now();
  if (options_.spin.ns() < 0) options_.spin = Duration::zero();
  if (options_.min_spin.ns() < 0) options_.min_spin = Duration::zero();
  if (options_.max_spin < options_.min_spin) options_.max_spin = options_.min_spin;
  spin_ns_.store(options_.spin.ns());
}

PeriodicThread::~PeriodicThread() { stop(); }

SimTime PeriodicThread::deadline(SimTime start, Duration period, uint64_t k) {
  const int64_t kk =
      k > static_cast<uint64_t>(detail::kMaxNs) ? detail::kMaxNs : static_cast<int64_t>(k);
  return start + period * kk;
}

void PeriodicThread::start(Duration period, Callback callback) {
  if (period.ns() <= 0 || period.is_infinite()) {
    throw TimeError("PeriodicThread::start: period " + format_seconds(period) +
                    " s must be > 0 and finite");
  }
  if (!callback) throw TimeError("PeriodicThread::start: the callback is empty");
  if (thread_.joinable()) {
    if (running_.load()) throw TimeError("PeriodicThread::start: already running");
    thread_.join();  // a previous run that stopped itself
  }
  stop_requested_.store(false);
  running_.store(true);
  thread_ = std::thread(
      [this, period, cb = std::move(callback)]() mutable { run(period, std::move(cb)); });
}

void PeriodicThread::stop() {
  {
    MutexLock lock(mutex_);
    stop_requested_.store(true);
  }
  cv_.notify_all();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

void PeriodicThread::wait_until(SimTime t) {
  // Coarse part: sleep until `spin` before the deadline (interruptible by stop()).
  const int64_t spin = spin_ns_.load();
  const SimTime coarse = t - Duration::from_ns(spin);
  if (options_.now() < coarse) {
    if (options_.sleep_until) {
      options_.sleep_until(coarse);
    } else {
      bool stopped = false;
      {
        MutexLock lock(mutex_);
        stopped =
            cv_.wait_until(mutex_, to_steady(coarse), [this] { return stop_requested_.load(); });
      }
      if (options_.calibrate && !stopped) {
        // Integer arithmetic: grow at once to twice the oversleep seen, shrink slowly.
        const int64_t over = (options_.now() - coarse).ns();
        int64_t next = std::max(2 * over, spin - spin / 16);
        next = std::clamp(next, options_.min_spin.ns(), options_.max_spin.ns());
        spin_ns_.store(next);
      }
    }
  }
  // Fine part: yield until the deadline.
  while (!stop_requested_.load() && options_.now() < t) std::this_thread::yield();
}

void PeriodicThread::run(Duration period, Callback callback) {
  const SimTime start = options_.now();
  uint64_t k = 0;
  uint64_t skipped = 0;
  while (!stop_requested_.load()) {
    const SimTime due = deadline(start, period, k);
    wait_until(due);
    if (stop_requested_.load()) break;
    const SimTime woke = options_.now();
    try {
      callback(PeriodicTick{k, due, woke, skipped});
    } catch (...) {
      failures_.fetch_add(1);
    }
    ticks_.fetch_add(1);
    // Next deadline on the grid that is still in the future: overruns skip, never shift, it.
    ++k;
    const SimTime after = options_.now();
    const SimTime next = deadline(start, period, k);
    if (after > next) {
      const uint64_t behind = static_cast<uint64_t>((after - next) / period);
      if (behind > 0) {
        k += behind;
        skipped += behind;
        skipped_.fetch_add(behind);
      }
    }
  }
  running_.store(false);
}

}  // namespace fieldproof
