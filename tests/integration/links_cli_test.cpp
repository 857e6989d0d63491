// Radio links (issue 16, docs/network.md) end to end through the CLI: the link-loss example's
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

}  // namespace
}  // namespace fieldproof::integration
