// The reports of a real run: `fieldproof run` of the failing example (unpaced) into a fresh runs
// directory, then report.md, junit.xml and report.json checked against its run.json as the engine
// writes it now (every field the report shows is filled from the run, not a dash), and its
// report.html laid out by headless Chromium (report_html_render_test.cpp has the probe).
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "fieldproof/report/report.hpp"
#include "fieldproof/report/run_record.hpp"
#include "report/chromium_probe.hpp"
#include "report/fixture.hpp"

namespace fieldproof::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::count;
using testing::fresh_dir;
using testing::read_file;

struct RealRun {
  int exit_code = -1;
  std::string out;
  fs::path dir;
  json run;
  std::string md, junit, html;
  json report;
};

RealRun* g_run = nullptr;

class ReportOfARealRun : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    g_run = new RealRun;
    const fs::path runs = fresh_dir("real_run");
    const std::string cmd = std::string(FIELDPROOF_EXE) +
                            " run examples/scenarios/ugv_nav_fails_on_time.yaml --max-rtf 0"
                            " --runs-dir '" +
                            runs.string() + "' --run-id real 2>&1";
    FILE* p = ::popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::array<char, 4096> buf{};
    size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) g_run->out.append(buf.data(), n);
    const int st = ::pclose(p);
    g_run->exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    g_run->dir = runs / "real";
    g_run->run = json::parse(read_file(g_run->dir / "run.json"), nullptr, false);
    g_run->md = read_file(g_run->dir / "report.md");
    g_run->junit = read_file(g_run->dir / "junit.xml");
    g_run->html = read_file(g_run->dir / "report.html");
    g_run->report = json::parse(read_file(g_run->dir / "report.json"), nullptr, false);
  }
  static void TearDownTestSuite() {
    delete g_run;
    g_run = nullptr;
  }
  void SetUp() override {
    ASSERT_NE(g_run, nullptr);
    ASSERT_EQ(g_run->exit_code, 1) << g_run->out;  // the example fails arrived_in_time
    ASSERT_TRUE(g_run->run.is_object()) << g_run->out;
  }
  const json& run() const { return g_run->run; }
  const std::string& md() const { return g_run->md; }
  bool md_has(const std::string& s) const { return md().find(s) != std::string::npos; }
  // The Markdown row whose first cell is `head` (empty if none).
  std::string md_row(const std::string& head) const {
    const auto at = md().find("| " + head + " |");
    if (at == std::string::npos) return "";
    return md().substr(at, md().find('\n', at) - at);
  }
};

TEST_F(ReportOfARealRun, HeadsWithTheVerdictAndExitCode) {
  EXPECT_TRUE(md_has("**Verdict:** FAIL (exit code 1, status failed)")) << md();
  EXPECT_TRUE(md_has("**Reason:** " + run()["reason"].get<std::string>())) << md();
}

TEST_F(ReportOfARealRun, NamesTheScenarioWorldAndVehicles) {
  const std::string scenario = md_row("Scenario");
  EXPECT_NE(scenario.find(run()["scenario"]["name"].get<std::string>()), std::string::npos);
  EXPECT_NE(scenario.find("digest sha256:"), std::string::npos) << scenario;
  EXPECT_NE(md_row("World").find(run()["world"]["name"].get<std::string>()), std::string::npos);
  for (const auto& v : run()["vehicles"]) {
    EXPECT_NE(md_row("Vehicles").find(v["name"].get<std::string>() + " (spawn "), std::string::npos)
        << md_row("Vehicles");
  }
}

TEST_F(ReportOfARealRun, StartAndEndAreUtcTimestampsInOrder) {
  static const std::regex kIso(R"(\| (Start|End) \| (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) \|)");
  std::smatch start, end;
  const std::string s = md_row("Start"), e = md_row("End");
  ASSERT_TRUE(std::regex_search(s, start, kIso)) << s;
  ASSERT_TRUE(std::regex_search(e, end, kIso)) << e;
  EXPECT_LE(start[2].str(), end[2].str());
  EXPECT_EQ(start[2].str(), run()["started_utc"]);
  EXPECT_EQ(end[2].str(), run()["ended_utc"]);
}

