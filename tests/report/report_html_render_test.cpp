// report.html rendered by headless Chromium (Debian's chromium, scripts/install-deps.sh): the page
// is laid out by a real browser, offline, and a probe script appended to a copy of it measures
// what was drawn (SVG geometry from getBBox / getTotalLength, computed styles, resource timing)
// into an element that --dump-dom prints. The report itself has no scripts.
#include <gtest/gtest.h>

#include <cstdio>
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
  const Report r = Report::load(run);
  r.write_all(run);
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
