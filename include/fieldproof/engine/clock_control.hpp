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

}  // namespace fieldproof::engine
