// `fieldproof assertions [--json]`, FIELDPROOF_PLUGIN_PATH, `fieldproof schema` with a plugin, and
// a scenario using the example plugin (examples/plugins/visits_waypoints) validated and run.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "integration/cli_test_util.hpp"

namespace fieldproof::integration {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kPluginDir = FIELDPROOF_PLUGIN_DIR;
const std::string kBadDir = FIELDPROOF_BAD_PLUGIN_DIR;
const std::string kNoPlugins = "env -u FIELDPROOF_PLUGIN_PATH ";
const std::string kWithPlugin = "env FIELDPROOF_PLUGIN_PATH=" + kPluginDir + " ";
const std::string kWithBad = "env FIELDPROOF_PLUGIN_PATH=" + kBadDir + " ";

const json* find_type(const json& list, const std::string& type) {
  for (const auto& t : list) {
    if (t["type"] == type) return &t;
  }
  return nullptr;
}

// A scenario in the test's scratch folder: ugv1 drives from the dock to goal_a and must visit
// `waypoints` (example.visits_waypoints). `plugins` is the scenario's plugins: list (YAML flow).
fs::path write_scenario(const std::string& name, const std::string& plugins,
                        const std::string& waypoints = "[goal_a, {x: 6, y: -1}]") {
  const fs::path dir = fs::path(FIELDPROOF_TEST_TMP) / "assertions_cli";
  fs::create_directories(dir);
  const fs::path file = dir / (name + ".yaml");
  std::ofstream(file) << "name: " << name << "\nworld: " << FIELDPROOF_SOURCE_DIR
                      << "/examples/worlds/depot.sdf\nseed: 7\n"
                      << "map: {bounds: {x_min: -15.6, x_max: 15.6, y_min: -10.6, y_max: 10.6}}\n"
                      << (plugins.empty() ? "" : "plugins: " + plugins + "\n")
                      << "vehicles:\n  - {name: ugv1, spawn: dock, stack: {plugin: fieldproof_ugv_nav_plugin}}\n"
                         "timeline:\n"
                         "  - {action: navigate_to_pose, name: drive, vehicle: ugv1, at: 1s, "
                         "goal: goal_a}\n"
                         "assertions:\n"
                         "  - name: patrol\n    type: example.visits_waypoints\n"
                         "    vehicle: ugv1\n    tolerance_m: 1.0\n    within_s: 60s\n"
                         "    waypoints: "
                      << waypoints << "\n";
  return file;
}

TEST(AssertionsCli, ListsEveryBuiltinTypeAndCollectorAndExitsZero) {
  const auto r = run_cli("assertions", true, kNoPlugins);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  for (const char* t :
       {"reach_pose", "within_time", "topic_rate", "no_collision", "topic_value", "geofence",
        "min_distance", "path_efficiency", "mission_time", "message_latency", "sequence",
        "resource_usage", "lifecycle_state", "always", "never", "eventually"}) {
    EXPECT_NE(r.out.find("\n  " + std::string(t) + " - "), std::string::npos) << t;
  }
  EXPECT_NE(r.out.find("KPI collectors"), std::string::npos);
  EXPECT_NE(r.out.find("tolerance_m (number, default 0.5)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("metrics: closest_m [m], reached_at_s [s], final_distance_m [m]"),
            std::string::npos);
}

TEST(AssertionsCli, JsonHasEveryTypeWithParametersAndMetrics) {
  const auto r = run_cli("assertions --json", false, kNoPlugins);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json j = json::parse(r.out);
  EXPECT_EQ(j["assertions"].size(), 16u);
  EXPECT_EQ(j["kpis"].size(), 8u);  // the seven of docs/assertions.md and link (docs/network.md);
  EXPECT_TRUE(j["plugin_problems"].empty());
  const json* reach = find_type(j["assertions"], "reach_pose");
  ASSERT_NE(reach, nullptr);
  EXPECT_TRUE((*reach)["plugin"].is_null());
  bool tolerance = false;
  for (const auto& p : (*reach)["parameters"]) {
    if (p["name"] == "tolerance_m") {
      tolerance = true;
      EXPECT_EQ(p["kind"], "number");
      EXPECT_EQ(p["default"], "0.5");
      EXPECT_EQ(p["required"], false);
      EXPECT_FALSE(p["description"].get<std::string>().empty());
    }
  }
  EXPECT_TRUE(tolerance);
  EXPECT_EQ((*reach)["metrics"][0]["name"], "closest_m");
  EXPECT_NE(find_type(j["kpis"], "path"), nullptr);
}

TEST(AssertionsCli, APluginOnTheSearchPathIsListed) {
  const auto r = run_cli("assertions", true, kWithPlugin);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("example.visits_waypoints [plugin " + kPluginDir), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("waypoints (list of placement, required)"), std::string::npos) << r.out;
}

TEST(AssertionsCli, APluginOnTheSearchPathIsInTheJson) {
  const auto r = run_cli("assertions --json", false, kWithPlugin);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json j = json::parse(r.out);
  const json* t = find_type(j["assertions"], "example.visits_waypoints");
  ASSERT_NE(t, nullptr);
  EXPECT_NE((*t)["plugin"].get<std::string>().find(kPluginDir), std::string::npos);
  EXPECT_EQ((*t)["metrics"][0]["name"], "visited");
}

TEST(AssertionsCli, ABadPluginExitsTwoSayingWhich) {
  const auto r = run_cli("assertions", true, kWithBad);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("error: assertion plugin " + kBadDir +
                       "/no_entry.so: exports no "
                       "fieldproof_assertions_plugin_v1"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("reach_pose - "), std::string::npos);  // the rest is still listed
}

// A plugin built for plugin API v1 (times as double seconds) is refused, not run: exit 2.
TEST(AssertionsCli, APluginOfThePreviousApiVersionExitsTwo) {
  const std::string dir = FIELDPROOF_OLD_PLUGIN_DIR;
  const auto r = run_cli("assertions", true, "env FIELDPROOF_PLUGIN_PATH=" + dir + " ");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("error: assertion plugin " + dir +
                       "/old_api.so: ABI version mismatch: built for plugin API v1, this "
                       "fieldproof loads v2: rebuild the plugin"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("reach_pose - "), std::string::npos);  // the built-ins are still listed
}

TEST(AssertionsCli, ABadPluginIsInTheJsonProblems) {
  const auto r = run_cli("assertions --json", false, kWithBad);
  EXPECT_EQ(r.exit_code, 2);
  const json j = json::parse(r.out);
  EXPECT_EQ(j["plugin_problems"].size(), 11u);  // the 11 bad libraries of bad_plugins/
  EXPECT_EQ(find_type(j["assertions"], "bad.fine"), nullptr);
}

TEST(AssertionsCli, APluginGivenWithPluginIsListed) {
  const auto r = run_cli("assertions --plugin " + kPluginDir + "/libexample_visits_waypoints.so",
                         true, kNoPlugins);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("example.visits_waypoints"), std::string::npos);
}

