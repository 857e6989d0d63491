// The report part: each format from each fixture run (tests/report/data), by structure and
// golden substrings.
#include <tinyxml2.h>

#include <functional>

#include <nlohmann/json.hpp>

#include "fieldproof/report/report.hpp"
#include "report/fixture.hpp"
#include "report/junit_schema.hpp"
#include "report/svg.hpp"

namespace fieldproof::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::count;
using testing::fixture_copy;
using testing::fresh_dir;
using testing::read_file;
using testing::write_file;

Report load(const std::string& name) { return Report::load(fixture_copy(name)).value(); }

json model(const std::string& name) { return json::parse(load(name).to_json()); }

// The JUnit document parsed: counts read from the testcases themselves.
struct ParsedJunit {
  tinyxml2::XMLDocument doc;
  const tinyxml2::XMLElement* suite = nullptr;
  JunitCounts seen;
};

void parse_junit(const std::string& xml, ParsedJunit* p) {
  ASSERT_EQ(p->doc.Parse(xml.c_str()), tinyxml2::XML_SUCCESS) << p->doc.ErrorStr() << "\n" << xml;
  const auto* root = p->doc.FirstChildElement("testsuites");
  ASSERT_NE(root, nullptr);
  p->suite = root->FirstChildElement("testsuite");
  ASSERT_NE(p->suite, nullptr);
  EXPECT_EQ(p->suite->NextSiblingElement("testsuite"), nullptr) << "one testsuite";
  for (auto* c = p->suite->FirstChildElement("testcase"); c;
       c = c->NextSiblingElement("testcase")) {
    ++p->seen.tests;
    p->seen.failures += c->FirstChildElement("failure") != nullptr;
    p->seen.errors += c->FirstChildElement("error") != nullptr;
    p->seen.skipped += c->FirstChildElement("skipped") != nullptr;
  }
}

const tinyxml2::XMLElement* testcase(const ParsedJunit& p, const std::string& classname,
                                     const std::string& name) {
  for (auto* c = p.suite->FirstChildElement("testcase"); c; c = c->NextSiblingElement("testcase")) {
    if (c->Attribute("classname", classname.c_str()) && c->Attribute("name", name.c_str()))
      return c;
  }
  return nullptr;
}

std::string property(const ParsedJunit& p, const std::string& name) {
  const auto* props = p.suite->FirstChildElement("properties");
  if (!props) return "<no properties>";
  for (auto* e = props->FirstChildElement("property"); e; e = e->NextSiblingElement("property")) {
    if (e->Attribute("name", name.c_str())) return e->Attribute("value");
  }
  return "<absent>";
}

// ---- loading ----

TEST(ReportLoad, ReadsRunIdVerdictAndExitCode) {
  const Report r = load("failed");
  EXPECT_EQ(r.run_id(), "depot-fail-1");
  EXPECT_EQ(r.verdict(), "FAIL");
  EXPECT_EQ(r.exit_code(), 1);
}

TEST(ReportLoad, DerivesVerdictAndExitCodeFromStatusWhenAbsentOrMistyped) {
  const Report r = load("interrupted");
  EXPECT_EQ(r.verdict(), "INTERRUPTED");
  EXPECT_EQ(r.exit_code(), 130);
}

TEST(ReportLoad, MissingRunJsonIsAnError) {
  const Result<Report> r = Report::load(fresh_dir("empty"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("run.json"), std::string::npos) << r.status().message();
}

TEST(ReportLoad, RunJsonThatIsNotJsonIsAnErrorNamingTheFile) {
  const auto d = fresh_dir("notjson");
  write_file(d / "run.json", "{\"run_id\": ");
  const Result<Report> r = Report::load(d);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), (d / "run.json").string() + ": run.json is not valid JSON");
}

TEST(ReportLoad, RunJsonThatIsNotAnObjectIsAnError) {
  const Result<Report> r = Report::from_text("[1, 2]");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "run.json is not a JSON object");
}

TEST(ReportLoad, EmptyObjectRendersEveryFormat) {
  const Report r = Report::from_text("{}").value();
  EXPECT_NE(r.to_markdown().find("—"), std::string::npos);
  EXPECT_NE(r.to_junit().find("name=\"run\""), std::string::npos);
  EXPECT_NE(r.to_html().find("</html>"), std::string::npos);
  EXPECT_TRUE(json::parse(r.to_json())["status"].is_null());
}

TEST(ResolveRun, AcceptsADirectoryItsRunJsonOrARunIdUnderTheRunsDir) {
  const auto d = fixture_copy("passed");
  EXPECT_EQ(resolve_run_json(d.string()).value(), d / "run.json");
  EXPECT_EQ(resolve_run_json((d / "run.json").string()).value(), d / "run.json");
  EXPECT_EQ(resolve_run_json("passed", d.parent_path()).value(),
            d.parent_path() / "passed" / "run.json");
}

TEST(ResolveRun, UnknownRunIsAnErrorSayingWhereItLooked) {
  const auto d = fresh_dir("runs");
  const Result<fs::path> r = resolve_run_json("nope-1", d);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find((d / "nope-1").string()), std::string::npos)
      << r.status().message();
}

