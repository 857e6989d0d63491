// Every `fieldproof run` records (recording/recording.mcap, finalised on every ending) and reports
// (report.json, report.md, junit.xml, report.html); `fieldproof compare` of two runs.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "fieldproof/record/mcap_reader.hpp"
#include "integration/cli_test_util.hpp"

namespace fieldproof::integration {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A recording read back: whether it was finalised, messages per topic, the side channels' JSON.
struct ReadBack {
  bool has_footer = false;
  bool used_summary = false;
  std::map<std::string, int> counts;
  std::vector<json> assertions;
  std::vector<json> events;
};

ReadBack read_recording(const fs::path& file) {
  ReadBack b;
  record::McapReader reader;
  const record::Status st = reader.open(file.string());
  EXPECT_TRUE(st.ok()) << st.to_string();
  if (!st.ok()) return b;
  b.has_footer = reader.has_footer();
  b.used_summary = reader.used_summary();
  const record::Status rs = reader.read_messages({}, [&](const record::MessageView& m) {
    const std::string& topic = m.channel->topic;
    ++b.counts[topic];
    if (topic == "/fieldproof/assertions") b.assertions.push_back(json::parse(m.data_view()));
    if (topic == "/fieldproof/events") b.events.push_back(json::parse(m.data_view()));
    return true;
  });
  EXPECT_TRUE(rs.ok()) << rs.to_string();
  EXPECT_TRUE(reader.problems().empty());
  return b;
}

// Whether junit.xml's testcase named `name` holds a <failure.
bool junit_case_failed(const std::string& xml, const std::string& name) {
  const size_t at = xml.find("name=\"" + name + "\"");
  EXPECT_NE(at, std::string::npos) << name;
  if (at == std::string::npos) return false;
  const size_t end = xml.find("<testcase", at + 1);
  return xml.substr(at, end - at).find("<failure") != std::string::npos;
}

void expect_reports(const fs::path& dir) {
  for (const char* f : {"report.json", "report.md", "junit.xml", "report.html", "clock.jsonl"}) {
    EXPECT_TRUE(fs::exists(dir / f)) << f;
  }
  const json run = run_json(dir);
  const std::string xml = read_file(dir / "junit.xml");
  const size_t cases = run["assertions"].size() + run["timeline"].size() + 1;
  EXPECT_NE(xml.find("tests=\"" + std::to_string(cases) + "\""), std::string::npos) << xml;
  for (const auto& a : run["assertions"]) {
    EXPECT_EQ(junit_case_failed(xml, a["name"]), a["status"] == "failed") << a["name"];
  }
  EXPECT_EQ(json::parse(read_file(dir / "report.json"))["run_id"], run["run_id"]);
}

void expect_recorded_run(const fs::path& dir, const std::string& verdict_status) {
  const json run = run_json(dir);
  ASSERT_TRUE(run.contains("recording")) << run.dump(2);
  EXPECT_EQ(run["recording"]["path"], "recording/recording.mcap");
  bool listed = false;
  for (const auto& a : run["artefacts"]) listed = listed || a["path"] == "recording/recording.mcap";
  EXPECT_TRUE(listed);
  const ReadBack b = read_recording(dir / "recording" / "recording.mcap");
  EXPECT_TRUE(b.has_footer);
  EXPECT_TRUE(b.used_summary);
  const std::string world = run["world"]["name"];
  for (const std::string& topic :
       {"/world/" + world + "/pose/info", std::string("/fieldproof/events"),
        std::string("/fieldproof/assertions"), std::string("/fieldproof/metrics"),
        std::string("/fieldproof/vehicles/ugv1/pose"), std::string("/model/ugv1/cmd_vel")}) {
    EXPECT_GT(b.counts.count(topic) ? b.counts.at(topic) : 0, 0) << topic;
  }
  bool verdict_seen = false;
  for (const auto& a : b.assertions) verdict_seen = verdict_seen || a["status"] == verdict_status;
  EXPECT_TRUE(verdict_seen);
  bool run_end = false;
  for (const auto& e : b.events) run_end = run_end || e["event"] == "run.end";
  EXPECT_TRUE(run_end);
}

TEST(RecordCli, APassingRunRecordsTheWorldAndSideChannelsAndWritesTheReports) {
  const fs::path runs = fresh_runs_dir("pass", "rec_runs_");
  const auto r = run_cli("run examples/scenarios/ugv_nav_to_goal.yaml --max-rtf 0 --runs-dir " +
                         runs.string() + " --run-id a");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.find("not wired"), std::string::npos) << r.out;
  expect_recorded_run(runs / "a", "passed");
  expect_reports(runs / "a");
  const json run = run_json(runs / "a");
  EXPECT_EQ(run["durations"]["sim_s"], run["clock"]["sim_elapsed_s"]);
  EXPECT_TRUE(run["engine_version"].is_string());
  EXPECT_EQ(run["scenario"]["digest"].get<std::string>().rfind("sha256:", 0), 0u);
  EXPECT_TRUE(run["timeline"][0]["goal"].contains("x"));
  EXPECT_FALSE(run["world"]["obstacles"].empty());
  EXPECT_NE(read_file(runs / "a" / "report.html").find("<svg"), std::string::npos);
}

