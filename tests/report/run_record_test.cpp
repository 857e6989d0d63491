// The run record (report/run_record.hpp): the one status table, reading run.json strictly,
// writing it atomically, and the schema's shape.
#include "fieldproof/report/run_record.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fieldproof::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() /
                     ("fieldproof_run_record_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

RunRecord complete_record() {
  RunRecord r;
  r.run_id = "depot-1";
  r.scenario = {"ugv_nav_to_goal",
                "examples/scenarios/ugv_nav_to_goal.yaml",
                "sha256:" + std::string(64, 'a'),
                {{"time.rtf", "2"}}};
  r.world = RunRecord::World{"examples/worlds/depot.sdf", "depot", json::array()};
  r.engine_version = "0.1.0";
  r.status = RunStatus::kFailed;
  r.reason = "assertion reached failed: 0.6 m from the goal";
  r.seed = 4;
  r.seed_given = true;
  r.clock = {{"mode", "sim"}};
  r.timeline =
      json::array({{{"label", "drive"}, {"action", "navigate_to_pose"}, {"status", "ok"}}});
  r.started_utc = "2026-12-03T07:00:00.000Z";
  r.ended_utc = "2026-12-03T07:00:01.500Z";
  r.durations = RunRecord::Durations{1.5, 1.2, 30.0};
  r.recording = RunRecord::Recording{"recording/recording.mcap", 1234, {"/clock"}};
  r.artefacts = {{"recording/recording.mcap", "mcap"}, {"engine.log", ""}};
  r.assertions = json::array(
      {{{"name", "reached"}, {"type", "reach_pose"}, {"status", "failed"}, {"reason", "far"}}});
  r.kpis = {{"reached.closest_m", {{"value", 0.6}, {"unit", "m"}}}};
  r.kpi_collectors = json::array();
  r.resources = {{"processes", json::array()}, {"samples", 0}, {"last", json::array()}};
  r.vehicles = {{"ugv1", "dock", "fieldproof-ugv-nav"}};
  return r;
}

TEST(RunStatusTable, GivesEachStatusItsNameVerdictAndExitCode) {
  struct Row {
    RunStatus s;
    const char* name;
    const char* verdict;
    int exit;
  };
  for (const Row& row :
       {Row{RunStatus::kPassed, "passed", "PASS", 0}, Row{RunStatus::kFailed, "failed", "FAIL", 1},
        Row{RunStatus::kTimeout, "timeout", "TIMEOUT", 1},
        Row{RunStatus::kError, "error", "ERROR", 1},
        Row{RunStatus::kInterrupted, "interrupted", "INTERRUPTED", 130},
        Row{RunStatus::kInvalid, "invalid", "INVALID", 2}}) {
    EXPECT_EQ(to_string(row.s), row.name);
    EXPECT_EQ(verdict_of(row.s), row.verdict);
    EXPECT_EQ(exit_code_of(row.s), row.exit);
    EXPECT_EQ(parse_run_status(row.name), row.s);
  }
  EXPECT_FALSE(parse_run_status("PASS").has_value());
  EXPECT_FALSE(parse_run_status("").has_value());
  EXPECT_TRUE(is_judged(RunStatus::kPassed));
  EXPECT_TRUE(is_judged(RunStatus::kFailed));
  EXPECT_FALSE(is_judged(RunStatus::kTimeout));
}

TEST(RunRecord, RoundTripsThroughJson) {
  const RunRecord r = complete_record();
  const json j = to_json(r);
  EXPECT_EQ(j["verdict"], "FAIL");
  EXPECT_EQ(j["exit_code"], 1);
  const Result<RunRecord> back = run_record_from_json(j);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(to_json(*back), j);
  EXPECT_EQ(back->scenario.overrides.at("time.rtf"), "2");
  EXPECT_EQ(back->recording->messages, 1234u);
}

TEST(RunRecord, NamesEveryMissingOrMistypedField) {
  json j = to_json(complete_record());
  j.erase("ended_utc");
  j["durations"].erase("sim_s");
  j["seed_given"] = "yes";
  j["vehicles"][0].erase("stack");
  const Result<RunRecord> r = run_record_from_json(j);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCorrupt);
  const std::string m = r.status().message();
  EXPECT_NE(m.find("ended_utc: missing"), std::string::npos) << m;
  EXPECT_NE(m.find("durations.sim_s: missing"), std::string::npos) << m;
  EXPECT_NE(m.find("seed_given: not true or false"), std::string::npos) << m;
  EXPECT_NE(m.find("vehicles[0].stack: missing"), std::string::npos) << m;
}

