// Robot models from SDF: resolution on the resource path, what is read
// from a model file, what is warned, what is refused; the reference UGV's model file gives
// exactly the world's built-in defaults, and a second robot differs where its file says so.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <optional>
#include <sstream>
#include <string>

#include <ignition/msgs/entity_factory.pb.h>
#include <tinyxml2.h>

#include "fieldproof/msgs/ign.hpp"
#include "fieldproof/world/robot_model.hpp"
#include "fieldproof/world/world.hpp"
#include "world_test_util.hpp"

namespace fieldproof::world {
namespace {

namespace fs = std::filesystem;
using testing::on_topic;

const fs::path kModels = fs::absolute("examples/models");

std::vector<fs::path> examples_only() { return {kModels}; }

// A scratch folder of the test's own, emptied.
fs::path scratch(const std::string& name) {
  const fs::path d = fs::path(::testing::TempDir()) / ("robot_model_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

fs::path write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text;
  return file;
}

// A small valid model; `drive`, `sensors` and `extra` are spliced in (lines counted from 1).
std::string model_text(const std::string& drive_children =
                           "<wheel_separation>0.3</wheel_separation>"
                           "<max_linear_velocity>1</max_linear_velocity>"
                           "<max_angular_velocity>1</max_angular_velocity>",
                       const std::string& sensors = "", const std::string& extra = "") {
  return "<?xml version=\"1.0\"?>\n"                                           // 1
         "<sdf version=\"1.9\">\n"                                             // 2
         "  <model name=\"bot\">\n"                                            // 3
         "    <link name=\"base\">\n"                                          // 4
         "      <collision name=\"c\">\n"                                      // 5
         "        <geometry><box><size>0.5 0.3 0.2</size></box></geometry>\n"  // 6
         "      </collision>\n"                                                // 7
         "      " +
         sensors +
         "\n"             // 8
         "    </link>\n"  // 9
         "    <plugin filename=\"gz-sim-diff-drive-system\" name=\"gz::sim::systems::DiffDrive\">\n"  // 10
         "      " +
         drive_children +
         "\n"               // 11
         "    </plugin>\n"  // 12
         "    " +
         extra +
         "\n"  // 13
         "  </model>\n"
         "</sdf>\n";
}

RobotModel from_text(const std::string& text) { return load_robot_model_string(text, "bot.sdf"); }

bool any_contains(const std::vector<std::string>& v, const std::string& needle) {
  for (const auto& s : v)
    if (s.find(needle) != std::string::npos) return true;
  return false;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "\n";
  return out;
}

TEST(RobotModel, ReferenceUgvFileGivesTheBuiltInUgvExactly) {
  const RobotModel m = load_robot_model("ugv", ".", examples_only());
  ASSERT_TRUE(m.ok()) << joined(m.errors);
  EXPECT_TRUE(m.warnings.empty()) << joined(m.warnings);
  EXPECT_EQ(m.name, "fieldproof_ugv");
  const VehicleParams d;
  const VehicleParams& p = m.params;
  EXPECT_EQ(p.length, d.length);
  EXPECT_EQ(p.width, d.width);
  EXPECT_EQ(p.height, d.height);
  EXPECT_EQ(p.max_linear, d.max_linear);
  EXPECT_EQ(p.max_angular, d.max_angular);
  EXPECT_EQ(p.max_linear_accel, d.max_linear_accel);
  EXPECT_EQ(p.max_angular_accel, d.max_angular_accel);
  EXPECT_EQ(p.lidar, d.lidar);
  EXPECT_EQ(p.lidar_rays, d.lidar_rays);
  EXPECT_EQ(p.lidar_full_turn, d.lidar_full_turn);
  EXPECT_EQ(p.lidar_angle_min, d.lidar_angle_min);
  EXPECT_EQ(p.lidar_angle_max, d.lidar_angle_max);
  EXPECT_EQ(p.lidar_range_min, d.lidar_range_min);
  EXPECT_EQ(p.lidar_range_max, d.lidar_range_max);
  EXPECT_EQ(p.lidar_noise_stddev, d.lidar_noise_stddev);
  EXPECT_EQ(p.lidar_period, d.lidar_period);
  EXPECT_EQ(p.odometry_period, d.odometry_period);
  EXPECT_EQ(p.odometry_linear_noise, d.odometry_linear_noise);
  EXPECT_EQ(p.odometry_angular_noise, d.odometry_angular_noise);
  EXPECT_EQ(p.odometry_linear_scale_stddev, d.odometry_linear_scale_stddev);
  EXPECT_EQ(p.odometry_angular_scale_stddev, d.odometry_angular_scale_stddev);
  EXPECT_EQ(p.odometry_frame, d.odometry_frame);
  EXPECT_EQ(p.odometry_child_frame, d.odometry_child_frame);
  EXPECT_EQ(p.imu, d.imu);
  EXPECT_EQ(p.imu_period, d.imu_period);
  EXPECT_EQ(p.imu_angular_velocity_stddev, d.imu_angular_velocity_stddev);
  EXPECT_EQ(p.imu_linear_acceleration_stddev, d.imu_linear_acceleration_stddev);
  EXPECT_EQ(p.contact, d.contact);
  EXPECT_EQ(p.navsat, d.navsat);
  EXPECT_EQ(p.chassis_link, d.chassis_link);
  EXPECT_EQ(p.chassis_collision, d.chassis_collision);
  EXPECT_EQ(p.lidar_sensor, d.lidar_sensor);
  EXPECT_EQ(p.imu_sensor, d.imu_sensor);
  EXPECT_EQ(m.wheel_separation, 0.36);
  EXPECT_EQ(m.wheel_radius, 0.08);
}

TEST(RobotModel, ReferenceUgvFromItsFileStreamsBitForBitAsTheBuiltIn) {
  const RobotModel m = load_robot_model("ugv", ".", examples_only());
  ASSERT_TRUE(m.ok());
  uint64_t hashes[2];
  for (int i = 0; i < 2; ++i) {
    auto loaded = World::load(testing::depot_path(), testing::seeded(7));
    ASSERT_TRUE(loaded.world);
    World& w = *loaded.world;
    ASSERT_TRUE(i == 0 ? w.spawn_vehicle("ugv1", "dock").ok()
                       : w.spawn_vehicle("ugv1", "dock", m.params).ok());
    ASSERT_TRUE(w.set_cmd_vel("ugv1", {0.8, 0.3}).ok());
    w.step_n(3000);
    hashes[i] = testing::hash_messages(w.take_messages());
  }
  EXPECT_EQ(hashes[0], hashes[1]);
}

TEST(RobotModel, ShortNameUriFolderAndFileResolveToTheSameFile) {
  const fs::path expected = (kModels / "fieldproof_ugv" / "model.sdf").lexically_normal();
  for (const std::string uri :
       {"ugv", "model://ugv", "model://fieldproof_ugv", "fieldproof_ugv",
        "examples/models/fieldproof_ugv", "examples/models/fieldproof_ugv/model.sdf"}) {
    const RobotModel m = load_robot_model(uri, fs::current_path(), examples_only());
    ASSERT_TRUE(m.ok()) << uri << ": " << joined(m.errors);
    EXPECT_EQ(fs::absolute(m.file).lexically_normal(), expected) << uri;
  }
}

TEST(RobotModel, RelativePathsResolveAgainstTheIncludingFilesFolder) {
  const fs::path d = scratch("relative");
  write(d / "robots" / "bot" / "model.sdf", model_text());
  const RobotModel m = load_robot_model("robots/bot", d, {});
  ASSERT_TRUE(m.ok()) << joined(m.errors);
  EXPECT_EQ(m.file, (d / "robots" / "bot" / "model.sdf").lexically_normal());
  EXPECT_FALSE(load_robot_model("robots/bot", fs::current_path(), {}).ok());
}

TEST(RobotModel, ModelConfigNamesTheFileOfTheHighestSdfVersion) {
  const fs::path d = scratch("config");
  write(d / "bot" / "model.config",
        "<?xml version=\"1.0\"?><model><name>bot</name><sdf version=\"1.6\">old.sdf</sdf>"
        "<sdf version=\"1.9\">new.sdf</sdf></model>");
  write(d / "bot" / "new.sdf", model_text());
  const RobotModel m = load_robot_model("model://bot", ".", {d});
  ASSERT_TRUE(m.ok()) << joined(m.errors);
  EXPECT_EQ(m.file.filename(), "new.sdf");
}

TEST(RobotModel, ResourcePathIsFieldproofThenGazeboThenSdfPath) {
  const fs::path a = scratch("path_a"), b = scratch("path_b"), c = scratch("path_c");
  write(a / "bot" / "model.sdf", model_text());
  write(b / "bot" / "model.sdf", model_text());
  write(b / "only_gz" / "model.sdf", model_text());
  write(c / "only_sdf" / "model.sdf", model_text());
  setenv("FIELDPROOF_RESOURCE_PATH", a.c_str(), 1);
  setenv("GZ_SIM_RESOURCE_PATH", b.c_str(), 1);
  setenv("SDF_PATH", c.c_str(), 1);
  const auto search = model_search_path();
  unsetenv("FIELDPROOF_RESOURCE_PATH");
  unsetenv("GZ_SIM_RESOURCE_PATH");
  unsetenv("SDF_PATH");
  ASSERT_GE(search.size(), 3u);
  EXPECT_EQ(load_robot_model("model://bot", ".", search).file, a / "bot" / "model.sdf");
  EXPECT_EQ(load_robot_model("model://only_gz", ".", search).file, b / "only_gz" / "model.sdf");
  EXPECT_EQ(load_robot_model("model://only_sdf", ".", search).file, c / "only_sdf" / "model.sdf");
  // The installed and build-tree folders come last: the reference UGV is found without any.
  EXPECT_TRUE(load_robot_model("ugv", ".", model_search_path()).ok());
}

TEST(RobotModel, SecondRobotReadsItsOwnFootprintDriveAndSensors) {
  const RobotModel m = load_robot_model("model://fieldproof_tug", ".", examples_only());
  ASSERT_TRUE(m.ok()) << joined(m.errors);
  EXPECT_TRUE(m.warnings.empty()) << joined(m.warnings);
  const VehicleParams& p = m.params;
  EXPECT_DOUBLE_EQ(p.length, 0.9);
  EXPECT_DOUBLE_EQ(p.width, 0.6);
  EXPECT_DOUBLE_EQ(p.height, 0.5);
  EXPECT_EQ(m.wheel_separation, 0.52);
  EXPECT_EQ(p.max_linear, 0.6);
  EXPECT_EQ(p.max_angular, 0.8);
  EXPECT_EQ(p.max_linear_accel, 0.5);
  EXPECT_EQ(p.odometry_period, milliseconds(40));
  EXPECT_EQ(p.odometry_frame, "odom");
  EXPECT_EQ(p.odometry_child_frame, "base_link");
  EXPECT_EQ(p.lidar_rays, 271);
  EXPECT_FALSE(p.lidar_full_turn);
  EXPECT_DOUBLE_EQ(p.lidar_angle_min, -0.75 * std::numbers::pi);
  EXPECT_EQ(p.lidar_range_max, 8.0);
  EXPECT_EQ(p.lidar_period, Duration::from_ns(66'666'667));
  EXPECT_EQ(p.imu_period, milliseconds(20));
  EXPECT_TRUE(p.navsat);
  EXPECT_EQ(p.navsat_period, milliseconds(500));
  EXPECT_EQ(p.navsat_horizontal_stddev, 0.3);
  EXPECT_EQ(p.chassis_link, "base_link");
  EXPECT_EQ(p.chassis_collision, "body");
}

// The chassis box of a model file as its text states it: the first <link>'s first <collision>'s
// <box><size>, read here with tinyxml2 independently of the reader under test.
struct StatedBox {
  double x = 0, y = 0, z = 0;
};
std::optional<StatedBox> stated_chassis_box(tinyxml2::XMLDocument& doc) {
  const auto* model = doc.RootElement() ? doc.RootElement()->FirstChildElement("model") : nullptr;
  const auto* link = model ? model->FirstChildElement("link") : nullptr;
  const auto* col = link ? link->FirstChildElement("collision") : nullptr;
  const auto* geo = col ? col->FirstChildElement("geometry") : nullptr;
  const auto* box = geo ? geo->FirstChildElement("box") : nullptr;
  const auto* size = box ? box->FirstChildElement("size") : nullptr;
  if (!size || !size->GetText()) return std::nullopt;
  StatedBox b;
  std::istringstream in(size->GetText());
  if (!(in >> b.x >> b.y >> b.z)) return std::nullopt;
  return b;
}

// Every robot of examples/models: its footprint (and so the radius the stacks inflate by,
// hypot(length, width) / 2) is its chassis collision box, and follows that box when the file
// changes it: no built-in constant stands in for a model's geometry.
TEST(RobotModelFootprint, EveryExampleModelsFootprintIsItsChassisCollision) {
  int models = 0;
  for (const auto& entry : fs::directory_iterator(kModels)) {
    const fs::path file = entry.path() / "model.sdf";
    if (!fs::is_regular_file(file)) continue;
    ++models;
    SCOPED_TRACE(file.string());
    tinyxml2::XMLDocument doc;
    ASSERT_EQ(doc.LoadFile(file.string().c_str()), tinyxml2::XML_SUCCESS);
    const std::optional<StatedBox> box = stated_chassis_box(doc);
    ASSERT_TRUE(box) << "the example's chassis is a box collision";
    const RobotModel m = load_robot_model(file.string(), ".", examples_only());
    ASSERT_TRUE(m.ok()) << joined(m.errors);
    EXPECT_EQ(m.params.length, box->x);
    EXPECT_EQ(m.params.width, box->y);
    EXPECT_EQ(m.params.height, box->z);

    // The same model with a bigger chassis box (the visual left as it was): the footprint and
    // its circumscribed radius grow with the collision, not with the visual or a default.
    const StatedBox grown{box->x + 0.5, box->y + 0.25, box->z + 0.125};
    auto* size = doc.RootElement()
                     ->FirstChildElement("model")
                     ->FirstChildElement("link")
                     ->FirstChildElement("collision")
                     ->FirstChildElement("geometry")
                     ->FirstChildElement("box")
                     ->FirstChildElement("size");
    size->SetText(
        (std::to_string(grown.x) + " " + std::to_string(grown.y) + " " + std::to_string(grown.z))
            .c_str());
    const fs::path copy = scratch("footprint_" + entry.path().filename().string()) / "model.sdf";
    ASSERT_EQ(doc.SaveFile(copy.string().c_str()), tinyxml2::XML_SUCCESS);
    const RobotModel g = load_robot_model(copy.string(), ".", examples_only());
    ASSERT_TRUE(g.ok()) << joined(g.errors);
    EXPECT_DOUBLE_EQ(g.params.length, grown.x);
    EXPECT_DOUBLE_EQ(g.params.width, grown.y);
    EXPECT_DOUBLE_EQ(g.params.height, grown.z);
    EXPECT_GT(std::hypot(g.params.length, g.params.width) / 2,
              std::hypot(m.params.length, m.params.width) / 2);
  }
  EXPECT_GE(models, 2);  // the reference UGV and the second robot at least
}

// The world simulates the footprint read: a chassis grown in its file stops further from a wall
// (its front at the wall, within the contact margin and one step's travel).
TEST(RobotModelFootprint, TheWorldStopsTheChassisTheFileDescribes) {
  const auto stop_x = [](const std::string& size) {
    std::string text = model_text();
    text.replace(text.find("0.5 0.3 0.2"), 11, size);
    const RobotModel m = from_text(text);
    EXPECT_TRUE(m.ok()) << joined(m.errors);
    auto w = World::empty("w", milliseconds(1));
    EXPECT_TRUE(w->spawn_static("wall", {testing::box_shape(3.0, 0.0, 0.2, 4.0)}).ok());
    EXPECT_TRUE(w->spawn_vehicle("bot1", Pose2D{}, m.params).ok());
    EXPECT_TRUE(w->set_cmd_vel("bot1", {0.5, 0.0}).ok());
    w->step_n(8000);
    EXPECT_TRUE(w->vehicle("bot1")->touching);
    return w->vehicle("bot1")->pose.x;
  };
  // The wall's near face is at x = 2.9: the chassis centre stops about half a length before it.
  const double x_small = stop_x("0.5 0.3 0.2"), x_big = stop_x("1.5 0.3 0.2");
  EXPECT_NEAR(x_small, 2.9 - 0.25, 0.05);
  EXPECT_NEAR(x_big, 2.9 - 0.75, 0.05);
}

// --- Refusals: file:line and the element, nothing loaded ---

TEST(RobotModelRefuses, AFileThatDoesNotExist) {
  const RobotModel m = load_robot_model("nowhere/model.sdf", "/tmp", {});
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.errors[0].find("/tmp/nowhere/model.sdf does not exist"), std::string::npos)
      << m.errors[0];
  const RobotModel u = load_robot_model("model://no_such_robot", ".", examples_only());
  ASSERT_FALSE(u.ok());
  EXPECT_NE(u.errors[0].find("FIELDPROOF_RESOURCE_PATH"), std::string::npos) << u.errors[0];
}

TEST(RobotModelRefuses, AFileThatIsNotSdf) {
  const RobotModel xml = from_text("<robot name=\"urdf\">\n</robot>\n");
  ASSERT_FALSE(xml.ok());
  EXPECT_NE(xml.errors[0].find("bot.sdf:1: not an SDF model file: the root element is <robot>"),
            std::string::npos)
      << xml.errors[0];
  const RobotModel text = from_text("\n\nname: not xml <at all\n");
  ASSERT_FALSE(text.ok());
  EXPECT_NE(text.errors[0].find("bot.sdf:3: not an SDF model file"), std::string::npos)
      << text.errors[0];
  const RobotModel world = from_text("<sdf version=\"1.9\">\n<world name=\"w\"/>\n</sdf>\n");
  ASSERT_FALSE(world.ok());
  EXPECT_NE(world.errors[0].find("holds a <world>, not a <model>"), std::string::npos);
}

TEST(RobotModelRefuses, TwoDrives) {
  const RobotModel m = from_text(model_text(
      "<wheel_separation>0.3</wheel_separation><max_linear_velocity>1</max_linear_velocity>"
      "<max_angular_velocity>1</max_angular_velocity>",
      "",
      "<plugin filename=\"ignition-gazebo-diff-drive-system\" "
      "name=\"ignition::gazebo::systems::DiffDrive\"/>"));
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.errors[0].find("bot.sdf:13: model 'bot' has two drives"), std::string::npos)
      << m.errors[0];
  EXPECT_NE(m.errors[0].find("line 10"), std::string::npos) << m.errors[0];
}

TEST(RobotModelRefuses, ASensorWithANegativeRate) {
  const RobotModel m = from_text(model_text(
      "<wheel_separation>0.3</wheel_separation><max_linear_velocity>1</max_linear_velocity>"
      "<max_angular_velocity>1</max_angular_velocity>",
      "<sensor name=\"imu\" type=\"imu\"><update_rate>-5</update_rate></sensor>"));
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.errors[0].find("bot.sdf:8: <update_rate> of sensor 'imu' (imu): -5 Hz"),
            std::string::npos)
      << m.errors[0];
}

