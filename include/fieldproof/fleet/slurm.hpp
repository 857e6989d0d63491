// `fieldproof sweep --executor slurm`: a sweep's points as one Slurm job array over shards of the
// points (docs/sweeps.md, "Slurm").
//
//   SweepOptions o = ...;   // as for run_sweep; runs_dir on a filesystem every node shares
//   SlurmOptions s;
//   s.sbatch_options = {"--partition=short", "--time=00:30:00"};
//   SweepOutcome r = run_sweep_slurm(o, s);   // exit codes as run_sweep's
//
// The sweep is validated and planned here (run_sweep with plan_only: the same checks, the same
// sweep_plan.json), then one array is submitted with `sbatch --parsable`: task I runs
// `fieldproof sweep SCENARIO --sweep-id ID --resume --shard I/N --runs-dir DIR --no-report` on
// its node (-j $SLURM_CPUS_PER_TASK, default 1), and only shards with unfinished points get a
// task. The array is followed with squeue every poll_s seconds, the progress counted from the run
// directories as points finish. `interrupt` scancels the array and waits for its tasks to leave
// the queue (their points end as interrupted; --resume submits the rest). Once the array has left
// the queue the tasks' final states are read (sacct, or scontrol where accounting is disabled),
// and every finished point is gathered into <runs>/index.sqlite in one transaction. Blocks until
// then. The Slurm commands are looked up on PATH and talk to the cluster SLURM_CONF names (or the
// default one). Not thread-safe (one sweep per process).
#pragma once

#include <string>
#include <vector>

#include "fieldproof/fleet/sweep.hpp"

namespace fieldproof::fleet {

// Shards when SlurmOptions::shards is 0: one per point, up to this many.
inline constexpr int kDefaultMaxShards = 100;

struct SlurmOptions {
  std::vector<std::string> sbatch_options;  // each passed to sbatch as one argument
  int shards = 0;        // array tasks (the N of --shard I/N); 0: kDefaultMaxShards at most
  int max_running = 0;   // tasks running at once (--array=...%M); 0: as Slurm schedules them
  double poll_s = 5;     // seconds between squeue calls (> 0)
  std::string sbatch = "sbatch";
  std::string squeue = "squeue";
  std::string scancel = "scancel";
  std::string sacct = "sacct";
  std::string scontrol = "scontrol";
};

// "0-3,5,9-10" for the sorted, distinct task ids (sbatch --array's syntax).
std::string array_ranges(const std::vector<int>& sorted_ids);

// One array task's final state, from sacct or scontrol.
struct SlurmTaskState {
  int task = -1;
  std::string state;  // COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, ...
  int exit_code = 0;  // the task's exit code (fieldproof sweep's: 1 = a point failed)
};

// Parses `sacct -n -P -X -o JobID,State,ExitCode` lines ("12_3|COMPLETED|0:0") or
// `scontrol show job -o` lines (ArrayTaskId=3 ... JobState=FAILED ... ExitCode=1:0); lines of
// other jobs, steps and array summaries ("12_[4-7]") are left out.
std::vector<SlurmTaskState> parse_sacct(const std::string& text);
std::vector<SlurmTaskState> parse_scontrol_jobs(const std::string& text);

SweepOutcome run_sweep_slurm(const SweepOptions& options, const SlurmOptions& slurm);

}  // namespace fieldproof::fleet