TEST(ResolveRun, DirectoryWithoutRunJsonIsAnError) {
  const fs::path d = fresh_dir("norun");
  const Result<fs::path> r = resolve_run_json(d.string());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), d.string() + ": no run.json in this directory");
  EXPECT_EQ(resolve_run_json("").status().code(), StatusCode::kInvalidArgument);
}

TEST(ReportFormat, ParsesTheFourFormatNames) {
  Format f;
  EXPECT_TRUE(parse_format("md", &f));
  EXPECT_EQ(f, Format::kMarkdown);
  EXPECT_TRUE(parse_format("junit", &f));
  EXPECT_EQ(f, Format::kJunit);
  EXPECT_TRUE(parse_format("html", &f));
  EXPECT_EQ(f, Format::kHtml);
  EXPECT_TRUE(parse_format("json", &f));
  EXPECT_EQ(f, Format::kJson);
  EXPECT_FALSE(parse_format("pdf", &f));
}

// ---- report.json ----

TEST(ReportJson, HoldsVerdictScenarioWorldVehiclesAndDurations) {
  const json m = model("passed");
  EXPECT_EQ(m["verdict"], "PASS");
  EXPECT_EQ(m["exit_code"], 0);
  EXPECT_EQ(m["scenario"]["name"], "ugv_nav_to_goal");
  EXPECT_EQ(m["scenario"]["digest"], "sha256:abc123");
  EXPECT_EQ(m["world"]["name"], "depot");
  ASSERT_EQ(m["vehicles"].size(), 2u);
  EXPECT_EQ(m["start"], "2026-11-30T22:00:00Z");
  EXPECT_EQ(m["durations"]["wall_s"], 10.4);
  EXPECT_EQ(m["durations"]["sim_s"], 10.0);
}

TEST(ReportJson, ClockLineHasModeFactorsDriftViolationsVerdictStepsAndSeed) {
  const std::string line = model("passed")["clock_line"];
  for (const char* part :
       {"mode lockstep", "target RTF 1", "measured RTF 0.96 (min 0.91, max 1)", "drift -0.4 s",
        "violations 0", "verdict —", "lockstep steps 100 of 0.1 s", "seed 42"}) {
    EXPECT_NE(line.find(part), std::string::npos) << part << " in " << line;
  }
}

TEST(ReportJson, ClockLineCountsViolationsGivenAsAList) {
  const std::string line = model("timeout")["clock_line"];
  EXPECT_NE(line.find("violations 3"), std::string::npos) << line;
  EXPECT_NE(line.find("verdict drifted"), std::string::npos) << line;
}

TEST(ReportJson, ArtefactsListTheRecordingFirstWithItsSize) {
  const json a = model("passed")["artefacts"];
  ASSERT_GE(a.size(), 3u);
  EXPECT_EQ(a[0]["path"], "recording/recording.mcap");
  EXPECT_EQ(a[0]["size"], 21);
  bool run_json = false;
  for (const auto& e : a) run_json |= e["path"] == "run.json";
  EXPECT_TRUE(run_json);
}

TEST(ReportJson, KeepsRunKpisAndCollectors) {
  const json m = model("passed");
  EXPECT_EQ(m["kpis"]["path_length.ugv1_m"]["value"], 8.31);
  EXPECT_EQ(m["kpis"]["path_length.ugv1_m"]["unit"], "m");
  ASSERT_EQ(m["kpi_collectors"].size(), 1u);
}

TEST(ReportJson, KpisFallBackToTheAssertionsMetrics) {
  const json m = model("failed");
  EXPECT_EQ(m["kpis"]["arrived_in_time.elapsed_s"]["value"], 1.0);
  EXPECT_EQ(m["kpis"]["reached_goal.closest_m"]["unit"], "m");
}

TEST(ReportJson, KeepsEveryExcerptOfTheAssertions) {
  const json m = model("failed");
  EXPECT_EQ(m["assertions"][1]["evidence"]["excerpt"].size(), 2u);
}

TEST(ReportJson, MistypedFieldsBecomeNullOrEmptyNotAnError) {
  const json m = model("interrupted");
  EXPECT_TRUE(m["scenario"]["name"].is_null());
  EXPECT_TRUE(m["world"]["name"].is_null());
  EXPECT_TRUE(m["clock"].is_null());
  EXPECT_TRUE(m["timeline"].empty());
  EXPECT_EQ(m["assertions"].size(), 2u);  // the non-object entry left out
  EXPECT_EQ(m["kpis"]["speed"]["value"], 1.5);
}

TEST(ReportJson, PhasesComeFromEngineLogWhenRunJsonHasNone) {
  const nlohmann::json ph = model("failed")["phases"];
  ASSERT_EQ(ph.size(), 2u);  // the cut last line left out
  EXPECT_EQ(ph[0]["phase"], "starting");
  EXPECT_EQ(ph[1]["wall_s"], 0.152);
}

TEST(ReportJson, CountsThePlottedSamples) {
  const json m = model("passed");
  EXPECT_EQ(m["plots"]["paths"]["ugv1"], 101);  // the line cut short is left out
  EXPECT_EQ(m["plots"]["clock_samples"], 11);
}

// ---- report.md ----

