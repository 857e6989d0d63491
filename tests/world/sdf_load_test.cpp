#include <gtest/gtest.h>

#include <cmath>

#include "fieldproof/world/world.hpp"
#include "world_test_util.hpp"

namespace fieldproof::world {
namespace {

using testing::TempFile;

std::string world_sdf(const std::string& body) {
  return "<?xml version=\"1.0\"?>\n<sdf version=\"1.9\">\n<world name=\"w\">\n" + body +
         "</world>\n</sdf>\n";
}

std::string all(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "\n";
  return out;
}

TEST(SdfLoad, DepotHasPhysicsFramesAndModels) {
  LoadResult r = World::load(testing::depot_path());
  ASSERT_TRUE(r.world) << all(r.errors);
  EXPECT_TRUE(r.warnings.empty()) << all(r.warnings);
  const World& w = *r.world;
  EXPECT_EQ(w.name(), "depot");
  EXPECT_EQ(w.step_size(), milliseconds(1));
  EXPECT_EQ(w.target_real_time_factor(), 1.0);
  EXPECT_EQ(w.static_models().size(), 13u);  // ground, 4 walls, dock, 4 shelves, crate, pillar,
                                             // bollard
  EXPECT_EQ(w.static_shapes().size(), 12u);  // the ground plane is the floor, not an obstacle
  for (const char* f : {"dock", "goal_a", "goal_b", "goal_c"}) {
    EXPECT_TRUE(w.frame(f).has_value()) << f;
  }
  // dock is relative_to the loading dock (at x -13.9): resolved by sdformat.
  EXPECT_NEAR(w.frame("dock")->x, -11.9, 1e-9);
  EXPECT_NEAR(w.frame("dock")->y, 0.0, 1e-9);
  EXPECT_NEAR(w.frame("goal_b")->yaw, M_PI / 2, 1e-9);
}

// A run loads its world twice (plan, then session): the second load of an unchanged world that
// names no other file is the first one's outcome (sdf_loader.cpp). An edited file is parsed again.
TEST(SdfLoad, ASecondLoadOfTheSameWorldIsTheSameAndAnEditedOneIsParsedAgain) {
  const std::string box = "<model name=\"crate\"><static>true</static><pose>2 0 0.5 0 0 0</pose>"
                          "<link name=\"l\"><collision name=\"c\"><geometry><box><size>1 1 1"
                          "</size></box></geometry></collision></link></model>\n";
  TempFile f("memo.sdf", world_sdf(box));
  LoadResult a = World::load(f.path());
  LoadResult b = World::load(f.path());
  ASSERT_TRUE(a.world) << all(a.errors);
  ASSERT_TRUE(b.world) << all(b.errors);
  EXPECT_EQ(b.world->static_shapes().size(), a.world->static_shapes().size());
  EXPECT_EQ(b.warnings, a.warnings);
  EXPECT_NE(a.world.get(), b.world.get());  // two worlds, not one shared
  std::ofstream(f.path(), std::ios::trunc)
      << world_sdf(box + "<model name=\"crate2\"><static>true</static><pose>-2 0 0.5 0 0 0</pose>"
                         "<link name=\"l\"><collision name=\"c\"><geometry><box><size>1 1 1"
                         "</size></box></geometry></collision></link></model>\n");
  LoadResult c = World::load(f.path());
  ASSERT_TRUE(c.world) << all(c.errors);
  EXPECT_EQ(c.world->static_shapes().size(), a.world->static_shapes().size() + 1);
  // A world whose file becomes invalid is refused, not served from the earlier load.
  std::ofstream(f.path(), std::ios::trunc) << "<sdf version=\"1.9\"><world name=\"w\">";
  LoadResult d = World::load(f.path());
  EXPECT_FALSE(d.world);
  EXPECT_FALSE(d.errors.empty());
}

TEST(SdfLoad, MalformedXmlGivesFileAndLine) {
  TempFile f("broken.sdf",
             "<?xml version=\"1.0\"?>\n<sdf version=\"1.9\">\n<world name=\"w\">\n"
             "<model name=\"m\">\n<static>true</stat>\n</model></world></sdf>\n");
  LoadResult r = World::load(f.path());
  EXPECT_FALSE(r.world);
  ASSERT_FALSE(r.errors.empty());
  EXPECT_NE(r.errors[0].find(f.path() + ":5:"), std::string::npos) << r.errors[0];
}

TEST(SdfLoad, SdfSchemaErrorGivesFileAndLine) {
  TempFile f("dup.sdf", world_sdf("<model name=\"a\"><static>true</static><link name=\"l\"/>"
                                  "</model>\n<model name=\"a\"><static>true</static>"
                                  "<link name=\"l\"/></model>\n"));
  LoadResult r = World::load(f.path());
  EXPECT_FALSE(r.world);
  ASSERT_FALSE(r.errors.empty());
  EXPECT_NE(r.errors[0].find(f.path() + ":"), std::string::npos) << all(r.errors);
  EXPECT_NE(all(r.errors).find("a"), std::string::npos);
}

TEST(SdfLoad, MissingFileIsAnError) {
  LoadResult r = World::load("/nonexistent/nowhere.sdf");
  EXPECT_FALSE(r.world);
  ASSERT_FALSE(r.errors.empty());
  EXPECT_NE(r.errors[0].find("/nonexistent/nowhere.sdf"), std::string::npos) << r.errors[0];
}

TEST(SdfLoad, UnsupportedGeometryIsNamedInAWarning) {
  LoadResult r = World::load_string(world_sdf(R"(
<model name="statue"><static>true</static><link name="body">
  <collision name="shell"><geometry><mesh><uri>statue.dae</uri></mesh></geometry></collision>
  <collision name="base"><geometry><box><size>1 1 1</size></box></geometry></collision>
</link></model>
<model name="fence"><static>true</static><link name="l">
  <collision name="c"><geometry><capsule><radius>0.1</radius><length>1</length></capsule></geometry></collision>
</link></model>
)"));
  ASSERT_TRUE(r.world) << all(r.errors);
  const std::string w = all(r.warnings);
  EXPECT_NE(w.find("statue::body::shell"), std::string::npos) << w;
  EXPECT_NE(w.find("mesh"), std::string::npos) << w;
  EXPECT_NE(w.find("fence::l::c"), std::string::npos) << w;
  EXPECT_NE(w.find("capsule"), std::string::npos) << w;
  EXPECT_EQ(r.world->static_shapes().size(), 1u);  // the box stays
}

TEST(SdfLoad, NonStaticModelIsSimulatedStaticWithAWarning) {
  LoadResult r = World::load_string(world_sdf(R"(
<model name="cart"><pose>1 0 0.5 0 0 0</pose><link name="l">
  <collision name="c"><geometry><box><size>1 1 1</size></box></geometry></collision>
</link></model>)"));
  ASSERT_TRUE(r.world) << all(r.errors);
  EXPECT_NE(all(r.warnings).find("cart"), std::string::npos);
  EXPECT_EQ(r.world->static_shapes().size(), 1u);
}

TEST(SdfLoad, RelativePosesAreResolvedToTheWorld) {
  LoadResult r = World::load_string(world_sdf(R"(
<model name="rack"><static>true</static><pose>2 1 0 0 0 1.5707963267948966</pose>
  <link name="l"><pose>1 0 0 0 0 0</pose>
    <collision name="c"><pose>0 0.5 0.5 0 0 0</pose>
      <geometry><box><size>2 0.4 1</size></box></geometry></collision>
  </link>
</model>
<frame name="spot"><pose relative_to="rack">1 0 0 0 0 0</pose></frame>
)"));
  ASSERT_TRUE(r.world) << all(r.errors);
  ASSERT_EQ(r.world->static_shapes().size(), 1u);
  const StaticShape& s = r.world->static_shapes()[0];
  // Model yaw 90°: link x+1 becomes world y+1, collision y+0.5 becomes world x-0.5.
  EXPECT_NEAR(s.pose.x, 1.5, 1e-9);
  EXPECT_NEAR(s.pose.y, 2.0, 1e-9);
  EXPECT_NEAR(s.pose.yaw, M_PI / 2, 1e-9);
  EXPECT_EQ(scoped_name(s), "rack::l::c");
  ASSERT_TRUE(r.world->frame("spot"));
  EXPECT_NEAR(r.world->frame("spot")->x, 2.0, 1e-9);
  EXPECT_NEAR(r.world->frame("spot")->y, 2.0, 1e-9);
}

TEST(SdfLoad, ShapesAboveTheVehiclesPlaneAreLeftOutWithAWarning) {
  LoadResult r = World::load_string(world_sdf(R"(
<model name="sign"><static>true</static><pose>0 0 3 0 0 0</pose><link name="l">
  <collision name="c"><geometry><box><size>1 1 0.2</size></box></geometry></collision>
</link></model>)"));
  ASSERT_TRUE(r.world) << all(r.errors);
  EXPECT_NE(all(r.warnings).find("sign::l::c"), std::string::npos);
  EXPECT_TRUE(r.world->static_shapes().empty());
}

TEST(SdfLoad, ZeroPhysicsStepIsRefused) {
  LoadResult r = World::load_string(
      world_sdf("<physics name=\"p\" type=\"ode\"><max_step_size>0</max_step_size>"
                "</physics>\n"),
      {}, "zero.sdf");
  EXPECT_FALSE(r.world);
  ASSERT_FALSE(r.errors.empty());
  EXPECT_NE(r.errors[0].find("max_step_size"), std::string::npos) << r.errors[0];
}

TEST(SdfLoad, EmptyTextIsAnErrorNotACrash) {
  LoadResult r = World::load_string("", {}, "empty.sdf");
  EXPECT_FALSE(r.world);
  EXPECT_FALSE(r.errors.empty());
}

TEST(SdfLoad, NoWorldIsAnError) {
  LoadResult r = World::load_string(
      "<?xml version=\"1.0\"?><sdf version=\"1.9\"><model name=\"m\"><link name=\"l\"/>"
      "</model></sdf>");
  EXPECT_FALSE(r.world);
  ASSERT_FALSE(r.errors.empty());
  EXPECT_NE(r.errors[0].find("no <world>"), std::string::npos) << r.errors[0];
}

TEST(OccupancyGridTest, MarksStaticShapesAndLeavesFramesFree) {
  LoadResult r = World::load(testing::depot_path());
  ASSERT_TRUE(r.world);
  const OccupancyGrid g = r.world->occupancy_grid(0.1);
  EXPECT_GT(g.width, 300);
  EXPECT_GT(g.height, 200);
  EXPECT_EQ(g.cells.size(), static_cast<size_t>(g.width) * g.height);
  EXPECT_TRUE(g.occupied_at(2.0, -0.5));   // the crate
  EXPECT_TRUE(g.occupied_at(-5.0, 5.0));   // shelf_1
  EXPECT_TRUE(g.occupied_at(-8.0, -2.5));  // the pillar
  EXPECT_TRUE(g.occupied_at(0.0, 10.0));   // the north wall
  for (const auto& [name, p] : r.world->frames()) {
    EXPECT_FALSE(g.occupied_at(p.x, p.y)) << name;
  }
  EXPECT_TRUE(g.occupied_at(100.0, 100.0));  // outside the grid
}

TEST(OccupancyGridTest, CellsOverlappingABoxAreOccupiedAndTheNextAreFree) {
  auto w = World::empty("flat", milliseconds(1));
  ASSERT_TRUE(w->spawn_static("b", {testing::box_shape(1.0, 1.0, 1.0, 1.0)}).ok());  // [0.5, 1.5]²
  MapOptions o;  // a world without ground: the margin alone, not the open margin
  o.resolution = 0.1;
  o.margin = 0.5;
  o.open_margin = 0.0;
  const OccupancyGrid g = w->occupancy_grid(o);
  EXPECT_NEAR(g.origin_x, 0.0, 1e-12);
  EXPECT_NEAR(g.origin_y, 0.0, 1e-12);
  EXPECT_EQ(g.width, 20);
  EXPECT_EQ(g.height, 20);
  int ix = 0, iy = 0;
  ASSERT_TRUE(g.cell_of(0.55, 1.0, &ix, &iy));
  EXPECT_EQ(g.at(ix, iy), OccupancyGrid::kOccupied);
  ASSERT_TRUE(g.cell_of(0.45, 1.0, &ix, &iy));
  EXPECT_EQ(g.at(ix, iy), OccupancyGrid::kFree);
  ASSERT_TRUE(g.cell_of(1.55, 1.55, &ix, &iy));
  EXPECT_EQ(g.at(ix, iy), OccupancyGrid::kFree);
  size_t occupied = 0;
  for (uint8_t c : g.cells) occupied += c == OccupancyGrid::kOccupied;
  EXPECT_EQ(occupied, 100u);  // exactly the 10 x 10 cells of the box
}

TEST(OccupancyGridTest, BadResolutionIsRefused) {
  LoadResult r = World::load(testing::depot_path());
  ASSERT_TRUE(r.world);
  EXPECT_THROW((void)r.world->occupancy_grid(0.0), std::invalid_argument);
  EXPECT_THROW((void)r.world->occupancy_grid(std::nan("")), std::invalid_argument);
}

}  // namespace
}  // namespace fieldproof::world
