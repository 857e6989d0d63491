// TimeControllerClock: the one-anchor conversion, pause / rate / jump, sleep_until, play_next
// and the clock publisher, all on a FakeSteadyTime (no test sleeps).
#include <gtest/gtest.h>

#include <condition_variable>
#include <future>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#include "fieldproof/time/player_clock.hpp"
#include "fieldproof/time/time_error.hpp"

namespace fieldproof {
namespace {

constexpr SimTime kStart = SimTime::from_ns(5'000'000'000);

SimTime at(int64_t ms) { return kStart + milliseconds(ms); }

struct Fixture : ::testing::Test {
  FakeSteadyTime steady;
};

using TimeControllerClockTest = Fixture;

TEST_F(TimeControllerClockTest, starts_at_the_given_time) {
  TimeControllerClock clock({.start = kStart}, steady);
  EXPECT_EQ(clock.now(), kStart);
  EXPECT_FALSE(clock.is_paused());
  EXPECT_EQ(clock.rate(), 1.0);
}

TEST_F(TimeControllerClockTest, conversion_at_rate_1_follows_steady_time) {
  TimeControllerClock clock({.start = kStart}, steady);
  steady.advance(milliseconds(1500));
  EXPECT_EQ(clock.now(), at(1500));
  steady.advance(nanoseconds(1));
  EXPECT_EQ(clock.now(), at(1500) + nanoseconds(1));
}

TEST_F(TimeControllerClockTest, conversion_at_rate_2_5_scales_steady_time) {
  TimeControllerClock clock({.start = kStart, .rate = 2.5}, steady);
  steady.advance(seconds(2));
  EXPECT_EQ(clock.now(), at(5000));
  steady.advance(nanoseconds(1));  // 2.5 ns: ties round away from zero
  EXPECT_EQ(clock.now(), at(5000) + nanoseconds(3));
}

TEST_F(TimeControllerClockTest, conversion_rounds_to_nearest_ties_away_from_zero) {
  const TimeControllerClock::Snapshot ref{SimTime::from_ns(100), SimTime::from_ns(1000)};
  EXPECT_EQ(TimeControllerClock::steady_to_log(ref, 0.5, SimTime::from_ns(101)).ns(), 1001);
  EXPECT_EQ(TimeControllerClock::steady_to_log(ref, 0.5, SimTime::from_ns(99)).ns(), 999);
  EXPECT_EQ(TimeControllerClock::steady_to_log(ref, 0.4, SimTime::from_ns(101)).ns(), 1000);
}

TEST_F(TimeControllerClockTest, log_to_steady_is_the_first_instant_reaching_the_log_time) {
  const TimeControllerClock::Snapshot ref{SimTime::from_ns(1'000), SimTime::from_ns(50'000)};
  for (double rate : {0.3, 1.0, 2.5, 7.0}) {
    for (int64_t log : {49'000, 50'000, 50'001, 50'007, 61'234}) {
      const SimTime s = TimeControllerClock::log_to_steady(ref, rate, SimTime::from_ns(log));
      EXPECT_GE(TimeControllerClock::steady_to_log(ref, rate, s).ns(), log) << rate << " " << log;
      EXPECT_LT(TimeControllerClock::steady_to_log(ref, rate, s - nanoseconds(1)).ns(), log)
          << rate << " " << log;
    }
  }
}

TEST_F(TimeControllerClockTest, conversion_re_anchors_at_each_rate_change) {
  TimeControllerClock clock({.start = kStart, .rate = 0.5}, steady);
  steady.advance(seconds(2));  // +1 s
  ASSERT_TRUE(clock.set_rate(2.0).ok());
  steady.advance(seconds(1));  // +2 s
  ASSERT_TRUE(clock.set_rate(1.0).ok());
  steady.advance(seconds(1));  // +1 s
  EXPECT_EQ(clock.now(), at(4000));
}

TEST_F(TimeControllerClockTest, pause_then_resume_keeps_time) {
  TimeControllerClock clock({.start = kStart}, steady);
  steady.advance(seconds(1));
  ASSERT_TRUE(clock.set_paused(true).ok());
  EXPECT_TRUE(clock.is_paused());
  steady.advance(seconds(10));
  EXPECT_EQ(clock.now(), at(1000));
  ASSERT_TRUE(clock.set_paused(false).ok());
  EXPECT_EQ(clock.now(), at(1000));
  steady.advance(milliseconds(250));
  EXPECT_EQ(clock.now(), at(1250));
}

TEST_F(TimeControllerClockTest, pausing_twice_is_a_no_op) {
  TimeControllerClock clock({.start = kStart, .start_paused = true}, steady);
  ASSERT_TRUE(clock.set_paused(true).ok());
  steady.advance(seconds(1));
  EXPECT_EQ(clock.now(), kStart);
}

TEST_F(TimeControllerClockTest, rate_kept_across_a_pause) {
  TimeControllerClock clock({.start = kStart}, steady);
  ASSERT_TRUE(clock.set_rate(2.5).ok());
  ASSERT_TRUE(clock.set_paused(true).ok());
  steady.advance(seconds(3));
  EXPECT_EQ(clock.rate(), 2.5);
  ASSERT_TRUE(clock.set_paused(false).ok());
  steady.advance(seconds(2));
  EXPECT_EQ(clock.now(), at(5000));
}

TEST_F(TimeControllerClockTest, rate_set_while_paused_applies_after_resume) {
  TimeControllerClock clock({.start = kStart, .start_paused = true}, steady);
  ASSERT_TRUE(clock.set_rate(2.0).ok());
  steady.advance(seconds(1));
  EXPECT_EQ(clock.now(), kStart);
  ASSERT_TRUE(clock.set_paused(false).ok());
  steady.advance(seconds(1));
  EXPECT_EQ(clock.now(), at(2000));
}

TEST_F(TimeControllerClockTest, set_rate_zero_refused) {
  TimeControllerClock clock({.start = kStart}, steady);
  const Status s = clock.set_rate(0.0);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("must be a finite number > 0"), std::string::npos) << s.message();
  EXPECT_EQ(clock.rate(), 1.0);
}

TEST_F(TimeControllerClockTest, set_rate_negative_refused) {
  TimeControllerClock clock({.start = kStart}, steady);
  EXPECT_FALSE(clock.set_rate(-1.0).ok());
  EXPECT_FALSE(clock.set_rate(std::numeric_limits<double>::quiet_NaN()).ok());
  EXPECT_FALSE(clock.set_rate(std::numeric_limits<double>::infinity()).ok());
  steady.advance(seconds(1));
  EXPECT_EQ(clock.now(), at(1000));
}

TEST_F(TimeControllerClockTest, constructor_refuses_a_non_positive_rate) {
  EXPECT_THROW(TimeControllerClock({.start = kStart, .rate = 0.0}, steady), TimeError);
}

TEST_F(TimeControllerClockTest, jump_backward_with_playback_rate) {
  TimeControllerClock clock({.start = kStart, .rate = 2.5}, steady);
  steady.advance(seconds(2));
  ASSERT_EQ(clock.now(), at(5000));
  ASSERT_TRUE(clock.jump(at(1000)).ok());
  EXPECT_EQ(clock.now(), at(1000));
  steady.advance(seconds(1));
  EXPECT_EQ(clock.now(), at(3500));
}

TEST_F(TimeControllerClockTest, jump_forward_with_playback_rate) {
  TimeControllerClock clock({.start = kStart, .rate = 0.5}, steady);
  steady.advance(seconds(1));
  ASSERT_TRUE(clock.jump(at(60'000)).ok());
  EXPECT_EQ(clock.now(), at(60'000));
  steady.advance(seconds(3));
  EXPECT_EQ(clock.now(), at(61'500));
}

TEST_F(TimeControllerClockTest, jump_while_paused_stays_paused_at_the_target) {
  TimeControllerClock clock({.start = kStart, .start_paused = true}, steady);
  ASSERT_TRUE(clock.jump(at(700)).ok());
  steady.advance(seconds(1));
  EXPECT_EQ(clock.now(), at(700));
  EXPECT_TRUE(clock.is_paused());
}

TEST_F(TimeControllerClockTest, jump_handlers_called_with_from_and_to) {
  TimeControllerClock clock({.start = kStart}, steady);
  std::vector<std::string> calls;
  ClockJump pre_seen, post_seen;
  SimTime now_in_pre, now_in_post;
  clock.add_jump_handler(
      [&](const ClockJump& j) {
        calls.push_back("pre");
        pre_seen = j;
        now_in_pre = clock.now();
      },
      [&](const ClockJump& j) {
        calls.push_back("post");
        post_seen = j;
        now_in_post = clock.now();
      });
  steady.advance(seconds(1));
  ASSERT_TRUE(clock.jump(at(200)).ok());
  EXPECT_EQ(calls, (std::vector<std::string>{"pre", "post"}));
  EXPECT_EQ(pre_seen.from, at(1000));
  EXPECT_EQ(pre_seen.to, at(200));
  EXPECT_EQ(post_seen.from, at(1000));
  EXPECT_EQ(post_seen.to, at(200));
  EXPECT_EQ(now_in_pre, at(1000));  // pre runs before the change
  EXPECT_EQ(now_in_post, at(200));  // post after
}

TEST_F(TimeControllerClockTest, removed_jump_handler_not_called) {
  TimeControllerClock clock({.start = kStart}, steady);
  int removed_calls = 0, kept_calls = 0;
  const uint64_t id = clock.add_jump_handler([&](const ClockJump&) { ++removed_calls; },
                                             [&](const ClockJump&) { ++removed_calls; });
  clock.add_jump_handler({}, [&](const ClockJump&) { ++kept_calls; });
  EXPECT_TRUE(clock.remove_jump_handler(id));
  EXPECT_FALSE(clock.remove_jump_handler(id));
  ASSERT_TRUE(clock.jump(at(3)).ok());
  EXPECT_EQ(removed_calls, 0);
  EXPECT_EQ(kept_calls, 1);
}

TEST_F(TimeControllerClockTest, sleep_until_returns_true_at_the_due_time) {
  TimeControllerClock clock({.start = kStart, .rate = 2.0}, steady);
  auto done = std::async(std::launch::async,
                         [&] { return clock.sleep_until(at(1000), Duration::infinite()); });
  steady.wait_for_blocked(1);
  steady.advance(milliseconds(499));  // log +998 ms: not yet
  steady.wait_for_blocked(1);
  EXPECT_EQ(done.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  steady.advance(milliseconds(1));  // log +1000 ms: due
  EXPECT_TRUE(done.get());
  EXPECT_EQ(clock.now(), at(1000));
}

TEST_F(TimeControllerClockTest, sleep_until_a_past_time_returns_true_at_once) {
  TimeControllerClock clock({.start = kStart}, steady);
  EXPECT_TRUE(clock.sleep_until(kStart - seconds(1), Duration::zero()));
  EXPECT_TRUE(clock.sleep_until(kStart, Duration::zero()));
}

TEST_F(TimeControllerClockTest, sleep_until_returns_false_on_timeout) {
  TimeControllerClock clock({.start = kStart}, steady);
  auto done = std::async(std::launch::async,
                         [&] { return clock.sleep_until(at(10'000), milliseconds(100)); });
  steady.wait_for_blocked(1);
  steady.advance(milliseconds(100));
  EXPECT_FALSE(done.get());
  EXPECT_EQ(clock.now(), at(100));
}

TEST_F(TimeControllerClockTest, sleep_until_returns_false_when_woken_by_a_jump) {
  TimeControllerClock clock({.start = kStart}, steady);
  auto done = std::async(std::launch::async,
                         [&] { return clock.sleep_until(at(10'000), Duration::infinite()); });
  steady.wait_for_blocked(1);
  ASSERT_TRUE(clock.jump(at(20'000)).ok());  // forward past the target: still false
  EXPECT_FALSE(done.get());
}

TEST_F(TimeControllerClockTest, sleep_until_returns_false_when_woken_by_a_pause) {
  TimeControllerClock clock({.start = kStart}, steady);
  auto done = std::async(std::launch::async,
                         [&] { return clock.sleep_until(at(10'000), Duration::infinite()); });
  steady.wait_for_blocked(1);
  ASSERT_TRUE(clock.set_paused(true).ok());
  // No resume, no steady time: the pause alone ends the other thread's wait (rosbag2's clock
  // tests expect an immediate false). Before, the wait went on until a resume or its timeout.
  EXPECT_FALSE(done.get());
  EXPECT_TRUE(clock.is_paused());
}

TEST_F(TimeControllerClockTest, pause_ends_a_sleep_with_a_timeout_at_once_without_steady_time) {
  TimeControllerClock clock({.start = kStart}, steady);
  const SimTime steady_before = steady.now();
  auto done = std::async(std::launch::async,
                         [&] { return clock.sleep_until(at(10'000), seconds(3)); });
  steady.wait_for_blocked(1);
  ASSERT_TRUE(clock.set_paused(true).ok());
  EXPECT_FALSE(done.get());
  EXPECT_EQ(steady.now(), steady_before);  // it did not wait for its 3 s timeout
}

TEST_F(TimeControllerClockTest, wakeup_ends_a_running_sleep_at_once) {
  TimeControllerClock clock({.start = kStart}, steady);
  auto done = std::async(std::launch::async,
                         [&] { return clock.sleep_until(at(10'000), Duration::infinite()); });
  steady.wait_for_blocked(1);
  clock.wakeup();
  EXPECT_FALSE(done.get());
  EXPECT_EQ(clock.now(), kStart);  // time did not move
  EXPECT_FALSE(clock.is_paused());
}

TEST_F(TimeControllerClockTest, wakeup_ends_a_sleep_made_while_paused) {
  TimeControllerClock clock({.start = kStart, .start_paused = true}, steady);
  auto done = std::async(std::launch::async,
                         [&] { return clock.sleep_until(kStart, Duration::infinite()); });
  steady.wait_for_blocked(1);
  clock.wakeup();
  EXPECT_FALSE(done.get());
  EXPECT_TRUE(clock.is_paused());
}

TEST_F(TimeControllerClockTest, wakeup_does_not_affect_a_later_sleep) {
  TimeControllerClock clock({.start = kStart}, steady);
  clock.wakeup();
  auto done = std::async(std::launch::async,
                         [&] { return clock.sleep_until(at(100), Duration::infinite()); });
  steady.wait_for_blocked(1);
  steady.advance(milliseconds(100));
  EXPECT_TRUE(done.get());
}

TEST(TimeControllerClockExactness, now_is_exact_below_2_pow_63_ns) {
  FakeSteadyTime steady(SimTime::zero());
  TimeControllerClock clock({.start = SimTime::zero()}, steady);
  // 9.2e18 ns and beyond, up to 2^63 - 2: exact (before, everything from 9.2e18 saturated).
  for (const int64_t t : {int64_t{9'200'000'000'000'000'000}, int64_t{9'200'000'000'000'000'001},
                          int64_t{9'223'372'036'854'775'000},
                          std::numeric_limits<int64_t>::max() - 1}) {
    steady.set(SimTime::from_ns(t));
    EXPECT_EQ(clock.now().ns(), t);
    EXPECT_FALSE(clock.now().is_infinite());
  }
  const TimeControllerClock::Snapshot ref{SimTime::zero(), SimTime::zero()};
  EXPECT_EQ(TimeControllerClock::steady_to_log(ref, 0.5, SimTime::from_ns(9'223'372'036'854'775'000))
                .ns(),
            4'611'686'018'427'387'500);
  EXPECT_EQ(
      TimeControllerClock::steady_to_log(ref, 2.0, SimTime::from_ns(4'611'686'018'427'387'000))
          .ns(),
      9'223'372'036'854'774'000);
  // Past the int64 range it saturates.
  EXPECT_TRUE(
      TimeControllerClock::steady_to_log(ref, 4.0, SimTime::from_ns(4'611'686'018'427'387'000))
          .is_infinite());
}

TEST_F(TimeControllerClockTest, sleep_until_while_paused_returns_false_after_the_timeout) {
  TimeControllerClock clock({.start = kStart, .start_paused = true}, steady);
  auto done =
      std::async(std::launch::async, [&] { return clock.sleep_until(kStart, milliseconds(50)); });
  steady.wait_for_blocked(1);
  steady.advance(milliseconds(50));
  EXPECT_FALSE(done.get());  // even though kStart is reached: paused
}

TEST_F(TimeControllerClockTest, sleep_until_follows_a_rate_change_while_waiting) {
  TimeControllerClock clock({.start = kStart}, steady);
  auto done = std::async(std::launch::async,
                         [&] { return clock.sleep_until(at(1000), Duration::infinite()); });
  steady.wait_for_blocked(1);
  ASSERT_TRUE(clock.set_rate(4.0).ok());
  steady.wait_for_blocked(1);
  steady.advance(milliseconds(249));
  steady.wait_for_blocked(1);
  EXPECT_EQ(done.wait_for(std::chrono::seconds(0)), std::future_status::timeout);
  steady.advance(milliseconds(1));
  EXPECT_TRUE(done.get());
}

TEST_F(TimeControllerClockTest, play_next_while_paused_moves_to_the_message_time) {
  TimeControllerClock clock({.start = kStart, .start_paused = true}, steady);
  int jumps = 0;
  clock.add_jump_handler([&](const ClockJump&) { ++jumps; }, {});
  ASSERT_TRUE(clock.play_next(at(40)).ok());
  EXPECT_EQ(clock.now(), at(40));
  ASSERT_TRUE(clock.play_next(at(40)).ok());  // equal stamps: allowed
  EXPECT_TRUE(clock.is_paused());
  EXPECT_EQ(jumps, 0);
  steady.advance(seconds(1));
  EXPECT_EQ(clock.now(), at(40));
}

TEST_F(TimeControllerClockTest, play_next_refused_while_playing_and_backwards) {
  TimeControllerClock clock({.start = kStart}, steady);
  EXPECT_FALSE(clock.play_next(at(40)).ok());
  ASSERT_TRUE(clock.set_paused(true).ok());
  const Status s = clock.play_next(kStart - nanoseconds(1));
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("before now"), std::string::npos) << s.message();
}

// The publisher's callback counts publications and signals the test.
struct Publications {
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<SimTime> times;
  void add(SimTime t) {
    {
      std::lock_guard<std::mutex> g(mutex);
      times.push_back(t);
    }
    cv.notify_all();
  }
  // Waits for the n-th publication (an event; the real-time bound only guards a hang).
  bool wait_for(size_t n) {
    std::unique_lock<std::mutex> g(mutex);
    return cv.wait_for(g, std::chrono::seconds(30), [&] { return times.size() >= n; });
  }
  size_t size() {
    std::lock_guard<std::mutex> g(mutex);
    return times.size();
  }
};

TEST_F(TimeControllerClockTest, clock_publication_rate_is_n_per_steady_second) {
  Publications pubs;  // outlives the clock (whose destructor stops the publisher)
  TimeControllerClock clock({.start = kStart, .rate = 2.0}, steady);
  ASSERT_TRUE(clock.set_clock_publisher(20.0, [&](SimTime t) { pubs.add(t); }).ok());
  ASSERT_TRUE(pubs.wait_for(1));  // the first one at once
  for (int i = 1; i <= 20; ++i) {
    steady.wait_for_blocked(1);
    steady.advance(milliseconds(25));  // half a period: nothing due
    steady.wait_for_blocked(1);
    EXPECT_EQ(pubs.size(), static_cast<size_t>(i));
    steady.advance(milliseconds(25));
    ASSERT_TRUE(pubs.wait_for(static_cast<size_t>(i) + 1));
  }
  steady.wait_for_blocked(1);
  ASSERT_TRUE(clock.set_clock_publisher(0.0, {}).ok());
  EXPECT_EQ(pubs.size(), 21u);  // 20 per steady second, plus the one at the start
  for (size_t i = 0; i < pubs.times.size(); ++i) {
    EXPECT_EQ(pubs.times[i], kStart + milliseconds(100) * static_cast<int64_t>(i));  // rate 2
  }
}

TEST_F(TimeControllerClockTest, clock_publication_off_at_zero_and_refused_when_negative) {
  TimeControllerClock clock({.start = kStart}, steady);
  EXPECT_TRUE(clock.set_clock_publisher(0.0, {}).ok());
  EXPECT_FALSE(clock.set_clock_publisher(-1.0, [](SimTime) {}).ok());
  EXPECT_FALSE(clock.set_clock_publisher(10.0, {}).ok());
  steady.advance(seconds(1));
  EXPECT_EQ(clock.publications(), 0u);
}

TEST_F(TimeControllerClockTest, clock_publication_while_paused_repeats_the_paused_time) {
  Publications pubs;  // outlives the clock (whose destructor stops the publisher)
  TimeControllerClock clock({.start = kStart, .start_paused = true}, steady);
  ASSERT_TRUE(clock.set_clock_publisher(10.0, [&](SimTime t) { pubs.add(t); }).ok());
  ASSERT_TRUE(pubs.wait_for(1));
  steady.wait_for_blocked(1);
  steady.advance(milliseconds(100));
  ASSERT_TRUE(pubs.wait_for(2));
  EXPECT_EQ(pubs.times[0], kStart);
  EXPECT_EQ(pubs.times[1], kStart);
}

}  // namespace
}  // namespace fieldproof