TEST(RunRecord, RefusesAVerdictOrExitCodeThatContradictsTheStatus) {
  json j = to_json(complete_record());
  j["verdict"] = "PASS";
  j["exit_code"] = 0;
  const Result<RunRecord> r = run_record_from_json(j);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("verdict: 'PASS' does not match status 'failed'"),
            std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("exit_code: does not match"), std::string::npos);
  j = to_json(complete_record());
  j["status"] = "exploded";
  EXPECT_NE(run_record_from_json(j).status().message().find("unknown status 'exploded'"),
            std::string::npos);
}

TEST(RunRecord, ARecordCutShortIsNotComplete) {
  const json crashed = {{"run_id", "x"},         {"scenario", {{"file", "s.yaml"}}},
                        {"engine_version", "1"}, {"status", "error"},
                        {"verdict", "ERROR"},    {"reason", "internal error: boom"},
                        {"exit_code", 1}};
  EXPECT_FALSE(run_record_from_json(crashed).ok());
  EXPECT_FALSE(read_run_record("{not json").ok());
  EXPECT_EQ(read_run_record("[1]").status().code(), StatusCode::kCorrupt);
}

TEST(WriteRunRecord, WritesTheRecordAndLeavesNoTemporaryFile) {
  const fs::path d = fresh_dir("write");
  { std::ofstream(d / "run.json") << "{\"old\": true}"; }
  ASSERT_TRUE(write_run_record(d, complete_record()).ok());
  const Result<RunRecord> back = read_run_record(read_file(d / "run.json"));
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->run_id, "depot-1");
  EXPECT_FALSE(fs::exists(d / "run.json.tmp"));
  fs::remove_all(d);
}

TEST(WriteRunRecord, AFailureIsAnIoErrorNamingTheFileAndKeepsTheOldRecord) {
  const Status missing = write_run_record("/nonexistent/dir/for/sure", complete_record());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.code(), StatusCode::kIoError);
  EXPECT_NE(missing.message().find("/nonexistent/dir/for/sure/run.json.tmp"), std::string::npos)
      << missing.message();
  // The rename fails (run.json is a directory that is not empty, refused even to root): the
  // temporary is removed and what was there stays.
  const fs::path d = fresh_dir("blocked");
  fs::create_directories(d / "run.json" / "keep");
  const Status blocked = write_run_record(d, complete_record());
  ASSERT_FALSE(blocked.ok());
  EXPECT_EQ(blocked.code(), StatusCode::kIoError);
  EXPECT_NE(blocked.message().find("cannot replace"), std::string::npos) << blocked.message();
  EXPECT_TRUE(fs::is_directory(d / "run.json" / "keep"));
  EXPECT_FALSE(fs::exists(d / "run.json.tmp"));
  fs::remove_all(d);
}

TEST(RunRecordSchema, RequiresWhatAFinishedRunWritesAndEnumeratesTheStatuses) {
  const json s = json::parse(run_record_schema());
  EXPECT_EQ(s["$schema"], "https://json-schema.org/draft/2020-12/schema");
  const json& req = s["required"];
  for (const char* f : {"run_id", "status", "verdict", "exit_code", "durations", "assertions",
                        "kpis", "vehicles", "clock", "timeline"}) {
    EXPECT_NE(std::find(req.begin(), req.end(), f), req.end()) << f;
  }
  EXPECT_EQ(s["properties"]["status"]["enum"].size(), 6u);
  EXPECT_EQ(s["properties"]["verdict"]["enum"].size(), 6u);
  // Every field to_json writes for a complete record is one the schema describes.
  const json written = to_json(complete_record());
  for (const auto& [k, v] : written.items()) {
    EXPECT_TRUE(s["properties"].contains(k)) << k;
  }
}

}  // namespace
}  // namespace fieldproof::report
