// `fieldproof world W --spawn NAME@X,Y --goal X2,Y2 --max-rtf 0` end to end with the reference
// stack, on test worlds written like Gazebo's own examples (no frames, primitive shapes, SDF 1.6
// to 1.11): the vehicle spawns at a pose and drives to the goal, including goals outside the
// obstacles' bounding box and in a world with no obstacles at all. And the --spawn syntax's
// errors (exit 2, with a message).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "integration/cli_test_util.hpp"

namespace fieldproof::world {
namespace {

using integration::run_cli;

void expect_arrives(const std::string& world, const std::string& spawn, const std::string& goal,
                    const std::string& from) {
  const auto r = run_cli("world tests/world/data/" + world + " --spawn " + spawn +
                         " --goal=" + goal + " --max-rtf 0 --until 90s --seed 5");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("ugv1: from " + from), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("arrived (status succeeded)"), std::string::npos) << r.out;
}

TEST(WorldCliGazeboStyle, DrivesAcrossAWorldWithNoObstacles) {
  // Before the map covered the world's extent, this stack failed to start: a 0 x 0 map.
  expect_arrives("empty.sdf", "ugv1@0,0", "8,-5", "(0.00, 0.00, 0.00)");
}

TEST(WorldCliGazeboStyle, DrivesAroundTheShapesToAGoalOutsideTheirBoundingBox) {
  expect_arrives("shapes.sdf", "ugv1@-3,0.2,0.3", "4,5", "(-3.00, 0.20, 0.30)");
}

TEST(WorldCliGazeboStyle, DrivesAcrossAWalledRoomAroundTheTable) {
  expect_arrives("walled_room.sdf", "ugv1@-3.5,-2.5", "3.5,2.5", "(-3.50, -2.50, 0.00)");
}

TEST(WorldCliGazeboStyle, EachSpawnHasItsOwnPoseAndYaw) {
  // No goal (one goal for both would have them meet there): they stand, exit 1.
  const auto r = run_cli(
      "world tests/world/data/empty.sdf --spawn ugv1@0,0 --spawn ugv2@-2,3,3.14159 "
      "--max-rtf 0 --until 1s");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("ugv1: from (0.00, 0.00, 0.00) to (0.00, 0.00, 0.00)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("ugv2: from (-2.00, 3.00, 3.14) to (-2.00, 3.00, 3.14)"), std::string::npos)
      << r.out;
}

TEST(WorldCliGazeboStyle, ASpawnInsideAShapeExitsTwoNamingIt) {
  const auto r = run_cli("world tests/world/data/shapes.sdf --spawn ugv1@0,1.4 --goal 4,5");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("sphere::sphere_link::sphere_collision"), std::string::npos) << r.out;
}

TEST(WorldCliSpawnSyntax, AMalformedPoseExitsTwoWithTheExpectedForms) {
  for (const char* bad : {"ugv1@1,", "ugv1@1,2,3,4", "ugv1@x,2", "ugv1@1,nan", "@1,2", "ugv1@"}) {
    const auto r = run_cli(std::string("world tests/world/data/empty.sdf --spawn ") + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << "\n" << r.out;
    EXPECT_NE(r.out.find("expected NAME@FRAME or NAME@X,Y[,YAW]"), std::string::npos) << bad << "\n"
                                                                                      << r.out;
  }
}

TEST(WorldCliSpawnSyntax, AFrameNameInAWorldWithoutFramesExitsTwo) {
  const auto r = run_cli("world tests/world/data/empty.sdf --spawn ugv1@dock");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("frames: none"), std::string::npos) << r.out;
}

TEST(WorldCliSpawnSyntax, ABadGoalExitsTwo) {
  const auto r = run_cli("world tests/world/data/empty.sdf --spawn ugv1@0,0 --goal=1,2,x");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--goal '1,2,x'"), std::string::npos) << r.out;
}

TEST(WorldCliSpawnSyntax, TwoVehiclesOfOneNameExitTwo) {
  const auto r = run_cli("world tests/world/data/empty.sdf --spawn ugv1@0,0 --spawn ugv1@3,3");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("the name is taken"), std::string::npos) << r.out;
}

// --- fieldproof run: the scenario's map section and spawn poses on Gazebo-style worlds ---

using integration::fresh_runs_dir;
using integration::read_file;
using integration::run_json;
namespace fs = std::filesystem;

std::map<std::string, std::string> verdicts(const fs::path& dir) {
  std::map<std::string, std::string> out;
  if (!fs::exists(dir / "run.json")) return out;
  const nlohmann::json run = run_json(dir);  // kept: the loop reads into it
  for (const auto& a : run["assertions"]) {
    out[a["name"].get<std::string>()] = a["status"].get<std::string>();
  }
  return out;
}

