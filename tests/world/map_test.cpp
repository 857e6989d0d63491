// The map a stack plans on (World::occupancy_grid over the world's extent) and spawning at poses,
// on test worlds written in the style of Gazebo's own examples (tests/world/data: no frames,
// primitive shapes, SDF 1.6 to 1.11).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "fieldproof/world/world.hpp"
#include "world/world_test_util.hpp"

namespace fieldproof::world {
namespace {

std::string data(const std::string& name) { return "tests/world/data/" + name; }

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

size_t occupied_cells(const OccupancyGrid& g) {
  size_t n = 0;
  for (uint8_t c : g.cells) n += c != OccupancyGrid::kFree;
  return n;
}

// Loads a test world, failing the test (not crashing) when it does not load.
std::unique_ptr<World> load(const std::string& name, std::vector<std::string>* warnings = nullptr) {
  LoadResult r = World::load(data(name));
  for (const auto& e : r.errors) ADD_FAILURE() << name << ": " << e;
  if (warnings) *warnings = r.warnings;
  return std::move(r.world);
}

class GazeboStyleWorld : public ::testing::TestWithParam<const char*> {};

TEST_P(GazeboStyleWorld, LoadsWithoutFramesAndSpawnsAUgvAtAPose) {
  auto w = load(GetParam());
  ASSERT_TRUE(w);
  EXPECT_TRUE(w->frames().empty());
  ASSERT_TRUE(w->spawn_vehicle("ugv1", Pose2D{-3.0, -2.5, 0.5}).ok());
  const auto v = w->vehicle("ugv1");
  ASSERT_TRUE(v);
  EXPECT_DOUBLE_EQ(v->pose.x, -3.0);
  EXPECT_DOUBLE_EQ(v->pose.y, -2.5);
  EXPECT_DOUBLE_EQ(v->pose.yaw, 0.5);
  // And it drives: a second of 0.5 m/s straight ahead moves it about 0.5 m along its heading.
  ASSERT_TRUE(w->set_cmd_vel("ugv1", {0.5, 0.0}).ok());
  w->step_n(static_cast<int64_t>(1'000'000'000 / w->step_size().ns()));
  const auto after = w->vehicle("ugv1");
  const double moved = std::hypot(after->pose.x - v->pose.x, after->pose.y - v->pose.y);
  EXPECT_GT(moved, 0.3);
  EXPECT_LT(moved, 0.55);
}

TEST_P(GazeboStyleWorld, TheMapCoversTheGroundPlaneAndTheSpawnIsFree) {
  auto w = load(GetParam());
  ASSERT_TRUE(w);
  ASSERT_TRUE(w->spawn_vehicle("ugv1", Pose2D{-3.0, -2.5, 0.0}).ok());
  const OccupancyGrid g = w->occupancy_grid(0.05);
  ASSERT_GT(g.width, 0);
  ASSERT_GT(g.height, 0);
  ASSERT_EQ(g.cells.size(), static_cast<size_t>(g.width) * g.height);
  // Every test world's ground plane is centred on the origin and at least 30 m across.
  EXPECT_LE(g.origin_x, -15.0);
  EXPECT_LE(g.origin_y, -15.0);
  EXPECT_GE(g.origin_x + g.width * g.resolution, 15.0);
  EXPECT_GE(g.origin_y + g.height * g.resolution, 15.0);
  EXPECT_FALSE(g.occupied_at(-3.0, -2.5));
  EXPECT_FALSE(g.occupied_at(3.5, 2.5));
}

INSTANTIATE_TEST_SUITE_P(TestWorlds, GazeboStyleWorld,
                         ::testing::Values("empty.sdf", "shapes.sdf", "walled_room.sdf"));

TEST(GazeboStyleWorlds, EverySdfVersionFrom16To111Loads) {
  const std::string text = read(data("walled_room.sdf"));
  const std::string tag = "<sdf version=\"1.11\">";
  ASSERT_NE(text.find(tag), std::string::npos);
  for (const char* v : {"1.6", "1.7", "1.8", "1.9", "1.10", "1.11"}) {
    std::string t = text;
    t.replace(t.find(tag), tag.size(), std::string("<sdf version=\"") + v + "\">");
    LoadResult r = World::load_string(t, {}, std::string("room_") + v + ".sdf");
    EXPECT_TRUE(r.world) << v << ": " << (r.errors.empty() ? "" : r.errors[0]);
    if (r.world) {
      EXPECT_EQ(r.world->static_shapes().size(), 6u) << v;
    }
  }
}

TEST(GazeboStyleWorlds, AnEmptyWorldGivesAFreeMapOfItsGround) {
  auto w = load("empty.sdf");
  ASSERT_TRUE(w);
  const OccupancyGrid g = w->occupancy_grid(0.05);
  // 100 m of ground plus 0.5 m on each side, at 5 cm.
  EXPECT_EQ(g.width, 2020);
  EXPECT_EQ(g.height, 2020);
  EXPECT_NEAR(g.origin_x, -50.5, 1e-9);
  EXPECT_EQ(occupied_cells(g), 0u);
  EXPECT_FALSE(g.occupied_at(49.0, -49.0));
  EXPECT_TRUE(g.occupied_at(60.0, 0.0));  // outside the map
}

TEST(GazeboStyleWorlds, ShapesAreObstaclesAndUnsupportedOnesAreLeftOutWithAWarning) {
  std::vector<std::string> warnings;
  auto w = load("shapes.sdf", &warnings);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->static_shapes().size(), 3u);  // box, cylinder, sphere
  int left_out = 0;
  for (const auto& m : warnings) {
    EXPECT_NE(m.find("shapes.sdf:"), std::string::npos) << m;  // every warning says where
    if (m.find("left out") == std::string::npos) continue;
    if (m.find("capsule") != std::string::npos || m.find("ellipsoid") != std::string::npos) {
      ++left_out;
      EXPECT_NE(m.find("shapes.sdf:"), std::string::npos) << m;
    }
  }
  EXPECT_EQ(left_out, 2);
  const OccupancyGrid g = w->occupancy_grid(0.05);
  EXPECT_TRUE(g.occupied_at(0.0, 0.0));     // box
  EXPECT_TRUE(g.occupied_at(0.0, -1.5));    // cylinder
  EXPECT_TRUE(g.occupied_at(0.0, 1.5));     // sphere
  EXPECT_FALSE(g.occupied_at(0.0, 3.0));    // the ellipsoid, left out
  EXPECT_FALSE(g.occupied_at(20.0, 20.0));  // far outside the shapes' bounding box: free
}

TEST(GazeboStyleWorlds, ASpawnInsideAShapeIsRefusedNamingIt) {
  auto w = load("shapes.sdf");
  ASSERT_TRUE(w);
  const Status s = w->spawn_vehicle("ugv1", Pose2D{0.2, 0.0, 0.0});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("box::box_link::box_collision"), std::string::npos) << s.message();
  EXPECT_TRUE(w->vehicles().empty());
}

TEST(GazeboStyleWorlds, TheRoomsWallsAreResolvedThroughTheRotatedModel) {
  auto w = load("walled_room.sdf");
  ASSERT_TRUE(w);
  const OccupancyGrid g = w->occupancy_grid(0.05);
  EXPECT_TRUE(g.occupied_at(-5.0, 0.0));
  EXPECT_TRUE(g.occupied_at(5.0, 3.0));
  EXPECT_TRUE(g.occupied_at(0.0, 4.0));
  EXPECT_TRUE(g.occupied_at(0.0, -4.0));
  EXPECT_TRUE(g.occupied_at(1.0, 0.0));   // the nested table
  EXPECT_TRUE(g.occupied_at(-2.0, 1.5));  // the pillar
  EXPECT_FALSE(g.occupied_at(-3.0, -2.5));
  EXPECT_FALSE(g.occupied_at(10.0, 10.0));  // outside the room, on the ground: free
}

// --- The map's extent, margins, bounds and size limit ---

TEST(MapExtent, AWorldWithNothingGivesAValidFreeGridAroundTheOrigin) {
  auto w = World::empty("void", milliseconds(1));
  const OccupancyGrid g = w->occupancy_grid(0.05);
  ASSERT_GT(g.width, 0);
  ASSERT_GT(g.height, 0);
  EXPECT_EQ(g.cells.size(), static_cast<size_t>(g.width) * g.height);
  EXPECT_EQ(occupied_cells(g), 0u);
  // open_margin (10 m) around the origin.
  EXPECT_FALSE(g.occupied_at(-9.9, 9.9));
  EXPECT_TRUE(g.occupied_at(10.5, 0.0));
}

TEST(MapExtent, AnUnboundedWorldGetsTheOpenMarginAroundWhatStandsAndTheVehicles) {
  auto w = World::empty("open", milliseconds(1));
  ASSERT_TRUE(w->spawn_static("b", {testing::box_shape(1.0, 1.0, 1.0, 1.0)}).ok());
  ASSERT_TRUE(w->spawn_vehicle("ugv1", Pose2D{30.0, -20.0, 0.0}).ok());
  MapOptions o;
  o.resolution = 0.1;
  o.open_margin = 4.0;
  const MapBounds b = w->map_bounds(o);
  EXPECT_NEAR(b.min_x, 0.5 - 4.0, 1e-9);
  EXPECT_NEAR(b.max_y, 1.5 + 4.0, 1e-9);
  EXPECT_NEAR(b.max_x, 30.3 + 4.0, 1e-9);   // the chassis is 0.6 m long
  EXPECT_NEAR(b.min_y, -20.2 - 4.0, 1e-9);  // and 0.4 m wide
  const OccupancyGrid g = w->occupancy_grid(o);
  EXPECT_FALSE(g.occupied_at(30.0, -20.0));  // the vehicle stands on the map, on free cells
  EXPECT_FALSE(g.occupied_at(33.0, -23.0));
  EXPECT_TRUE(g.occupied_at(1.0, 1.0));
}

TEST(MapExtent, FramesAreInsideTheMap) {
  const std::string sdf = R"(<?xml version="1.0"?><sdf version="1.9"><world name="f">
      <frame name="far"><pose>40 -25 0 0 0 0</pose></frame></world></sdf>)";
  LoadResult r = World::load_string(sdf);
  ASSERT_TRUE(r.world) << r.errors.at(0);
  const OccupancyGrid g = r.world->occupancy_grid(0.1);
  EXPECT_FALSE(g.occupied_at(40.0, -25.0));
}

TEST(MapExtent, ExplicitBoundsAreCoveredExactly) {
  auto w = load("shapes.sdf");
  ASSERT_TRUE(w);
  MapOptions o;
  o.resolution = 0.1;
  o.bounds = MapBounds{-2.0, -3.0, 6.0, 5.0};
  const OccupancyGrid g = w->occupancy_grid(o);
  EXPECT_NEAR(g.origin_x, -2.0, 1e-9);
  EXPECT_NEAR(g.origin_y, -3.0, 1e-9);
  EXPECT_EQ(g.width, 80);
  EXPECT_EQ(g.height, 80);
  EXPECT_TRUE(g.occupied_at(0.0, 0.0));
  EXPECT_TRUE(g.occupied_at(-10.0, 0.0));  // outside the bounds
}

TEST(MapExtent, BadOptionsAreRefusedNamingTheField) {
  auto w = World::empty("void", milliseconds(1));
  MapOptions o;
  o.bounds = MapBounds{1.0, 0.0, 1.0, 5.0};
  EXPECT_FALSE(o.validate().ok());
  EXPECT_NE(o.validate().message().find("bounds"), std::string::npos);
  EXPECT_THROW((void)w->occupancy_grid(o), std::invalid_argument);
  MapOptions m;
  m.margin = -1.0;
  EXPECT_NE(m.validate().message().find("margin"), std::string::npos);
  MapOptions c;
  c.max_cells = 0;
  EXPECT_NE(c.validate().message().find("max_cells"), std::string::npos);
  EXPECT_TRUE(MapOptions{}.validate().ok());
}

TEST(MapExtent, AHugeWorldIsCoarsenedToTheCellLimitWithAWarningNotAnError) {
  const std::string sdf = R"(<?xml version="1.0"?><sdf version="1.9"><world name="huge">
      <model name="ground_plane"><static>true</static><link name="link">
        <collision name="collision"><geometry><plane><normal>0 0 1</normal>
          <size>100000 100000</size></plane></geometry></collision></link></model>
      <model name="box"><static>true</static><pose>10 10 0.5 0 0 0</pose><link name="link">
        <collision name="collision"><geometry><box><size>2 2 1</size></box></geometry>
        </collision></link></model></world></sdf>)";
  std::vector<std::string> warnings;
  WorldOptions wo;
  wo.on_warning = [&warnings](const std::string& m) { warnings.push_back(m); };
  LoadResult r = World::load_string(sdf, wo, "huge.sdf");
  ASSERT_TRUE(r.world) << r.errors.at(0);
  OccupancyGrid g;
  ASSERT_NO_THROW(g = r.world->occupancy_grid(0.05));  // 4e12 cells at 5 cm
  const MapOptions defaults;
  EXPECT_LE(static_cast<int64_t>(g.width) * g.height, defaults.max_cells);
  EXPECT_GT(g.resolution, 20.0);  // 100 km in 4000 cells
  EXPECT_TRUE(g.occupied_at(10.0, 10.0));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("coarsened"), std::string::npos) << warnings[0];
  MapOptions small;
  small.max_cells = 10'000;
  const OccupancyGrid s = r.world->occupancy_grid(small);
  EXPECT_LE(static_cast<int64_t>(s.width) * s.height, 10'000);
}

