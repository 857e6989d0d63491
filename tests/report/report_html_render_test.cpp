// report.html rendered by headless Chromium (Debian's chromium, scripts/install-deps.sh): the page
// is laid out by a real browser, offline, and a probe script appended to a copy of it measures
// what was drawn (SVG geometry from getBBox / getTotalLength, computed styles, resource timing)
// into an element that --dump-dom prints. The report itself has no scripts.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <vector>
#include <filesystem>
#include <regex>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "fieldproof/report/report.hpp"
#include "report/chromium_probe.hpp"
#include "report/fixture.hpp"

namespace fieldproof::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::drawn;
using testing::fixture_copy;
using testing::fresh_dir;
using testing::kProbe;
using testing::read_file;
using testing::render;
using testing::render_with_probe;
using testing::write_file;

// report.html of a fixture run, with the probe appended, rendered.
json render_fixture(const std::string& name, std::string* html = nullptr) {
  const fs::path run = fixture_copy(name);
  const Report r = Report::load(run).value();
  EXPECT_TRUE(r.write_all(run).ok());
  const std::string page = read_file(run / "report.html");
  if (html) *html = page;
  return render_with_probe(page, run);
}

class HtmlRender : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { probe_ = new json(render_fixture("plots", &html_)); }
  static void TearDownTestSuite() {
    delete probe_;
    probe_ = nullptr;
  }
  const json& probe() const { return *probe_; }
  static json* probe_;
  static std::string html_;
};
json* HtmlRender::probe_ = nullptr;
std::string HtmlRender::html_;

TEST_F(HtmlRender, DrawsEachVehiclesGroundTruthPathWithItsPoints) {
  ASSERT_TRUE(probe().is_object());
  const json& paths = probe()["paths"];
  ASSERT_EQ(paths.size(), 2u) << paths.dump();
  for (const auto& p : paths) {
    EXPECT_TRUE(p["vehicle"] == "ugv1" || p["vehicle"] == "ugv2") << p.dump();
    EXPECT_EQ(p["points"], 101) << p.dump();  // every pose of samples.jsonl
    EXPECT_GT(p["length"].get<double>(), 50.0) << p.dump();
    EXPECT_TRUE(drawn(p["box"])) << p.dump();
    EXPECT_TRUE(p["in_view"].get<bool>()) << p.dump();
    EXPECT_TRUE(p["svg"].get<bool>());
    EXPECT_NE(p["stroke"], "none") << "the stroke colour applies";
  }
}

TEST_F(HtmlRender, DrawsTheWorldsObstacles) {
  ASSERT_TRUE(probe().is_object());
  const json& obs = probe()["obstacles"];
  ASSERT_EQ(obs.size(), 2u) << obs.dump();
  EXPECT_EQ(obs[0]["tag"], "rect");    // the crate (a box)
  EXPECT_EQ(obs[1]["tag"], "circle");  // the pillar (a cylinder)
  for (const auto& o : obs) {
    EXPECT_TRUE(drawn(o["box"])) << o.dump();
    EXPECT_EQ(o["fill"], "rgb(158, 158, 158)") << "the stylesheet's obstacle grey applies";
  }
}

TEST_F(HtmlRender, DrawsTheGoalsOfTheTimeline) {
  ASSERT_TRUE(probe().is_object());
  const json& goals = probe()["goals"];
  ASSERT_EQ(goals.size(), 2u) << goals.dump();
  for (const auto& g : goals) {
    EXPECT_TRUE(drawn(g["box"])) << g.dump();
    EXPECT_TRUE(g["in_view"].get<bool>()) << g.dump();
  }
}

