// Runs the fieldproof executable (built beside this test) and captures its exit code and output.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

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
  CommandResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

// A fresh, empty runs directory for one test, under the build tree's test scratch folder.
inline std::filesystem::path fresh_runs_dir(const std::string& test,
                                            const std::string& prefix = "runs_") {
  const std::filesystem::path d = std::filesystem::path(FIELDPROOF_TEST_TMP) / (prefix + test);
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

}  // namespace fieldproof::integration
