// handle_play_command, the player's control commands, called directly on a Player paced by a
// FakeSteadyTime: every command, its refusals, and replies that stay valid JSON whatever bytes the
// command held (parsed back with nlohmann).
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "fieldproof/engine/play_session.hpp"
#include "fieldproof/record/mcap_writer.hpp"

namespace fieldproof::engine {
namespace {

using nlohmann::json;
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
  json ask(const std::string& command, std::vector<std::string>* said = nullptr) {
    const std::string reply = handle_play_command(*player_, command, [said](std::string_view s) {
      if (said != nullptr) said->emplace_back(s);
    });
    return json::parse(reply);  // throws (fails the test) when the reply is not JSON
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

TEST(PlayControlTest, status_says_the_player_state_with_its_keys_in_order) {
  Running r;
  const std::string reply = handle_play_command(r.p(), "status");
  EXPECT_EQ(reply, R"({"ok":true,"paused":true,"rate":1,"now":1000000000,"offset":0.0,"played":0,)"
                   R"("position":0,"total":5,"loops":0})");
}

TEST(PlayControlTest, pause_resume_toggle_act_on_the_player) {
  Running r;
  EXPECT_EQ(r.ask("resume"), json::parse(R"({"ok":true})"));
  EXPECT_FALSE(r.p().status().paused);
  EXPECT_EQ(r.ask("pause"), json::parse(R"({"ok":true})"));
  EXPECT_TRUE(r.p().status().paused);
  EXPECT_EQ(r.ask("toggle")["ok"], true);
  EXPECT_FALSE(r.p().status().paused);
  EXPECT_EQ(r.ask("toggle")["ok"], true);
  EXPECT_TRUE(r.p().status().paused);
  // Leading and trailing blanks are not part of the verb.
  EXPECT_EQ(r.ask("  status  ")["paused"], true);
}

TEST(PlayControlTest, play_next_and_burst_play_exactly_that_many) {
  Running r;
  EXPECT_EQ(r.ask("play_next"), json::parse(R"({"ok":true})"));
  EXPECT_EQ(r.played(), (std::vector<std::string>{"m0"}));
  EXPECT_EQ(r.ask("burst 2"), json::parse(R"({"ok":true,"played":2})"));
  EXPECT_EQ(r.played(), (std::vector<std::string>{"m0", "m1", "m2"}));
  const json s = r.ask("status");
  EXPECT_EQ(s["played"], 3);
  EXPECT_EQ(s["position"], 3);
  EXPECT_EQ(s["now"], 3 * kS);
  EXPECT_DOUBLE_EQ(s["offset"].get<double>(), 2.0);
  // Past the end: fewer than asked.
  EXPECT_EQ(r.ask("burst 10")["played"], 2);
  for (const char* bad : {"burst", "burst 0", "burst -1", "burst 2x"}) {
    const json j = r.ask(bad);
    EXPECT_EQ(j["ok"], false) << bad;
    EXPECT_NE(j["error"].get<std::string>().find("is not a count > 0"), std::string::npos) << bad;
  }
}

TEST(PlayControlTest, play_next_while_playing_is_refused_with_the_players_reason) {
  Running r;
  ASSERT_EQ(r.ask("resume")["ok"], true);
  const json j = r.ask("play_next");
  EXPECT_EQ(j["ok"], false);
  EXPECT_FALSE(j["error"].get<std::string>().empty());
}

TEST(PlayControlTest, set_rate_takes_a_number_and_the_player_refuses_a_bad_one) {
  Running r;
  EXPECT_EQ(r.ask("set_rate 2.5"), json::parse(R"({"ok":true})"));
  EXPECT_DOUBLE_EQ(r.p().status().rate, 2.5);
  EXPECT_DOUBLE_EQ(r.ask("status")["rate"].get<double>(), 2.5);
  const json zero = r.ask("set_rate 0");
  EXPECT_EQ(zero["ok"], false);
  EXPECT_DOUBLE_EQ(r.p().status().rate, 2.5);
  for (const char* bad : {"set_rate", "set_rate fast", "set_rate 2x"}) {
    const json j = r.ask(bad);
    EXPECT_EQ(j["ok"], false) << bad;
    EXPECT_NE(j["error"].get<std::string>().find("is not a number"), std::string::npos) << bad;
  }
}

TEST(PlayControlTest, seek_moves_from_the_start_and_says_a_clamp) {
  Running r;
  std::vector<std::string> said;
  EXPECT_EQ(r.ask("seek 2s", &said), json::parse(R"({"ok":true,"to":3000000000,"clamped":false})"));
  EXPECT_TRUE(said.empty());
  EXPECT_EQ(r.p().status().position, 2u);
  const json far = r.ask("seek 99s", &said);
  EXPECT_EQ(far["ok"], true);
  EXPECT_EQ(far["clamped"], true);
  EXPECT_EQ(far["to"], 5 * kS);
  ASSERT_EQ(said.size(), 1u);
  EXPECT_EQ(far["message"], said[0]);
  const json bad = r.ask("seek soon");
  EXPECT_EQ(bad["ok"], false);
  EXPECT_EQ(bad["error"].get<std::string>().rfind("seek: ", 0), 0u) << bad;
}

TEST(PlayControlTest, an_unknown_command_is_a_json_error_naming_it) {
  Running r;
  const json j = r.ask("bogus");
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["error"],
            "unknown command 'bogus' (pause, resume, toggle, set_rate R, seek T, play_next, "
            "burst N, status)");
  EXPECT_EQ(r.ask("")["ok"], false);
}

TEST(PlayControlTest, odd_bytes_in_a_command_round_trip_through_the_json_reply) {
  Running r;
  // Quotes, backslashes, control characters, DEL, non-ASCII: the error quotes them exactly.
  for (const std::string& odd :
       {std::string("a\"b"), std::string("back\\slash"), std::string("\x01\x02\x1f"),
        std::string("bell\x07\x7f"), std::string("\xc3\xa9t\xc3\xa9"), std::string("{\"ok\":true}"),
        std::string("</script>")}) {
    const json j = r.ask(odd);
    EXPECT_EQ(j["ok"], false);
    EXPECT_EQ(j["error"].get<std::string>().substr(0, 17 + odd.size()), "unknown command '" + odd)
        << odd;
    const json rate = r.ask("set_rate " + odd);
    EXPECT_EQ(rate["error"], "set_rate: '" + odd + "' is not a number") << odd;
  }
  // Bytes that are not UTF-8 still give JSON (replaced), never an exception.
  const json invalid = r.ask("\xff\xfe");
  EXPECT_EQ(invalid["ok"], false);
}

TEST(PlayControlTest, a_following_player_refuses_the_controls_in_json) {
  ExternalClock followed(ExternalClockOptions{});
  FakeSteadyTime steady{SimTime::zero()};
  auto p = record::Player::open_bytes(five_seconds(), {.follow = &followed}, steady);
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  for (const char* command : {"pause", "resume", "set_rate 2"}) {
    const json j = json::parse(handle_play_command(**p, command));
    EXPECT_EQ(j["ok"], false) << command;
    EXPECT_FALSE(j["error"].get<std::string>().empty()) << command;
  }
}

}  // namespace
}  // namespace fieldproof::engine
