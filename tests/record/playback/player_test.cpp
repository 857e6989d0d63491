// Player on a FakeSteadyTime: pacing, pause, rate, seek (never drops or repeats), play_next at
// equal stamps, burst, loop, duration/until, bad input. No test sleeps: each waits for the
// player's run thread to be asleep (wait_for_blocked) before moving time.
#include "fieldproof/record/player.hpp"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fieldproof/record/mcap_writer.hpp"

namespace fieldproof::record {
namespace {

constexpr int64_t kS = 1'000'000'000;

struct W {
  uint16_t channel;  // 0 = /a, 1 = /b
  int64_t log_ns;
  std::string data;
};

std::string record(const std::vector<W>& messages, size_t per_chunk = 3,
                   std::vector<uint64_t>* chunk_starts = nullptr) {
  std::ostringstream out;
  McapWriterOptions options;
  options.compression = Compression::kNone;
  McapWriter w(options);
  if (!w.open(out).ok()) return {};
  static_cast<void>(w.add_channel("/a", "json", 0));
  static_cast<void>(w.add_channel("/b", "json", 0));
  uint32_t seq = 0;
  for (size_t i = 0; i < messages.size(); ++i) {
    if (i % per_chunk == 0) {
      if (w.buffered_bytes() > 0) static_cast<void>(w.close_chunk());
      if (chunk_starts) chunk_starts->push_back(w.bytes_written());
    }
    static_cast<void>(w.write(messages[i].channel, seq++, SimTime::from_ns(messages[i].log_ns),
                              SimTime::from_ns(messages[i].log_ns), messages[i].data));
  }
  static_cast<void>(w.close());
  return out.str();
}

// m0..m9 on /a at 1 s, 2 s, ... 10 s.
std::string ten_seconds() {
  std::vector<W> msgs;
  for (int i = 0; i < 10; ++i) msgs.push_back({0, (i + 1) * kS, "m" + std::to_string(i)});
  return record(msgs);
}

// Runs a player on its own thread and collects what it plays.
class Harness {
 public:
  Harness(std::string bytes, PlayerOptions options) {
    auto r = Player::open_bytes(std::move(bytes), std::move(options), steady_);
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    if (r.ok()) player_ = std::move(r).value();
  }
  ~Harness() {
    if (player_) player_->stop();
    if (thread_.joinable()) thread_.join();
  }
  void start() {
    thread_ = std::thread([this] {
      player_->run([this](const PlayedMessage& m) {
        std::lock_guard lock(mutex_);
        got_.emplace_back(m.data);
        stamps_.push_back(m.log_time_ns);
        steady_at_.push_back(steady_.now().ns());
        cv_.notify_all();
      });
      std::lock_guard lock(mutex_);
      done_ = true;
      cv_.notify_all();
    });
  }
  // Waits for the run thread to be asleep in the clock (a check that nothing more played).
  void settle() { steady_.wait_for_blocked(1); }
  // The player clock is a pure function of steady time, so moving time need not wait for the
  // run thread.
  void advance(int64_t ns) { steady_.advance(nanoseconds(ns)); }
  // Waits until n messages have played (or run() ended), then returns them.
  std::vector<std::string> wait_count(size_t n) {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return got_.size() >= n || done_; });
    return got_;
  }
  void join() {
    if (thread_.joinable()) thread_.join();
  }
  std::vector<std::string> got() {
    std::lock_guard lock(mutex_);
    return got_;
  }
  std::vector<int64_t> steady_at() {
    std::lock_guard lock(mutex_);
    return steady_at_;
  }
  Player& p() { return *player_; }
  FakeSteadyTime& steady() { return steady_; }
  bool ok() const { return player_ != nullptr; }

 private:
  FakeSteadyTime steady_{SimTime::zero()};
  std::unique_ptr<Player> player_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::vector<std::string> got_;
  std::vector<int64_t> stamps_;
  std::vector<int64_t> steady_at_;
};

std::vector<std::string> names(int from, int to) {  // m<from> .. m<to-1>
  std::vector<std::string> v;
  for (int i = from; i < to; ++i) v.push_back("m" + std::to_string(i));
  return v;
}