TEST(RobotModelRefuses, ALidarWithMoreThan100000Samples) {
  const RobotModel m = from_text(model_text(
      "<wheel_separation>0.3</wheel_separation><max_linear_velocity>1</max_linear_velocity>"
      "<max_angular_velocity>1</max_angular_velocity>",
      "<sensor name=\"l\" type=\"gpu_lidar\"><lidar><scan><horizontal><samples>100001</samples>"
      "<min_angle>-1</min_angle><max_angle>1</max_angle></horizontal></scan>"
      "<range><min>0.1</min><max>5</max></range></lidar></sensor>"));
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.errors[0].find("bot.sdf:8: <samples> of sensor 'l' (gpu_lidar): 100001"),
            std::string::npos)
      << m.errors[0];
}

TEST(RobotModelRefuses, AWheelSeparationOfZero) {
  const RobotModel m = from_text(model_text(
      "<wheel_separation>0</wheel_separation><max_linear_velocity>1</max_linear_velocity>"
      "<max_angular_velocity>1</max_angular_velocity>"));
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.errors[0].find("bot.sdf:11: <wheel_separation> of the DiffDrive plugin must be > 0"),
            std::string::npos)
      << m.errors[0];
}

TEST(RobotModelRefuses, AModelWithoutADriveOrAChassis) {
  const RobotModel no_drive = from_text(
      "<sdf version=\"1.9\">\n<model name=\"bot\">\n<link name=\"b\"><collision name=\"c\">"
      "<geometry><box><size>1 1 1</size></box></geometry></collision></link>\n</model>\n</sdf>");
  ASSERT_FALSE(no_drive.ok());
  EXPECT_NE(no_drive.errors[0].find("bot.sdf:2: model 'bot' has no drive"), std::string::npos)
      << no_drive.errors[0];
  const RobotModel no_chassis = from_text(
      "<sdf version=\"1.9\">\n<model name=\"bot\">\n<link name=\"b\"/>\n"
      "<plugin filename=\"gz-sim-diff-drive-system\" name=\"gz::sim::systems::DiffDrive\">"
      "<max_linear_velocity>1</max_linear_velocity><max_angular_velocity>1</max_angular_velocity>"
      "</plugin>\n</model>\n</sdf>");
  ASSERT_FALSE(no_chassis.ok());
  EXPECT_NE(no_chassis.errors[0].find("bot.sdf:3: model 'bot' has no chassis"), std::string::npos)
      << no_chassis.errors[0];
}

