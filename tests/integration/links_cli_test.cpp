// Radio links (docs/network.md) end to end through the CLI: the link-loss example's
// verdicts, its /fieldproof/network record read back from the MCAP, the same seed delivering the
// same messages twice, and located refusals of a bad network section (exit 2).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "fieldproof/record/mcap_reader.hpp"
#include "integration/cli_test_util.hpp"

namespace fieldproof::integration {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const char* kExample = "examples/scenarios/ugv_link_loss.yaml";

struct Recorded {
  std::vector<json> windows;  // /fieldproof/network, in order
  // Every message that crossed a link towards the ground station (/ground/...) or was sent by the
  // ground station to the vehicle (the goal), as "topic@log_time:bytes", in recorded order.
  std::vector<std::string> delivered;
  std::map<std::string, int> counts;
};

Recorded read_recording(const fs::path& file) {
  Recorded r;
  record::McapReader reader;
  const record::Status st = reader.open(file.string());
  EXPECT_TRUE(st.ok()) << st.to_string();
  if (!st.ok()) return r;
  const record::Status rs = reader.read_messages({}, [&](const record::MessageView& m) {
    const std::string& topic = m.channel->topic;
    ++r.counts[topic];
    if (topic == "/fieldproof/network") r.windows.push_back(json::parse(m.data_view()));
    if (topic.rfind("/ground/", 0) == 0 || topic == "/model/ugv1/navigate_to_pose/goal") {
      r.delivered.push_back(topic + "@" + std::to_string(m.log_time_ns) + ":" +
                            std::string(m.data_view()));
    }
    return true;
  });
  EXPECT_TRUE(rs.ok()) << rs.to_string();
  return r;
}

const json* assertion(const json& run, const std::string& name) {
  for (const json& a : run["assertions"]) {
    if (a["name"] == name) return &a;
  }
  return nullptr;
}

TEST(LinksCli, TheStackStandsStillWhileItsLinkIsDownAndArrivesAfterwards) {
  const fs::path runs = fresh_runs_dir("links_example");
  const auto r = run_cli(std::string("run ") + kExample + " --max-rtf 0 --run-id a --runs-dir " +
                         runs.string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json run = run_json(runs / "a");
  EXPECT_EQ(run["status"], "passed") << run["reason"];
  for (const char* name : {"reached_goal", "stands_still_while_down", "holds_while_lost",
                           "never_drives_blind", "outage_story"}) {
    const json* a = assertion(run, name);
    ASSERT_NE(a, nullptr) << name;
    EXPECT_EQ((*a)["status"], "passed") << name << ": " << (*a)["reason"];
  }
  // The story's steps in order: the link lost, the held standstill, back, arrived.
  const json* story = assertion(run, "outage_story");
  ASSERT_NE(story, nullptr);
  EXPECT_EQ((*story)["metrics"]["steps_done"]["value"], 5) << story->dump();

  // run.json's network: the one link, the 10 s outage, messages lost and delivered.
  const json& net = run["network"];
  ASSERT_EQ(net["links"].size(), 1u) << net.dump();
  const json& link = net["links"][0];
  EXPECT_EQ(link["name"], "gcs_ugv1");
  EXPECT_DOUBLE_EQ(link["longest_outage_s"].get<double>(), 10.0);
  EXPECT_GT(link["lost"].get<int>(), 0);
  EXPECT_GT(link["delivered"].get<int>(), link["lost"].get<int>());
  EXPECT_EQ(net["ground_station"]["name"], "gcs");
  // The link collector: one outage of 10 s.
  EXPECT_NEAR(run["kpis"]["radio.down_s"]["value"].get<double>(), 10.0, 1e-6) << run["kpis"];
  EXPECT_EQ(run["kpis"]["radio.outages"]["value"], 1) << run["kpis"];

  // engine.log: link.down at 12 s (timeline), link.up at 22 s.
  const std::string log = read_file(runs / "a" / "engine.log");
  EXPECT_NE(log.find("\"event\":\"link.down\""), std::string::npos);
  EXPECT_NE(log.find("\"event\":\"link.up\""), std::string::npos);

  // The recording: a window a second, down from 12 s to 22 s, nothing delivered while down
  // except what was in flight at 12 s; the ground station's copies of status and odometry.
  const Recorded rec = read_recording(runs / "a" / "recording" / "recording.mcap");
  ASSERT_GT(rec.windows.size(), 25u);
  for (const json& w : rec.windows) {
    const double end = w["end_s"].get<double>();
    const bool down = end > 12.0 && end <= 22.0;
    EXPECT_EQ(w["up"].get<bool>(), !down) << w.dump();
    if (down && end > 13.0) {
      EXPECT_EQ(w["delivered"], 0) << w.dump();
      EXPECT_EQ(w["sent"], w["lost"]) << w.dump();
    }
    if (!down && w["delivered"].get<int>() > 0) {
      EXPECT_GE(w["latency_p50_s"].get<double>(), 0.05) << w.dump();
      EXPECT_LT(w["latency_max_s"].get<double>(), 0.5) << w.dump();
    }
  }
  EXPECT_GT(rec.counts.at("/ground/gcs/model/ugv1/odometry"), 1000);
  EXPECT_GT(rec.counts.at("/ground/gcs/model/ugv1/navigate_to_pose/status"), 1);
  EXPECT_GT(rec.counts.at("/model/ugv1/link_state"), 30);
}

TEST(LinksCli, TwoRunsWithTheSameSeedDeliverExactlyTheSameMessages) {
  const fs::path runs = fresh_runs_dir("links_same_seed");
  const auto r = run_cli(std::string("run ") + kExample +
                         " --check-determinism --max-rtf 0 --run-id d --runs-dir " + runs.string());
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("IDENTICAL"), std::string::npos) << r.out;
  const Recorded a = read_recording(runs / "d-a" / "recording" / "recording.mcap");
  const Recorded b = read_recording(runs / "d-b" / "recording" / "recording.mcap");
  ASSERT_FALSE(a.windows.empty());
  EXPECT_EQ(a.windows, b.windows);
  ASSERT_GT(a.delivered.size(), 1000u);
  EXPECT_EQ(a.delivered, b.delivered);
  EXPECT_EQ(run_json(runs / "d-a")["network"], run_json(runs / "d-b")["network"]);
}

TEST(LinksCli, BadNetworkValuesAreRefusedWithFileLineAndField) {
  const fs::path dir = fresh_runs_dir("links_bad");
  fs::create_directories(dir);
  const std::string text = std::string(R"(name: bad_links
world: )") + fs::absolute("examples/worlds/depot.sdf").string() + R"(
vehicles:
  - {name: ugv1, spawn: dock}
network:
  links:
    - {vehicle: ugv1, latency_s: -0.05, loss: 1.5}
    - {vehicle: ugv1, loss: .nan}
    - {vehicle: nobody}
timeline:
  - {action: link.down, vehicle: ugv1, at: 1s, duration_s: 2s}
  - {action: navigate_to_pose, name: go, vehicle: ugv1, at: 1s, goal: goal_a}
)";
  std::ofstream(dir / "bad.yaml") << text;
  const auto r = run_cli("validate " + (dir / "bad.yaml").string());
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("bad.yaml:7:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("network.links[0].latency_s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("network.links[0].loss"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("network.links[1].loss"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("network.links[2].vehicle"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("unknown vehicle 'nobody'"), std::string::npos) << r.out;

  std::ofstream(dir / "no_net.yaml") << std::string(R"(name: no_net
world: )") + fs::absolute("examples/worlds/depot.sdf").string() + R"(
vehicles:
  - {name: ugv1, spawn: dock}
timeline:
  - {action: link.down, vehicle: ugv1, at: 1s}
)";
  const auto n = run_cli("validate " + (dir / "no_net.yaml").string());
  EXPECT_EQ(n.exit_code, 2) << n.out;
  EXPECT_NE(n.out.find("timeline[0].action: link.down needs a network section"),
            std::string::npos)
      << n.out;
}

// Two vehicles without stacks and a link between them carrying odometry both ways: ugv1 stands
// at the dock, ugv2 rolls away east until it is beyond the link's range.
std::string convoy_scenario() {
  return "name: convoy\nworld: " + fs::absolute("examples/worlds/depot.sdf").string() + R"(
seed: 21
vehicles:
  - {name: ugv1, spawn: dock}
  - {name: ugv2, spawn: {x: -10.0, y: 0.0, yaw: 0.0}}
network:
  links:
    - {vehicle: ugv1, peer: ugv2, latency_s: 30ms, jitter_s: 10ms, loss: 0.2, range_m: 5,
       topics: [odometry]}
timeline:
  - {action: cmd_vel, name: away, vehicle: ugv2, at: 1s, linear_x: 1.0, duration_s: 6s}
assertions:
  # What ugv2 hears of ugv1: standing still (judged on the peer's topic like any other).
  - name: peer_stands_still
    type: topic_value
    vehicle: ugv2
    topic: peers/ugv1/odometry
    field: twist.linear.x
    condition: abs(value) < 0.05
outputs: {record: true}
)";
}

struct Stamped {
  int64_t t_ns = 0;
  std::string data;
  bool operator==(const Stamped&) const = default;
};

std::map<std::string, std::vector<Stamped>> messages(const fs::path& file) {
  std::map<std::string, std::vector<Stamped>> out;
  record::McapReader reader;
  const record::Status st = reader.open(file.string());
  EXPECT_TRUE(st.ok()) << st.to_string();
  if (!st.ok()) return out;
  const record::Status rs = reader.read_messages({}, [&](const record::MessageView& m) {
    if (m.channel->topic.rfind("/model/", 0) == 0) {
      out[m.channel->topic].push_back(
          {static_cast<int64_t>(m.log_time_ns), std::string(m.data_view())});
    }
    return true;
  });
  EXPECT_TRUE(rs.ok()) << rs.to_string();
  return out;
}

TEST(LinksCli, AVehicleToVehicleLinkDeliversEachVehiclesTopicsToTheOtherTheSameWayPerSeed) {
  const fs::path runs = fresh_runs_dir("links_v2v");
  fs::create_directories(runs);
  std::ofstream(runs / "convoy.yaml") << convoy_scenario();
  const auto r = run_cli("run " + (runs / "convoy.yaml").string() +
                         " --check-determinism --max-rtf 0 --run-id d --runs-dir " + runs.string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("IDENTICAL"), std::string::npos) << r.out;
  const auto a = messages(runs / "d-a" / "recording" / "recording.mcap");
  const auto b = messages(runs / "d-b" / "recording" / "recording.mcap");
  const std::string to2 = "/model/ugv2/peers/ugv1/odometry";
  const std::string to1 = "/model/ugv1/peers/ugv2/odometry";
  ASSERT_GT(a.count(to2), 0u);
  ASSERT_GT(a.count(to1), 0u);
  EXPECT_EQ(a.at(to2), b.at(to2)) << "the same seed must deliver the same messages";
  EXPECT_EQ(a.at(to1), b.at(to1));

  // When the link went out of range: ugv2's link_state says so (cause range).
  int64_t down_ns = -1;
  for (const Stamped& m : a.at("/model/ugv2/link_state")) {
    if (down_ns < 0 && m.data.find("range") != std::string::npos) down_ns = m.t_ns;
  }
  ASSERT_GT(down_ns, 1'000'000'000) << "the link never went out of range";
  // Each delivery is a message the sender published, 30 to 40 ms after it, in order; none was
  // sent after the link went down; about 20 % of those sent before were lost.
  for (const auto& [sent_topic, got_topic] :
       {std::pair{std::string("/model/ugv1/odometry"), to2},
        std::pair{std::string("/model/ugv2/odometry"), to1}}) {
    std::map<std::string, int64_t> sent;
    size_t sent_while_up = 0;
    for (const Stamped& m : a.at(sent_topic)) {
      sent[m.data] = m.t_ns;
      sent_while_up += m.t_ns <= down_ns;
    }
    int64_t previous = 0;
    for (const Stamped& m : a.at(got_topic)) {
      ASSERT_EQ(sent.count(m.data), 1u) << got_topic << " delivered what was not sent";
      const int64_t latency = m.t_ns - sent[m.data];
      EXPECT_GE(latency, 30'000'000) << got_topic;
      EXPECT_LT(latency, 40'000'000) << got_topic;
      EXPECT_LE(sent[m.data], down_ns) << got_topic << ": sent while out of range";
      EXPECT_GE(m.t_ns, previous);
      previous = m.t_ns;
    }
    const double kept =
        static_cast<double>(a.at(got_topic).size()) / static_cast<double>(sent_while_up);
    EXPECT_GT(kept, 0.7) << got_topic << " " << sent_while_up;
    EXPECT_LT(kept, 0.9) << got_topic << " " << sent_while_up;
  }

  const json run = run_json(runs / "d-a");
  EXPECT_EQ(run["status"], "passed") << run["reason"];
  const json* still = assertion(run, "peer_stands_still");
  ASSERT_NE(still, nullptr);
  EXPECT_EQ((*still)["status"], "passed") << (*still)["reason"];
  ASSERT_EQ(run["network"]["links"].size(), 1u);
  const json& link = run["network"]["links"][0];
  EXPECT_EQ(link["name"], "ugv1_ugv2");
  EXPECT_EQ(link["peer"], "ugv2");
  EXPECT_EQ(link["topics"], json::array({"odometry"}));
  EXPECT_GT(link["lost"].get<int>(), 0);
  EXPECT_EQ(link["delivered"].get<size_t>(), a.at(to1).size() + a.at(to2).size());
  EXPECT_FALSE(link["up"].get<bool>());
}

TEST(LinksCli, BadVehicleToVehicleLinksAreRefusedWithFileLineAndField) {
  const fs::path dir = fresh_runs_dir("links_v2v_bad");
  fs::create_directories(dir);
  std::ofstream(dir / "convoy.yaml")
      << "name: bad_convoy\nworld: " + fs::absolute("examples/worlds/depot.sdf").string() +
             R"(
vehicles:
  - {name: ugv1, spawn: dock}
  - {name: ugv2, spawn: {x: -10.0, y: 0.0}}
network:
  links:
    - {vehicle: ugv1, topics: [odometry]}
    - {vehicle: ugv1, peer: ugv2, topics: [/model/ugv1/odometry, peers/ugv3/odometry, scan, scan]}
    - {vehicle: ugv2, peer: ugv1, name: again, topics: [link_state]}
    - {vehicle: ugv2, peer: nobody, topics: [odometry]}
)";
  const auto r = run_cli("validate " + (dir / "convoy.yaml").string());
  EXPECT_EQ(r.exit_code, 2) << r.out;
  for (const char* want :
       {"convoy.yaml:8:", "network.links[0].topics: topics cross a vehicle-to-vehicle link",
        "convoy.yaml:9:",
        "network.links[1].topics[0]: a topic is relative to /model/<vehicle>/ (e.g. odometry), "
        "got \"/model/ugv1/odometry\"",
        "network.links[1].topics[1]: peers/... is where a peer's topics arrive",
        "network.links[1].topics[3]: topic 'scan' is listed twice", "convoy.yaml:10:",
        "network.links[2].peer: vehicles 'ugv2' and 'ugv1' have a link already (network.links[1])",
        "network.links[2].topics[0]: link_state is each vehicle's own radio's state",
        "network.links[3].peer", "unknown vehicle 'nobody'"}) {
    EXPECT_NE(r.out.find(want), std::string::npos) << want << "\n" << r.out;
  }
}

}  // namespace
}  // namespace fieldproof::integration
