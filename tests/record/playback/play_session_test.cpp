// engine::PlaySession without the CLI: a recording played onto a ZeroMQ coordinator served by
// this test (its tap sees every delivered message), the control endpoint served while it runs
// (lockstep::ControlClient sending PlayerControl frames), stop() from another thread, and each
// refusal as a Status.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "fieldproof/engine/play_session.hpp"
#include "fieldproof/lockstep/zmq_server.hpp"
#include "fieldproof/lockstep/zmq_socket.hpp"
#include "fieldproof/msgs/ign.hpp"
#include "fieldproof/record/mcap_writer.hpp"
#include "playback_fixture.hpp"

namespace fieldproof::engine {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace record::playback_testing;  // NOLINT(google-build-using-namespace)
constexpr int64_t kS = 1'000'000'000;
constexpr int64_t kMs = 1'000'000;

const std::vector<Msg> kMsgs = {{"/a", kS, "a0"},
                                {"/b", kS + 10 * kMs, "b0"},
                                {"/a", kS + 10 * kMs, "a1"},
                                {"/b", kS + 30 * kMs, "b1"}};

TEST(PlaySessionTest, publishes_onto_a_coordinator_stamped_at_log_time_and_hands_each_message_on) {
  Coordinator coord("pub");
  PlaySessionOptions o;
  o.file = write_recording("pub.mcap", kMsgs);
  o.player.rate = 20;
  o.coordinator = coord.endpoint();
  auto s = PlaySession::open(o);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  ASSERT_TRUE((*s)->join().ok());
  std::vector<int64_t> handed;
  const PlayOutcome out =
      (*s)->run([&](const record::PlayedMessage& m) { handed.push_back(m.log_time_ns); });
  EXPECT_EQ(out.played, kMsgs.size());
  EXPECT_TRUE(out.complete);
  EXPECT_EQ(out.damaged, 0u);
  ASSERT_EQ(handed.size(), kMsgs.size());
  // run() left the coordinator: everything published was delivered before it returned.
  const auto tapped = coord.tapped();
  ASSERT_EQ(tapped.size(), kMsgs.size());
  for (size_t i = 0; i < kMsgs.size(); ++i) {
    EXPECT_EQ(handed[i], kMsgs[i].log_ns) << i;
    EXPECT_EQ(tapped[i].participant, "player");
    EXPECT_EQ(tapped[i].topic, kMsgs[i].topic) << i;
    EXPECT_EQ(tapped[i].stamp.ns(), kMsgs[i].log_ns) << i;
    EXPECT_EQ(tapped[i].type, "test.Text") << i;
    EXPECT_EQ(tapped[i].payload, kMsgs[i].payload) << i;
  }
}

TEST(PlaySessionTest, with_a_clock_rate_the_player_clock_drives_the_coordinator_and_clock_says_it) {
  Coordinator coord("clock");
  PlaySessionOptions o;
  o.file = write_recording("clock.mcap", {{"/a", kS, "a0"}, {"/a", kS + 200 * kMs, "a1"}});
  o.player.rate = 0.2;
  o.coordinator = coord.endpoint();
  o.clock_hz = 50;
  auto s = PlaySession::open(o);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  ASSERT_TRUE((*s)->join().ok());
  EXPECT_EQ((*s)->run().played, 2u);
  const auto clocks = coord.tapped(std::string(kPlayClockTopic));
  // 0.2 s of log time at rate 0.2 is 1 s of wall time: about 50 publications at 50 Hz, so a
  // loaded machine that delays many of them still leaves more than 5.
  ASSERT_GE(clocks.size(), 5u);
  int64_t last = 0;
  size_t between = 0;
  for (const auto& c : clocks) {
    EXPECT_EQ(c.type, kPlayClockType);
    const auto parsed = msgs::parse<ignition::msgs::Clock>(c.payload);
    ASSERT_TRUE(parsed);
    const int64_t sim = msgs::from_time(parsed->sim()).ns();
    EXPECT_GT(sim, last);  // a paused or repeated time is not published again
    EXPECT_GE(sim, kS);
    EXPECT_LE(sim, kS + 200 * kMs);
    EXPECT_LE(c.stamp.ns(), sim);  // stamped at the announcement: never ahead of the clock
    last = sim;
    between += c.stamp.ns() > kS && c.stamp.ns() < kS + 200 * kMs;
  }
  EXPECT_GE(between, 3u);  // the coordinator's time moved between the two messages
  const auto a = coord.tapped("/a");
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[1].stamp.ns(), kS + 200 * kMs);
}

