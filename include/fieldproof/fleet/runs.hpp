// `fieldproof runs show|diff`: finding a run and comparing two (docs/runs.md).
//
//   std::string error;
//   auto a = resolve_run("runs", "ugv_nav_to_goal-3", &error);   // a run directory
//   json d = diff_runs(*read_run(*a, &error), *read_run(*b, &error));
//   fputs(render_diff(d, /*color=*/false).c_str(), stdout);        // d["verdict_changed"]
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace fieldproof::fleet {

// RUN as a user writes it: a run directory (a path holding run.json), else an id or run id in
// <runs_dir>/index.sqlite, else <runs_dir>/RUN. nullopt and *error when none is a run.
std::optional<std::filesystem::path> resolve_run(const std::filesystem::path& runs_dir,
                                                 const std::string& run, std::string* error);
std::optional<nlohmann::json> read_run(const std::filesystem::path& run_dir, std::string* error);

// Verdicts, reasons, each assertion's status and each KPI of two run.json side by side; every
// entry has "changed". {"a": {...}, "b": {...}, "verdict_changed", "assertions": [...],
// "kpis": [{"name", "a", "b", "delta", "changed"}], "changed": n}.
nlohmann::json diff_runs(const nlohmann::json& run_a, const nlohmann::json& run_b);
// A text table, changed rows marked '*' (and in bold yellow with `color`).
std::string render_diff(const nlohmann::json& diff, bool color);

// --since: an ISO 8601 date or date-time ("2026-12-01", "2026-12-01T10:00:00Z"), or an age
// ("30m", "2h", "7d") before `now_utc_ns`. The UTC text started_utc is compared with.
std::optional<std::string> parse_since(const std::string& text, int64_t now_utc_ns,
                                       std::string* error);

}  // namespace fieldproof::fleet
