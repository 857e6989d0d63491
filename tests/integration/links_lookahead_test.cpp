// The engine relays link telemetry with the links' lookahead (docs/lockstep.md, Lookahead): a
// delivery it only relays no longer holds the clock until it has run the relay, and in-process
// the coordinator runs that relay inside its fan-out (Relays) instead of waking the engine. That
// must change nothing that is recorded: each network scenario here runs with both and with
// --no-relay-lookahead (the engine holding the clock at every delivery, as before), and the two
// runs' ordered streams (compare_streams: topic, stamp, publisher's sequence, payload bytes),
// run.json's network section, verdicts and KPIs must be identical, and so must what the engine
// read and wrote meanwhile: the recording's events, verdicts, network windows and KPIs (each with
// its log time) and samples.jsonl (the observer's samples in the order it made them). With
// FIELDPROOF_REFERENCE_BIN_DIR set (another build's bin/, e.g. main's), each scenario also runs
// with that build's fieldproof and must give the same stream and verdicts.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "fieldproof/engine/determinism.hpp"
#include "fieldproof/record/mcap_reader.hpp"
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
                  {"t_s", a.contains("t_s") ? a["t_s"] : json()},
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

// A record's JSON without what differs between any two runs: the wall clock, the run's id and
// directory, process ids (a killed stack's too), at any depth.
void drop_run_specific(json* j) {
  if (!j->is_object()) return;
  for (const char* k :
       {"wall_s", "wall", "wall_epoch_s", "run_id", "pid", "detail", "message", "killed"}) {
    j->erase(k);
  }
  for (auto& [k, v] : j->items()) drop_run_specific(&v);
}

// The side channels the engine writes as it reads its deliveries: each channel's messages in the
// recording's order with their log times. The metrics and the resources are the wall clock's.
json side_channels(const fs::path& run) {
  record::McapReader r;
  const fs::path file = run / "recording" / "recording.mcap";
  EXPECT_TRUE(r.open(file.string()).ok()) << file;
  const std::set<std::string> wanted = {"/fieldproof/events", "/fieldproof/assertions",
                                        "/fieldproof/network", "/fieldproof/kpis"};
  json out = json::object();
  for (const std::string& t : wanted) out[t] = json::array();
  const record::Status st = r.read_messages({}, [&](const record::MessageView& m) {
    if (wanted.count(m.channel->topic) == 0) return true;
    json j = json::parse(m.data_view(), nullptr, false);
    drop_run_specific(&j);
    // Events of the wall clock: the pace and the lock, the holds' wall time, the phases.
    const std::string ev = j.is_object() ? j.value("event", std::string()) : std::string();
    if (ev == "clock.drift" || ev == "clock.hold.expired" || ev == "warning") return true;
    out[m.channel->topic].push_back({{"t_ns", m.log_time_ns}, {"message", j}});
    return true;
  });
  EXPECT_TRUE(st.ok()) << st.to_string();
  return out;
}

// samples.jsonl: the observer's samples in the order it made them, without the wall clock's
// (the clock's windows and the resources).
std::vector<json> observed_samples(const fs::path& run) {
  std::vector<json> out;
  std::ifstream in(run / "samples.jsonl");
  EXPECT_TRUE(static_cast<bool>(in)) << run;
  std::string line;
  while (std::getline(in, line)) {
    json j = json::parse(line, nullptr, false);
    if (!j.is_object()) continue;
    const std::string kind = j.value("kind", std::string());
    if (kind == "clock" || kind == "resources" || kind == "resource") continue;
    drop_run_specific(&j);
    out.push_back(std::move(j));
  }
  return out;
}

// The first index at which two sample streams differ, or their common length.
size_t first_difference(const std::vector<json>& a, const std::vector<json>& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  return i;
}

// engine.log's clock.lookahead line (an empty object when there is none).
json lookahead_line(const fs::path& run) {
  std::ifstream in(run / "engine.log");
  std::string line;
  while (std::getline(in, line)) {
    const json j = json::parse(line, nullptr, false);
    if (j.is_object() && j.value("event", std::string()) == "clock.lookahead") return j;
  }
  return json::object();
}

// The topics the engine read with the lookahead (empty when none did).
std::set<std::string> lookahead_topics(const fs::path& run) {
  std::set<std::string> out;
  const json topics = lookahead_line(run).value("topics", json::object());
  for (auto it = topics.begin(); it != topics.end(); ++it) out.insert(it.key());
  return out;
}

