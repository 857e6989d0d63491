// SimClock contracts: the seed document's sections 3, 5 and 6 and the pitfalls of section 9,
// one behaviour per test.
#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "fieldproof/time/bus.hpp"
#include "fieldproof/time/sim_clock.hpp"

namespace fieldproof {
namespace {

SimTime ms(int64_t n) { return SimTime::from_ns(n * 1'000'000); }

struct Trace {
  std::vector<std::pair<std::string, int64_t>> events;
  SimClock::Callback rec(SimClock& c, std::string name) {
    return [this, &c, name] { events.emplace_back(name, c.now_ns()); };
  }
};

// ---- section 3: binding contracts ----

TEST(SimClock, TimeIsIntegerNanoseconds) {
  SimClock clock;
  for (int i = 0; i < 1000; ++i) clock.advance(nanoseconds(1));
  EXPECT_EQ(clock.now_ns(), 1000);
  static_assert(std::is_same_v<decltype(clock.now_ns()), int64_t>);
}

TEST(SimClock, NegativeAdvanceIsRefused) {
  SimClock clock;
  clock.advance(milliseconds(5));
  try {
    clock.advance(-milliseconds(1));
    FAIL() << "negative advance accepted";
  } catch (const TimeError& e) {
    EXPECT_NE(std::string(e.what()).find("negative"), std::string::npos) << e.what();
  }
  EXPECT_EQ(clock.now(), ms(5));
}

TEST(SimClock, AdvanceToBeforeNowIsRefused) {
  SimClock clock;
  clock.advance_to(ms(10));
  EXPECT_THROW(clock.advance_to(ms(9)), TimeError);
  EXPECT_EQ(clock.now(), ms(10));
  EXPECT_NO_THROW(clock.advance_to(ms(10)));  // equal is not backwards
}

TEST(SimClock, NowNeverGoesBackwardsAcrossCallbacks) {
  SimClock clock;
  int64_t last = -1;
  bool monotonic = true;
  auto check = [&] {
    monotonic = monotonic && clock.now_ns() >= last;
    last = clock.now_ns();
  };
  clock.schedule_periodic(milliseconds(3), check);
  clock.schedule_periodic(milliseconds(7), check, ms(1));
  clock.schedule(ms(5), check);
  for (int i = 0; i < 100; ++i) clock.advance(milliseconds(1));
  EXPECT_TRUE(monotonic);
  EXPECT_EQ(clock.now(), ms(100));
}

TEST(SimClock, SameSeedSameSchedulesGiveSameOrderAndTimestamps) {
  auto run = [] {
    SimClock clock({.seed = 7});
    Trace t;
    auto rng = std::make_shared<RandomSource>(clock.random_source().child("/jitter"));
    clock.schedule_periodic(milliseconds(5), t.rec(clock, "ctrl"));
    clock.schedule_periodic(milliseconds(20), t.rec(clock, "telemetry"));
    clock.schedule_periodic(
        milliseconds(5),
        [&, rng] {
          t.events.emplace_back("noise" + std::to_string(rng->integers(0, 9)), clock.now_ns());
        },
        ms(2));
    for (int i = 0; i < 60; ++i) clock.advance(milliseconds(1));
    return t.events;
  };
  const auto a = run();
  const auto b = run();
  EXPECT_EQ(a.size(), 13u + 4u + 12u);  // 0..60 ms inclusive
  EXPECT_EQ(a, b);
}

TEST(SimClock, PeriodicFiresAtPhasePlusKPeriods) {
  SimClock clock;
  std::vector<int64_t> at;
  clock.schedule_periodic(
      milliseconds(5), [&] { at.push_back(clock.now_ns()); }, ms(2));
  clock.advance_to(ms(22));
  EXPECT_EQ(at, (std::vector<int64_t>{2'000'000, 7'000'000, 12'000'000, 17'000'000, 22'000'000}));
}

TEST(SimClock, PeriodicFiresOnlyOnceTimeReachesIt) {
  SimClock clock;
  int n = 0;
  clock.schedule_periodic(milliseconds(5), [&] { ++n; });
  clock.advance_to(SimTime::from_ns(4'999'999));
  EXPECT_EQ(n, 1);  // t = 0 only
  clock.advance(nanoseconds(1));
  EXPECT_EQ(n, 2);  // t = 5 ms is <= now
}

TEST(SimClock, IntegerAccumulationHasNoDriftOverMillionPeriods) {
  SimClock clock;
  constexpr int64_t kPeriod = 333'333;  // 3 kHz: not representable exactly as 1/3000 s in binary
  int64_t count = 0;
  int64_t last = -1;
  double float_time = 0.0;  // what a float accumulation would give, for contrast
  clock.schedule_periodic(nanoseconds(kPeriod), [&] {
    ++count;
    last = clock.now_ns();
    float_time += 333'333e-9;
  });
  clock.advance_to(SimTime::from_ns(kPeriod * 999'999));
  EXPECT_EQ(count, 1'000'000);
  EXPECT_EQ(last, kPeriod * 999'999);  // exact, to the nanosecond
  EXPECT_NE(static_cast<int64_t>(float_time * 1e9), kPeriod * 1'000'000)
      << "float accumulation drifts; that is why the clock does not use it";
}

TEST(SimClock, PeriodicTimerEndsAtTheEndOfTheTimeLine) {
  // 25 ms before the end of the time line (infinite() - 25 ms would stay infinite: sticky).
  SimClock clock({.start = SimTime::from_ns(std::numeric_limits<int64_t>::max() - 25'000'000)});
  int n = 0;
  clock.schedule_periodic(
      milliseconds(10), [&] { ++n; }, clock.now());
  EXPECT_EQ(clock.advance_to(SimTime::infinite()), 3u);  // terminates: no firing past the end
  EXPECT_EQ(n, 3);
  EXPECT_EQ(clock.pending(), 0u);
}

TEST(SimClock, PhaseBeforeNowStartsAtNextGridPoint) {
  SimClock clock;
  clock.advance_to(ms(11));
  std::vector<int64_t> at;
  clock.schedule_periodic(
      milliseconds(5), [&] { at.push_back(clock.now_ns()); }, ms(2));
  clock.advance_to(ms(22));
  EXPECT_EQ(at, (std::vector<int64_t>{12'000'000, 17'000'000, 22'000'000}));
}

TEST(SimClock, CancelInsideOwnCallback) {
  SimClock clock;
  int n = 0;
  TimerHandle h;
  h = clock.schedule(ms(1), [&] {
    ++n;
    h.cancel();  // a one-shot that is running: no-op, no throw
  });
  clock.advance_to(ms(5));
  EXPECT_EQ(n, 1);
  EXPECT_FALSE(h.active());
}

TEST(SimClock, CancelPeriodicInsideOwnCallbackStopsIt) {
  SimClock clock;
  int n = 0;
  TimerHandle h;
  h = clock.schedule_periodic(milliseconds(1), [&] {
    if (++n == 3) h.cancel();
  });
  clock.advance_to(ms(10));
  EXPECT_EQ(n, 3);
  EXPECT_EQ(clock.pending(), 0u);
  EXPECT_FALSE(clock.next_wakeup().has_value());
}

TEST(SimClock, CancelOnFiredOneShotIsNoop) {
  SimClock clock;
  int n = 0;
  TimerHandle h = clock.schedule(ms(1), [&] { ++n; });
  clock.advance_to(ms(2));
  EXPECT_FALSE(h.active());
  EXPECT_NO_THROW(h.cancel());
  EXPECT_EQ(n, 1);
}

TEST(SimClock, DoubleCancelIsIdempotent) {
  SimClock clock;
  int n = 0;
  TimerHandle h = clock.schedule_periodic(milliseconds(1), [&] { ++n; });
  TimerHandle copy = h;
  EXPECT_TRUE(h.active());
  h.cancel();
  h.cancel();
  copy.cancel();
  clock.advance_to(ms(5));
  EXPECT_EQ(n, 0);
  EXPECT_EQ(clock.pending(), 0u);
}

TEST(SimClock, CancelAfterClockDestroyedIsNoop) {
  TimerHandle h;
  {
    SimClock clock;
    h = clock.schedule(ms(1), [] {});
  }
  EXPECT_FALSE(h.active());
  EXPECT_NO_THROW(h.cancel());
  EXPECT_NO_THROW(TimerHandle().cancel());
}

TEST(SimClock, StaleHandleDoesNotCancelATimerReusingItsSlot) {
  SimClock clock;
  TimerHandle old = clock.schedule(ms(1), [] {});
  old.cancel();
  int n = 0;
  TimerHandle fresh = clock.schedule(ms(2), [&] { ++n; });  // reuses the freed slot
  old.cancel();
  clock.advance_to(ms(3));
  EXPECT_EQ(n, 1);
}

TEST(SimClock, CancelFromAnotherCallbackAtSameTimePreventsIt) {
  SimClock clock;
  std::vector<std::string> ran;
  TimerHandle b;
  clock.schedule(ms(1), [&] {
    ran.push_back("a");
    b.cancel();
  });
  b = clock.schedule(ms(1), [&] { ran.push_back("b"); });
  clock.advance_to(ms(1));
  EXPECT_EQ(ran, std::vector<std::string>{"a"});
}

TEST(SimClock, TimerIdsAreUniqueAndIncreasing) {
  SimClock clock;
  TimerHandle a = clock.schedule(ms(1), [] {});
  TimerHandle b = clock.schedule_periodic(milliseconds(1), [] {});
  EXPECT_EQ(a.id(), 1u);
  EXPECT_EQ(b.id(), 2u);
  EXPECT_EQ(TimerHandle().id(), 0u);
}

// ---- section 5: the scheduler ----

TEST(SimClock, CallbacksSeeNowEqualToTheirTimeAndAdvanceEndsAtTarget) {
  SimClock clock;
  std::vector<int64_t> seen;
  clock.schedule(ms(3), [&] { seen.push_back(clock.now_ns()); });
  clock.schedule(ms(7), [&] { seen.push_back(clock.now_ns()); });
  EXPECT_EQ(clock.advance(milliseconds(10)), 2u);
  EXPECT_EQ(seen, (std::vector<int64_t>{3'000'000, 7'000'000}));
  EXPECT_EQ(clock.now(), ms(10));
}

TEST(SimClock, AdvanceReturnsNumberOfCallbacksRun) {
  SimClock clock;
  clock.schedule_periodic(milliseconds(1), [] {});
  EXPECT_EQ(clock.advance(milliseconds(4)), 5u);  // 0, 1, 2, 3, 4
  EXPECT_EQ(clock.advance(Duration::zero()), 0u);
}

TEST(SimClock, CallbackScheduledInsideAdvanceRunsInSameAdvance) {
  SimClock clock;
  Trace t;
  clock.schedule(ms(2), [&] {
    t.events.emplace_back("first", clock.now_ns());
    clock.schedule(ms(4), t.rec(clock, "later"));
    clock.schedule(clock.now(), t.rec(clock, "now"));
  });
  EXPECT_EQ(clock.advance_to(ms(5)), 3u);
  EXPECT_EQ(t.events, (std::vector<std::pair<std::string, int64_t>>{
                          {"first", 2'000'000}, {"now", 2'000'000}, {"later", 4'000'000}}));
}

TEST(SimClock, CallbackScheduledBeyondTargetWaitsForNextAdvance) {
  SimClock clock;
  int n = 0;
  clock.schedule(ms(1), [&] { clock.schedule(ms(6), [&] { ++n; }); });
  clock.advance_to(ms(5));
  EXPECT_EQ(n, 0);
  EXPECT_EQ(clock.next_wakeup(), ms(6));
  clock.advance_to(ms(6));
  EXPECT_EQ(n, 1);
}

TEST(SimClock, ThrowingCallbackIsReportedAndSchedulerContinues) {
  Bus bus;
  std::vector<BusMessage> events;
  auto sub = bus.subscribe(kEventsTopic, [&](const BusMessage& m) { events.push_back(m); });
  SimClock clock({.bus = &bus});
  int after = 0;
  TimerHandle bad = clock.schedule(
      ms(2), [] { throw std::runtime_error("sensor \"imu\" died"); }, "imu_driver");
  clock.schedule(ms(2), [&] { ++after; });
  clock.schedule(ms(3), [&] { ++after; });
  EXPECT_EQ(clock.advance_to(ms(4)), 3u);
  EXPECT_EQ(after, 2);
  EXPECT_EQ(clock.callback_failures(), 1u);
  EXPECT_NE(clock.last_failure().find("imu_driver"), std::string::npos);
  bus.deliver_until(clock.now());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].stamp, ms(2));
  EXPECT_EQ(events[0].type, kEventType);
  const std::string& p = events[0].payload;
  EXPECT_NE(p.find("\"event\":\"SCHEDULER_CALLBACK_FAILED\""), std::string::npos) << p;
  EXPECT_NE(p.find("\"timer_id\":" + std::to_string(bad.id())), std::string::npos) << p;
  EXPECT_NE(p.find("\"label\":\"imu_driver\""), std::string::npos) << p;
  EXPECT_NE(p.find("sensor \\\"imu\\\" died"), std::string::npos) << p;  // JSON-escaped
  EXPECT_NE(p.find("\"at_ns\":2000000"), std::string::npos) << p;
}

TEST(SimClock, ThrowingPeriodicCallbackKeepsFiring) {
  SimClock clock;
  int n = 0;
  clock.schedule_periodic(milliseconds(1), [&] {
    ++n;
    throw std::logic_error("again");
  });
  clock.advance_to(ms(4));
  EXPECT_EQ(n, 5);
  EXPECT_EQ(clock.callback_failures(), 5u);
}

TEST(SimClock, NonStandardExceptionIsReportedToo) {
  SimClock clock;
  clock.schedule(ms(1), [] { throw 42; });
  EXPECT_NO_THROW(clock.advance_to(ms(1)));
  EXPECT_EQ(clock.callback_failures(), 1u);
  EXPECT_NE(clock.last_failure().find("unknown exception"), std::string::npos);
}

TEST(SimClock, ScheduleInThePastIsRefused) {
  SimClock clock;
  clock.advance_to(ms(10));
  try {
    clock.schedule(ms(9), [] {});
    FAIL() << "accepted";
  } catch (const TimeError& e) {
    EXPECT_NE(std::string(e.what()).find("before now"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(clock.schedule(ms(10), [] {}));
}

TEST(SimClock, PeriodZeroOrNegativeIsRefused) {
  SimClock clock;
  EXPECT_THROW(clock.schedule_periodic(Duration::zero(), [] {}), TimeError);
  EXPECT_THROW(clock.schedule_periodic(-milliseconds(1), [] {}), TimeError);
  EXPECT_EQ(clock.pending(), 0u);
}

TEST(SimClock, EmptyCallbackIsRefused) {
  SimClock clock;
  EXPECT_THROW(clock.schedule(ms(1), nullptr), TimeError);
  EXPECT_THROW(clock.schedule_periodic(milliseconds(1), nullptr), TimeError);
}

TEST(SimClock, AdvanceFromInsideCallbackIsRefusedAndReported) {
  SimClock clock;
  clock.schedule(ms(1), [&] { clock.advance(milliseconds(1)); });
  clock.advance_to(ms(2));
  EXPECT_EQ(clock.callback_failures(), 1u);
  EXPECT_NE(clock.last_failure().find("inside a timer callback"), std::string::npos);
  EXPECT_EQ(clock.now(), ms(2));
}

TEST(SimClock, NextWakeupIsEarliestPendingSkippingCancelled) {
  SimClock clock;
  EXPECT_FALSE(clock.next_wakeup().has_value());
  TimerHandle a = clock.schedule(ms(3), [] {});
  clock.schedule(ms(8), [] {});
  EXPECT_EQ(clock.next_wakeup(), ms(3));
  a.cancel();
  EXPECT_EQ(clock.next_wakeup(), ms(8));
  EXPECT_EQ(clock.pending(), 1u);
}

TEST(SimClock, StepIsTheConfiguredBackendStep) {
  SimClock clock({.step = microseconds(250)});
  EXPECT_EQ(clock.step_ns(), 250'000);
  clock.advance(clock.step());
  EXPECT_EQ(clock.now_ns(), 250'000);
  EXPECT_THROW(SimClock({.step = Duration::zero()}), TimeError);
}

TEST(SimClock, RandomSourceIsRootOfTheConfiguredSeed) {
  SimClock clock({.seed = 42});
  EXPECT_EQ(clock.random_source().seed(), 42u);
  EXPECT_EQ(clock.random_source().label(), "/");
  RandomSource expected(42);
  EXPECT_EQ(clock.random_source().next_u64(), expected.next_u64());
}

TEST(SimClock, ManyCancelledTimersAreCompactedAway) {
  SimClock clock;
  std::vector<TimerHandle> handles;
  for (int i = 0; i < 5000; ++i) handles.push_back(clock.schedule(ms(1000 + i), [] {}));
  for (auto& h : handles) h.cancel();
  int n = 0;
  clock.schedule(ms(1), [&] { ++n; });
  clock.advance_to(ms(10'000));
  EXPECT_EQ(n, 1);
  EXPECT_EQ(clock.pending(), 0u);
}

// ---- section 6: total order ----

TEST(SimClock, EqualTimesRunFifo) {
  SimClock clock;
  Trace t;
  for (int i = 0; i < 10; ++i) clock.schedule(ms(5), t.rec(clock, std::to_string(i)));
  clock.advance_to(ms(5));
  ASSERT_EQ(t.events.size(), 10u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(t.events[i].first, std::to_string(i));
}

TEST(SimClock, PeriodicReinsertionCountsAsNewInsertionAtFireTime) {
  SimClock clock;
  Trace t;
  // P fires at 0 and is re-inserted for 10 ms then; O was inserted for 10 ms before that (at
  // construction), so O runs before P at 10 ms. X is scheduled for 20 ms from inside P's callback
  // at 10 ms, after P's re-insertion for 20 ms, so P runs before X at 20 ms.
  clock.schedule_periodic(milliseconds(10), [&] {
    t.events.emplace_back("P", clock.now_ns());
    if (clock.now() == ms(10)) clock.schedule(ms(20), t.rec(clock, "X"));
  });
  clock.schedule(ms(10), t.rec(clock, "O"));
  clock.advance_to(ms(20));
  EXPECT_EQ(
      t.events,
      (std::vector<std::pair<std::string, int64_t>>{
          {"P", 0}, {"O", 10'000'000}, {"P", 10'000'000}, {"P", 20'000'000}, {"X", 20'000'000}}));
}

TEST(SimClock, TwoPeriodicSamePeriodSamePhaseKeepInsertionOrder) {
  SimClock clock;
  std::string order;
  clock.schedule_periodic(milliseconds(5), [&] { order += 'a'; });
  clock.schedule_periodic(milliseconds(5), [&] { order += 'b'; });
  clock.advance_to(ms(50));
  std::string expected;
  for (int i = 0; i <= 10; ++i) expected += "ab";
  EXPECT_EQ(order, expected);
}

TEST(SimClock, TwoPeriodicSamePeriodDifferentPhaseInterleaveFixed) {
  // Periods 4 ms, phases 0 and 2 ms, plus a 2 ms timer that meets both: the interleaving is the
  // same on every run and follows the FIFO rule at each shared instant.
  auto run = [] {
    SimClock clock;
    std::string order;
    clock.schedule_periodic(milliseconds(4), [&] { order += 'a'; });
    clock.schedule_periodic(
        milliseconds(4), [&] { order += 'b'; }, ms(2));
    clock.schedule_periodic(milliseconds(2), [&] { order += 'c'; });
    clock.advance_to(ms(8));
    return order;
  };
  // t=0: a c | t=2: b c | t=4: a c | t=6: b c | t=8: a c
  const std::string first = run();
  EXPECT_EQ(first, "acbcacbcac");
  for (int i = 0; i < 20; ++i) EXPECT_EQ(run(), first);
}

// ---- Bus link ----

TEST(SimClock, DrivenBusDeliversAfterTimersAtEqualTime) {
  Bus bus;
  SimClock clock({.bus = &bus, .drive_bus = true});
  std::vector<std::string> order;
  auto sub = bus.subscribe("/x", [&](const BusMessage& m) {
    order.push_back("msg@" + std::to_string(m.stamp.ns() / 1'000'000) + "@" +
                    std::to_string(clock.now_ns() / 1'000'000));
  });
  clock.schedule(ms(2), [&] {
    order.push_back("t1");
    bus.publish("/x", clock.now(), "a");
  });
  clock.schedule(ms(2), [&] { order.push_back("t2"); });
  clock.schedule(ms(3), [&] { order.push_back("t3"); });
  clock.advance_to(ms(5));
  EXPECT_EQ(order, (std::vector<std::string>{"t1", "t2", "msg@2@2", "t3"}));
}

TEST(SimClock, DrivenBusSubscriberExceptionPropagatesOutOfAdvance) {
  Bus bus;
  SimClock clock({.bus = &bus, .drive_bus = true});
  auto sub = bus.subscribe("/x", [](const BusMessage&) { throw std::runtime_error("bad sub"); });
  bus.publish("/x", ms(3), "m");
  EXPECT_THROW(clock.advance_to(ms(5)), std::runtime_error);
  EXPECT_EQ(clock.now(), ms(3));
  EXPECT_EQ(clock.advance_to(ms(5)), 0u);  // the clock is usable again
  EXPECT_EQ(clock.now(), ms(5));
}

TEST(SimClock, AdvanceAndDeliverDrainsTheBus) {
  Bus bus;
  SimClock clock({.bus = &bus});
  int got = 0;
  auto sub = bus.subscribe("*", [&](const BusMessage&) { ++got; });
  clock.schedule(ms(1), [&] { bus.publish("/y", clock.now(), "p"); });
  EXPECT_EQ(clock.advance_and_deliver(milliseconds(2)), 2u);  // one callback + one delivery
  EXPECT_EQ(got, 1);
}

}  // namespace
}  // namespace fieldproof
