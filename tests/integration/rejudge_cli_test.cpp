// `fieldproof run SCENARIO --from-recording RUN`: a scenario's assertions judged against a
// recorded run without simulating. One live run of ugv_nav_to_goal is shared
// by the tests of this file.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "integration/cli_test_util.hpp"

namespace fieldproof::integration {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class RejudgeCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    runs_ = new fs::path(fresh_runs_dir("rejudge"));
    const auto r = run_cli("run examples/scenarios/ugv_nav_to_goal.yaml --max-rtf 0 --runs-dir " +
                           runs_->string() + " --run-id live");
    live_exit_ = r.exit_code;
    live_out_ = new std::string(r.out);
  }
  static void TearDownTestSuite() {
    delete runs_;
    delete live_out_;
  }
  void SetUp() override { ASSERT_EQ(live_exit_, 0) << *live_out_; }
  static fs::path live() { return *runs_ / "live"; }
  static json rejudge_json(const std::string& scenario, const std::string& from, int* exit_code) {
    const auto r = run_cli("run " + scenario + " --from-recording " + from + " --json", false);
    *exit_code = r.exit_code;
    return json::parse(r.out, nullptr, false);
  }
  static const json* find(const json& assertions, const std::string& name) {
    for (const json& a : assertions) {
      if (a["name"] == name) return &a;
    }
    return nullptr;
  }

  static inline fs::path* runs_ = nullptr;
  static inline int live_exit_ = -1;
  static inline std::string* live_out_ = nullptr;
};

TEST_F(RejudgeCli, ARecordedRunRejudgedGivesTheLiveRunsVerdicts) {
  int code = -1;
  const json r = rejudge_json("examples/scenarios/ugv_nav_to_goal.yaml", live().string(), &code);
  ASSERT_TRUE(r.is_object()) << r;
  EXPECT_EQ(code, 0) << r.dump(2);
  EXPECT_EQ(r["verdict"], "PASS");
  const json live_run = run_json(live());
  ASSERT_EQ(r["assertions"].size(), live_run["assertions"].size());
  for (const json& l : live_run["assertions"]) {
    const json* a = find(r["assertions"], l["name"]);
    ASSERT_NE(a, nullptr) << l["name"];
    EXPECT_EQ((*a)["status"], l["status"]) << l["name"];
    EXPECT_EQ((*a)["reason"], l["reason"]) << l["name"];
    EXPECT_NEAR((*a)["t_s"].get<double>(), l["t_s"].get<double>(), 1e-9) << l["name"];
  }
}

// More scenarios, each its own live run: re-judging its recording gives the live run's status,
// reason, every assertion's verdict, reason and time, and every KPI value (a failing run too).
class RejudgeAsLive : public ::testing::TestWithParam<const char*> {};

