// What the source document promises of verdicts and deadlines, through
// the CLI: a failed action ends the run failed naming the entry, with the pending assertions
// skipped; the exit code, run.json, report.json, report.md and junit.xml agree for every status;
// junit.xml follows the common JUnit format (tests/report/schema/junit.xsd, item 14); deadlines
// are judged at the deadline itself.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "integration/cli_test_util.hpp"
#include "report/junit_schema.hpp"

namespace fieldproof::integration {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const json* find_named(const json& list, const std::string& key, const std::string& name) {
  for (const auto& a : list) {
    if (a.value(key, std::string()) == name) return &a;
  }
  return nullptr;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// An attribute of the first element named `element` in `xml` ("" when absent).
std::string attribute(const std::string& xml, const std::string& element, const std::string& attr) {
  const std::regex re("<" + element + "\\b[^>]*\\s" + attr + "=\"([^\"]*)\"");
  std::smatch m;
  return std::regex_search(xml, m, re) ? m[1].str() : "";
}

// The verdict, status and exit code of `dir` as every artefact states them, against the exit code
// of `fieldproof run` and the status expected.
void expect_artefacts_agree(const fs::path& dir, int exit_code, const std::string& status) {
  static const std::map<std::string, std::pair<std::string, int>> kVerdicts = {
      {"passed", {"PASS", 0}},
      {"failed", {"FAIL", 1}},
      {"timeout", {"TIMEOUT", 1}},
      {"error", {"ERROR", 1}},
      {"interrupted", {"INTERRUPTED", 130}}};
  const auto& [verdict, code] = kVerdicts.at(status);
  EXPECT_EQ(exit_code, code) << status;
  const json run = run_json(dir);
  EXPECT_EQ(run["status"], status);
  EXPECT_EQ(run["verdict"], verdict);
  EXPECT_EQ(run["exit_code"], code);
  const json report = json::parse(read_file(dir / "report.json"));
  EXPECT_EQ(report["verdict"], verdict);
  EXPECT_EQ(report["status"], status);
  EXPECT_EQ(report["exit_code"], code);

  const std::string md = read_file(dir / "report.md");
  EXPECT_NE(md.find("**Verdict:** " + verdict + " (exit code " + std::to_string(code) +
                    ", status " + status + ")"),
            std::string::npos)
      << md.substr(0, 400);

  const std::string xml = read_file(dir / "junit.xml");
  EXPECT_NE(xml.find("<property name=\"verdict\" value=\"" + verdict + "\"/>"), std::string::npos);
  EXPECT_NE(xml.find("<property name=\"exit_code\" value=\"" + std::to_string(code) + "\"/>"),
            std::string::npos);
  // The suite's counts are the elements it holds.
  EXPECT_EQ(attribute(xml, "testsuite", "failures"), std::to_string(count(xml, "<failure ")));
  EXPECT_EQ(attribute(xml, "testsuite", "errors"), std::to_string(count(xml, "<error ")));
  EXPECT_EQ(attribute(xml, "testsuite", "skipped"), std::to_string(count(xml, "<skipped ")));
  EXPECT_EQ(attribute(xml, "testsuites", "skipped"), "");  // not in the common format
  // Every time is simulated seconds: the suite's the run's simulated duration, no case beyond it.
  const double suite_time = std::stod(attribute(xml, "testsuite", "time"));
  EXPECT_NEAR(suite_time, run["durations"]["sim_s"].get<double>(), 5e-4);
  EXPECT_EQ(attribute(xml, "testsuites", "time"), attribute(xml, "testsuite", "time"));
  const std::regex case_time("<testcase [^>]*time=\"([0-9.]+)\"");
  for (auto it = std::sregex_iterator(xml.begin(), xml.end(), case_time);
       it != std::sregex_iterator(); ++it) {
    EXPECT_LE(std::stod((*it)[1].str()), suite_time + 5e-4) << (*it)[0];
  }
  // The run's own case: passes, fails or errs with the run.
  const std::regex run_case("<testcase classname=\"[^\"]*\" name=\"run\"[^>]*?(/>|>\\s*<(\\w+))");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(xml, m, run_case)) << xml;
  const std::string kind = m[1] == "/>" ? "" : m[2].str();
  EXPECT_EQ(kind, status == "passed" ? "" : status == "failed" ? "failure" : "error") << status;
  // A passing run has no failure anywhere; any other has at least one failure or error.
  if (status == "passed") {
    EXPECT_EQ(count(xml, "<failure ") + count(xml, "<error "), 0u) << xml;
  } else {
    EXPECT_GE(count(xml, "<failure ") + count(xml, "<error "), 1u) << xml;
  }
}

CommandResult run_scenario(const std::string& scenario, const fs::path& runs,
                           const std::string& extra = "--max-rtf 0") {
  return run_cli("run " + scenario + " " + extra + " --runs-dir " + runs.string() + " --run-id a");
}

TEST(VerdictsCli, AFailedActionEndsTheRunFailedNamingTheEntryAndSkipsPendingAssertions) {
  const fs::path runs = fresh_runs_dir("v_rejected");
  const auto r = run_scenario("tests/integration/data/rejected_goal.yaml", runs);
  ASSERT_EQ(r.exit_code, 1) << r.out;
  const json run = run_json(runs / "a");
  EXPECT_EQ(run["status"], "failed");
  const std::string reason = run["reason"];
  EXPECT_EQ(reason.rfind("timeline entry off_the_map (navigate_to_pose) ended rejected", 0), 0u)
      << reason;
  EXPECT_NE(r.out.find("FAIL: timeline entry off_the_map"), std::string::npos) << r.out;
  for (const char* name : {"reached_goal", "no_collision"}) {
    const json* a = find_named(run["assertions"], "name", name);
    ASSERT_NE(a, nullptr) << name;
    EXPECT_EQ((*a)["status"], "skipped") << name;
    EXPECT_NE((*a)["reason"].get<std::string>().find("off_the_map"), std::string::npos)
        << (*a)["reason"];
  }
  // The run ended there: the later entry never ran.
  EXPECT_EQ((*find_named(run["timeline"], "label", "off_the_map"))["status"], "rejected");
  EXPECT_EQ((*find_named(run["timeline"], "label", "later"))["status"], "skipped");
  EXPECT_LT(run["durations"]["sim_s"].get<double>(), 5.0);
  expect_artefacts_agree(runs / "a", r.exit_code, "failed");
  EXPECT_JUNIT_VALID(runs / "a" / "junit.xml");
}

TEST(VerdictsCli, APassingRunsArtefactsAgree) {
  const fs::path runs = fresh_runs_dir("v_passed");
  const auto r = run_scenario("examples/scenarios/ugv_nav_to_goal.yaml", runs);
  expect_artefacts_agree(runs / "a", r.exit_code, "passed");
  EXPECT_JUNIT_VALID(runs / "a" / "junit.xml");
}

TEST(VerdictsCli, AFailedAssertionsArtefactsAgree) {
  const fs::path runs = fresh_runs_dir("v_failed");
  const auto r = run_scenario("examples/scenarios/ugv_nav_fails_on_time.yaml", runs);
  expect_artefacts_agree(runs / "a", r.exit_code, "failed");
  EXPECT_JUNIT_VALID(runs / "a" / "junit.xml");
}

TEST(VerdictsCli, ATimedOutRunsArtefactsAgree) {
  const fs::path runs = fresh_runs_dir("v_timeout");
  const auto r = run_scenario("tests/integration/data/timeout.yaml", runs, "");
  expect_artefacts_agree(runs / "a", r.exit_code, "timeout");
  EXPECT_JUNIT_VALID(runs / "a" / "junit.xml");
}

TEST(VerdictsCli, AnErroredRunsArtefactsAgree) {
  const fs::path runs = fresh_runs_dir("v_error");
  const auto r = run_scenario("tests/integration/data/crashing_stack_lockstep.yaml", runs);
  expect_artefacts_agree(runs / "a", r.exit_code, "error");
  EXPECT_JUNIT_VALID(runs / "a" / "junit.xml");
}

TEST(VerdictsCli, AnInterruptedRunsArtefactsAgree) {
  const fs::path runs = fresh_runs_dir("v_interrupted");
  const int code = interrupt_run_once_the_drive_started(runs);
  expect_artefacts_agree(runs / "a", code, "interrupted");
  EXPECT_JUNIT_VALID(runs / "a" / "junit.xml");
}

TEST(VerdictsCli, DeadlinesAreJudgedAtTheDeadlineItself) {
  const fs::path runs = fresh_runs_dir("v_deadlines");
  const auto r = run_scenario("tests/integration/data/deadlines.yaml", runs);
  ASSERT_EQ(r.exit_code, 1) << r.out;
  const json run = run_json(runs / "a");
  const json* reach = find_named(run["assertions"], "name", "reached_early");
  const json* quick = find_named(run["assertions"], "name", "quick_drive");
  ASSERT_NE(reach, nullptr);
  ASSERT_NE(quick, nullptr);
  EXPECT_EQ((*reach)["status"], "failed");
  EXPECT_EQ((*reach)["t_s"], 5.05);
  // Its sim_s is the last pose it judged (10 Hz): the one at 5.0 s, not one after the deadline.
  EXPECT_EQ((*reach)["sim_s"], 5.0);
  EXPECT_EQ((*quick)["status"], "failed");
  EXPECT_EQ((*quick)["t_s"], 3.25);  // the drive started at 2 s
  EXPECT_EQ((*quick)["sim_s"], 3.25);
  // The engine woke there (the verdict's event is logged at that simulated time, not at 3.3 s).
  const std::string log = read_file(runs / "a" / "engine.log");
  const std::regex quick_event(
      R"re(\{"event":"assertion.failed","name":"quick_drive"[^\n]*"sim_s":([0-9.]+))re");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(log, m, quick_event)) << log.substr(0, 2000);
  EXPECT_LT(std::stod(m[1].str()), 3.2501) << m[0];
}

// Validation in one round: the unknown key, the malformed duration and both
// unknown frames are reported by one `fieldproof validate`, in file order.
TEST(ValidationCli, EveryErrorOfAFileIsReportedInOneRound) {
  const auto r = run_cli("validate tests/integration/data/many_errors.yaml");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  const std::vector<std::string> expected = {
      "many_errors.yaml:11:12: vehicles[0].spawn: the world has no frame 'no_such_frame'",
      "many_errors.yaml:12:5: vehicles[0].colour: unknown key 'colour'",
      "many_errors.yaml:17:9: timeline[0].at: expected a duration",
      "many_errors.yaml:23:11: timeline[1].goal: the world has no frame 'nowhere'",
  };
  size_t last = 0;
  for (const std::string& e : expected) {
    const size_t at = r.out.find(e);
    EXPECT_NE(at, std::string::npos) << e << "\n" << r.out;
    if (at != std::string::npos) {
      EXPECT_GE(at, last) << "not in file order: " << e << "\n" << r.out;
      last = at;
    }
  }
  EXPECT_NE(r.out.find("invalid (4 errors)"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace fieldproof::integration
