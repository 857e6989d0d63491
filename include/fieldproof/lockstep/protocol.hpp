// The lock-step protocol's messages, shared by the coordinator core, every transport and the
// participant library. A transport moves Frames; the in-process transport passes them as values,
// the ZeroMQ transports encode them with encode_frame / decode_frame (codec.hpp).
//
// The invariants (DESIGN.md, "One idea carries everything"):
//  1. An Announce of T promises no publish stamped before T (SimTime::infinite() while idle).
//  2. Messages are delivered in the total order (stamp, publisher name, publisher's seq).
//  3. A Deliver stamped s lowers the receiving thread's safe time to s until it announces again.
//  4. A Grant is min(safe times) bounded by the pace regulator and the engine's hold; never while
//     paused; never backwards.
//  5. Leave is explicit; silence is detected by heartbeats.
//
//   Frame f = Announce{.participant = "ugv1", .thread = "main", .role = Role::kRegulating,
//                      .safe_time = SimTime::from_ns(10'000'000)};
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "fieldproof/time/duration.hpp"

namespace fieldproof::lockstep {

// Regulating participants hold time (the grant waits for their announcements); following ones
// only receive the clock and messages, and their publishes are stamped at the current grant.
enum class Role : uint8_t { kRegulating = 0, kFollowing = 1 };

// ---- participant -> coordinator -------------------------------------------------------------

// Registers (participant, thread) on first use and sets that thread's safe time.
struct Announce {
  std::string participant;
  std::string thread;
  Role role = Role::kRegulating;
  SimTime safe_time;
};

struct Subscribe {
  std::string participant;
  std::string thread;  // the thread whose safe time a delivery lowers
  std::string topic;
};

struct Unsubscribe {
  std::string participant;
  std::string thread;
  std::string topic;
};

// A stamped message. seq is the publisher's own counter (per participant, strictly increasing);
// a following participant's stamp is replaced by the current grant.
struct Publish {
  std::string participant;
  std::string topic;
  SimTime stamp;
  uint64_t seq = 0;
  std::string type;     // payload type name, e.g. "ignition.msgs.Pose_V"; free text
  std::string payload;  // opaque bytes
  // In-process only, never on the wire: set on a delivery whose receiver's relay the coordinator
  // already ran (CoordinatorCore::set_relay).
  bool relayed = false;
};

// Leaves: thread empty means the whole participant.
struct Leave {
  std::string participant;
  std::string thread;
};

struct Heartbeat {
  std::string participant;
};

// The handshake (ZeroMQ transports only; docs/protocol.md). The first frame a participant's link
// sends; the coordinator answers Welcome, or Error{kVersion} when protocol_version differs.
struct Hello {
  uint32_t protocol_version = 0;
  std::string client;  // free text, e.g. "fieldproof-cpp 0.2.0"
};

// ---- coordinator -> participant -------------------------------------------------------------

struct Grant {
  SimTime time;
  uint64_t number = 0;  // grants issued so far
};

// The coordinator's answer to a Hello it accepts.
struct Welcome {
  uint32_t protocol_version = 0;
  std::string coordinator;         // free text, e.g. "fieldproof-coordinator 0.2.0"
  uint64_t max_message_bytes = 0;  // the largest frame the coordinator accepts
};

// A message delivered to (participant, thread) because that thread subscribed to its topic.
struct Deliver {
  std::string thread;
  Publish message;
};

enum class ErrorCode : uint8_t {
  kMalformed = 1,          // a frame that does not decode
  kUnknownKind = 2,        // a kind byte this version does not know
  kStampInPast = 3,        // publish stamped before the current grant
  kAnnounceBackwards = 4,  // a safe time below the thread's previous announcement and the grant
  kDuplicateName = 5,      // the participant name is in use on another connection
  kOversized = 6,          // larger than the coordinator's max_message_bytes
  kNotRegistered = 7,      // a publish or subscribe before the first announcement
  kTimeout = 8,            // a regulating participant stayed silent past ack_timeout
  kShutdown = 9,           // the coordinator is ending
  kVersion = 10,           // a Hello (or a frame) of another protocol version
  kNoHello = 11,           // a participant frame on a connection that has not sent a valid Hello
};

struct Error {
  ErrorCode code = ErrorCode::kMalformed;
  std::string reason;  // human readable, names the participant / field
};

// ---- control (pause, resume, step, run_until, rate, status) ---------------------------------

enum class ControlOp : uint8_t {
  kPause = 1,
  kResume = 2,
  kStep = 3,       // advance by `duration` then pause
  kRunUntil = 4,   // hold: never grant past `until` (SimTime::infinite() lifts it)
  kSetMaxRtf = 5,  // `max_rtf` <= 0 means unlimited
  kStatus = 6,
};

struct Control {
  ControlOp op = ControlOp::kStatus;
  Duration duration;
  SimTime until;
  double max_rtf = 0.0;
};

struct ParticipantStatus {
  std::string participant;
  std::string thread;
  Role role = Role::kRegulating;
  SimTime safe_time;  // the effective safe time (lowered by deliveries)
};

struct CoordinatorStatus {
  bool paused = false;
  SimTime time;             // the current grant
  uint64_t grants = 0;      // grants issued
  double measured_rtf = 0;  // simulated / wall time since start, pauses left out
  double max_rtf = 0;       // 0 = unlimited
  SimTime hold;             // run_until hold, infinite when none
  std::vector<ParticipantStatus> participants;
};

struct ControlReply {
  bool ok = true;
  std::string error;
  CoordinatorStatus status;
};

// ---- player control (a player's control endpoint, `fieldproof play --control EP`) ----------
// A player also answers Control (pause, resume, status; SetMaxRtf sets its rate) with a
// ControlReply, so a coordinator's control tool works on it unchanged; these are what only a
// player does. A coordinator answers a PlayerControl with Error{kUnknownKind}.

enum class PlayerOp : uint8_t {
  kPause = 1,
  kResume = 2,
  kToggle = 3,
  kSetRate = 4,   // `rate`: > 0 and finite, or refused
  kSeek = 5,      // to `offset` from the start of the play range (clamped to the range)
  kPlayNext = 6,  // only while paused: exactly the next message
  kBurst = 7,     // play_next `count` times (fewer at the end of the range); count > 0
  kStatus = 8,
};

struct PlayerControl {
  PlayerOp op = PlayerOp::kStatus;
  Duration offset;     // kSeek; otherwise ignored (send 0)
  uint64_t count = 0;  // kBurst; otherwise ignored
  double rate = 0.0;   // kSetRate; otherwise ignored
};

// The player's answer to a PlayerControl: refused or not, and its state after the request.
struct PlayerReply {
  bool ok = true;
  std::string error;  // why not, when !ok (the player's own message); empty otherwise
  bool paused = false;
  double rate = 1.0;
  SimTime now;            // the player clock (log time)
  Duration offset;        // now - the start of the play range
  uint64_t played = 0;    // messages played so far
  uint64_t position = 0;  // index of the next message in the range
  uint64_t total = 0;     // messages in the range
  uint64_t loops = 0;     // completed loops
  // kSeek: where playback went, whether that was clamped to the range, and the clamp's message.
  SimTime to;
  bool clamped = false;
  std::string message;
  uint64_t burst_played = 0;  // kBurst: how many messages the burst played
};

// The order of the alternatives is the wire kind minus one (codec.hpp FrameKind): append only.
using Frame =
    std::variant<Announce, Subscribe, Unsubscribe, Publish, Leave, Heartbeat, Grant, Deliver, Error,
                 Control, ControlReply, Hello, Welcome, PlayerControl, PlayerReply>;

}  // namespace fieldproof::lockstep
