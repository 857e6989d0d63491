// `fieldproof play --coordinator`: the real executable publishing onto a ZeroMQ coordinator
// served by this test (CoordinatorServer), whose tap sees every message in delivery order.
// Two synchronised players: one with --clock, the other --follow-clock.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fieldproof/lockstep/zmq_server.hpp"
#include "fieldproof/msgs/ign.hpp"
#include "fieldproof/record/mcap_writer.hpp"
#include "playback_fixture.hpp"

namespace fieldproof::record {
namespace {

namespace fs = std::filesystem;
using namespace playback_testing;  // NOLINT(google-build-using-namespace)

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Proc {
  pid_t pid = -1;
  fs::path err;
};

Proc spawn_play(const std::vector<std::string>& args, const std::string& tag) {
  Proc p;
  p.err = temp_dir() / (tag + ".err");
  const fs::path out = temp_dir() / (tag + ".out");
  p.pid = ::fork();
  if (p.pid == 0) {
    std::freopen(out.c_str(), "w", stdout);
    std::freopen(p.err.c_str(), "w", stderr);
    std::vector<std::string> copy = {FIELDPROOF_EXE, "play"};
    copy.insert(copy.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(FIELDPROOF_EXE, argv.data());
    ::_exit(127);
  }
  return p;
}

// The exit code, or -1 when the process did not end within `limit` (then it is killed).
int await_exit(const Proc& p, std::chrono::milliseconds limit = std::chrono::seconds(20)) {
  auto status = std::async(std::launch::async, [pid = p.pid] {
    int st = 0;
    ::waitpid(pid, &st, 0);
    return st;
  });
  if (status.wait_for(limit) != std::future_status::ready) ::kill(p.pid, SIGKILL);
  const int st = status.get();
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kMs = 1'000'000;

TEST(PlayCoordinatorTest, publishes_each_message_on_its_topic_with_its_type_at_its_log_time) {
  Coordinator coord("pub");
  const std::vector<Msg> msgs = {{"/a", kSecond, "a0"},
                                 {"/b", kSecond + 10 * kMs, "b0"},
                                 {"/a", kSecond + 10 * kMs, "a1"},
                                 {"/b", kSecond + 30 * kMs, "b1"}};
  const Proc p = spawn_play(
      {write_recording("pub.mcap", msgs), "--coordinator", coord.endpoint(), "--rate", "20"},
      "pub");
  ASSERT_EQ(await_exit(p), 0) << slurp(p.err);
  const auto tapped = coord.tapped();
  ASSERT_EQ(tapped.size(), msgs.size()) << slurp(p.err);
  for (size_t i = 0; i < msgs.size(); ++i) {
    EXPECT_EQ(tapped[i].participant, "player");
    EXPECT_EQ(tapped[i].topic, msgs[i].topic) << i;
    EXPECT_EQ(tapped[i].stamp.ns(), msgs[i].log_ns) << i;
    EXPECT_EQ(tapped[i].type, "test.Text") << i;
    EXPECT_EQ(tapped[i].payload, msgs[i].payload) << i;
  }
}

TEST(PlayCoordinatorTest, clock_publishes_the_player_clock_and_drives_the_coordinator_time) {
  Coordinator coord("clock");
  const std::vector<Msg> msgs = {{"/a", kSecond, "a0"}, {"/a", kSecond + 200 * kMs, "a1"}};
  const Proc p = spawn_play({write_recording("clock.mcap", msgs), "--coordinator", coord.endpoint(),
                             "--rate", "0.2", "--clock", "50"},
                            "clock");
  ASSERT_EQ(await_exit(p), 0) << slurp(p.err);
  const auto clocks = coord.tapped("/clock");
  // 0.2 s of log time at rate 0.2 is 1 s of wall time: about 50 publications at 50 Hz, so a
  // loaded machine that delays many of them still leaves more than 5.
  ASSERT_GE(clocks.size(), 5u) << slurp(p.err);
  int64_t last = 0;
  size_t between = 0;
  for (const auto& c : clocks) {
    EXPECT_EQ(c.type, "ignition.msgs.Clock");
    const auto parsed = msgs::parse<ignition::msgs::Clock>(c.payload);
    ASSERT_TRUE(parsed);
    const int64_t sim = msgs::from_time(parsed->sim()).ns();
    EXPECT_GT(sim, last);  // each publication is a new time
    EXPECT_GE(sim, kSecond);
    EXPECT_LE(sim, kSecond + 200 * kMs);
    // Stamped at the coordinator time the player announced: at most its clock.
    EXPECT_LE(c.stamp.ns(), sim);
    last = sim;
    // The coordinator's time moved between the two messages, not only onto their stamps.
    between += c.stamp.ns() > kSecond && c.stamp.ns() < kSecond + 200 * kMs;
  }
  EXPECT_GE(between, 3u);
  const auto a = coord.tapped("/a");
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[1].stamp.ns(), kSecond + 200 * kMs);
}

TEST(PlayCoordinatorTest, a_looping_player_keeps_the_coordinator_time_monotonic) {
  Coordinator coord("loop");
  const std::vector<Msg> msgs = {{"/a", kSecond, "a0"}, {"/a", kSecond + 10 * kMs, "a1"}};
  const Proc p = spawn_play({write_recording("loop.mcap", msgs), "--coordinator", coord.endpoint(),
                             "--rate", "10", "--loop", "--playback-duration", "10ms"},
                            "loop");
  // The loop jumps the player clock back to the start; the coordinator's stamps go on forward,
  // shifted by what the loop jumped back.
  EXPECT_TRUE(coord.await_count("/a", 6));
  ::kill(p.pid, SIGINT);
  EXPECT_EQ(await_exit(p), 130) << slurp(p.err);
  const auto a = coord.tapped("/a");
  ASSERT_GE(a.size(), 6u) << slurp(p.err);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].payload, i % 2 == 0 ? "a0" : "a1") << i;
    if (i > 0) {
      EXPECT_GE(a[i].stamp, a[i - 1].stamp) << i;
    }
  }
  EXPECT_EQ(a[0].stamp.ns(), kSecond);
  EXPECT_EQ(a[1].stamp.ns(), kSecond + 10 * kMs);
  EXPECT_EQ(a[3].stamp - a[2].stamp, Duration::from_ns(10 * kMs));
}