TEST_F(HtmlRender, DrawsTheGeofenceAssertionsRegionsBoxCircleAndPolygon) {
  ASSERT_TRUE(probe().is_object());
  const json& fences = probe()["geofences"];
  ASSERT_EQ(fences.size(), 3u) << fences.dump();
  std::map<std::string, json> by_name;
  for (const auto& f : fences) by_name[f["name"].get<std::string>()] = f;
  ASSERT_TRUE(by_name.contains("stays_in_yard") && by_name.contains("stays_off_pad") &&
              by_name.contains("stays_in_lane"))
      << fences.dump();
  EXPECT_EQ(by_name["stays_in_yard"]["tag"], "polygon");  // a box, from evidence.region
  EXPECT_EQ(by_name["stays_off_pad"]["tag"], "circle");   // from resolved.region
  EXPECT_TRUE(by_name["stays_off_pad"]["outside"].get<bool>());
  EXPECT_EQ(by_name["stays_in_lane"]["tag"], "polygon");  // from region
  for (const auto& f : fences) {
    EXPECT_TRUE(drawn(f["box"])) << f.dump();
    EXPECT_TRUE(f["in_view"].get<bool>()) << f.dump();
    EXPECT_NE(f["dash"], "none") << "geofences are dashed";
  }
  // The yard box spans 11 m x 7 m; the 0.8 m pad circle is much smaller.
  EXPECT_GT(by_name["stays_in_yard"]["box"]["w"].get<double>(),
            5 * by_name["stays_off_pad"]["box"]["w"].get<double>());
}

TEST_F(HtmlRender, DrawsTheRtfAndDriftSeries) {
  ASSERT_TRUE(probe().is_object());
  for (const char* plot : {"rtf", "drift"}) {
    const json& s = probe()[plot];
    ASSERT_EQ(s.size(), 1u) << plot << ": " << s.dump();
    EXPECT_EQ(s[0]["points"], 11) << plot;  // every line of clock.jsonl
    EXPECT_GT(s[0]["length"].get<double>(), 100.0) << plot;
    EXPECT_TRUE(s[0]["in_view"].get<bool>()) << plot;
  }
}

TEST_F(HtmlRender, DrawsTheTimelineEntriesAndTheVerdicts) {
  ASSERT_TRUE(probe().is_object());
  const json& entries = probe()["entries"];
  ASSERT_EQ(entries.size(), 2u) << entries.dump();
  EXPECT_TRUE(entries[0]["ok"].get<bool>());
  EXPECT_FALSE(entries[1]["ok"].get<bool>());  // drive2 aborted
  EXPECT_NE(entries[0]["fill"], entries[1]["fill"]);
  for (const auto& e : entries) EXPECT_TRUE(drawn(e["box"])) << e.dump();
  const json& verdicts = probe()["verdicts"];
  ASSERT_EQ(verdicts.size(), 4u) << verdicts.dump();
  int failed = 0;
  for (const auto& v : verdicts) {
    EXPECT_TRUE(drawn(v["box"])) << v.dump();
    EXPECT_TRUE(v["in_view"].get<bool>()) << v.dump();
    failed += v["status"] == "failed";
  }
  EXPECT_EQ(failed, 1);
}

TEST_F(HtmlRender, RendersTheReportTables) {
  ASSERT_TRUE(probe().is_object());
  EXPECT_GE(probe()["tables"].get<int>(), 5);  // facts, assertions, excerpt, KPIs, timeline, ...
}

// Issue 18 item 15 (part): the verdict badge is the only element in a verdict colour (the page
// was wrapped in it: a FAIL page red from top to bottom), the plots come before the tables, and a
// line says how to open the recording in Foxglove.
TEST_F(HtmlRender, OnlyTheVerdictBadgeIsInColourAndThePlotsComeFirst) {
  ASSERT_TRUE(probe().is_object());
  ASSERT_EQ(probe()["coloured"].size(), 1u) << probe()["coloured"].dump();
  EXPECT_EQ(probe()["coloured"][0].get<std::string>().rfind("badge verdict-", 0), 0u);
  EXPECT_TRUE(probe()["plots_before_tables"].get<bool>());
}