TEST(ReportMarkdown, HasEverySection) {
  const std::string md = load("passed").to_markdown();
  for (const char* part :
       {"# fieldproof run depot-pass-1: PASS",
        "**Verdict:** PASS (exit code 0, status passed)",
        "| Scenario | ugv_nav_to_goal (examples/scenarios/ugv_nav_to_goal.yaml) digest "
        "sha256:abc123 |",
        "| World | depot (examples/worlds/depot.sdf) |",
        "ugv1 (spawn dock_a, stack ugv_nav); ugv2",
        "| Start | 2026-11-30T22:00:00Z |",
        "| Durations | wall 10.4 s · timeline — · simulated 10 s |",
        "| Seed | 42 (given) |",
        "**Clock:** mode lockstep",
        "## Assertions",
        "| reached_goal | reach_pose | passed | 8.5 | within 0.2 m of the goal |",
        "## KPIs",
        "| path_length.ugv1_m | 8.31 | m | collector path_length |",
        "### KPI collectors",
        "## Timeline",
        "| drive | navigate_to_pose | ugv1 | 1 | 1 | 8.5 | ok | — |",
        "## Phases",
        "- ready (wall_s 1.2)",
        "## Artefacts",
        "| recording/recording.mcap | 21 B (21 bytes) |"}) {
    EXPECT_NE(md.find(part), std::string::npos) << part << "\n---\n" << md;
  }
}

TEST(ReportMarkdown, StartAndEndAreTheRunsUtcTimestamps) {
  const std::string md = load("plots").to_markdown();
  EXPECT_NE(md.find("| Start | 2026-12-01T00:10:00.000Z |"), std::string::npos) << md;
  EXPECT_NE(md.find("| End | 2026-12-01T00:10:12.500Z |"), std::string::npos) << md;
}

