// ReplayClock: delivery in the recorded order (equal stamps included), exact (now, now + dt]
// boundaries, control messages held back unless asked, a cut file plays its complete part.
#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "fieldproof/record/mcap_writer.hpp"
#include "fieldproof/record/replay_clock.hpp"

namespace fieldproof::record {
namespace {

struct Written {
  uint16_t channel;
  int64_t log_ns;
  std::string data;
};

struct Recording {
  std::string bytes;
  std::vector<uint64_t> chunk_starts;
};

// Writes `messages` in the given order on channels 0 = /a (schema "test.A"), 1 = /b (no schema),
// 2 = /fieldproof/events (json); closes a chunk every `per_chunk` messages.
Recording record(const std::vector<Written>& messages, size_t per_chunk = 4) {
  std::ostringstream out;
  McapWriterOptions options;
  options.compression = Compression::kNone;
  McapWriter w(options);
  Recording r;
  if (!w.open(out).ok()) return r;
  auto schema = w.add_schema("test.A", "jsonschema", "{}");
  static_cast<void>(w.add_channel("/a", "json", *schema));
  static_cast<void>(w.add_channel("/b", "json", 0));
  static_cast<void>(w.add_channel("/fieldproof/events", "json", 0));
  uint32_t seq = 0;
  for (size_t i = 0; i < messages.size(); ++i) {
    if (i % per_chunk == 0) {
      if (w.buffered_bytes() > 0) static_cast<void>(w.close_chunk());
      r.chunk_starts.push_back(w.bytes_written());
    }
    const Written& m = messages[i];
    static_cast<void>(
        w.write(m.channel, seq++, SimTime::from_ns(m.log_ns), SimTime::from_ns(m.log_ns), m.data));
  }
  static_cast<void>(w.close());
  r.bytes = out.str();
  return r;
}

std::unique_ptr<ReplayClock> open(std::string bytes, ReplayClockOptions options = {}) {
  auto r = ReplayClock::open_bytes(std::move(bytes), std::move(options));
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  if (!r.ok()) return nullptr;
  return std::move(r).value();
}

TEST(ReplayClockTest, delivery_order_equals_the_recorded_order_including_equal_stamps) {
  // Written in the recorder's total order: (stamp, publisher, seq); several share a stamp and
  // span chunk boundaries.
  std::vector<Written> msgs;
  for (int i = 0; i < 30; ++i) {
    const int64_t t = 1'000 + (i / 5) * 1'000;  // five messages per stamp
    msgs.push_back({static_cast<uint16_t>(i % 2), t, "m" + std::to_string(i)});
  }
  std::vector<std::string> want;
  for (const Written& m : msgs) want.push_back(m.data);
  const std::string bytes = record(msgs, 3).bytes;
  // Whole windows read at once, or in pieces (the read-ahead changes how the file is read,
  // never what is delivered).
  for (Duration read_ahead : {Duration::zero(), nanoseconds(1'500), seconds(1)}) {
    auto clock = open(bytes, {.read_ahead = read_ahead});
    ASSERT_NE(clock, nullptr);
    std::vector<std::string> got;
    clock->subscribe("*", [&](const ReplayMessage& m) { got.emplace_back(m.data_view()); });
    // Uneven steps, some landing exactly on stamps, some between.
    for (int64_t step : {0, 1, 999, 1, 1'500, 500, 2'000, 7, 100'000}) {
      ASSERT_TRUE(clock->advance(nanoseconds(step)).ok());
    }
    EXPECT_EQ(got, want) << "read_ahead " << read_ahead.ns();
  }
}

TEST(ReplayClockTest, advance_boundaries_are_exclusive_below_and_inclusive_above) {
  auto clock = open(record({{0, 10, "a"}, {0, 20, "b"}, {0, 21, "c"}, {0, 30, "d"}}).bytes,
                    {.start = SimTime::zero()});
  ASSERT_NE(clock, nullptr);
  std::vector<std::pair<std::string, int64_t>> got;
  clock->subscribe("/a", [&](const ReplayMessage& m) {
    got.emplace_back(std::string(m.data_view()), m.log_time_ns);
  });
  auto step = [&](int64_t dt) {
    got.clear();
    auto n = clock->advance(nanoseconds(dt));
    EXPECT_TRUE(n.ok());
    return got;
  };
  using V = std::vector<std::pair<std::string, int64_t>>;
  EXPECT_EQ(step(9), V{});
  EXPECT_EQ(step(1), (V{{"a", 10}}));   // (9, 10]
  EXPECT_EQ(step(10), (V{{"b", 20}}));  // (10, 20]
  EXPECT_EQ(step(0), V{});              // (20, 20]: nothing twice
  EXPECT_EQ(step(10), (V{{"c", 21}, {"d", 30}}));
  EXPECT_EQ(clock->now(), SimTime::from_ns(30));
  EXPECT_EQ(clock->delivered(), 4u);
}

TEST(ReplayClockTest, first_advance_delivers_a_message_stamped_at_the_start) {
  auto clock = open(record({{0, 500, "first"}, {1, 600, "second"}}).bytes);
  ASSERT_NE(clock, nullptr);
  EXPECT_EQ(clock->now(), SimTime::from_ns(500));  // default start: the first message
  EXPECT_EQ(clock->start_time(), SimTime::from_ns(500));
  EXPECT_EQ(clock->end_time(), SimTime::from_ns(600));
  std::vector<std::string> got;
  clock->subscribe("*", [&](const ReplayMessage& m) { got.emplace_back(m.data_view()); });
  auto n = clock->advance(Duration::zero());
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 1u);
  EXPECT_EQ(got, std::vector<std::string>{"first"});
}

TEST(ReplayClockTest, message_fields_reach_the_subscriber) {
  auto clock = open(record({{0, 7, "x"}, {1, 8, "y"}}).bytes);
  ASSERT_NE(clock, nullptr);
  std::vector<std::string> seen;
  clock->subscribe("*", [&](const ReplayMessage& m) {
    seen.push_back(std::string(m.topic) + "|" + std::string(m.schema_name) + "|" +
                   std::string(m.message_encoding) + "|" + std::to_string(m.log_time_ns) + "|" +
                   std::to_string(m.sequence));
  });
  ASSERT_TRUE(clock->advance(nanoseconds(10)).ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"/a|test.A|json|7|0", "/b||json|8|1"}));
}

TEST(ReplayClockTest, control_messages_not_delivered_unless_enabled) {
  const Recording rec = record({{2, 10, R"({"kind":"sim.pause"})"},
                                {2, 11, R"({"event":"SCHEDULER_CALLBACK_FAILED"})"},
                                {0, 12, "a"},
                                {2, 13, R"({"action": "sim.resume"})"}});
  auto off = open(rec.bytes);
  ASSERT_NE(off, nullptr);
  std::vector<std::string> got_off;
  off->subscribe("*", [&](const ReplayMessage& m) { got_off.emplace_back(m.data_view()); });
  ASSERT_TRUE(off->advance(seconds(1)).ok());
  EXPECT_EQ(got_off, (std::vector<std::string>{R"({"event":"SCHEDULER_CALLBACK_FAILED"})", "a"}));
  EXPECT_EQ(off->control_skipped(), 2u);

  auto on = open(rec.bytes, {.deliver_control = true});
  ASSERT_NE(on, nullptr);
  std::vector<std::string> control;
  on->subscribe_control([&](const ReplayMessage& m) { control.emplace_back(m.data_view()); });
  ASSERT_TRUE(on->advance(seconds(1)).ok());
  EXPECT_EQ(control,
            (std::vector<std::string>{R"({"kind":"sim.pause"})", R"({"action": "sim.resume"})"}));
  EXPECT_EQ(on->control_skipped(), 0u);
}

TEST(ReplayClockTest, control_payload_recognition) {
  EXPECT_TRUE(ReplayClock::is_control_payload(R"({"kind":"sim.step","n":1})"));
  EXPECT_TRUE(ReplayClock::is_control_payload(R"({ "action" :  "sim.pause" })"));
  EXPECT_FALSE(ReplayClock::is_control_payload(R"({"kind":"simulation"})"));
  EXPECT_FALSE(ReplayClock::is_control_payload(R"({"note":"sim.pause"})"));
  EXPECT_FALSE(ReplayClock::is_control_payload(""));
}

TEST(ReplayClockTest, cut_file_plays_its_complete_part_and_reports_the_rest) {
  std::vector<Written> msgs;
  for (int i = 0; i < 12; ++i) msgs.push_back({0, 100 + i * 10, "m" + std::to_string(i)});
  const Recording rec = record(msgs, 4);  // chunks of 4: [0..3] [4..7] [8..11]
  ASSERT_EQ(rec.chunk_starts.size(), 3u);
  auto clock = open(rec.bytes.substr(0, rec.chunk_starts[2] + 20));  // inside the third chunk
  ASSERT_NE(clock, nullptr);
  std::vector<std::string> got;
  clock->subscribe("*", [&](const ReplayMessage& m) { got.emplace_back(m.data_view()); });
  auto n = clock->advance_to(SimTime::from_ns(10'000));
  ASSERT_TRUE(n.ok()) << n.status().to_string();
  std::vector<std::string> want;
  for (int i = 0; i < 8; ++i) want.push_back("m" + std::to_string(i));
  EXPECT_EQ(got, want);
  EXPECT_FALSE(clock->complete());
  EXPECT_FALSE(clock->problems().empty());
}

TEST(ReplayClockTest, complete_file_reports_no_problems) {
  auto clock = open(record({{0, 1, "a"}}).bytes);
  ASSERT_NE(clock, nullptr);
  EXPECT_TRUE(clock->complete());
  EXPECT_TRUE(clock->problems().empty());
}

TEST(ReplayClockTest, topics_filter_delivers_only_the_listed_topics) {
  auto clock = open(record({{0, 1, "a1"}, {1, 2, "b1"}, {0, 3, "a2"}}).bytes, {.topics = {"/b"}});
  ASSERT_NE(clock, nullptr);
  std::vector<std::string> got;
  clock->subscribe("*", [&](const ReplayMessage& m) { got.emplace_back(m.data_view()); });
  ASSERT_TRUE(clock->advance(seconds(1)).ok());
  EXPECT_EQ(got, std::vector<std::string>{"b1"});
}

TEST(ReplayClockTest, unknown_topic_refused_at_open) {
  auto r = ReplayClock::open_bytes(record({{0, 1, "a"}}).bytes, {.topics = {"/nope"}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("unknown topic '/nope'"), std::string::npos)
      << r.status().message();
}

TEST(ReplayClockTest, not_an_mcap_file_refused) {
  auto r = ReplayClock::open_bytes("definitely not mcap");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotMcap);
}

TEST(ReplayClockTest, negative_advance_refused_and_time_stays) {
  auto clock = open(record({{0, 100, "a"}}).bytes);
  ASSERT_NE(clock, nullptr);
  EXPECT_FALSE(clock->advance(nanoseconds(-1)).ok());
  EXPECT_FALSE(clock->advance_to(SimTime::from_ns(99)).ok());
  EXPECT_EQ(clock->now(), SimTime::from_ns(100));
}

TEST(ReplayClockTest, throwing_subscriber_loses_no_message) {
  auto clock = open(record({{0, 10, "a"}, {0, 10, "b"}, {0, 10, "c"}, {0, 20, "d"}}).bytes);
  ASSERT_NE(clock, nullptr);
  std::vector<std::string> got;
  clock->subscribe("*", [&](const ReplayMessage& m) {
    got.emplace_back(m.data_view());
    if (m.data_view() == "b") throw std::runtime_error("boom");
  });
  EXPECT_THROW(static_cast<void>(clock->advance(seconds(1))), std::runtime_error);
  EXPECT_EQ(clock->now(), SimTime::from_ns(10));
  ASSERT_TRUE(clock->advance(seconds(1)).ok());
  EXPECT_EQ(got, (std::vector<std::string>{"a", "b", "c", "d"}));
}

TEST(ReplayClockTest, unsubscribed_callback_not_called) {
  auto clock = open(record({{0, 1, "a"}, {0, 2, "b"}}).bytes);
  ASSERT_NE(clock, nullptr);
  int calls = 0;
  const uint64_t id = clock->subscribe("/a", [&](const ReplayMessage&) { ++calls; });
  ASSERT_TRUE(clock->advance(Duration::zero()).ok());
  EXPECT_TRUE(clock->unsubscribe(id));
  ASSERT_TRUE(clock->advance(seconds(1)).ok());
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace fieldproof::record