TEST_F(ReportOfARealRun, GivesTheThreeDurations) {
  static const std::regex kDurations(
      R"(\| Durations \| wall [0-9.]+ s · timeline [0-9.]+ s · simulated [0-9.]+ s \|)");
  EXPECT_TRUE(std::regex_search(md_row("Durations"), kDurations)) << md_row("Durations");
}

TEST_F(ReportOfARealRun, GivesTheClockLine) {
  static const std::regex kClock(
      R"(\*\*Clock:\*\* mode \w+ · target RTF [0-9.]+ · measured RTF [0-9.]+)");
  EXPECT_TRUE(std::regex_search(md(), kClock)) << md();
}

TEST_F(ReportOfARealRun, ListsEveryAssertionWithItsReason) {
  ASSERT_FALSE(run()["assertions"].empty());
  for (const auto& a : run()["assertions"]) {
    const std::string row = md_row(a["name"].get<std::string>());
    EXPECT_NE(row.find(" | " + a["status"].get<std::string>() + " | "), std::string::npos) << row;
    EXPECT_NE(row.find(a["reason"].get<std::string>()), std::string::npos) << row;
  }
}

TEST_F(ReportOfARealRun, PrintsTheFailedAssertionsEvidenceUnderTheTable) {
  const auto table = md().find("## Assertions");
  const auto excerpts = md().find("### Excerpts of the failed assertions");
  ASSERT_NE(excerpts, std::string::npos) << md();
  EXPECT_LT(table, excerpts);
  size_t failed = 0;
  for (const auto& a : run()["assertions"]) {
    if (a["status"] != "failed") continue;
    ++failed;
    const std::string heading = "#### " + a["name"].get<std::string>() + "\n";
    const auto at = md().find(heading, excerpts);
    ASSERT_NE(at, std::string::npos) << heading << md();
    const auto next = md().find("\n#", at + heading.size());
    const std::string section = md().substr(at, next - at);
    const json& ev = a["evidence"];
    if (ev.contains("excerpt") && !ev["excerpt"].empty()) {
      EXPECT_EQ(count(section, "\n| "), ev["excerpt"].size() + 1) << section;  // + the header
    } else {
      EXPECT_NE(section.find("No excerpt."), std::string::npos) << section;
    }
    for (const auto& [k, v] : ev.items()) {
      if (k == "excerpt") continue;
      EXPECT_NE(section.find(k + "="), std::string::npos) << k << section;
    }
  }
  EXPECT_GT(failed, 0u);
}

// run.json's kpis when the engine writes them, else every assertion's metrics: each a row of the
// KPI table, a kpi.<name> property of junit.xml and an entry of report.json.
TEST_F(ReportOfARealRun, KpiTableAndJunitPropertiesHoldEveryKpi) {
  std::vector<std::string> names;
  if (run().contains("kpis") && run()["kpis"].is_object()) {
    for (const auto& [name, k] : run()["kpis"].items()) names.push_back(name);
  } else {
    for (const auto& a : run()["assertions"]) {
      for (const auto& [metric, v] : a["metrics"].items()) {
        names.push_back(a["name"].get<std::string>() + "." + metric);
      }
    }
  }
  ASSERT_FALSE(names.empty()) << run().dump(1).substr(0, 3000);
  for (const auto& name : names) {
    EXPECT_FALSE(md_row(name).empty()) << name << "\n" << md();
    EXPECT_NE(g_run->junit.find("<property name=\"kpi." + name + "\""), std::string::npos) << name;
    EXPECT_TRUE(g_run->report["kpis"].contains(name)) << name;
  }
}

TEST_F(ReportOfARealRun, ListsTheTimelineEntries) {
  ASSERT_FALSE(run()["timeline"].empty());
  for (const auto& e : run()["timeline"]) {
    const std::string row = md_row(e["label"].get<std::string>());
    EXPECT_NE(row.find(e["action"].get<std::string>()), std::string::npos) << row;
    EXPECT_NE(row.find(e["status"].get<std::string>()), std::string::npos) << row;
  }
}

TEST_F(ReportOfARealRun, ListsThePhases) {
  const auto at = md().find("## Phases");
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(md().find("No phases recorded.", at), std::string::npos) << md().substr(at, 600);
  EXPECT_NE(md().find("\n- ", at), std::string::npos) << md().substr(at, 600);
}

