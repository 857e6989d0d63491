// `fieldproof clock EP ACTION`: a coordinator or a player at an endpoint, told apart by a
// PlayerControl (engine/clock_control.hpp, docs/protocol.md 8.1).
#include <cmath>
#include <cstdio>
#include <optional>
#include <sstream>
#include <string>
#include <variant>

#include "fieldproof/engine/clock_control.hpp"
#include "fieldproof/lockstep/coordinator.hpp"
#include "fieldproof/lockstep/zmq_server.hpp"

namespace fieldproof::engine {
namespace {

using lockstep::PlayerOp;

ClockOutcome invalid(std::string text) { return {2, std::move(text) + "\n"}; }

std::string number(double v, const char* format) {
  char buf[40];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string coordinator_text(const lockstep::CoordinatorStatus& s, const std::string& done) {
  std::ostringstream out;
  out << "state: " << (s.paused ? "paused" : "running") << "\n";
  out << "sim_time_s: " << format_seconds(s.time) << "\n";
  out << "grants: " << s.grants << "\n";
  out << "rtf: " << (std::isfinite(s.measured_rtf) ? number(s.measured_rtf, "%.3f") : "inf")
      << "\n";
  out << "max_rtf: " << (s.max_rtf > 0 ? number(s.max_rtf, "%g") : "unlimited") << "\n";
  out << "hold_s: " << (s.hold.is_infinite() ? "none" : format_seconds(s.hold)) << "\n";
  std::string parts;
  for (const lockstep::ParticipantStatus& p : s.participants) {
    parts += (parts.empty() ? "" : ", ") + p.participant + "/" + p.thread + " (" +
             (p.role == lockstep::Role::kFollowing ? "following" : "regulating") + ", safe " +
             (p.safe_time.is_infinite() ? "inf" : format_seconds(p.safe_time)) + ")";
  }
  out << "participants: " << parts << "\n";
  if (!done.empty()) out << "done: " << done << "\n";
  return out.str();
}

std::string player_text(const lockstep::PlayerReply& r, EndpointAction action) {
  std::ostringstream out;
  out << "state: " << (r.paused ? "paused" : "playing") << "\n";
  out << "rate: " << number(r.rate, "%g") << "\n";
  out << "now: " << r.now.ns() << "\n";
  out << "offset_s: " << format_seconds(r.offset) << "\n";
  out << "played: " << r.played << "\n";
  out << "position: " << r.position << "/" << r.total << "\n";
  out << "loops: " << r.loops << "\n";
  if (action == EndpointAction::kSeek) {
    out << "to: " << r.to.ns() << "\n";
    out << "clamped: " << (r.clamped ? "true" : "false") << "\n";
    if (r.clamped) out << "message: " << r.message << "\n";
  }
  if (action == EndpointAction::kBurst) out << "burst_played: " << r.burst_played << "\n";
  if (action != EndpointAction::kStatus) out << "done: " << endpoint_action_name(action) << "\n";
  return out.str();
}

// The PlayerControl that asks the action of a player (Status for the coordinator's own: step).
lockstep::PlayerControl player_request(const EndpointClockRequest& req) {
  lockstep::PlayerControl c;
  switch (req.action) {
    case EndpointAction::kPause:
      c.op = PlayerOp::kPause;
      break;
    case EndpointAction::kResume:
      c.op = PlayerOp::kResume;
      break;
    case EndpointAction::kToggle:
      c.op = PlayerOp::kToggle;
      break;
    case EndpointAction::kRate:
      c.op = PlayerOp::kSetRate;
      c.rate = req.rate;
      break;
    case EndpointAction::kSeek:
      c.op = PlayerOp::kSeek;
      c.offset = req.seek;
      break;
    case EndpointAction::kPlayNext:
      c.op = PlayerOp::kPlayNext;
      break;
    case EndpointAction::kBurst:
      c.op = PlayerOp::kBurst;
      c.count = req.count;
      break;
    case EndpointAction::kStatus:
    case EndpointAction::kStep:
      c.op = PlayerOp::kStatus;
      break;
  }
  return c;
}

// The Control of a coordinator's action; nullopt for a player's own (toggle, seek, ...).
std::optional<lockstep::Control> coordinator_request(const EndpointClockRequest& req) {
  switch (req.action) {
    case EndpointAction::kStatus:
      return lockstep::status_request();
    case EndpointAction::kPause:
      return lockstep::pause_request();
    case EndpointAction::kResume:
      return lockstep::resume_request();
    case EndpointAction::kStep:
      return lockstep::step_request(req.step);
    case EndpointAction::kRate:
      return lockstep::set_max_rtf_request(req.rate);
    default:
      return std::nullopt;
  }
}

// A failed request: nothing there, a refused connection or a timeout is invalid input (2),
// anything else a failure (1).
ClockOutcome failed(const EndpointClockRequest& req, const std::string& error) {
  const bool absent = error.rfind("timeout", 0) == 0 ||
                      error.find("refused") != std::string::npos ||
                      error.find("no coordinator answered") != std::string::npos;
  return {absent ? 2 : 1, req.endpoint + ": " + error + "\n"};
}

ClockOutcome on_player(const EndpointClockRequest& req, const lockstep::PlayerReply& r) {
  if (req.action == EndpointAction::kStep) {
    return invalid(req.endpoint +
                   ": step goes with a coordinator; this is a player, which steps by messages "
                   "(play-next, burst N)");
  }
  if (!r.ok)
    return invalid(req.endpoint + ": " + endpoint_action_name(req.action) + ": " + r.error);
  return {0, player_text(r, req.action)};
}

ClockOutcome on_coordinator(const EndpointClockRequest& req, lockstep::ControlClient& client) {
  const std::optional<lockstep::Control> c = coordinator_request(req);
  if (!c) {
    return invalid(req.endpoint + ": " + endpoint_action_name(req.action) +
                   " goes with a player (fieldproof play --control EP); this is a coordinator");
  }
  const lockstep::ControlReply r = client.request(*c, req.timeout);
  if (!r.ok) return failed(req, r.error);
  return {0, coordinator_text(r.status, req.action == EndpointAction::kStatus
                                            ? ""
                                            : endpoint_action_name(req.action))};
}

}  // namespace

const char* endpoint_action_name(EndpointAction action) {
  switch (action) {
    case EndpointAction::kStatus:
      return "status";
    case EndpointAction::kPause:
      return "pause";
    case EndpointAction::kResume:
      return "resume";
    case EndpointAction::kStep:
      return "step";
    case EndpointAction::kRate:
      return "rate";
    case EndpointAction::kToggle:
      return "toggle";
    case EndpointAction::kSeek:
      return "seek";
    case EndpointAction::kPlayNext:
      return "play-next";
    case EndpointAction::kBurst:
      return "burst";
  }
  return "status";
}

ClockOutcome clock_endpoint(const EndpointClockRequest& req) {
  try {
    lockstep::ControlClient client(req.endpoint, req.connect);
    const std::optional<lockstep::Frame> answer =
        client.exchange(lockstep::Frame{player_request(req)}, req.timeout);
    if (!answer) {
      return failed(req, "timeout: no reply within " + format_seconds(req.timeout) + " s");
    }
    if (const auto* p = std::get_if<lockstep::PlayerReply>(&*answer)) return on_player(req, *p);
    if (const auto* e = std::get_if<lockstep::Error>(&*answer)) {
      if (e->code == lockstep::ErrorCode::kUnknownKind) return on_coordinator(req, client);
      return failed(req, e->reason);
    }
    return failed(req, "answered a player-control frame with neither a PlayerReply nor an Error");
  } catch (const lockstep::TransportError& e) {
    return invalid(e.what());
  }
}

}  // namespace fieldproof::engine
