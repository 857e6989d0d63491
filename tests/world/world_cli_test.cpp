// `fieldproof world W --spawn NAME@X,Y --goal X2,Y2 --max-rtf 0` end to end with the reference
// stack, on test worlds written like Gazebo's own examples (no frames, primitive shapes, SDF 1.6
// to 1.11): the vehicle spawns at a pose and drives to the goal, including goals outside the
// obstacles' bounding box and in a world with no obstacles at all. And the --spawn syntax's
// errors (exit 2, with a message).
#include <gtest/gtest.h>

#include <string>

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

}  // namespace
}  // namespace fieldproof::world