TEST(RecordCli, AFailingRunRecordsItsFailedVerdictAndReportsIt) {
  const fs::path runs = fresh_runs_dir("fail", "rec_runs_");
  const auto r = run_cli(
      "run examples/scenarios/ugv_nav_fails_on_time.yaml --max-rtf 0 "
      "--runs-dir " +
      runs.string() + " --run-id a");
  ASSERT_EQ(r.exit_code, 1) << r.out;
  expect_recorded_run(runs / "a", "failed");
  expect_reports(runs / "a");
}

TEST(RecordCli, RecordingIsOnWhenTheScenarioDoesNotSay) {
  const fs::path runs = fresh_runs_dir("default", "rec_runs_");
  const auto r = run_cli("run tests/integration/data/record_default.yaml --max-rtf 0 --runs-dir " +
                         runs.string() + " --run-id a");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(read_recording(runs / "a" / "recording" / "recording.mcap").has_footer);
}

TEST(RecordCli, OutputsRecordFalseWritesNoRecordingButTheReports) {
  const fs::path runs = fresh_runs_dir("no_record", "rec_runs_");
  const auto r = run_cli("run tests/integration/data/no_record.yaml --max-rtf 0 --runs-dir " +
                         runs.string() + " --run-id a");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_FALSE(fs::exists(runs / "a" / "recording"));
  EXPECT_FALSE(run_json(runs / "a").contains("recording"));
  expect_reports(runs / "a");
}

TEST(RecordCli, ASigintedRunsRecordingIsFinalised) {
  const fs::path runs = fresh_runs_dir("sigint", "rec_runs_");
  // Interrupt once the drive has started (the engine logs it).
  ASSERT_EQ(interrupt_run_once_the_drive_started(runs), 130);
  const ReadBack b = read_recording(runs / "a" / "recording" / "recording.mcap");
  EXPECT_TRUE(b.has_footer);
  EXPECT_TRUE(b.used_summary);
  EXPECT_GT(b.counts.count("/fieldproof/events"), 0u);
  expect_reports(runs / "a");
}

TEST(RecordCli, ACrashedStacksRunIsFinalisedAndReported) {
  const fs::path runs = fresh_runs_dir("crash", "rec_runs_");
  const auto r =
      run_cli("run tests/integration/data/crashing_stack_lockstep.yaml --max-rtf 0 --runs-dir " +
              runs.string() + " --run-id a");
  ASSERT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(run_json(runs / "a")["status"], "error");
  const ReadBack b = read_recording(runs / "a" / "recording" / "recording.mcap");
  EXPECT_TRUE(b.has_footer);
  EXPECT_TRUE(b.used_summary);
  expect_reports(runs / "a");
}

TEST(RecordCli, ATimedOutRunIsFinalisedAndReported) {
  const fs::path runs = fresh_runs_dir("timeout", "rec_runs_");
  const auto r = run_cli("run tests/integration/data/timeout.yaml --runs-dir " + runs.string() +
                         " --run-id a");
  ASSERT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(run_json(runs / "a")["status"], "timeout");
  const ReadBack b = read_recording(runs / "a" / "recording" / "recording.mcap");
  EXPECT_TRUE(b.has_footer);
  EXPECT_GT(b.counts.count("/fieldproof/events"), 0u);
  expect_reports(runs / "a");
}

// A real run's recording decoded independently, the way Foxglove does
// (tests/js/recorder_check.mjs).
TEST(RecordCli, ARunsRecordingDecodesWithMcapCore) {
  ASSERT_TRUE(fs::exists(fs::path(FIELDPROOF_JS_DIR) / "node_modules" / "@mcap" / "core"))
      << "npm ci in tests/js first";
  const fs::path runs = fresh_runs_dir("js", "rec_runs_");
  ASSERT_EQ(run_cli("run tests/integration/data/record_default.yaml --max-rtf 0 --runs-dir " +
                    runs.string() + " --run-id a")
                .exit_code,
            0);
  // To a file: node may exit before a large output has gone through a pipe.
  const fs::path out_file = runs / "check.json";
  const std::string cmd = "node '" + std::string(FIELDPROOF_JS_DIR) + "/recorder_check.mjs' '" +
                          (runs / "a" / "recording" / "recording.mcap").string() + "' > '" +
                          out_file.string() + "'";
  const int st = std::system(cmd.c_str());
  const std::string out = read_file(out_file);
  ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << out.substr(0, 2000);
  const json j = json::parse(out);
  EXPECT_TRUE(j["errors"].empty());
  for (const char* topic : {"/fieldproof/events", "/fieldproof/assertions", "/fieldproof/metrics",
                            "/fieldproof/vehicles/ugv1/pose", "/model/ugv1/cmd_vel"}) {
    EXPECT_GT(j["topics"][topic]["count"].get<int>(), 0) << topic;
  }
}

