// The assertion library's example scenarios run end to end on the embedded depot world:
// every verdict, the KPIs and the observer's outputs in the run directory; and a variant
// of each that must fail, so the passing verdicts are not vacuous.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "integration/cli_test_util.hpp"

namespace fieldproof::integration {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// name -> the verdict in run.json.
std::map<std::string, json> verdicts(const json& run) {
  std::map<std::string, json> out;
  for (const auto& a : run["assertions"]) out[a["name"].get<std::string>()] = a;
  return out;
}

// Runs `scenario` unpaced as run id "a" under a fresh runs directory named after `test`.
struct Ran {
  CommandResult cli;
  fs::path dir;
  json run;
};
Ran run_example(const std::string& scenario, const std::string& test) {
  const fs::path runs = fresh_runs_dir(test, "examples_");
  Ran r;
  r.cli = run_cli("run " + scenario + " --max-rtf 0 --runs-dir " + runs.string() + " --run-id a");
  r.dir = runs / "a";
  if (fs::exists(r.dir / "run.json")) r.run = run_json(r.dir);
  return r;
}

// A copy of an example with text replaced (each `from` must occur), its world made absolute;
// returns the new file's path.
fs::path variant(const std::string& example, const std::string& test,
                 const std::vector<std::pair<std::string, std::string>>& edits) {
  std::string text = read_file("examples/scenarios/" + example);
  const auto replace = [&](const std::string& from, const std::string& to) {
    const size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << "not in " << example << ": " << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
  };
  replace("world: ../worlds/depot.sdf",
          "world: " + fs::absolute("examples/worlds/depot.sdf").string());
  for (const auto& [from, to] : edits) replace(from, to);
  const fs::path dir = fs::path(FIELDPROOF_TEST_TMP) / ("examples_variant_" + test);
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path file = dir / example;
  std::ofstream(file) << text;
  return file;
}

std::set<std::string> kinds_in(const fs::path& jsonl) {
  std::set<std::string> out;
  std::istringstream in(read_file(jsonl));
  for (std::string line; std::getline(in, line);) {
    const json j = json::parse(line, nullptr, false);
    if (j.is_object() && j.contains("kind")) out.insert(j["kind"].get<std::string>());
  }
  return out;
}

TEST(AssertionExamples, FullSetPassesEveryAssertion) {
  const Ran r = run_example("examples/scenarios/ugv_full_set.yaml", "full_set");
  ASSERT_EQ(r.cli.exit_code, 0) << r.cli.out;
  const auto v = verdicts(r.run);
  for (const char* name : {"reached_goal", "no_collision", "stays_in_yard", "drives_straight",
                           "mission", "odometry_fresh", "scan_rate", "stack_footprint",
                           "navigator_active", "drive_story", "stops_at_goal"}) {
    ASSERT_TRUE(v.count(name)) << name;
    EXPECT_EQ(v.at(name)["status"], "passed") << name << ": " << v.at(name)["reason"];
  }
  EXPECT_EQ(v.at("drive_story")["metrics"]["steps_done"]["value"], 3);
  EXPECT_EQ(v.at("navigator_active")["evidence"].contains("excerpt"), true);
}

TEST(AssertionExamples, FullSetMeasuresItsFiveCollectorsAndTheKpiMap) {
  const Ran r = run_example("examples/scenarios/ugv_full_set.yaml", "full_set_kpis");
  ASSERT_EQ(r.cli.exit_code, 0) << r.cli.out;
  ASSERT_EQ(r.run["kpi_collectors"].size(), 5u);
  for (const auto& k : r.run["kpi_collectors"]) {
    EXPECT_EQ(k["status"], "measured") << k["name"] << ": " << k["reason"];
  }
  const json& kpis = r.run["kpis"];
  for (const char* key :
       {"drive.path_m", "mission_span.duration_s", "odom_age.p95_ms", "stack.peak_memory_mb",
        "commanded.count", "reached_goal.closest_m", "drives_straight.efficiency"}) {
    ASSERT_TRUE(kpis.contains(key)) << key;
    EXPECT_TRUE(kpis[key].contains("unit")) << key;
  }
  EXPECT_EQ(kpis["drive.path_m"]["source"], "collector drive");
  EXPECT_EQ(kpis["reached_goal.closest_m"]["source"], "assertion reached_goal");
  EXPECT_GT(kpis["drive.path_m"]["value"].get<double>(), 20.0);
  EXPECT_GT(kpis["commanded.count"]["value"].get<double>(), 100.0);
  EXPECT_GT(kpis["stack.peak_memory_mb"]["value"].get<double>(), 1.0);
  // kpis.jsonl: one line per collector, then the map.
  std::istringstream lines(read_file(r.dir / "kpis.jsonl"));
  std::vector<json> kl;
  for (std::string line; std::getline(lines, line);) kl.push_back(json::parse(line));
  ASSERT_EQ(kl.size(), 6u);
  EXPECT_EQ(kl[0]["kind"], "kpi_collector");
  EXPECT_EQ(kl[5]["kind"], "kpis");
  EXPECT_EQ(kl[5]["kpis"], kpis);
}

TEST(AssertionExamples, FullSetObservesEveryKindItWatches) {
  const Ran r = run_example("examples/scenarios/ugv_full_set.yaml", "full_set_samples");
  ASSERT_EQ(r.cli.exit_code, 0) << r.cli.out;
  const std::set<std::string> kinds = kinds_in(r.dir / "samples.jsonl");
  for (const char* k :
       {"pose", "contact", "value", "rate", "latency", "lifecycle", "resources", "clock"}) {
    if (std::string(k) == "contact") continue;  // no contact happens on this drive
    EXPECT_TRUE(kinds.count(k)) << k;
  }
  std::istringstream res(read_file(r.dir / "resources.jsonl"));
  int resource_lines = 0;
  for (std::string line; std::getline(res, line);) {
    const json j = json::parse(line);
    EXPECT_EQ(j["process"], "engine");
    EXPECT_GT(j["memory_mb"].get<double>(), 1.0);
    ++resource_lines;
  }
  // Once a wall second, and a last round at the end: an unpaced run of about a second of wall
  // time has one or two.
  EXPECT_GE(resource_lines, 1);
  EXPECT_EQ(r.run["resources"]["samples"].get<int>(), resource_lines);
  EXPECT_EQ(r.run["resources"]["processes"], json::array({"engine"}));
  // The recording carries the resource and KPI side channels.
  EXPECT_GT(fs::file_size(r.dir / "recording" / "recording.mcap"), 0u);
  const std::string mcap = read_file(r.dir / "recording" / "recording.mcap");
  EXPECT_NE(mcap.find("/fieldproof/resources"), std::string::npos);
  EXPECT_NE(mcap.find("/fieldproof/kpis"), std::string::npos);
}

TEST(AssertionExamples, LeavingTheGeofenceAbortsTheTimeline) {
  const fs::path file =
      variant("ugv_full_set.yaml", "abort",
              {{"region: {box: {x_min: -14.5, x_max: 14.5, y_min: -9.5, y_max: 9.5}}",
                "region: {box: {x_min: -14.5, x_max: -6.0, y_min: -9.5, y_max: 9.5}}"}});
  const Ran r = run_example(file.string(), "abort");
  ASSERT_EQ(r.cli.exit_code, 1) << r.cli.out;
  EXPECT_EQ(r.run["status"], "failed");
  const std::string reason = r.run["reason"];
  EXPECT_NE(reason.find("assertion stays_in_yard failed"), std::string::npos) << reason;
  EXPECT_NE(reason.find("(on_fail: abort, the timeline was cancelled)"), std::string::npos)
      << reason;
  EXPECT_EQ(r.run["timeline"][0]["status"], "cancelled");
  const auto v = verdicts(r.run);
  EXPECT_EQ(v.at("stays_in_yard")["status"], "failed");
  EXPECT_EQ(v.at("reached_goal")["status"], "skipped");
  // The vehicle crossed x = -6 about 12 s into the drive; the run stopped there.
  EXPECT_LT(r.run["durations"]["sim_s"].get<double>(), 20.0);
}

TEST(AssertionExamples, FleetKeptApartPasses) {
  const Ran r = run_example("examples/scenarios/ugv_fleet_apart.yaml", "fleet");
  ASSERT_EQ(r.cli.exit_code, 0) << r.cli.out;
  const auto v = verdicts(r.run);
  for (const char* name :
       {"ugv1_arrives", "ugv2_arrives", "ugv3_arrives", "ugv1_apart_from_ugv2",
        "ugv2_apart_from_ugv3", "ugv3_apart_from_ugv1", "ugv3_clears_pillar", "fleet_mission"}) {
    ASSERT_TRUE(v.count(name)) << name;
    EXPECT_EQ(v.at(name)["status"], "passed") << name << ": " << v.at(name)["reason"];
  }
  const double closest = v.at("ugv3_apart_from_ugv1")["metrics"]["closest_m"]["value"];
  EXPECT_GE(closest, 2.0);
  EXPECT_LT(closest, 3.0);  // they do come near each other
  EXPECT_EQ(r.run["kpis"]["ugv1_ugv3.closest_m"]["value"],
            r.run["kpis"]["ugv3_apart_from_ugv1.closest_m"]["value"]);
}

TEST(AssertionExamples, FleetCloserThanMinDistanceFails) {
  const fs::path file =
      variant("ugv_fleet_apart.yaml", "fleet_close",
              {{"to: {vehicle: ugv1}, min_m: 2.0", "to: {vehicle: ugv1}, min_m: 3.0"}});
  const Ran r = run_example(file.string(), "fleet_close");
  ASSERT_EQ(r.cli.exit_code, 1) << r.cli.out;
  const auto v = verdicts(r.run);
  EXPECT_EQ(v.at("ugv3_apart_from_ugv1")["status"], "failed");
  EXPECT_EQ(v.at("ugv1_apart_from_ugv2")["status"], "passed");
  EXPECT_NE(r.run["reason"].get<std::string>().find("ugv3_apart_from_ugv1"), std::string::npos);
}

TEST(AssertionExamples, EventOrderPassesStepByStep) {
  const Ran r = run_example("examples/scenarios/ugv_event_order.yaml", "events");
  ASSERT_EQ(r.cli.exit_code, 0) << r.cli.out;
  const auto v = verdicts(r.run);
  for (const char* name : {"reached_b", "out_and_back", "never_speeding", "always_in_yard"}) {
    ASSERT_TRUE(v.count(name)) << name;
    EXPECT_EQ(v.at(name)["status"], "passed") << name << ": " << v.at(name)["reason"];
  }
  const json& steps = v.at("out_and_back")["evidence"]["steps"];
  ASSERT_EQ(steps.size(), 6u);
  double last = 0;
  for (const auto& s : steps) {
    EXPECT_GE(s["t_s"].get<double>(), last) << s;
    last = s["t_s"].get<double>();
  }
  EXPECT_EQ(steps[1]["value"], "SUCCEEDED");
  EXPECT_EQ(steps[2]["verdict"], "passed");
  EXPECT_EQ(r.run["kpis"]["round_trip.duration_s"]["unit"], "s");
}

TEST(AssertionExamples, EventOrderWithATooShortGapFailsNamingTheStep) {
  const fs::path file =
      variant("ugv_event_order.yaml", "events_gap", {{"max_gap_s: 40s", "max_gap_s: 10s"}});
  const Ran r = run_example(file.string(), "events_gap");
  ASSERT_EQ(r.cli.exit_code, 1) << r.cli.out;
  const auto v = verdicts(r.run);
  const json& seq = v.at("out_and_back");
  EXPECT_EQ(seq["status"], "failed");
  EXPECT_NE(seq["reason"].get<std::string>().find("goal_b_succeeded"), std::string::npos)
      << seq["reason"];
  EXPECT_EQ(seq["t_s"], 12.0);  // 10 s after goal_sent at 2 s: at the gap's end itself
}

TEST(AssertionExamples, ObstacleReplanDrivesAroundTheSpawnedCrate) {
  const Ran r = run_example("examples/scenarios/ugv_obstacle_replan.yaml", "replan");
  ASSERT_EQ(r.cli.exit_code, 0) << r.cli.out;
  const auto v = verdicts(r.run);
  for (const char* name : {"reached_goal", "no_collision", "clears_crate", "bounded_detour"}) {
    ASSERT_TRUE(v.count(name)) << name;
    EXPECT_EQ(v.at(name)["status"], "passed") << name << ": " << v.at(name)["reason"];
  }
  EXPECT_EQ(r.run["timeline"][1]["label"], "drop_crate");
  EXPECT_EQ(r.run["timeline"][1]["status"], "ok");
  const json& kpis = r.run["kpis"];
  // Measured from the crate's first pose on (it exists from 8 s), and a real detour.
  EXPECT_GT(kpis["crate_distance.closest_at_s"]["value"].get<double>(), 8.0);
  EXPECT_LT(kpis["crate_distance.closest_m"]["value"].get<double>(), 1.5);
  EXPECT_GT(kpis["detour.path_m"]["value"].get<double>(),
            kpis["detour.straight_m"]["value"].get<double>() + 0.2);
}

TEST(AssertionExamples, ObstacleReplanCloserThanAllowedFails) {
  const fs::path file =
      variant("ugv_obstacle_replan.yaml", "replan_close",
              {{"to: {model: crate_2}, min_m: 0.9", "to: {model: crate_2}, min_m: 1.5"}});
  const Ran r = run_example(file.string(), "replan_close");
  ASSERT_EQ(r.cli.exit_code, 1) << r.cli.out;
  const auto v = verdicts(r.run);
  EXPECT_EQ(v.at("clears_crate")["status"], "failed");
  EXPECT_EQ(v.at("no_collision")["status"], "passed");
  EXPECT_GT(v.at("clears_crate")["t_s"].get<double>(), 8.0);
}

TEST(AssertionExamples, AProcessStackIsMeasuredFromItsOwnProc) {
  const fs::path file =
      variant("ugv_lockstep.yaml", "process_resources",
              {{"kpis:\n",
                "  - {name: stack_footprint, type: resource_usage, vehicle: ugv1, "
                "max_memory_mb: 4096, max_cpu_pct: 1000}\n"
                "kpis:\n  - {name: stack, type: resources, vehicle: ugv1}\n"}});
  const Ran r = run_example(file.string(), "process_resources");
  ASSERT_EQ(r.cli.exit_code, 0) << r.cli.out;
  const auto v = verdicts(r.run);
  EXPECT_EQ(v.at("stack_footprint")["status"], "passed") << v.at("stack_footprint")["reason"];
  // Every process of the run: the engine and the stack's own (docs/recording.md, resources).
  EXPECT_EQ(r.run["resources"]["processes"], json::array({"engine", "ugv1_nav"}));
  const json& last = r.run["resources"]["last"][1];
  EXPECT_EQ(last["role"], "stack");
  EXPECT_GT(last["pid"].get<int>(), 0);
  EXPECT_GT(last["memory_mb"].get<double>(), 1.0);
  EXPECT_EQ(r.run["kpi_collectors"][1]["status"], "measured");
}

}  // namespace
}  // namespace fieldproof::integration