TEST_F(ReportOfARealRun, ListsTheRecordingFirstAmongTheArtefactsWithItsSize) {
  const auto at = md().find("| File | Size |\n|---|---|\n");
  ASSERT_NE(at, std::string::npos) << md();
  const std::string first = md().substr(at + 26, md().find('\n', at + 26) - at - 26);
  const auto size = fs::file_size(g_run->dir / "recording" / "recording.mcap");
  EXPECT_EQ(first.rfind("| recording/recording.mcap | ", 0), 0u) << first;
  EXPECT_NE(first.find("(" + std::to_string(size) + " bytes)"), std::string::npos) << first;
  EXPECT_TRUE(md_has("| run.json | ")) << md();
}

// The report's own files are written after the listing: not "missing".
TEST_F(ReportOfARealRun, TheReportsOwnFilesAreListedAsWrittenWithIt) {
  for (const char* f : {"report.json", "report.md", "junit.xml", "report.html"}) {
    EXPECT_TRUE(md_has(std::string("| ") + f + " | written with this report |")) << f << "\n"
                                                                                 << md();
  }
  for (const char* f : {"report.json", "report.md", "junit.xml", "report.html"}) {
    EXPECT_FALSE(md_has(std::string("| ") + f + " | missing |")) << f;
  }
}

TEST_F(ReportOfARealRun, HtmlSaysHowToOpenTheRecordingInFoxglove) {
  const json probe = testing::render_with_probe(g_run->html, g_run->dir);
  ASSERT_TRUE(probe.is_object());
  ASSERT_EQ(probe["foxglove"].size(), 1u) << probe.dump().substr(0, 2000);
  const std::string line = probe["foxglove"][0];
  EXPECT_NE(line.find("recording/recording.mcap"), std::string::npos) << line;
  EXPECT_NE(line.find("File > Open local file"), std::string::npos) << line;
  EXPECT_NE(line.find("/fieldproof/scene"), std::string::npos) << line;
  ASSERT_EQ(probe["coloured"].size(), 1u) << probe["coloured"].dump();  // the badge alone
  EXPECT_TRUE(probe["plots_before_tables"].get<bool>());
}

TEST_F(ReportOfARealRun, JunitCountsMatchTheRun) {
  const size_t cases = run()["assertions"].size() + run()["timeline"].size() + 1;
  EXPECT_NE(g_run->junit.find("tests=\"" + std::to_string(cases) + "\""), std::string::npos)
      << g_run->junit;
  size_t failed = 0;
  for (const auto& a : run()["assertions"]) failed += a["status"] == "failed";
  for (const auto& e : run()["timeline"]) {
    failed += e["status"] != "ok" && e["status"] != "succeeded";
  }
  failed += 1;  // the run case: the run failed
  EXPECT_NE(g_run->junit.find("failures=\"" + std::to_string(failed) + "\""), std::string::npos)
      << g_run->junit;
}

TEST_F(ReportOfARealRun, HtmlDrawsTheVehiclesPathObstaclesAndGoal) {
  EXPECT_EQ(count(g_run->html, "class=\"vehicle-path\""), run()["vehicles"].size());
  EXPECT_EQ(count(g_run->html, "class=\"obstacle\""), run()["world"]["obstacles"].size());
  EXPECT_GE(count(g_run->html, "<g class=\"goal\">"), 1u);
  EXPECT_EQ(count(g_run->html, "class=\"plot rtf\""), 1u);
  EXPECT_EQ(count(g_run->html, "class=\"plot drift\""), 1u);
  EXPECT_EQ(count(g_run->html, "class=\"plot verdicts\""), 1u);
}

