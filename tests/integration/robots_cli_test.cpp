// Robot models through the CLI: a vehicle's `model` resolved and read
// at `fieldproof validate` and `fieldproof run`, bad model files refused with file:line and the
// element (exit 2, nothing started), and the second robot driven to PASS by the reference stack.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "integration/cli_test_util.hpp"

namespace fieldproof::integration {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kDepot = fs::absolute("examples/worlds/depot.sdf");

// A folder of the test's own holding model/model.sdf (`model_sdf`) and scenario.yaml naming it.
struct BadModelCase {
  fs::path dir;
  fs::path scenario;
};

BadModelCase write_case(const std::string& name, const std::string& model_sdf,
                        const std::string& model_field = "model") {
  BadModelCase c;
  c.dir = fresh_runs_dir(name, "robots_");
  fs::create_directories(c.dir / "model");
  if (!model_sdf.empty()) std::ofstream(c.dir / "model" / "model.sdf") << model_sdf;
  c.scenario = c.dir / "scenario.yaml";
  std::ofstream(c.scenario) << "name: " << name << "\n"
                            << "world: " << kDepot.string() << "\n"
                            << "vehicles:\n"
                            << "  - name: bot1\n"
                            << "    model: " << model_field << "\n"
                            << "    spawn: dock\n";
  return c;
}

std::string model_with(const std::string& drive, const std::string& sensors = "",
                       const std::string& extra = "") {
  return "<?xml version=\"1.0\"?>\n"
         "<sdf version=\"1.9\">\n"
         "  <model name=\"bot\">\n"
         "    <link name=\"base\">\n"
         "      <collision name=\"c\">\n"
         "        <geometry><box><size>0.5 0.3 0.2</size></box></geometry>\n"
         "      </collision>\n"
         "      " +
         sensors +
         "\n"  // line 8
         "    </link>\n"
         "    <plugin filename=\"gz-sim-diff-drive-system\" name=\"gz::sim::systems::DiffDrive\">\n"
         "      " +
         drive +
         "\n"  // line 11
         "    </plugin>\n"
         "    " +
         extra +
         "\n"  // line 13
         "  </model>\n"
         "</sdf>\n";
}

const std::string kDrive =
    "<wheel_separation>0.3</wheel_separation><max_linear_velocity>1</max_linear_velocity>"
    "<max_angular_velocity>1</max_angular_velocity>";

// validate and run both exit 2 with `expected` in the output, and run starts nothing.
void expect_refused(const BadModelCase& c, const std::string& expected) {
  const auto v = run_cli("validate " + c.scenario.string());
  EXPECT_EQ(v.exit_code, 2) << v.out;
  EXPECT_NE(v.out.find(expected), std::string::npos) << v.out;
  const fs::path runs = c.dir / "runs";
  const auto r = run_cli("run " + c.scenario.string() + " --runs-dir " + runs.string());
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find(expected), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(runs)) << "a refused run started something";
}

TEST(RobotModelCli, AModelFileThatDoesNotExistIsRefused) {
  const auto c = write_case("missing", "", "model/nothing_here.sdf");
  expect_refused(c, "scenario.yaml:5:12: vehicles[0].model: the model file ");
  expect_refused(c, "nothing_here.sdf does not exist");
}

TEST(RobotModelCli, AFileThatIsNotSdfIsRefused) {
  const auto c = write_case("not_sdf", "<robot name=\"urdf\">\n</robot>\n", "model");
  expect_refused(c, "model/model.sdf:1: not an SDF model file: the root element is <robot>");
}

TEST(RobotModelCli, TwoDrivesAreRefused) {
  const auto c =
      write_case("two_drives", model_with(kDrive, "",
                                          "<plugin filename=\"gz-sim-diff-drive-system\" "
                                          "name=\"gz::sim::systems::DiffDrive\"/>"));
  expect_refused(c, "model/model.sdf:13: model 'bot' has two drives");
}

TEST(RobotModelCli, ASensorWithANegativeRateIsRefused) {
  const auto c = write_case(
      "negative_rate",
      model_with(kDrive,
                 "<sensor name=\"imu\" type=\"imu\"><update_rate>-1</update_rate></sensor>"));
  expect_refused(c, "model/model.sdf:8: <update_rate> of sensor 'imu' (imu): -1 Hz");
}

