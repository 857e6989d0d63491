// A child process in its own process group, ended as a group whatever happens (DESIGN.md: no
// child outlives a run).
//
//   ChildProcess p;
//   if (!p.start({"/path/fieldproof-ugv-nav", "--vehicle", "ugv1"}, {{"FIELDPROOF_SEED", "7"}},
//                &error)) ...
//   p.exited();             // polls (non-blocking)
//   p.terminate_group();    // SIGTERM to the group, SIGKILL after the grace period; reaps
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fieldproof/time/duration.hpp"
#include "fieldproof/util/status.hpp"

namespace fieldproof::engine {

class ChildProcess {
 public:
  ChildProcess() = default;
  ~ChildProcess();  // terminate_group()
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Starts argv[0] (a path) with the current environment plus `env`, in a new process group,
  // stdout and stderr inherited (or appended to `log_file` when not empty, its folder created),
  // in `cwd` when not empty. An unavailable Status saying why when it cannot be started.
  Status start(const std::vector<std::string>& argv,
               const std::vector<std::pair<std::string, std::string>>& env,
               const std::string& log_file = "", const std::string& cwd = "");
  bool running() const { return pid_ > 0 && !status_; }
  pid_t pid() const { return pid_; }
  // Polls without blocking; the wait status once the process has exited.
  std::optional<int> exited();
  // "exited with code N" / "killed by signal N" / "running".
  std::string describe() const;
  // SIGTERM to the whole group, waits up to `grace` (wall time, polling every 10 ms), then SIGKILL
  // to the group; reaps the leader. Idempotent.
  void terminate_group(Duration grace = seconds(3));
  // SIGKILL to the whole group at once, then reaps the leader (blocking). Idempotent.
  void kill_group();

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
  bool group_ended_ = false;
};

}  // namespace fieldproof::engine
