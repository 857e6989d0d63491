// Time control of a live run (`fieldproof clock RUN status|pause|resume|step`).
//
// A running `fieldproof run` serves control requests on ipc://<run dir>/control.sock (the lock-step
// wire format: a Control frame in, a ControlReply frame out) and describes the run beside it in
// <run dir>/control.json ({"endpoint", "mode", "physics_step_ns", "world", "pid"}); both are
// removed when the run ends. The engine applies the requests to its coordinator and logs them
// (engine.log clock.* events, run.json clock.commands).
//
//   ClockRequest r;
//   r.run_dir = "runs/ugv_nav_to_goal-1";
//   r.action = ClockAction::kStep;
//   r.steps = 100;                                       // or r.seconds = "0.5"
//   ClockOutcome o = clock_command(r);                   // o.exit_code: 0, 1, or 2
//   std::fputs(o.text.c_str(), o.exit_code ? stderr : stdout);
//
// Exit codes: 0 done (status printed); 2 invalid input or refused: a run that is not live (no
// endpoint, ended, not answering), a bad step count or duration, pause / resume / step on a
// lockstep run ("fieldproof clock leaves a lockstep run alone"); 1 another failure (the
// coordinator failed the run).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "fieldproof/lockstep/transport.hpp"
#include "fieldproof/time/duration.hpp"

namespace fieldproof::engine {

enum class ClockAction { kStatus, kPause, kResume, kStep };

// The files a live run keeps in its directory.
inline constexpr const char* kControlSocketFile = "control.sock";
inline constexpr const char* kControlInfoFile = "control.json";

// Why the engine refuses pause, resume and step in lockstep (the reply's error starts with it).
inline constexpr const char* kLockstepRefusal =
    "fieldproof clock leaves a lockstep run alone: its clock is stepped by the vehicles' "
    "acknowledgements";

struct ClockRequest {
  std::filesystem::path run_dir;
  ClockAction action = ClockAction::kStatus;
  std::optional<int64_t> steps;        // kStep: physics steps (> 0)
  std::optional<std::string> seconds;  // kStep: simulated seconds as decimal text ("0.5", "250ms")
  Duration timeout = fieldproof::seconds(5);  // how long to wait for the engine's reply (wall time)
};

struct ClockOutcome {
  int exit_code = 0;
  std::string text;  // the status (key: value lines) or the error, newline-terminated
};

ClockOutcome clock_command(const ClockRequest& request);

// ---- an endpoint: a coordinator or a player (`fieldproof clock EP ACTION`) ----------------------
//
// The endpoint is asked a PlayerControl first (docs/protocol.md 8.1): a player answers it with a
// PlayerReply, a coordinator with Error{kUnknownKind}, and then gets the Control frame of the
// action. Both print "key: value" lines:
//   a coordinator  state (paused|running), sim_time_s, grants, rtf, max_rtf, hold_s,
//                  participants, done (not for status)
//   a player       state (paused|playing), rate, now (ns, log time), offset_s, played,
//                  position (next/total), loops; seek: to (ns), clamped, message (when clamped);
//                  burst: burst_played; done (not for status)
// Exit codes: 0 done; 2 refused (ok = false: the error), an action the endpoint does not take
// (step on a player; toggle, seek, play-next, burst on a coordinator), nothing answering, a bad
// endpoint or key; 1 another failure of a coordinator (the run failed).

enum class EndpointAction {
  kStatus,
  kPause,
  kResume,
  kStep,
  kRate,
  kToggle,
  kSeek,
  kPlayNext,
  kBurst
};

struct EndpointClockRequest {
  std::string endpoint;  // ipc://PATH or tcp://HOST:PORT
  EndpointAction action = EndpointAction::kStatus;
  Duration step;       // kStep (a coordinator): > 0
  double rate = 0;     // kRate: a coordinator's max_rtf (0 = unlimited), a player's rate (> 0)
  Duration seek;       // kSeek (a player): from the start of the play range
  uint64_t count = 0;  // kBurst (a player): messages
  lockstep::ConnectOptions connect;           // CURVE keys; connect_timeout
  Duration timeout = fieldproof::seconds(5);  // how long to wait for each reply (wall time)
};

// The action's name as `fieldproof clock` spells it ("play-next").
const char* endpoint_action_name(EndpointAction action);

ClockOutcome clock_endpoint(const EndpointClockRequest& request);

}  // namespace fieldproof::engine
