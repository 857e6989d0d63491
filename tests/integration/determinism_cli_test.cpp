// `fieldproof run SCENARIO --check-determinism`: two runs with the same seed give identical
// ordered streams (lockstep, stack in-process); a difference (a test-only second seed) is
// reported with the first message that differs, exit 1.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

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