TEST(PlayerTest, messages_play_at_their_stamps_at_rate_one) {
  Harness h(ten_seconds(), {});
  ASSERT_TRUE(h.ok());
  h.start();
  // The clock starts at the first stamp: m0 plays at once, the others one steady second apart.
  for (size_t i = 1; i < 10; ++i) {
    h.wait_count(i);
    h.advance(kS);
  }
  h.join();
  EXPECT_EQ(h.got(), names(0, 10));
  std::vector<int64_t> want;
  for (int i = 0; i < 10; ++i) want.push_back(i * kS);
  EXPECT_EQ(h.steady_at(), want);
}

TEST(PlayerTest, nothing_plays_before_its_stamp) {
  Harness h(ten_seconds(), {});
  ASSERT_TRUE(h.ok());
  h.start();
  h.wait_count(1);
  h.advance(kS - 1);
  h.settle();
  EXPECT_EQ(h.got(), names(0, 1));
  h.advance(1);
  EXPECT_EQ(h.wait_count(2), names(0, 2));
}

TEST(PlayerTest, rate_two_plays_twice_as_fast) {
  Harness h(ten_seconds(), {.rate = 2.0});
  ASSERT_TRUE(h.ok());
  h.start();
  for (size_t i = 1; i < 10; ++i) {
    h.wait_count(i);
    h.advance(kS / 2);
  }
  h.join();
  EXPECT_EQ(h.got(), names(0, 10));
  EXPECT_EQ(h.steady_at().back(), 9 * kS / 2);
}

TEST(PlayerTest, set_rate_while_playing_changes_the_pace_from_then_on) {
  Harness h(ten_seconds(), {});
  ASSERT_TRUE(h.ok());
  h.start();
  h.wait_count(1);
  h.advance(kS);  // m1 at steady 1 s
  h.wait_count(2);
  ASSERT_TRUE(h.p().set_rate(4.0).ok());
  h.advance(kS / 4);  // m2 a quarter second later
  EXPECT_EQ(h.wait_count(3), names(0, 3));
  EXPECT_EQ(h.steady_at().back(), kS + kS / 4);
}

TEST(PlayerTest, set_rate_zero_or_negative_is_refused) {
  Harness h(ten_seconds(), {});
  ASSERT_TRUE(h.ok());
  EXPECT_FALSE(h.p().set_rate(0.0).ok());
  EXPECT_FALSE(h.p().set_rate(-1.0).ok());
  EXPECT_EQ(h.p().status().rate, 1.0);
}

TEST(PlayerTest, pause_stops_playback_and_resume_goes_on_from_the_same_time) {
  Harness h(ten_seconds(), {});
  ASSERT_TRUE(h.ok());
  h.start();
  h.wait_count(1);
  h.advance(kS / 2);
  ASSERT_TRUE(h.p().pause().ok());
  h.advance(10 * kS);  // paused: nothing plays however long
  h.settle();
  EXPECT_EQ(h.got(), names(0, 1));
  EXPECT_EQ(h.p().status().now, SimTime::from_ns(kS + kS / 2));
  ASSERT_TRUE(h.p().resume().ok());
  h.advance(kS / 2);  // the remaining half second to m1
  EXPECT_EQ(h.wait_count(2), names(0, 2));
}

TEST(PlayerTest, toggle_flips_pause) {
  Harness h(ten_seconds(), {});
  ASSERT_TRUE(h.ok());
  ASSERT_TRUE(h.p().toggle().ok());
  EXPECT_TRUE(h.p().status().paused);
  ASSERT_TRUE(h.p().toggle().ok());
  EXPECT_FALSE(h.p().status().paused);
}

TEST(PlayerTest, start_paused_plays_nothing_until_resumed) {
  Harness h(ten_seconds(), {.start_paused = true});
  ASSERT_TRUE(h.ok());
  h.start();
  h.advance(5 * kS);
  h.settle();
  EXPECT_TRUE(h.got().empty());
  ASSERT_TRUE(h.p().resume().ok());
  EXPECT_EQ(h.wait_count(1), names(0, 1));
}