TEST(ReportMarkdown, PrintsTheExcerptsOfTheFailedAssertionsOnlyUnderTheTable) {
  const std::string md = load("failed").to_markdown();
  const size_t table = md.find("| arrived_in_time | within_time | failed |");
  const size_t excerpts = md.find("### Excerpts of the failed assertions");
  ASSERT_NE(table, std::string::npos) << md;
  ASSERT_NE(excerpts, std::string::npos) << md;
  EXPECT_LT(table, excerpts);
  EXPECT_NE(md.find("#### arrived_in_time"), std::string::npos);
  EXPECT_NE(md.find("| 1.9 | 1.9 | distance_m=7.3, kind=pose, model=ugv1, x=0.7, y=0, yaw=0 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("Evidence: deadline_s=2"), std::string::npos);
  EXPECT_EQ(md.find("#### reached_goal"), std::string::npos);
}

TEST(ReportMarkdown, PassedRunHasNoExcerptSection) {
  EXPECT_EQ(load("passed").to_markdown().find("Excerpts"), std::string::npos);
}

TEST(ReportMarkdown, EscapesTableCells) {
  const Report r =
      Report::from_text(
          R"({"assertions": [{"name": "a|b", "status": "failed", "reason": "x\ny <tag>"}]})")
          .value();
  const std::string md = r.to_markdown();
  EXPECT_NE(md.find("| a\\|b |"), std::string::npos) << md;
  EXPECT_NE(md.find("x<br>y &lt;tag>"), std::string::npos) << md;
}

TEST(ReportMarkdown, MissingFieldsAreDashes) {
  const std::string md = load("interrupted").to_markdown();
  EXPECT_NE(md.find("| World | — |"), std::string::npos) << md;
  EXPECT_NE(md.find("**Clock:** mode — · target RTF —"), std::string::npos) << md;
  EXPECT_NE(md.find("No timeline entries."), std::string::npos);
  EXPECT_NE(md.find("- starting: 0.1"), std::string::npos) << md;
}

// ---- junit.xml ----

class JunitCountsTest : public ::testing::TestWithParam<std::tuple<const char*, JunitCounts>> {};

TEST_P(JunitCountsTest, ParsesAndItsCountsMatchTheRun) {
  const auto& [name, want] = GetParam();
  const Report r = load(name);
  ParsedJunit p;
  parse_junit(r.to_junit(), &p);
  ASSERT_NE(p.suite, nullptr);
  EXPECT_EQ(p.seen.tests, want.tests);
  EXPECT_EQ(p.seen.failures, want.failures);
  EXPECT_EQ(p.seen.errors, want.errors);
  EXPECT_EQ(p.seen.skipped, want.skipped);
  EXPECT_EQ(p.suite->IntAttribute("tests"), want.tests);
  EXPECT_EQ(p.suite->IntAttribute("failures"), want.failures);
  EXPECT_EQ(p.suite->IntAttribute("errors"), want.errors);
  EXPECT_EQ(p.suite->IntAttribute("skipped"), want.skipped);
  const JunitCounts c = r.junit_counts();
  EXPECT_EQ(c.tests, want.tests);
  EXPECT_EQ(c.failures + c.errors + c.skipped, want.failures + want.errors + want.skipped);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, JunitCountsTest,
                         ::testing::Values(std::make_tuple("passed", JunitCounts{5, 0, 0, 0}),
                                           std::make_tuple("failed", JunitCounts{7, 3, 0, 2}),
                                           std::make_tuple("timeout", JunitCounts{3, 1, 1, 1}),
                                           std::make_tuple("interrupted", JunitCounts{3, 0, 1, 1})),
                         [](const auto& info) { return std::string(std::get<0>(info.param)); });

// The common JUnit format: each fixture's document validates against the
// XSD written from the format's public description; <testsuites> has no skipped attribute.
class JunitSchemaTest : public ::testing::TestWithParam<const char*> {};

TEST_P(JunitSchemaTest, ValidatesAgainstTheCommonJunitXsd) {
  const std::string xml = load(GetParam()).to_junit();
  EXPECT_EQ(xml.find("<testsuites name=\"fieldproof\" tests="), xml.find("<testsuites"));
  const std::string root = xml.substr(
      xml.find("<testsuites"), xml.find('>', xml.find("<testsuites")) - xml.find("<testsuites"));
  EXPECT_EQ(root.find("skipped"), std::string::npos) << root;
  const auto file = fresh_dir(std::string("junit_schema_") + GetParam()) / "junit.xml";
  write_file(file, xml);
  EXPECT_JUNIT_VALID(file);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, JunitSchemaTest,
                         ::testing::Values("passed", "failed", "timeout", "interrupted", "plots"),
                         [](const auto& info) { return std::string(info.param); });

// Every time is simulated seconds (docs/reports.md): the suite's is the run's simulated duration,
// the run's case the same, an assertion's its verdict's t_s.
TEST(ReportJunit, TimesAreSimulatedSecondsAndTheSuiteSpansTheRun) {
  ParsedJunit p;
  parse_junit(load("failed").to_junit(), &p);
  const json m = model("failed");
  const double sim = m["durations"]["sim_s"].get<double>();
  EXPECT_NEAR(p.suite->DoubleAttribute("time"), sim, 5e-4);
  EXPECT_NEAR(p.doc.FirstChildElement("testsuites")->DoubleAttribute("time"), sim, 5e-4);
  const auto* run = testcase(p, "ugv_nav_fails_on_time", "run");
  ASSERT_NE(run, nullptr);
  EXPECT_NEAR(run->DoubleAttribute("time"), sim, 5e-4);
  for (auto* c = p.suite->FirstChildElement("testcase"); c; c = c->NextSiblingElement("testcase")) {
    EXPECT_LE(c->DoubleAttribute("time"), sim + 5e-4) << c->Attribute("name");
  }
}

TEST(ReportJunit, SuiteIsNamedAfterTheScenarioWithTheRunsFactsAsProperties) {
  ParsedJunit p;
  parse_junit(load("passed").to_junit(), &p);
  EXPECT_STREQ(p.suite->Attribute("name"), "ugv_nav_to_goal");
  EXPECT_EQ(property(p, "run_id"), "depot-pass-1");
  EXPECT_EQ(property(p, "verdict"), "PASS");
  EXPECT_EQ(property(p, "status"), "passed");
  EXPECT_EQ(property(p, "exit_code"), "0");
  EXPECT_EQ(property(p, "reason"), "every assertion passed");
  EXPECT_EQ(property(p, "scenario.path"), "examples/scenarios/ugv_nav_to_goal.yaml");
  EXPECT_EQ(property(p, "scenario.digest"), "sha256:abc123");
  EXPECT_EQ(property(p, "world"), "depot");
  EXPECT_EQ(property(p, "engine_version"), "0.1.0");
  EXPECT_EQ(property(p, "duration.wall_s"), "10.4");
  EXPECT_NE(property(p, "mcap").find("recording/recording.mcap"), std::string::npos);
  EXPECT_EQ(property(p, "kpi.path_length.ugv1_m"), "8.31 m");
  EXPECT_EQ(property(p, "kpi.reached_goal.closest_m"), "0.12 m");
}

TEST(ReportJunit, AssertionCaseTimeIsTheVerdictsTAndFailureHoldsReasonAndEvidence) {
  ParsedJunit p;
  parse_junit(load("failed").to_junit(), &p);
  const auto* c = testcase(p, "ugv_nav_fails_on_time.assertions", "arrived_in_time");
  ASSERT_NE(c, nullptr);
  EXPECT_STREQ(c->Attribute("time"), "2.000");
  const auto* f = c->FirstChildElement("failure");
  ASSERT_NE(f, nullptr);
  EXPECT_STREQ(f->Attribute("message"),
               "drive has not completed 1 s after its start <late> & \"slow\" \\x01bell");
  const std::string text = f->GetText();
  EXPECT_NE(text.find("\"distance_m\": 7.3"), std::string::npos) << text;
  EXPECT_NE(text.find("\"deadline_s\": 2.0"), std::string::npos) << text;
}

TEST(ReportJunit, SkippedAndPendingAssertionsAreSkipped) {
  ParsedJunit p;
  parse_junit(load("failed").to_junit(), &p);
  const auto* s = testcase(p, "ugv_nav_fails_on_time.assertions", "stays_in_yard");
  const auto* q = testcase(p, "ugv_nav_fails_on_time.assertions", "late_check");
  ASSERT_TRUE(s && q);
  EXPECT_NE(s->FirstChildElement("skipped"), nullptr);
  EXPECT_NE(q->FirstChildElement("skipped"), nullptr);
}

TEST(ReportJunit, TimelineEntryFailsUnlessItsStatusIsOk) {
  ParsedJunit p;
  parse_junit(load("failed").to_junit(), &p);
  const auto* ok = testcase(p, "ugv_nav_fails_on_time.timeline", "drive");
  const auto* bad = testcase(p, "ugv_nav_fails_on_time.timeline", "second_leg");
  ASSERT_TRUE(ok && bad);
  EXPECT_EQ(ok->FirstChildElement(), nullptr);
  EXPECT_STREQ(ok->Attribute("time"), "7.000");
  ASSERT_NE(bad->FirstChildElement("failure"), nullptr);
  EXPECT_STREQ(bad->FirstChildElement("failure")->Attribute("message"),
               "status aborted: goal ABORTED by the controller");
}

TEST(ReportJunit, TimelineEntryThatSucceededPasses) {
  ParsedJunit p;
  parse_junit(load("passed").to_junit(), &p);
  const auto* e = testcase(p, "ugv_nav_to_goal.timeline", "drive2");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->FirstChildElement(), nullptr);
}

TEST(ReportJunit, RunCaseFailsWhenTheRunFailed) {
  ParsedJunit p;
  parse_junit(load("failed").to_junit(), &p);
  const auto* run = testcase(p, "ugv_nav_fails_on_time", "run");
  ASSERT_NE(run, nullptr);
  EXPECT_NE(run->FirstChildElement("failure"), nullptr);
  EXPECT_EQ(run->FirstChildElement("error"), nullptr);
}

TEST(ReportJunit, RunCaseIsAnErrorWhenTheRunTimedOut) {
  ParsedJunit p;
  parse_junit(load("timeout").to_junit(), &p);
  const auto* run = testcase(p, "ugv_realtime", "run");
  ASSERT_NE(run, nullptr);
  ASSERT_NE(run->FirstChildElement("error"), nullptr);
  EXPECT_NE(std::string(run->FirstChildElement("error")->Attribute("message")).find("timeout"),
            std::string::npos);
}

TEST(ReportJunit, RunCasePassesWhenTheRunPassed) {
  ParsedJunit p;
  parse_junit(load("passed").to_junit(), &p);
  const auto* run = testcase(p, "ugv_nav_to_goal", "run");
  ASSERT_NE(run, nullptr);
  EXPECT_EQ(run->FirstChildElement(), nullptr);
}

TEST(ReportJunit, EscapesControlCharactersQuotesAndInvalidUtf8) {
  const Report r =
      Report::from_text(
          "{\"scenario\": {\"name\": \"s<&>\\\"'\"}, \"status\": \"failed\", \"reason\": "
          "\"a\\u0000b\\u001b\xff\"}")
          .value();
  ParsedJunit p;
  parse_junit(r.to_junit(), &p);
  ASSERT_NE(p.suite, nullptr);
  EXPECT_STREQ(p.suite->Attribute("name"), "s<&>\"'");
  EXPECT_EQ(property(p, "reason"), "a\\x00b\\x1B\xEF\xBF\xBD");
}

// ---- report.html ----

TEST(ReportHtml, IsWellFormedXmlWithNoScriptsOrExternalResources) {
  const std::string html = load("failed").to_html();
  tinyxml2::XMLDocument doc;
  EXPECT_EQ(doc.Parse(html.c_str()), tinyxml2::XML_SUCCESS) << doc.ErrorStr();
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("href="), std::string::npos);
  EXPECT_EQ(html.find("url("), std::string::npos);
}

