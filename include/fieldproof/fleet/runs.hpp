// `fieldproof runs show|diff`: finding a run and comparing two (docs/runs.md).
//
//   Result<std::filesystem::path> a = resolve_run("runs", "ugv_nav_to_goal-3");  // a run dir
//   if (!a.ok()) fputs(a.status().message().c_str(), stderr);
//   json d = diff_runs(*read_run(*a), *read_run(*b));
//   fputs(render_diff(d, /*color=*/false).c_str(), stdout);        // d["verdict_changed"]
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "fieldproof/util/status.hpp"

namespace fieldproof::fleet {

// RUN as a user writes it: a run directory (a path holding run.json), else an id or run id in
// <runs_dir>/index.sqlite, else <runs_dir>/RUN. kNotFound when none is a run, kInvalidArgument
// when RUN is a run id several indexed runs share.
Result<std::filesystem::path> resolve_run(const std::filesystem::path& runs_dir,
                                          const std::string& run);
// The run record in `run_dir`: kIoError when run.json cannot be read, kCorrupt when it is not a
// JSON object.
Result<nlohmann::json> read_run(const std::filesystem::path& run_dir);

// Verdicts, reasons, each assertion's status and each KPI of two run.json side by side; every
// entry has "changed". {"a": {...}, "b": {...}, "verdict_changed", "assertions": [...],
// "kpis": [{"name", "a", "b", "delta", "changed"}], "changed": n}.
nlohmann::json diff_runs(const nlohmann::json& run_a, const nlohmann::json& run_b);
// A text table, changed rows marked '*' (and in bold yellow with `color`).
std::string render_diff(const nlohmann::json& diff, bool color);

// --since: an ISO 8601 date or date-time ("2026-12-01", "2026-12-01T10:00:00Z"), or an age
// ("30m", "2h", "7d") before `now_utc_ns`. The UTC text started_utc is compared with;
// kInvalidArgument for anything else.
Result<std::string> parse_since(const std::string& text, int64_t now_utc_ns);

}  // namespace fieldproof::fleet
