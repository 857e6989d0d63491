// The run index: <runs>/index.sqlite, one row per finished run directory (docs/runs.md).
//
//   Result<std::unique_ptr<RunIndex>> opened = RunIndex::open("runs/index.sqlite");
//   if (!opened.ok()) return opened.status();                 // its message says why
//   std::unique_ptr<RunIndex> idx = std::move(opened).value();
//   Status s = idx->add_run("runs/ugv_nav_to_goal-3");         // from its run.json
//   for (const RunRow& r : idx->list({.status = "failed"}).value()) ...
//
// Tables (schema version kIndexSchemaVersion in PRAGMA user_version): runs, assertions, kpis,
// sweeps. A run's id is its directory relative to the index's folder ("ugv-3", "sw1/s4").
// Writes are single transactions (BEGIN IMMEDIATE); the database is in WAL mode with a busy
// timeout, so several runs finishing at once each get their row. open() refuses a file that is
// not an index or is damaged (StatusCode::kCorrupt: `fieldproof runs reindex` rebuilds it) and an
// index written by a newer fieldproof (StatusCode::kUnsupported); a file that cannot be opened or
// written is kIoError. Errors are values (util/status.hpp); a Status's message() is the text the
// CLI prints. Not thread-safe: one RunIndex per thread.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fieldproof/util/status.hpp"

struct sqlite3;

namespace fieldproof::fleet {

inline constexpr int kIndexSchemaVersion = 1;
// A sweep's plan, in <runs>/<sweep id>/ (fleet/sweep.hpp): its points and their parameters.
inline constexpr const char* kSweepPlanFile = "sweep_plan.json";

struct RunRow {
  std::string id;      // the run directory relative to the index's folder
  std::string run_id;  // the directory's own name
  std::string scenario;
  std::string scenario_file;
  std::string scenario_digest;
  std::string status;
  std::string verdict;
  std::string reason;
  int exit_code = 0;
  int64_t seed = 0;
  std::string started_utc;
  std::string ended_utc;
  double wall_s = 0;
  double sim_s = 0;
  std::string engine_version;
  std::string sweep_id;  // empty when not a sweep's point
  std::string point_id;
  nlohmann::json overrides = nlohmann::json::object();  // --set PATH -> VALUE
  nlohmann::json to_json() const;
};

struct RunFilter {
  std::string scenario;
  std::string status;
  std::string sweep_id;
  std::string since_utc;  // started_utc >= this (ISO 8601 text compares in time order)
  size_t limit = 0;       // 0: all
};

struct SweepRow {
  std::string id;
  std::string scenario;
  std::string scenario_file;
  std::string created_utc;
  int64_t points = 0;
  nlohmann::json plan;  // sweep_plan.json
};

class RunIndex {
 public:
  // Opens (creating when absent) the index at `file`; on failure the Status's code says why:
  // kCorrupt (damaged, or not an index), kUnsupported (a newer schema), kIoError.
  static Result<std::unique_ptr<RunIndex>> open(const std::filesystem::path& file);
  ~RunIndex();
  RunIndex(const RunIndex&) = delete;
  RunIndex& operator=(const RunIndex&) = delete;

  const std::filesystem::path& file() const { return file_; }
  // Adds or replaces the run in `run_dir` (its run.json). A run directory inside a sweep's folder
  // (beside kSweepPlanFile, which lists it as a point) is that sweep's point. An error when
  // run.json is missing or unreadable (kIoError, kCorrupt), or the write failed.
  Status add_run(const std::filesystem::path& run_dir);
  // Groups writes into one transaction (reindex); add_run then joins it.
  Status begin();
  Status commit();
  Status add_sweep(const SweepRow& sweep);
  // When this connection closes, leave its writes in the write-ahead log (index.sqlite-wal, read
  // by every connection like the main file) instead of checkpointing them into index.sqlite then
  // and there, which syncs the file to disk: the next connection that closes last does it, or
  // SQLite once the log holds 1000 pages. The hook of a finished run uses it, so that a sweep's
  // points, each a connection of its own, do not each wait for that sync. Copy or move an index
  // with its -wal file, or after any `fieldproof runs list` (which checkpoints on close).
  void leave_checkpoint_to_next_connection();
  // Runs by started_utc, newest last.
  Result<std::vector<RunRow>> list(const RunFilter& filter) const;
  // The same rows, one query, handed to `fn` one at a time and not kept (`runs list` over many
  // runs): the row is reused between calls. With overrides false, RunRow::overrides is left
  // empty rather than parsed. An error when the query failed.
  Status scan(const RunFilter& filter, bool overrides,
              const std::function<void(const RunRow&)>& fn) const;
  // By id, else by run id. kNotFound when no run has it; kInvalidArgument when a run id names
  // several runs (the message lists them: give the id).
  Result<RunRow> find(const std::string& id_or_run_id) const;
  std::optional<SweepRow> sweep(const std::string& id) const;
  // The run directory of an indexed run.
  std::filesystem::path run_dir(const RunRow& r) const { return file_.parent_path() / r.id; }

 private:
  RunIndex() = default;
  // Creates the tables in a new file; refuses a newer schema or a database that is not an index.
  Status open_schema();
  Status exec(const char* sql) const;
  sqlite3* db_ = nullptr;
  std::filesystem::path file_;
};

// The JSON object in `file` (run.json, sweep_plan.json); kIoError when it cannot be read,
// kCorrupt when it is not a JSON object.
Result<nlohmann::json> read_json_object(const std::filesystem::path& file);

// The hook at the end of `fieldproof run`: adds `run_dir` to the index `index_file` (creating
// it). An error says what went wrong (the run stays a run; `runs reindex` picks it up).
Status index_finished_run(const std::filesystem::path& index_file,
                          const std::filesystem::path& run_dir);

// What a reindex wrote.
struct ReindexSummary {
  size_t runs = 0;
  size_t sweeps = 0;
  std::vector<std::string> skipped;  // run directories whose run.json does not read, and why
};

// Called with each skipped run directory (and why) as the reindex meets it, so that a reindex
// that fails later still says what it skipped before.
using OnSkipped = std::function<void(const std::string&)>;

// Rebuilds <runs_dir>/index.sqlite from the run directories (runs_dir/<id>/run.json and sweeps'
// runs_dir/<sweep>/<point>/run.json beside sweep_plan.json): written to a new file, then renamed
// over the old one, so a corrupt or newer index is replaced whole. Not ok when runs_dir is not a
// directory or the new index cannot be written or put in place.
Result<ReindexSummary> reindex(const std::filesystem::path& runs_dir,
                               const OnSkipped& on_skipped = {});

}  // namespace fieldproof::fleet
