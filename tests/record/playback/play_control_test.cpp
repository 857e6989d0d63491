// answer_player_frame, the player's control endpoint's answers (docs/protocol.md 8.1), called
// directly on a Player paced by a FakeSteadyTime: every PlayerControl op and its refusals, the
// Control frames a coordinator's tool sends, the handshake, and the frames refused.
#include <gtest/gtest.h>

#include <cmath>
#include <condition_variable>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fieldproof/engine/play_session.hpp"
#include "fieldproof/lockstep/codec.hpp"
#include "fieldproof/lockstep/coordinator.hpp"
#include "fieldproof/record/mcap_writer.hpp"

namespace fieldproof::engine {
namespace {

using lockstep::PlayerControl;
using lockstep::PlayerOp;
using lockstep::PlayerReply;
constexpr int64_t kS = 1'000'000'000;

// m0..m4 on /a at 1 s .. 5 s.
std::string five_seconds() {
  std::ostringstream out;
  record::McapWriterOptions options;
  options.compression = record::Compression::kNone;
  record::McapWriter w(options);
  EXPECT_TRUE(w.open(out).ok());
  const auto a = w.add_channel("/a", "json", 0);
  EXPECT_TRUE(a.ok());
  for (int i = 0; i < 5; ++i) {
    const SimTime t = SimTime::from_ns((i + 1) * kS);
    EXPECT_TRUE(w.write(*a, static_cast<uint32_t>(i), t, t, "m" + std::to_string(i)).ok());
  }
  EXPECT_TRUE(w.close().ok());
  return out.str();
}

// A paused player whose run() runs on a thread (play_next and burst need it).
class Running {
 public:
  explicit Running(record::PlayerOptions o = {.start_paused = true}) {
    auto r = record::Player::open_bytes(five_seconds(), std::move(o), steady_);
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    player_ = std::move(r).value();
    thread_ = std::thread([this] {
      (void)player_->run([this](const record::PlayedMessage& m) {
        std::lock_guard lock(mutex_);
        played_.emplace_back(m.data);
        cv_.notify_all();
      });
    });
    steady_.wait_for_blocked(1);  // run() is asleep in the paused clock
  }
  ~Running() {
    player_->stop();
    thread_.join();
  }
  record::Player& p() { return *player_; }
  // The answer to `request`, sent as bytes (as the endpoint receives it).
  lockstep::Frame answer(const lockstep::Frame& request, std::vector<std::string>* said = nullptr) {
    return answer_player_frame(*player_, lockstep::encode_frame(request),
                               [said](std::string_view s) {
                                 if (said != nullptr) said->emplace_back(s);
                               });
  }
  PlayerReply ask(PlayerControl c, std::vector<std::string>* said = nullptr) {
    const lockstep::Frame f = answer(c, said);
    const auto* r = std::get_if<PlayerReply>(&f);
    EXPECT_NE(r, nullptr) << "not a PlayerReply: kind " << f.index() + 1;
    return r != nullptr ? *r : PlayerReply{.ok = false, .error = "not a PlayerReply"};
  }
  PlayerReply ask(PlayerOp op) { return ask(PlayerControl{.op = op}); }
  lockstep::ControlReply control(lockstep::Control c) {
    const lockstep::Frame f = answer(c);
    const auto* r = std::get_if<lockstep::ControlReply>(&f);
    EXPECT_NE(r, nullptr) << "not a ControlReply: kind " << f.index() + 1;
    return r != nullptr ? *r : lockstep::ControlReply{.ok = false, .error = "not a ControlReply"};
  }
  std::vector<std::string> played() {
    std::lock_guard lock(mutex_);
    return played_;
  }

