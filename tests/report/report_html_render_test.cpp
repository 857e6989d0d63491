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
#include "report/fixture.hpp"

namespace fieldproof::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::fixture_copy;
using testing::fresh_dir;
using testing::read_file;
using testing::write_file;

// Measures every plot of the page. Geometry comes from layout (getBBox needs a rendered SVG, a
// path whose `d` does not parse has length 0), so this fails if the browser drew nothing.
const char* const kProbe = R"JS(
<script>
(function () {
  const box = (e) => { const b = e.getBBox(); return {x: b.x, y: b.y, w: b.width, h: b.height}; };
  const svgOf = (e) => e.ownerSVGElement;
  const inView = (e) => {
    const b = e.getBBox(), s = svgOf(e).viewBox.baseVal;
    return b.x >= s.x - 1 && b.y >= s.y - 1 && b.x + b.width <= s.x + s.width + 1 &&
           b.y + b.height <= s.y + s.height + 1;
  };
  const all = (sel) => Array.from(document.querySelectorAll(sel));
  const out = {};
  out.paths = all('svg.paths path.vehicle-path').map((p) => ({
    vehicle: p.dataset.vehicle, points: (p.getAttribute('d').match(/[ML]/g) || []).length,
    length: p.getTotalLength(), box: box(p), in_view: inView(p),
    stroke: getComputedStyle(p).stroke, svg: p.namespaceURI === 'http://www.w3.org/2000/svg'}));
  out.obstacles = all('svg.paths .obstacle').map((o) => ({tag: o.tagName, box: box(o),
    fill: getComputedStyle(o).fill}));
  out.goals = all('svg.paths g.goal').map((g) => ({box: box(g), in_view: inView(g)}));
  out.geofences = all('svg.paths .geofence').map((g) => ({name: g.dataset.name, tag: g.tagName,
    outside: g.classList.contains('outside'), box: box(g), in_view: inView(g),
    dash: getComputedStyle(g).strokeDasharray}));
  const series = (cls) => all('svg.' + cls + ' path.series').map((p) => ({
    points: (p.getAttribute('d').match(/[ML]/g) || []).length, length: p.getTotalLength(),
    box: box(p), in_view: inView(p)}));
  out.rtf = series('rtf');
  out.drift = series('drift');
  out.entries = all('svg.verdicts rect.entry').map((r) => ({ok: r.classList.contains('ok'),
    box: box(r), fill: getComputedStyle(r).fill}));
  out.verdicts = all('svg.verdicts circle.verdict').map((c) => ({status: c.classList[1],
    box: box(c), in_view: inView(c)}));
  out.tables = all('table').length;
  out.resources = performance.getEntriesByType('resource').map((r) => r.name);
  out.external = all('[src], [href], link, iframe, object, embed, img').length;
  out.scripts = all('script').length;
  const pre = document.createElement('pre');
  pre.id = 'fp-probe';
  pre.textContent = btoa(unescape(encodeURIComponent(JSON.stringify(out))));
  document.body.appendChild(pre);
})();
</script>
)JS";

std::string chromium_path() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (::access(p, X_OK) == 0) return p;
  }
  return "";
}

std::string base64_decode(const std::string& in) {
  static const std::string kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  int val = 0, bits = -8;
  for (char c : in) {
    const auto pos = kAlphabet.find(c);
    if (pos == std::string::npos) continue;
    val = (val << 6) + static_cast<int>(pos);
    bits += 6;
    if (bits >= 0) {
      out.push_back(static_cast<char>((val >> bits) & 0xFF));
      bits -= 8;
    }
  }
  return out;
}

// Chromium, headless and offline (every host name resolves to nothing, no proxy), prints the DOM
// of `page` after load. Returns the probe's JSON (null when the page printed none).
json render(const fs::path& page, std::string* dom_out = nullptr) {
  const std::string chromium = chromium_path();
  if (chromium.empty()) {
    ADD_FAILURE() << "no chromium in /usr/bin (scripts/install-deps.sh installs Debian's chromium)";
    return nullptr;
  }
  const fs::path profile = page.parent_path() / "chromium-profile";
  const fs::path dom = page.parent_path() / "dom.html";
  const fs::path log = page.parent_path() / "chromium.log";
  const std::string cmd = "'" + chromium +
                          "' --headless --no-sandbox --disable-gpu --no-first-run"
                          " --disable-extensions --disable-background-networking --disable-sync"
                          " --disable-component-update --no-proxy-server"
                          " --host-resolver-rules='MAP * ~NOTFOUND' --user-data-dir='" +
                          profile.string() + "' --dump-dom 'file://" + page.string() + "' >'" +
                          dom.string() + "' 2>'" + log.string() + "'";
  const int rc = std::system(cmd.c_str());
  EXPECT_TRUE(WIFEXITED(rc) && WEXITSTATUS(rc) == 0) << "chromium failed (" << rc << "):\n"
                                                     << read_file(log);
  const std::string text = read_file(dom);
  if (dom_out) *dom_out = text;
  std::smatch m;
  static const std::regex kPre(R"(<pre id="fp-probe">([A-Za-z0-9+/=]*)</pre>)");
  if (!std::regex_search(text, m, kPre)) {
    ADD_FAILURE() << "the probe printed nothing; the DOM was:\n" << text.substr(0, 2000);
    return nullptr;
  }
  return json::parse(base64_decode(m[1].str()), nullptr, false);
}

// report.html of a fixture run, with the probe appended, rendered.
json render_fixture(const std::string& name, std::string* html = nullptr) {
  const fs::path run = fixture_copy(name);
  const Report r = Report::load(run);
  r.write_all(run);
  std::string page = read_file(run / "report.html");
  if (html) *html = page;
  const auto end = page.rfind("</body>");
  EXPECT_NE(end, std::string::npos);
  page.insert(end, kProbe);
  write_file(run / "probe.html", page);
  return render(run / "probe.html");
}

bool drawn(const json& box) {
  return box.is_object() && box.value("w", 0.0) > 0 && box.value("h", 0.0) > 0;
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
  EXPECT_EQ(rest.find("url("), std::string::npos);
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
