// Headless Chromium for the report tests: report.html laid out by a real browser, offline, with a
// probe script appended to a copy of the page that measures what was drawn (SVG geometry from
// getBBox / getTotalLength, computed styles, resource timing) into an element that --dump-dom
// prints. The report itself has no scripts.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "report/fixture.hpp"

namespace fieldproof::report::testing {

// Measures every plot of the page. Geometry comes from layout (getBBox needs a rendered SVG, a
// path whose `d` does not parse has length 0), so this fails if the browser drew nothing.
inline const char* const kProbe = R"JS(
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
  out.windows = all('svg.verdicts rect.window').map((r) => ({status: r.classList[1], box: box(r),
    fill: getComputedStyle(r).fill}));
  // Every plot's axes: tick labels, grid lines, axis titles.
  const texts = (s, sel) => Array.from(s.querySelectorAll(sel)).map((t) => t.textContent);
  out.axes = all('svg.plot').map((s) => ({plot: s.classList[1], x: texts(s, 'g.ticks.x text'),
    y: texts(s, 'g.ticks.y text'), grid: s.querySelectorAll('g.grid line').length,
    titles: texts(s, 'text.axis-title')}));
  // The failed assertions' signal plots: laid out, visible, each part drawn.
  const parts = (s, sel, f) => Array.from(s.querySelectorAll(sel)).map(f);
  out.signals = all('svg.signal').map((s) => {
    const r = s.getBoundingClientRect(), cs = getComputedStyle(s);
    const holder = s.closest('.failed-assertion');
    return {assertion: holder ? holder.dataset.assertion : null, w: r.width, h: r.height,
      visible: cs.visibility === 'visible' && cs.display !== 'none' && s.checkVisibility(),
      series: parts(s, 'path.series', (p) => ({length: p.getTotalLength(), box: box(p)})),
      thresholds: parts(s, 'line.threshold', (l) => ({box: box(l),
        dash: getComputedStyle(l).strokeDasharray})),
      window: parts(s, 'rect.window', (w) => ({box: box(w), fill: getComputedStyle(w).fill})),
      decision: parts(s, 'circle.decision', (c) => ({box: box(c), in_view: inView(c)}))};
  });
  out.tables = all('table').length;
  // Elements drawn in a verdict colour (text or background): the badge alone.
  const verdictColours = ['rgb(26, 127, 55)', 'rgb(198, 40, 40)', 'rgb(178, 106, 0)'];
  out.coloured = all('body *').filter((e) => e.id !== 'fp-probe' && (
    verdictColours.includes(getComputedStyle(e).color) ||
    verdictColours.includes(getComputedStyle(e).backgroundColor))).map((e) => e.className);
  const plots = all('h2').find((h) => h.textContent === 'Plots');
  const table = document.querySelector('table');
  out.plots_before_tables = !!(plots && table &&
    (plots.compareDocumentPosition(table) & Node.DOCUMENT_POSITION_FOLLOWING));
  out.foxglove = all('p.foxglove').map((p) => p.textContent);
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

inline std::string chromium_path() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (::access(p, X_OK) == 0) return p;
  }
  return "";
}

inline std::string base64_decode(const std::string& in) {
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
inline nlohmann::json render(const std::filesystem::path& page, std::string* dom_out = nullptr) {
  const std::string chromium = chromium_path();
  if (chromium.empty()) {
    ADD_FAILURE() << "no chromium in /usr/bin (scripts/install-deps.sh installs Debian's chromium)";
    return nullptr;
  }
  const std::filesystem::path profile = page.parent_path() / "chromium-profile";
  const std::filesystem::path dom = page.parent_path() / "dom.html";
  const std::filesystem::path log = page.parent_path() / "chromium.log";
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
  return nlohmann::json::parse(base64_decode(m[1].str()), nullptr, false);
}

// `html` with the probe appended, written to dir/probe.html and rendered.
inline nlohmann::json render_with_probe(const std::string& html, const std::filesystem::path& dir) {
  std::string page = html;
  const auto end = page.rfind("</body>");
  EXPECT_NE(end, std::string::npos);
  if (end != std::string::npos) page.insert(end, kProbe);
  write_file(dir / "probe.html", page);
  return render(dir / "probe.html");
}

inline bool drawn(const nlohmann::json& box) {
  return box.is_object() && box.value("w", 0.0) > 0 && box.value("h", 0.0) > 0;
}

}  // namespace fieldproof::report::testing