TEST(RobotModelCli, ALidarWithMoreThan100000SamplesIsRefused) {
  const auto c = write_case(
      "many_samples",
      model_with(kDrive,
                 "<sensor name=\"l\" type=\"lidar\"><lidar><scan><horizontal>"
                 "<samples>200000</samples><min_angle>-1</min_angle><max_angle>1</max_angle>"
                 "</horizontal></scan><range><min>0.1</min><max>5</max></range></lidar></sensor>"));
  expect_refused(c, "model/model.sdf:8: <samples> of sensor 'l' (lidar): 200000");
}

TEST(RobotModelCli, AWheelSeparationOfZeroIsRefused) {
  const auto c = write_case(
      "zero_separation",
      model_with("<wheel_separation>0</wheel_separation><max_linear_velocity>1"
                 "</max_linear_velocity><max_angular_velocity>1</max_angular_velocity>"));
  expect_refused(c, "model/model.sdf:11: <wheel_separation> of the DiffDrive plugin must be > 0");
}

TEST(RobotModelCli, AModelOnTheResourcePathIsFoundAndItsWarningsShown) {
  const auto c = write_case(
      "resource_path",
      model_with(kDrive,
                 "<sensor name=\"cam\" type=\"camera\"><update_rate>30</update_rate></sensor>"),
      "model://my_bot");
  fs::rename(c.dir / "model", c.dir / "my_bot");
  const auto r = run_cli("validate " + c.scenario.string(), true,
                         "FIELDPROOF_RESOURCE_PATH=" + c.dir.string() + " ");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("my_bot/model.sdf:8: sensor 'cam' (camera) is not simulated"),
            std::string::npos)
      << r.out;
  const auto without = run_cli("validate " + c.scenario.string());
  EXPECT_EQ(without.exit_code, 2) << without.out;
  EXPECT_NE(without.out.find("model://my_bot"), std::string::npos) << without.out;
}

TEST(RobotModelCli, DryRunNamesEachVehiclesModelFile) {
  const auto r = run_cli("run examples/scenarios/tug_nav_to_goal.yaml --dry-run");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("examples/models/fieldproof_tug/model.sdf"), std::string::npos) << r.out;
  const auto ugv = run_cli("run examples/scenarios/ugv_nav_to_goal.yaml --dry-run");
  ASSERT_EQ(ugv.exit_code, 0) << ugv.out;
  EXPECT_NE(ugv.out.find("examples/models/fieldproof_ugv/model.sdf"), std::string::npos) << ugv.out;
}

TEST(RobotModelCli, TheTugDrivesToGoalAWithTheReferenceStack) {
  const fs::path runs = fresh_runs_dir("tug", "robots_");
  const auto r = run_cli("run examples/scenarios/tug_nav_to_goal.yaml --max-rtf 0 --runs-dir " +
                         runs.string() + " --run-id a");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("PASS"), std::string::npos) << r.out;
  const json run = run_json(runs / "a");
  EXPECT_EQ(run["verdict"], "PASS");
  for (const auto& a : run["assertions"]) {
    EXPECT_EQ(a["status"], "passed") << a["name"] << ": " << a["reason"];
  }
  EXPECT_EQ(run["timeline"][0]["status"], "succeeded");
}

TEST(RobotModelCli, WorldCommandDrivesTheTugGivenAsModel) {
  const auto r = run_cli(
      "world examples/worlds/depot.sdf --model model://fieldproof_tug --spawn tug1@dock "
      "--goal goal_b --until 120s");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("tug1: from (-11.90"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(": arrived"), std::string::npos) << r.out;
}