TEST(RobotModelRefuses, AFuelUriSayingHowToMakeItAvailable) {
  const RobotModel m = load_robot_model("https://fuel.gazebosim.org/1.0/OpenRobotics/models/X1 UGV",
                                        ".", examples_only());
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.errors[0].find("FIELDPROOF_RESOURCE_PATH"), std::string::npos) << m.errors[0];
}

// --- Warnings: what the world cannot simulate, named with file:line ---

TEST(RobotModelWarns, ElementsTheWorldCannotSimulate) {
  const RobotModel m = from_text(model_text(
      "<wheel_separation>0.3</wheel_separation><max_linear_velocity>1</max_linear_velocity>"
      "<min_linear_velocity>-0.5</min_linear_velocity>"
      "<max_angular_velocity>1</max_angular_velocity><topic>my_cmd</topic>",
      "<sensor name=\"cam\" type=\"camera\"><update_rate>30</update_rate></sensor>",
      "<plugin filename=\"gz-sim-joint-state-publisher-system\" "
      "name=\"gz::sim::systems::JointStatePublisher\"/>"
      "<link name=\"mast\"><pose>0.5 0 0 0 0 0</pose><collision name=\"m\"><geometry><box>"
      "<size>0.2 0.2 1</size></box></geometry></collision></link>"));
  ASSERT_TRUE(m.ok()) << joined(m.errors);
  EXPECT_TRUE(any_contains(m.warnings, "bot.sdf:8: sensor 'cam' (camera) is not simulated"))
      << joined(m.warnings);
  EXPECT_TRUE(any_contains(m.warnings,
                           "bot.sdf:13: plugin 'gz::sim::systems::JointStatePublisher' "
                           "is not simulated"))
      << joined(m.warnings);
  EXPECT_TRUE(any_contains(m.warnings, "bot.sdf:13: collision 'm' of link 'mast' reaches outside"))
      << joined(m.warnings);
  EXPECT_TRUE(any_contains(m.warnings, "bot.sdf:11: <min_linear_velocity> -0.5 is left out"))
      << joined(m.warnings);
  EXPECT_TRUE(any_contains(m.warnings, "bot.sdf:11: <topic> is left out")) << joined(m.warnings);
  // Read all the same: the drive and the footprint.
  EXPECT_EQ(m.params.max_linear, 1.0);
  EXPECT_DOUBLE_EQ(m.params.length, 0.5);
  EXPECT_FALSE(m.params.lidar);
  EXPECT_FALSE(m.params.contact);
}

