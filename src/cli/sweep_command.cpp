// `fieldproof sweep SCENARIO --seeds A..B [--param PATH=V1,V2]...`: the scenario over seeds x
// parameter values, each point a run directory (fleet/sweep.hpp); `fieldproof sweep report ID`.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "cli/cli_util.hpp"
#include "cli/commands.hpp"
#include "fieldproof/engine/run.hpp"
#include "fieldproof/engine/stack_host.hpp"
#include "fieldproof/fleet/slurm.hpp"
#include "fieldproof/fleet/sweep.hpp"
#include "fieldproof/fleet/sweep_report.hpp"

namespace fieldproof::cli {
namespace {

using json = nlohmann::json;

std::atomic<bool> g_interrupted{false};
extern "C" void on_sweep_signal(int) { g_interrupted.store(true); }

struct SweepArgs {
  std::string scenario;
  std::vector<std::string> seeds;
  std::string seeds_list;
  int repeat = 1;
  std::vector<std::string> params;
  int jobs = 0;
  std::string executor = "local";
  std::string points_by = "fork";
  std::string sweep_id;
  bool resume = false;
  std::string runs_dir = "runs";
  std::optional<double> max_rtf;
  std::string shard;
  bool no_report = false;
  std::string report_id;
  std::vector<std::string> slurm_opts;
  int shards = 0;
  double slurm_poll_s = 5;
};

std::string pct(double v) {
  char b[16];
  std::snprintf(b, sizeof b, "%.1f%%", v * 100);
  return b;
}

// A count on the command line (-j, --repeat, --shards): a whole number of at least 1. CLI11 checks
// it at parse time, so "-j 0", "-j -3", "-j two" and "-j 1.5" end with the message and exit 2
// before anything is planned.
CLI::Validator whole_count() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        long long v = 0;
        const char* b = text.c_str();
        const char* e = b + text.size();
        const auto [p, ec] = std::from_chars(b, e, v);
        if (text.empty() || ec != std::errc() || p != e || v < 1 || v > 1'000'000'000) {
          return "expected a whole number of at least 1, got '" + text + "'";
        }
        return "";
      },
      "COUNT>=1");
}

// Seconds above 0 (--slurm-poll): "0", "-1", "soon", "nan" and "inf" are refused at parse time.
CLI::Validator positive_seconds() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double v = 0;
        const char* b = text.c_str();
        const char* e = b + text.size();
        const auto [p, ec] = std::from_chars(b, e, v);
        if (text.empty() || ec != std::errc() || p != e || !std::isfinite(v) || v <= 0) {
          return "expected a number of seconds above 0, got '" + text + "'";
        }
        return "";
      },
      "SECONDS>0");
}

int report(const SweepArgs& a) {
  if (const Status e = engine::check_run_id(a.report_id); !e.ok()) {
    std::fprintf(stderr, "sweep report '%s': %s\n", a.report_id.c_str(), e.message().c_str());
    return kExitInvalid;
  }
  const std::filesystem::path dir = std::filesystem::path(a.runs_dir) / a.report_id;
  const Result<json> r = fleet::summarize_sweep(dir);
  if (!r.ok()) {
    std::fprintf(stderr, "%s\n", r.status().message().c_str());
    return kExitInvalid;
  }
  const json& data = *r;
  if (const Status s = fleet::write_sweep_report(data, dir); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return kExitFailed;
  }
  const auto& s = data["summary"];
  std::printf("sweep %s: %d of %d points passed (%s, 95%% interval %s to %s), %zu failing, "
              "%zu nondeterministic, %d not run\n",
              a.report_id.c_str(), s.value("passed", 0), s.value("finished", 0),
              pct(s.value("pass_rate", 0.0)).c_str(), pct(s["confidence"].value("low", 0.0)).c_str(),
              pct(s["confidence"].value("high", 0.0)).c_str(), data["failing"].size(),
              data["nondeterministic"].size(), s.value("not_run", 0));
  std::printf("wrote %s/{sweep.json,sweep.md,junit.xml,sweep.html}\n", dir.string().c_str());
  const bool all_passed = s.value("failed", 0) == 0 && s.value("not_run", 0) == 0 &&
                          data["nondeterministic"].empty();
  return all_passed ? kExitOk : kExitFailed;
}