TEST(MapExtent, CellsAreAlignedToTheWorldOrigin) {
  auto w = World::empty("open", milliseconds(1));
  ASSERT_TRUE(w->spawn_static("b", {testing::box_shape(0.33, 0.77, 1.0, 1.0)}).ok());
  const OccupancyGrid g = w->occupancy_grid(0.05);
  EXPECT_NEAR(std::remainder(g.origin_x, 0.05), 0.0, 1e-9);
  EXPECT_NEAR(std::remainder(g.origin_y, 0.05), 0.0, 1e-9);
}

TEST(MapExtent, ATiltedOrUnsizedGroundPlaneDoesNotBoundTheWorld) {
  const std::string sdf = R"(<?xml version="1.0"?><sdf version="1.9"><world name="g">
      <model name="ground_plane"><static>true</static><link name="link">
        <collision name="collision"><geometry><plane><normal>0 0 1</normal></plane>
        </geometry></collision></link></model></world></sdf>)";
  LoadResult r = World::load_string(sdf);
  ASSERT_TRUE(r.world) << r.errors.at(0);
  const MapBounds b = r.world->map_bounds();
  // No <size>: sdformat's 1 x 1 default means nothing; the open margin applies.
  EXPECT_NEAR(b.min_x, -MapOptions{}.open_margin, 1e-9);
  EXPECT_NEAR(b.max_y, MapOptions{}.open_margin, 1e-9);
}

}  // namespace
}  // namespace fieldproof::world
