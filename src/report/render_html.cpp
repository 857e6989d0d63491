// report.html: one self-contained page (inline CSS and SVG, no scripts) with the plots.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "report/internal.hpp"
#include "report/svg.hpp"

namespace fieldproof::report {
namespace {

const char* const kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                "#ff7f0e", "#17becf", "#8c564b", "#e377c2"};

std::optional<Point> point_of(const json& j) {
  if (j.is_array() && j.size() >= 2 && j[0].is_number() && j[1].is_number()) {
    return Point{j[0].get<double>(), j[1].get<double>()};
  }
  auto x = get_num(j, "x");
  auto y = get_num(j, "y");
  if (x && y) return Point{*x, *y};
  return std::nullopt;
}

struct Obstacle {
  bool circle = false;
  Point c;
  double sx = 0, sy = 0, yaw = 0, r = 0;
  std::string name;
};
struct Goal {
  Point p;
  std::string name;
};
struct Fence {
  std::vector<Point> pts;  // a polygon (a box becomes one), or empty for a circle
  bool circle = false;
  Point c;
  double r = 0;
  std::string name;
  std::string mode = "inside";  // inside | outside
};

struct Bounds {
  double x0 = std::numeric_limits<double>::infinity(), y0 = x0;
  double x1 = -x0, y1 = -x0;
  void add(double x, double y) {
    if (!std::isfinite(x) || !std::isfinite(y)) return;
    x0 = std::min(x0, x);
    x1 = std::max(x1, x);
    y0 = std::min(y0, y);
    y1 = std::max(y1, y);
  }
  bool empty() const { return !(x1 >= x0 && y1 >= y0); }
};

std::vector<Obstacle> obstacles(const json& run) {
  std::vector<Obstacle> out;
  const json* list = nullptr;
  if (const json* w = field(run, "world")) list = field(*w, "obstacles");
  if (!list) list = field(run, "obstacles");
  if (!list || !list->is_array()) return out;
  for (const auto& o : *list) {
    auto c = point_of(o);
    if (!c) continue;
    Obstacle ob;
    ob.c = *c;
    ob.name = get_str(o, "name").value_or("");
    ob.yaw = get_num(o, "yaw").value_or(0.0);
    if (auto r = get_num(o, "radius")) {
      ob.circle = true;
      ob.r = std::fabs(*r);
    } else {
      ob.sx = std::fabs(get_num(o, "size_x").value_or(get_num(o, "width").value_or(0.0)));
      ob.sy = std::fabs(get_num(o, "size_y").value_or(get_num(o, "depth").value_or(0.0)));
      if (const json* sz = field(o, "size");
          sz && sz->is_array() && sz->size() >= 2 && (*sz)[0].is_number() && (*sz)[1].is_number()) {
        ob.sx = std::fabs((*sz)[0].get<double>());
        ob.sy = std::fabs((*sz)[1].get<double>());
      }
      if (ob.sx <= 0 || ob.sy <= 0) continue;
    }
    out.push_back(ob);
  }
  return out;
}

std::vector<Goal> goals(const json& run) {
  std::vector<Goal> out;
  if (const json* g = field(run, "goals"); g && g->is_array()) {
    for (const auto& e : *g) {
      if (auto p = point_of(e)) out.push_back({*p, get_str(e, "name").value_or("")});
    }
  }
  if (const json* tl = field(run, "timeline"); tl && tl->is_array()) {
    for (const auto& e : *tl) {
      const json* g = field(e, "goal");
      if (!g) {
        if (const json* p = field(e, "params")) g = field(*p, "goal");
      }
      if (!g) continue;
      if (auto p = point_of(*g)) out.push_back({*p, get_str(e, "label").value_or("")});
    }
  }
  return out;
}

// A region as the scenario spells it: {polygon: [[x, y], ...]}, {circle: {x, y, radius_m}} or
// {box: {x_min, x_max, y_min, y_max}}; a bare list of points is a polygon.
std::optional<Fence> fence_of(const json& region) {
  Fence fe;
  const json* poly = region.is_array() ? &region : first_field(region, {"polygon", "points"});
  if (poly && poly->is_array()) {
    for (const auto& p : *poly) {
      if (auto q = point_of(p)) fe.pts.push_back(*q);
    }
    if (fe.pts.size() < 3) return std::nullopt;
    return fe;
  }
  if (const json* c = field(region, "circle")) {
    auto p = point_of(*c);
    const json* r = first_field(*c, {"radius_m", "radius", "r"});
    if (!p || !r || !r->is_number() || !std::isfinite(r->get<double>())) return std::nullopt;
    fe.circle = true;
    fe.c = *p;
    fe.r = std::fabs(r->get<double>());
    return fe;
  }
  if (const json* b = field(region, "box")) {
    const auto x0 = get_num(*b, "x_min"), x1 = get_num(*b, "x_max");
    const auto y0 = get_num(*b, "y_min"), y1 = get_num(*b, "y_max");
    if (!x0 || !x1 || !y0 || !y1) return std::nullopt;
    fe.pts = {{*x0, *y0}, {*x1, *y0}, {*x1, *y1}, {*x0, *y1}};
    return fe;
  }
  return std::nullopt;
}

// run.json's geofences (a list of named regions), and every geofence assertion's region: the
// first of resolved.region, region, evidence.region and spec.region.
std::vector<Fence> fences(const json& run) {
  std::vector<Fence> out;
  const json* list = field(run, "geofences");
  if (!list) {
    if (const json* w = field(run, "world")) list = field(*w, "geofences");
  }
  if (list && list->is_array()) {
    for (const auto& f : *list) {
      const json* region = field(f, "region");
      auto fe = fence_of(region ? *region : f);
      if (!fe) continue;
      fe->name = get_str(f, "name").value_or("");
      fe->mode = get_str(f, "mode").value_or("inside");
      out.push_back(std::move(*fe));
    }
  }
  if (const json* as = field(run, "assertions"); as && as->is_array()) {
    for (const auto& a : *as) {
      if (get_str(a, "type") != "geofence") continue;
      for (const char* holder : {"resolved", "", "evidence", "spec"}) {
        const json* h = *holder ? field(a, holder) : &a;
        const json* region = h ? field(*h, "region") : nullptr;
        if (!region) continue;
        auto fe = fence_of(*region);
        if (!fe) continue;
        fe->name = get_str(a, "name").value_or("");
        fe->mode = get_str(*h, "mode").value_or(get_str(a, "mode").value_or("inside"));
        out.push_back(std::move(*fe));
        break;
      }
    }
  }
  return out;
}

// The extent the path plot is fitted to: the paths, goals and geofences (obstacles are drawn where
// they fall inside it: a world's boundary walls would shrink the paths to a corner), else the
// obstacles alone.
Bounds path_bounds(const Report::Data& d, const std::vector<Obstacle>& obs,
                   const std::vector<Goal>& gs, const std::vector<Fence>& fs) {
  Bounds b;
  for (const auto& [n, pts] : d.paths) {
    for (const auto& p : pts) b.add(p.x, p.y);
  }
  for (const auto& g : gs) b.add(g.p.x, g.p.y);
  for (const auto& f : fs) {
    for (const auto& p : f.pts) b.add(p.x, p.y);
    if (f.circle) {
      b.add(f.c.x - f.r, f.c.y - f.r);
      b.add(f.c.x + f.r, f.c.y + f.r);
    }
  }
  if (!b.empty()) return b;
  for (const auto& o : obs) {
    const double e = o.circle ? o.r : 0.5 * std::hypot(o.sx, o.sy);
    b.add(o.c.x - e, o.c.y - e);
    b.add(o.c.x + e, o.c.y + e);
  }
  return b;
}

std::string fences_svg(const std::vector<Fence>& fs, const svg::Frame& f, double scale) {
  std::string s;
  const auto X = [&](double x) { return svg::num(f.px(x)); };
  const auto Y = [&](double y) { return svg::num(f.py(y)); };
  for (const auto& fe : fs) {
    const std::string attrs = "class=\"geofence " +
                              std::string(fe.mode == "outside" ? "outside" : "inside") +
                              "\" data-name=\"" + html_escape(fe.name) + "\"";
    const std::string title =
        "<title>geofence " + html_escape(fe.name) + " (" + html_escape(fe.mode) + ")</title>";
    if (fe.circle) {
      s += "<circle " + attrs + " cx=\"" + X(fe.c.x) + "\" cy=\"" + Y(fe.c.y) + "\" r=\"" +
           svg::num(fe.r * scale) + "\">" + title + "</circle>\n";
      continue;
    }
    std::string pts;
    for (const auto& p : fe.pts) pts += X(p.x) + "," + Y(p.y) + " ";
    s += "<polygon " + attrs + " points=\"" + pts + "\">" + title + "</polygon>\n";
  }
  return s;
}

std::string obstacles_svg(const std::vector<Obstacle>& obs, const svg::Frame& f, double scale) {
  std::string s;
  for (const auto& o : obs) {
    if (o.circle) {
      s += "<circle class=\"obstacle\" cx=\"" + svg::num(f.px(o.c.x)) + "\" cy=\"" +
           svg::num(f.py(o.c.y)) + "\" r=\"" + svg::num(o.r * scale) + "\"><title>" +
           html_escape(o.name) + "</title></circle>\n";
    } else {
      const double deg = -o.yaw * 180.0 / M_PI;
      s += "<rect class=\"obstacle\" x=\"" + svg::num(-o.sx * scale / 2) + "\" y=\"" +
           svg::num(-o.sy * scale / 2) + "\" width=\"" + svg::num(o.sx * scale) + "\" height=\"" +
           svg::num(o.sy * scale) + "\" transform=\"translate(" + svg::num(f.px(o.c.x)) + " " +
           svg::num(f.py(o.c.y)) + ") rotate(" + svg::num(deg) + ")\"><title>" +
           html_escape(o.name) + "</title></rect>\n";
    }
  }
  return s;
}

std::string paths_svg(const Report::Data& d) {
  // A complete run record is read through its type: only the fields RunRecord holds.
  const json run = d.record ? to_json(*d.record) : d.run;
  const auto obs = obstacles(run);
  const auto gs = goals(run);
  const auto fs = fences(run);
  const Bounds b = path_bounds(d, obs, gs, fs);
  if (b.empty()) return "<p class=\"none\">No ground-truth poses in samples.jsonl.</p>\n";
  const double m = 0.05 * std::max(b.x1 - b.x0, b.y1 - b.y0) + 0.5;
  svg::Frame f = svg::Frame::equal_scale(svg::Axis::fit(b.x0 - m, b.x1 + m, 8),
                                         svg::Axis::fit(b.y0 - m, b.y1 + m, 8), 640, 440);
  const double scale = f.px(1) - f.px(0);  // pixels per metre, both axes
  const auto X = [&](double x) { return svg::num(f.px(x)); };
  const auto Y = [&](double y) { return svg::num(f.py(y)); };
  std::string s = f.open("paths", "ground-truth paths", "clip-paths");
  s += f.axes("x (m)", "y (m)");
  s += "<g " + f.clip_attr() + ">\n";
  s += fences_svg(fs, f, scale) + obstacles_svg(obs, f, scale);
  for (const auto& g : gs) {
    s += "<g class=\"goal\"><circle cx=\"" + X(g.p.x) + "\" cy=\"" + Y(g.p.y) +
         "\" r=\"7\"/><circle cx=\"" + X(g.p.x) + "\" cy=\"" + Y(g.p.y) +
         "\" r=\"2\"/><title>goal " + html_escape(g.name) + "</title></g>\n";
  }
  size_t i = 0;
  std::string legend;
  for (const auto& [name, pts] : d.paths) {
    const char* col = kColours[i++ % (sizeof kColours / sizeof kColours[0])];
    std::string dpath;
    for (size_t k = 0; k < pts.size(); ++k) {
      dpath += (k == 0 ? "M" : " L") + X(pts[k].x) + " " + Y(pts[k].y);
    }
    s += "<path class=\"vehicle-path\" data-vehicle=\"" + html_escape(name) + "\" stroke=\"" + col +
         "\" d=\"" + dpath + "\"><title>" + html_escape(name) + "</title></path>\n";
    if (!pts.empty()) {
      s += "<circle class=\"start\" fill=\"" + std::string(col) + "\" cx=\"" + X(pts[0].x) +
           "\" cy=\"" + Y(pts[0].y) + "\" r=\"4\"/>\n";
      s += "<rect class=\"end\" fill=\"" + std::string(col) + "\" x=\"" +
           svg::num(f.px(pts.back().x) - 4) + "\" y=\"" + svg::num(f.py(pts.back().y) - 4) +
           "\" width=\"8\" height=\"8\"/>\n";
    }
    legend += "<span class=\"key\" style=\"color:" + std::string(col) + "\">&#9632; " +
              html_escape(name) + "</span> ";
  }
  s += "</g>\n" + svg::Frame::close();
  s += "<p class=\"legend\">" + legend +
       "<span class=\"key\">&#9679; start, &#9632; end, &#9678; goal, grey: obstacles, dashed: "
       "geofences (orange: stay inside, purple: stay outside)</span> · x and y in metres at one "
       "scale, grid every " +
       fmt_num(f.x().step) + " m in x" +
       (f.y().step == f.x().step ? std::string(" and y") : ", " + fmt_num(f.y().step) + " m in y") +
       "</p>\n";
  return s;
}

std::string line_svg(const std::string& cls, const std::string& title, const std::string& y_title,
                     const std::vector<std::pair<double, double>>& pts, double ref) {
  if (pts.empty()) return "<p class=\"none\">No " + html_escape(title) + " samples.</p>\n";
  double t0 = pts.front().first, t1 = pts.back().first;
  double v0 = std::numeric_limits<double>::infinity(), v1 = -v0;
  for (const auto& [t, v] : pts) {
    t0 = std::min(t0, t);
    t1 = std::max(t1, t);
    v0 = std::min(v0, v);
    v1 = std::max(v1, v);
  }
  if (std::isfinite(ref)) {
    v0 = std::min(v0, ref);
    v1 = std::max(v1, ref);
  }
  svg::Frame f(svg::Axis::fit(t0, t1, 10), svg::Axis::fit(v0, v1, 5), 640, 220);
  std::string s = f.open(cls, title, "clip-" + cls) + f.axes("simulated time (s)", y_title);
  s += "<g " + f.clip_attr() + ">\n";
  if (std::isfinite(ref)) {
    s += "<line class=\"ref\" x1=\"" + svg::num(f.px(f.x().lo)) + "\" x2=\"" +
         svg::num(f.px(f.x().hi)) + "\" y1=\"" + svg::num(f.py(ref)) + "\" y2=\"" +
         svg::num(f.py(ref)) + "\"/>\n";
  }
  std::string dp;
  for (size_t k = 0; k < pts.size(); ++k) {
    dp += (k == 0 ? "M" : " L") + svg::num(f.px(pts[k].first)) + " " +
          svg::num(f.py(pts[k].second));
  }
  s += "<path class=\"series\" d=\"" + dp + "\"/>\n</g>\n" + svg::Frame::close();
  return s;
}

// The Markdown tables as HTML: a small converter of the lines we write ourselves.
std::string tables_html(const std::string& md) {
  std::string out;
  size_t pos = 0;
  bool in_table = false, header = false;
  bool in_list = false;
  while (pos < md.size()) {
    size_t nl = md.find('\n', pos);
    if (nl == std::string::npos) nl = md.size();
    std::string line = md.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.rfind("- ", 0) != 0 && in_list) {
      out += "</ul>\n";
      in_list = false;
    }
    if (line.rfind("|", 0) == 0) {
      if (line.rfind("|---", 0) == 0) continue;
      if (!in_table) {
        out += "<table>\n";
        in_table = header = true;
      }
      out += "<tr>";
      size_t i = 1;
      std::string cell;
      while (i < line.size()) {
        if (line[i] == '\\' && i + 1 < line.size() && line[i + 1] == '|') {
          cell += '|';
          i += 2;
          continue;
        }
        if (line[i] == '|') {
          const std::string tag = header ? "th" : "td";
          // Cells were escaped for Markdown (< as &lt;, newlines as <br>): undo, then escape.
          std::string raw;
          for (size_t k = 0; k < cell.size();) {
            if (cell.compare(k, 4, "&lt;") == 0) {
              raw += '<';
              k += 4;
            } else if (cell.compare(k, 4, "<br>") == 0) {
              raw += '\n';
              k += 4;
            } else {
              raw += cell[k++];
            }
          }
          if (!raw.empty() && raw.front() == ' ') raw.erase(0, 1);
          if (!raw.empty() && raw.back() == ' ') raw.pop_back();
          std::string esc = html_escape(raw);
          for (size_t k = 0; (k = esc.find('\n', k)) != std::string::npos;) {
            esc.replace(k, 1, "<br/>");
          }
          out += "<" + tag + ">" + esc + "</" + tag + ">";
          cell.clear();
          ++i;
          continue;
        }
        cell += line[i++];
      }
      out += "</tr>\n";
      header = false;
      continue;
    }
    if (in_table) {
      out += "</table>\n";
      in_table = false;
    }
    if (line.empty()) continue;
    std::string body = line;
    std::string tag = "p";
    if (line.rfind("#### ", 0) == 0) {
      tag = "h4";
      body = line.substr(5);
    } else if (line.rfind("### ", 0) == 0) {
      tag = "h3";
      body = line.substr(4);
    } else if (line.rfind("## ", 0) == 0) {
      tag = "h2";
      body = line.substr(3);
    } else if (line.rfind("# ", 0) == 0) {
      tag = "h1";
      body = line.substr(2);
    } else if (line.rfind("- ", 0) == 0) {
      if (!in_list) {
        out += "<ul>\n";
        in_list = true;
      }
      tag = "li";
      body = line.substr(2);
    }
    std::string raw;
    for (size_t k = 0; k < body.size();) {
      if (body.compare(k, 4, "&lt;") == 0) {
        raw += '<';
        k += 4;
      } else if (body.compare(k, 2, "**") == 0) {
        k += 2;
      } else if (body.compare(k, 4, "<br>") == 0) {
        raw += '\n';
        k += 4;
      } else if (body.compare(k, 2, "\\|") == 0) {
        raw += '|';
        k += 2;
      } else {
        raw += body[k++];
      }
    }
    while (!raw.empty() && raw.back() == ' ') raw.pop_back();
    out += "<" + tag + ">" + html_escape(raw) + "</" + tag + ">\n";
  }
  if (in_table) out += "</table>\n";
  if (in_list) out += "</ul>\n";
  return out;
}

