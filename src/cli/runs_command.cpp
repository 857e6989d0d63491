// `fieldproof runs list|show|diff|reindex`: the run index <runs>/index.sqlite (fleet/run_index.hpp).
// Linked into both executables: the front `fieldproof` (front_main.cpp, which serves these
// commands without the engine's libraries) and `fieldproof-core`; it uses nothing of the engine.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "fieldproof/fleet/run_index.hpp"
#include "fieldproof/fleet/runs.hpp"
#include "fieldproof/time/system_clock.hpp"

namespace fieldproof::cli {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct RunsArgs {
  std::string runs_dir = "runs";
  std::string scenario, status, sweep, since;
  size_t limit = 0;
  bool json = false;
  std::string run, run_b;
};

// The index, opened; nullptr after saying why (exit 2: damaged, newer, unreadable).
std::unique_ptr<fleet::RunIndex> open_index(const RunsArgs& a) {
  const fs::path file = fs::path(a.runs_dir) / "index.sqlite";
  std::error_code ec;
  if (!fs::exists(file, ec)) {
    std::fprintf(stderr,
                 "%s: no run index (a `fieldproof run` with --runs-dir %s creates it; "
                 "`fieldproof runs reindex` builds it from existing run directories)\n",
                 file.string().c_str(), a.runs_dir.c_str());
    return nullptr;
  }
  Result<std::unique_ptr<fleet::RunIndex>> idx = fleet::RunIndex::open(file);
  if (!idx.ok()) {
    std::fprintf(stderr, "%s\n", idx.status().message().c_str());
    return nullptr;
  }
  return std::move(idx).value();
}

int list(const RunsArgs& a) {
  fleet::RunFilter f;
  f.scenario = a.scenario;
  f.status = a.status;
  f.sweep_id = a.sweep;
  f.limit = a.limit;
  if (!a.since.empty()) {
    const Result<std::string> s = fleet::parse_since(a.since, SystemClock::utc_now()());
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.status().message().c_str());
      return kExitInvalid;
    }
    f.since_utc = *s;
  }
  auto idx = open_index(a);
  if (!idx) return kExitInvalid;
  // One query, each row printed as it comes (nothing kept, overrides parsed only for --json),
  // written out in large blocks.
  std::string text;
  size_t n = 0;
  const auto flush = [&text] {
    std::fwrite(text.data(), 1, text.size(), stdout);
    text.clear();
  };
  Status scanned;
  if (a.json) {
    text += "[";
    scanned = idx->scan(f, true, [&](const fleet::RunRow& r) {
      text += n++ ? ",\n" : "\n";
      text += r.to_json().dump(2);
      if (text.size() > (1 << 16)) flush();
    });
    text += n ? "\n]\n" : "]\n";
  } else {
    char line[512];
    std::snprintf(line, sizeof line, "%-34s %-12s %-9s %10s %8s  %-24s %s\n", "RUN", "STATUS",
                  "VERDICT", "SEED", "WALL_S", "STARTED", "SCENARIO");
    text += line;
    scanned = idx->scan(f, false, [&](const fleet::RunRow& r) {
      std::snprintf(line, sizeof line, "%-34s %-12s %-9s %10lld %8.2f  %-24s %s\n", r.id.c_str(),
                    r.status.c_str(), r.verdict.c_str(), static_cast<long long>(r.seed), r.wall_s,
                    r.started_utc.c_str(), r.scenario.c_str());
      text += line;
      ++n;
      if (text.size() > (1 << 16)) flush();
    });
    std::snprintf(line, sizeof line, "%zu run(s)\n", n);
    text += line;
  }
  if (!scanned.ok()) {
    std::fprintf(stderr, "%s\n", scanned.message().c_str());
    return kExitInvalid;
  }
  flush();
  return kExitOk;
}

// Prints why `r` holds nothing; true when it does.
template <typename T>
bool check(const Result<T>& r) {
  if (!r.ok()) std::fprintf(stderr, "%s\n", r.status().message().c_str());
  return r.ok();
}