// The documented bound: a follower publishes a message once the /clock it follows reached the
// message's stamp; the coordinator stamps it at its current time, which is then at or past that
// stamp and behind the leader by about one /clock period plus the delivery delay. Messages of the
// two players 50 ms of log time apart (at rate 0.5: 100 ms of wall time) therefore interleave in
// log-time order.
TEST(PlayCoordinatorTest, two_players_one_following_the_others_clock_interleave_in_log_order) {
  Coordinator coord("sync");
  std::vector<Msg> lead;
  std::vector<Msg> follow;
  for (int k = 0; k < 6; ++k) {
    lead.push_back({"/lead", kSecond + k * 100 * kMs, "L" + std::to_string(k)});
    follow.push_back({"/follow", kSecond + k * 100 * kMs + 50 * kMs, "F" + std::to_string(k)});
  }
  lead.push_back({"/lead", kSecond + 700 * kMs, "L6"});  // the leader outlasts the follower
  const Proc f = spawn_play(
      {write_recording("follow.mcap", follow), "--coordinator", coord.endpoint(), "--follow-clock"},
      "follow");
  ASSERT_TRUE(coord.await_participant("player-follower")) << slurp(f.err);
  const Proc l = spawn_play({write_recording("lead.mcap", lead), "--coordinator", coord.endpoint(),
                             "--clock", "100", "--rate", "0.5"},
                            "lead");
  ASSERT_EQ(await_exit(f), 0) << slurp(f.err);
  ASSERT_EQ(await_exit(l), 0) << slurp(l.err);
  // The leader's last publication may still be on its way to the coordinator when it exits.
  EXPECT_TRUE(coord.await_count("/lead", 7));
  EXPECT_TRUE(coord.await_count("/follow", 6));
  std::vector<std::string> order;
  for (const auto& m : coord.tapped()) {
    if (m.topic == "/clock") continue;
    order.push_back(m.payload);
    if (m.topic == "/follow") {
      const int k = std::stoi(m.payload.substr(1));
      const int64_t log = kSecond + k * 100 * kMs + 50 * kMs;
      EXPECT_GE(m.stamp.ns(), log) << m.payload;
      EXPECT_LT(m.stamp.ns(), log + 50 * kMs) << m.payload;
    }
  }
  EXPECT_EQ(order, (std::vector<std::string>{"L0", "F0", "L1", "F1", "L2", "F2", "L3", "F3", "L4",
                                             "F4", "L5", "F5", "L6"}))
      << slurp(f.err) << slurp(l.err);
}

// A PlayerControl to the player's --control endpoint; its PlayerReply, or ok = false with the
// Error's reason or "(no reply)" after 10 s.
lockstep::PlayerReply ask(const std::string& endpoint, lockstep::PlayerOp op) {
  lockstep::ControlClient client(endpoint);
  const std::optional<lockstep::Frame> f =
      client.exchange(lockstep::PlayerControl{.op = op, .offset = {}}, seconds(10));
  lockstep::PlayerReply refused;
  refused.ok = false;
  if (!f) {
    refused.error = "(no reply)";
    return refused;
  }
  if (const auto* r = std::get_if<lockstep::PlayerReply>(&*f)) return *r;
  const auto* e = std::get_if<lockstep::Error>(&*f);
  refused.error = e != nullptr ? e->reason : "(not a PlayerReply)";
  return refused;
}