// A copy of a scenario of tests/world/data with text replaced (each `from` must occur), its world
// made absolute.
fs::path variant(const std::string& scenario, const std::string& test,
                 const std::vector<std::pair<std::string, std::string>>& edits) {
  std::string text = read_file("tests/world/data/" + scenario);
  const auto replace = [&](const std::string& from, const std::string& to) {
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << "not in " << scenario << ": " << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
  };
  const std::string world = text.substr(text.find("world: ") + 7);
  const std::string name = world.substr(0, world.find('\n'));
  replace("world: " + name, "world: " + fs::absolute("tests/world/data/" + name).string());
  for (const auto& [from, to] : edits) replace(from, to);
  const fs::path dir = fs::path(FIELDPROOF_TEST_TMP) / ("variant_" + test);
  fs::create_directories(dir);
  const fs::path file = dir / scenario;
  std::ofstream(file) << text;
  return file;
}

TEST(RunGazeboStyle, DrivesToAGoalOutsideTheShapesBoundingBoxOnTheStatedMap) {
  const fs::path runs = fresh_runs_dir("shapes_map");
  const auto r = run_cli(
      "run tests/world/data/shapes_beyond_the_shapes.yaml --max-rtf 0 "
      "--runs-dir " +
      runs.string() + " --run-id a");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  const auto v = verdicts(runs / "a");
  EXPECT_EQ(v.count("reached_goal") ? v.at("reached_goal") : "", "passed") << r.out;
  EXPECT_EQ(v.count("no_collision") ? v.at("no_collision") : "", "passed") << r.out;
}

TEST(RunGazeboStyle, AGoalOutsideTheStatedBoundsIsRejectedByTheStack) {
  // The same drive on a map that ends at y = 6: the goal at y = 7 is outside it.
  const fs::path file =
      variant("shapes_beyond_the_shapes.yaml", "small_map",
              {{"y_min: -6, y_max: 10", "y_min: -6, y_max: 6"}, {"within_s: 80s", "within_s: 5s"}});
  const fs::path runs = fresh_runs_dir("shapes_small_map");
  const auto r =
      run_cli("run " + file.string() + " --max-rtf 0 --runs-dir " + runs.string() + " --run-id a");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  // The rejected goal is a failed action: it ends the run failed, and what it would have judged
  // (reached_goal) is skipped, not judged on a run cut short.
  EXPECT_EQ(verdicts(runs / "a")["reached_goal"], "skipped") << r.out;
  EXPECT_NE(r.out.find("timeline entry drive (navigate_to_pose) ended rejected"), std::string::npos)
      << r.out;
  const std::string log = read_file(runs / "a" / "engine.log");
  EXPECT_NE(log.find("is outside the map [-8.00, 8.00] x [-6.00, 6.00]"), std::string::npos) << log;
}

TEST(RunGazeboStyle, AProcessStackPlansOnTheSameStatedMap) {
  const fs::path runs = fresh_runs_dir("room_process");
  const auto r = run_cli(
      "run tests/world/data/walled_room_process.yaml --max-rtf 0 "
      "--runs-dir " +
      runs.string() + " --run-id a");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(verdicts(runs / "a")["reached_goal"], "passed") << r.out;
}

TEST(RunGazeboStyle, ASpawnPoseInsideAShapeIsRefusedAtValidate) {
  const fs::path file = variant("shapes_beyond_the_shapes.yaml", "spawn_in_box",
                                {{"spawn: {x: -3, y: 0.2, z: 0.05, yaw: 0.3}",
                                  "spawn: {x: 0.2, y: 0.1, z: 0.05, yaw: 0.3}"}});
  const auto r = run_cli("validate " + file.string());
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("shapes_beyond_the_shapes.yaml:13:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("box::box_link::box_collision"), std::string::npos) << r.out;
}

TEST(RunGazeboStyle, BadMapBoundsExitTwoWithFileAndLine) {
  const fs::path file = variant("shapes_beyond_the_shapes.yaml", "bad_bounds",
                                {{"x_min: -8, x_max: 8", "x_min: 8, x_max: -8"}});
  const auto r = run_cli("validate " + file.string());
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("shapes_beyond_the_shapes.yaml:9:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("map.bounds.x_max: must be greater than x_min (8), got -8"),
            std::string::npos)
      << r.out;
}

TEST(RunGazeboStyle, AWorldExtentOverAHundredMillionCellsIsRefusedWithTheNumbers) {
  // No bounds: the world's extent, its 100 x 100 m ground plus 0.5 m, at 5 mm is 4.08e8 cells.
  const fs::path file =
      variant("shapes_beyond_the_shapes.yaml", "huge_map",
              {{"  bounds: {x_min: -8, x_max: 8, y_min: -6, y_max: 10}\n  resolution: 0.05",
                "  resolution: 0.005"}});
  for (const std::string& command :
       {"validate " + file.string(),
        "run " + file.string() + " --runs-dir " + fresh_runs_dir("huge_map").string()}) {
    const auto r = run_cli(command);
    EXPECT_EQ(r.exit_code, 2) << command << "\n" << r.out;
    EXPECT_NE(r.out.find("shapes_beyond_the_shapes.yaml:9:"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("the world's extent, 101 x 101 m, at 0.005 m per cell is 4.0804e+08 "
                         "cells, more than the 1e+08 a map may have"),
              std::string::npos)
        << r.out;
  }
}

}  // namespace
}  // namespace fieldproof::world
