// The engine relays link telemetry with the links' lookahead (docs/lockstep.md, Lookahead): a
// delivery it only relays no longer holds the clock until it has run the relay. That must change
// nothing that is recorded: each network scenario here runs with the lookahead and with
// --no-relay-lookahead (the engine holding the clock at every delivery, as before), and the two
// runs' ordered streams (compare_streams: topic, stamp, publisher's sequence, payload bytes),
// run.json's network section, verdicts and KPIs must be identical. With
// FIELDPROOF_REFERENCE_BIN_DIR set (another build's bin/, e.g. main's), each scenario also runs
// with that build's fieldproof and must give the same stream and verdicts.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "fieldproof/engine/determinism.hpp"
#include "integration/cli_test_util.hpp"

namespace fieldproof::integration {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// What the two runs must agree on in run.json: every verdict with its reason and metrics, the
// KPIs (their values; wall-clock ones left out) and the network section.
json judged(const json& run) {
  json out = {{"status", run["status"]},
              {"reason", run.contains("reason") ? run["reason"] : json()}};
  json as = json::array();
  for (const json& a : run["assertions"]) {
    as.push_back({{"name", a["name"]},
                  {"status", a["status"]},
                  {"reason", a.contains("reason") ? a["reason"] : json()},
                  {"metrics", a.contains("metrics") ? a["metrics"] : json()}});
  }
  out["assertions"] = as;
  json kpis = json::object();
  const json all = run.contains("kpis") ? run["kpis"] : json::object();
  for (auto it = all.begin(); it != all.end(); ++it) {
    const std::string& name = it.key();
    const json& k = it.value();
    // Wall time, CPU and the measured real-time factor differ between any two runs.
    if (name.find("rtf") != std::string::npos || name.find("wall") != std::string::npos ||
        name.find("cpu") != std::string::npos || name.find("mem") != std::string::npos ||
        name.find("rss") != std::string::npos) {
      continue;
    }
    kpis[name] = k.is_object() ? k.value("value", json()) : k;
  }
  out["kpis"] = kpis;
  out["network"] = run.contains("network") ? run["network"] : json();
  return out;
}

void expect_same_run(const fs::path& a, const fs::path& b) {
  const engine::StreamComparison c = engine::compare_streams(a, b);
  ASSERT_TRUE(c.ok) << c.error;
  EXPECT_EQ(c.source, "recording");
  EXPECT_GT(c.count_a, 1000u);
  EXPECT_EQ(c.count_a, c.count_b);
  EXPECT_FALSE(c.difference.has_value())
      << "first difference at message " << c.difference->index << ": " << c.difference->topic_a
      << " @ " << c.difference->t_a << " s against " << c.difference->topic_b << " @ "
      << c.difference->t_b << " s (" << c.difference->field << ")\n  " << c.difference->value_a
      << "\n  " << c.difference->value_b;
  EXPECT_EQ(judged(run_json(a)), judged(run_json(b)));
}

// Runs `scenario` three ways under `runs`: "on" (lookahead), "off" (--no-relay-lookahead) and,
// with FIELDPROOF_REFERENCE_BIN_DIR, "ref" (the other build); compares each to "on".
void check_scenario(const fs::path& runs, const std::string& scenario) {
  const std::string common = " --max-rtf 0 --runs-dir " + runs.string();
  const auto on = run_cli("run " + scenario + common + " --run-id on");
  ASSERT_NE(on.exit_code, 2) << on.out;
  const auto off = run_cli("run " + scenario + common + " --run-id off --no-relay-lookahead");
  ASSERT_EQ(off.exit_code, on.exit_code) << off.out;
  expect_same_run(runs / "on", runs / "off");
  const char* ref = std::getenv("FIELDPROOF_REFERENCE_BIN_DIR");
  if (ref == nullptr || *ref == '\0') return;
  const shell::ShellResult r = shell::run_shell(std::string(ref) + "/fieldproof run " + scenario +
                                                common + " --run-id ref 2>&1");
  ASSERT_EQ(r.exit_code, on.exit_code) << r.out;
  expect_same_run(runs / "on", runs / "ref");
}

// The bench's drive (bench/network): every topic the ground station sees as telemetry, a 10 s
// outage, and an assertion on odometry (so that topic keeps a second reader on the engine and
// holds the clock, while the others go with the lookahead).
fs::path write_telemetry_drive(const fs::path& dir) {
  fs::create_directories(dir);
  const fs::path p = dir / "telemetry_drive.yaml";
  std::ofstream out(p);
  out << "name: telemetry_drive\n"
      << "world: " << fs::absolute("examples/worlds/depot.sdf").string() << "\n"
      << "map: {bounds: {x_min: -15.6, x_max: 15.6, y_min: -10.6, y_max: 10.6}}\n"
      << "seed: 7\n"
      << "time: {mode: sim, timeout_s: 5m}\n"
      << "vehicles:\n  - {name: ugv1, spawn: dock, stack: {plugin: fieldproof_ugv_nav_plugin}}\n"
      << "network:\n"
      << "  ground_station: {name: gcs, x: -14, y: 0}\n"
      << "  links: [{vehicle: ugv1, latency_s: 30ms, jitter_s: 10ms, loss: 0.02}]\n"
      << "  telemetry: [odometry, scan, imu, navigate_to_pose/feedback, cmd_vel, lifecycle]\n"
      << "timeline:\n"
      << "  - {action: navigate_to_pose, name: drive, vehicle: ugv1, at: 2s, goal: goal_a}\n"
      << "  - {action: link.down, name: outage, vehicle: ugv1, at: 8s, duration_s: 3s}\n"
      << "  - {action: cmd_vel, name: stop, vehicle: ugv1, at: 30s, linear_x: 0}\n"
      << "assertions:\n"
      << "  - {name: reached_goal, type: reach_pose, vehicle: ugv1, target: goal_a, "
         "tolerance_m: 0.5, within_s: 60s}\n"
      << "  - {name: slow_while_down, type: topic_value, vehicle: ugv1, topic: odometry, "
         "field: twist.linear.x, condition: abs(value) < 2.0, after_s: 9s, within_s: 11s}\n"
      << "outputs: {record: true}\n";
  return p;
}

// Three vehicles, ground links and a vehicle-to-vehicle link (odometry both ways).
fs::path write_fleet(const fs::path& dir) {
  fs::create_directories(dir);
  const fs::path p = dir / "fleet_links.yaml";
  std::ofstream out(p);
  out << "name: fleet_links\n"
      << "world: " << fs::absolute("examples/worlds/depot.sdf").string() << "\n"
      << "map: {bounds: {x_min: -15.6, x_max: 15.6, y_min: -10.6, y_max: 10.6}}\n"
      << "seed: 11\n"
      << "time: {mode: sim, timeout_s: 5m}\n"
      << "vehicles:\n"
      << "  - {name: ugv1, spawn: dock, stack: {plugin: fieldproof_ugv_nav_plugin}}\n"
      << "  - {name: ugv2, spawn: {x: -11.9, y: 3.0, yaw: 0}, "
         "stack: {plugin: fieldproof_ugv_nav_plugin}}\n"
      << "network:\n"
      << "  ground_station: {name: gcs, x: -14, y: 0}\n"
      << "  links:\n"
      << "    - {vehicle: ugv1, latency_s: 20ms, jitter_s: 15ms, loss: 0.05}\n"
      << "    - {vehicle: ugv2, latency_s: 40ms, loss: 0.01, bandwidth_kbps: 2000}\n"
      << "    - {vehicle: ugv1, peer: ugv2, latency_s: 25ms, jitter_s: 5ms, loss: 0.1, "
         "range_m: 25, topics: [odometry]}\n"
      << "  telemetry: [odometry, imu, cmd_vel]\n"
      << "timeline:\n"
      << "  - {action: navigate_to_pose, name: a, vehicle: ugv1, at: 2s, goal: goal_a}\n"
      << "  - {action: navigate_to_pose, name: b, vehicle: ugv2, at: 2s, goal: goal_b}\n"
      << "  - {action: cmd_vel, name: stop, vehicle: ugv1, at: 25s, linear_x: 0}\n"
      << "assertions:\n"
      << "  - {name: ugv1_arrives, type: reach_pose, vehicle: ugv1, target: goal_a, "
         "tolerance_m: 1.0, within_s: 2m}\n"
      << "outputs: {record: true}\n";
  return p;
}

TEST(LinksLookahead, TheLinkLossExampleRecordsTheSameWithAndWithoutIt) {
  check_scenario(fresh_runs_dir("la_example"), "examples/scenarios/ugv_link_loss.yaml");
}

TEST(LinksLookahead, TheStackRestartExampleRecordsTheSameWithAndWithoutIt) {
  check_scenario(fresh_runs_dir("la_restart"), "examples/scenarios/ugv_stack_restart.yaml");
}

TEST(LinksLookahead, ATelemetryDriveWithAnOutageRecordsTheSameWithAndWithoutIt) {
  const fs::path runs = fresh_runs_dir("la_drive");
  check_scenario(runs, write_telemetry_drive(runs.string() + "_scenario").string());
}

TEST(LinksLookahead, AFleetWithAVehicleLinkRecordsTheSameWithAndWithoutIt) {
  const fs::path runs = fresh_runs_dir("la_fleet");
  check_scenario(runs, write_fleet(runs.string() + "_scenario").string());
}

}  // namespace
}  // namespace fieldproof::integration