// The topics whose relay the coordinator ran in its fan-out instead of waking the engine
// (docs/lockstep.md, Relays).
std::set<std::string> coordinator_relayed(const fs::path& run) {
  std::set<std::string> out;
  const json topics = lookahead_line(run).value("relayed_by_coordinator", json::array());
  for (const json& t : topics) out.insert(t.get<std::string>());
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
  const json side_a = side_channels(a);
  const json side_b = side_channels(b);
  for (auto it = side_a.begin(); it != side_a.end(); ++it) {
    const json& xs = it.value();
    const json& ys = side_b[it.key()];
    size_t i = 0;
    while (i < xs.size() && i < ys.size() && xs[i] == ys[i]) ++i;
    EXPECT_TRUE(i == xs.size() && i == ys.size())
        << it.key() << " differs at message " << i << " of " << xs.size() << "/" << ys.size()
        << ":\n  " << (i < xs.size() ? xs[i].dump() : "(end)") << "\n  "
        << (i < ys.size() ? ys[i].dump() : "(end)");
  }
  EXPECT_GT(side_a["/fieldproof/events"].size(), 0u);
  const std::vector<json> sa = observed_samples(a);
  const std::vector<json> sb = observed_samples(b);
  EXPECT_GT(sa.size(), 100u);
  const size_t d = first_difference(sa, sb);
  EXPECT_TRUE(d == sa.size() && d == sb.size())
      << "samples.jsonl differs at sample " << d << " of " << sa.size() << "/" << sb.size()
      << ":\n  " << (d < sa.size() ? sa[d].dump() : "(end)") << "\n  "
      << (d < sb.size() ? sb[d].dump() : "(end)");
}

// Runs `scenario` three ways under `runs`: "on" (lookahead), "off" (--no-relay-lookahead) and,
// with FIELDPROOF_REFERENCE_BIN_DIR, "ref" (the other build); compares each to "on".
// Returns the topics the "on" run read with the lookahead.
std::set<std::string> check_scenario(const fs::path& runs, const std::string& scenario) {
  const std::string common = " --max-rtf 0 --runs-dir " + runs.string();
  const auto on = run_cli("run " + scenario + common + " --run-id on");
  EXPECT_NE(on.exit_code, 2) << on.out;
  const auto off = run_cli("run " + scenario + common + " --run-id off --no-relay-lookahead");
  EXPECT_EQ(off.exit_code, on.exit_code) << off.out;
  if (on.exit_code == 2 || off.exit_code != on.exit_code) return {};
  expect_same_run(runs / "on", runs / "off");
  EXPECT_TRUE(lookahead_topics(runs / "off").empty());
  const std::set<std::string> read_late = lookahead_topics(runs / "on");
  // In-process, every topic read with the lookahead is relayed inside the coordinator's fan-out.
  EXPECT_EQ(coordinator_relayed(runs / "on"), read_late);
  const char* ref = std::getenv("FIELDPROOF_REFERENCE_BIN_DIR");
  if (ref == nullptr || *ref == '\0') return read_late;
  const shell::ShellResult r = shell::run_shell(std::string(ref) + "/fieldproof run " + scenario +
                                                common + " --run-id ref 2>&1");
  EXPECT_EQ(r.exit_code, on.exit_code) << r.out;
  if (r.exit_code == on.exit_code) expect_same_run(runs / "on", runs / "ref");
  return read_late;
}

// The bench's drive (bench/network): every topic the ground station sees as telemetry, a 3 s
// outage, and an assertion on odometry (a topic the observer reads as well as the relay).
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

// Assertions that read relayed telemetry, alone and together with the link state, and whose
// verdicts depend on the order of the samples across topics: the first instant at which a
// condition over two topics holds, a sequence whose steps read three topics in turn.
void write_common(std::ofstream& out, const std::string& name) {
  out << "name: " << name << "\n"
      << "world: " << fs::absolute("examples/worlds/depot.sdf").string() << "\n"
      << "map: {bounds: {x_min: -15.6, x_max: 15.6, y_min: -10.6, y_max: 10.6}}\n"
      << "seed: 5\n"
      << "time: {mode: sim, timeout_s: 5m}\n"
      << "vehicles:\n  - {name: ugv1, spawn: dock, stack: {plugin: fieldproof_ugv_nav_plugin}}\n"
      << "network:\n"
      << "  ground_station: {name: gcs, x: -14, y: 0}\n"
      << "  links: [{vehicle: ugv1, latency_s: 40ms, jitter_s: 15ms, loss: 0.03}]\n"
      << "  telemetry: [odometry, imu, scan]\n";
}