// --- The world simulating what a model says ---

TEST(RobotModelInTheWorld, APartialLidarScansItsOwnArc) {
  RobotModel m = load_robot_model("model://fieldproof_tug", ".", examples_only());
  ASSERT_TRUE(m.ok());
  m.params.lidar_noise_stddev = 0.0;
  auto w = World::empty("w", milliseconds(1));
  // A wall 3 m ahead and one 3 m behind: the front arc sees the first only.
  ASSERT_TRUE(w->spawn_static("front", {testing::box_shape(3.5, 0.0, 1.0, 20.0)}).ok());
  ASSERT_TRUE(w->spawn_static("back", {testing::box_shape(-3.5, 0.0, 1.0, 20.0)}).ok());
  ASSERT_TRUE(w->spawn_vehicle("tug1", Pose2D{}, m.params).ok());
  w->step_n(100);
  const auto scans = on_topic(w->take_messages(), "/model/tug1/scan");
  ASSERT_EQ(scans.size(), 1u);  // 15 Hz: one scan at 66.7 ms
  const auto scan = *msgs::parse<ignition::msgs::LaserScan>(scans[0].payload);
  ASSERT_EQ(scan.ranges_size(), 271);
  EXPECT_DOUBLE_EQ(scan.angle_min(), -0.75 * std::numbers::pi);
  EXPECT_DOUBLE_EQ(scan.angle_max(), 0.75 * std::numbers::pi);
  EXPECT_NEAR(scan.angle_step(), std::numbers::pi / 180, 1e-12);
  EXPECT_NEAR(scan.ranges(135), 3.0, 1e-9);  // straight ahead
  // At +-135 degrees the back wall (x = -3) is 3 / cos(45 deg) away, beyond the front wall's
  // reach: the ray at the arc's end sees the back wall, the one behind (not scanned) nothing.
  EXPECT_NEAR(scan.ranges(0), 3.0 / std::cos(std::numbers::pi / 4), 1e-9);
}