TEST(SchemaCli, IncludesTheInstalledPluginsTypes) {
  const auto with = run_cli("schema", false, kWithPlugin);
  EXPECT_EQ(with.exit_code, 0);
  EXPECT_NE(with.out.find("example.visits_waypoints"), std::string::npos);
  const auto without = run_cli("schema", false, kNoPlugins);
  EXPECT_EQ(without.out.find("example.visits_waypoints"), std::string::npos);
}

TEST(ValidateCli, AScenarioListingThePluginValidates) {
  const fs::path s =
      write_scenario("listed", "[" + kPluginDir + "/libexample_visits_waypoints.so]");
  const auto r = run_cli("validate " + s.string(), true, kNoPlugins);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("valid"), std::string::npos);
}

TEST(ValidateCli, AScenarioUsingAPluginOfTheSearchPathValidates) {
  const fs::path s = write_scenario("searched", "");
  const auto r = run_cli("validate " + s.string(), true, kWithPlugin);
  EXPECT_EQ(r.exit_code, 0) << r.out;
}

TEST(ValidateCli, WithoutThePluginItsTypeIsUnknown) {
  const fs::path s = write_scenario("unplugged", "");
  const auto r = run_cli("validate " + s.string(), true, kNoPlugins);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("example.visits_waypoints"), std::string::npos) << r.out;
}

TEST(ValidateCli, ABadPluginIsAWarningAndItsTypeStaysUnknown) {
  const fs::path s = write_scenario("bad_plugin", "[" + kBadDir + "/throws.so]");
  // validate loads no plugin: one without embedded tables is refused unread.
  const auto r = run_cli("validate " + s.string(), true, kNoPlugins);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("warning: assertion plugin " + kBadDir +
                       "/throws.so: carries no type tables"),
            std::string::npos)
      << r.out;
  // run loads it, and says what its entry point did.
  const auto dry = run_cli("run --dry-run " + s.string(), true, kNoPlugins);
  EXPECT_EQ(dry.exit_code, 2) << dry.out;
  EXPECT_NE(dry.out.find("warning: assertion plugin " + kBadDir +
                         "/throws.so: registering its types threw: no licence for this host"),
            std::string::npos)
      << dry.out;
}

TEST(RunCli, APluginsAssertionIsJudgedInARun) {
  const fs::path s =
      write_scenario("plugin_run", "[" + kPluginDir + "/libexample_visits_waypoints.so]");
  const fs::path runs = fresh_runs_dir("plugin_run");
  const auto r =
      run_cli("run " + s.string() + " --max-rtf 0 --run-id a --runs-dir " + runs.string(), true,
              kNoPlugins);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  const json run = run_json(runs / "a");
  ASSERT_EQ(run["assertions"].size(), 1u) << run.dump(2);
  EXPECT_EQ(run["assertions"][0]["type"], "example.visits_waypoints");
  EXPECT_EQ(run["assertions"][0]["status"], "passed") << run["assertions"][0].dump(2);
}

TEST(RunCli, APluginsFailedAssertionFailsTheRun) {
  const fs::path s = write_scenario(
      "plugin_fail", "[" + kPluginDir + "/libexample_visits_waypoints.so]", "[goal_a, goal_c]");
  const fs::path runs = fresh_runs_dir("plugin_fail");
  const auto r =
      run_cli("run " + s.string() + " --max-rtf 0 --run-id a --runs-dir " + runs.string(), true,
              kNoPlugins);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("did not visit goal_c"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace fieldproof::integration