// The fixture has no recording: the page does not point at a file that is not there (the real
// run's page does: ReportOfARealRun.HtmlSaysHowToOpenTheRecordingInFoxglove).
TEST_F(HtmlRender, NoFoxgloveLineWithoutARecording) {
  ASSERT_TRUE(probe().is_object());
  EXPECT_TRUE(probe()["foxglove"].empty()) << probe()["foxglove"].dump();
}

TEST_F(HtmlRender, WorksOfflineWithoutFetchingAnything) {
  ASSERT_TRUE(probe().is_object());
  // Rendered with every host unresolvable, and the browser asked for no resource at all.
  EXPECT_TRUE(probe()["resources"].empty()) << probe()["resources"].dump();
  EXPECT_EQ(probe()["external"], 0);
  EXPECT_EQ(probe()["scripts"], 1) << "only the probe: the report has no scripts";
  // No URL in the page but the SVG namespace name (an identifier, never fetched).
  std::string rest = html_;
  for (const std::string ns : {"http://www.w3.org/2000/svg"}) {
    for (size_t p; (p = rest.find(ns)) != std::string::npos;) rest.erase(p, ns.size());
  }
  EXPECT_EQ(rest.find("http:"), std::string::npos);
  EXPECT_EQ(rest.find("https:"), std::string::npos);
  // url() only for the plots' own clip paths, fragments of the page itself (url(#clip-...)).
  for (size_t p = 0; (p = rest.find("url(", p)) != std::string::npos; p += 4) {
    EXPECT_EQ(rest.compare(p, 10, "url(#clip-"), 0) << rest.substr(p, 40);
  }
  EXPECT_EQ(rest.find("@import"), std::string::npos);
}

// Issue 18 item 15: every plot has axes with round ticks (labels on both axes), a grid and axis
// titles with units; the timeline's x axis has them too.
TEST_F(HtmlRender, EveryPlotHasTicksOnBothAxesAGridAndTitlesWithUnits) {
  ASSERT_TRUE(probe().is_object());
  std::map<std::string, json> by_plot;
  for (const auto& a : probe()["axes"]) by_plot[a["plot"].get<std::string>()] = a;
  for (const char* plot : {"paths", "rtf", "drift"}) {
    ASSERT_TRUE(by_plot.count(plot)) << plot << ": " << probe()["axes"].dump();
    const json& a = by_plot[plot];
    EXPECT_GE(a["x"].size(), 3u) << plot << ": " << a.dump();
    EXPECT_GE(a["y"].size(), 3u) << plot << ": " << a.dump();
    EXPECT_GE(a["grid"].get<size_t>(), a["x"].size() + a["y"].size()) << plot;
    ASSERT_EQ(a["titles"].size(), 2u) << plot;
    for (const auto& v : a["x"]) EXPECT_NO_THROW((void)std::stod(v.get<std::string>())) << v;
  }
  EXPECT_EQ(by_plot["paths"]["titles"], json({"x (m)", "y (m)"}));
  EXPECT_EQ(by_plot["rtf"]["titles"][0], "simulated time (s)");
  EXPECT_EQ(by_plot["drift"]["titles"][1], "drift (s)");
  ASSERT_TRUE(by_plot.count("verdicts"));
  EXPECT_GE(by_plot["verdicts"]["x"].size(), 3u);
  EXPECT_EQ(by_plot["verdicts"]["titles"], json({"timeline time (s)"}));
}

// The timeline as a bar chart: each assertion's window a bar in its verdict's colour.
TEST_F(HtmlRender, DrawsEachAssertionsWindowAsABarInItsVerdictsColour) {
  ASSERT_TRUE(probe().is_object());
  const json& w = probe()["windows"];
  ASSERT_EQ(w.size(), 4u) << w.dump();
  std::map<std::string, std::string> fill;
  for (const auto& b : w) {
    EXPECT_TRUE(drawn(b["box"])) << b.dump();
    fill[b["status"].get<std::string>()] = b["fill"].get<std::string>();
  }
  ASSERT_TRUE(fill.count("passed") && fill.count("failed")) << w.dump();
  EXPECT_NE(fill["passed"], fill["failed"]);
}

