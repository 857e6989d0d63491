// The player's control endpoint's answers (answer_player_frame, docs/protocol.md 8.1): lock-step
// control frames in, one frame out, acted on a record::Player.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <variant>

#include "fieldproof/engine/play_session.hpp"
#include "fieldproof/lockstep/codec.hpp"

namespace fieldproof::engine {
namespace {

using lockstep::ControlOp;
using lockstep::PlayerOp;

// The player's state, as a PlayerReply says it (ok, nothing seek or burst did).
lockstep::PlayerReply state_of(const record::Player& player) {
  const record::PlayerStatus s = player.status();
  lockstep::PlayerReply r;
  r.paused = s.paused;
  r.rate = s.rate;
  r.now = s.now;
  r.offset = s.now - s.range_start;
  r.played = s.played;
  r.position = s.position;
  r.total = s.total;
  r.loops = s.loops;
  return r;
}

// The state after the request, refused (nothing changed) when `s` says so.
lockstep::PlayerReply after(const record::Player& player, const Status& s) {
  lockstep::PlayerReply r = state_of(player);
  if (!s.ok()) {
    r.ok = false;
    r.error = s.message();
  }
  return r;
}

lockstep::PlayerReply refused(const record::Player& player, std::string message) {
  lockstep::PlayerReply r = state_of(player);
  r.ok = false;
  r.error = std::move(message);
  return r;
}

lockstep::PlayerReply seek(record::Player& player, Duration offset,
                           const PlayDiagnostic& diagnostic) {
  const record::SeekResult s = player.seek(player.status().range_start + offset);
  if (s.refused) return refused(player, s.message);
  if (s.clamped && diagnostic) diagnostic(s.message);
  lockstep::PlayerReply r = state_of(player);
  r.to = s.to;
  r.clamped = s.clamped;
  if (s.clamped) r.message = s.message;
  return r;
}

lockstep::PlayerReply burst(record::Player& player, uint64_t count) {
  if (count == 0) return refused(player, "burst: 0 is not a count > 0");
  uint64_t played = 0;
  const Status s = player.burst(count, &played);
  lockstep::PlayerReply r = after(player, s);
  r.burst_played = played;
  return r;
}

lockstep::PlayerReply answer_player_control(record::Player& player,
                                            const lockstep::PlayerControl& c,
                                            const PlayDiagnostic& diagnostic) {
  switch (c.op) {
    case PlayerOp::kPause:
      return after(player, player.pause());
    case PlayerOp::kResume:
      return after(player, player.resume());
    case PlayerOp::kToggle:
      return after(player, player.toggle());
    case PlayerOp::kSetRate:
      return after(player, player.set_rate(c.rate));
    case PlayerOp::kSeek:
      return seek(player, c.offset, diagnostic);
    case PlayerOp::kPlayNext:
      return after(player, player.play_next());
    case PlayerOp::kBurst:
      return burst(player, c.count);
    case PlayerOp::kStatus:
      break;
  }
  return state_of(player);
}

// A coordinator's status, said by a player: its clock for the grant, messages played for the
// grants, its rate for the pace, no hold, no participants.
lockstep::ControlReply control_reply(const record::Player& player, const Status& s) {
  const record::PlayerStatus p = player.status();
  lockstep::ControlReply r;
  r.ok = s.ok();
  if (!s.ok()) r.error = s.message();
  r.status.paused = p.paused;
  r.status.time = p.now;
  r.status.grants = p.played;
  r.status.measured_rtf = p.rate;
  r.status.max_rtf = p.rate;
  r.status.hold = SimTime::infinite();
  return r;
}

std::string number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

lockstep::ControlReply answer_control(record::Player& player, const lockstep::Control& c) {
  switch (c.op) {
    case ControlOp::kPause:
      return control_reply(player, player.pause());
    case ControlOp::kResume:
      return control_reply(player, player.resume());
    case ControlOp::kSetMaxRtf:
      if (!(c.max_rtf > 0)) {
        return control_reply(player,
                             Status(StatusCode::kFailedPrecondition,
                                    "SetMaxRtf " + number(c.max_rtf) +
                                        " refused: a player has a rate (> 0), never unlimited"));
      }
      return control_reply(player, player.set_rate(c.max_rtf));
    case ControlOp::kStep:
    case ControlOp::kRunUntil:
      return control_reply(
          player,
          Status(StatusCode::kFailedPrecondition,
                 std::string(c.op == ControlOp::kStep ? "Step" : "RunUntil") +
                     " refused: a player steps by messages (PlayerControl PlayNext or Burst; "
                     "fieldproof clock EP play-next | burst N)"));
    case ControlOp::kStatus:
      break;
  }
  return control_reply(player, Status());
}

lockstep::Error version_refusal(uint32_t version) {
  return lockstep::Error{lockstep::ErrorCode::kVersion,
                         "protocol version " + std::to_string(version) +
                             " is not supported: this player speaks version " +
                             std::to_string(lockstep::kProtocolVersion)};
}

}  // namespace

lockstep::Frame answer_player_frame(record::Player& player, const lockstep::Frame& request,
                                    const PlayDiagnostic& diagnostic) {
  if (const auto* c = std::get_if<lockstep::PlayerControl>(&request)) {
    return answer_player_control(player, *c, diagnostic);
  }
  if (const auto* c = std::get_if<lockstep::Control>(&request)) return answer_control(player, *c);
  if (const auto* h = std::get_if<lockstep::Hello>(&request)) {
    if (h->protocol_version != lockstep::kProtocolVersion) {
      return version_refusal(h->protocol_version);
    }
    return lockstep::Welcome{lockstep::kProtocolVersion, std::string(kPlayerName),
                             kPlayerMaxFrameBytes};
  }
  return lockstep::Error{lockstep::ErrorCode::kMalformed,
                         "a player's control endpoint takes PlayerControl, Control and Hello "
                         "frames only"};
}

lockstep::Frame answer_player_frame(record::Player& player, std::string_view request,
                                    const PlayDiagnostic& diagnostic) {
  lockstep::DecodeResult r = lockstep::decode_frame(request, kPlayerMaxFrameBytes);
  if (!r) {
    if (r.error().code == lockstep::ErrorCode::kVersion) {
      if (const std::optional<uint32_t> v = lockstep::wire_version(request)) {
        return version_refusal(*v);
      }
    }
    return r.error();
  }
  return answer_player_frame(player, r.frame(), diagnostic);
}

}  // namespace fieldproof::engine
