// `fieldproof run SCENARIO`: plan (and with --dry-run only print the plan), then run it in a run
// directory; the verdict and the exit code CI uses (0 pass, 1 failed/timeout/error, 2 invalid
// input, 130 interrupted).
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "cli/cli_util.hpp"
#include "cli/commands.hpp"
#include "fieldproof/engine/determinism.hpp"
#include "fieldproof/engine/plan.hpp"
#include "fieldproof/engine/rejudge.hpp"
#include "fieldproof/engine/run.hpp"

namespace fieldproof::cli {
namespace {

std::atomic<bool> g_interrupted{false};
extern "C" void on_sigint(int) { g_interrupted.store(true); }

struct RunArgs {
  std::string scenario;
  std::optional<int64_t> seed;
  std::string run_id;
  std::string runs_dir = "runs";
  bool dry_run = false;
  bool keep = false;
  std::optional<double> max_rtf;
  std::string from_recording;  // re-judge this recorded run (engine/rejudge.hpp)
  bool json = false;           // with from_recording: print the result, write no run directory
  bool check_determinism = false;
  std::optional<int64_t> determinism_second_seed;  // test-only (hidden)
  bool no_relay_lookahead = false;                 // test-only (hidden)
  std::vector<std::string> sets;                    // --set PATH=VALUE
  std::string index_file;                           // --index (hidden; sweeps)
};

// --from-recording: the scenario's assertions judged against a recorded run, nothing simulated.
int rejudge(const RunArgs& a) {
  engine::RejudgeOptions o;
  o.scenario_file = a.scenario;
  o.recording = a.from_recording;
  o.seed = a.seed;
  o.tool_dir = engine::executable_dir();
  o.write_run_dir = !a.json;
  o.run_id = a.run_id;
  o.runs_dir = a.runs_dir;
  const engine::RejudgeOutcome r = engine::rejudge(o);
  for (const auto& n : r.notes) std::fprintf(stderr, "note: %s\n", n.c_str());
  if (a.json) {
    std::printf("%s\n", r.to_json().dump(2).c_str());
    return r.exit_code;
  }
  if (r.exit_code == kExitInvalid) {
    for (const auto& e : r.errors) std::fprintf(stderr, "%s\n", e.c_str());
    return kExitInvalid;
  }
  std::printf("%s: %s (re-judged from %s)\n", r.verdict.c_str(), r.reason.c_str(),
              r.recording.string().c_str());
  for (const auto& as : r.assertions) {
    std::printf("  %-8s %s (%s): %s\n", std::string(engine::to_string(as.status)).c_str(),
                as.name.c_str(), as.type.c_str(), as.reason.c_str());
  }
  std::printf("run directory: %s\n", r.run_dir.string().c_str());
  return r.exit_code;
}

// --set PATH=VALUE texts; false (after saying why) when one does not parse.
bool parse_sets(const RunArgs& a, std::vector<scenario::Override>* out) {
  for (const auto& text : a.sets) {
    const auto ov = scenario::parse_override(text);
    if (!ov.ok()) {
      std::fprintf(stderr, "--set %s\n", ov.status().message().c_str());
      return false;
    }
    out->push_back(*ov);
  }
  return true;
}

int dry_run(const RunArgs& a) {
  engine::PlanOptions po;
  po.seed = a.seed;
  if (!parse_sets(a, &po.overrides)) return kExitInvalid;
  po.tool_dir = engine::executable_dir();
  const engine::PlanResult r = engine::plan_run(a.scenario, po);
  for (const auto& w : r.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  if (!r.plan) {
    for (const auto& e : r.errors) std::fprintf(stderr, "%s\n", e.c_str());
    return kExitInvalid;
  }
  std::printf("%s\n", r.plan->to_json().dump(2).c_str());
  for (const auto& n : r.notes) std::fprintf(stderr, "note: %s\n", n.c_str());
  if (!r.plan->unsupported.empty()) {
    for (const auto& u : r.plan->unsupported) {
      std::fprintf(stderr, "%s: not supported yet: %s\n", a.scenario.c_str(), u.c_str());
    }
    return kExitInvalid;
  }
  return kExitOk;
}

int run(const RunArgs& a) {
  if (a.dry_run) return dry_run(a);
  if (!a.from_recording.empty()) return rejudge(a);
  engine::RunOptions o;
  o.scenario_file = a.scenario;
  o.seed = a.seed;
  if (!parse_sets(a, &o.overrides)) return kExitInvalid;
  o.index_file = a.index_file;
  o.run_id = a.run_id;
  o.runs_dir = a.runs_dir;
  o.keep = a.keep;
  o.relay_lookahead = !a.no_relay_lookahead;
  o.max_rtf = a.max_rtf;
  o.tool_dir = engine::executable_dir();
  const bool tty = stderr_is_terminal();
  if (tty) {
    o.on_event = [](const std::string& line) {
      std::fprintf(stderr, "\r\033[K%s\n", line.c_str());
    };
    o.on_status = [](const std::string& line) { std::fprintf(stderr, "\r\033[K%s", line.c_str()); };
  }
  g_interrupted.store(false);
  o.interrupt = &g_interrupted;
  struct sigaction sa {};
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  struct sigaction old_int {};
  struct sigaction old_term {};
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  if (a.check_determinism) {
    engine::DeterminismOptions d;
    d.run = o;
    d.second_seed = a.determinism_second_seed;
    const engine::DeterminismOutcome r = engine::check_determinism(d);
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGTERM, &old_term, nullptr);
    if (tty) std::fprintf(stderr, "\r\033[K");
    for (const auto& e : r.errors) std::fprintf(stderr, "%s\n", e.c_str());
    std::fputs(r.report.c_str(), stdout);
    return r.exit_code;
  }
  const engine::RunOutcome r = engine::run_scenario(o);
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  if (tty) std::fprintf(stderr, "\r\033[K");
  if (r.exit_code == kExitInvalid) {
    for (const auto& e : r.errors) std::fprintf(stderr, "%s\n", e.c_str());
    return kExitInvalid;
  }
  std::printf("%s: %s (%s)\n", r.verdict.c_str(), r.reason.c_str(), r.status.c_str());
  for (const auto& as : r.assertions) {
    std::printf("  %-8s %s (%s): %s\n", std::string(engine::to_string(as.status)).c_str(),
                as.name.c_str(), as.type.c_str(), as.reason.c_str());
  }
  std::printf("run directory: %s\n", r.run_dir.string().c_str());
  return r.exit_code;
}

}  // namespace

void add_run_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run",
                                     "Run a scenario: a verdict, a run directory, an exit "
                                     "code (0 pass, 1 fail, 2 invalid, 130 interrupted)");
  cmd->add_option("scenario", args->scenario, "the scenario YAML file")->required();
  cmd->add_option("--seed", args->seed, "overrides the scenario's seed (0 to 2^31-1)");
  cmd->add_option("--run-id", args->run_id, "the run directory's name (default <scenario>-<n>)");
  add_run_output_options(cmd, &args->runs_dir, &args->max_rtf);
  cmd->add_flag("--dry-run", args->dry_run, "print the resolved plan; start nothing");
  cmd->add_flag("--keep", args->keep, "keep the stack processes' logs of a passing run");
  cmd->add_option("--from-recording", args->from_recording,
                  "judge the scenario's assertions against this recorded run (a run directory "
                  "or an .mcap) instead of running it");
  cmd->add_flag("--json", args->json,
                "with --from-recording: print the verdicts as JSON, write no run directory");
  cmd->add_flag("--check-determinism", args->check_determinism,
                "run twice with the same seed (<id>-a, <id>-b) and report the first message where "
                "the ordered streams differ; exit 1 on a difference");
  cmd->add_option("--set", args->sets,
                  "replace a scenario value by its path before validation, e.g. --set "
                  "time.rtf=0 or --set vehicles[0].parameters.controller.max_linear=0.6 "
                  "(repeatable; run.json scenario.overrides lists them)")
      ->allow_extra_args(false);
  cmd->add_option("--index", args->index_file,
                  "the run index to add the run to (default <runs-dir>/index.sqlite)")
      ->group("");
  cmd->add_option("--determinism-second-seed", args->determinism_second_seed,
                  "test only: the second run's seed")
      ->group("");
  cmd->add_flag("--no-relay-lookahead", args->no_relay_lookahead,
                "test only: the engine holds the clock at every telemetry message it relays")
      ->group("");
  cmd->callback([args, exit_code] { *exit_code = run(*args); });
}

}  // namespace fieldproof::cli
