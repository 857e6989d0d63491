// `fieldproof world`: the embedded world with the reference stack, end to end through the CLI.
#include <gtest/gtest.h>

#include "integration/cli_test_util.hpp"

namespace fieldproof::integration {
namespace {

TEST(WorldCli, AVehicleReachesGoalAInProcess) {
  const auto r = run_cli(
      "world examples/worlds/depot.sdf --spawn ugv1@dock --goal goal_a "
      "--until 120s --seed 7");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("ugv1: from (-11.90, 0.00, 0.00)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("arrived (status succeeded)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("RTF"), std::string::npos) << r.out;
}

TEST(WorldCli, AVehicleReachesGoalAWithTheStackAsAProcess) {
  const auto r = run_cli(
      "world examples/worlds/depot.sdf --spawn ugv1@dock --goal 10,-1 "
      "--until 120s --seed 7 --process");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("arrived (status succeeded)"), std::string::npos) << r.out;
}

TEST(WorldCli, TheProcessAndInProcessStacksEndAtTheSamePose) {
  const std::string args =
      "world examples/worlds/depot.sdf --spawn ugv1@dock --goal goal_b --until 120s --seed 3";
  const auto a = run_cli(args);
  const auto b = run_cli(args + " --process");
  ASSERT_EQ(a.exit_code, 0) << a.out;
  ASSERT_EQ(b.exit_code, 0) << b.out;
  // Compare the vehicle's summary line, not the first line: stderr is unbuffered, so a teardown
  // warning from the process run can come before the (buffered) summary on stdout.
  const auto summary = [](const std::string& out) {
    const auto at = out.find("ugv1: from");
    return at == std::string::npos ? std::string() : out.substr(at, out.find('\n', at) - at);
  };
  ASSERT_FALSE(summary(a.out).empty()) << a.out;
  EXPECT_EQ(summary(a.out), summary(b.out)) << a.out << "\n----\n" << b.out;
}

TEST(WorldCli, MaxRtfCapsThePace) {
  const auto r = run_cli(
      "world examples/worlds/depot.sdf --spawn ugv1@dock --until 1s "
      "--max-rtf 5");
  EXPECT_EQ(r.exit_code, 1) << r.out;  // no goal: nothing arrives
  const auto at = r.out.find("RTF ");
  ASSERT_NE(at, std::string::npos) << r.out;
  const double rtf = std::stod(r.out.substr(at + 4));
  EXPECT_GT(rtf, 0.0);
  EXPECT_LE(rtf, 5.05) << r.out;
}

TEST(WorldCli, AGoalInsideAnObstacleExitsOne) {
  const auto r =
      run_cli("world examples/worlds/depot.sdf --spawn ugv1@dock --goal 2,-0.5 --until 10s");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("did not arrive (status rejected"), std::string::npos) << r.out;
}

TEST(WorldCli, AGoalTheVehicleCannotReachInTimeExitsOne) {
  const auto r =
      run_cli("world examples/worlds/depot.sdf --spawn ugv1@dock --goal goal_a --until 2s");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("did not arrive (status accepted)"), std::string::npos) << r.out;
}

TEST(WorldCli, AnUnknownFrameExitsTwoNamingTheFrames) {
  const auto r = run_cli("world examples/worlds/depot.sdf --spawn ugv1@nowhere");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("no frame 'nowhere'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("dock"), std::string::npos) << r.out;
}

TEST(WorldCli, AnUnknownGoalFrameExitsTwo) {
  const auto r = run_cli("world examples/worlds/depot.sdf --spawn ugv1@dock --goal nowhere");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--goal nowhere: no such frame"), std::string::npos) << r.out;
}

TEST(WorldCli, ASpawnInsideAnObstacleExitsTwo) {
  const auto r = run_cli("world tests/integration/data/crate_on_dock.sdf --spawn ugv1@dock");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("ugv1"), std::string::npos) << r.out;
}

TEST(WorldCli, AnSdfThatDoesNotParseExitsTwoWithFileAndLine) {
  const auto r = run_cli("world tests/integration/data/broken.sdf --spawn ugv1@dock");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("broken.sdf:"), std::string::npos) << r.out;
}

TEST(WorldCli, AMissingWorldFileExitsTwo) {
  const auto r = run_cli("world tests/integration/data/missing.sdf --spawn ugv1@dock");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("does not exist"), std::string::npos) << r.out;
}

TEST(WorldCli, AMalformedSpawnExitsTwo) {
  const auto r = run_cli("world examples/worlds/depot.sdf --spawn ugv1");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("expected NAME@FRAME"), std::string::npos) << r.out;
}

TEST(WorldCli, ABadUntilExitsTwo) {
  const auto r = run_cli("world examples/worlds/depot.sdf --spawn ugv1@dock --until soon");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--until 'soon'"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace fieldproof::integration