int sweep(const SweepArgs& a) {
  if (a.scenario.empty()) {
    std::fprintf(stderr, "sweep: give a SCENARIO (or `sweep report ID`)\n");
    return kExitInvalid;
  }
  fleet::SweepOptions o;
  o.spec.scenario_file = a.scenario;
  o.spec.repeat = a.repeat;
  o.spec.max_rtf = a.max_rtf;
  const Result<std::vector<int64_t>> seeds = fleet::collect_seeds(a.seeds, a.seeds_list);
  if (!seeds.ok()) {
    std::fprintf(stderr, "%s\n", seeds.status().message().c_str());
    return kExitInvalid;
  }
  o.spec.seeds = *seeds;
  for (const auto& p : a.params) {
    const Result<fleet::SweepParam> param = fleet::parse_param(p);
    if (!param.ok()) {
      std::fprintf(stderr, "%s\n", param.status().message().c_str());
      return kExitInvalid;
    }
    o.spec.params.push_back(*param);
  }
  if (!a.shard.empty()) {
    const Result<fleet::Shard> shard = fleet::parse_shard(a.shard);
    if (!shard.ok()) {
      std::fprintf(stderr, "%s\n", shard.status().message().c_str());
      return kExitInvalid;
    }
    o.shard_index = shard->index;
    o.shard_count = shard->count;
  }
  o.runs_dir = a.runs_dir;
  o.sweep_id = a.sweep_id;
  o.resume = a.resume;
  o.jobs = a.jobs > 0 ? a.jobs
                      : static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  // The points run the full program directly (the front `fieldproof` would only exec it).
  o.fieldproof = engine::executable_dir() / "fieldproof-core";
  if (::access(o.fieldproof.c_str(), X_OK) != 0) o.fieldproof = engine::executable_dir() / "fieldproof";
  o.launch = a.points_by == "exec" ? fleet::SweepOptions::PointLaunch::kExec
                                    : fleet::SweepOptions::PointLaunch::kFork;
  const bool slurm = a.executor == "slurm";
  if (!slurm && (!a.slurm_opts.empty() || a.shards != 0)) {
    std::fprintf(stderr, "--slurm-opt and --shards are for --executor slurm\n");
    return kExitInvalid;
  }
  fleet::SlurmOptions so;
  so.sbatch_options = a.slurm_opts;
  so.shards = a.shards;
  so.max_running = a.jobs;  // -j with slurm: array tasks running at once (0: no limit)
  so.poll_s = a.slurm_poll_s;
  const bool tty = stderr_is_terminal();
  std::string label;
  if (tty) {
    o.on_progress = [&label](const fleet::SweepProgress& p) {
      std::fprintf(stderr, "\r\033[K%s%s", label.c_str(), p.line().c_str());
    };
  }
  g_interrupted.store(false);
  o.interrupt = &g_interrupted;
  struct sigaction sa {};
  sa.sa_handler = on_sweep_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: waiting for a point returns to look at the flag
  struct sigaction old_int {};
  struct sigaction old_term {};
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  const fleet::SweepOutcome r = slurm ? fleet::run_sweep_slurm(o, so) : fleet::run_sweep(o);
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  if (tty) std::fprintf(stderr, "\r\033[K");
  if (r.exit_code == kExitInvalid) {
    for (const auto& e : r.errors) std::fprintf(stderr, "%s\n", e.c_str());
    return kExitInvalid;
  }
  for (const auto& w : r.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  const auto& p = r.progress;
  std::printf("sweep %s: %zu of %zu points done, %zu passed, %zu failed", r.sweep_id.c_str(),
              p.done, p.total, p.passed, p.failed);
  if (!r.slurm_job_id.empty()) std::printf(" (Slurm job array %s)", r.slurm_job_id.c_str());
  std::printf("\n");
  if (!a.no_report && o.shard_count == 1) {
    const Result<json> rep = fleet::summarize_sweep(r.dir);
    if (rep.ok() && fleet::write_sweep_report(*rep, r.dir).ok()) {
      for (const auto& f : (*rep)["failing"]) {
        std::printf("  FAIL %s: %s\n    %s\n", f.value("id", "").c_str(),
                    f.value("reason", "").c_str(), f.value("command", "").c_str());
      }
      std::printf("report: %s\n", (r.dir / "sweep.html").string().c_str());
    }
  }
  if (r.exit_code == kExitInterrupted) {
    std::printf("interrupted: the finished points are kept; `fieldproof sweep %s --sweep-id %s "
                "--resume%s` runs the other %zu\n",
                a.scenario.c_str(), r.sweep_id.c_str(), slurm ? " --executor slurm" : "",
                p.total - p.done);
  }
  return r.exit_code;
}

}  // namespace

