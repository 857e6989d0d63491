// The run record: what one run writes to run.json, as a type (docs/runs.md, "run.json").
//
//   RunRecord r;
//   r.run_id = "depot-1";
//   r.status = RunStatus::kPassed;                    // verdict and exit code follow from it
//   Status s = write_run_record(dir, r);               // run.json, atomically (tmp, fsync, rename)
//   Result<RunRecord> back = read_run_record(text);    // every field the reports need, or why not
//
// The status is the one place a run's verdict and exit code come from: verdict_of() and
// exit_code_of() below, used by the engine, re-judging, the determinism check and the reports.
// The nested records that other parts own (the clock monitor's record, the timeline, the
// verdicts, the KPIs, the resources, the network) are kept as JSON here, each described by the
// schema run_record_schema() exports (`fieldproof schema --run`).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fieldproof/util/status.hpp"

namespace fieldproof::report {

// How a run ended. kInvalid: its input was refused and nothing started (a run directory may not
// exist); the others end a run that had one.
enum class RunStatus { kPassed, kFailed, kTimeout, kError, kInterrupted, kInvalid };

std::string_view to_string(RunStatus s);  // "passed", "failed", ...
std::optional<RunStatus> parse_run_status(std::string_view text);
std::string_view verdict_of(RunStatus s);  // "PASS", "FAIL", "TIMEOUT", "ERROR", ...
int exit_code_of(RunStatus s);             // 0; 1; 1; 1; 130; 2
// True for the statuses a finished judgement gives (passed, failed).
bool is_judged(RunStatus s);

struct RunRecord {
  std::string run_id;
  struct Scenario {
    std::string name;
    std::string file;
    std::string digest;                            // "sha256:<hex>", "" when unreadable
    std::map<std::string, std::string> overrides;  // `--set PATH=VALUE`
  } scenario;
  struct World {
    std::string file;
    std::string name;
    nlohmann::json obstacles = nlohmann::json::array();  // the static shapes, for the plot
  };
  std::optional<World> world;  // absent when the run ended before its world was planned
  std::string engine_version;
  RunStatus status = RunStatus::kError;
  std::string reason;
  std::optional<int64_t> seed;
  bool seed_given = false;
  nlohmann::json clock;                               // the clock monitor's record
  nlohmann::json timeline = nlohmann::json::array();  // one object per entry
  std::string started_utc;                            // "2026-12-01T00:05:24.123Z"
  std::string ended_utc;
  struct Durations {
    double wall_s = 0;
    double timeline_s = 0;
    double sim_s = 0;
  };
  std::optional<Durations> durations;
  struct Recording {
    std::string path;  // relative to the run directory
    uint64_t messages = 0;
    std::vector<std::string> topics;
  };
  std::optional<Recording> recording;
  struct Artefact {
    std::string path;
    std::string kind;  // "" or "mcap"
  };
  std::vector<Artefact> artefacts;
  nlohmann::json assertions = nlohmann::json::array();  // AssertionResult::to_json() each
  nlohmann::json kpis = nlohmann::json::object();       // the flat KPI map
  nlohmann::json kpi_collectors = nlohmann::json::array();
  nlohmann::json resources;  // the resource monitor's summary
  nlohmann::json network;    // null when the run had no links
  struct Vehicle {
    std::string name;
    std::string spawn;
    std::string stack;
  };
  std::vector<Vehicle> vehicles;

  std::string_view verdict() const { return verdict_of(status); }
  int exit_code() const { return exit_code_of(status); }
};

// run.json's object; absent optionals and empty digests are left out.
nlohmann::json to_json(const RunRecord& r);

// A run record from run.json's object. Fails (kCorrupt) naming every field that is missing or of
// the wrong type among those a finished run always writes; a record cut short by a crash fails
// too, so the reports' tolerant reading stays separate (report.hpp).
Result<RunRecord> run_record_from_json(const nlohmann::json& j);
Result<RunRecord> read_run_record(std::string_view run_json_text);

// Writes dir/run.json: to a temporary file beside it, flushed to disk, then renamed over the old
// one, so a reader (or a crash) sees the old record or the new one, never half of one.
Status write_run_record(const std::filesystem::path& dir, const RunRecord& r);
// The same for any text (run.json of a crashed run, a record another tool amends).
Status write_file_atomically(const std::filesystem::path& file, std::string_view text);

// The JSON Schema (draft 2020-12) of run.json as to_json writes it.
std::string run_record_schema();

}  // namespace fieldproof::report
