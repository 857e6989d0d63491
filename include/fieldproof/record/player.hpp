// Player: plays an MCAP recording paced by a TimeControllerClock, with full time control
// (docs/playback.md). Transport independent: each message goes to a MessageSink (the CLI's --echo
// sink prints a JSON line; a coordinator sink would publish it). Steady time is injected, so the
// tests drive it with a FakeSteadyTime and never sleep.
//
//   FakeSteadyTime steady;
//   auto player = Player::open_bytes(bytes, {.rate = 2.0}, steady);
//   std::thread t([&] { (void)(*player)->run(sink); });   // blocks until the end or stop()
//   (void)(*player)->pause();
//   (void)(*player)->play_next();                         // exactly the next message
//   (*player)->seek(SimTime::from_ns(5'000'000'000));     // clamped to the recording, said
//
// Semantics (docs/playback.md, "The player"):
//   * The play range is the messages (of the selected topics) with stamps in
//     [first + start_offset, stop], stop = min(last, start + playback_duration, playback_until):
//     both ends inclusive.
//   * Order: log time, equal stamps in recorded (file) order — the order McapReader gives.
//   * seek(t): t is clamped to [range start, range end] (clamped() says so); the next message
//     played is the FIRST message of the range whose stamp is >= t (a message stamped exactly t
//     plays, once). Nothing between the old position and t plays; nothing is played twice
//     except by seeking backwards on purpose.
//   * play_next(): only while paused; plays exactly the message at the current position (equal
//     stamps one by one, in recorded order) and moves the paused clock to its stamp.
//     burst(n): play_next n times (fewer at the end of the range).
//   * loop: at the end of the range, the clock jumps back to the range start and playback goes on.
//   * The message data lives in memory (the whole selected range is read at open()).
// Threads: run() on one thread; every control method may be called from any other thread. The
// sink is called with the player's mutex held (calls are serialised): it must not call the
// player's control methods.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fieldproof/record/mcap_reader.hpp"
#include "fieldproof/record/mcap_types.hpp"
#include "fieldproof/time/duration.hpp"
#include "fieldproof/time/player_clock.hpp"
#include "fieldproof/util/mutex.hpp"

namespace fieldproof::record {

struct PlayerOptions {
  double rate = 1.0;  // > 0, finite
  bool start_paused = false;
  Duration start_offset = Duration::zero();   // from the first message (>= 0)
  std::optional<Duration> playback_duration;  // from the start of playback (>= 0)
  std::optional<Duration> playback_until;     // from the first message (>= 0)
  bool loop = false;
  std::vector<std::string> topics;  // empty: every topic; an unknown topic is an error
  // Follow this clock instead of pacing by an own TimeControllerClock (an ExternalClock fed by
  // another player's /clock). It must outlive the player. Then pause, resume, set_rate, seek and
  // play_next are refused (the followed source controls time); a backward jump of the source
  // moves the position like seek(): the next message is the first one stamped >= the new time.
  PlayerClock* follow = nullptr;
};

struct PlayedMessage {
  std::string_view topic;
  uint16_t channel_id = 0;
  uint32_t sequence = 0;
  int64_t log_time_ns = 0;
  std::string_view data;
  uint64_t index = 0;  // position in the play range (0-based)
  // The channel's bus type: its "type" metadata (what the recorder wrote), else the schema name.
  std::string_view type;
  // The stamp of the message that plays after this one if nothing intervenes (the range start
  // when looping at the end), or std::nullopt at the end of the range.
  std::optional<int64_t> next_log_time_ns;
};
using MessageSink = std::function<void(const PlayedMessage&)>;

struct PlayerStatus {
  SimTime now;  // the player clock
  bool paused = false;
  double rate = 1.0;
  uint64_t played = 0;    // messages handed to the sink so far
  uint64_t position = 0;  // index of the next message in the range
  uint64_t total = 0;     // messages in the range
  SimTime range_start;
  SimTime range_end;
  uint64_t loops = 0;  // completed loops
  bool finished = false;
};

// What seek() did.
struct SeekResult {
  SimTime requested;
  SimTime to;  // after clamping
  bool clamped = false;
  std::string message;   // says the clamp or the refusal ("" when neither)
  bool refused = false;  // a following player does not seek
};

class Player {
 public:
  // Opens the file and reads the selected range. Errors: those of McapReader::open (kNotMcap,
  // kIoError), kInvalidArgument for bad options (rate, an unknown topic). A truncated file opens:
  // complete() is false and problems() says what was skipped.
  static Result<std::unique_ptr<Player>> open(const std::string& path, PlayerOptions options,
                                              SteadyTime& steady = SystemSteadyTime::instance());
  static Result<std::unique_ptr<Player>> open_bytes(
      std::string bytes, PlayerOptions options, SteadyTime& steady = SystemSteadyTime::instance());
  ~Player();
  Player(const Player&) = delete;
  Player& operator=(const Player&) = delete;

