// util::spawn_process (util/spawn.hpp), the one posix_spawn block every child starts through:
// argv, the environment, the working directory, stdout/stderr to files, a missing program, the
// process group, and the signal defaults.
#include "fieldproof/util/spawn.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fieldproof::util {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() /
                     ("fieldproof_spawn_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Waits for the child; its exit code (-1 when it did not exit normally).
int wait_exit(pid_t pid) {
  int st = 0;
  if (::waitpid(pid, &st, 0) != pid) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(SpawnProcess, PassesArgvAsGivenAndRedirectsStdoutToAFile) {
  const fs::path d = fresh_dir("argv");
  SpawnOptions o;
  o.stdout_to = Redirect::file((d / "out.txt").string());
  const Spawned s = spawn_process(
      {"/bin/sh", "-c", "printf '%s|' \"$@\"", "sh", "one", "two words", "", "it's"}, o);
  ASSERT_TRUE(s.ok()) << s.error;
  EXPECT_EQ(wait_exit(s.pid), 0);
  EXPECT_EQ(slurp(d / "out.txt"), "one|two words||it's|");
}

TEST(SpawnProcess, StdoutAndStderrToSeparateFilesOrOneLogInOrder) {
  const fs::path d = fresh_dir("redirect");
  {
    SpawnOptions o;
    o.stdout_to = Redirect::file((d / "out.txt").string());
    o.stderr_to = Redirect::file((d / "err.txt").string());
    const Spawned s = spawn_process({"/bin/sh", "-c", "echo to-out; echo to-err >&2"}, o);
    ASSERT_TRUE(s.ok()) << s.error;
    EXPECT_EQ(wait_exit(s.pid), 0);
    EXPECT_EQ(slurp(d / "out.txt"), "to-out\n");
    EXPECT_EQ(slurp(d / "err.txt"), "to-err\n");
  }
  {  // one log, appended to: what was there stays, both streams follow in order
    std::ofstream(d / "log.txt") << "before\n";
    SpawnOptions o;
    o.stdout_to = Redirect::append((d / "log.txt").string());
    o.stderr_to = Redirect::same_as_stdout();
    const Spawned s = spawn_process({"/bin/sh", "-c", "echo a; echo b >&2; echo c"}, o);
    ASSERT_TRUE(s.ok()) << s.error;
    EXPECT_EQ(wait_exit(s.pid), 0);
    EXPECT_EQ(slurp(d / "log.txt"), "before\na\nb\nc\n");
  }
  {  // Redirect::file truncates
    SpawnOptions o;
    o.stdout_to = Redirect::file((d / "log.txt").string());
    const Spawned s = spawn_process({"/bin/sh", "-c", "echo only"}, o);
    ASSERT_TRUE(s.ok()) << s.error;
    EXPECT_EQ(wait_exit(s.pid), 0);
    EXPECT_EQ(slurp(d / "log.txt"), "only\n");
  }
}

TEST(SpawnProcess, StdoutToAPipeAndStdinFromDevNull) {
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  SpawnOptions o;
  o.stdout_to = Redirect::to_fd(p[1]);
  o.stdin_from_null = true;
  // `cat` with stdin from /dev/null ends at once and writes nothing; then the marker.
  const Spawned s = spawn_process({"/bin/sh", "-c", "cat; echo done"}, o);
  ::close(p[1]);
  ASSERT_TRUE(s.ok()) << s.error;
  std::string got;
  char buf[256];
  for (ssize_t n; (n = ::read(p[0], buf, sizeof buf)) > 0;) got.append(buf, static_cast<size_t>(n));
  ::close(p[0]);
  EXPECT_EQ(wait_exit(s.pid), 0);
  EXPECT_EQ(got, "done\n");
}

TEST(SpawnProcess, EnvironmentIsTheParentsPlusTheGivenNamesWhichReplace) {
  const fs::path d = fresh_dir("env");
  ASSERT_EQ(::setenv("FIELDPROOF_SPAWN_KEPT", "parent", 1), 0);
  ASSERT_EQ(::setenv("FIELDPROOF_SPAWN_REPLACED", "parent", 1), 0);
  SpawnOptions o;
  o.env = {{"FIELDPROOF_SPAWN_REPLACED", "child"}, {"FIELDPROOF_SPAWN_NEW", "a=b c"}};
  o.stdout_to = Redirect::file((d / "out.txt").string());
  const Spawned s = spawn_process(
      {"/bin/sh", "-c",
       "echo \"$FIELDPROOF_SPAWN_KEPT/$FIELDPROOF_SPAWN_REPLACED/$FIELDPROOF_SPAWN_NEW\"; "
       "env | grep -c '^FIELDPROOF_SPAWN_REPLACED='"},
      o);
  ASSERT_TRUE(s.ok()) << s.error;
  EXPECT_EQ(wait_exit(s.pid), 0);
  EXPECT_EQ(slurp(d / "out.txt"), "parent/child/a=b c\n1\n");  // replaced, not given twice
  ::unsetenv("FIELDPROOF_SPAWN_KEPT");
  ::unsetenv("FIELDPROOF_SPAWN_REPLACED");
}

TEST(SpawnProcess, RunsInTheGivenWorkingDirectory) {
  const fs::path d = fresh_dir("cwd");
  fs::create_directories(d / "here");
  SpawnOptions o;
  o.cwd = (d / "here").string();
  o.stdout_to = Redirect::file((d / "out.txt").string());
  const Spawned s = spawn_process({"/bin/pwd", "-P"}, o);
  ASSERT_TRUE(s.ok()) << s.error;
  EXPECT_EQ(wait_exit(s.pid), 0);
  EXPECT_EQ(slurp(d / "out.txt"), fs::canonical(d / "here").string() + "\n");
}

TEST(SpawnProcess, AMissingProgramOrFolderIsAnErrorNotACrash) {
  const fs::path d = fresh_dir("missing");
  const Spawned none = spawn_process({(d / "no-such-program").string()});
  EXPECT_FALSE(none.ok());
  EXPECT_NE(none.error.find("no-such-program"), std::string::npos) << none.error;
  EXPECT_NE(none.error.find("No such file"), std::string::npos) << none.error;

  std::ofstream(d / "not-executable") << "#!/bin/sh\n";
  const Spawned denied = spawn_process({(d / "not-executable").string()});
  EXPECT_FALSE(denied.ok());
  EXPECT_NE(denied.error.find("Permission denied"), std::string::npos) << denied.error;

  SpawnOptions o;
  o.cwd = (d / "no-such-folder").string();
  const Spawned bad_cwd = spawn_process({"/bin/true"}, o);
  EXPECT_FALSE(bad_cwd.ok());
  EXPECT_NE(bad_cwd.error.find("no-such-folder"), std::string::npos) << bad_cwd.error;

  SpawnOptions path;
  path.search_path = true;
  const Spawned unknown = spawn_process({"fieldproof-no-such-tool-on-path"}, path);
  EXPECT_FALSE(unknown.ok());
  EXPECT_EQ(spawn_process({}).error, "no program to start");
}

TEST(SpawnProcess, SearchPathFindsAProgramByName) {
  SpawnOptions o;
  o.search_path = true;
  const Spawned s = spawn_process({"sh", "-c", "exit 7"}, o);
  ASSERT_TRUE(s.ok()) << s.error;
  EXPECT_EQ(wait_exit(s.pid), 7);
}

TEST(SpawnProcess, ANewProcessGroupIsLedByTheChild) {
  SpawnOptions o;
  o.new_process_group = true;
  const Spawned s = spawn_process({"/bin/sh", "-c", "exec sleep 30"}, o);
  ASSERT_TRUE(s.ok()) << s.error;
  EXPECT_EQ(::getpgid(s.pid), s.pid);
  EXPECT_NE(::getpgid(s.pid), ::getpgrp());
  ASSERT_EQ(::kill(-s.pid, SIGKILL), 0);  // the group exists and can be signalled as one
  int st = 0;
  ASSERT_EQ(::waitpid(s.pid, &st, 0), s.pid);
  EXPECT_TRUE(WIFSIGNALED(st));

  const Spawned same = spawn_process({"/bin/sh", "-c", "exec sleep 30"});
  ASSERT_TRUE(same.ok()) << same.error;
  EXPECT_EQ(::getpgid(same.pid), ::getpgrp());  // without it: the parent's group
  ::kill(same.pid, SIGKILL);
  ::waitpid(same.pid, &st, 0);
}

TEST(SpawnProcess, DefaultSignalsUndoAnIgnoredSigterm) {
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  struct sigaction old {};
  ASSERT_EQ(::sigaction(SIGTERM, &ignore, &old), 0);
  SpawnOptions inherits;
  const Spawned a = spawn_process({"/bin/sh", "-c", "kill -TERM $$; exit 3"}, inherits);
  SpawnOptions resets;
  resets.default_signals = true;
  const Spawned b = spawn_process({"/bin/sh", "-c", "kill -TERM $$; exit 3"}, resets);
  ::sigaction(SIGTERM, &old, nullptr);
  ASSERT_TRUE(a.ok()) << a.error;
  ASSERT_TRUE(b.ok()) << b.error;
  EXPECT_EQ(wait_exit(a.pid), 3) << "an ignored SIGTERM is inherited";
  int st = 0;
  ASSERT_EQ(::waitpid(b.pid, &st, 0), b.pid);
  ASSERT_TRUE(WIFSIGNALED(st));
  EXPECT_EQ(WTERMSIG(st), SIGTERM);
}

}  // namespace
}  // namespace fieldproof::util