TEST(ReportHtml, DrawsAPathPerVehicle) {
  const std::string html = load("passed").to_html();
  EXPECT_EQ(count(html, "<svg"), 4u);
  EXPECT_EQ(count(html, "class=\"vehicle-path\""), 2u);
  EXPECT_NE(html.find("data-vehicle=\"ugv1\""), std::string::npos);
  EXPECT_NE(html.find("data-vehicle=\"ugv2\""), std::string::npos);
}

TEST(ReportHtml, DrawsObstaclesGoalsAndGeofences) {
  const std::string html = load("passed").to_html();
  EXPECT_EQ(count(html, "class=\"obstacle\""), 2u);
  EXPECT_EQ(count(html, "class=\"goal\""), 2u);  // the run's goal and the timeline's
  EXPECT_EQ(count(html, "class=\"geofence inside\""), 1u);
}

TEST(ReportHtml, DrawsTheRegionOfEveryGeofenceAssertion) {
  const std::string html = load("plots").to_html();
  // A box (evidence.region) and a polygon (region) to stay inside, a circle (resolved.region) to
  // stay outside.
  EXPECT_EQ(count(html, "<polygon class=\"geofence inside\" data-name=\"stays_in_yard\""), 1u);
  EXPECT_EQ(count(html, "<polygon class=\"geofence inside\" data-name=\"stays_in_lane\""), 1u);
  EXPECT_EQ(count(html, "<circle class=\"geofence outside\" data-name=\"stays_off_pad\""), 1u);
  EXPECT_EQ(count(html, "class=\"geofence "), 3u);
}