TEST(PlayerTest, seek_forward_plays_first_the_message_at_or_after_the_target) {
  Harness h(ten_seconds(), {});
  ASSERT_TRUE(h.ok());
  h.start();
  h.wait_count(1);
  h.advance(kS);  // m0, m1 played; now 2 s
  h.wait_count(2);
  const SeekResult r = h.p().seek(SimTime::from_ns(5 * kS));  // m4 is stamped exactly 5 s
  EXPECT_FALSE(r.clamped);
  EXPECT_EQ(h.wait_count(3), (std::vector<std::string>{"m0", "m1", "m4"}));
  h.advance(kS);
  EXPECT_EQ(h.wait_count(4), (std::vector<std::string>{"m0", "m1", "m4", "m5"}));
}

TEST(PlayerTest, seek_between_stamps_plays_the_next_message_when_due) {
  Harness h(ten_seconds(), {});
  ASSERT_TRUE(h.ok());
  h.start();
  h.wait_count(1);
  (void)h.p().seek(SimTime::from_ns(5 * kS + 1));  // between m4 (5 s) and m5 (6 s)
  h.advance(kS - 2);
  h.settle();
  EXPECT_EQ(h.got(), names(0, 1));
  h.advance(1);
  EXPECT_EQ(h.wait_count(2), (std::vector<std::string>{"m0", "m5"}));
}

TEST(PlayerTest, seek_backwards_replays_from_the_target_without_gaps) {
  Harness h(ten_seconds(), {});
  ASSERT_TRUE(h.ok());
  h.start();
  h.wait_count(1);
  h.advance(3 * kS);  // m0..m3
  h.wait_count(4);
  (void)h.p().seek(SimTime::from_ns(2 * kS));  // m1 again
  h.advance(kS);
  EXPECT_EQ(h.wait_count(6), (std::vector<std::string>{"m0", "m1", "m2", "m3", "m1", "m2"}));
}

TEST(PlayerTest, seek_while_paused_plays_nothing_until_resumed) {
  Harness h(ten_seconds(), {});
  ASSERT_TRUE(h.ok());
  h.start();
  h.wait_count(1);
  ASSERT_TRUE(h.p().pause().ok());
  (void)h.p().seek(SimTime::from_ns(7 * kS));
  h.advance(kS);
  h.settle();
  EXPECT_EQ(h.got(), names(0, 1));
  EXPECT_EQ(h.p().status().now, SimTime::from_ns(7 * kS));
  ASSERT_TRUE(h.p().resume().ok());
  EXPECT_EQ(h.wait_count(2), (std::vector<std::string>{"m0", "m6"}));
}

TEST(PlayerTest, seek_outside_the_recording_is_clamped_and_said) {
  Harness h(ten_seconds(), {});
  ASSERT_TRUE(h.ok());
  const SeekResult late = h.p().seek(SimTime::from_ns(99 * kS));
  EXPECT_TRUE(late.clamped);
  EXPECT_EQ(late.to, SimTime::from_ns(10 * kS));
  EXPECT_NE(late.message.find("clamped"), std::string::npos) << late.message;
  const SeekResult early = h.p().seek(SimTime::zero());
  EXPECT_TRUE(early.clamped);
  EXPECT_EQ(early.to, SimTime::from_ns(kS));
}

TEST(PlayerTest, play_next_plays_exactly_one_message_in_recorded_order_at_equal_stamps) {
  // Five messages share the 2 s stamp, across chunk boundaries.
  std::vector<W> msgs = {{0, kS, "first"}};
  for (int i = 0; i < 5; ++i)
    msgs.push_back({static_cast<uint16_t>(i % 2), 2 * kS, "e" + std::to_string(i)});
  msgs.push_back({0, 3 * kS, "last"});
  Harness h(record(msgs, 2), {.start_paused = true});
  ASSERT_TRUE(h.ok());
  h.start();
  h.settle();
  std::vector<std::string> want;
  for (const char* name : {"first", "e0", "e1", "e2", "e3", "e4", "last"}) {
    ASSERT_TRUE(h.p().play_next().ok());
    want.push_back(name);
    EXPECT_EQ(h.got(), want);
  }
  EXPECT_EQ(h.p().status().now, SimTime::from_ns(3 * kS));
  EXPECT_FALSE(h.p().play_next().ok());  // the end
}

