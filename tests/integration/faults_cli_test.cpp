// Faults as timeline actions (docs/network.md, faults) end to end through the CLI: topic drops,
// delays and a frozen sensor, each in its window and the same in two runs of one seed; the
// stack-restart example (a process stack killed mid-drive, restarted, re-registered in lockstep,
// its goal reached); a kill without restart recorded as the action's; a lockstep link down longer
// than ack_timeout_s failing the run; located refusals (exit 2).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "fieldproof/record/mcap_reader.hpp"
#include "integration/cli_test_util.hpp"

namespace fieldproof::integration {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Message {
  int64_t t_ns = 0;
  std::string data;
  bool operator==(const Message&) const = default;
};

// Every recorded message of the topics, by topic, in recorded order.
std::map<std::string, std::vector<Message>> read_topics(const fs::path& file,
                                                        const std::vector<std::string>& topics) {
  std::map<std::string, std::vector<Message>> out;
  record::McapReader reader;
  const record::Status st = reader.open(file.string());
  EXPECT_TRUE(st.ok()) << st.to_string();
  if (!st.ok()) return out;
  const record::Status rs = reader.read_messages({}, [&](const record::MessageView& m) {
    for (const std::string& t : topics) {
      if (m.channel->topic == t) {
        out[t].push_back({static_cast<int64_t>(m.log_time_ns), std::string(m.data_view())});
      }
    }
    return true;
  });
  EXPECT_TRUE(rs.ok()) << rs.to_string();
  return out;
}

// engine.log's lines of one event, in order.
std::vector<json> events(const fs::path& run, const std::string& name) {
  std::vector<json> out;
  std::istringstream in(read_file(run / "engine.log"));
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    const json j = json::parse(line);
    if (j.value("event", "") == name) out.push_back(j);
  }
  return out;
}

const json* entry(const json& run, const std::string& label) {
  for (const json& e : run["timeline"]) {
    if (e["label"] == label) return &e;
  }
  return nullptr;
}

std::string depot() { return fs::absolute("examples/worlds/depot.sdf").string(); }

fs::path write(const fs::path& dir, const std::string& name, const std::string& text) {
  fs::create_directories(dir);
  std::ofstream(dir / name) << text;
  return dir / name;
}

constexpr int64_t kSecond = 1'000'000'000;

// A vehicle without a stack, rolled by cmd_vel: the world's scan, odometry and imu cross the
// faults on their way to whoever subscribes (the observer, the recorder; a stack alike).
std::string topic_faults_scenario() {
  return "name: topic_faults\nworld: " + depot() + R"(
seed: 11
vehicles:
  - {name: ugv1, spawn: dock}
timeline:
  - {action: cmd_vel, name: roll, vehicle: ugv1, at: 0.5s, linear_x: 0.3, duration_s: 3s}
  - {action: fault.drop_topic, name: scan_drops, vehicle: ugv1, topic: scan, probability: 0.5,
     at: 1s, duration_s: 2s}
  - {action: fault.delay_topic, name: odom_late, vehicle: ugv1, topic: odometry, delay_s: 300ms,
     at: 1s, duration_s: 1s}
  - {action: fault.freeze_sensor, name: imu_stuck, vehicle: ugv1, sensor: imu, at: 2s,
     duration_s: 1s}
outputs: {record: true}
)";
}

const std::vector<std::string> kFaulted = {"/model/ugv1/scan", "/model/ugv1/odometry",
                                           "/model/ugv1/imu"};
std::string raw(const std::string& topic) { return "/world/depot/raw" + topic; }

