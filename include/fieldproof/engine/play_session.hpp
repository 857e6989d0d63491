// Playing a recording onto the outside world: a record::Player (include/fieldproof/record/
// player.hpp) with, around it, what `fieldproof play` offers beyond the player itself
// (docs/playback.md):
//   * a lock-step coordinator to publish onto: as its leading (regulating) participant, each
//     message stamped at its log time, the announcement never above a message not yet published
//     and never backwards, optionally driving the coordinator's time by the player clock and
//     publishing /clock (`clock_hz`); or as a following participant paced by another player's
//     /clock (`follow_clock`);
//   * a control server: a ZeroMQ ROUTER speaking the lock-step protocol's control frames
//     (docs/protocol.md 8.1): PlayerControl -> PlayerReply, Control -> ControlReply, Hello ->
//     Welcome (answer_player_frame, below); `fieldproof clock EP` is its client.
// It lives in the engine part, not in record, because it joins a coordinator (lockstep) and
// publishes ignition Clock messages (msgs), neither of which the record part may use.
//
//   PlaySessionOptions o;
//   o.file = "runs/x/recording/recording.mcap";
//   o.player.rate = 2.0;
//   o.coordinator = "ipc:///tmp/coord.ipc";
//   auto s = PlaySession::open(o);                   // validates, reads the file, binds control
//   if (!s.ok()) return s.status();                  // kInvalidArgument / kNotMcap: bad input
//   if (Status j = (*s)->join(); !j.ok()) ...;       // waits for the coordinator's first grant
//   PlayOutcome out = (*s)->run([](const record::PlayedMessage& m) { ... });  // until the end
//
// Threads: open, join and run on one thread; stop() and player()'s control methods from any.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "fieldproof/lockstep/protocol.hpp"
#include "fieldproof/record/player.hpp"
#include "fieldproof/time/duration.hpp"
#include "fieldproof/util/status.hpp"

namespace fieldproof::lockstep {
class Participant;
}  // namespace fieldproof::lockstep

namespace fieldproof::engine {

// What a session says on the side (a clamped seek asked through the control server, the
// coordinator's errors, the followed clock's warnings): one line each, without a prefix. Called
// from the session's threads.
using PlayDiagnostic = std::function<void(std::string_view)>;

struct PlaySessionOptions {
  std::string file;              // the recording (.mcap)
  record::PlayerOptions player;  // `follow` is the session's own (set with follow_clock)
  // Publish onto the lock-step coordinator at this endpoint; empty: no coordinator.
  std::string coordinator;
  // With a coordinator: be the time source. > 0: the coordinator's time follows the player
  // clock, refreshed and published on /clock (ignition.msgs.Clock) this many times per second.
  // 0: accepted, as if unset (the announcement is the next message's stamp).
  std::optional<double> clock_hz;
  // With a coordinator: pace by another player's /clock (a following participant); the
  // controls are then refused by the player.
  bool follow_clock = false;
  bool extrapolate = false;  // with follow_clock: extrapolate between /clock samples
  // The participant's name; empty: "player", or "player-follower" with follow_clock.
  std::string name;
  // A ZeroMQ ROUTER endpoint for control frames (answer_player_frame); empty: none. Bound by
  // open(), so a client may connect before playback starts; served while run() runs.
  std::string control;
  // How long the coordinator has to answer a status request before join() gives up.
  Duration join_timeout = seconds(5);
  PlayDiagnostic on_diagnostic;
};

// The topic and type of the player clock's publication (with clock_hz > 0).
inline constexpr std::string_view kPlayClockTopic = "/clock";
inline constexpr std::string_view kPlayClockType = "ignition.msgs.Clock";

// Checks the options that do not need the file: kInvalidArgument with a message naming the
// option as the CLI spells it ("--rate 0 refused: must be a finite number > 0").
Status validate(const PlaySessionOptions& options);

struct PlayOutcome {
  uint64_t played = 0;   // messages played (by run and by play_next/burst while it ran)
  bool complete = true;  // the file was read whole (player().problems() says what was skipped)
  size_t damaged = 0;    // parts of the file skipped as damaged
};

class PlaySession {
 public:
  // Validates, opens the recording (Player::open's errors: kNotMcap, kIoError, kInvalidArgument
  // for an unknown topic; the message starts with the file name) and binds the control endpoint
  // (kInvalidArgument "--control EP: <reason>").
  static Result<std::unique_ptr<PlaySession>> open(PlaySessionOptions options);
  ~PlaySession();
  PlaySession(const PlaySession&) = delete;
  PlaySession& operator=(const PlaySession&) = delete;

  // With a coordinator: checks that one answers (kUnavailable "no coordinator answered at EP
  // within T s ..."), joins it (kInvalidArgument "--coordinator: ..." for a bad endpoint,
  // kUnavailable "the coordinator at EP refused the player: ..."), which waits for its first
  // grant, and starts reading the link. Without one: nothing. Call once, before run().
  Status join();
  // Plays to the end of the range (forever with loop) or stop(), serving the control endpoint;
  // each message is published (with a coordinator) and then given to `on_message` (may be
  // empty). Leaves the coordinator at the end. Call once.
  PlayOutcome run(const record::MessageSink& on_message = {});
  // Ends run() promptly, paused or not. Thread-safe; idempotent.
  void stop();

  record::Player& player() { return *player_; }
  const PlaySessionOptions& options() const { return options_; }

 private:
  class Publisher;
  class ControlServer;
  explicit PlaySession(PlaySessionOptions options);
  void say(std::string_view line) const;
  void leave();

  PlaySessionOptions options_;
  std::unique_ptr<ExternalClock> followed_;  // with follow_clock
  std::unique_ptr<record::Player> player_;
  std::unique_ptr<ControlServer> control_;
  std::unique_ptr<lockstep::Participant> participant_;
  std::unique_ptr<Publisher> publisher_;  // the leading player on a coordinator
  uint64_t jump_handler_ = 0;
  std::thread receiver_;  // reads the coordinator link (grants, errors, the followed /clock)
  bool joined_ = false;
};

// The player's control endpoint's answer to one request frame (docs/protocol.md 8.1), acted on
// `player`; callable without a socket:
//   PlayerControl{op, ...}   PlayerReply: the player's state after the request, what a Seek or a
//                            Burst did; ok = false with the player's reason when it refused (a
//                            clamped Seek is also said to `diagnostic`)
//   Control                  ControlReply: Pause, Resume, Status; SetMaxRtf sets the rate (<= 0
//                            refused); Step and RunUntil refused (the player steps by messages)
//   Hello{2}                 Welcome{2, kPlayerName, kPlayerMaxFrameBytes}; another version:
//                            Error{kVersion} naming both versions
//   anything else            Error{kMalformed}
lockstep::Frame answer_player_frame(record::Player& player, const lockstep::Frame& request,
                                    const PlayDiagnostic& diagnostic = {});
// The same for the bytes of a request: one that does not decode gets its decode Error (frames over
// kPlayerMaxFrameBytes kOversized, another protocol version kVersion naming both).
lockstep::Frame answer_player_frame(record::Player& player, std::string_view request,
                                    const PlayDiagnostic& diagnostic = {});

// What the player's Welcome says.
inline constexpr std::string_view kPlayerName = "fieldproof-player 0.2.0";
inline constexpr uint64_t kPlayerMaxFrameBytes = 65536;

}  // namespace fieldproof::engine