TEST(PlayerTest, play_next_is_refused_while_playing) {
  Harness h(ten_seconds(), {});
  ASSERT_TRUE(h.ok());
  h.start();
  h.settle();
  const Status s = h.p().play_next();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("paused"), std::string::npos);
}

TEST(PlayerTest, resume_after_play_next_goes_on_from_the_next_message_without_repeats) {
  Harness h(ten_seconds(), {.start_paused = true});
  ASSERT_TRUE(h.ok());
  h.start();
  h.settle();
  ASSERT_TRUE(h.p().play_next().ok());  // m0
  ASSERT_TRUE(h.p().play_next().ok());  // m1, clock now at 2 s
  ASSERT_TRUE(h.p().resume().ok());
  h.advance(kS);
  EXPECT_EQ(h.wait_count(3), names(0, 3));
}

TEST(PlayerTest, burst_plays_n_messages_at_once) {
  Harness h(ten_seconds(), {.start_paused = true});
  ASSERT_TRUE(h.ok());
  h.start();
  h.settle();
  uint64_t n = 0;
  ASSERT_TRUE(h.p().burst(4, &n).ok());
  EXPECT_EQ(n, 4u);
  EXPECT_EQ(h.got(), names(0, 4));
  ASSERT_TRUE(h.p().burst(100, &n).ok());  // only six left
  EXPECT_EQ(n, 6u);
  EXPECT_EQ(h.got(), names(0, 10));
}

TEST(PlayerTest, loop_starts_again_at_the_end) {
  Harness h(record({{0, kS, "x"}, {0, 2 * kS, "y"}}), {.loop = true});
  ASSERT_TRUE(h.ok());
  h.start();
  h.wait_count(1);
  h.advance(kS);  // y, then loop: x again at once
  h.wait_count(3);
  h.advance(kS);
  EXPECT_EQ(h.wait_count(5), (std::vector<std::string>{"x", "y", "x", "y", "x"}));
  EXPECT_EQ(h.p().status().loops, 2u);
}

TEST(PlayerTest, playback_duration_ends_after_that_much_log_time_inclusive) {
  Harness h(ten_seconds(), {.start_offset = seconds(1), .playback_duration = seconds(3)});
  ASSERT_TRUE(h.ok());
  h.start();
  for (size_t i = 0; i < 3; ++i) {
    h.wait_count(i + 1);
    h.advance(kS);
  }
  h.join();
  EXPECT_EQ(h.got(), names(1, 5));  // 2 s .. 5 s
}

TEST(PlayerTest, playback_until_ends_at_that_offset_from_the_first_message) {
  Harness h(ten_seconds(), {.playback_until = seconds(2)});
  ASSERT_TRUE(h.ok());
  h.start();
  for (size_t i = 0; i < 2; ++i) {
    h.wait_count(i + 1);
    h.advance(kS);
  }
  h.join();
  EXPECT_EQ(h.got(), names(0, 3));  // 1 s .. 3 s
}

TEST(PlayerTest, topics_filter_plays_only_the_listed_topics) {
  Harness h(record({{0, kS, "a1"}, {1, kS, "b1"}, {0, 2 * kS, "a2"}}), {.topics = {"/b"}});
  ASSERT_TRUE(h.ok());
  h.start();
  h.join();
  EXPECT_EQ(h.got(), (std::vector<std::string>{"b1"}));
}

TEST(PlayerTest, unknown_topic_is_refused) {
  FakeSteadyTime steady;
  auto r = Player::open_bytes(ten_seconds(), {.topics = {"/nope"}}, steady);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("/nope"), std::string::npos);
}

TEST(PlayerTest, bad_rate_is_refused) {
  FakeSteadyTime steady;
  for (double rate : {0.0, -2.0}) {
    auto r = Player::open_bytes(ten_seconds(), {.rate = rate}, steady);
    EXPECT_FALSE(r.ok());
  }
}

TEST(PlayerTest, bytes_that_are_not_mcap_are_refused) {
  FakeSteadyTime steady;
  auto r = Player::open_bytes("hello, not an mcap file", {}, steady);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotMcap);
}