// The real run's report.html laid out by headless Chromium, offline: the vehicle's path with its
// points, the world's obstacles, the goal, both clock series and a verdict per assertion drawn.
TEST_F(ReportOfARealRun, HtmlRendersInChromiumWithEveryPlotDrawn) {
  const json probe = testing::render_with_probe(g_run->html, g_run->dir);
  ASSERT_TRUE(probe.is_object());
  ASSERT_EQ(probe["paths"].size(), run()["vehicles"].size()) << probe.dump();
  for (const auto& p : probe["paths"]) {
    EXPECT_GT(p["points"].get<int>(), 10) << p.dump();
    EXPECT_TRUE(testing::drawn(p["box"])) << p.dump();
    EXPECT_TRUE(p["in_view"].get<bool>()) << p.dump();
  }
  EXPECT_EQ(probe["obstacles"].size(), run()["world"]["obstacles"].size());
  for (const auto& o : probe["obstacles"]) EXPECT_TRUE(testing::drawn(o["box"])) << o.dump();
  EXPECT_GE(probe["goals"].size(), 1u);
  for (const char* plot : {"rtf", "drift"}) {
    ASSERT_EQ(probe[plot].size(), 1u) << plot;
    EXPECT_GT(probe[plot][0]["length"].get<double>(), 0.0) << plot;
  }
  EXPECT_EQ(probe["verdicts"].size(), run()["assertions"].size());
  EXPECT_EQ(probe["entries"].size(), run()["timeline"].size());
  EXPECT_TRUE(probe["resources"].empty()) << probe["resources"].dump();
  // The failed arrived_in_time: its signal (seconds since drive_ahead started) with its 1 s
  // threshold, its window and the deciding sample; every plot with ticks on both axes.
  ASSERT_EQ(probe["signals"].size(), 1u) << probe["signals"].dump();
  const json& sig = probe["signals"][0];
  EXPECT_EQ(sig["assertion"], "arrived_in_time");
  EXPECT_TRUE(sig["visible"].get<bool>()) << sig.dump();
  ASSERT_EQ(sig["thresholds"].size(), 1u) << sig.dump();
  ASSERT_EQ(sig["decision"].size(), 1u) << sig.dump();
  EXPECT_TRUE(testing::drawn(sig["decision"][0]["box"])) << sig.dump();
  EXPECT_TRUE(testing::drawn(sig["window"][0]["box"])) << sig.dump();
  for (const auto& a : probe["axes"]) {
    EXPECT_GE(a["x"].size(), 3u) << a.dump();
    if (a["plot"] != "verdicts") {
      EXPECT_GE(a["y"].size(), 3u) << a.dump();
    }
  }
}

// What the signal plots read: each assertion result names its vehicle, its window and what it
// was planned with (the engine's run.json, src/assertions/checker.cpp).
TEST_F(ReportOfARealRun, AssertionResultsCarryVehicleWindowAndResolved) {
  std::map<std::string, json> by_name;
  for (const auto& a : run()["assertions"]) by_name[a["name"].get<std::string>()] = a;
  ASSERT_EQ(by_name.size(), 3u);
  const json& reached = by_name["reached_goal"];
  EXPECT_EQ(reached["vehicle"], "ugv1");
  EXPECT_EQ(reached["window"], json({{"after_s", 0.0}, {"within_s", 60.0}}));
  EXPECT_EQ(reached["resolved"]["tolerance_m"], 0.5);
  EXPECT_EQ(reached["resolved"]["target"]["x"], 10.0);
  const json& in_time = by_name["arrived_in_time"];
  EXPECT_TRUE(in_time["vehicle"].is_null());
  EXPECT_TRUE(in_time["window"]["within_s"].is_null());
  EXPECT_EQ(in_time["resolved"], json({{"action", "drive_ahead"}, {"max_s", 1.0}}));
  EXPECT_EQ(count(g_run->html, "<svg class=\"plot signal\""), 1u);
  EXPECT_NE(g_run->html.find("the deciding sample: 1 at 3 s"), std::string::npos);
}

// run.json is a complete run record: it reads back as a RunRecord with no field missing or
// mistyped, and writing that record again gives the same JSON (nothing the engine wrote is
// outside the type).
TEST_F(ReportOfARealRun, RunJsonIsACompleteRunRecordThatRoundTrips) {
  const Result<RunRecord> r = run_record_from_json(run());
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->status, RunStatus::kFailed);
  EXPECT_EQ(r->exit_code(), g_run->exit_code);
  EXPECT_EQ(to_json(*r), run()) << "fields the type does not hold were written";
  // The atomic write leaves no temporary file behind.
  EXPECT_FALSE(fs::exists(g_run->dir / "run.json.tmp"));
}

