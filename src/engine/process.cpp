#include "fieldproof/engine/process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <thread>

extern char** environ;

namespace fieldproof::engine {

ChildProcess::~ChildProcess() { terminate_group(); }

bool ChildProcess::start(const std::vector<std::string>& argv,
                         const std::vector<std::pair<std::string, std::string>>& env,
                         std::string* error, const std::string& log_file, const std::string& cwd) {
  if (argv.empty()) {
    *error = "no program to start";
    return false;
  }
  if (access(argv[0].c_str(), X_OK) != 0) {
    *error = "cannot execute '" + argv[0] + "': " + std::strerror(errno);
    return false;
  }
  if (!cwd.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_directory(cwd, ec)) {
      *error = "the working directory '" + cwd + "' is not a directory";
      return false;
    }
  }
  if (!log_file.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(log_file).parent_path(), ec);
  }
  std::map<std::string, std::string> merged;
  for (char** e = environ; e && *e; ++e) {
    const std::string kv(*e);
    const auto eq = kv.find('=');
    if (eq != std::string::npos) merged[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : env) merged[k] = v;
  std::vector<std::string> env_strings;
  env_strings.reserve(merged.size());
  for (const auto& [k, v] : merged) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> argp;
  for (auto& s : args) argp.push_back(s.data());
  argp.push_back(nullptr);

  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!log_file.empty()) {
    posix_spawn_file_actions_addopen(&actions, 1, log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND,
                                     0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
  }
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argp[0], &actions, &attr, argp.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    *error = "cannot start '" + argv[0] + "': " + std::strerror(rc);
    return false;
  }
  pid_ = pid;
  status_.reset();
  group_ended_ = false;
  return true;
}

std::optional<int> ChildProcess::exited() {
  if (pid_ <= 0 || status_) return status_;
  int st = 0;
  const pid_t r = waitpid(pid_, &st, WNOHANG);
  if (r == pid_) status_ = st;
  if (r < 0 && errno == ECHILD) status_ = 0;  // reaped elsewhere: gone all the same
  return status_;
}

std::string ChildProcess::describe() const {
  if (!status_) return pid_ > 0 ? "running" : "not started";
  if (WIFEXITED(*status_)) return "exited with code " + std::to_string(WEXITSTATUS(*status_));
  if (WIFSIGNALED(*status_)) return "killed by signal " + std::to_string(WTERMSIG(*status_));
  return "ended";
}

void ChildProcess::terminate_group(Duration grace) {
  if (pid_ <= 0 || group_ended_) return;
  group_ended_ = true;
  // The group outlives its leader when the leader forked: signal the group in any case.
  kill(-pid_, SIGTERM);
  const int64_t polls = std::max<int64_t>(1, grace.ns() / 10'000'000);
  for (int64_t i = 0; i < polls && !exited(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(-pid_, SIGKILL);
  if (!status_) {
    int st = 0;
    status_ = waitpid(pid_, &st, 0) == pid_ ? st : 0;
  }
}

void ChildProcess::kill_group() {
  if (pid_ <= 0 || group_ended_) return;
  group_ended_ = true;
  kill(-pid_, SIGKILL);
  if (!status_) {
    int st = 0;
    status_ = waitpid(pid_, &st, 0) == pid_ ? st : 0;
  }
}

}  // namespace fieldproof::engine
