// Large worlds: plain top-level models read without sdformat (WorldOptions::direct_read_threshold)
// give the same world as sdformat reading them all, and a generated 3 000-model world loads.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "fieldproof/world/world.hpp"

namespace fieldproof::world {
namespace {

// n models of the kinds the direct reader takes (and, with_others, every fourth one it leaves to
// sdformat), an anchor a frame refers to, a mesh model and a comment that looks like a model.
std::string generated(int n, bool with_others = true) {
  const int kinds = with_others ? 4 : 3;
  std::string t = "<?xml version=\"1.0\"?>\n<sdf version=\"1.9\">\n<world name=\"big\">\n";
  t += R"(<model name="ground_plane"><static>true</static><link name="link">
    <collision name="collision"><geometry><plane><normal>0 0 1</normal><size>600 400</size>
    </plane></geometry></collision></link></model>
)";
  for (int i = 0; i < n; ++i) {
    const double x = (i % 60) * 3.0 - 90, y = (i / 60) * 3.0 - 90;
    const std::string name = "m" + std::to_string(i);
    const std::string pose =
        std::to_string(x) + " " + std::to_string(y) + " 0.5 0 0 " + std::to_string(0.01 * i);
    switch (i % kinds) {
      case 0:
        t += "<model name=\"" + name + "\"><static>true</static><pose>" + pose +
             "</pose><link name=\"link\"><collision name=\"c\"><geometry><box><size>1 0.5 1"
             "</size></box></geometry></collision><visual name=\"v\"><geometry><box><size>1 "
             "0.5 1</size></box></geometry></visual></link></model>\n";
        break;
      case 1:
        t += "<model name=\"" + name + "\">\n  <static>1</static>\n  <pose>" + pose +
             "</pose>\n  <link name=\"l\">\n    <pose>0.2 0.1 0 0 0 0.4</pose>\n"
             "    <collision name=\"a\"><pose>0.3 0 0 0 0 0.2</pose><geometry><cylinder><radius>"
             "0.3</radius><length>1</length></cylinder></geometry></collision>\n"
             "    <collision name=\"b\"><pose>-0.4 0 0 0 0 0</pose><geometry><sphere><radius>0.2"
             "</radius></sphere></geometry></collision>\n  </link>\n</model>\n";
        break;
      case 2:  // not static: a warning either way
        t += "<model name=\"" + name + "\"><pose>" + pose +
             "</pose><link name=\"link\"><inertial><mass>1</mass></inertial><collision "
             "name=\"c\"><geometry><box><size>0.4 0.4 0.4</size></box></geometry></collision>"
             "</link></model>\n";
        break;
      default:  // <pose relative_to>: left to sdformat
        t += "<model name=\"" + name + "\"><static>true</static><pose relative_to=\"world\">" +
             pose +
             "</pose><link name=\"link\"><collision name=\"c\"><geometry><box><size>0.5 0.5 1"
             "</size></box></geometry></collision></link></model>\n";
    }
  }
  // Referred to by a frame: left to sdformat, and the frame resolves through it.
  t += R"(<model name="anchor"><static>true</static><pose>200 100 0 0 0 1.0</pose><link name="link">
    <collision name="c"><geometry><box><size>1 1 1</size></box></geometry></collision></link>
    </model>
<frame name="by_anchor"><pose relative_to="anchor">2 0 0 0 0 0</pose></frame>
<!-- a comment with <model name="fake"> in it -->
<model name="meshy"><static>true</static><link name="link"><collision name="c"><geometry>
  <mesh><uri>file://nowhere.dae</uri></mesh></geometry></collision></link></model>
</world>
</sdf>
)";
  return t;
}

TEST(LargeWorld, DirectReadingGivesTheSameWorldAsSdformat) {
  const std::string text = generated(120);
  WorldOptions direct;
  WorldOptions sdformat_only;
  sdformat_only.direct_read_threshold = 0;
  const LoadResult a = World::load_string(text, direct, "big.sdf");
  const LoadResult b = World::load_string(text, sdformat_only, "big.sdf");
  ASSERT_TRUE(a.world) << a.errors.at(0);
  ASSERT_TRUE(b.world) << b.errors.at(0);
  const auto& sa = a.world->static_shapes();
  const auto& sb = b.world->static_shapes();
  ASSERT_EQ(sa.size(), sb.size());
  // Same shapes, perhaps in another order (plain models come after sdformat's).
  for (const StaticShape& s : sb) {
    bool found = false;
    for (const StaticShape& o : sa) {
      if (scoped_name(o) != scoped_name(s)) continue;
      found = true;
      EXPECT_EQ(o.type, s.type);
      EXPECT_NEAR(o.pose.x, s.pose.x, 1e-9) << scoped_name(s);
      EXPECT_NEAR(o.pose.y, s.pose.y, 1e-9) << scoped_name(s);
      EXPECT_NEAR(o.pose.yaw, s.pose.yaw, 1e-9) << scoped_name(s);
      EXPECT_DOUBLE_EQ(o.size_x, s.size_x);
      EXPECT_DOUBLE_EQ(o.size_y, s.size_y);
      EXPECT_DOUBLE_EQ(o.radius, s.radius);
      EXPECT_NEAR(o.z_min, s.z_min, 1e-9);
      EXPECT_NEAR(o.z_max, s.z_max, 1e-9);
    }
    EXPECT_TRUE(found) << scoped_name(s);
  }
  EXPECT_EQ(a.world->static_models(), b.world->static_models());
  ASSERT_TRUE(a.world->frame("by_anchor"));
  EXPECT_NEAR(a.world->frame("by_anchor")->x, b.world->frame("by_anchor")->x, 1e-12);
  EXPECT_EQ(a.warnings.size(), b.warnings.size());
  const MapBounds ma = a.world->map_bounds(), mb = b.world->map_bounds();
  EXPECT_DOUBLE_EQ(ma.min_x, mb.min_x);
  EXPECT_DOUBLE_EQ(ma.max_y, mb.max_y);
}

TEST(LargeWorld, AnErrorAfterDirectlyReadModelsKeepsItsLine) {
  std::string text = generated(80);
  // A bad element on a known line, after every generated model.
  const std::string bad = "<model name=\"bad\"><static>maybe</static><link name=\"l\"/></model>\n";
  const size_t at = text.find("<model name=\"anchor\"");
  int line = 1;
  for (size_t i = 0; i < at; ++i) line += text[i] == '\n';
  text.insert(at, bad);
  const LoadResult r = World::load_string(text, {}, "big.sdf");
  ASSERT_FALSE(r.world);
  ASSERT_FALSE(r.errors.empty());
  EXPECT_NE(r.errors[0].find("big.sdf:" + std::to_string(line)), std::string::npos) << r.errors[0];
}

TEST(LargeWorld, ThreeThousandModelsLoad) {
  // Read by sdformat alone this takes minutes and gigabytes (world_bench measures it).
  const LoadResult r = World::load_string(generated(3000, false), {}, "big3000.sdf");
  ASSERT_TRUE(r.world) << r.errors.at(0);
  EXPECT_EQ(r.world->static_models().size(), 3000u + 3u);  // and ground, anchor, mesh
  EXPECT_EQ(r.world->static_shapes().size(), 1000u * 4 + 1);
}

}  // namespace
}  // namespace fieldproof::world
