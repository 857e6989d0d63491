#include "fieldproof/engine/process.hpp"

#include "fieldproof/util/spawn.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <thread>

namespace fieldproof::engine {

ChildProcess::~ChildProcess() { terminate_group(); }

Status ChildProcess::start(const std::vector<std::string>& argv,
                           const std::vector<std::pair<std::string, std::string>>& env,
                           const std::string& log_file, const std::string& cwd) {
  if (argv.empty()) {
    return Status(StatusCode::kUnavailable, "no program to start");
  }
  if (access(argv[0].c_str(), X_OK) != 0) {
    return Status(StatusCode::kUnavailable,
                  "cannot execute '" + argv[0] + "': " + std::strerror(errno));
  }
  if (!cwd.empty()) {
    std::error_code ec;
    if (!std::filesystem::is_directory(cwd, ec)) {
      return Status(StatusCode::kUnavailable,
                    "the working directory '" + cwd + "' is not a directory");
    }
  }
  if (!log_file.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(log_file).parent_path(), ec);
  }
  util::SpawnOptions o;
  o.env = env;
  o.cwd = cwd;
  if (!log_file.empty()) {
    o.stdout_to = util::Redirect::append(log_file);
    o.stderr_to = util::Redirect::same_as_stdout();
  }
  o.new_process_group = true;
  o.default_signals = true;
  const util::Spawned s = util::spawn_process(argv, o);
  if (!s.ok()) {
    return Status(StatusCode::kUnavailable, s.error);
  }
  const pid_t pid = s.pid;
  pid_ = pid;
  status_.reset();
  group_ended_ = false;
  return Status();
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
