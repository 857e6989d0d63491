// Runs the fieldproof executable (built beside this test) and captures its exit code and output.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "shell_util.hpp"

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

namespace fieldproof::integration {

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout and stderr, interleaved
};

// `args` is appended to the executable's path, as shell text (quote what needs quoting).
// With stderr = false, stderr is dropped and out is stdout alone.
// `env` is put before the command (shell assignments: "NAME=value ").
inline CommandResult run_cli(const std::string& args, bool stderr_too = true,
                             const std::string& env = "") {
  const std::string cmd = env + std::string(FIELDPROOF_BIN_DIR) + "/fieldproof " + args +
                          (stderr_too ? " 2>&1" : " 2>/dev/null");
  const shell::ShellResult s = shell::run_shell(cmd);
  return CommandResult{s.exit_code, s.out};
}

// A fresh, empty runs directory for one test, under the build tree's test scratch folder.
// A runs directory of the test's own, emptied. CTest runs each test of a suite in a process of
// its own, in parallel: a directory shared by a suite's SetUpTestSuite would be emptied by one
// process while another uses it, so the name carries a short hash of the gtest filter CTest
// gives each process (none when the binary runs every test). Kept short: a run directory holds a
// Unix socket, whose path is limited to 107 characters.
inline std::filesystem::path fresh_runs_dir(const std::string& test,
                                            const std::string& prefix = "runs_") {
  std::string name = prefix + test;
  const std::string filter = ::testing::GTEST_FLAG(filter);
  if (filter != "*" && !filter.empty()) {
    char hash[16];
    std::snprintf(hash, sizeof hash, "_%08x",
                  static_cast<unsigned>(std::hash<std::string>{}(filter)&0xffffffffu));
    name += hash;
  }
  const std::filesystem::path d = std::filesystem::path(FIELDPROOF_TEST_TMP) / name;
  std::filesystem::remove_all(d);
  return d;
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline nlohmann::json run_json(const std::filesystem::path& dir) {
  return nlohmann::json::parse(read_file(dir / "run.json"));
}

// Runs examples/scenarios/ugv_nav_to_goal.yaml as run id "a" under `runs`, sends SIGINT once the
// drive has started (the engine logs action.start; polled, up to 30 s) and returns the exit code,
// or -1 when the process did not exit normally.
inline int interrupt_run_once_the_drive_started(const std::filesystem::path& runs) {
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    const std::string bin = std::string(FIELDPROOF_BIN_DIR) + "/fieldproof";
    const std::string dir = runs.string();
    execl(bin.c_str(), bin.c_str(), "run", "examples/scenarios/ugv_nav_to_goal.yaml", "--runs-dir",
          dir.c_str(), "--run-id", "a", static_cast<char*>(nullptr));
    _exit(127);
  }
  const std::filesystem::path log = runs / "a" / "engine.log";
  for (int i = 0; i < 3000 && read_file(log).find("action.start") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGINT);
  int st = 0;
  if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) return -1;
  return WEXITSTATUS(st);
}

}  // namespace fieldproof::integration
