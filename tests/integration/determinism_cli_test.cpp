// `fieldproof run SCENARIO --check-determinism`: two runs with the same seed give identical
// ordered streams (lockstep, stack in-process); a difference (a test-only second seed) is
// reported with the first message that differs, exit 1.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "integration/cli_test_util.hpp"

namespace fieldproof::integration {
namespace {

namespace fs = std::filesystem;

const char* kScenario = "tests/integration/data/nav_lockstep_inprocess.yaml";

TEST(DeterminismCli, TwoLockstepRunsOfNavToGoalAreIdentical) {
  const fs::path runs = fresh_runs_dir("determinism_same");
  const auto r = run_cli(std::string("run ") + kScenario +
                         " --check-determinism --max-rtf 0 --run-id d --runs-dir " + runs.string());
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("IDENTICAL: the ordered streams (recording) are identical"),
            std::string::npos)
      << r.out;
  EXPECT_TRUE(fs::exists(runs / "d-a" / "run.json"));
  EXPECT_TRUE(fs::exists(runs / "d-b" / "run.json"));
}

TEST(DeterminismCli, ADifferentSecondSeedIsReportedWithTheFirstDifferingMessage) {
  const fs::path runs = fresh_runs_dir("determinism_diff");
  const auto r = run_cli(std::string("run ") + kScenario +
                         " --check-determinism --max-rtf 0 --determinism-second-seed 8"
                         " --run-id d --runs-dir " +
                         runs.string());
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("DIFFERENT: the ordered streams (recording) differ at message"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("  a: /"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  b: /"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("first differing field: "), std::string::npos) << r.out;
}

// Two CPU-bound processes beside the run for the life of a test (a loaded machine).
class BusyProcesses {
 public:
  explicit BusyProcesses(int n) {
    for (int i = 0; i < n; ++i) {
      const pid_t pid = fork();
      if (pid == 0) {
        execl("/bin/sh", "sh", "-c", "while :; do :; done", static_cast<char*>(nullptr));
        _exit(127);
      }
      if (pid > 0) pids_.push_back(pid);
    }
  }
  ~BusyProcesses() {
    for (pid_t p : pids_) kill(p, SIGKILL);
    for (pid_t p : pids_) waitpid(p, nullptr, 0);
  }
  size_t count() const { return pids_.size(); }

 private:
  std::vector<pid_t> pids_;
};

// The lockstep example as a user runs it: the stack is the fieldproof-ugv-nav process.
void expect_identical_with_the_stack_as_a_process(const std::string& name,
                                                  const std::string& pace) {
  BusyProcesses busy(2);
  ASSERT_EQ(busy.count(), 2u);
  const fs::path runs = fresh_runs_dir(name);
  const auto r = run_cli("run examples/scenarios/ugv_lockstep.yaml --check-determinism " + pace +
                         " --run-id d --runs-dir " + runs.string());
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("IDENTICAL: the ordered streams (recording) are identical"),
            std::string::npos)
      << r.out;
}

TEST(DeterminismCli, TheLockstepExampleWithItsStackAsAProcessIsIdenticalUnpacedOnALoadedMachine) {
  expect_identical_with_the_stack_as_a_process("det_proc_unpaced", "--max-rtf 0");
}

TEST(DeterminismCli, TheLockstepExampleWithItsStackAsAProcessIsIdenticalPacedOnALoadedMachine) {
  expect_identical_with_the_stack_as_a_process("det_proc_paced", "--max-rtf 4");
}

TEST(DeterminismCli, AnInvalidScenarioStartsNothingAndExitsTwo) {
  const fs::path runs = fresh_runs_dir("determinism_invalid");
  const auto r = run_cli(
      "run tests/integration/data/unknown_key.yaml --check-determinism "
      "--runs-dir " +
      runs.string());
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_FALSE(fs::exists(runs / "unknown_key-determinism-1-a"));
}

}  // namespace
}  // namespace fieldproof::integration
