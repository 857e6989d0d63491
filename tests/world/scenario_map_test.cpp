// The scenario's map section (bounds, resolution) and spawn poses with z, as validated when the
// file is read: file:line and the field for bad bounds, the numbers for a map over 1e8 cells.
#include <gtest/gtest.h>

#include <string>

#include "fieldproof/scenario/scenario.hpp"

namespace fieldproof::scenario {
namespace {

const std::filesystem::path kScenarios =
    std::filesystem::absolute("examples/scenarios").lexically_normal();

ValidationResult load(const std::string& extra, const std::string& spawn = "{x: -3, y: 0.2}") {
  const std::string yaml =
      "name: map_test\n"
      "world: ../../tests/world/data/shapes.sdf\n" +
      extra +
      "vehicles:\n"
      "  - name: ugv1\n"
      "    spawn: " +
      spawn + "\n";
  return load_scenario_text(yaml, "map.yaml", kScenarios);
}

TEST(ScenarioMap, BoundsAndResolutionAreRead) {
  const ValidationResult r =
      load("map:\n  bounds: {x_min: -10, x_max: 12, y_min: -6, y_max: 8}\n  resolution: 0.1\n");
  ASSERT_TRUE(r.ok()) << r.format_errors();
  const MapSection& m = r.scenario->map;
  EXPECT_TRUE(m.given);
  ASSERT_TRUE(m.bounds);
  EXPECT_EQ(m.bounds->x_min, -10);
  EXPECT_EQ(m.bounds->x_max, 12);
  EXPECT_EQ(m.bounds->y_min, -6);
  EXPECT_EQ(m.bounds->y_max, 8);
  EXPECT_EQ(m.resolution, 0.1);
}

TEST(ScenarioMap, WithoutTheSectionTheMapIsTheWorldsAtFiveCentimetres) {
  const ValidationResult r = load("");
  ASSERT_TRUE(r.ok()) << r.format_errors();
  EXPECT_FALSE(r.scenario->map.given);
  EXPECT_FALSE(r.scenario->map.bounds);
  EXPECT_EQ(r.scenario->map.resolution, 0.05);
}

TEST(ScenarioMap, AResolutionAloneKeepsTheWorldsExtent) {
  const ValidationResult r = load("map: {resolution: 0.2}\n");
  ASSERT_TRUE(r.ok()) << r.format_errors();
  EXPECT_TRUE(r.scenario->map.given);
  EXPECT_FALSE(r.scenario->map.bounds);
  EXPECT_EQ(r.scenario->map.resolution, 0.2);
}

TEST(ScenarioMap, BoundsThatAreNoRectangleAreRefusedWithFileLineAndField) {
  const ValidationResult r =
      load("map:\n  bounds: {x_min: 5, x_max: 5, y_min: 1,\n           y_max: -1}\n");
  ASSERT_FALSE(r.ok());
  const std::string e = r.format_errors();
  EXPECT_NE(e.find("map.yaml:4:"), std::string::npos) << e;
  EXPECT_NE(e.find("map.bounds.x_max: must be greater than x_min (5), got 5"), std::string::npos)
      << e;
  EXPECT_NE(e.find("map.yaml:5:"), std::string::npos) << e;
  EXPECT_NE(e.find("map.bounds.y_max: must be greater than y_min (1), got -1"), std::string::npos)
      << e;
}

TEST(ScenarioMap, AMissingBoundIsRefused) {
  const ValidationResult r = load("map:\n  bounds: {x_min: 0, x_max: 5, y_min: 1}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.format_errors().find("y_max"), std::string::npos) << r.format_errors();
}

TEST(ScenarioMap, AResolutionNotAboveZeroIsRefused) {
  for (const char* bad : {"0", "-0.05"}) {
    const ValidationResult r = load(std::string("map: {resolution: ") + bad + "}\n");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.format_errors().find("map.yaml:3:"), std::string::npos) << r.format_errors();
    EXPECT_NE(r.format_errors().find("map.resolution"), std::string::npos) << r.format_errors();
  }
}

TEST(ScenarioMap, AMapOverAHundredMillionCellsIsRefusedWithTheNumbers) {
  // 1000 x 600 m at 5 cm: 20000 x 12000 = 2.4e8 cells.
  const ValidationResult r =
      load("map:\n  bounds: {x_min: -500, x_max: 500, y_min: 0, y_max: 600}\n");
  ASSERT_FALSE(r.ok());
  const std::string e = r.format_errors();
  EXPECT_NE(e.find("map.yaml:4:"), std::string::npos) << e;
  EXPECT_NE(e.find("1000 x 600 m at 0.05 m per cell is 2.4e+08 cells, more than the 1e+08"),
            std::string::npos)
      << e;
  // The same at 10 cm (6e7 cells) is accepted.
  EXPECT_TRUE(load("map:\n  bounds: {x_min: -500, x_max: 500, y_min: 0, y_max: 600}\n"
                   "  resolution: 0.1\n")
                  .ok());
}

TEST(ScenarioSpawn, APoseTakesZAndYaw) {
  const ValidationResult r = load("", "{x: 1.5, y: -2, z: 0.1, yaw: 1.57}");
  ASSERT_TRUE(r.ok()) << r.format_errors();
  const Placement& p = r.scenario->vehicles[0].spawn;
  EXPECT_FALSE(p.is_frame());
  EXPECT_EQ(p.x, 1.5);
  EXPECT_EQ(p.y, -2);
  ASSERT_TRUE(p.z);
  EXPECT_EQ(*p.z, 0.1);
  ASSERT_TRUE(p.yaw);
  EXPECT_EQ(*p.yaw, 1.57);
}

TEST(ScenarioSpawn, AZWithoutXAndYIsRefused) {
  const ValidationResult r = load("", "{z: 0.1}");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.format_errors().find("vehicles[0].spawn"), std::string::npos) << r.format_errors();
}

}  // namespace
}  // namespace fieldproof::scenario