// Item 6: the tug drives through a GPS-denied region; its navsat has a fix, loses it under the
// roof and has it again past it (the scenario's sequence and never assertions judge it).
TEST(GpsDeniedCli, TheTugsFixIsLostUnderTheRoofAndRegained) {
  const fs::path runs = fresh_runs_dir("gps", "robots_");
  const auto r = run_cli("run examples/scenarios/tug_gps_denied.yaml --max-rtf 0 --runs-dir " +
                         runs.string() + " --run-id a");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json run = run_json(runs / "a");
  EXPECT_EQ(run["verdict"], "PASS");
  bool saw_sequence = false;
  for (const auto& a : run["assertions"]) {
    EXPECT_EQ(a["status"], "passed") << a["name"] << ": " << a["reason"];
    if (a["name"] == "fix_lost_and_regained") {
      saw_sequence = true;
      EXPECT_EQ(a["metrics"]["steps_done"]["value"], 3.0) << a.dump();
    }
  }
  EXPECT_TRUE(saw_sequence);
}

// The same scenario without its region: the fix is never lost, so the sequence fails.
TEST(GpsDeniedCli, WithoutTheRegionTheFixIsNeverLost) {
  const fs::path dir = fresh_runs_dir("gps_none", "robots_");
  fs::create_directories(dir);
  std::string text = read_file("examples/scenarios/tug_gps_denied.yaml");
  const size_t from = text.find("gps_denied:"), to = text.find("vehicles:");
  ASSERT_NE(from, std::string::npos);
  ASSERT_NE(to, std::string::npos);
  text.erase(from, to - from);
  const std::string world = "world: ../worlds/depot.sdf";
  text.replace(text.find(world), world.size(), "world: " + kDepot.string());
  std::ofstream(dir / "scenario.yaml") << text;
  const auto r = run_cli("run " + (dir / "scenario.yaml").string() + " --max-rtf 0 --runs-dir " +
                         (dir / "runs").string() + " --run-id a");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  const json run = run_json(dir / "runs" / "a");
  for (const auto& a : run["assertions"]) {
    if (a["name"] == "fix_lost_and_regained") {
      EXPECT_EQ(a["status"], "failed") << a.dump();
      EXPECT_EQ(a["metrics"]["steps_done"]["value"], 1.0) << a.dump();
    }
  }
}

// A region that is not a rectangle, or a bound that is not a number: exit 2 with file:line and
// the field, at validate and run alike, nothing started.
TEST(GpsDeniedCli, ARegionWithMinAboveMaxOrNanIsRefused) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"x_min: 3, x_max: 1, y_min: 0, y_max: 1", "scenario.yaml:4:"},
      {"x_min: 0, x_max: 1, y_min: 2, y_max: 2", "scenario.yaml:4:"},
      {"x_min: .nan, x_max: 1, y_min: 0, y_max: 1", "scenario.yaml:4:"}};
  const std::vector<std::string> fields = {"gps_denied[0].x_max: must be greater than x_min",
                                           "gps_denied[0].y_max: must be greater than y_min",
                                           "gps_denied[0].x_min"};
  for (size_t i = 0; i < cases.size(); ++i) {
    const fs::path dir = fresh_runs_dir("gps_bad" + std::to_string(i), "robots_");
    fs::create_directories(dir);
    std::ofstream(dir / "scenario.yaml") << "name: bad_region\n"
                                         << "world: " << kDepot.string() << "\n"
                                         << "gps_denied:\n"
                                         << "  - {name: roof, " << cases[i].first << "}\n"
                                         << "vehicles:\n"
                                         << "  - {name: tug1, model: model://fieldproof_tug, "
                                            "spawn: dock}\n";
    // validate for each case, run for the first (the same loader; a run costs a few seconds).
    const fs::path scenario = dir / "scenario.yaml";
    const auto v = run_cli("validate " + scenario.string());
    EXPECT_EQ(v.exit_code, 2) << v.out;
    EXPECT_NE(v.out.find(cases[i].second), std::string::npos) << v.out;
    EXPECT_NE(v.out.find(fields[i]), std::string::npos) << v.out;
    if (i == 0) {
      const fs::path runs = dir / "runs";
      const auto r = run_cli("run " + scenario.string() + " --runs-dir " + runs.string());
      EXPECT_EQ(r.exit_code, 2) << r.out;
      EXPECT_NE(r.out.find(fields[i]), std::string::npos) << r.out;
      EXPECT_FALSE(fs::exists(runs)) << "a refused run started something";
    }
  }
}

}  // namespace
}  // namespace fieldproof::integration