TEST(FaultsCli, TopicFaultsActOnlyInTheirWindowAndTwoRunsOfOneSeedDeliverTheSame) {
  const fs::path runs = fresh_runs_dir("faults_topics");
  const fs::path file = write(runs, "faults.yaml", topic_faults_scenario());
  const auto r = run_cli("run " + file.string() +
                         " --check-determinism --max-rtf 0 --run-id d --runs-dir " + runs.string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("IDENTICAL"), std::string::npos) << r.out;
  std::vector<std::string> topics = kFaulted;
  for (const std::string& t : kFaulted) topics.push_back(raw(t));
  const auto a = read_topics(runs / "d-a" / "recording" / "recording.mcap", topics);
  const auto b = read_topics(runs / "d-b" / "recording" / "recording.mcap", topics);
  for (const std::string& t : kFaulted) {
    ASSERT_GT(a.count(t), 0u) << t;
    EXPECT_EQ(a.at(t), b.at(t)) << t << ": the same seed must deliver the same messages";
  }

  // Drops: only stamped in [1, 3) s, about half of them, the count engine.log gives.
  const auto in = [](int64_t t, double from_s, double to_s) {
    return t >= static_cast<int64_t>(from_s * kSecond) && t < static_cast<int64_t>(to_s * kSecond);
  };
  // The world's outputs at the run's very last instant (3.5 s, when the timeline completes) are
  // relayed like every other: the last raw message of each topic has its relayed copy.
  const int64_t end_ns = static_cast<int64_t>(
      run_json(runs / "d-a")["durations"]["sim_s"].get<double>() * kSecond + 0.5);
  EXPECT_EQ(end_ns, 3'500'000'000);
  for (const std::string& t : kFaulted) {
    ASSERT_FALSE(a.at(t).empty()) << t;
    EXPECT_EQ(a.at(raw(t)).back().t_ns, end_ns) << t;
    EXPECT_EQ(a.at(t).back().t_ns, end_ns) << t << ": the last instant is relayed";
    EXPECT_EQ(a.at(t).back().data, a.at(raw(t)).back().data) << t;
  }
  const auto& scan = a.at("/model/ugv1/scan");
  const auto& scan_raw = a.at(raw("/model/ugv1/scan"));
  size_t raw_in = 0, kept_in = 0;
  for (const Message& m : scan_raw) raw_in += in(m.t_ns, 1, 3);
  for (const Message& m : scan) kept_in += in(m.t_ns, 1, 3);
  EXPECT_EQ(scan_raw.size() - scan.size(), raw_in - kept_in) << "drops outside the window";
  EXPECT_GE(raw_in, 19u);
  EXPECT_GT(raw_in - kept_in, 2u);
  EXPECT_LT(raw_in - kept_in, raw_in - 2);
  const std::vector<json> ends = events(runs / "d-a", "fault.end");
  ASSERT_EQ(ends.size(), 3u) << read_file(runs / "d-a" / "engine.log");
  for (const json& e : ends) {
    if (e["label"] == "scan_drops") {
      EXPECT_EQ(e["dropped"].get<size_t>(), raw_in - kept_in) << e;
      EXPECT_EQ(e["messages"].get<size_t>(), raw_in) << e;
    }
  }

  // Delay: each odometry message stamped in [1, 2) s arrives 0.3 s later, the others on time,
  // but FIFO: those stamped in [2, 2.3) s wait behind the window's last one.
  const auto& odom = a.at("/model/ugv1/odometry");
  const auto& odom_raw = a.at(raw("/model/ugv1/odometry"));
  ASSERT_EQ(odom.size(), odom_raw.size());
  std::map<std::string, int64_t> raw_time;
  for (const Message& m : odom_raw) raw_time[m.data] = m.t_ns;
  size_t late = 0, waited = 0;
  int64_t previous = 0;
  for (size_t i = 0; i < odom.size(); ++i) {
    const Message& m = odom[i];
    ASSERT_EQ(raw_time.count(m.data), 1u);
    const int64_t sent = raw_time[m.data];
    EXPECT_EQ(m.data, odom_raw[i].data) << "in the world's order, " << sent;
    const int64_t due = sent + (in(sent, 1, 2) ? 300'000'000 : 0);
    EXPECT_EQ(m.t_ns, std::max(due, previous)) << sent;
    late += in(sent, 1, 2);
    waited += !in(sent, 1, 2) && m.t_ns > sent;
    previous = m.t_ns;
  }
  EXPECT_GE(late, 49u);
  EXPECT_GE(waited, 10u);  // about 0.3 s of messages after the window

  // Freeze: the imu stamped in [2, 3) s repeats the last reading before 2 s.
  const auto& imu = a.at("/model/ugv1/imu");
  const auto& imu_raw = a.at(raw("/model/ugv1/imu"));
  ASSERT_EQ(imu.size(), imu_raw.size());
  std::string before;
  size_t frozen = 0;
  for (size_t i = 0; i < imu.size(); ++i) {
    EXPECT_EQ(imu[i].t_ns, imu_raw[i].t_ns);
    if (in(imu[i].t_ns, 2, 3)) {
      EXPECT_EQ(imu[i].data, before) << imu[i].t_ns;
      ++frozen;
    } else {
      EXPECT_EQ(imu[i].data, imu_raw[i].data) << imu[i].t_ns;
      if (imu[i].t_ns < 2 * kSecond) before = imu_raw[i].data;
    }
  }
  EXPECT_GE(frozen, 99u);

  // Each fault's start and end in run.json's timeline and engine.log.
  const json run = run_json(runs / "d-a");
  for (const auto& [label, from, to] : {std::tuple{"scan_drops", 1.0, 3.0},
                                        std::tuple{"odom_late", 1.0, 2.0},
                                        std::tuple{"imu_stuck", 2.0, 3.0}}) {
    const json* e = entry(run, label);
    ASSERT_NE(e, nullptr) << label;
    EXPECT_EQ((*e)["status"], "ok") << *e;
    EXPECT_DOUBLE_EQ((*e)["started_s"].get<double>(), from) << *e;
    EXPECT_DOUBLE_EQ((*e)["ended_s"].get<double>(), to) << *e;
  }
  EXPECT_EQ(events(runs / "d-a", "fault.start").size(), 3u);
}

TEST(FaultsCli, AStackKilledMidDriveIsRestartedReRegistersAndReachesItsGoal) {
  const fs::path runs = fresh_runs_dir("faults_restart");
  const auto r = run_cli("run examples/scenarios/ugv_stack_restart.yaml --max-rtf 0 --run-id a "
                         "--runs-dir " + runs.string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json run = run_json(runs / "a");
  EXPECT_EQ(run["status"], "passed") << run["reason"];
  for (const json& a : run["assertions"]) {
    EXPECT_EQ(a["status"], "passed") << a["name"] << ": " << a["reason"];
  }
  const json* crash = entry(run, "crash");
  ASSERT_NE(crash, nullptr);
  EXPECT_EQ((*crash)["status"], "ok") << *crash;
  EXPECT_DOUBLE_EQ((*crash)["started_s"].get<double>(), 6.0);
  EXPECT_DOUBLE_EQ((*crash)["ended_s"].get<double>(), 8.0);
  const json* drive = entry(run, "drive");
  ASSERT_NE(drive, nullptr);
  EXPECT_EQ((*drive)["status"], "succeeded") << *drive;

  const std::vector<json> killed = events(runs / "a", "stack.killed");
  ASSERT_EQ(killed.size(), 1u);
  EXPECT_DOUBLE_EQ(killed[0]["t_s"].get<double>(), 6.0);
  EXPECT_NE(killed[0]["detail"].get<std::string>().find("killed by signal 9"), std::string::npos)
      << killed[0];
  const std::vector<json> restarted = events(runs / "a", "stack.restarted");
  ASSERT_EQ(restarted.size(), 1u);
  EXPECT_DOUBLE_EQ(restarted[0]["t_s"].get<double>(), 8.0);
  // The resource monitor follows the stack to its new process: resources.jsonl measures the new
  // pid after the restart, never the dead one again, and no warning says it cannot read it.
  const std::string detail = killed[0]["detail"].get<std::string>();  // "pid N, killed by ..."
  const int old_pid = std::stoi(detail.substr(detail.find("pid ") + 4));
  ASSERT_TRUE(restarted[0].contains("pid")) << restarted[0];
  const int new_pid = restarted[0]["pid"].get<int>();
  EXPECT_NE(new_pid, old_pid);
  std::vector<int> stack_pids;
  std::istringstream resources(read_file(runs / "a" / "resources.jsonl"));
  for (std::string line; std::getline(resources, line);) {
    if (line.empty()) continue;
    const json j = json::parse(line);
    if (j["process"] == "ugv1_nav") {
      EXPECT_EQ(j["role"], "stack");
      EXPECT_EQ(j["vehicle"], "ugv1");
      stack_pids.push_back(j["pid"].get<int>());
    }
  }
  const auto first_new = std::find(stack_pids.begin(), stack_pids.end(), new_pid);
  ASSERT_NE(first_new, stack_pids.end()) << "no resources.jsonl line for the restarted stack";
  EXPECT_EQ(std::count(first_new, stack_pids.end(), old_pid), 0);
  EXPECT_EQ(std::count(stack_pids.begin(), stack_pids.end(), 0), 0);
  for (const json& w : events(runs / "a", "warning")) {
    EXPECT_EQ(w["message"].get<std::string>().find("resource monitor"), std::string::npos) << w;
  }
  const std::vector<json> resent = events(runs / "a", "action.resent");
  ASSERT_EQ(resent.size(), 1u);
  EXPECT_EQ(resent[0]["label"], "drive");
  // The world waited for the stack in lockstep before the kill and after the restart.
  EXPECT_GT(run["clock"]["lockstep"]["steps"].get<int>(), 100);
}

TEST(FaultsCli, AStackKilledWithoutRestartEndsItsGoalAbortedAsTheActionSays) {
  const fs::path runs = fresh_runs_dir("faults_kill");
  const fs::path file = write(runs, "kill.yaml", "name: kill_no_restart\nworld: " + depot() + R"(
seed: 3
time: {mode: lockstep, step_s: 0.1}
vehicles:
  - name: ugv1
    spawn: dock
    stack: {command: [fieldproof-ugv-nav, --vehicle, ugv1]}
timeline:
  - {action: navigate_to_pose, name: drive, vehicle: ugv1, at: 1s, goal: goal_a}
  - {action: fault.kill_stack, name: crash, vehicle: ugv1, at: 3s}
)");
  const auto r = run_cli("run " + file.string() + " --max-rtf 0 --run-id a --runs-dir " +
                         runs.string());
  EXPECT_EQ(r.exit_code, 1) << r.out;
  const json run = run_json(runs / "a");
  EXPECT_EQ(run["status"], "failed") << run.dump(2);  // the action's outcome, not an error
  EXPECT_EQ(run["reason"],
            "timeline entry drive (navigate_to_pose) ended aborted: the stack of ugv1 was killed "
            "by crash and not restarted");
  const json* crash = entry(run, "crash");
  ASSERT_NE(crash, nullptr);
  EXPECT_EQ((*crash)["status"], "ok");
  EXPECT_NE((*crash)["detail"].get<std::string>().find("killed by signal 9); not restarted"),
            std::string::npos)
      << *crash;
  ASSERT_EQ(events(runs / "a", "stack.killed").size(), 1u);
}

std::string lockstep_outage(const std::string& duration) {
  return "name: lockstep_outage\nworld: " + depot() + R"(
time: {mode: lockstep, step_s: 0.1, ack_timeout_s: 2}
vehicles:
  - {name: ugv1, spawn: dock}
network:
  ground_station: {name: gcs}
  links: [{vehicle: ugv1}]
timeline:
  - {action: link.down, name: outage, vehicle: ugv1, at: 1s, duration_s: )" +
         duration + "}\n";
}

TEST(FaultsCli, ALockstepLinkDownLongerThanTheAckTimeoutFailsNamingTheVehicleAndTheLink) {
  const fs::path runs = fresh_runs_dir("faults_outage");
  const fs::path longer = write(runs, "longer.yaml", lockstep_outage("5s"));
  const auto r = run_cli("run " + longer.string() + " --max-rtf 0 --run-id a --runs-dir " +
                         runs.string());
  EXPECT_EQ(r.exit_code, 1) << r.out;
  const json run = run_json(runs / "a");
  EXPECT_EQ(run["status"], "error");
  EXPECT_EQ(run["reason"],
            "lockstep: link gcs_ugv1 to ugv1 down since 1.000 s, longer than time.ack_timeout_s "
            "(2.000 s): the clock cannot reach ugv1 and its acknowledgement cannot return");
  // An outage of exactly ack_timeout_s passes.
  const fs::path exact = write(runs, "exact.yaml", lockstep_outage("2s"));
  const auto e = run_cli("run " + exact.string() + " --max-rtf 0 --run-id b --runs-dir " +
                         runs.string());
  EXPECT_EQ(e.exit_code, 0) << e.out;
  EXPECT_EQ(run_json(runs / "b")["status"], "passed");
}

TEST(FaultsCli, BadFaultsAreRefusedWithFileLineAndField) {
  const fs::path dir = fresh_runs_dir("faults_bad");
  const fs::path file = write(dir, "bad.yaml", "name: bad_faults\nworld: " + depot() + R"(
vehicles:
  - {name: ugv1, spawn: dock, stack: {plugin: fieldproof_ugv_nav_plugin}}
  - {name: ugv2, spawn: {x: 0, y: 3}}
timeline:
  - {action: fault.drop_topic, vehicle: ugv1, topic: scan, probability: 0, duration_s: 1s}
  - {action: fault.drop_topic, vehicle: ugv1, topic: cmd_vel, probability: 1.5, duration_s: 1s}
  - {action: fault.delay_topic, vehicle: ugv1, topic: odometry, delay_s: 1s}
  - {action: fault.freeze_sensor, vehicle: nobody, sensor: imu, duration_s: 1s}
  - {action: fault.kill_stack, vehicle: ugv1}
  - {action: fault.kill_stack, vehicle: ugv2, restart_after_s: 2s}
)");
  const auto r = run_cli("validate " + file.string());
  EXPECT_EQ(r.exit_code, 2) << r.out;
  for (const char* want :
       {"bad.yaml:7:", "timeline[0].probability", "bad.yaml:8:", "timeline[1].topic",
        "timeline[1].probability", "timeline[2].duration_s", "timeline[3].vehicle",
        "unknown vehicle 'nobody'", "timeline[4].vehicle", "has a plugin stack",
        "timeline[5].restart_after_s", "restart_after_s applies with restart: true",
        "timeline[5].vehicle", "vehicle 'ugv2' has no stack to kill"}) {
    EXPECT_NE(r.out.find(want), std::string::npos) << want << "\n" << r.out;
  }
}

}  // namespace
}  // namespace fieldproof::integration
