// The resource monitor (internal to the engine; docs/recording.md): CPU, resident
// memory, the cgroup's memory limit and the task count of every process of a run, from
// /proc/<pid>/stat, /proc/<pid>/status and /proc/<pid>/cgroup (DESIGN.md's stand-in for
// `docker stats`, which reads the same kernel counters per container).
//
//   ResourceReader r(wall_now);
//   r.sample(pid);                 // the first reading of a pid: the baseline (cpu_pct 0)
//   ProcessUsage u = r.sample(pid);  // a second later: u.cpu_pct over that wall interval
//
//   ResourceMonitor m({.processes = {{"engine", "engine", "", getpid()}, ...}, .on_line = ...});
//   m.start();                     // the baseline now, then a line per process every wall second
//   ... each wake of the engine: m.set_sim(now); for (auto& s : m.take()) evaluator(s);
//   m.stop();
//
// The monitor samples on a thread of its own, once a second of WALL time whatever the pace of
// simulated time (an unpaced run's simulated second may take 7 ms of wall time: sampling per
// simulated second measured CPU over 7 ms windows, up to 427 % on 2 cores). Each line is given to
// on_line on that thread at once (resources.jsonl, /fieldproof/resources), and queued as an
// assertions::Sample per measured vehicle for the engine's thread (take()), where the evaluator
// runs.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "fieldproof/assertions/checker.hpp"
#include "fieldproof/engine/plan.hpp"
#include "fieldproof/engine/session.hpp"
#include "fieldproof/time/duration.hpp"
#include "fieldproof/util/mutex.hpp"

namespace fieldproof::engine {

struct ProcessUsage {
  bool ok = false;
  std::string error;       // why not ok (the process is gone, a file does not parse)
  bool baseline = false;   // the first reading of this pid: cpu_pct is 0
  double cpu_pct = 0.0;    // percent of one core over the wall time since the previous reading
  double memory_mb = 0.0;  // VmRSS, MiB
  double cpu_s = 0.0;      // user + system CPU seconds of the process so far
  int tasks = 0;           // Threads: of /proc/<pid>/status (docker stats' PIDS counts tasks)
  // The memory limit of the process's cgroup in MiB (the smallest memory.max, or v1's
  // memory.limit_in_bytes, on the way to the root); nullopt when unlimited or unknown.
  std::optional<double> memory_limit_mb;
};

class ResourceReader {
 public:
  // ticks_per_s: the kernel's clock ticks per second (sysconf(_SC_CLK_TCK) when 0).
  explicit ResourceReader(std::function<SimTime()> wall_now, std::string proc_root = "/proc",
                          long ticks_per_s = 0, std::string cgroup_root = "/sys/fs/cgroup");
  ProcessUsage sample(int pid);

 private:
  std::optional<double> memory_limit_mb(const std::string& base) const;
  struct Last {
    uint64_t ticks = 0;
    SimTime wall;
  };
  std::function<SimTime()> wall_now_;
  std::string proc_root_;
  long ticks_per_s_;
  std::string cgroup_root_;
  std::map<int, Last> last_;
};

// One process of the run.
struct MonitoredProcess {
  std::string process;  // "engine", "<vehicle>_nav"
  std::string role;     // "engine", "stack"
  std::string vehicle;  // the stack's vehicle; "" for the engine
  int pid = 0;
  // Vehicles whose stack runs inside this process (in-process stack plugins run in the engine):
  // its samples count for their resource_usage assertions too.
  std::vector<std::string> hosts;
};

struct ResourceMonitorOptions {
  std::vector<MonitoredProcess> processes;
  std::function<SimTime()> wall_now;   // steady wall time (the sampling period, the CPU window)
  SimTime wall0 = SimTime::zero();     // wall_s counts from here
  std::function<int64_t()> utc_now;    // epoch ns for "wall" (may be empty: wall is null)
  Duration period = seconds(1);
  // Called on the monitor's thread with each line (may be empty).
  std::function<void(const nlohmann::json&)> on_line;
  // Called on the monitor's thread once per process that cannot be read (it exited...).
  std::function<void(const std::string&)> on_error;
  std::string proc_root = "/proc";
  std::string cgroup_root = "/sys/fs/cgroup";
};

class ResourceMonitor {
 public:
  explicit ResourceMonitor(ResourceMonitorOptions options);
  ~ResourceMonitor();  // stop()
  ResourceMonitor(const ResourceMonitor&) = delete;
  ResourceMonitor& operator=(const ResourceMonitor&) = delete;

  // Takes the CPU baseline of every process and starts the thread: a line per process every
  // period from then on.
  void start();
  // Ends the thread (at once: the wait is a condition variable's), then takes a final round
  // when at least half a period has passed since the last (the teardown closes the last
  // interval, so a run shorter than a period still has its line per process). Idempotent.
  void stop();
  // The simulated time lines are stamped with ("sim"); the engine sets it at each wake.
  void set_sim(SimTime sim);
  // The process now runs as `pid` (fault.kill_stack with restart: the new process of a stack):
  // later rounds read it, its CPU baseline taken now, and a failure to read it is reported again.
  // A round less than half a period after it skips the process (a CPU figure over a few ms of
  // clock ticks says little): its first line measures from the restart to a later round.
  // pid 0: it is not running (killed, not yet restarted); rounds skip it. Unknown names: ignored.
  void set_pid(const std::string& process, int pid);
  // The samples measured since the last call (engine thread): one per process line, and one
  // more per vehicle a process hosts.
  std::vector<assertions::Sample> take();
  // Blocks until at least n lines were produced or `timeout` of wall time passed (tests).
  bool wait_lines(uint64_t n, std::chrono::milliseconds timeout);
  // One round now, on the caller's thread (the thread calls it every period; tests call it).
  void sample_once();
  // run.json's resources: {processes: [name...], samples: N, last: [the last line of each]}.
  nlohmann::json summary() const;

 private:
  void loop();
  // One round. final: the teardown's (a restarted process is measured however recent its
  // baseline); restarted_only: only the processes restarted since their last line.
  void round(bool final, bool restarted_only);

  ResourceMonitorOptions o_;
  ResourceReader reader_;
  std::atomic<int64_t> sim_ns_{0};
  mutable Mutex mu_;
  CondVar cv_;
  bool stop_ FIELDPROOF_GUARDED_BY(mu_) = false;
  bool started_ = false;
  SimTime last_round_;  // the wall time of the last round (or of start())
  bool any_round_ = false;  // a round was taken since start()
  uint64_t lines_ FIELDPROOF_GUARDED_BY(mu_) = 0;
  std::vector<assertions::Sample> pending_ FIELDPROOF_GUARDED_BY(mu_);
  std::map<std::string, nlohmann::json> last_;
  std::set<std::string> errors_reported_;
  std::map<std::string, SimTime> baseline_at_;  // set_pid: when the new process's baseline was
  std::thread thread_;
};

// The monitor of a run: the engine's process (hosting the in-process stack plugins and the
// vehicles without a stack) and each vehicle's process stack, with its role and vehicle.
ResourceMonitorOptions resource_monitor_options(
    const RunPlan& plan, const Session& session, std::function<SimTime()> wall_now, SimTime wall0,
    std::function<int64_t()> utc_now, std::function<void(const nlohmann::json&)> on_line,
    std::function<void(const std::string&)> on_error);

}  // namespace fieldproof::engine
