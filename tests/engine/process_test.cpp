// ChildProcess: started in its own process group, ended as a group (a grandchild too).
#include "fieldproof/engine/process.hpp"

#include "fieldproof/engine/session.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fieldproof::engine {
namespace {

TEST(ChildProcess, RunsInItsOwnProcessGroup) {
  ChildProcess p;
  std::string error;
  ASSERT_TRUE(p.start({"/bin/sh", "-c", "sleep 30"}, {}, &error)) << error;
  EXPECT_EQ(getpgid(p.pid()), p.pid());
  p.terminate_group(milliseconds(500));
  ASSERT_TRUE(p.exited().has_value());
}

TEST(ChildProcess, TerminatingTheGroupEndsAGrandchildToo) {
  ChildProcess p;
  std::string error;
  // The shell starts a background grandchild and waits on it.
  ASSERT_TRUE(p.start({"/bin/sh", "-c", "sleep 30 & wait"}, {}, &error)) << error;
  const pid_t group = p.pid();
  p.terminate_group(milliseconds(500));
  // Nothing is left in the group: signalling it fails with ESRCH (zombies aside, reaped by init).
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    gone = kill(-group, 0) != 0;
    if (!gone) usleep(10'000);
  }
  EXPECT_TRUE(gone);
}

TEST(ChildProcess, PassesTheEnvironment) {
  ChildProcess p;
  std::string error;
  ASSERT_TRUE(p.start({"/bin/sh", "-c", "test \"$FIELDPROOF_VEHICLE\" = ugv1"},
                      {{"FIELDPROOF_VEHICLE", "ugv1"}}, &error))
      << error;
  int st = 0;
  ASSERT_EQ(waitpid(p.pid(), &st, 0), p.pid());
  EXPECT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 0);
}

TEST(ChildProcess, StartsInTheWorkingDirectoryAndAppendsToTheLogFile) {
  const std::string dir = ::testing::TempDir() + "/child_cwd";
  std::filesystem::create_directories(dir);
  const std::string log = dir + "/logs/child.log";
  std::filesystem::remove(log);
  ChildProcess p;
  std::string error;
  ASSERT_TRUE(p.start({"/bin/sh", "-c", "pwd; echo to-stderr >&2"}, {}, &error, log, dir)) << error;
  int st = 0;
  ASSERT_EQ(waitpid(p.pid(), &st, 0), p.pid());
  std::ifstream in(log);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), std::filesystem::canonical(dir).string() + "\nto-stderr\n");
}

TEST(ChildProcess, AWorkingDirectoryThatIsNotOneIsAnError) {
  ChildProcess p;
  std::string error;
  EXPECT_FALSE(p.start({"/bin/true"}, {}, &error, "", "/no/such/dir"));
  EXPECT_NE(error.find("/no/such/dir"), std::string::npos) << error;
}

TEST(ChildProcess, AMissingProgramIsAnError) {
  ChildProcess p;
  std::string error;
  EXPECT_FALSE(p.start({"/no/such/program"}, {}, &error));
  EXPECT_NE(error.find("/no/such/program"), std::string::npos);
}

TEST(SessionStackPid, IsZeroForAnInProcessStackAndMinusOneForAnUnknownVehicle) {
  SessionOptions o;
  o.world_file = "examples/worlds/depot.sdf";
  VehicleSetup v;
  v.name = "ugv1";
  v.frame = "dock";
  o.vehicles = {v};
  auto s = Session::create(o);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ((*s)->stack_pid("ugv1"), 0);
  EXPECT_EQ((*s)->stack_pid("ugv9"), -1);
}

}  // namespace
}  // namespace fieldproof::engine
