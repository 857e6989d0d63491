// Loading other people's worlds: a sensor type libsdformat refuses is named
// with its file, line and name; meshes and heightmaps become obstacles by their bounding boxes
// with a warning naming them; a Fuel URI not available offline says how to make it available,
// and one made available as a local model folder on FIELDPROOF_RESOURCE_PATH loads.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "fieldproof/world/world.hpp"
#include "world_test_util.hpp"

namespace fieldproof::world {
namespace {

using testing::TempFile;

const std::filesystem::path kData = std::filesystem::absolute("tests/world/data");

std::string world_sdf(const std::string& body) {
  return "<?xml version=\"1.0\"?>\n<sdf version=\"1.9\">\n<world name=\"w\">\n" + body +
         "</world>\n</sdf>\n";
}

std::string all(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "\n";
  return out;
}

// Sets an environment variable for the test's duration.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

const StaticShape* shape_of(const World& w, const std::string& model) {
  for (const StaticShape& s : w.static_shapes()) {
    if (s.model == model) return &s;
  }
  return nullptr;
}

TEST(ForeignWorld, AnUnknownSensorTypeIsNamedWithItsFileAndLine) {
  const TempFile f("unknown_sensor.sdf", world_sdf(R"(<model name="robot">
  <link name="base">
    <sensor name="front_lidar" type="lidar"><update_rate>10</update_rate></sensor>
    <sensor name="thermal_eye" type="infrared_camera"><update_rate>5</update_rate></sensor>
  </link>
</model>
)"));
  const LoadResult r = World::load(f.path());
  ASSERT_FALSE(r.world);
  const std::string e = all(r.errors);
  // Line 7 of the file: the header, <sdf>, <world>, <model>, <link>, the lidar, then this one.
  EXPECT_NE(e.find(f.path() + ":7: sensor 'thermal_eye' of robot::base has type "
                              "'infrared_camera', which libsdformat does not know"),
            std::string::npos)
      << e;
  EXPECT_EQ(e.find("front_lidar"), std::string::npos) << e;  // a known type is not blamed
  EXPECT_EQ(e.find("Attempting to load a Sensor"), std::string::npos) << e;
}

TEST(ForeignWorld, AMeshIsAnObstacleByItsBoundingBoxWithAWarning) {
  const TempFile f("mesh_world.sdf", world_sdf(R"(<model name="crate">
  <static>true</static>
  <pose>3 1 0 0 0 0</pose>
  <link name="link"><collision name="shell"><geometry><mesh>
    <uri>)" + (kData / "meshes" / "crate.obj").string() +
                                               R"(</uri><scale>1 2 1</scale>
  </mesh></geometry></collision></link>
</model>
)"));
  const LoadResult r = World::load(f.path());
  ASSERT_TRUE(r.world) << all(r.errors);
  const StaticShape* s = shape_of(*r.world, "crate");
  ASSERT_NE(s, nullptr) << all(r.warnings);
  // The OBJ spans 1.2 x 0.8 x 0.6 from its corner; scaled by 2 in y: a box centred 0.6, 0.8 from
  // the model's origin.
  EXPECT_EQ(s->type, ShapeType::kBox);
  EXPECT_NEAR(s->size_x, 1.2, 1e-9);
  EXPECT_NEAR(s->size_y, 1.6, 1e-9);
  EXPECT_NEAR(s->pose.x, 3.6, 1e-9);
  EXPECT_NEAR(s->pose.y, 1.8, 1e-9);
  EXPECT_NEAR(s->z_max, 0.6, 1e-9);
  const std::string w = all(r.warnings);
  EXPECT_NE(w.find("collision 'crate::link::shell' is a mesh"), std::string::npos) << w;
  EXPECT_NE(w.find("bounding box (1.20 x 1.60 x 0.60 m)"), std::string::npos) << w;
  // And the map has it.
  const OccupancyGrid g = r.world->occupancy_grid(0.05);
  EXPECT_TRUE(g.occupied_at(3.6, 1.8));
  EXPECT_FALSE(g.occupied_at(3.6, 3.0));
}

TEST(ForeignWorld, AMeshBesideTheWorldFileIsFoundByItsRelativeUri) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "rel_mesh";
  std::filesystem::create_directories(dir / "meshes");
  std::filesystem::copy_file(kData / "meshes" / "crate.obj", dir / "meshes" / "crate.obj",
                             std::filesystem::copy_options::overwrite_existing);
  const std::string file = (dir / "w.sdf").string();
  std::ofstream(file) << world_sdf(R"(<model name="crate"><static>true</static>
  <link name="link"><collision name="shell"><geometry><mesh><uri>meshes/crate.obj</uri></mesh>
  </geometry></collision></link></model>
)");
  const LoadResult r = World::load(file);
  ASSERT_TRUE(r.world) << all(r.errors);
  EXPECT_NE(shape_of(*r.world, "crate"), nullptr) << all(r.warnings);
}

TEST(ForeignWorld, AMeshThatCannotBeReadIsLeftOutSayingWhy) {
  const LoadResult r = World::load_string(world_sdf(R"(<model name="statue"><static>true</static>
  <link name="l"><collision name="c"><geometry><mesh><uri>model://nowhere/statue.dae</uri></mesh>
  </geometry></collision></link></model>
)"));
  ASSERT_TRUE(r.world) << all(r.errors);
  EXPECT_EQ(shape_of(*r.world, "statue"), nullptr);
  const std::string w = all(r.warnings);
  EXPECT_NE(w.find("statue::l::c' is a mesh the world cannot read: left out"), std::string::npos)
      << w;
  EXPECT_NE(w.find("FIELDPROOF_RESOURCE_PATH"), std::string::npos) << w;
}

TEST(ForeignWorld, AHeightmapIsAnObstacleByItsBoundingBoxWithAWarning) {
  const LoadResult r = World::load_string(world_sdf(R"(<model name="hill"><static>true</static>
  <link name="l"><collision name="terrain"><geometry><heightmap>
    <uri>hill.png</uri><size>20 10 2</size><pos>5 0 -0.5</pos>
  </heightmap></geometry></collision></link></model>
)"));
  ASSERT_TRUE(r.world) << all(r.errors);
  const StaticShape* s = shape_of(*r.world, "hill");
  ASSERT_NE(s, nullptr) << all(r.warnings);
  EXPECT_NEAR(s->size_x, 20, 1e-9);
  EXPECT_NEAR(s->size_y, 10, 1e-9);
  EXPECT_NEAR(s->pose.x, 5, 1e-9);
  EXPECT_NEAR(s->z_min, -0.5, 1e-9);
  EXPECT_NEAR(s->z_max, 1.5, 1e-9);
  const std::string w = all(r.warnings);
  EXPECT_NE(w.find("collision 'hill::l::terrain' is a heightmap: simulated as an obstacle by its "
                   "bounding box (20.00 x 10.00 x 2.00 m)"),
            std::string::npos)
      << w;
}

const char* kFuelInclude = R"(<include>
  <uri>https://fuel.gazebosim.org/1.0/OpenRobotics/models/Construction Cone</uri>
  <name>cone</name>
  <pose>2 -1 0 0 0 0</pose>
</include>
)";

TEST(ForeignWorld, AFuelUriNotAvailableOfflineSaysHowToMakeItAvailable) {
  const ScopedEnv path("FIELDPROOF_RESOURCE_PATH", (kData / "meshes").string());  // not there
  const ScopedEnv home("HOME", ::testing::TempDir());                             // no cache
  const TempFile f("fuel_world.sdf", world_sdf(kFuelInclude));
  const LoadResult r = World::load(f.path());
  ASSERT_FALSE(r.world);
  const std::string e = all(r.errors);
  EXPECT_NE(e.find(f.path() + ":5: <include> 'https://fuel.gazebosim.org/1.0/OpenRobotics/models/"
                              "Construction Cone' is a Fuel URI"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("in a directory on FIELDPROOF_RESOURCE_PATH"), std::string::npos) << e;
  EXPECT_NE(e.find("named 'Construction Cone'"), std::string::npos) << e;
}

TEST(ForeignWorld, AFuelModelInALocalFolderOnTheResourcePathLoads) {
  const ScopedEnv path("FIELDPROOF_RESOURCE_PATH", (kData / "models").string());
  const TempFile f("fuel_local.sdf", world_sdf(kFuelInclude));
  const LoadResult r = World::load(f.path());
  ASSERT_TRUE(r.world) << all(r.errors);
  const StaticShape* s = shape_of(*r.world, "cone");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->type, ShapeType::kCylinder);
  EXPECT_NEAR(s->pose.x, 2, 1e-9);
  EXPECT_NEAR(s->pose.y, -1, 1e-9);
}

TEST(ForeignWorld, AModelUriIsFoundOnTheResourcePath) {
  const ScopedEnv path("FIELDPROOF_RESOURCE_PATH", "/nonexistent:" + (kData / "models").string());
  const LoadResult r = World::load_string(world_sdf(R"(<include>
  <uri>model://construction_cone</uri><name>cone2</name><pose>-4 0 0 0 0 0</pose>
</include>
)"));
  ASSERT_TRUE(r.world) << all(r.errors);
  EXPECT_NE(shape_of(*r.world, "cone2"), nullptr);
}

}  // namespace
}  // namespace fieldproof::world