 private:
  FakeSteadyTime steady_{SimTime::zero()};
  std::unique_ptr<record::Player> player_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::string> played_;
};

lockstep::Error error_of(const lockstep::Frame& f) {
  const auto* e = std::get_if<lockstep::Error>(&f);
  EXPECT_NE(e, nullptr) << "not an Error: kind " << f.index() + 1;
  return e != nullptr ? *e : lockstep::Error{};
}

TEST(PlayControlTest, status_says_the_player_state) {
  Running r;
  const PlayerReply s = r.ask(PlayerOp::kStatus);
  EXPECT_TRUE(s.ok);
  EXPECT_EQ(s.error, "");
  EXPECT_TRUE(s.paused);
  EXPECT_DOUBLE_EQ(s.rate, 1.0);
  EXPECT_EQ(s.now.ns(), 1 * kS);
  EXPECT_EQ(s.offset, Duration::zero());
  EXPECT_EQ(s.played, 0u);
  EXPECT_EQ(s.position, 0u);
  EXPECT_EQ(s.total, 5u);
  EXPECT_EQ(s.loops, 0u);
  EXPECT_FALSE(s.clamped);
  EXPECT_EQ(s.burst_played, 0u);
}

TEST(PlayControlTest, pause_resume_toggle_act_on_the_player) {
  Running r;
  PlayerReply a = r.ask(PlayerOp::kResume);
  EXPECT_TRUE(a.ok) << a.error;
  EXPECT_FALSE(a.paused);
  EXPECT_FALSE(r.p().status().paused);
  a = r.ask(PlayerOp::kPause);
  EXPECT_TRUE(a.ok) << a.error;
  EXPECT_TRUE(a.paused);
  EXPECT_TRUE(r.p().status().paused);
  EXPECT_TRUE(r.ask(PlayerOp::kToggle).ok);
  EXPECT_FALSE(r.p().status().paused);
  EXPECT_TRUE(r.ask(PlayerOp::kToggle).ok);
  EXPECT_TRUE(r.p().status().paused);
  EXPECT_TRUE(r.ask(PlayerOp::kStatus).paused);
}

TEST(PlayControlTest, play_next_and_burst_play_exactly_that_many) {
  Running r;
  EXPECT_TRUE(r.ask(PlayerOp::kPlayNext).ok);
  EXPECT_EQ(r.played(), (std::vector<std::string>{"m0"}));
  const PlayerReply b = r.ask(PlayerControl{.op = PlayerOp::kBurst, .count = 2});
  EXPECT_TRUE(b.ok) << b.error;
  EXPECT_EQ(b.burst_played, 2u);
  EXPECT_EQ(r.played(), (std::vector<std::string>{"m0", "m1", "m2"}));
  const PlayerReply s = r.ask(PlayerOp::kStatus);
  EXPECT_EQ(s.played, 3u);
  EXPECT_EQ(s.position, 3u);
  EXPECT_EQ(s.now.ns(), 3 * kS);
  EXPECT_EQ(s.offset, seconds(2));
  // Past the end: fewer than asked.
  EXPECT_EQ(r.ask(PlayerControl{.op = PlayerOp::kBurst, .count = 10}).burst_played, 2u);
  const PlayerReply zero = r.ask(PlayerControl{.op = PlayerOp::kBurst, .count = 0});
  EXPECT_FALSE(zero.ok);
  EXPECT_NE(zero.error.find("is not a count > 0"), std::string::npos) << zero.error;
}

TEST(PlayControlTest, play_next_while_playing_is_refused_with_the_players_reason) {
  Running r;
  ASSERT_TRUE(r.ask(PlayerOp::kResume).ok);
  const PlayerReply j = r.ask(PlayerOp::kPlayNext);
  EXPECT_FALSE(j.ok);
  EXPECT_FALSE(j.error.empty());
  EXPECT_FALSE(j.paused);  // the state after the refusal: unchanged
}

TEST(PlayControlTest, set_rate_takes_a_rate_and_the_player_refuses_a_bad_one) {
  Running r;
  const PlayerReply a = r.ask(PlayerControl{.op = PlayerOp::kSetRate, .rate = 2.5});
  EXPECT_TRUE(a.ok) << a.error;
  EXPECT_DOUBLE_EQ(a.rate, 2.5);
  EXPECT_DOUBLE_EQ(r.p().status().rate, 2.5);
  EXPECT_DOUBLE_EQ(r.ask(PlayerOp::kStatus).rate, 2.5);
  for (const double bad : {0.0, -1.0, std::nan(""), HUGE_VAL}) {
    const PlayerReply j = r.ask(PlayerControl{.op = PlayerOp::kSetRate, .rate = bad});
    EXPECT_FALSE(j.ok) << bad;
    EXPECT_FALSE(j.error.empty()) << bad;
    EXPECT_DOUBLE_EQ(j.rate, 2.5) << bad;
  }
  EXPECT_DOUBLE_EQ(r.p().status().rate, 2.5);
}

TEST(PlayControlTest, seek_moves_from_the_start_and_says_a_clamp) {
  Running r;
  std::vector<std::string> said;
  const PlayerReply to2 = r.ask(PlayerControl{.op = PlayerOp::kSeek, .offset = seconds(2)}, &said);
  EXPECT_TRUE(to2.ok) << to2.error;
  EXPECT_EQ(to2.to.ns(), 3 * kS);
  EXPECT_FALSE(to2.clamped);
  EXPECT_EQ(to2.message, "");
  EXPECT_TRUE(said.empty());
  EXPECT_EQ(r.p().status().position, 2u);
  EXPECT_EQ(to2.position, 2u);
  const PlayerReply far = r.ask(PlayerControl{.op = PlayerOp::kSeek, .offset = seconds(99)}, &said);
  EXPECT_TRUE(far.ok);
  EXPECT_TRUE(far.clamped);
  EXPECT_EQ(far.to.ns(), 5 * kS);
  ASSERT_EQ(said.size(), 1u);
  EXPECT_EQ(far.message, said[0]);
}

TEST(PlayControlTest, a_malformed_frame_gets_an_error_and_the_player_keeps_answering) {
  Running r;
  // Not a frame, a truncated one, an unknown kind, an unknown PlayerOp, a frame over 64 KiB.
  std::string bad_op = lockstep::encode_frame(PlayerControl{.op = PlayerOp::kStatus});
  bad_op[2] = 99;
  const std::string big(70'000, 'x');
  const struct {
    std::string bytes;
    lockstep::ErrorCode code;
  } cases[] = {{"bogus", lockstep::ErrorCode::kMalformed},
               {"", lockstep::ErrorCode::kMalformed},
               {std::string("\xf2\x63", 2), lockstep::ErrorCode::kUnknownKind},
               {bad_op, lockstep::ErrorCode::kMalformed},
               {"\xf2\x0e" + big, lockstep::ErrorCode::kOversized}};
  for (const auto& c : cases) {
    const lockstep::Error e = error_of(answer_player_frame(r.p(), c.bytes));
    EXPECT_EQ(e.code, c.code) << e.reason;
    EXPECT_FALSE(e.reason.empty());
  }
  // A frame that decodes but is not for a player (a Grant).
  const lockstep::Error grant =
      error_of(r.answer(lockstep::Grant{.time = SimTime::from_ns(5), .number = 1}));
  EXPECT_EQ(grant.code, lockstep::ErrorCode::kMalformed);
  EXPECT_TRUE(r.ask(PlayerOp::kStatus).ok);
}

TEST(PlayControlTest, hello_of_version_two_gets_the_players_welcome) {
  Running r;
  const lockstep::Frame f = r.answer(lockstep::Hello{.protocol_version = 2, .client = "test"});
  const auto* w = std::get_if<lockstep::Welcome>(&f);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->protocol_version, 2u);
  EXPECT_EQ(w->coordinator, "fieldproof-player 0.2.0");
  EXPECT_EQ(w->max_message_bytes, 65536u);
}

TEST(PlayControlTest, a_version_one_hello_gets_a_version_error_naming_both) {
  Running r;
  // A version-1 Hello: byte 0 is 0xF1 (the rest as version 2 encodes it, protocol_version 1).
  std::string v1 = lockstep::encode_frame(lockstep::Hello{.protocol_version = 1, .client = "old"});
  v1[0] = static_cast<char>(0xF1);
  const lockstep::Error e = error_of(answer_player_frame(r.p(), v1));
  EXPECT_EQ(e.code, lockstep::ErrorCode::kVersion);
  EXPECT_EQ(e.reason, "protocol version 1 is not supported: this player speaks version 2");
  // A version-2 frame saying version 3 in its Hello.
  const lockstep::Error e3 = error_of(r.answer(lockstep::Hello{.protocol_version = 3}));
  EXPECT_EQ(e3.code, lockstep::ErrorCode::kVersion);
  EXPECT_EQ(e3.reason, "protocol version 3 is not supported: this player speaks version 2");
  EXPECT_TRUE(r.ask(PlayerOp::kStatus).ok);
}

TEST(PlayControlTest, control_pause_resume_and_status_say_the_player) {
  Running r;
  ASSERT_TRUE(r.ask(PlayerOp::kPlayNext).ok);
  lockstep::ControlReply s = r.control(lockstep::status_request());
  EXPECT_TRUE(s.ok) << s.error;
  EXPECT_TRUE(s.status.paused);
  EXPECT_EQ(s.status.time.ns(), 1 * kS);
  EXPECT_EQ(s.status.grants, 1u);
  EXPECT_DOUBLE_EQ(s.status.measured_rtf, 1.0);
  EXPECT_DOUBLE_EQ(s.status.max_rtf, 1.0);
  EXPECT_TRUE(s.status.hold.is_infinite());
  EXPECT_TRUE(s.status.participants.empty());
  s = r.control(lockstep::resume_request());
  EXPECT_TRUE(s.ok) << s.error;
  EXPECT_FALSE(s.status.paused);
  EXPECT_FALSE(r.p().status().paused);
  s = r.control(lockstep::pause_request());
  EXPECT_TRUE(s.ok) << s.error;
  EXPECT_TRUE(r.p().status().paused);
}

TEST(PlayControlTest, control_set_max_rtf_sets_the_rate_and_refuses_unlimited) {
  Running r;
  const lockstep::ControlReply a = r.control(lockstep::set_max_rtf_request(3.0));
  EXPECT_TRUE(a.ok) << a.error;
  EXPECT_DOUBLE_EQ(a.status.max_rtf, 3.0);
  EXPECT_DOUBLE_EQ(r.p().status().rate, 3.0);
  for (const double unlimited : {0.0, -1.0}) {
    const lockstep::ControlReply j = r.control(lockstep::set_max_rtf_request(unlimited));
    EXPECT_FALSE(j.ok) << unlimited;
    EXPECT_NE(j.error.find("refused"), std::string::npos) << j.error;
  }
  EXPECT_DOUBLE_EQ(r.p().status().rate, 3.0);
}

TEST(PlayControlTest, control_step_and_run_until_are_refused) {
  Running r;
  const lockstep::ControlReply step = r.control(lockstep::step_request(seconds(1)));
  EXPECT_FALSE(step.ok);
  EXPECT_NE(step.error.find("steps by messages"), std::string::npos) << step.error;
  EXPECT_TRUE(step.status.paused);
  const lockstep::ControlReply until = r.control(
      lockstep::Control{.op = lockstep::ControlOp::kRunUntil, .until = SimTime::from_ns(3 * kS)});
  EXPECT_FALSE(until.ok);
  EXPECT_EQ(r.p().status().played, 0u);
}

TEST(PlayControlTest, a_following_player_refuses_the_controls) {
  ExternalClock followed(ExternalClockOptions{});
  FakeSteadyTime steady{SimTime::zero()};
  auto p = record::Player::open_bytes(five_seconds(), {.follow = &followed}, steady);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  for (const PlayerControl c :
       {PlayerControl{.op = PlayerOp::kPause}, PlayerControl{.op = PlayerOp::kResume},
        PlayerControl{.op = PlayerOp::kSetRate, .rate = 2},
        PlayerControl{.op = PlayerOp::kSeek, .offset = seconds(1)}}) {
    const lockstep::Frame f = answer_player_frame(**p, lockstep::Frame{c});
    const auto* j = std::get_if<PlayerReply>(&f);
    ASSERT_NE(j, nullptr);
    EXPECT_FALSE(j->ok) << static_cast<int>(c.op);
    EXPECT_FALSE(j->error.empty()) << static_cast<int>(c.op);
  }
}

}  // namespace
}  // namespace fieldproof::engine
