// ChildProcess: started in its own process group, ended as a group (a grandchild too).
#include "fieldproof/engine/process.hpp"

#include "fieldproof/engine/session.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

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

TEST(ChildProcess, AMissingProgramIsAnError) {
  ChildProcess p;
  std::string error;
  EXPECT_FALSE(p.start({"/no/such/program"}, {}, &error));
  EXPECT_NE(error.find("/no/such/program"), std::string::npos);
}

using Argv = std::vector<std::string>;

TEST(StackArgv, WithoutACommandTheReferenceStackGetsVehicleWorldAndParams) {
  VehicleSetup v;
  v.name = "ugv1";
  v.params_json = "{}";
  EXPECT_EQ(stack_argv(v, "/bin/nav", "w.sdf"),
            (Argv{"/bin/nav", "--vehicle", "ugv1", "--world", "w.sdf", "--params", "{}"}));
}

TEST(StackArgv, TheScenarioCommandsArgumentsArePassedAsGivenAndNotDuplicated) {
  VehicleSetup v;
  v.name = "ugv1";
  v.command = {"fieldproof-ugv-nav", "--vehicle", "ugv1", "--name", "custom_nav"};
  EXPECT_EQ(stack_argv(v, "/bin/nav", "w.sdf"),
            (Argv{"/bin/nav", "--vehicle", "ugv1", "--name", "custom_nav", "--world", "w.sdf"}));
}

TEST(StackArgv, AProgramGivenByPathIsKept) {
  VehicleSetup v;
  v.name = "ugv2";
  v.command = {"/opt/stack/bin/fieldproof-ugv-nav", "--world", "other.sdf"};
  EXPECT_EQ(
      stack_argv(v, "/bin/nav", "w.sdf"),
      (Argv{"/opt/stack/bin/fieldproof-ugv-nav", "--world", "other.sdf", "--vehicle", "ugv2"}));
}

TEST(SessionStackPid, IsZeroForAnInProcessStackAndMinusOneForAnUnknownVehicle) {
  SessionOptions o;
  o.world_file = "examples/worlds/depot.sdf";
  VehicleSetup v;
  v.name = "ugv1";
  v.frame = "dock";
  o.vehicles = {v};
  std::string error;
  auto s = Session::create(o, &error);
  ASSERT_TRUE(s) << error;
  EXPECT_EQ(s->stack_pid("ugv1"), 0);
  EXPECT_EQ(s->stack_pid("ugv9"), -1);
}

}  // namespace
}  // namespace fieldproof::engine