TEST(PlaySessionTest, a_looping_session_keeps_the_coordinator_time_monotonic_until_stopped) {
  Coordinator coord("loop");
  PlaySessionOptions o;
  o.file = write_recording("loop.mcap", {{"/a", kS, "a0"}, {"/a", kS + 10 * kMs, "a1"}});
  o.player.rate = 10;
  o.player.loop = true;
  o.player.playback_duration = milliseconds(10);
  o.coordinator = coord.endpoint();
  auto s = PlaySession::open(o);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  ASSERT_TRUE((*s)->join().ok());
  auto run = std::async(std::launch::async, [&] { return (*s)->run().played; });
  EXPECT_TRUE(coord.await_count("/a", 6));
  (*s)->stop();
  ASSERT_EQ(run.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_GE(run.get(), 6u);
  const auto a = coord.tapped("/a");
  ASSERT_GE(a.size(), 6u);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].payload, i % 2 == 0 ? "a0" : "a1") << i;
    if (i > 0) {
      EXPECT_GE(a[i].stamp, a[i - 1].stamp) << i;
    }
  }
  // The loop jumps the player clock back; the stamps go on forward, shifted by the jump.
  EXPECT_EQ(a[0].stamp.ns(), kS);
  EXPECT_EQ(a[1].stamp.ns(), kS + 10 * kMs);
  EXPECT_EQ(a[3].stamp - a[2].stamp, Duration::from_ns(10 * kMs));
}