void add_sweep_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* cmd = app.add_subcommand(
      "sweep",
      "Run a scenario over seeds x parameter values, each point a run directory under "
      "<runs>/<sweep-id>/; exit 0 when every point passed, 1 otherwise, 2 invalid, 130 "
      "interrupted (--resume runs the rest)");
  cmd->add_option("scenario", args->scenario, "the scenario YAML file");
  cmd->add_option("--seeds", args->seeds, "seeds A..B (inclusive) or N; repeatable")
      ->allow_extra_args(false);
  cmd->add_option("--seeds-list", args->seeds_list, "a file of seeds, one a line (# comments)");
  cmd->add_option("--repeat", args->repeat,
                  "runs per point (default 1); points whose runs disagree are reported as "
                  "nondeterministic")
      ->check(whole_count());
  cmd->add_option("--param", args->params,
                  "PATH=V1,V2,...: a scenario value by its path (time.rtf, "
                  "vehicles[0].parameters.controller.max_linear) and the values to sweep; "
                  "repeatable (the matrix is every combination)")
      ->allow_extra_args(false);
  cmd->add_option("-j,--jobs", args->jobs,
                  "points running at once (default: the CPU count); with --executor slurm, the "
                  "array tasks running at once (default: as Slurm schedules them)")
      ->check(whole_count());
  cmd->add_option("--executor", args->executor,
                  "local (a process pool, the default) or slurm (one sbatch job array over "
                  "shards of the points; the runs directory must be shared by the nodes)")
      ->check(CLI::IsMember({"local", "slurm"}));
  cmd->add_option("--points-by", args->points_by,
                  "how a point's process starts: fork (the default: the sweep plans the scenario "
                  "once and forks each point from it, no program start or SDF parse per point) "
                  "or exec (each point runs `fieldproof run ...`)")
      ->check(CLI::IsMember({"fork", "exec"}));
  cmd->add_option("--slurm-opt", args->slurm_opts,
                  "an sbatch option passed through as given, e.g. --slurm-opt=--partition=short "
                  "--slurm-opt=--time=00:30:00 --slurm-opt=--account=robots; repeatable")
      ->allow_extra_args(false);
  cmd->add_option("--shards", args->shards,
                  "with --executor slurm: the array's tasks, each running the points whose "
                  "position is I modulo N (default: one per point, 100 at most)")
      ->check(whole_count());
  cmd->add_option("--slurm-poll", args->slurm_poll_s,
                  "with --executor slurm: seconds between squeue calls (default 5)")
      ->check(positive_seconds());
  cmd->add_option("--sweep-id", args->sweep_id,
                  "the sweep's folder under the runs directory (default <scenario>-sweep-<n>)");
  cmd->add_flag("--resume", args->resume,
                "run the points of sweep --sweep-id that have not finished");
  add_run_output_options(cmd, &args->runs_dir, &args->max_rtf);
  cmd->add_option("--shard", args->shard,
                  "I/N: run only the points whose position in the plan is I modulo N (one batch "
                  "task's share)");
  cmd->add_flag("--no-report", args->no_report, "do not write the report at the end");
  CLI::App* rep = cmd->add_subcommand(
      "report",
      "Write sweep.json, sweep.md, junit.xml and sweep.html for sweep ID (exit 0 when every "
      "point passed, 1 otherwise, 2 when ID is not a sweep)");
  rep->add_option("id", args->report_id, "the sweep id")->required();
  rep->add_option("--runs-dir", args->runs_dir, "where the sweep is (default runs)");
  rep->callback([args, exit_code] { *exit_code = report(*args); });
  cmd->callback([args, exit_code, rep] {
    if (rep->parsed()) return;
    *exit_code = sweep(*args);
  });
}

}  // namespace fieldproof::cli
