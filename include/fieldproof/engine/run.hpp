// `fieldproof run`: a RunPlan executed in a run directory (DESIGN.md "The run directory").
//
//   RunOptions o;
//   o.scenario_file = "examples/scenarios/ugv_nav_to_goal.yaml";
//   o.runs_dir = "build/runs";
//   RunOutcome r = run_scenario(o);      // r.exit_code: 0 pass, 1 failed/timeout/error,
//                                        // 2 invalid input (nothing started), 130 interrupted
//
// The run directory runs/<run_id>/ (ids with '/', '\\' or ".." are refused, an existing
// directory is never overwritten) holds scenario.yaml (as given), engine.log (JSON lines: phases,
// action.start / action.end, assertion.<status>, run.end), samples.jsonl (ground-truth poses at
// 10 Hz, contacts, the clock once a second), assertions.jsonl (the verdicts in the order they
// resolved), clock.jsonl (one line per one-second metrics window: sim, wall, rtf, drift_s) and
// run.json (a report::RunRecord, written atomically: status, verdict, reason, seed and whether it was given, the clock's basics, the
// timeline with each goal, the assertions with their evidence excerpts, durations {wall_s,
// timeline_s, sim_s}, engine_version, scenario.digest "sha256:...", world.obstacles, recording
// and artefacts, started_utc / ended_utc "2026-12-01T00:05:24.123Z").
//
// Recording (outputs.record, true unless the scenario says false; outputs.topics the allow-list):
// recording/<file> (default recording.mcap) through record::Recorder tapping the coordinator's
// ordered stream, plus the engine's events on /fieldproof/events (every engine.log line), each
// verdict on /fieldproof/assertions as it resolves and the metrics window on /fieldproof/metrics;
// poll()ed about once a wall second and closed with the run's status on every ending (passed,
// failed, timeout, error, interrupted), so the file always has its summary and footer.
// Reports: report.json, report.md, junit.xml and report.html (fieldproof::report) are written
// at the end of every run that got a run directory, whatever its status.
//
// The timeline (timeline.hpp) is the engine's participant: an entry starts at its exact due
// simulated time (the engine holds the clock there while it acts; sim.pause / sim.step hold the
// world by not announcing past now()). t in verdicts is simulated seconds since the timeline
// started (sim 0). time.timeout_s is wall time once every vehicle is ready. An assertion with
// on_fail: abort that fails cancels the timeline (status failed, reason "assertion X failed: ...
// (on_fail: abort, the timeline was cancelled)"). run.json's clock is the clock monitor's record
// (clock_monitor.hpp: every field docs/scenarios.md lists for the time modes); clock.jsonl has one
// line per metrics window (sim, wall, rtf, drift_s, paused, violation).
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fieldproof/engine/evaluator.hpp"
#include "fieldproof/engine/plan.hpp"
#include "fieldproof/report/run_record.hpp"
#include "fieldproof/time/system_clock.hpp"
#include "fieldproof/util/status.hpp"

namespace fieldproof::engine {

struct RunOptions {
  std::filesystem::path scenario_file;
  std::optional<int64_t> seed;  // overrides the scenario's
  // Scenario values replaced by path (`--set`; run.json scenario.overrides lists them).
  std::vector<scenario::Override> overrides;
  // The run index the finished run is added to (fleet/run_index.hpp); empty: runs_dir/index.sqlite.
  std::filesystem::path index_file;
  std::string run_id;           // empty: <scenario name>-<n>, the first n not taken
  std::filesystem::path runs_dir = "runs";
  bool keep = false;  // keep process stacks' logs even when the run passes
  // The engine's relay of link telemetry with the links' lookahead (docs/lockstep.md,
  // Lookahead); false holds the clock at every delivery to it, as before. The record is the same
  // either way: test-only (`--no-relay-lookahead`, hidden) to prove it.
  bool relay_lookahead = true;
  // Pace cap override (simulated / wall); nullopt: the scenario's target (time.rtf or the
  // world's), 0: unpaced.
  std::optional<double> max_rtf;
  // The folder of fieldproof's own programs (PlanOptions::tool_dir); empty: this executable's.
  std::filesystem::path tool_dir;
  // Progress lines (verdicts, entries) and a status line once a second of simulated time.
  std::function<void(const std::string&)> on_event;
  std::function<void(const std::string&)> on_status;
  // Set (e.g. from a SIGINT handler) to end the run as interrupted.
  const std::atomic<bool>* interrupt = nullptr;
  // Called once run.json is written, before the reports and the index: the verdict is final
  // (a sweep's pool starts its next point then, while this one writes the rest).
  std::function<void()> on_recorded;
  std::function<SimTime()> wall_now;  // empty: SystemClock::wall_now()
  UtcNow utc_now;                      // empty: SystemClock::utc_now() (run.json's *_utc)
};

struct RunOutcome {
  // How the run ended; exit_code, status and verdict are report::exit_code_of, to_string and
  // verdict_of of it (report/run_record.hpp), kept as values for printing.
  report::RunStatus run_status = report::RunStatus::kPassed;
  int exit_code = 0;
  std::string status;   // passed, failed, timeout, error, interrupted, invalid
  std::string verdict;  // PASS, FAIL, TIMEOUT, ERROR, INTERRUPTED, INVALID
  std::string reason;
  std::vector<std::string> errors;  // invalid input, one per line (exit 2)
  std::filesystem::path run_dir;
  std::string run_id;
  std::vector<AssertionResult> assertions;
};

// Refuses ids that are empty, longer than 200 bytes, contain a path separator, a control
// character or "..", or start with '.' (kInvalidArgument saying which); OK if fine.
[[nodiscard]] Status check_run_id(const std::string& id);

RunOutcome run_scenario(const RunOptions& options);

}  // namespace fieldproof::engine