TEST(PlayerTest, truncated_file_plays_its_complete_part_and_says_so) {
  std::vector<W> msgs;
  for (int i = 0; i < 9; ++i) msgs.push_back({0, (i + 1) * kS, "m" + std::to_string(i)});
  std::vector<uint64_t> starts;
  const std::string bytes = record(msgs, 3, &starts);
  ASSERT_EQ(starts.size(), 3u);
  Harness h(bytes.substr(0, starts[2] + 10), {.start_paused = true});
  ASSERT_TRUE(h.ok());
  EXPECT_FALSE(h.p().complete());
  EXPECT_FALSE(h.p().problems().empty());
  h.start();
  h.settle();
  uint64_t n = 0;
  ASSERT_TRUE(h.p().burst(100, &n).ok());
  EXPECT_EQ(h.got(), names(0, 6));
}

TEST(PlayerTest, stop_ends_run_promptly_while_paused) {
  Harness h(ten_seconds(), {.start_paused = true});
  ASSERT_TRUE(h.ok());
  h.start();
  h.settle();
  h.p().stop();
  h.join();  // would hang if stop did not wake the paused sleeper
  EXPECT_TRUE(h.got().empty());
}

// ---- Following another clock (an ExternalClock, as `fieldproof play --follow-clock` does).

TEST(PlayerTest, a_following_player_plays_each_message_when_the_followed_clock_reaches_it) {
  FakeSteadyTime followed_steady{SimTime::zero()};
  ExternalClock followed({.initial = SimTime::zero()}, followed_steady);
  Harness h(ten_seconds(), {.follow = &followed});
  ASSERT_TRUE(h.ok());
  h.start();
  followed.feed(SimTime::from_ns(2 * kS), followed_steady.now());
  EXPECT_EQ(h.wait_count(2), names(0, 2));
  followed_steady.wait_for_blocked(1);  // asleep until 3 s: nothing more played
  EXPECT_EQ(h.got(), names(0, 2));
  followed.feed(SimTime::from_ns(10 * kS), followed_steady.now());
  EXPECT_EQ(h.wait_count(10), names(0, 10));
  h.join();
}

TEST(PlayerTest, a_backward_sample_of_the_followed_clock_moves_the_position_like_a_seek) {
  FakeSteadyTime followed_steady{SimTime::zero()};
  ExternalClock followed({.initial = SimTime::zero()}, followed_steady);
  Harness h(ten_seconds(), {.follow = &followed});
  ASSERT_TRUE(h.ok());
  h.start();
  followed.feed(SimTime::from_ns(4 * kS), followed_steady.now());
  EXPECT_EQ(h.wait_count(4), names(0, 4));
  followed.feed(SimTime::from_ns(kS + kS / 2), followed_steady.now());  // the source seeked back
  followed_steady.wait_for_blocked(1);
  EXPECT_EQ(h.got(), names(0, 4));
  followed.feed(SimTime::from_ns(10 * kS), followed_steady.now());
  std::vector<std::string> expected = names(0, 4);
  for (const std::string& n : names(1, 10)) expected.push_back(n);
  EXPECT_EQ(h.wait_count(expected.size()), expected);
  h.join();
}

TEST(PlayerTest, a_following_player_refuses_pause_rate_seek_and_play_next) {
  FakeSteadyTime followed_steady{SimTime::zero()};
  ExternalClock followed({.initial = SimTime::zero()}, followed_steady);
  Harness h(ten_seconds(), {.follow = &followed});
  ASSERT_TRUE(h.ok());
  h.start();
  EXPECT_FALSE(h.p().pause().ok());
  EXPECT_FALSE(h.p().set_rate(2.0).ok());
  EXPECT_FALSE(h.p().play_next().ok());
  const SeekResult r = h.p().seek(SimTime::from_ns(5 * kS));
  EXPECT_TRUE(r.refused);
  EXPECT_NE(r.message.find("follows"), std::string::npos);
  followed.feed(SimTime::from_ns(10 * kS), followed_steady.now());
  EXPECT_EQ(h.wait_count(10), names(0, 10));  // the refused seek skipped nothing
  h.join();
}

TEST(PlayerTest, loop_while_following_is_refused) {
  ExternalClock followed;
  auto r = Player::open_bytes(ten_seconds(), {.loop = true, .follow = &followed});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().to_string().find("loop"), std::string::npos);
}

}  // namespace
}  // namespace fieldproof::record