TEST(PlayCoordinatorTest, pausing_the_time_source_stops_the_coordinators_time_and_ctrl_c_ends_it) {
  Coordinator coord("pause");
  const std::vector<Msg> msgs = {{"/a", kSecond, "a0"}, {"/a", 3 * kSecond, "a1"}};
  const std::string control = "ipc://" + (temp_dir() / "pause_control.ipc").string();
  const Proc p = spawn_play({write_recording("pause.mcap", msgs), "--coordinator", coord.endpoint(),
                             "--clock", "100", "--start-paused", "--control", control},
                            "pause");
  const lockstep::PlayerReply status = ask(control, lockstep::PlayerOp::kStatus);
  ASSERT_TRUE(status.ok) << status.error << slurp(p.err);
  ASSERT_TRUE(status.paused);
  // Nothing can be awaited while time stands still: give the clock publisher 30 periods.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_LE(coord.max_grant().ns(), kSecond);
  EXPECT_TRUE(coord.tapped("/a").empty());
  ASSERT_TRUE(ask(control, lockstep::PlayerOp::kResume).ok);
  EXPECT_TRUE(coord.await_grant_past(SimTime::from_ns(kSecond + 50 * kMs))) << slurp(p.err);
  EXPECT_TRUE(coord.await_count("/clock", 3)) << slurp(p.err);
  ASSERT_TRUE(ask(control, lockstep::PlayerOp::kPause).ok);
  ::kill(p.pid, SIGINT);  // while paused, joined to the coordinator
  EXPECT_EQ(await_exit(p, std::chrono::seconds(5)), 130) << slurp(p.err);
  EXPECT_EQ(coord.tapped("/a").size(), 1u);  // a0 only: a1 is 2 s of playing away
  // The paused clock's repeats were not published (they would arrive after the resume).
  int64_t last = 0;
  for (const auto& c : coord.tapped("/clock")) {
    const int64_t sim = msgs::from_time(msgs::parse<ignition::msgs::Clock>(c.payload)->sim()).ns();
    EXPECT_GT(sim, last);
    last = sim;
  }
}

TEST(PlayCoordinatorTest, no_coordinator_at_the_endpoint_is_said_and_exits_1) {
  const std::vector<Msg> msgs = {{"/a", kSecond, "a0"}};
  const std::string nobody = "ipc://" + (temp_dir() / "nobody.ipc").string();
  const Proc p =
      spawn_play({write_recording("nobody.mcap", msgs), "--coordinator", nobody}, "nobody");
  EXPECT_EQ(await_exit(p), 1);
  EXPECT_NE(slurp(p.err).find("no coordinator answered at " + nobody), std::string::npos)
      << slurp(p.err);
}

TEST(PlayCoordinatorTest, clock_without_coordinator_refused) {
  const std::vector<Msg> msgs = {{"/a", kSecond, "a0"}};
  const Proc p = spawn_play({write_recording("bad1.mcap", msgs), "--echo", "--clock", "10"}, "b1");
  EXPECT_EQ(await_exit(p), 2);
  EXPECT_NE(slurp(p.err).find("need --coordinator"), std::string::npos) << slurp(p.err);
}

TEST(PlayCoordinatorTest, clock_and_follow_clock_together_refused) {
  const std::vector<Msg> msgs = {{"/a", kSecond, "a0"}};
  const Proc p = spawn_play({write_recording("bad2.mcap", msgs), "--coordinator",
                             "ipc:///nonexistent/x.ipc", "--clock", "--follow-clock"},
                            "b2");
  EXPECT_EQ(await_exit(p), 2);
  EXPECT_NE(slurp(p.err).find("exclude each other"), std::string::npos) << slurp(p.err);
}

TEST(PlayCoordinatorTest, negative_clock_rate_refused) {
  const std::vector<Msg> msgs = {{"/a", kSecond, "a0"}};
  const Proc p = spawn_play(
      {write_recording("bad3.mcap", msgs), "--coordinator", "ipc://x.ipc", "--clock", "-5"}, "b3");
  EXPECT_EQ(await_exit(p), 2);
  EXPECT_NE(slurp(p.err).find("--clock"), std::string::npos) << slurp(p.err);
}

}  // namespace
}  // namespace fieldproof::record
