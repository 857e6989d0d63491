// `fieldproof clock RUN status|pause|resume|step [--steps N | --seconds S]`: time control of a
// live run through its control endpoint (engine/clock_control.hpp). Exit 0 done, 2 invalid input,
// a run that is not live, or a refusal (a lockstep run), 1 another failure.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "cli/commands.hpp"
#include "fieldproof/engine/clock_control.hpp"

namespace fieldproof::cli {
namespace {

struct ClockArgs {
  std::string run;
  std::string action;
  std::optional<int64_t> steps;
  std::optional<std::string> seconds;
};

int clock(const ClockArgs& a) {
  engine::ClockRequest r;
  r.run_dir = a.run;
  if (a.action == "status") {
    r.action = engine::ClockAction::kStatus;
  } else if (a.action == "pause") {
    r.action = engine::ClockAction::kPause;
  } else if (a.action == "resume") {
    r.action = engine::ClockAction::kResume;
  } else if (a.action == "step") {
    r.action = engine::ClockAction::kStep;
  } else {
    std::fprintf(stderr, "fieldproof clock: unknown action '%s' (status, pause, resume, step)\n",
                 a.action.c_str());
    return kExitInvalid;
  }
  if (r.action != engine::ClockAction::kStep && (a.steps || a.seconds)) {
    std::fprintf(stderr, "fieldproof clock: --steps and --seconds go with step only\n");
    return kExitInvalid;
  }
  r.steps = a.steps;
  r.seconds = a.seconds;
  const engine::ClockOutcome o = engine::clock_command(r);
  if (o.exit_code == 0) {
    std::fputs(o.text.c_str(), stdout);
  } else {
    std::fprintf(stderr, "fieldproof clock: %s", o.text.c_str());
  }
  return o.exit_code;
}

}  // namespace

void add_clock_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ClockArgs>();
  CLI::App* cmd = app.add_subcommand(
      "clock", "Time control of a live run: status, pause, resume, step (not in lockstep)");
  cmd->add_option("run", args->run, "the run directory (runs/<run_id>)")->required();
  cmd->add_option("action", args->action, "status | pause | resume | step")->required();
  cmd->add_option("--steps", args->steps, "step: physics steps");
  cmd->add_option("--seconds", args->seconds, "step: simulated seconds (\"0.5\", \"250ms\")");
  cmd->callback([args, exit_code] { *exit_code = clock(*args); });
}

}  // namespace fieldproof::cli