TEST(RobotModelInTheWorld, NavsatReportsTheWorldsSphericalCoordinates) {
  const std::string world =
      "<sdf version=\"1.9\"><world name=\"geo\"><spherical_coordinates>"
      "<surface_model>EARTH_WGS84</surface_model><latitude_deg>47.0</latitude_deg>"
      "<longitude_deg>8.0</longitude_deg><elevation>400</elevation><heading_deg>0</heading_deg>"
      "</spherical_coordinates></world></sdf>";
  auto loaded = World::load_string(world, testing::seeded(3));
  ASSERT_TRUE(loaded.world) << joined(loaded.errors);
  RobotModel m = load_robot_model("model://fieldproof_tug", ".", examples_only());
  ASSERT_TRUE(m.ok());
  m.params.navsat_horizontal_stddev = m.params.navsat_vertical_stddev = 0.0;
  m.params.navsat_velocity_stddev = 0.0;
  World& w = *loaded.world;
  ASSERT_TRUE(w.spawn_vehicle("tug1", Pose2D{100.0, 200.0, 0.0}, m.params).ok());
  w.step_n(1000);
  const auto fixes = on_topic(w.take_messages(), "/model/tug1/navsat");
  ASSERT_EQ(fixes.size(), 2u);  // 2 Hz
  EXPECT_EQ(fixes[0].type, msgs::kNavSat);
  const auto fix = *msgs::parse<ignition::msgs::NavSat>(fixes[0].payload);
  // 200 m north and 100 m east of 47 N 8 E: about 0.0018 degrees of latitude, 0.0013 of longitude.
  EXPECT_NEAR(fix.latitude_deg(), 47.0 + 200.0 / 111'200.0, 2e-5);
  EXPECT_NEAR(fix.longitude_deg(),
              8.0 + 100.0 / (111'320.0 * std::cos(47.0 * std::numbers::pi / 180)), 2e-5);
  EXPECT_EQ(fix.altitude(), 400.0);
  EXPECT_EQ(fix.frame_id(), "tug1/navsat_link");
}

TEST(RobotModelInTheWorld, NavsatNoiseIsSeededAndHasTheModelsSpread) {
  RobotModel m = load_robot_model("model://fieldproof_tug", ".", examples_only());
  ASSERT_TRUE(m.ok());
  m.params.navsat_period = milliseconds(10);
  auto w = World::empty("w", milliseconds(1), testing::seeded(11));
  ASSERT_TRUE(w->spawn_vehicle("tug1", Pose2D{}, m.params).ok());
  w->step_n(10'000);
  double sum2 = 0;
  int n = 0;
  for (const auto& msg : on_topic(w->take_messages(), "/model/tug1/navsat")) {
    const auto fix = *msgs::parse<ignition::msgs::NavSat>(msg.payload);
    const double north_m = fix.latitude_deg() * std::numbers::pi / 180 * 6'335'439.0;
    sum2 += north_m * north_m;
    ++n;
  }
  ASSERT_EQ(n, 1000);
  EXPECT_NEAR(std::sqrt(sum2 / n), 0.3, 0.03);
}

// A tug driving east at 0.5 m/s through a GPS-denied strip x in [1, 2]: fixes, then no fix
// (every field NaN) exactly while its centre is in the strip, then fixes again.
TEST(GpsDenied, NavsatHasNoFixExactlyWhileTheVehicleIsInARegion) {
  RobotModel m = load_robot_model("model://fieldproof_tug", ".", examples_only());
  ASSERT_TRUE(m.ok());
  m.params.navsat_period = milliseconds(100);
  m.params.max_linear_accel = 1e9;
  WorldOptions o = testing::seeded(5);
  o.gps_denied.push_back({"strip", MapBounds{1.0, -5.0, 2.0, 5.0}});
  auto w = World::empty("w", milliseconds(1), o);
  ASSERT_TRUE(w->spawn_vehicle("tug1", Pose2D{}, m.params).ok());
  ASSERT_TRUE(w->set_cmd_vel("tug1", {0.5, 0.0}).ok());
  std::string states;             // one letter a fix: F fix, N no fix
  for (int i = 0; i < 60; ++i) {  // 6 s: x from 0 to 3 m
    w->step_n(100);
    const double x = w->vehicle("tug1")->pose.x;
    const auto out = on_topic(w->take_messages(), "/model/tug1/navsat");
    ASSERT_EQ(out.size(), 1u);
    const auto fix = *msgs::parse<ignition::msgs::NavSat>(out[0].payload);
    const bool inside = x >= 1.0 && x <= 2.0;
    EXPECT_EQ(std::isnan(fix.latitude_deg()), inside) << "x " << x;
    EXPECT_EQ(std::isnan(fix.longitude_deg()), inside) << "x " << x;
    EXPECT_EQ(std::isnan(fix.altitude()), inside) << "x " << x;
    EXPECT_EQ(std::isnan(fix.velocity_east()), inside) << "x " << x;
    EXPECT_EQ(std::isnan(fix.velocity_north()), inside) << "x " << x;
    EXPECT_EQ(std::isnan(fix.velocity_up()), inside) << "x " << x;
    if (states.empty() || states.back() != (inside ? 'N' : 'F')) states += inside ? 'N' : 'F';
  }
  EXPECT_EQ(states, "FNF");
}

// The noise is drawn inside a region too: the fixes after it equal those of a world without it.
TEST(GpsDenied, TheReadingsAfterARegionDoNotDependOnIt) {
  RobotModel m = load_robot_model("model://fieldproof_tug", ".", examples_only());
  ASSERT_TRUE(m.ok());
  const auto last_fix = [&](bool denied) {
    WorldOptions o = testing::seeded(9);
    if (denied) o.gps_denied.push_back({"", MapBounds{-1.0, -1.0, 1.0, 1.0}});
    auto w = World::empty("w", milliseconds(1), o);
    EXPECT_TRUE(w->spawn_vehicle("tug1", Pose2D{}, m.params).ok());
    EXPECT_TRUE(w->set_cmd_vel("tug1", {0.5, 0.0}).ok());
    w->step_n(8000);
    const auto out = on_topic(w->take_messages(), "/model/tug1/navsat");
    EXPECT_EQ(out.size(), 16u);
    return out.empty() ? std::string() : out.back().payload;
  };
  const std::string with = last_fix(true), without = last_fix(false);
  EXPECT_FALSE(with.empty());
  EXPECT_EQ(with, without);
}

TEST(GpsDenied, ARegionThatIsNotARectangleIsRefusedAtLoad) {
  for (const MapBounds& b : {MapBounds{2.0, 0.0, 1.0, 1.0}, MapBounds{0.0, 1.0, 1.0, 1.0},
                             MapBounds{std::nan(""), 0.0, 1.0, 1.0}}) {
    WorldOptions o;
    o.gps_denied.push_back({"roof", b});
    const auto loaded = World::load_string("<sdf version=\"1.9\"><world name=\"w\"/></sdf>", o);
    EXPECT_FALSE(loaded.world);
    ASSERT_EQ(loaded.errors.size(), 1u);
    EXPECT_NE(loaded.errors[0].find("gps_denied[0] 'roof'"), std::string::npos) << loaded.errors[0];
  }
}

TEST(RobotModelInTheWorld, AModelWithoutAContactSensorPublishesNoContacts) {
  RobotModel m = from_text(model_text());
  ASSERT_TRUE(m.ok()) << joined(m.errors);
  auto w = World::empty("w", milliseconds(1));
  ASSERT_TRUE(w->spawn_static("wall", {testing::box_shape(1.0, 0.0, 0.2, 4.0)}).ok());
  ASSERT_TRUE(w->spawn_vehicle("bot1", Pose2D{}, m.params).ok());
  ASSERT_TRUE(w->set_cmd_vel("bot1", {0.5, 0.0}).ok());
  w->step_n(3000);
  EXPECT_TRUE(w->vehicle("bot1")->touching);  // stopped at the wall all the same
  EXPECT_TRUE(on_topic(w->take_messages(), "/model/bot1/contacts").empty());
}

TEST(RobotModelInTheWorld, CreateOnTheBusSpawnsAModelFile) {
  auto w = World::empty("w", milliseconds(1));
  ignition::msgs::EntityFactory f;
  f.set_name("tug9");
  f.set_sdf_filename("model://fieldproof_tug");
  ASSERT_TRUE(w->handle_message("/world/w/create", msgs::kEntityFactory, msgs::serialize(f)).ok());
  w->step_n(100);
  EXPECT_FALSE(on_topic(w->take_messages(), "/model/tug9/scan").empty());
  f.set_name("ghost");
  f.set_sdf_filename("model://no_such_robot");
  const Status s = w->handle_message("/world/w/create", msgs::kEntityFactory, msgs::serialize(f));
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("no_such_robot"), std::string::npos) << s.message();
  EXPECT_EQ(w->vehicles(), std::vector<std::string>{"tug9"});
}

}  // namespace
}  // namespace fieldproof::world
