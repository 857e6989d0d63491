// Starting a child process: the one posix_spawn block of the project (the engine's ChildProcess,
// the sweep's points, the Slurm executor's commands, fleet_bench and the tests' Slurm cluster all
// start their children here). Header-only, like the rest of util.
//
//   util::SpawnOptions o;
//   o.env = {{"FIELDPROOF_SEED", "7"}};          // added to (or replacing in) the environment
//   o.stdout_to = util::Redirect::file("run.log");  // truncated; Redirect::append(...) appends
//   o.stderr_to = util::Redirect::same_as_stdout();
//   o.stdin_from_null = true;
//   o.new_process_group = true;                 // the child leads a group of its own
//   const util::Spawned s = util::spawn_process({"/usr/bin/fieldproof", "run", "x.yaml"}, o);
//   if (!s.ok()) return error(s.error);         // "cannot start '/usr/bin/...': No such file ..."
//   waitpid(s.pid, &status, 0);
//
// A program that is missing or not executable, or a working directory that does not exist, is
// an error in Spawned::error (glibc's posix_spawn reports the child's failed chdir/exec), never a
// child that exits 127 unnoticed.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

extern char** environ;

namespace fieldproof::util {

// Where one of the child's output streams goes.
struct Redirect {
  enum class Kind { kInherit, kNull, kFile, kAppend, kFd, kSameAsStdout };
  Kind kind = Kind::kInherit;
  std::string path;  // kFile, kAppend
  int fd = -1;       // kFd (dup2'ed into the child; the parent keeps and closes its own)

  static Redirect inherit() { return {}; }
  static Redirect null() { return {Kind::kNull, "", -1}; }
  // Created (0644) or truncated.
  static Redirect file(std::string p) { return {Kind::kFile, std::move(p), -1}; }
  // Created (0644) or appended to.
  static Redirect append(std::string p) { return {Kind::kAppend, std::move(p), -1}; }
  static Redirect to_fd(int f) { return {Kind::kFd, "", f}; }
  // stderr only: where stdout goes (one log of both, in order).
  static Redirect same_as_stdout() { return {Kind::kSameAsStdout, "", -1}; }
};

struct SpawnOptions {
  // Set in the child's environment on top of the current one (a name already there is
  // replaced, in place; new names are added at the end, in this order).
  std::vector<std::pair<std::string, std::string>> env;
  std::string cwd;  // the child's working directory; empty: the parent's
  Redirect stdout_to;
  Redirect stderr_to;
  bool stdin_from_null = false;  // stdin from /dev/null (else inherited)
  // The child leads a new process group (its pid is the group id), so a group signal ends it
  // and what it starts, and a terminal's Ctrl-C meant for the parent does not reach it.
  bool new_process_group = false;
  // SIGINT, SIGTERM and SIGPIPE back to their default action and no signal blocked in the child
  // (a parent that ignores or blocks them does not pass that on).
  bool default_signals = false;
  bool search_path = false;  // argv[0] without a '/' looked up on PATH (posix_spawnp)
};

struct Spawned {
  pid_t pid = -1;
  std::string error;  // empty when started
  bool ok() const { return pid > 0; }
};

// The environment the child gets: environ with `extra` applied (see SpawnOptions::env).
inline std::vector<std::string> child_environment(
    const std::vector<std::pair<std::string, std::string>>& extra) {
  std::vector<std::string> out;
  std::vector<bool> used(extra.size(), false);
  for (char** e = environ; e && *e; ++e) {
    const std::string kv(*e);
    const size_t eq = kv.find('=');
    const std::string name = eq == std::string::npos ? kv : kv.substr(0, eq);
    bool replaced = false;
    for (size_t i = 0; i < extra.size(); ++i) {
      if (extra[i].first == name) {
        if (!replaced) out.push_back(name + "=" + extra[i].second);
        replaced = true;
        used[i] = true;  // a name given twice: the first value is the one set
      }
    }
    if (!replaced) out.push_back(kv);
  }
  for (size_t i = 0; i < extra.size(); ++i) {
    if (used[i]) continue;
    bool earlier = false;
    for (size_t j = 0; j < i; ++j) earlier = earlier || extra[j].first == extra[i].first;
    if (!earlier) out.push_back(extra[i].first + "=" + extra[i].second);
  }
  return out;
}

namespace detail {

inline int add_redirect(posix_spawn_file_actions_t* fa, int target, const Redirect& r) {
  switch (r.kind) {
    case Redirect::Kind::kInherit:
      return 0;
    case Redirect::Kind::kNull:
      return posix_spawn_file_actions_addopen(fa, target, "/dev/null", O_WRONLY, 0);
    case Redirect::Kind::kFile:
      return posix_spawn_file_actions_addopen(fa, target, r.path.c_str(),
                                              O_WRONLY | O_CREAT | O_TRUNC, 0644);
    case Redirect::Kind::kAppend:
      return posix_spawn_file_actions_addopen(fa, target, r.path.c_str(),
                                              O_WRONLY | O_CREAT | O_APPEND, 0644);
    case Redirect::Kind::kFd:
      return posix_spawn_file_actions_adddup2(fa, r.fd, target);
    case Redirect::Kind::kSameAsStdout:
      return posix_spawn_file_actions_adddup2(fa, STDOUT_FILENO, target);
  }
  return 0;
}

}  // namespace detail

inline Spawned spawn_process(const std::vector<std::string>& argv, const SpawnOptions& o = {}) {
  Spawned s;
  if (argv.empty() || argv[0].empty()) {
    s.error = "no program to start";
    return s;
  }
  std::vector<std::string> env_text = child_environment(o.env);
  std::vector<char*> envp;
  envp.reserve(env_text.size() + 1);
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> arg_text = argv;
  std::vector<char*> args;
  args.reserve(arg_text.size() + 1);
  for (auto& a : arg_text) args.push_back(a.data());
  args.push_back(nullptr);

  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&attr);
  int rc = 0;
  if (o.stdin_from_null) {
    rc = posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  }
  if (rc == 0) rc = detail::add_redirect(&fa, STDOUT_FILENO, o.stdout_to);
  if (rc == 0) rc = detail::add_redirect(&fa, STDERR_FILENO, o.stderr_to);
  if (rc == 0 && !o.cwd.empty()) rc = posix_spawn_file_actions_addchdir_np(&fa, o.cwd.c_str());
  short flags = 0;
  if (o.new_process_group) {
    flags |= POSIX_SPAWN_SETPGROUP;
    posix_spawnattr_setpgroup(&attr, 0);
  }
  if (o.default_signals) {
    flags |= POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attr, &none);
    sigset_t defaults;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGTERM);
    sigaddset(&defaults, SIGPIPE);
    posix_spawnattr_setsigdefault(&attr, &defaults);
  }
  posix_spawnattr_setflags(&attr, flags);
  pid_t pid = -1;
  if (rc == 0) {
    rc = o.search_path
             ? posix_spawnp(&pid, args[0], &fa, &attr, args.data(), envp.data())
             : posix_spawn(&pid, args[0], &fa, &attr, args.data(), envp.data());
  }
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    s.error = "cannot start '" + argv[0] + "': " + std::strerror(rc);
    if (!o.cwd.empty()) s.error += " (working directory '" + o.cwd + "')";
    return s;
  }
  s.pid = pid;
  return s;
}

}  // namespace fieldproof::util