TEST(ReportHtml, SkipsAGeofenceRegionItCannotDraw) {
  json run = json::parse(read_file(fixture_copy("plots") / "run.json"));
  run["assertions"][0]["evidence"]["region"] = {{"box", {{"x_min", 1}}}};
  run["assertions"][1]["resolved"]["region"] = {{"circle", {{"x", 1}, {"y", 2}}}};
  run["assertions"][2]["region"] = {{"polygon", {{0, 0}, {1, 1}}}};
  const std::string html = Report::from_text(run.dump()).value().to_html();
  EXPECT_EQ(count(html, "class=\"geofence "), 0u);
}

TEST(ReportHtml, DrawsRtfAndDriftFromClockJsonl) {
  const std::string html = load("timeout").to_html();
  EXPECT_NE(html.find("class=\"plot rtf\""), std::string::npos);
  EXPECT_NE(html.find("class=\"plot drift\""), std::string::npos);
  EXPECT_EQ(count(html, "class=\"series\""), 2u);
}

TEST(ReportHtml, DerivesDriftFromClockSamplesWithoutOne) {
  const std::string html = load("passed").to_html();
  EXPECT_EQ(count(html, "class=\"series\""), 2u);
}

TEST(ReportHtml, PutsTheVerdictsOnTheTimeline) {
  const std::string html = load("failed").to_html();
  EXPECT_NE(html.find("class=\"plot verdicts\""), std::string::npos);
  EXPECT_EQ(count(html, "class=\"verdict failed\""), 1u);
  EXPECT_EQ(count(html, "class=\"entry bad\""), 1u);
}

TEST(ReportHtml, SaysSoWhenThereAreNoSamples) {
  const std::string html = load("failed").to_html();
  EXPECT_NE(html.find("No ground-truth poses in samples.jsonl."), std::string::npos);
  EXPECT_EQ(count(html, "class=\"vehicle-path\""), 0u);
}

TEST(ReportHtml, EscapesTextFromTheRun) {
  const std::string html = load("failed").to_html();
  EXPECT_NE(html.find("&lt;late&gt; &amp; &quot;slow&quot;"), std::string::npos);
  EXPECT_EQ(html.find("<late>"), std::string::npos);
}

// ---- write_all ----

TEST(ReportWrite, WritesTheFourFilesInTheRunDirectory) {
  const auto d = fixture_copy("failed");
  const Report r = Report::load(d).value();
  ASSERT_TRUE(r.write_all(d).ok());
  EXPECT_EQ(read_file(d / "report.json"), r.to_json());
  EXPECT_EQ(read_file(d / "report.md"), r.to_markdown());
  EXPECT_EQ(read_file(d / "junit.xml"), r.to_junit());
  EXPECT_EQ(read_file(d / "report.html"), r.to_html());
}

TEST(ReportWrite, WriteReportsLoadsTheRunAndWritesTheFourFiles) {
  const auto d = fixture_copy("passed");
  const std::string before = Report::load(d).value().to_markdown();  // the artefacts as they are
  ASSERT_TRUE(write_reports(d).ok());
  EXPECT_EQ(read_file(d / "report.md"), before);
  EXPECT_FALSE(read_file(d / "junit.xml").empty());
  const fs::path empty = fresh_dir("no_record");
  const Status s = write_reports(empty);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find((empty / "run.json").string()), std::string::npos) << s.message();
  EXPECT_FALSE(fs::exists(empty / "report.md"));
}

TEST(ReportWrite, UnwritableDirectoryIsAnIoError) {
  const Report r = load("passed");
  const fs::path dir = fresh_dir("w") / "missing" / "dir";
  const Status s = r.write_all(dir);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_EQ(s.message(), (dir / "report.json.tmp").string() + ": cannot write");
}

}  // namespace
}  // namespace fieldproof::report