// The exported schema (`fieldproof schema --run`) accepts the real run.json, checked by an
// independent validator (ajv, draft 2020-12, tests/js/run_record_check.mjs).
TEST_F(ReportOfARealRun, RunJsonMatchesTheExportedSchema) {
  ASSERT_TRUE(fs::exists(fs::path(FIELDPROOF_JS_DIR) / "node_modules" / "ajv"))
      << "npm ci in tests/js first (scripts/install-deps.sh)";
  const fs::path schema = g_run->dir.parent_path() / "run.schema.json";
  const std::string export_cmd =
      std::string(FIELDPROOF_EXE) + " schema --run > '" + schema.string() + "'";
  ASSERT_EQ(std::system(export_cmd.c_str()), 0);
  const json s = json::parse(read_file(schema), nullptr, false);
  ASSERT_TRUE(s.is_object());
  EXPECT_EQ(s["$schema"], "https://json-schema.org/draft/2020-12/schema");
  const fs::path out = g_run->dir.parent_path() / "run_schema_check.json";
  const std::string cmd = "node '" + std::string(FIELDPROOF_JS_DIR) + "/run_record_check.mjs' '" +
                          schema.string() + "' '" + (g_run->dir / "run.json").string() + "' > '" +
                          out.string() + "'";
  const int st = std::system(cmd.c_str());
  const std::string text = read_file(out);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << text;
  const json j = json::parse(text, nullptr, false);
  ASSERT_TRUE(j.is_object()) << text;
  EXPECT_TRUE(j["files"][(g_run->dir / "run.json").string()]["valid"].get<bool>()) << text;
  // And the validator is not a yes-man: a record without its status is refused.
  json broken = run();
  broken.erase("status");
  const fs::path bad = g_run->dir.parent_path() / "broken_run.json";
  { std::ofstream(bad) << broken.dump(); }
  const std::string bad_cmd = "node '" + std::string(FIELDPROOF_JS_DIR) +
                              "/run_record_check.mjs' '" + schema.string() + "' '" + bad.string() +
                              "' > /dev/null";
  const int bst = std::system(bad_cmd.c_str());
  EXPECT_TRUE(WIFEXITED(bst) && WEXITSTATUS(bst) == 1);
}

// The report of the real run is built from its typed RunRecord: no field the report reads is
// missing from the record, so every format renders with no warning of an incomplete record.
TEST_F(ReportOfARealRun, ReportIsBuiltFromTheTypedRecordWithNoFieldMissing) {
  const Report r = Report::load(g_run->dir).value();
  EXPECT_TRUE(r.is_run_record());
  EXPECT_TRUE(r.is_typed()) << r.record_problem();
  EXPECT_EQ(r.record_problem(), "");
  for (const std::string& w : r.warnings()) ADD_FAILURE() << "warning: " << w;
  for (const Format f : {Format::kMarkdown, Format::kJson, Format::kJunit, Format::kHtml}) {
    EXPECT_FALSE(r.render(f).empty());
  }
  EXPECT_EQ(r.run_id(), run()["run_id"]);
  EXPECT_EQ(r.verdict(), "FAIL");
  EXPECT_EQ(r.exit_code(), g_run->exit_code);
}

// The same run.json with one field renamed (or removed) is no longer a complete record: the report
// still renders, and says which field of which file it lacks, so a test can fail on it rather
// than a dash appearing silently.
TEST_F(ReportOfARealRun, RenamedFieldGivesAWarningNamingTheFileAndTheField) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> renames = {
      {{"engine_version"}, "engine_version: missing"},
      {{"started_utc"}, "started_utc: missing"},
      {{"world", "name"}, "world.name: missing"},
      {{"durations", "sim_s"}, "durations.sim_s: missing"},
      {{"scenario", "name"}, "scenario.name: missing"},
      {{"kpis"}, "kpis: missing"},
  };
  const std::string file = (g_run->dir / "run.json").string();
  for (const auto& [path, expected] : renames) {
    json doc = run();
    json* holder = &doc;
    for (size_t i = 0; i + 1 < path.size(); ++i) holder = &(*holder)[path[i]];
    ASSERT_TRUE(holder->contains(path.back())) << path.back();
    (*holder)[path.back() + "_renamed"] = (*holder)[path.back()];
    holder->erase(path.back());
    const Report r = Report::from_text(doc.dump(), g_run->dir).value();
    EXPECT_TRUE(r.is_run_record());
    EXPECT_FALSE(r.is_typed()) << expected;
    EXPECT_NE(r.record_problem().find(file + ": not a complete run record: "), std::string::npos)
        << r.record_problem();
    EXPECT_NE(r.record_problem().find(expected), std::string::npos) << r.record_problem();
    ASSERT_FALSE(r.warnings().empty()) << expected;
    EXPECT_NE(r.warnings().front().find(expected), std::string::npos) << r.warnings().front();
    EXPECT_FALSE(r.to_markdown().empty());
    if (path.front() == "engine_version") {
      EXPECT_NE(r.to_markdown().find("| Engine | \u2014 |"), std::string::npos) << r.to_markdown();
    }
  }
  // A field of the wrong type is named too.
  json doc = run();
  doc["seed"] = "seven";
  const Report r = Report::from_text(doc.dump(), g_run->dir).value();
  EXPECT_NE(r.record_problem().find("seed: not an integer"), std::string::npos)
      << r.record_problem();
}