// Every JSON side-channel message of a real recording validates against the JSON Schema its
// channel carries, checked by an independent validator (ajv, draft 2020-12,
// tests/js/side_channels_check.mjs). ugv_full_set has eleven assertions and five KPI collectors:
// metrics of every shape on /fieldproof/assertions and /fieldproof/kpis.
TEST(RecordCli, EverySideChannelMessageMatchesItsChannelsSchema) {
  ASSERT_TRUE(fs::exists(fs::path(FIELDPROOF_JS_DIR) / "node_modules" / "ajv"))
      << "npm ci in tests/js first (scripts/install-deps.sh)";
  const fs::path runs = fresh_runs_dir("schemas", "rec_runs_");
  const auto r = run_cli("run examples/scenarios/ugv_full_set.yaml --max-rtf 0 --runs-dir " +
                         runs.string() + " --run-id a");
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.out;
  const fs::path out_file = runs / "schemas.json";
  const std::string cmd =
      "node '" + std::string(FIELDPROOF_JS_DIR) + "/side_channels_check.mjs' '" +
      (runs / "a" / "recording" / "recording.mcap").string() + "' > '" + out_file.string() + "'";
  const int st = std::system(cmd.c_str());
  const std::string out = read_file(out_file);
  const json j = json::parse(out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << out.substr(0, 2000);
  EXPECT_TRUE(j["errors"].empty()) << j["errors"].dump(2);
  // /fieldproof/resources is always there now: the resource monitor samples every run.
  for (const char* topic : {"/fieldproof/events", "/fieldproof/assertions", "/fieldproof/metrics",
                            "/fieldproof/resources", "/fieldproof/kpis"}) {
    ASSERT_TRUE(j["channels"].contains(topic)) << topic << "\n" << out.substr(0, 2000);
    EXPECT_GT(j["channels"][topic]["count"].get<int>(), 0) << topic;
    EXPECT_EQ(j["channels"][topic]["invalid"].get<int>(), 0)
        << topic << ": " << j["channels"][topic]["errors"].dump(2).substr(0, 3000);
  }
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << out.substr(0, 3000);
}

TEST(CompareCli, TwoSameSeedRunsDeviateByZeroAndExitZero) {
  const fs::path runs = fresh_runs_dir("compare_same", "rec_runs_");
  const std::string cmd =
      "run tests/integration/data/record_default.yaml --max-rtf 0 --runs-dir " + runs.string();
  ASSERT_EQ(run_cli(cmd + " --run-id a").exit_code, 0);
  ASSERT_EQ(run_cli(cmd + " --run-id b").exit_code, 0);
  const auto r =
      run_cli("compare " + (runs / "a").string() + " " + (runs / "b").string() + " --json",
              /*stderr_too=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json j = json::parse(r.out);
  ASSERT_EQ(j["vehicles"].size(), 1u);
  EXPECT_EQ(j["vehicles"][0]["vehicle"], "ugv1");
  EXPECT_GT(j["vehicles"][0]["compared"].get<int>(), 10);
  EXPECT_EQ(j["vehicles"][0]["max_m"].get<double>(), 0.0);
}

// Two synthetic runs whose ugv1 differ by 0.1 m from t = 1 s.
fs::path synthetic_pair(const std::string& test) {
  const fs::path runs = fresh_runs_dir(test, "rec_runs_");
  for (const char* id : {"a", "b"}) {
    fs::create_directories(runs / id);
    std::ofstream out(runs / id / "samples.jsonl");
    for (int i = 0; i <= 20; ++i) {
      const double t = i * 0.1;
      const double y = (std::string(id) == "b" && t >= 1.0) ? 0.1 : 0.0;
      out << json{{"kind", "pose"}, {"model", "ugv1"}, {"sim", t}, {"x", t}, {"y", y}}.dump()
          << "\n";
    }
  }
  return runs;
}

TEST(CompareCli, ADeviationBeyondTheToleranceExitsOne) {
  const fs::path runs = synthetic_pair("compare_diff");
  const std::string args = "compare " + (runs / "a").string() + " " + (runs / "b").string();
  const auto out = run_cli(args + " --tolerance-m 0.05");
  EXPECT_EQ(out.exit_code, 1) << out.out;
  EXPECT_NE(out.out.find("max 0.100 m"), std::string::npos) << out.out;
  EXPECT_EQ(run_cli(args + " --tolerance-m 0.25").exit_code, 0);
}

TEST(CompareCli, AMissingRunExitsTwo) {
  const fs::path runs = synthetic_pair("compare_missing");
  const auto r = run_cli("compare " + (runs / "a").string() + " " + (runs / "nope").string());
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("no such run directory"), std::string::npos) << r.out;
}

TEST(CompareCli, ARunWithoutSamplesExitsTwo) {
  const fs::path runs = synthetic_pair("compare_empty");
  std::ofstream(runs / "b" / "samples.jsonl", std::ios::trunc) << "";
  const auto r = run_cli("compare " + (runs / "a").string() + " " + (runs / "b").string());
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("no ground-truth pose samples"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace fieldproof::integration
