// report.html's timeline: a horizontal bar chart over timeline time, one row per timeline entry
// (its run, coloured by its status) and per assertion (its window, coloured by its verdict, with
// the verdict's moment marked).
#include <algorithm>
#include <cmath>
#include <string>

#include "report/internal.hpp"
#include "report/svg.hpp"

namespace fieldproof::report {
namespace {

// The status of a timeline entry as a bar class: ok, failed, skipped or running.
std::string entry_class(const std::string& status) {
  if (entry_ok(status)) return "ok";
  if (status == "skipped" || status == "pending" || status == kDash) return "skipped";
  if (status == "running") return "running";
  return "bad";
}

std::string verdict_class(const std::string& status) {
  if (status == "passed" || status == "failed" || status == "skipped") return status;
  return "pending";
}

// The end of the chart: the latest time anything happened, and the run's simulated length.
double timeline_end(const json& m) {
  double t1 = 1;
  for (const auto& e : m["timeline"]) {
    for (const char* k : {"at_s", "started_s", "ended_s"}) {
      if (auto v = get_num(e, k); v && std::isfinite(*v)) t1 = std::max(t1, *v);
    }
  }
  for (const auto& a : m["assertions"]) {
    if (auto v = get_num(a, "t_s"); v && std::isfinite(*v)) t1 = std::max(t1, *v);
  }
  if (auto v = get_num(m["durations"], "sim_s"); v && std::isfinite(*v)) t1 = std::max(t1, *v);
  return t1;
}

struct Row {
  std::string label;
  std::string cls;  // "entry ok", "window failed", ...
  double from = 0;  // bar, timeline seconds
  double to = 0;
  bool bar = false;
  double mark = NAN;   // the verdict's moment (assertions)
  std::string status;  // shown right of the chart
  std::string tooltip;
};

std::vector<Row> rows_of(const json& m, double t1) {
  std::vector<Row> rows;
  for (const auto& e : m["timeline"]) {
    Row r;
    r.label = show(field(e, "label"));
    r.status = show(field(e, "status"));
    r.cls = "entry " + entry_class(r.status);
    const auto a = get_num(e, "started_s");
    if (a) {
      r.bar = true;
      r.from = *a;
      r.to = get_num(e, "ended_s").value_or(t1);
    }
    r.tooltip = r.label + " (" + show(field(e, "action")) + "): " + r.status;
    if (auto d = get_str(e, "detail"); d && !d->empty()) r.tooltip += ": " + *d;
    rows.push_back(std::move(r));
  }
  for (const auto& a : m["assertions"]) {
    Row r;
    r.label = show(field(a, "name"));
    r.status = get_str(a, "status").value_or("pending");
    r.cls = "window " + verdict_class(r.status);
    const json* w = field(a, "window");
    const double from = w ? get_num(*w, "after_s").value_or(0.0) : 0.0;
    const auto within = w ? get_num(*w, "within_s") : std::nullopt;
    const auto t = get_num(a, "t_s");
    r.bar = true;
    r.from = from;
    // Its window when it has an end, else up to the verdict (or the end of the run).
    r.to = within ? *within : t ? std::max(*t, from) : t1;
    if (t) r.mark = *t;
    r.tooltip = r.label + " (" + show(field(a, "type")) + ") " + r.status +
                (t ? " at " + fmt_num(*t) + " s" : "") + ": " + get_str(a, "reason").value_or("");
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace

std::string timeline_svg(const json& m) {
  const double t1 = timeline_end(m);
  const std::vector<Row> rows = rows_of(m, t1);
  if (rows.empty()) return "<p class=\"none\">No timeline entries or assertions.</p>\n";
  const double row_h = 22, left = 170, right = 80, top = 6, bottom = 40;
  const double H = row_h * static_cast<double>(rows.size()) + top + bottom;
  svg::Frame f(svg::Axis::fit(0, t1, 10), svg::Axis{0, 1, 1}, 760, H, left, right, top, bottom);
  std::string s = f.open("verdicts", "timeline and verdicts", "clip-timeline");
  s += f.axes("timeline time (s)", "", false);
  double y = top;
  const auto X = [&](double t) { return svg::num(f.px(std::clamp(t, f.x().lo, f.x().hi))); };
  for (const Row& r : rows) {
    s += "<text class=\"row-label\" x=\"" + svg::num(left - 6) + "\" y=\"" + svg::num(y + 15) +
         "\" text-anchor=\"end\">" + html_escape(r.label) + "</text>\n";
    if (r.bar) {
      const double x0 = f.px(std::clamp(r.from, f.x().lo, f.x().hi));
      const double x1 = f.px(std::clamp(r.to, f.x().lo, f.x().hi));
      s += "<rect class=\"" + r.cls + "\" x=\"" + svg::num(x0) + "\" y=\"" + svg::num(y + 4) +
           "\" width=\"" + svg::num(std::max(2.0, x1 - x0)) + "\" height=\"14\"><title>" +
           html_escape(r.tooltip) + "</title></rect>\n";
    }
    if (std::isfinite(r.mark)) {
      s += "<circle class=\"verdict " + verdict_class(r.status) + "\" cx=\"" + X(r.mark) +
           "\" cy=\"" + svg::num(y + 11) + "\" r=\"6\"><title>" + html_escape(r.tooltip) +
           "</title></circle>\n";
    }
    s += "<text class=\"row-status " + html_escape(verdict_class(r.status)) + "\" x=\"" +
         svg::num(f.width() - right + 6) + "\" y=\"" + svg::num(y + 15) + "\">" +
         html_escape(r.status) + "</text>\n";
    y += row_h;
  }
  s += svg::Frame::close();
  s += "<p class=\"legend\">Bars: a timeline entry from its start to its end (green ok, red failed "
       "or cancelled, grey skipped, blue running); an assertion's window (after_s to within_s, or "
       "to its verdict) in its verdict's colour, the dot where the verdict was given.</p>\n";
  return s;
}

}  // namespace fieldproof::report
