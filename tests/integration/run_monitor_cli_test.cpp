// What a real run records about itself: the resource monitor's lines
// (every process, once a wall second, whether or not an assertion asks) in resources.jsonl and on
// /fieldproof/resources, the lock-step and recording fields of /fieldproof/metrics, and the wall
// clock on every samples.jsonl line. The recording is read back with the project's McapReader;
// the schemas are checked by ajv in RecordCli.EverySideChannelMessageMatchesItsChannelsSchema.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "fieldproof/record/mcap_reader.hpp"
#include "integration/cli_test_util.hpp"

namespace fieldproof::integration {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::vector<json> json_lines(const fs::path& p) {
  std::vector<json> out;
  std::ifstream in(p);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(json::parse(line));
  }
  return out;
}

std::map<std::string, std::vector<json>> side_channels(const fs::path& file) {
  std::map<std::string, std::vector<json>> out;
  record::McapReader reader;
  const record::Status st = reader.open(file.string());
  EXPECT_TRUE(st.ok()) << st.to_string();
  if (!st.ok()) return out;
  (void)reader.read_messages({}, [&](const record::MessageView& m) {
    const std::string& topic = m.channel->topic;
    if (m.schema && m.schema->name.rfind("foxglove.", 0) == 0) {
      out["foxglove:" + m.schema->name].push_back(json(topic));
    }
    if (topic == "/fieldproof/metrics" || topic == "/fieldproof/resources") {
      out[topic].push_back(json::parse(m.data_view()));
    }
    return true;
  });
  return out;
}

double now_epoch_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

TEST(RunMonitorCli, EveryProcessOnceAWallSecondAndMetricsWithLockstepAndRecording) {
  const fs::path runs = fresh_runs_dir("monitor", "mon_runs_");
  const double started = now_epoch_s();
  const auto r = run_cli("run tests/integration/data/monitor_lockstep.yaml --runs-dir " +
                         runs.string() + " --run-id a");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const fs::path dir = runs / "a";
  const double ended = now_epoch_s();

  // resources.jsonl: the engine and the stack's process, each with role and vehicle.
  const std::vector<json> lines = json_lines(dir / "resources.jsonl");
  std::map<std::string, std::vector<json>> by_process;
  for (const json& j : lines) by_process[j.at("process").get<std::string>()].push_back(j);
  ASSERT_TRUE(by_process.count("engine")) << lines.size();
  ASSERT_TRUE(by_process.count("ugv1_nav")) << lines.size();
  EXPECT_EQ(by_process.size(), 2u);
  EXPECT_EQ(by_process["engine"][0]["role"], "engine");
  EXPECT_TRUE(by_process["engine"][0]["vehicle"].is_null());
  EXPECT_EQ(by_process["ugv1_nav"][0]["role"], "stack");
  EXPECT_EQ(by_process["ugv1_nav"][0]["vehicle"], "ugv1");
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  for (const auto& [process, ls] : by_process) {
    // About 3 s of wall time at real time: at least two samples a wall second apart.
    ASSERT_GE(ls.size(), 2u) << process;
    for (size_t i = 0; i < ls.size(); ++i) {
      const json& j = ls[i];
      EXPECT_GE(j["cpu_pct"].get<double>(), 0.0) << j;
      EXPECT_LE(j["cpu_pct"].get<double>(), 100.0 * cores + 5.0) << j;  // percent of one core
      EXPECT_GT(j["memory_mb"].get<double>(), 0.0) << j;
      ASSERT_TRUE(j.contains("memory_limit_mb")) << j;
      EXPECT_TRUE(j["memory_limit_mb"].is_null() || j["memory_limit_mb"].get<double>() > 0) << j;
      EXPECT_GE(j["pids"].get<int>(), 1) << j;
      EXPECT_GT(j["pid"].get<int>(), 0) << j;
      EXPECT_GE(j["wall"].get<double>(), started - 1.0) << j;
      EXPECT_LE(j["wall"].get<double>(), ended + 1.0) << j;
    }
    // Once a wall second: never more often (the monitor's rounds are on a 1 s wall grid).
    const double span = ls.back()["wall_s"].get<double>() - ls.front()["wall_s"].get<double>();
    EXPECT_LE(static_cast<double>(ls.size()), span + 1.5) << process;
  }
  const json run = run_json(dir);
  EXPECT_EQ(run["resources"]["samples"].get<size_t>(), lines.size());
  EXPECT_EQ(run["resources"]["processes"], json::array({"engine", "ugv1_nav"}));

  // The same lines on /fieldproof/resources; /fieldproof/metrics with lockstep and recording.
  auto ch = side_channels(dir / "recording" / "recording.mcap");
  EXPECT_EQ(ch["/fieldproof/resources"].size(), lines.size());
  const std::vector<json>& metrics = ch["/fieldproof/metrics"];
  ASSERT_GE(metrics.size(), 2u);
  uint64_t last_bytes = 0;
  uint64_t last_messages = 0;
  for (const json& m : metrics) {
    EXPECT_EQ(m["mode"], "lockstep");
    EXPECT_GE(m["wall"].get<double>(), started - 1.0) << m;
    EXPECT_LE(m["wall"].get<double>(), ended + 1.0) << m;
    const json& l = m.at("lockstep");
    EXPECT_DOUBLE_EQ(l["step_s"].get<double>(), 0.1);
    EXPECT_EQ(l["step"].get<int64_t>(), std::llround(m["sim"].get<double>() / 0.1)) << m;
    EXPECT_TRUE(l["hold"].is_boolean());
    EXPECT_TRUE(l["holds"].is_number_integer());
    EXPECT_DOUBLE_EQ(l["acknowledgements"]["ugv1"].get<double>(), m["sim"].get<double>());
    const json& rec = m.at("recording");
    EXPECT_EQ(rec["file"], "recording/recording.mcap");
    EXPECT_GE(rec["bytes"].get<uint64_t>(), last_bytes);
    EXPECT_GT(rec["messages"].get<uint64_t>(), last_messages);  // a second of messages more
    last_bytes = rec["bytes"].get<uint64_t>();
    last_messages = rec["messages"].get<uint64_t>();
  }
  EXPECT_GT(last_bytes, 0u);

  // What Foxglove's 3D panel draws, in a real run (item 13): the scene once, the transform and
  // the lidar of the vehicle (decoded independently in RecorderIndependentReader.*).
  EXPECT_EQ(ch["foxglove:foxglove.SceneUpdate"].size(), 1u);
  EXPECT_GT(ch["foxglove:foxglove.FrameTransform"].size(), 10u);
  ASSERT_FALSE(ch["foxglove:foxglove.LaserScan"].empty());
  EXPECT_EQ(ch["foxglove:foxglove.LaserScan"][0], "/fieldproof/vehicles/ugv1/scan");

  // samples.jsonl: the wall clock (epoch seconds) on every line.
  const std::vector<json> samples = json_lines(dir / "samples.jsonl");
  ASSERT_FALSE(samples.empty());
  for (const json& s : samples) {
    ASSERT_TRUE(s.contains("wall") && s["wall"].is_number()) << s;
    EXPECT_GE(s["wall"].get<double>(), started - 1.0) << s;
  }
}

}  // namespace
}  // namespace fieldproof::integration