// Issue 18 item 15: for each failed assertion, the signal it watched with its threshold, window
// and the deciding sample, laid out and visible (the signals fixture: eight failed assertions with
// a signal, one no_collision without, one passed).
class HtmlRenderSignals : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { probe_ = new json(render_fixture("signals")); }
  static void TearDownTestSuite() {
    delete probe_;
    probe_ = nullptr;
  }
  const json& probe() const { return *probe_; }
  static json* probe_;
};
json* HtmlRenderSignals::probe_ = nullptr;

TEST_F(HtmlRenderSignals, DrawsEachFailedAssertionsSignalThresholdWindowAndDecidingSample) {
  ASSERT_TRUE(probe().is_object());
  const json& sig = probe()["signals"];
  ASSERT_EQ(sig.size(), 8u) << sig.dump();
  std::vector<std::string> names;
  for (const auto& s : sig) {
    names.push_back(s["assertion"].get<std::string>());
    EXPECT_TRUE(s["visible"].get<bool>()) << s.dump();
    EXPECT_GT(s["w"].get<double>(), 300) << s.dump();
    EXPECT_GT(s["h"].get<double>(), 100) << s.dump();
    ASSERT_EQ(s["series"].size(), 1u) << s.dump();
    EXPECT_GT(s["series"][0]["length"].get<double>(), 100.0) << s.dump();
    ASSERT_GE(s["thresholds"].size(), 1u) << s.dump();
    for (const auto& t : s["thresholds"]) {
      EXPECT_GT(t["box"]["w"].get<double>(), 300) << s.dump();
      EXPECT_NE(t["dash"], "none") << s.dump();
    }
    ASSERT_EQ(s["window"].size(), 1u) << s.dump();
    EXPECT_TRUE(drawn(s["window"][0]["box"])) << s.dump();
    ASSERT_EQ(s["decision"].size(), 1u) << s.dump();
    EXPECT_TRUE(drawn(s["decision"][0]["box"])) << s.dump();
    EXPECT_TRUE(s["decision"][0]["in_view"].get<bool>()) << s.dump();
  }
  EXPECT_EQ(names, (std::vector<std::string>{"reached_goal", "stay_in_yard", "scan_rate",
                                             "scan_latency", "drive_in_time", "stack_cpu",
                                             "clear_of_crate", "slow_enough"}));
}

TEST_F(HtmlRenderSignals, FitsThePathPlotToThePathsGoalsAndGeofencesNotTheWorld) {
  ASSERT_TRUE(probe().is_object());
  for (const auto& a : probe()["axes"]) {
    if (a["plot"] != "paths") continue;
    // Path 0..8 m, goal at 10 m, geofence -1..5 m; the wall at x = -30 m is left out of the fit.
    ASSERT_GE(a["x"].size(), 3u) << a.dump();
    EXPECT_GE(std::stod(a["x"].front().get<std::string>()), -5.0) << a.dump();
    EXPECT_LE(std::stod(a["x"].back().get<std::string>()), 15.0) << a.dump();
    return;
  }
  ADD_FAILURE() << "no paths plot: " << probe()["axes"].dump();
}

// The probe is a real check: a page whose plots are not SVG draws nothing it can measure.
TEST(HtmlRenderProbe, FindsNothingInAPageWithoutPlots) {
  const fs::path d = fresh_dir("probe");
  write_file(d / "probe.html",
             std::string("<!DOCTYPE html><html><body><p>no plots</p>") + kProbe + "</body></html>");
  const json probe = render(d / "probe.html");
  ASSERT_TRUE(probe.is_object());
  EXPECT_TRUE(probe["paths"].empty());
  EXPECT_TRUE(probe["rtf"].empty());
  EXPECT_TRUE(probe["verdicts"].empty());
}

}  // namespace
}  // namespace fieldproof::report