TEST_P(RejudgeAsLive, TheRejudgedRunHasTheLiveRunsVerdictsReasonsAndKpis) {
  const std::string scenario = std::string("examples/scenarios/") + GetParam() + ".yaml";
  const fs::path runs = fresh_runs_dir(std::string("as_live_") + GetParam());
  const auto live =
      run_cli("run " + scenario + " --max-rtf 0 --runs-dir " + runs.string() + " --run-id live");
  const json l = run_json(runs / "live");
  const auto rj = run_cli(
      "run " + scenario + " --from-recording " + (runs / "live").string() + " --json", false);
  const json r = json::parse(rj.out, nullptr, false);
  ASSERT_TRUE(r.is_object()) << rj.out;
  EXPECT_EQ(rj.exit_code, live.exit_code) << live.out;
  EXPECT_EQ(r["status"], l["status"]);
  EXPECT_EQ(r["reason"], l["reason"]);
  ASSERT_EQ(r["assertions"].size(), l["assertions"].size());
  for (size_t i = 0; i < l["assertions"].size(); ++i) {
    const json& a = l["assertions"][i];
    const json& b = r["assertions"][i];
    EXPECT_EQ(b["name"], a["name"]);
    EXPECT_EQ(b["status"], a["status"]) << a["name"];
    EXPECT_EQ(b["reason"], a["reason"]) << a["name"];
    EXPECT_EQ(b["t_s"], a["t_s"]) << a["name"];
  }
  ASSERT_FALSE(l["kpis"].empty());
  ASSERT_EQ(r["kpis"].size(), l["kpis"].size()) << r["kpis"].dump(2);
  for (const auto& [name, v] : l["kpis"].items()) {
    ASSERT_TRUE(r["kpis"].contains(name)) << name;
    EXPECT_EQ(r["kpis"][name]["value"], v["value"]) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(Scenarios, RejudgeAsLive,
                         ::testing::Values("ugv_nav_fails_on_time", "ugv_fleet",
                                           "ugv_stack_restart", "ugv_event_order",
                                           "tug_nav_to_goal", "tug_gps_denied", "ugv_nav_to_goal",
                                           "ugv_full_set", "ugv_link_loss", "ugv_obstacle_replan",
                                           "ugv_lockstep", "ugv_sim_control", "ugv_fleet_apart"));

TEST_F(RejudgeCli, AnAssertionTheLiveRunDidNotHaveIsJudgedOnTheOldRun) {
  // ugv_nav_fails_on_time gives the same drive one second: judged on the passing run's
  // recording it fails at the deadline, as its own live run does.
  int code = -1;
  const json r =
      rejudge_json("examples/scenarios/ugv_nav_fails_on_time.yaml", live().string(), &code);
  ASSERT_TRUE(r.is_object()) << r;
  EXPECT_EQ(code, 1) << r.dump(2);
  EXPECT_EQ(r["verdict"], "FAIL");
  const json* late = find(r["assertions"], "arrived_in_time");
  ASSERT_NE(late, nullptr);
  EXPECT_EQ((*late)["status"], "failed");
  EXPECT_EQ((*late)["t_s"], 3.0);  // at the limit itself, as the live run judges it
  EXPECT_EQ((*find(r["assertions"], "reached_goal"))["status"], "passed");
}

TEST_F(RejudgeCli, TheScenariosKpiCollectorsMeasureTheRecordedRun) {
  int code = -1;
  const json r = rejudge_json("examples/scenarios/ugv_nav_to_goal.yaml", live().string(), &code);
  ASSERT_TRUE(r.is_object()) << r;
  ASSERT_EQ(r["kpi_collectors"].size(), 2u) << r.dump(2);
  for (const json& k : r["kpi_collectors"]) {
    EXPECT_EQ(k["status"], "measured") << k.dump(2);
  }
  // The drive's path length, measured from the recorded poses.
  bool path = false;
  for (const auto& [name, v] : r["kpis"].items()) {
    path = path || (name.rfind("drive.", 0) == 0 && v["value"].get<double>() > 1.0);
  }
  EXPECT_TRUE(path) << r["kpis"].dump(2);
}

TEST_F(RejudgeCli, TheMcapFileItselfCanBeGiven) {
  int code = -1;
  const json r = rejudge_json("examples/scenarios/ugv_nav_to_goal.yaml",
                              (live() / "recording" / "recording.mcap").string(), &code);
  ASSERT_TRUE(r.is_object()) << r;
  EXPECT_EQ(code, 0) << r.dump(2);
}

TEST_F(RejudgeCli, WithoutJsonItWritesARunDirectoryWithTheVerdicts) {
  const auto r = run_cli("run examples/scenarios/ugv_nav_to_goal.yaml --from-recording " +
                         live().string() + " --runs-dir " + runs_->string() + " --run-id again");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("PASS"), std::string::npos) << r.out;
  const json run = run_json(*runs_ / "again");
  EXPECT_EQ(run["mode"], "rejudge");
  EXPECT_EQ(run["verdict"], "PASS");
  EXPECT_EQ(run["assertions"].size(), 3u);
  EXPECT_FALSE(read_file(*runs_ / "again" / "assertions.jsonl").empty());
  // The reports of a live run, from the re-judged run.json.
  for (const char* f : {"report.json", "report.md", "junit.xml", "report.html"}) {
    EXPECT_TRUE(fs::exists(*runs_ / "again" / f)) << f;
  }
  EXPECT_NE(read_file(*runs_ / "again" / "report.md").find("reached_goal"), std::string::npos);
}

TEST_F(RejudgeCli, AssertionsOnTopicsTheObserverWatchesAreJudgedOnTheOldRun) {
  // A scenario written now: the same run, judged on the odometry's rate (what the live run's
  // scenario never asked for) through the Observer's rate windows.
  std::string yaml = read_file("examples/scenarios/ugv_nav_to_goal.yaml");
  const std::string world = "../worlds/depot.sdf";
  yaml.replace(yaml.find(world), world.size(), fs::absolute("examples/worlds/depot.sdf").string());
  yaml = yaml.substr(0, yaml.find("assertions:")) +
         "assertions:\n"
         "  - {name: odom_alive, type: topic_rate, vehicle: ugv1, topic: odometry, min_hz: 5}\n"
         "  - {name: odom_impossible, type: topic_rate, vehicle: ugv1, topic: odometry,\n"
         "     min_hz: 100000}\n";
  const fs::path scenario = *runs_ / "odom_rate.yaml";
  std::ofstream(scenario) << yaml;
  int code = -1;
  const json r = rejudge_json(scenario.string(), live().string(), &code);
  ASSERT_TRUE(r.is_object()) << r;
  EXPECT_EQ(code, 1) << r.dump(2);
  ASSERT_NE(find(r["assertions"], "odom_alive"), nullptr) << r.dump(2);
  EXPECT_EQ((*find(r["assertions"], "odom_alive"))["status"], "passed") << r.dump(2);
  EXPECT_EQ((*find(r["assertions"], "odom_impossible"))["status"], "failed") << r.dump(2);
}

TEST_F(RejudgeCli, AnInterruptedRunRejudgedSkipsWhatTheLiveRunSkipped) {
  const fs::path runs = fresh_runs_dir("rejudge_interrupted");
  ASSERT_EQ(interrupt_run_once_the_drive_started(runs), 130);
  const json live_run = run_json(runs / "a");
  ASSERT_EQ(live_run["status"], "interrupted");
  int code = -1;
  const json r =
      rejudge_json("examples/scenarios/ugv_nav_to_goal.yaml", (runs / "a").string(), &code);
  ASSERT_TRUE(r.is_object()) << r;
  size_t skipped = 0;
  for (const json& l : live_run["assertions"]) {
    const json* a = find(r["assertions"], l["name"]);
    ASSERT_NE(a, nullptr) << l["name"];
    EXPECT_EQ((*a)["status"], l["status"]) << l["name"];
    EXPECT_EQ((*a)["reason"], l["reason"]) << l["name"];
    EXPECT_NEAR((*a)["t_s"].get<double>(), l["t_s"].get<double>(), 1e-9) << l["name"];
    skipped += l["status"] == "skipped";
  }
  EXPECT_GT(skipped, 0u);
}

TEST_F(RejudgeCli, WithoutTheWorldsPoseTopicThePosesComeFromTheVehiclePoseChannels) {
  // A live run that records only the contacts (the recorder always adds the vehicles' pose
  // channels): re-judged, it gives its live verdicts from those channels.
  std::string yaml = read_file("examples/scenarios/ugv_nav_to_goal.yaml");
  const std::string world = "../worlds/depot.sdf";
  yaml.replace(yaml.find(world), world.size(), fs::absolute("examples/worlds/depot.sdf").string());
  yaml = yaml.substr(0, yaml.find("outputs:")) +
         "outputs:\n  record: true\n  topics: [/model/ugv1/contacts]\n";
  const fs::path runs = fresh_runs_dir("rejudge_vehicle_poses");
  fs::create_directories(runs);
  const fs::path scenario = runs / "contacts_only.yaml";
  std::ofstream(scenario) << yaml;
  const auto live_run_cli = run_cli("run " + scenario.string() + " --max-rtf 0 --runs-dir " +
                                    runs.string() + " --run-id live");
  ASSERT_EQ(live_run_cli.exit_code, 0) << live_run_cli.out;
  const auto r = run_cli("run " + scenario.string() + " --from-recording " +
                         (runs / "live").string() + " --json");
  EXPECT_NE(r.out.find("vehicle poses are read from /fieldproof/vehicles/<v>/pose"),
            std::string::npos)
      << r.out;
  const json out = json::parse(r.out.substr(r.out.find('{')), nullptr, false);
  ASSERT_TRUE(out.is_object()) << r.out;
  EXPECT_EQ(r.exit_code, 0) << r.out;
  const json live_run = run_json(runs / "live");
  for (const json& l : live_run["assertions"]) {
    const json* a = find(out["assertions"], l["name"]);
    ASSERT_NE(a, nullptr) << l["name"];
    EXPECT_EQ((*a)["status"], l["status"]) << l["name"];
    EXPECT_EQ((*a)["reason"], l["reason"]) << l["name"];
  }
}

// A recording without the contacts topic: no_collision cannot be judged on
// it, and says so, instead of passing on nothing ("touched nothing").
TEST_F(RejudgeCli, AnAssertionWhoseTopicWasNotRecordedIsSkippedWithTheReason) {
  std::string yaml = read_file("examples/scenarios/ugv_nav_to_goal.yaml");
  const std::string world = "../worlds/depot.sdf";
  yaml.replace(yaml.find(world), world.size(), fs::absolute("examples/worlds/depot.sdf").string());
  yaml = yaml.substr(0, yaml.find("outputs:")) +
         "outputs:\n  record: true\n  topics: [/world/depot/pose/info]\n";
  const fs::path runs = fresh_runs_dir("rejudge_no_contacts");
  fs::create_directories(runs);
  const fs::path scenario = runs / "poses_only.yaml";
  std::ofstream(scenario) << yaml;
  const auto live_run_cli = run_cli("run " + scenario.string() + " --max-rtf 0 --runs-dir " +
                                    runs.string() + " --run-id live");
  ASSERT_EQ(live_run_cli.exit_code, 0) << live_run_cli.out;
  int code = -1;
  const json out = rejudge_json(scenario.string(), (runs / "live").string(), &code);
  ASSERT_TRUE(out.is_object());
  EXPECT_EQ(code, 0) << out.dump(2);
  const json* nc = find(out["assertions"], "no_collision");
  ASSERT_NE(nc, nullptr);
  EXPECT_EQ((*nc)["status"], "skipped") << nc->dump(2);
  EXPECT_NE((*nc)["reason"].get<std::string>().find(
                "the recording has no /model/ugv1/contacts (the topic was not recorded)"),
            std::string::npos)
      << (*nc)["reason"];
  // What the recording has is still judged.
  EXPECT_EQ((*find(out["assertions"], "reached_goal"))["status"], "passed");
  EXPECT_NE(out["reason"].get<std::string>().find("1 skipped"), std::string::npos) << out["reason"];
}

TEST_F(RejudgeCli, AMissingRecordingIsInvalidInput) {
  const auto r = run_cli("run examples/scenarios/ugv_nav_to_goal.yaml --from-recording " +
                         (*runs_ / "nothing_here.mcap").string() + " --json");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("nothing_here.mcap"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace fieldproof::integration