// A follower session paces by the leader session's /clock: their messages, 50 ms of log time
// apart, interleave in log-time order on the coordinator (the bound of docs/playback.md, "Two
// synchronised players"), each follower message stamped at or just after its log time.
TEST(PlaySessionTest, a_following_session_interleaves_with_the_leading_one_in_log_order) {
  Coordinator coord("sync");
  std::vector<Msg> lead;
  std::vector<Msg> follow;
  for (int k = 0; k < 6; ++k) {
    lead.push_back({"/lead", kS + k * 100 * kMs, "L" + std::to_string(k)});
    follow.push_back({"/follow", kS + k * 100 * kMs + 50 * kMs, "F" + std::to_string(k)});
  }
  lead.push_back({"/lead", kS + 700 * kMs, "L6"});  // the leader outlasts the follower
  PlaySessionOptions fo;
  fo.file = write_recording("follow.mcap", follow);
  fo.coordinator = coord.endpoint();
  fo.follow_clock = true;
  auto f = PlaySession::open(fo);
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  ASSERT_TRUE((*f)->join().ok());
  auto followed = std::async(std::launch::async, [&] { return (*f)->run().played; });
  ASSERT_TRUE(coord.await_participant("player-follower"));
  PlaySessionOptions lo;
  lo.file = write_recording("lead.mcap", lead);
  lo.coordinator = coord.endpoint();
  lo.clock_hz = 100;
  lo.player.rate = 0.5;
  auto l = PlaySession::open(lo);
  ASSERT_TRUE(l.ok()) << l.status().to_string();
  ASSERT_TRUE((*l)->join().ok());
  EXPECT_EQ((*l)->run().played, lead.size());
  ASSERT_EQ(followed.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_EQ(followed.get(), follow.size());
  EXPECT_TRUE(coord.await_count("/lead", 7));
  EXPECT_TRUE(coord.await_count("/follow", 6));
  std::vector<std::string> order;
  for (const auto& m : coord.tapped()) {
    if (m.topic == kPlayClockTopic) continue;
    order.push_back(m.payload);
    if (m.topic == "/follow") {
      EXPECT_EQ(m.participant, "player-follower");
      const int k = std::stoi(m.payload.substr(1));
      const int64_t log = kS + k * 100 * kMs + 50 * kMs;
      EXPECT_GE(m.stamp.ns(), log) << m.payload;
      EXPECT_LT(m.stamp.ns(), log + 50 * kMs) << m.payload;
    }
  }
  EXPECT_EQ(order, (std::vector<std::string>{"L0", "F0", "L1", "F1", "L2", "F2", "L3", "F3", "L4",
                                             "F4", "L5", "F5", "L6"}));
}

// A client of the control endpoint: lockstep::ControlClient (what `fieldproof clock` uses),
// sending PlayerControl frames and raw bytes.
class PlayerClient {
 public:
  explicit PlayerClient(const std::string& endpoint) : client_(endpoint) {}
  lockstep::Frame answer(const lockstep::Frame& request) {
    std::optional<lockstep::Frame> f = client_.exchange(request, seconds(10));
    if (!f) return lockstep::Error{lockstep::ErrorCode::kTimeout, "(no reply)"};
    return std::move(*f);
  }
  lockstep::PlayerReply ask(lockstep::PlayerControl c) {
    const lockstep::Frame f = answer(c);
    if (const auto* r = std::get_if<lockstep::PlayerReply>(&f)) return *r;
    const auto* e = std::get_if<lockstep::Error>(&f);
    return {.ok = false, .error = e != nullptr ? e->reason : "(not a PlayerReply)"};
  }
  lockstep::PlayerReply ask(lockstep::PlayerOp op) { return ask({.op = op}); }

 private:
  lockstep::ControlClient client_;
};

TEST(PlaySessionTest, serves_the_control_endpoint_while_it_runs) {
  PlaySessionOptions o;
  o.file = write_recording("control.mcap", kMsgs);
  o.player.start_paused = true;
  o.player.rate = 100;
  o.control = "ipc://" + (temp_dir() / "control.ipc").string();
  std::vector<std::string> said;
  std::mutex said_mutex;
  o.on_diagnostic = [&](std::string_view line) {
    std::lock_guard lock(said_mutex);
    said.emplace_back(line);
  };
  auto s = PlaySession::open(o);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  ASSERT_TRUE((*s)->join().ok());  // no coordinator: nothing to join
  std::promise<std::string> first;
  auto played = std::async(std::launch::async, [&] {
    size_t n = 0;
    return (*s)
        ->run([&](const record::PlayedMessage& m) {
          if (n++ == 0) first.set_value(std::string(m.data));
        })
        .played;
  });
  PlayerClient c(o.control);
  EXPECT_TRUE(c.ask(lockstep::PlayerOp::kStatus).paused);
  const lockstep::PlayerReply next = c.ask(lockstep::PlayerOp::kPlayNext);
  EXPECT_TRUE(next.ok) << next.error;
  EXPECT_EQ(first.get_future().get(), "a0");
  const lockstep::PlayerReply seek =
      c.ask({.op = lockstep::PlayerOp::kSeek, .offset = seconds(99)});
  EXPECT_TRUE(seek.clamped);
  {
    std::lock_guard lock(said_mutex);
    ASSERT_EQ(said.size(), 1u);
    EXPECT_EQ(said[0], seek.message);
  }
  // A frame that is not one: an Error, and the endpoint keeps serving.
  const lockstep::Frame bogus = c.answer(lockstep::Grant{});
  ASSERT_TRUE(std::holds_alternative<lockstep::Error>(bogus));
  EXPECT_EQ(std::get<lockstep::Error>(bogus).code, lockstep::ErrorCode::kMalformed);
  EXPECT_TRUE(c.ask({.op = lockstep::PlayerOp::kSeek, .offset = seconds(0)}).ok);
  EXPECT_TRUE(c.ask(lockstep::PlayerOp::kResume).ok);
  // From the start again after play_next: the whole recording plays once more.
  EXPECT_EQ(played.get(), 1 + kMsgs.size());
}

TEST(PlaySessionTest, stop_ends_a_paused_run_promptly) {
  PlaySessionOptions o;
  o.file = write_recording("stop.mcap", kMsgs);
  o.player.start_paused = true;
  auto s = PlaySession::open(o);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  auto run = std::async(std::launch::async, [&] { return (*s)->run().played; });
  (*s)->stop();
  ASSERT_EQ(run.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(run.get(), 0u);
}

TEST(PlaySessionTest, bad_options_are_refused_before_anything_opens) {
  const std::string file = write_recording("bad.mcap", kMsgs);
  auto refused = [&](PlaySessionOptions o) {
    o.file = file;
    auto s = PlaySession::open(o);
    EXPECT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(validate(o).message(), s.status().message());
    return s.status().message();
  };
  EXPECT_EQ(refused({.player = {.rate = 0}}), "--rate 0 refused: must be a finite number > 0");
  EXPECT_EQ(refused({.clock_hz = 10}), "--clock and --follow-clock need --coordinator EP");
  EXPECT_EQ(refused({.coordinator = "ipc:///nowhere", .clock_hz = -1}),
            "--clock -1 refused: must be a finite number >= 0");
  EXPECT_NE(refused({.coordinator = "ipc:///nowhere", .clock_hz = 10, .follow_clock = true})
                .find("exclude each other"),
            std::string::npos);
  EXPECT_EQ(refused({.coordinator = "ipc:///nowhere", .extrapolate = true}),
            "--extrapolate needs --follow-clock");
  EXPECT_TRUE(validate({.file = file}).ok());
}

TEST(PlaySessionTest, a_file_or_an_endpoint_that_does_not_work_is_a_status_naming_it) {
  const std::string missing = (temp_dir() / "missing.mcap").string();
  auto no_file = PlaySession::open({.file = missing});
  ASSERT_FALSE(no_file.ok());
  EXPECT_EQ(no_file.status().message().rfind(missing + ": ", 0), 0u) << no_file.status().message();

  const std::string not_mcap = (temp_dir() / "not.mcap").string();
  { std::ofstream(not_mcap) << "not an mcap file"; }
  auto bad_magic = PlaySession::open({.file = not_mcap});
  ASSERT_FALSE(bad_magic.ok());
  EXPECT_EQ(bad_magic.status().code(), StatusCode::kNotMcap);

  const std::string file = write_recording("ep.mcap", kMsgs);
  auto bad_control = PlaySession::open({.file = file, .control = "nonsense://x"});
  ASSERT_FALSE(bad_control.ok());
  EXPECT_EQ(bad_control.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad_control.status().message().rfind("--control nonsense://x: ", 0), 0u)
      << bad_control.status().message();

  // A coordinator endpoint nobody serves: said within the join timeout, not waited on forever.
  const std::string nobody = "ipc://" + (temp_dir() / "nobody.ipc").string();
  auto s =
      PlaySession::open({.file = file, .coordinator = nobody, .join_timeout = milliseconds(300)});
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  const Status joined = (*s)->join();
  EXPECT_EQ(joined.code(), StatusCode::kUnavailable);
  EXPECT_EQ(joined.message().rfind("no coordinator answered at " + nobody + " within 0.300 s", 0),
            0u)
      << joined.message();
}

}  // namespace
}  // namespace fieldproof::engine
