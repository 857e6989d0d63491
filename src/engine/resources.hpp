// The resource monitor's reader (internal to the engine): CPU and resident memory of a process
// from /proc/<pid>/stat and /proc/<pid>/status (DESIGN.md's stand-in for `docker stats`).
//
//   ResourceReader r(wall_now);
//   r.sample(pid);                 // the first reading of a pid: the baseline (cpu_pct 0)
//   ProcessUsage u = r.sample(pid);  // a second later: u.cpu_pct over that wall interval
#pragma once

#include <functional>
#include <map>
#include <string>

#include "fieldproof/time/duration.hpp"

namespace fieldproof::engine {

struct ProcessUsage {
  bool ok = false;
  std::string error;       // why not ok (the process is gone, a file does not parse)
  bool baseline = false;   // the first reading of this pid: cpu_pct is 0
  double cpu_pct = 0.0;    // percent of one core over the wall time since the previous reading
  double memory_mb = 0.0;  // VmRSS, MiB
  double cpu_s = 0.0;      // user + system CPU seconds of the process so far
};

class ResourceReader {
 public:
  // ticks_per_s: the kernel's clock ticks per second (sysconf(_SC_CLK_TCK) when 0).
  explicit ResourceReader(std::function<SimTime()> wall_now, std::string proc_root = "/proc",
                          long ticks_per_s = 0);
  ProcessUsage sample(int pid);

 private:
  struct Last {
    uint64_t ticks = 0;
    SimTime wall;
  };
  std::function<SimTime()> wall_now_;
  std::string proc_root_;
  long ticks_per_s_;
  std::map<int, Last> last_;
};

}  // namespace fieldproof::engine
