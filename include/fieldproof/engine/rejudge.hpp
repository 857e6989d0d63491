// Re-judging (docs/reports.md): a scenario's assertions evaluated against a recorded run, without
// simulating anything. `fieldproof run SCENARIO --from-recording RUN_DIR_OR_MCAP`.
//
//   RejudgeOptions o;
//   o.scenario_file = "examples/scenarios/ugv_nav_to_goal.yaml";
//   o.recording = "runs/ugv_nav_to_goal-1";        // a run directory or an .mcap file
//   RejudgeOutcome r = rejudge(o);                  // r.assertions: the verdicts
//
// What is read from the recording, in its order (log time, then recorded order), and fed to the
// same Observer and Evaluator the live run uses, with the same times (seconds of simulated time):
//   * the topics the plan watches (Observer::topics(): /world/<world>/pose/info, contacts,
//     watched values, rates, latencies, lifecycle), as Publish messages with their recorded type;
//   * /fieldproof/metrics (the live run's once-a-second clock record): a kClock sample;
//   * /fieldproof/resources: kResources samples (a past run's processes cannot be measured);
//   * /fieldproof/events: action.start / action.end become the timeline's action events;
//     timeline.complete ends the run (Evaluator::finish at its time); without it the recorded run
//     ended early and the pending assertions are skipped, as the live run did.
//   * ticks (Observer and Evaluator) on the live run's grid (100 ms; min(step, 100 ms) in
//     lockstep) and at each action start, after the messages stamped at or before them, so
//     deadlines resolve at the same simulated times as live.
// The scenario is planned as for a live run (its world is loaded for frames), so a new assertion
// can be judged on an old run; what the recording lacks is said in RejudgeOutcome::notes.
// The scenario's KPI collectors are fed the same stream (kpis, kpi_collectors in the output).
// Output: a run directory (run.json with "mode": "rejudge", assertions.jsonl, samples.jsonl,
// kpis.jsonl, scenario.yaml), or
// nothing on disk with write_run_dir = false (the CLI's --json prints RejudgeOutcome::to_json()).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fieldproof/assertions/kpis.hpp"
#include "fieldproof/engine/evaluator.hpp"

namespace fieldproof::engine {

struct RejudgeOptions {
  std::filesystem::path scenario_file;
  // A run directory (its recording/recording.mcap is read) or an MCAP file.
  std::filesystem::path recording;
  std::optional<int64_t> seed;  // overrides the scenario's (planning only)
  std::filesystem::path tool_dir;  // PlanOptions::tool_dir, for resolving the stacks
  bool write_run_dir = true;
  std::string run_id;  // empty: <scenario name>-rejudge-<n>, the first n not taken
  std::filesystem::path runs_dir = "runs";
};

struct RejudgeOutcome {
  int exit_code = 0;    // 0 every assertion passed, 1 one failed, 2 invalid input
  std::string status;   // passed, failed, invalid
  std::string verdict;  // PASS, FAIL, INVALID
  std::string reason;
  std::vector<std::string> errors;                    // invalid input (exit 2), one per line
  std::vector<std::string> notes;                     // what the recording lacked, a damaged file
  std::filesystem::path recording;                    // the MCAP file read
  std::filesystem::path run_dir;                      // empty when none was written
  std::vector<AssertionResult> assertions;            // in the plan's order
  std::vector<assertions::KpiResult> kpi_collectors;  // the scenario's kpis, in order
  nlohmann::json to_json() const;
};

RejudgeOutcome rejudge(const RejudgeOptions& options);

}  // namespace fieldproof::engine