int show(const RunsArgs& a) {
  const Result<fs::path> dir = fleet::resolve_run(a.runs_dir, a.run);
  if (!check(dir)) return kExitInvalid;
  const Result<json> run = fleet::read_run(*dir);
  if (!check(run)) return kExitInvalid;
  if (a.json) {
    std::printf("%s\n", run->dump(2).c_str());
    return kExitOk;
  }
  const json sc = run->value("scenario", json::object());
  std::printf("run %s  (%s)\n", run->value("run_id", "").c_str(), dir->string().c_str());
  std::printf("  scenario  %s (%s)\n", sc.value("name", "").c_str(), sc.value("file", "").c_str());
  const json overrides = sc.value("overrides", json::object());
  for (const auto& [k, v] : overrides.items()) {
    std::printf("  --set     %s=%s\n", k.c_str(), v.is_string() ? v.get<std::string>().c_str() : v.dump().c_str());
  }
  std::printf("  verdict   %s (%s): %s\n", run->value("verdict", "").c_str(),
              run->value("status", "").c_str(), run->value("reason", "").c_str());
  std::printf("  seed      %s\n", run->value("seed", json()).dump().c_str());
  std::printf("  started   %s   wall %.3f s   sim %.3f s\n", run->value("started_utc", "").c_str(),
              run->value("durations", json::object()).value("wall_s", 0.0),
              run->value("durations", json::object()).value("sim_s", 0.0));
  std::printf("assertions\n");
  for (const json& as : run->value("assertions", json::array())) {
    std::printf("  %-8s %s (%s): %s\n", as.value("status", "").c_str(), as.value("name", "").c_str(),
                as.value("type", "").c_str(), as.value("reason", "").c_str());
  }
  std::printf("kpis\n");
  const json kpis = run->value("kpis", json::object());
  for (const auto& [k, v] : kpis.items()) {
    const json val = v.is_object() ? v.value("value", json()) : v;
    std::printf("  %-32s %s %s\n", k.c_str(), val.dump().c_str(),
                v.is_object() ? v.value("unit", "").c_str() : "");
  }
  return kExitOk;
}

int diff(const RunsArgs& a) {
  const Result<fs::path> da = fleet::resolve_run(a.runs_dir, a.run);
  if (!check(da)) return kExitInvalid;
  const Result<fs::path> db = fleet::resolve_run(a.runs_dir, a.run_b);
  if (!check(db)) return kExitInvalid;
  const Result<json> ra = fleet::read_run(*da);
  if (!check(ra)) return kExitInvalid;
  const Result<json> rb = fleet::read_run(*db);
  if (!check(rb)) return kExitInvalid;
  const json d = fleet::diff_runs(*ra, *rb);
  if (a.json) {
    std::printf("%s\n", d.dump(2).c_str());
  } else {
    std::fputs(fleet::render_diff(d, isatty(STDOUT_FILENO) == 1).c_str(), stdout);
  }
  return d["verdict_changed"].get<bool>() ? kExitFailed : kExitOk;
}

int reindex(const RunsArgs& a) {
  const Result<fleet::ReindexSummary> r = fleet::reindex(
      a.runs_dir, [](const std::string& s) { std::fprintf(stderr, "skipped: %s\n", s.c_str()); });
  if (!r.ok()) {
    std::fprintf(stderr, "%s\n", r.status().message().c_str());
    return kExitInvalid;
  }
  std::printf("%s/index.sqlite: %zu run(s), %zu sweep(s)\n", a.runs_dir.c_str(), r->runs,
              r->sweeps);
  return kExitOk;
}

}  // namespace

void add_runs_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<RunsArgs>();
  CLI::App* cmd = app.add_subcommand(
      "runs", "The run index <runs-dir>/index.sqlite: list, show, diff, reindex");
  cmd->require_subcommand(1);
  cmd->add_option("--runs-dir", args->runs_dir, "the runs directory (default runs)");

  CLI::App* l = cmd->add_subcommand("list", "Indexed runs, oldest first (filters combine)");
  l->add_option("--scenario", args->scenario, "only this scenario (by name)");
  l->add_option("--status", args->status, "only this status (passed, failed, timeout, error, ...)");
  l->add_option("--sweep", args->sweep, "only the points of this sweep");
  l->add_option("--since", args->since,
                "started at or after: 2026-12-01, 2026-12-01T10:00:00Z, or an age (30m, 2h, 7d)");
  l->add_option("--limit", args->limit, "at most this many runs");
  l->add_flag("--json", args->json, "a JSON array");
  l->add_option("--runs-dir", args->runs_dir, "the runs directory (default runs)");
  l->callback([args, exit_code] { *exit_code = list(*args); });

  CLI::App* s = cmd->add_subcommand("show", "One run's verdict, assertions and KPIs");
  s->add_option("run", args->run, "a run id, its index id (sweep/point) or a run directory")
      ->required();
  s->add_flag("--json", args->json, "the run's run.json");
  s->add_option("--runs-dir", args->runs_dir, "the runs directory (default runs)");
  s->callback([args, exit_code] { *exit_code = show(*args); });

  CLI::App* d = cmd->add_subcommand(
      "diff", "Two runs side by side: verdicts, reasons, assertions, KPIs; changes marked '*'; "
              "exit 1 when the verdicts differ");
  d->add_option("a", args->run, "run A (id or directory)")->required();
  d->add_option("b", args->run_b, "run B (id or directory)")->required();
  d->add_flag("--json", args->json, "the comparison as JSON");
  d->add_option("--runs-dir", args->runs_dir, "the runs directory (default runs)");
  d->callback([args, exit_code] { *exit_code = diff(*args); });

  CLI::App* r = cmd->add_subcommand(
      "reindex", "Rebuild index.sqlite from the run directories (replaces a damaged or newer one)");
  r->add_option("--runs-dir", args->runs_dir, "the runs directory (default runs)");
  r->callback([args, exit_code] { *exit_code = reindex(*args); });
}

}  // namespace fieldproof::cli
