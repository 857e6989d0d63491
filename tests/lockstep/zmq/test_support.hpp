// Helpers of the ZeroMQ tests: fresh temporary directories, child processes, awaited events.
#pragma once

#include <signal.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace fieldproof::lockstep::testing {

// A fresh directory under /tmp (short: ipc paths must fit in 107 bytes), removed at the end.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = "/tmp/fpzmq-XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A child process in its own process group; killed (the group) when the object goes away.
class Process {
 public:
  Process(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env = {},
          const std::string& stdout_file = "", const std::string& stderr_file = "") {
    std::vector<std::string> env_strings;
    for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
    for (const auto& e : extra_env) env_strings.push_back(e);
    std::vector<char*> env;
    for (auto& e : env_strings) env.push_back(e.data());
    env.push_back(nullptr);
    std::vector<std::string> args = argv;
    std::vector<char*> cargs;
    for (auto& a : args) cargs.push_back(a.data());
    cargs.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (!stdout_file.empty()) {
      posix_spawn_file_actions_addopen(&fa, 1, stdout_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                       0644);
    }
    if (!stderr_file.empty()) {
      posix_spawn_file_actions_addopen(&fa, 2, stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                       0644);
    }
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    int rc = posix_spawn(&pid_, cargs[0], &fa, &attr, cargs.data(), env.data());
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) throw std::runtime_error("posix_spawn " + args[0] + " failed");
  }
  ~Process() {
    if (pid_ > 0 && !exited_) {
      ::kill(-pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
  }
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }
  void signal(int sig) { ::kill(pid_, sig); }

  // Waits for the exit; returns the exit code (128 + signal when killed), or -1 when it did not
  // end within `timeout` (then it is killed).
  int wait(std::chrono::milliseconds timeout) {
    if (exited_) return code_;
    // A thread blocks in waitpid; the caller awaits it with a deadline (no polling loop).
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    int status = 0;
    std::thread waiter([&] {
      int s = 0;
      ::waitpid(pid_, &s, 0);
      std::lock_guard lock(m);
      status = s;
      done = true;
      cv.notify_all();
    });
    {
      std::unique_lock lock(m);
      if (!cv.wait_for(lock, timeout, [&] { return done; })) {
        ::kill(-pid_, SIGKILL);
        cv.wait(lock, [&] { return done; });
        waiter.join();
        exited_ = true;
        code_ = -1;
        return -1;
      }
    }
    waiter.join();
    exited_ = true;
    code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return code_;
  }

 private:
  pid_t pid_ = -1;
  bool exited_ = false;
  int code_ = 0;
};

// Values that arrive on other threads, awaited with a deadline.
template <typename T>
class Events {
 public:
  void push(T v) {
    std::lock_guard lock(mutex_);
    items_.push_back(std::move(v));
    cv_.notify_all();
  }
  // Waits until pred(items) holds; false on timeout.
  bool await(const std::function<bool(const std::vector<T>&)>& pred,
             std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, timeout, [&] { return pred(items_); });
  }
  std::vector<T> snapshot() {
    std::lock_guard lock(mutex_);
    return items_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<T> items_;
};

// True when every name in `names` occurs in `seen`.
inline bool contains_all(const std::vector<std::string>& seen, const std::vector<std::string>& names) {
  std::set<std::string> s(seen.begin(), seen.end());
  for (const auto& n : names) {
    if (s.count(n) == 0) return false;
  }
  return true;
}

}  // namespace fieldproof::lockstep::testing