void write_observing_assertions(std::ofstream& out) {
  out << "assertions:\n"
      << "  - {name: reached_goal, type: reach_pose, vehicle: ugv1, target: goal_a, "
         "tolerance_m: 0.5, within_s: 90s}\n"
      << "  - name: turns_while_driving\n"
      << "    type: eventually\n"
      << "    vehicle: ugv1\n"
      << "    signals:\n"
      << "      speed: {topic: odometry, field: twist.linear.x}\n"
      << "      yaw_rate: {topic: imu, field: angular_velocity.z}\n"
      << "    condition: abs(speed) > 0.2 and abs(yaw_rate) > 0.05\n"
      << "    within_s: 60s\n"
      << "  - {name: brakes_when_lost, type: topic_value, vehicle: ugv1, topic: odometry, "
         "field: twist.linear.x, condition: abs(value) < 0.05, after_s: 10s, within_s: 13s}\n"
      << "  - name: never_drives_blind\n"
      << "    type: never\n"
      << "    vehicle: ugv1\n"
      << "    signals:\n"
      << "      up: {topic: link_state, field: up}\n"
      << "      speed: {topic: odometry, field: twist.linear.x}\n"
      << "    condition: not up and abs(speed) > 0.1\n"
      << "    after_s: 10s\n"
      << "  - name: story\n"
      << "    type: sequence\n"
      << "    vehicle: ugv1\n"
      << "    within_s: 90s\n"
      << "    steps:\n"
      << "      - {name: moving, topic: odometry, field: twist.linear.x, condition: value > 0.3}\n"
      << "      - {name: lost, topic: link_state, field: quality, condition: value == 0}\n"
      << "      - {name: still, topic: imu, field: angular_velocity.z, "
         "condition: abs(value) < 0.01}\n"
      << "      - {name: back, topic: link_state, field: quality, condition: value > 0.5}\n"
      << "      - {name: arrived, assertion: reached_goal}\n"
      << "kpis:\n  - {name: radio, type: link, vehicle: ugv1}\n"
      << "outputs: {record: true}\n";
}

// The drive with `timeline` and the observing assertions, as <dir>/<name>.yaml.
fs::path write_observing(const fs::path& dir, const std::string& name,
                         const std::string& timeline) {
  fs::create_directories(dir);
  const fs::path p = dir / (name + ".yaml");
  std::ofstream out(p);
  write_common(out, name);
  out << timeline;
  write_observing_assertions(out);
  return p;
}

fs::path write_observed_telemetry(const fs::path& dir) {
  return write_observing(
      dir, "observed_telemetry",
      "timeline:\n"
      "  - {action: navigate_to_pose, name: drive, vehicle: ugv1, at: 2s, goal: goal_a}\n"
      "  - {action: link.down, name: outage, vehicle: ugv1, at: 9s, duration_s: 4s}\n");
}

// The same, with the outage started by a `when` on odometry: the timeline acts on what it reads
// there, at the message's instant. (The outage starts at about 10.2 s, which the assertions' fixed
// windows do not expect: two of them fail, in both runs alike.)
fs::path write_acting_on_telemetry(const fs::path& dir) {
  return write_observing(
      dir, "acting_on_telemetry",
      "timeline:\n"
      "  - {action: navigate_to_pose, name: drive, vehicle: ugv1, at: 2s, goal: goal_a}\n"
      "  - {action: link.down, name: outage, vehicle: ugv1, duration_s: 4s,\n"
      "     when: {topic: odometry, field: pose.position.x, condition: value > -8}}\n");
}

TEST(LinksLookahead, TheLinkLossExampleRecordsTheSameWithAndWithoutIt) {
  const std::set<std::string> late =
      check_scenario(fresh_runs_dir("la_example"), "examples/scenarios/ugv_link_loss.yaml");
  // Its assertions read odometry: the observer only observes, the relay relays.
  EXPECT_EQ(late.count("/model/ugv1/odometry"), 1u);
}

TEST(LinksLookahead, AssertionsOnRelayedTelemetryJudgeTheSameWithAndWithoutIt) {
  const fs::path runs = fresh_runs_dir("la_observed");
  const std::set<std::string> late =
      check_scenario(runs, write_observed_telemetry(runs.string() + "_scenario").string());
  for (const char* t : {"/model/ugv1/odometry", "/model/ugv1/imu", "/model/ugv1/scan"}) {
    EXPECT_EQ(late.count(t), 1u) << t;
  }
  // The verdicts are there to be compared: each assertion was judged.
  const json run = run_json(runs / "on");
  ASSERT_EQ(run["assertions"].size(), 5u);
  for (const json& a : run["assertions"]) EXPECT_NE(a["status"], "skipped") << a.dump();
}

TEST(LinksLookahead, ATopicTheTimelineActsOnHoldsTheClock) {
  const fs::path runs = fresh_runs_dir("la_acting");
  const std::set<std::string> late =
      check_scenario(runs, write_acting_on_telemetry(runs.string() + "_scenario").string());
  EXPECT_EQ(late.count("/model/ugv1/odometry"), 0u);
  EXPECT_EQ(late.count("/model/ugv1/imu"), 1u);
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