const char* const kCss =
    R"(body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:70em}
table{border-collapse:collapse;margin:.5em 0 1em}td,th{border:1px solid #ccc;padding:.2em .5em;
text-align:left;vertical-align:top;font-size:90%}th{background:#f3f3f3}
.badge{display:inline-block;color:#fff;background:#616161;font-weight:bold;font-size:130%;
padding:.25em .8em;border-radius:.3em;margin:.2em 0 .6em}.badge.verdict-PASS{background:#1a7f37}
.badge.verdict-FAIL,.badge.verdict-ERROR,.badge.verdict-TIMEOUT{background:#c62828}
.badge.verdict-INTERRUPTED{background:#b26a00}.foxglove{color:#444}svg.plot{border:1px solid #ddd;margin:.5em 0;display:block}
svg .bg{fill:#fafafa}svg .obstacle{fill:#9e9e9e;stroke:#616161}svg .geofence{fill:none;
stroke:#ef6c00;stroke-dasharray:6 4;stroke-width:2}svg .geofence.outside{stroke:#6a1b9a}svg .goal circle{fill:none;stroke:#2e7d32;
stroke-width:2}svg .vehicle-path{fill:none;stroke-width:2}svg .series{fill:none;stroke:#1f77b4;
stroke-width:1.5}svg .ref{stroke:#999;stroke-dasharray:4 3}svg text{font-size:11px;fill:#444}
svg .grid line{stroke:#e4e4e4}svg .ticks line{stroke:#777}svg .frame{fill:none;stroke:#999}
svg .axis-title{font-size:12px;fill:#222}svg .row-label{font-size:12px;fill:#222}
svg .entry.ok{fill:#81c784}svg .entry.bad{fill:#e57373}svg .entry.skipped{fill:#bdbdbd}
svg .entry.running{fill:#64b5f6}svg rect.window.passed{fill:#a5d6a7}svg rect.window.failed{fill:#ef9a9a}
svg rect.window.skipped,svg rect.window.pending{fill:#e0e0e0}svg .verdict.passed{fill:#2e7d32}
svg .verdict.failed{fill:#b71c1c}svg .verdict.skipped,svg .verdict.pending{fill:#757575}
svg.signal rect.window{fill:#fff3cd;fill-opacity:.7}svg .threshold{stroke:#d84315;stroke-width:1.5;
stroke-dasharray:6 4}svg .threshold-label{fill:#d84315}svg .decision{fill:#b71c1c;stroke:#fff;
stroke-width:1.5}.failed-assertion h3{margin-bottom:.2em}.reason{margin:.2em 0}
.legend .key{margin-right:1em}.none{color:#777;font-style:italic})";

}  // namespace

std::string html_text(const Report::Data& d) {
  const json& m = d.model;
  const std::string verdict = show(field(m, "verdict"));
  std::string s = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n";
  s += "<title>fieldproof " + html_escape(show(field(m, "run_id"))) + ": " + html_escape(verdict) +
       "</title>\n<style>\n" + kCss + "\n</style>\n</head>\n<body>\n";
  // The verdict alone in colour, then the plots, then the tables.
  s += "<p class=\"badge verdict-" + html_escape(verdict) + "\">" + html_escape(verdict) + "</p>\n";
  std::string mcap;
  if (const json* arts = field(m, "artefacts"); arts && arts->is_array()) {
    for (const json& a : *arts) {
      const std::string p = show(field(a, "path"));
      if (p.size() > 5 && p.ends_with(".mcap") && !field(a, "missing")) {
        mcap = p;
        break;
      }
    }
  }
  if (!mcap.empty()) {
    s += "<p class=\"foxglove\">The recording: open <code>" + html_escape(mcap) +
         "</code> (in this run's directory) in Foxglove with <b>File &gt; Open local file</b>; its "
         "3D panel draws the world (<code>/fieldproof/scene</code>), the vehicles "
         "(<code>/fieldproof/tf</code>, <code>/fieldproof/vehicles/&lt;name&gt;/pose</code>) and "
         "their lidars (<code>/fieldproof/vehicles/&lt;name&gt;/scan</code>); the timeline is "
         "simulated time (docs/recording.md).</p>\n";
  }
  s += "<h2>Plots</h2>\n" + signals_html(d);
  s += "<h3>Timeline and verdicts</h3>\n" + timeline_svg(m);
  s += "<h3>Ground-truth paths</h3>\n";
  s += paths_svg(d);
  std::vector<std::pair<double, double>> rtf, drift;
  for (const auto& c : d.clock) {
    if (std::isfinite(c.rtf)) rtf.emplace_back(c.t, c.rtf);
    if (std::isfinite(c.drift)) drift.emplace_back(c.t, c.drift);
  }
  double target = std::nan("");
  if (const json* c = field(m, "clock")) target = get_num(*c, "target_rtf").value_or(target);
  s += "<h3>Real-time factor over simulated time</h3>\n" +
       line_svg("rtf", "RTF", "real-time factor", rtf, target);
  s += "<h3>Drift over simulated time</h3>\n" + line_svg("drift", "drift", "drift (s)", drift, 0.0);
  s += tables_html(markdown_text(d));
  s += "</body>\n</html>\n";
  return s;
}

}  // namespace fieldproof::report
