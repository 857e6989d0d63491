// SystemClock and PeriodicThread: wall time is injected, so the tests drive it by hand.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <stdexcept>
#include <vector>

#include "fieldproof/time/sim_clock.hpp"
#include "fieldproof/time/system_clock.hpp"

namespace fieldproof {
namespace {

// A fake wall clock: time moves only when the thread "sleeps" (jumps to the wake-up time) or by a
// fixed cost per reading (so spinning terminates).
struct FakeWall {
  std::atomic<int64_t> t{1'000'000'000};
  int64_t cost_per_read = 0;
  PeriodicThreadOptions options(Duration spin = Duration::zero()) {
    PeriodicThreadOptions o;
    o.spin = spin;
    o.now = [this] { return SimTime::from_ns(t.fetch_add(cost_per_read) + cost_per_read); };
    o.sleep_until = [this](SimTime until) {
      int64_t cur = t.load();
      while (cur < until.ns() && !t.compare_exchange_weak(cur, until.ns())) {
      }
    };
    return o;
  }
};

TEST(SystemClock, NowIsMonotonic) {
  SystemClock clock;
  SimTime prev = clock.now();
  for (int i = 0; i < 1000; ++i) {
    const SimTime t = clock.now();
    ASSERT_GE(t, prev);
    prev = t;
  }
  EXPECT_GT(prev.ns(), 0);
}

template <typename C>
concept CanAdvance = requires(C& c) {
  c.advance(Duration::zero());
};

TEST(SystemClock, HasNoAdvanceOnlySimClockDoes) {
  // Seed section 3: advance() exists only on the simulated clock; hardware time moves by itself.
  EXPECT_FALSE(CanAdvance<SystemClock>);
  EXPECT_TRUE(CanAdvance<SimClock>);
}

TEST(SystemClock, WallNowIsInjectable) {
  SimTime fake = SimTime::from_ns(5);
  WallNow wall = [&] { return fake; };
  EXPECT_EQ(wall(), SimTime::from_ns(5));
  fake = SimTime::from_ns(9);
  EXPECT_EQ(wall(), SimTime::from_ns(9));
  WallNow real = SystemClock::wall_now();
  const SimTime first = real();
  const SimTime second = real();
  EXPECT_LE(first, second);
}

TEST(SystemClock, FormatUtcWritesIso8601WithMilliseconds) {
  EXPECT_EQ(format_utc(0), "1970-01-01T00:00:00.000Z");
  // 2024-02-29T23:59:59.999Z (a leap day), 1709251199999 ms after the epoch.
  EXPECT_EQ(format_utc(1'709'251'199'999'000'000), "2024-02-29T23:59:59.999Z");
  EXPECT_EQ(format_utc(1'709'251'200'000'000'000), "2024-03-01T00:00:00.000Z");
  EXPECT_EQ(format_utc(-5), "1970-01-01T00:00:00.000Z");
}

TEST(SystemClock, UtcNowIsAfter2024) {
  EXPECT_GT(SystemClock::utc_now()(), 1'704'067'200'000'000'000);  // 2024-01-01
}

TEST(SystemClock, RandomSourceUsesTheSeed) {
  SystemClock clock(42);
  RandomSource expected(42);
  EXPECT_EQ(clock.random_source().next_u64(), expected.next_u64());
}

TEST(PeriodicThread, DeadlinesAreAnIntegerGrid) {
  const SimTime start = SimTime::from_ns(17);
  EXPECT_EQ(PeriodicThread::deadline(start, nanoseconds(333'333), 1'000'000),
            SimTime::from_ns(17 + 333'333LL * 1'000'000));
}

TEST(PeriodicThread, NoDriftOverMillionPeriods) {
  FakeWall wall;
  wall.cost_per_read = 10;
  PeriodicThread thread(wall.options());
  constexpr uint64_t kTicks = 1'000'000;
  constexpr int64_t kPeriod = 333'333;
  const int64_t start = wall.t.load() + wall.cost_per_read;  // the first read in run()
  std::promise<void> done;
  uint64_t mismatches = 0;
  PeriodicTick last;
  thread.start(nanoseconds(kPeriod), [&](const PeriodicTick& tick) {
    if (tick.index >= kTicks) return;
    if (tick.deadline.ns() != start + static_cast<int64_t>(tick.index) * kPeriod) ++mismatches;
    if (tick.woke < tick.deadline) ++mismatches;
    if (tick.index == kTicks - 1) {
      last = tick;
      done.set_value();
    }
  });
  done.get_future().wait();
  thread.stop();
  EXPECT_EQ(mismatches, 0u);
  EXPECT_EQ(last.index, kTicks - 1);
  EXPECT_EQ(last.deadline.ns(), start + static_cast<int64_t>(kTicks - 1) * kPeriod);
  EXPECT_EQ(last.skipped, 0u);
}

TEST(PeriodicThread, OverrunSkipsDeadlinesButKeepsTheGrid) {
  FakeWall wall;
  PeriodicThread thread(wall.options());
  const int64_t start = wall.t.load();
  std::promise<void> done;
  std::vector<PeriodicTick> ticks;
  thread.start(milliseconds(10), [&](const PeriodicTick& tick) {
    if (ticks.size() >= 3) return;
    ticks.push_back(tick);
    if (tick.index == 0) wall.t += 35'000'000;  // the first callback takes 35 ms
    if (ticks.size() == 3) done.set_value();
  });
  done.get_future().wait();
  thread.stop();
  ASSERT_EQ(ticks.size(), 3u);
  // After 35 ms, deadlines 10 and 20 ms are a whole period late: skipped. 30 ms runs (late), then
  // 40 ms on time: still start + k * period.
  EXPECT_EQ(ticks[1].index, 3u);
  EXPECT_EQ(ticks[1].deadline.ns(), start + 30'000'000);
  EXPECT_EQ(ticks[1].skipped, 2u);
  EXPECT_EQ(ticks[2].index, 4u);
  EXPECT_EQ(ticks[2].deadline.ns(), start + 40'000'000);
  EXPECT_EQ(thread.skipped(), 2u);
}

TEST(PeriodicThread, RunsOnRealTimeAndStopJoins) {
  PeriodicThread thread;
  std::promise<void> three;
  std::atomic<int> n{0};
  thread.start(milliseconds(1), [&](const PeriodicTick& tick) {
    EXPECT_GE(tick.woke, tick.deadline);
    if (n.fetch_add(1) == 2) three.set_value();
  });
  EXPECT_EQ(three.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  thread.stop();
  EXPECT_FALSE(thread.running());
  const uint64_t after_stop = thread.ticks();
  EXPECT_GE(after_stop, 3u);
  thread.stop();  // idempotent
  EXPECT_EQ(thread.ticks(), after_stop);
}

TEST(PeriodicThread, SpinMarginIsCalibratedWithinBounds) {
  PeriodicThreadOptions options;
  options.spin = microseconds(1);  // far too small: the OS oversleeps more than that
  options.min_spin = microseconds(5);
  options.max_spin = milliseconds(3);
  PeriodicThread thread(options);
  std::promise<void> done;
  std::atomic<int> n{0};
  thread.start(milliseconds(2), [&](const PeriodicTick&) {
    if (n.fetch_add(1) == 5) done.set_value();
  });
  EXPECT_EQ(done.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  thread.stop();
  EXPECT_GE(thread.spin(), microseconds(5));
  EXPECT_LE(thread.spin(), milliseconds(3));
}

TEST(PeriodicThread, StopFromInsideTheCallbackEndsTheThread) {
  FakeWall wall;
  PeriodicThread thread(wall.options());
  std::promise<void> stopped;
  thread.start(milliseconds(1), [&](const PeriodicTick& tick) {
    if (tick.index == 4) {
      thread.stop();
      stopped.set_value();
    }
  });
  stopped.get_future().wait();
  thread.stop();  // joins
  EXPECT_EQ(thread.ticks(), 5u);
}

TEST(PeriodicThread, ThrowingCallbackIsCountedAndTheThreadGoesOn) {
  FakeWall wall;
  PeriodicThread thread(wall.options());
  std::promise<void> done;
  thread.start(milliseconds(1), [&](const PeriodicTick& tick) {
    if (tick.index == 3) done.set_value();
    if (tick.index < 3) throw std::runtime_error("boom");
  });
  done.get_future().wait();
  thread.stop();
  EXPECT_EQ(thread.failures(), 3u);
}

TEST(PeriodicThread, BadArgumentsAreRefused) {
  PeriodicThread thread;
  EXPECT_THROW(thread.start(Duration::zero(), [](const PeriodicTick&) {}), TimeError);
  EXPECT_THROW(thread.start(milliseconds(1), nullptr), TimeError);
  FakeWall wall;
  PeriodicThread running(wall.options());
  running.start(milliseconds(1), [](const PeriodicTick&) {});
  EXPECT_THROW(running.start(milliseconds(1), [](const PeriodicTick&) {}), TimeError);
  running.stop();
}

}  // namespace
}  // namespace fieldproof