// `fieldproof report --strict` renders the real run's complete record, and refuses the same
// record with a field renamed: exit 2, the file and the field on stderr, nothing on stdout.
TEST_F(ReportOfARealRun, StrictReportRefusesAnIncompleteRecordNamingTheField) {
  const auto report = [](const fs::path& dir, std::string* out, std::string* err) {
    const fs::path err_file = dir / "strict_err.txt";
    const std::string cmd = std::string(FIELDPROOF_EXE) + " report '" + dir.string() +
                            "' --strict 2>'" + err_file.string() + "'";
    FILE* p = ::popen(cmd.c_str(), "r");
    if (p == nullptr) return -1;
    std::array<char, 4096> buf{};
    size_t n = 0;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out->append(buf.data(), n);
    const int st = ::pclose(p);
    *err = read_file(err_file);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  };
  const fs::path complete = fresh_dir("strict_complete");
  fs::copy_file(g_run->dir / "run.json", complete / "run.json");
  std::string out, err;
  EXPECT_EQ(report(complete, &out, &err), 0) << err;
  EXPECT_NE(out.find("# fieldproof run real: FAIL"), std::string::npos) << out;

  const fs::path incomplete = fresh_dir("strict_incomplete");
  json doc = run();
  doc["world_renamed"] = doc["world"];
  doc.erase("world");
  { std::ofstream(incomplete / "run.json") << doc.dump(); }
  out.clear();
  EXPECT_EQ(report(incomplete, &out, &err), 2);
  EXPECT_EQ(out, "");
  EXPECT_NE(err.find((incomplete / "run.json").string() + ": not a complete run record: "),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("world: missing"), std::string::npos) << err;
}

// More real runs (a passing patrol, a fleet of vehicles), each run by the engine and reported in
// every format from its typed record with no warning of a missing field.
TEST(ReportOfOtherRealRuns, AreBuiltFromTheTypedRecordWithNoFieldMissing) {
  for (const char* example : {"depot_patrol", "ugv_fleet"}) {
    const std::string name = example;
    const fs::path runs = fresh_dir("real_run_" + name);
    const std::string cmd = std::string(FIELDPROOF_EXE) + " run examples/scenarios/" + name +
                            ".yaml --max-rtf 0 --seed 7 --runs-dir '" + runs.string() +
                            "' --run-id " + name + " > '" + runs.string() + "/out.txt' 2>&1";
    const int st = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << read_file(runs / "out.txt");
    const Report r = Report::load(runs / name).value();
    EXPECT_TRUE(r.is_typed()) << name << ": " << r.record_problem();
    for (const std::string& w : r.warnings()) ADD_FAILURE() << name << ": warning: " << w;
    for (const Format f : {Format::kMarkdown, Format::kJson, Format::kJunit, Format::kHtml}) {
      EXPECT_FALSE(r.render(f).empty()) << name;
    }
    EXPECT_EQ(r.verdict(), "PASS") << name;
  }
}

// Documents that are not run records (a sweep's summary, a comparison, an empty object) are read
// field by field as before, with no warning about a record.
TEST(ReportOfOtherDocuments, AreNotRunRecordsAndGiveNoRecordWarning) {
  for (const char* text : {"{}", R"({"sweep": "s1", "runs": []})", R"({"run_id": 3})"}) {
    const Report r = Report::from_text(text).value();
    EXPECT_FALSE(r.is_run_record()) << text;
    EXPECT_FALSE(r.is_typed()) << text;
    EXPECT_EQ(r.record_problem(), "") << text;
    EXPECT_TRUE(r.warnings().empty()) << text;
  }
}

}  // namespace
}  // namespace fieldproof::report