  // Plays until the end of the range (forever with loop) or stop(). Returns the number of
  // messages played by this call and by play_next/burst while it ran.
  uint64_t run(const MessageSink& sink);
  // Ends run() promptly, paused or not. Thread-safe; idempotent.
  void stop();

  Status pause();
  Status resume();
  Status toggle();
  Status set_rate(double rate);
  SeekResult seek(SimTime to);
  // Seek relative to now().
  SeekResult seek_by(Duration d);
  // Only while paused and while run() is running (its sink is used).
  Status play_next();
  // play_next up to n times; returns how many played in *played.
  Status burst(uint64_t n, uint64_t* played = nullptr);

  PlayerStatus status() const;
  bool complete() const { return problems_.empty(); }
  const std::vector<std::string>& problems() const { return problems_; }
  // Things the player said at open (a start offset past the end, clamped).
  const std::vector<std::string>& notices() const { return notices_; }
  // The clock the player paces by (its own TimeControllerClock, or options.follow).
  PlayerClock& clock() { return *pacing_; }
  bool following() const { return options_.follow != nullptr; }

 private:
  struct Item {
    uint16_t channel_id;
    uint32_t sequence;
    int64_t log_time_ns;
    std::string data;
  };
  Player(PlayerOptions options, SteadyTime& steady);
  static Result<std::unique_ptr<Player>> load(std::unique_ptr<Player> player, McapReader& reader);
  void publish_locked(size_t index) FIELDPROOF_REQUIRES(mutex_);
  size_t first_at_or_after(SimTime t) const;
  Status play_next_locked() FIELDPROOF_REQUIRES(mutex_);

  PlayerOptions options_;
  SteadyTime& steady_;
  std::vector<Item> items_;
  std::vector<std::string> topics_by_channel_;  // indexed by channel id
  std::vector<std::string> types_by_channel_;   // indexed by channel id
  std::vector<std::string> problems_;
  std::vector<std::string> notices_;
  SimTime range_start_;
  SimTime range_end_;
  std::unique_ptr<TimeControllerClock> clock_;
  PlayerClock* pacing_ = nullptr;  // clock_ or options_.follow
  uint64_t follow_handler_ = 0;    // the jump handler registered on options_.follow

  mutable Mutex mutex_;
  const MessageSink* sink_ FIELDPROOF_GUARDED_BY(mutex_) = nullptr;  // set while run() runs
  size_t next_ FIELDPROOF_GUARDED_BY(mutex_) = 0;
  uint64_t generation_ FIELDPROOF_GUARDED_BY(mutex_) = 0;  // bumped by seek, play_next, loop
  uint64_t played_ FIELDPROOF_GUARDED_BY(mutex_) = 0;
  uint64_t loops_ FIELDPROOF_GUARDED_BY(mutex_) = 0;
  bool finished_ FIELDPROOF_GUARDED_BY(mutex_) = false;
  std::atomic<bool> stop_{false};
  std::atomic<bool> running_{false};
};

}  // namespace fieldproof::record
