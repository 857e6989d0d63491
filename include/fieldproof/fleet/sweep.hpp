// `fieldproof sweep`: a scenario run over seeds x parameter values, each point a normal run
// directory <runs>/<sweep id>/<point id>/ made by a child `fieldproof run` (docs/sweeps.md).
//
//   SweepOptions o;
//   o.spec.scenario_file = "examples/scenarios/ugv_nav_to_goal.yaml";
//   o.spec.seeds = {0, 1, 2};
//   o.spec.params = {{"time.rtf", {"0", "2"}}};
//   o.fieldproof = "/usr/bin/fieldproof";
//   SweepOutcome r = run_sweep(o);   // r.exit_code: 0 every point passed, 1 otherwise,
//                                    // 2 invalid input (nothing ran), 130 interrupted
//
// The plan (kSweepPlanFile in the sweep's folder) is written before the first point starts and
// lists every point with its seed, its --set values and its repetition; --resume reads it and
// runs the points without a finished run directory (an interrupted point's directory is removed
// and the point run again). Children run in their own process groups: `interrupt` makes the
// sweep start nothing more, pass SIGINT to the running points (they end as interrupted) and
// return 130 once they have.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fieldproof/scenario/overrides.hpp"
#include "fieldproof/util/status.hpp"

namespace fieldproof::fleet {

struct SweepParam {
  std::string path;
  std::vector<std::string> values;
};

struct SweepSpec {
  std::filesystem::path scenario_file;  // as given (the reproducing commands use it)
  std::vector<int64_t> seeds;
  std::vector<SweepParam> params;  // the matrix: every combination of their values
  int repeat = 1;                  // runs per (seed, values): nondeterminism shows as disagreement
  std::optional<double> max_rtf;   // passed to every point (--max-rtf)
};

// "A..B" (inclusive, A <= B, both 0 .. 2^31-1) or a single "N"; kInvalidArgument otherwise.
Result<std::vector<int64_t>> parse_seed_range(const std::string& text);
// One seed a line; '#' starts a comment; blank lines skipped. Errors name file:line
// (kInvalidArgument; kIoError when the file cannot be read).
Result<std::vector<int64_t>> read_seed_list(const std::filesystem::path& file);
// "PATH=V1,V2,..." (values split at ','); kInvalidArgument otherwise.
Result<SweepParam> parse_param(const std::string& text);
// Every seed of `ranges` (each as parse_seed_range reads it), then those of the seed list `list`
// when it is not empty, in that order; a seed given twice is kept once, where it first appears.
// The first range or list that cannot be read is the error.
Result<std::vector<int64_t>> collect_seeds(const std::vector<std::string>& ranges,
                                           const std::filesystem::path& list);

// One batch task's share of the points: those whose position is `index` modulo `count`.
struct Shard {
  int index = 0;
  int count = 1;
};
// "I/N" with whole numbers (kInvalidArgument otherwise). 0 <= I < N is checked by run_sweep.
Result<Shard> parse_shard(const std::string& text);

struct SweepPoint {
  std::string id;  // s<seed>[-p<combination>][-r<repetition>]
  int64_t seed = 0;
  std::vector<scenario::Override> overrides;
  size_t combination = 0;
  int repetition = 0;
  nlohmann::json to_json() const;
};

std::vector<SweepPoint> expand(const SweepSpec& spec);

// The `fieldproof run` command that reproduces `point` of the sweep planned in `plan`.
std::string reproduce_command(const nlohmann::json& plan, const nlohmann::json& point);

struct SweepProgress {
  size_t total = 0;
  size_t done = 0;  // finished, this session and before (--resume)
  size_t passed = 0;
  size_t failed = 0;
  size_t running = 0;
  double rate = 0;   // points per wall second this session
  double eta_s = 0;  // at that rate; 0 when unknown
  std::string line() const;  // "12/40 points  11 passed  1 failed  2.1/s  ETA 13s"
};

struct SweepOptions {
  SweepSpec spec;
  std::filesystem::path runs_dir = "runs";
  std::string sweep_id;  // empty: <scenario name>-sweep-<n>, the first n not taken
  bool resume = false;   // run the points of an existing sweep that have not finished
  int jobs = 1;          // points running at once (the local process pool)
  // Only the points whose position in the plan is shard_index modulo shard_count (Slurm tasks).
  int shard_index = 0;
  int shard_count = 1;
  std::filesystem::path fieldproof;  // the program each point runs (`fieldproof run ...`)
  // How a point's process starts. kFork (the default): the sweep process, while it is still
  // single-threaded, plans the scenario once (which fills world::load_sdf's memo and loads the
  // assertion plugins) and then forks one child per point that runs engine::run_scenario with
  // the point's seed, --set values and run directory, and exits with its exit code: no program
  // start and no SDF parse per point. A point is still its own process (own process group, its
  // log, killed alone). A forked point frees its slot once its run.json is written
  // (engine::RunOptions::on_recorded, through a pipe): the next point starts while it writes
  // its reports and index row. kExec: each point execs `fieldproof run ...` and holds its slot
  // until it ends (the fallback, also taken, with a warning, when the sweep process has more
  // than one thread at fork time).
  enum class PointLaunch { kFork, kExec };
  PointLaunch launch = PointLaunch::kFork;
  // Validate, write (or, with resume, check) the plan and count what is finished, but run
  // nothing: SweepOutcome::pending lists what is left (the Slurm executor starts from this).
  bool plan_only = false;
  std::function<void(const SweepProgress&)> on_progress;  // after each point, and at start
  const std::atomic<bool>* interrupt = nullptr;
};

struct SweepOutcome {
  int exit_code = 0;
  std::vector<std::string> errors;  // invalid input (exit 2)
  std::string sweep_id;
  std::filesystem::path dir;
  SweepProgress progress;
  std::vector<std::string> failing;  // point ids, plan order
  std::vector<std::string> warnings;
  nlohmann::json plan;               // sweep_plan.json as written or read
  std::vector<size_t> pending;       // plan positions of this shard's unfinished points
  std::string slurm_job_id;          // the array's job id (--executor slurm)
};

// True when the point at `position` of a plan is shard `index`'s of `count` (--shard I/N):
// position modulo count. Every position is in exactly one shard.
inline bool in_shard(size_t position, int index, int count) {
  return count > 0 && static_cast<int>(position % static_cast<size_t>(count)) == index;
}

SweepOutcome run_sweep(const SweepOptions& options);

// Adds to *verdicts (point id -> passed) the points of the sweep in `dir` planned in `plan` that
// have a finished run directory (a run.json whose status is not `interrupted`) and are not in it
// yet: called again as points finish, it reads only the new ones.
void add_finished_points(const std::filesystem::path& dir, const nlohmann::json& plan,
                         std::map<std::string, bool>* verdicts);

}  // namespace fieldproof::fleet
