// Re-judging (issue 8, item 5): a scenario's assertions evaluated against a recorded run, without
// simulating anything. `fieldproof run SCENARIO --from-recording RUN_DIR_OR_MCAP`.
//
//   RejudgeOptions o;
//   o.scenario_file = "examples/scenarios/ugv_nav_to_goal.yaml";
//   o.recording = "runs/ugv_nav_to_goal-1";        // a run directory or an .mcap file
//   RejudgeOutcome r = rejudge(o);                  // r.assertions: the verdicts
//
// What is read from the recording, in its order (log time, then recorded order), and fed to the
// same Evaluator the live run uses, with the same times (seconds of simulated time):
//   * /world/<world>/pose/info (Pose_V): a kPose sample per planned vehicle in it;
//   * /model/<vehicle>/contacts (Contacts): a kContact sample;
//   * /fieldproof/metrics (the live run's once-a-second clock record): a kClock sample;
//   * /fieldproof/events: action.start / action.end become the timeline's action events;
//     timeline.complete ends the run (Evaluator::finish at its time); without it the recorded run
//     ended early and the pending assertions are skipped, as the live run did.
//   * ticks on the live run's grid (100 ms; min(step, 100 ms) in lockstep) before every message
//     stamped past them, so deadlines resolve at the same simulated times as live.
// The scenario is planned as for a live run (its world is loaded for frames), so a new assertion
// can be judged on an old run; an assertion that needs what the recording lacks stays pending and
// is skipped with a reason naming the missing topic.
// Output: a run directory (run.json with "mode": "rejudge", assertions.jsonl, scenario.yaml), or
// nothing on disk with write_run_dir = false (the CLI's --json prints RejudgeOutcome::to_json()).
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fieldproof/engine/evaluator.hpp"

namespace fieldproof::engine {

struct RejudgeOptions {
  std::filesystem::path scenario_file;
  // A run directory (its recording/recording.mcap is read) or an MCAP file.
  std::filesystem::path recording;
  std::optional<int64_t> seed;  // overrides the scenario's (planning only)
  std::string ugv_nav_exe;      // for planning command stacks that name it
  bool write_run_dir = true;
  std::string run_id;  // empty: <scenario name>-rejudge-<n>, the first n not taken
  std::filesystem::path runs_dir = "runs";
};

struct RejudgeOutcome {
  int exit_code = 0;    // 0 every assertion passed, 1 one failed, 2 invalid input
  std::string status;   // passed, failed, invalid
  std::string verdict;  // PASS, FAIL, INVALID
  std::string reason;
  std::vector<std::string> errors;          // invalid input (exit 2), one per line
  std::vector<std::string> notes;           // what the recording lacked, a damaged file
  std::filesystem::path recording;          // the MCAP file read
  std::filesystem::path run_dir;            // empty when none was written
  std::vector<AssertionResult> assertions;  // in the plan's order
  nlohmann::json to_json() const;
};

RejudgeOutcome rejudge(const RejudgeOptions& options);

}  // namespace fieldproof::engine
