// ExternalClock: following samples without and with extrapolation (error bound against a fake
// source with jitter), the watchdog, backward samples as jumps, refusals. FakeSteadyTime only.
#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <string>
#include <vector>

#include "fieldproof/time/player_clock.hpp"

namespace fieldproof {
namespace {

constexpr SimTime kT0 = SimTime::from_ns(1'000'000'000);

// splitmix64: deterministic jitter without <random>.
struct SplitMix {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};

TEST(ExternalClockTest, now_is_the_initial_time_before_any_sample) {
  FakeSteadyTime steady;
  ExternalClock clock({.initial = SimTime::from_ns(42)}, steady);
  EXPECT_EQ(clock.now(), SimTime::from_ns(42));
}

TEST(ExternalClockTest, without_extrapolation_now_is_the_last_sample) {
  FakeSteadyTime steady;
  ExternalClock clock({}, steady);
  clock.feed(kT0);
  steady.advance(milliseconds(7));
  EXPECT_EQ(clock.now(), kT0);
  clock.feed(kT0 + milliseconds(10));
  steady.advance(milliseconds(9));
  EXPECT_EQ(clock.now(), kT0 + milliseconds(10));
}

TEST(ExternalClockTest, with_extrapolation_now_moves_between_samples_at_the_fitted_rate) {
  FakeSteadyTime steady;
  ExternalClock clock({.extrapolate = true, .window = 4}, steady);
  for (int i = 0; i < 4; ++i) {  // the source runs at rate 2: 20 ms of log per 10 ms
    clock.feed(kT0 + milliseconds(20) * i);
    if (i < 3) steady.advance(milliseconds(10));
  }
  EXPECT_NEAR(clock.rate(), 2.0, 1e-9);
  steady.advance(milliseconds(5));
  EXPECT_EQ(clock.now(), kT0 + milliseconds(70));
}

TEST(ExternalClockTest, extrapolation_never_goes_past_one_sample_period) {
  FakeSteadyTime steady;
  ExternalClock clock({.extrapolate = true, .window = 4}, steady);
  for (int i = 0; i < 4; ++i) {
    clock.feed(kT0 + milliseconds(10) * i);
    if (i < 3) steady.advance(milliseconds(10));
  }
  steady.advance(seconds(5));                      // no sample for long (no watchdog here)
  EXPECT_EQ(clock.now(), kT0 + milliseconds(40));  // last sample + one period
}

TEST(ExternalClockTest, extrapolation_never_runs_backwards) {
  FakeSteadyTime steady;
  ExternalClock clock({.extrapolate = true, .window = 2}, steady);
  clock.feed(kT0);
  steady.advance(milliseconds(10));
  clock.feed(kT0 + milliseconds(10));
  steady.advance(milliseconds(8));
  const SimTime seen = clock.now();
  EXPECT_EQ(seen, kT0 + milliseconds(18));
  clock.feed(kT0 + milliseconds(15));  // the source slowed down: less than what we showed
  EXPECT_GE(clock.now(), seen);
}

// Samples every 10 ms of the source's time at rate 1, each arriving 0..2 ms late (jitter). The
// true time at steady s is s - origin. Error of now() against it, sampled every 250 us.
struct ErrorStats {
  int64_t max_abs_ns = 0;
};

ErrorStats run_jittered_source(bool extrapolate) {
  FakeSteadyTime steady(SimTime::zero());
  ExternalClock clock({.extrapolate = extrapolate, .window = 8}, steady);
  SplitMix rng{7};
  constexpr int64_t kPeriod = 10'000'000;
  ErrorStats stats;
  int64_t next_arrival = 0;
  int64_t k = 0;
  for (int64_t s = 0; s <= 2'000'000'000; s += 250'000) {
    steady.set(SimTime::from_ns(s));
    while (s >= next_arrival) {
      clock.feed(SimTime::from_ns(k * kPeriod), SimTime::from_ns(next_arrival));
      ++k;
      next_arrival = k * kPeriod + static_cast<int64_t>(rng.next() % 2'000'001);
    }
    if (k < 10) continue;  // let the window fill
    const int64_t err = clock.now().ns() - s;
    stats.max_abs_ns = std::max(stats.max_abs_ns, err < 0 ? -err : err);
  }
  return stats;
}

TEST(ExternalClockTest, error_without_extrapolation_stays_within_a_period_plus_jitter) {
  const ErrorStats stats = run_jittered_source(false);
  EXPECT_LE(stats.max_abs_ns, 12'000'000);
  EXPECT_GE(stats.max_abs_ns, 9'000'000);  // the staircase: nearly a whole period behind
}

TEST(ExternalClockTest, error_with_extrapolation_stays_within_one_sample_period) {
  const ErrorStats extrapolated = run_jittered_source(true);
  EXPECT_LE(extrapolated.max_abs_ns, 10'000'000);
  EXPECT_LT(extrapolated.max_abs_ns, run_jittered_source(false).max_abs_ns / 2);
}

TEST(ExternalClockTest, watchdog_stops_time_and_reports_silence) {
  FakeSteadyTime steady;
  std::vector<SimTime> silent_at;
  ExternalClock clock({.extrapolate = true,
                       .window = 4,
                       .watchdog = milliseconds(5),
                       .on_silent = [&](SimTime last) { silent_at.push_back(last); }},
                      steady);
  for (int i = 0; i < 4; ++i) {
    clock.feed(kT0 + milliseconds(10) * i);
    if (i < 3) steady.advance(milliseconds(10));
  }
  steady.advance(milliseconds(4));
  EXPECT_FALSE(clock.is_silent());
  EXPECT_EQ(clock.now(), kT0 + milliseconds(34));
  steady.advance(milliseconds(20));
  EXPECT_TRUE(clock.is_silent());
  EXPECT_EQ(clock.now(), kT0 + milliseconds(35));  // stopped where the silence began
  steady.advance(seconds(1));
  EXPECT_EQ(clock.now(), kT0 + milliseconds(35));
  ASSERT_EQ(silent_at.size(), 1u);  // once per silence
  EXPECT_EQ(silent_at[0], kT0 + milliseconds(30));
  clock.feed(kT0 + milliseconds(40));
  EXPECT_FALSE(clock.is_silent());
  EXPECT_EQ(clock.now(), kT0 + milliseconds(40));
}

TEST(ExternalClockTest, watchdog_without_extrapolation_holds_the_last_sample) {
  FakeSteadyTime steady;
  int silences = 0;
  ExternalClock clock({.watchdog = milliseconds(50), .on_silent = [&](SimTime) { ++silences; }},
                      steady);
  clock.feed(kT0);
  steady.advance(milliseconds(49));
  EXPECT_FALSE(clock.is_silent());
  steady.advance(milliseconds(1));
  EXPECT_TRUE(clock.is_silent());
  EXPECT_EQ(clock.now(), kT0);
  EXPECT_EQ(silences, 1);
}

TEST(ExternalClockTest, sleep_until_returns_true_when_a_sample_reaches_the_time) {
  FakeSteadyTime steady;
  ExternalClock clock({}, steady);
  clock.feed(kT0);
  auto done = std::async(std::launch::async, [&] {
    return clock.sleep_until(kT0 + milliseconds(20), Duration::infinite());
  });
  steady.wait_for_blocked(1);
  clock.feed(kT0 + milliseconds(10));
  steady.wait_for_blocked(1);
  EXPECT_EQ(done.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  clock.feed(kT0 + milliseconds(20));
  EXPECT_TRUE(done.get());
}

TEST(ExternalClockTest, sleep_until_wakes_on_extrapolated_time) {
  FakeSteadyTime steady;
  ExternalClock clock({.extrapolate = true, .window = 2}, steady);
  clock.feed(kT0);
  steady.advance(milliseconds(10));
  clock.feed(kT0 + milliseconds(10));
  auto done = std::async(std::launch::async, [&] {
    return clock.sleep_until(kT0 + milliseconds(16), Duration::infinite());
  });
  steady.wait_for_blocked(1);
  steady.advance(milliseconds(6));  // no new sample: extrapolation reaches it
  EXPECT_TRUE(done.get());
}

TEST(ExternalClockTest, sleep_until_returns_false_on_timeout) {
  FakeSteadyTime steady;
  ExternalClock clock({}, steady);
  clock.feed(kT0);
  auto done = std::async(std::launch::async,
                         [&] { return clock.sleep_until(kT0 + seconds(1), milliseconds(30)); });
  steady.wait_for_blocked(1);
  steady.advance(milliseconds(30));
  EXPECT_FALSE(done.get());
}

TEST(ExternalClockTest, backward_sample_is_a_jump_with_handlers_and_wakes_sleepers) {
  FakeSteadyTime steady;
  std::vector<std::string> warnings;
  ExternalClock clock({.logger = [&](std::string_view w) { warnings.emplace_back(w); }}, steady);
  std::vector<ClockJump> pre, post;
  clock.add_jump_handler([&](const ClockJump& j) { pre.push_back(j); },
                         [&](const ClockJump& j) { post.push_back(j); });
  clock.feed(kT0 + seconds(5));
  EXPECT_EQ(clock.now(), kT0 + seconds(5));
  auto done = std::async(std::launch::async,
                         [&] { return clock.sleep_until(kT0 + seconds(9), Duration::infinite()); });
  steady.wait_for_blocked(1);
  clock.feed(kT0);
  EXPECT_FALSE(done.get());
  EXPECT_EQ(clock.now(), kT0);
  ASSERT_EQ(pre.size(), 1u);
  ASSERT_EQ(post.size(), 1u);
  EXPECT_EQ(pre[0].from, kT0 + seconds(5));
  EXPECT_EQ(pre[0].to, kT0);
  EXPECT_EQ(warnings.size(), 1u);
}

TEST(ExternalClockTest, control_actions_refused_with_a_warning) {
  FakeSteadyTime steady;
  std::vector<std::string> warnings;
  ExternalClock clock({.logger = [&](std::string_view w) { warnings.emplace_back(w); }}, steady);
  clock.feed(kT0);
  EXPECT_FALSE(clock.set_paused(true).ok());
  EXPECT_FALSE(clock.set_rate(2.0).ok());
  EXPECT_FALSE(clock.jump(kT0 + seconds(1)).ok());
  EXPECT_FALSE(clock.play_next(kT0).ok());
  EXPECT_FALSE(clock.set_clock_publisher(10.0, [](SimTime) {}).ok());
  ASSERT_EQ(warnings.size(), 5u);
  EXPECT_NE(warnings[0].find("set_paused refused"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[2].find("jump refused"), std::string::npos) << warnings[2];
  EXPECT_FALSE(clock.is_paused());
  EXPECT_EQ(clock.now(), kT0);
}

TEST(ExternalClockTest, wakeup_ends_a_running_sleep_at_once) {
  FakeSteadyTime steady;
  ExternalClock clock({}, steady);
  clock.feed(SimTime::from_ns(1'000));
  auto done = std::async(std::launch::async, [&] {
    return clock.sleep_until(SimTime::from_ns(1'000'000'000), Duration::infinite());
  });
  steady.wait_for_blocked(1);
  clock.wakeup();
  EXPECT_FALSE(done.get());
}

}  // namespace
}  // namespace fieldproof