namespace fieldproof::report {
namespace {

// Every value of the passed fixture's run.json, in turn replaced by each JSON type.
void replace_each(const nlohmann::json& root, nlohmann::json& node,
                  const std::function<void()>& check) {
  const nlohmann::json kinds[] = {nullptr,
                                  1,
                                  -2.5,
                                  "x<&",
                                  true,
                                  nlohmann::json::array(),
                                  nlohmann::json::object(),
                                  nlohmann::json::array({1, "a"})};
  if (!node.is_object() && !node.is_array()) return;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const nlohmann::json saved = *it;
    for (const auto& k : kinds) {
      *it = k;
      check();
    }
    *it = saved;
    replace_each(root, *it, check);
  }
}

TEST(ReportRobustness, AnyFieldOfAnyTypeRendersEveryFormat) {
  const auto d = fixture_copy("passed");
  nlohmann::json run = nlohmann::json::parse(read_file(d / "run.json"));
  int renders = 0;
  replace_each(run, run, [&] {
    const Report r = Report::from_text(run.dump(), d).value();
    for (Format f : {Format::kJson, Format::kMarkdown, Format::kJunit, Format::kHtml}) {
      EXPECT_FALSE(r.render(f).empty());
    }
    tinyxml2::XMLDocument doc;
    EXPECT_EQ(doc.Parse(r.to_junit().c_str()), tinyxml2::XML_SUCCESS);
    ++renders;
  });
  EXPECT_GT(renders, 500);
}

// ---- the plots' axes (svg.hpp) ----

TEST(SvgAxis, NiceStepsAreOneTwoOrFiveTimesAPowerOfTen) {
  EXPECT_DOUBLE_EQ(svg::nice_step(48.3, 10), 5.0);
  EXPECT_DOUBLE_EQ(svg::nice_step(1.0, 5), 0.2);
  EXPECT_DOUBLE_EQ(svg::nice_step(31.2, 8), 5.0);
  EXPECT_DOUBLE_EQ(svg::nice_step(0.0012, 6), 0.0002);
  EXPECT_DOUBLE_EQ(svg::nice_step(7000, 5), 2000.0);
  EXPECT_DOUBLE_EQ(svg::nice_step(10, 10), 1.0);  // exactly max_ticks intervals
  EXPECT_DOUBLE_EQ(svg::nice_step(0, 5), 1.0);    // degenerate
}

TEST(SvgAxis, FitWidensToWholeStepsWithTicksOnTheSteps) {
  struct Case {
    double lo, hi;
    int max;
    double want_lo, want_hi, want_step;
    std::vector<std::string> labels;
  };
  const Case cases[] = {
      {0, 48.3, 10, 0, 50, 5, {"0", "5", "10", "15", "20", "25", "30", "35", "40", "45", "50"}},
      {0.23, 1.37, 5, 0, 1.5, 0.5, {"0.0", "0.5", "1.0", "1.5"}},
      {-15.6, 15.6, 8, -20, 20, 5, {"-20", "-15", "-10", "-5", "0", "5", "10", "15", "20"}},
      // 0.01 would need 6 intervals once widened: the next step, 0.02.
      {-0.037, 0.012, 5, -0.04, 0.02, 0.02, {"-0.04", "-0.02", "0.00", "0.02"}},
      {1200, 7400, 5, 0, 8000, 2000, {"0", "2000", "4000", "6000", "8000"}},
  };
  for (const Case& c : cases) {
    const svg::Axis a = svg::Axis::fit(c.lo, c.hi, c.max);
    EXPECT_NEAR(a.lo, c.want_lo, 1e-12) << c.lo << ".." << c.hi;
    EXPECT_NEAR(a.hi, c.want_hi, 1e-12) << c.lo << ".." << c.hi;
    EXPECT_NEAR(a.step, c.want_step, 1e-15) << c.lo << ".." << c.hi;
    std::vector<std::string> labels;
    for (double t : a.ticks()) labels.push_back(a.label(t));
    EXPECT_EQ(labels, c.labels) << c.lo << ".." << c.hi;
    EXPECT_LE(a.ticks().size(), static_cast<size_t>(c.max) + 1);
  }
}

TEST(SvgAxis, ADegenerateRangeBecomesOneAroundIt) {
  const svg::Axis z = svg::Axis::fit(0, 0, 5);
  EXPECT_LT(z.lo, 0);
  EXPECT_GT(z.hi, 0);
  const svg::Axis one = svg::Axis::fit(1, 1, 5);
  EXPECT_LT(one.lo, 1);
  EXPECT_GT(one.hi, 1);
  const svg::Axis bad = svg::Axis::fit(std::nan(""), 3, 5);
  EXPECT_GE(bad.ticks().size(), 2u);
  EXPECT_EQ(svg::Axis::fit(5, 2, 5).lo, 2);  // swapped bounds
}

TEST(SvgFrame, EqualScaleGivesAMetreTheSameLengthOnBothAxes) {
  const svg::Frame f =
      svg::Frame::equal_scale(svg::Axis::fit(-2, 12, 8), svg::Axis::fit(-3, 3, 8), 640, 440);
  EXPECT_NEAR(f.px(1) - f.px(0), f.py(0) - f.py(1), 1e-9);
  EXPECT_LE(f.px(f.x().hi), 640 + 58 + 1);
  EXPECT_NEAR(f.py(f.y().hi), 10, 1e-9);  // the top margin, y up
}

// ---- the failed assertions' signals (the signals fixture) ----

// The <svg> of the signal plot of assertion `name` ("" when absent).
std::string signal_plot(const std::string& html, const std::string& name) {
  const auto at = html.find("<div class=\"failed-assertion\" data-assertion=\"" + name + "\"");
  if (at == std::string::npos) return "";
  const auto end = html.find("</div>", at);
  const std::string div = html.substr(at, end - at);
  const auto svg = div.find("<svg class=\"plot signal\"");
  return svg == std::string::npos ? "" : div.substr(svg);
}

TEST(ReportHtmlSignals, PlotsEachFailedAssertionsSignalWithThresholdWindowAndDecidingSample) {
  const std::string html = load("signals").to_html();
  EXPECT_EQ(count(html, "<svg class=\"plot signal\""), 8u);
  for (const char* name : {"reached_goal", "stay_in_yard", "scan_rate", "scan_latency",
                           "drive_in_time", "stack_cpu", "clear_of_crate", "slow_enough"}) {
    const std::string svg = signal_plot(html, name);
    ASSERT_FALSE(svg.empty()) << name;
    EXPECT_EQ(count(svg, "<path class=\"series\""), 1u) << name;
    EXPECT_GE(count(svg, "<line class=\"threshold\""), 1u) << name;
    EXPECT_EQ(count(svg, "<rect class=\"window\""), 1u) << name;
    EXPECT_EQ(count(svg, "<circle class=\"decision\""), 1u) << name;
    EXPECT_NE(svg.find("<g class=\"ticks y\"><line"), std::string::npos) << name;
  }
  // The deciding samples: reach_pose 2 m from the goal at its 10 s deadline (the pose at sim 12 s:
  // the timeline started at sim 2 s); the geofence 0.2 m outside at 6.5 s; within_time 3 s after
  // the start at 4 s; the stack's CPU (two processes summed, the engine not) 70 % at 9 s.
  EXPECT_NE(signal_plot(html, "reached_goal").find("the deciding sample: 2 at 10 s"),
            std::string::npos);
  EXPECT_NE(signal_plot(html, "stay_in_yard").find("the deciding sample: -0.2 at 6.5 s"),
            std::string::npos);
  EXPECT_NE(signal_plot(html, "drive_in_time").find("the deciding sample: 3 at 4 s"),
            std::string::npos);
  EXPECT_NE(signal_plot(html, "stack_cpu").find("the deciding sample: 70 at 9 s"),
            std::string::npos);
  EXPECT_NE(signal_plot(html, "scan_rate").find("the deciding sample: 4 at 6 s"),
            std::string::npos);
  // Thresholds by their labels; a no_collision has no signal over time and says so; passed
  // assertions get none.
  EXPECT_NE(signal_plot(html, "reached_goal").find(">0.5 m<"), std::string::npos);
  EXPECT_NE(signal_plot(html, "scan_rate").find(">min 10 Hz<"), std::string::npos);
  EXPECT_NE(signal_plot(html, "scan_latency").find(">max 100 ms<"), std::string::npos);
  EXPECT_NE(signal_plot(html, "stack_cpu").find(">max 50 %<"), std::string::npos);
  // min_distance against the crate's own poses; topic_value's field with its condition's bound.
  EXPECT_NE(signal_plot(html, "clear_of_crate").find(">1 m<"), std::string::npos);
  EXPECT_NE(signal_plot(html, "slow_enough").find("the deciding sample: 0.9 at 6 s"),
            std::string::npos);
  EXPECT_NE(signal_plot(html, "slow_enough").find(">0.5<"), std::string::npos);
  EXPECT_NE(html.find("a no_collision assertion has no signal over time to plot"),
            std::string::npos);
  EXPECT_EQ(html.find("data-assertion=\"fine\""), std::string::npos);
  // Failed assertions first: before the timeline, the paths and the tables.
  EXPECT_LT(html.find("class=\"failed-assertion\""), html.find("class=\"plot verdicts\""));
  EXPECT_LT(html.find("class=\"plot verdicts\""), html.find("class=\"plot paths\""));
  EXPECT_LT(html.find("class=\"plot paths\""), html.find("<table"));
}

TEST(ReportHtmlSignals, ThinsALongSignalTo600Points) {
  const auto d = fixture_copy("signals");
  std::string lines;
  for (int i = 0; i <= 20000; ++i) {
    lines += "{\"kind\":\"pose\",\"model\":\"ugv1\",\"sim\":" + std::to_string(2 + i * 0.0005) +
             ",\"x\":" + std::to_string(i * 0.0004) + ",\"y\":0}\n";
  }
  write_file(d / "samples.jsonl", lines);
  const std::string svg = signal_plot(Report::load(d).value().to_html(), "reached_goal");
  const auto at = svg.find("<path class=\"series\" d=\"");
  ASSERT_NE(at, std::string::npos);
  const std::string dpath = svg.substr(at, svg.find("\"/>", at) - at);
  EXPECT_EQ(count(dpath, "M") + count(dpath, " L"), 600u);
}

TEST(ReportHtmlSignals, NoVerdictColourOutsideTheBadge) {
  const std::string html = load("signals").to_html();
  EXPECT_EQ(count(html, "class=\"badge verdict-FAIL\""), 1u);
  EXPECT_EQ(count(html, "verdict-FAIL"), 2u);  // the badge and its rule in the stylesheet
  EXPECT_EQ(html.find("<table class"), std::string::npos);
  EXPECT_EQ(html.find("<body class"), std::string::npos);
  EXPECT_EQ(html.find("style=\"background"), std::string::npos);
}

TEST(ReportHtmlSignals, TheReportsOwnFilesAreNotListedAsMissing) {
  const auto d = fixture_copy("signals");
  ASSERT_TRUE(Report::load(d).value().write_all(d).ok());
  const std::string html = read_file(d / "report.html");
  for (const char* f : {"report.json", "report.md", "junit.xml", "report.html"}) {
    EXPECT_NE(html.find(std::string("<td>") + f + "</td><td>written with this report</td>"),
              std::string::npos)
        << f;
    EXPECT_EQ(html.find(std::string("<td>") + f + "</td><td>missing</td>"), std::string::npos) << f;
  }
}

TEST(ReportHtmlSignals, TimelineHasAWindowBarPerAssertionAndABarPerEntry) {
  const std::string html = load("signals").to_html();
  EXPECT_EQ(count(html, "<rect class=\"window failed\""), 9u);
  EXPECT_EQ(count(html, "<rect class=\"window passed\""), 1u);
  EXPECT_EQ(count(html, "<rect class=\"entry ok\""), 1u);
  EXPECT_EQ(count(html, "<circle class=\"verdict failed\""), 9u);
}

}  // namespace
}  // namespace fieldproof::report
