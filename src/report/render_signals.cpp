// report.html's signal plots: for each failed assertion, the signal it watched over timeline time
// (from samples.jsonl / resources.jsonl, thinned to kMaxSignalPoints), its threshold dashed, its
// window shaded and the deciding sample (the verdict's moment) marked.
#include <algorithm>
#include <cmath>
#include <limits>
#include <regex>
#include <string>
#include <vector>

#include "report/internal.hpp"
#include "report/svg.hpp"

namespace fieldproof::report {
namespace {

constexpr size_t kMaxSignalPoints = 600;

struct Signal {
  std::string y_title;
  std::string caption;  // what the line is, when the axis title cannot say it all (a topic)
  std::vector<std::pair<double, double>> pts;  // timeline seconds, value
  std::vector<std::pair<double, std::string>> thresholds;
  bool step = false;     // drawn as steps (a value that holds between samples)
  bool elapsed = false;  // a straight line: the marker is interpolated
  std::string none;      // why there is no signal
  // The window shaded when it is not the assertion's after_s / within_s (a within_time's limit
  // counts from the action's start); NaN: the assertion's.
  double win_from = std::numeric_limits<double>::quiet_NaN();
  double win_to = std::numeric_limits<double>::quiet_NaN();
};

// Timeline seconds of a sample's simulated seconds: the assertion's sim_s - t_s is the timeline's
// start in simulated time.
double offset_of(const json& a) {
  const auto sim = get_num(a, "sim_s");
  const auto t = get_num(a, "t_s");
  return sim && t ? *sim - *t : 0.0;
}

// The planar distance into a region, the scenario's spelling (report json as the checker writes
// it): positive inside, negative outside.
std::optional<double> depth_in(const json& region, double x, double y) {
  if (const json* c = field(region, "circle")) {
    const auto cx = get_num(*c, "x"), cy = get_num(*c, "y");
    const json* r = first_field(*c, {"radius_m", "radius"});
    if (!cx || !cy || !r || !r->is_number()) return std::nullopt;
    return r->get<double>() - std::hypot(x - *cx, y - *cy);
  }
  if (const json* b = field(region, "box")) {
    const auto x0 = get_num(*b, "x_min"), x1 = get_num(*b, "x_max");
    const auto y0 = get_num(*b, "y_min"), y1 = get_num(*b, "y_max");
    if (!x0 || !x1 || !y0 || !y1) return std::nullopt;
    const double dx = std::min(x - *x0, *x1 - x), dy = std::min(y - *y0, *y1 - y);
    if (dx >= 0 && dy >= 0) return std::min(dx, dy);
    const double ox = std::max(0.0, -dx), oy = std::max(0.0, -dy);
    return -std::hypot(ox, oy);
  }
  const json* poly = field(region, "polygon");
  if (!poly || !poly->is_array() || poly->size() < 3) return std::nullopt;
  std::vector<Point> v;
  for (const auto& p : *poly) {
    if (p.is_array() && p.size() >= 2 && p[0].is_number() && p[1].is_number()) {
      v.push_back({p[0].get<double>(), p[1].get<double>()});
    }
  }
  if (v.size() < 3) return std::nullopt;
  double best = std::numeric_limits<double>::infinity();
  bool inside = false;
  for (size_t i = 0, j = v.size() - 1; i < v.size(); j = i++) {
    const Point a = v[j], b = v[i];
    const double ex = b.x - a.x, ey = b.y - a.y, len2 = ex * ex + ey * ey;
    const double u = len2 > 0 ? std::clamp(((x - a.x) * ex + (y - a.y) * ey) / len2, 0.0, 1.0) : 0;
    best = std::min(best, std::hypot(x - (a.x + u * ex), y - (a.y + u * ey)));
    if ((b.y > y) != (a.y > y) && x < (a.x - b.x) * (y - b.y) / (a.y - b.y) + b.x) inside = !inside;
  }
  return inside ? best : -best;
}

// The position of `model` at simulated time `sim` (the latest sample at or before it).
std::optional<Point> pose_at(const std::vector<TimedPose>& poses, double sim, size_t* cursor) {
  if (poses.empty()) return std::nullopt;
  while (*cursor + 1 < poses.size() && poses[*cursor + 1].sim <= sim + 1e-9) ++*cursor;
  return Point{poses[*cursor].x, poses[*cursor].y};
}

const std::vector<TimedPose>* poses_of(const Report::Data& d, const std::string& model) {
  auto it = d.poses.find(model);
  return it == d.poses.end() ? nullptr : &it->second;
}

Signal distance_signal(const Report::Data& d, const json& a, const std::string& vehicle,
                       const json* to, double threshold, const std::string& what) {
  Signal s;
  const auto* own = poses_of(d, vehicle);
  if (!own || !to) {
    s.none = "no pose samples of " + vehicle + " in samples.jsonl";
    return s;
  }
  const double off = offset_of(a);
  std::optional<Point> fixed;
  const std::vector<TimedPose>* other = nullptr;
  std::string other_name;
  if (const json* tg = field(*to, "target"))
    fixed = Point{get_num(*tg, "x").value_or(0), get_num(*tg, "y").value_or(0)};
  if (auto x = get_num(*to, "x"), y = get_num(*to, "y"); x && y) fixed = Point{*x, *y};
  for (const char* k : {"vehicle", "model"}) {
    if (auto n = get_str(*to, k)) {
      other_name = *n;
      other = poses_of(d, *n);
    }
  }
  if (!fixed && !other) {
    s.none = "no pose samples of " + (other_name.empty() ? std::string("the other") : other_name);
    return s;
  }
  size_t cursor = 0;
  for (const TimedPose& p : *own) {
    const auto q = fixed ? fixed : pose_at(*other, p.sim, &cursor);
    if (q) s.pts.emplace_back(p.sim - off, std::hypot(p.x - q->x, p.y - q->y));
  }
  s.y_title = "distance " + what + " (m)";
  s.thresholds.emplace_back(threshold, fmt_num(threshold) + " m");
  return s;
}

Signal geofence_signal(const Report::Data& d, const json& a, const json& r) {
  Signal s;
  const json* region = field(r, "region");
  const auto* own = poses_of(d, get_str(a, "vehicle").value_or(""));
  if (!region || !own) {
    s.none = "no region or no pose samples of the vehicle";
    return s;
  }
  const bool outside = get_str(r, "mode") == "outside";
  const double off = offset_of(a);
  for (const TimedPose& p : *own) {
    if (auto depth = depth_in(*region, p.x, p.y)) {
      s.pts.emplace_back(p.sim - off, outside ? -*depth : *depth);
    }
  }
  s.y_title = std::string("margin ") + (outside ? "outside" : "inside") + " the region (m)";
  s.thresholds.emplace_back(0.0, "0 m: on the boundary");
  return s;
}

// Seconds since the action (or span) started, from its start to its end or the verdict.
Signal elapsed_signal(const json& m, const json& a, const json& r) {
  Signal s;
  std::optional<double> start;
  if (const json* ev = field(a, "evidence")) start = get_num(*ev, "started_t_s");
  const auto start_label = get_str(r, "action") ? get_str(r, "action") : get_str(r, "start");
  std::optional<double> end;
  for (const auto& e : m["timeline"]) {
    if (get_str(e, "label") != start_label) continue;
    if (!start) start = get_num(e, "started_s");
    if (get_str(r, "action")) end = get_num(e, "ended_s");
  }
  if (auto endl = get_str(r, "end")) {
    for (const auto& e : m["timeline"]) {
      if (get_str(e, "label") == endl) end = get_num(e, "ended_s");
    }
  }
  if (!start) {
    s.none = "the action never started";
    return s;
  }
  const double stop = std::max(end.value_or(get_num(a, "t_s").value_or(*start)),
                               get_num(a, "t_s").value_or(*start));
  s.pts = {{*start, 0.0}, {stop, stop - *start}};
  s.y_title = "elapsed since " + start_label.value_or("the start") + " (s)";
  s.elapsed = true;
  s.win_from = *start;
  if (auto mx = get_num(r, "max_s")) {
    s.thresholds.emplace_back(*mx, "max " + fmt_num(*mx) + " s");
    s.win_to = *start + *mx;
  }
  if (auto mn = get_num(r, "min_s")) s.thresholds.emplace_back(*mn, "min " + fmt_num(*mn) + " s");
  return s;
}

// A field of a decoded message by path ("twist.linear.x", "ranges[0]") as a number.
std::optional<double> number_at(const json& msg, const std::string& path) {
  const json* cur = &msg;
  size_t i = 0;
  while (cur && i < path.size()) {
    if (path[i] == '.') {
      ++i;
      continue;
    }
    if (path[i] == '[') {
      const size_t close = path.find(']', i);
      if (close == std::string::npos || !cur->is_array()) return std::nullopt;
      const size_t k = std::strtoul(path.substr(i + 1, close - i - 1).c_str(), nullptr, 10);
      cur = k < cur->size() ? &(*cur)[k] : nullptr;
      i = close + 1;
      continue;
    }
    const size_t end = path.find_first_of(".[", i);
    cur = field(*cur, path.substr(i, end == std::string::npos ? std::string::npos : end - i));
    i = end == std::string::npos ? path.size() : end;
  }
  if (!cur) return std::nullopt;
  if (cur->is_number()) return cur->get<double>();
  if (cur->is_boolean()) return cur->get<bool>() ? 1.0 : 0.0;
  return std::nullopt;
}

// The bound of a condition that compares the value with a number ("value < 0.5", "value >= 2"):
// drawn as the threshold; nullopt for any other condition.
std::optional<double> condition_bound(const std::string& condition) {
  static const std::regex kCompare(
      R"(^\s*value\s*(<=|>=|<|>|==)\s*(-?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?)\s*$)");
  std::smatch m;
  if (!std::regex_match(condition, m, kCompare)) return std::nullopt;
  return std::strtod(m[2].str().c_str(), nullptr);
}

Signal topic_signal(const Report::Data& d, const json& a, const json& r, const std::string& type) {
  Signal s;
  const std::string topic = get_str(r, "topic").value_or("");
  auto it = d.topic_lines.find(topic);
  const double off = offset_of(a);
  const std::string stat = get_str(r, "statistic").value_or("p95");
  const std::string field_path = get_str(r, "field").value_or("");
  if (it != d.topic_lines.end()) {
    for (const json& j : it->second) {
      const auto sim = get_num(j, "sim");
      const auto kind = get_str(j, "kind");
      std::optional<double> v;
      if (type == "topic_rate" && kind == "rate") v = get_num(j, "hz");
      if (type == "message_latency" && kind == "latency") v = get_num(j, stat + "_ms");
      if (type == "topic_value" && kind == "value") {
        if (const json* msg = field(j, "message")) v = number_at(*msg, field_path);
      }
      if (sim && v) s.pts.emplace_back(*sim - off, *v);
    }
  }
  if (type == "topic_rate") {
    s.y_title = "rate (Hz)";
    s.caption = topic + ": messages per simulated second over each window";
    if (auto v = get_num(r, "min_hz")) s.thresholds.emplace_back(*v, "min " + fmt_num(*v) + " Hz");
    if (auto v = get_num(r, "max_hz")) s.thresholds.emplace_back(*v, "max " + fmt_num(*v) + " Hz");
  } else if (type == "message_latency") {
    s.y_title = stat + " latency (ms)";
    s.caption = topic + ": " + stat + " latency over each window";
    if (auto v = get_num(r, "max_ms")) s.thresholds.emplace_back(*v, "max " + fmt_num(*v) + " ms");
  } else {
    s.y_title = field_path;
    s.caption = topic + " " + field_path +
                ", each message (the condition: " + get_str(r, "condition").value_or("") + ")";
    s.step = true;
    if (auto bound = condition_bound(get_str(r, "condition").value_or(""))) {
      s.thresholds.emplace_back(*bound, fmt_num(*bound));
    }
  }
  if (s.pts.empty()) s.none = "no samples of " + topic + " in samples.jsonl";
  return s;
}

Signal resource_signal(const Report::Data& d, const json& a, const json& r) {
  Signal s;
  const std::string vehicle = get_str(a, "vehicle").value_or("");
  const bool memory = !get_num(r, "max_cpu_pct") ||
                      get_str(a, "reason").value_or("").find("memory") != std::string::npos;
  const char* key = memory ? "memory_mb" : "cpu_pct";
  const double off = offset_of(a);
  // The vehicle's processes summed per measurement (one line per process, same wall_s).
  std::optional<double> wall;
  double sum = 0, sim = 0;
  for (const json& j : d.resources) {
    if (get_str(j, "vehicle").value_or("") != vehicle) continue;
    const auto w = get_num(j, "wall_s");
    const auto v = get_num(j, key);
    if (!w || !v) continue;
    if (wall && std::fabs(*wall - *w) > 0.05) {
      s.pts.emplace_back(sim - off, sum);
      sum = 0;
    }
    wall = *w;
    sim = get_num(j, "sim").value_or(sim);
    sum += *v;
  }
  if (wall) s.pts.emplace_back(sim - off, sum);
  s.y_title = memory ? "memory (MiB)" : "CPU (% of one core)";
  s.caption = std::string("the ") + (memory ? "memory" : "CPU") + " of " + vehicle +
              "'s processes, summed (resources.jsonl)";
  const char* limit = memory ? "max_memory_mb" : "max_cpu_pct";
  if (auto v = get_num(r, limit)) {
    s.thresholds.emplace_back(*v, "max " + fmt_num(*v) + (memory ? " MiB" : " %"));
  }
  if (s.pts.empty()) s.none = "no resources.jsonl lines of " + vehicle;
  return s;
}

Signal signal_of(const Report::Data& d, const json& a) {
  const std::string type = get_str(a, "type").value_or("");
  const json empty = json::object();
  const json* rp = field(a, "resolved");
  const json& r = rp && rp->is_object() ? *rp : empty;
  const std::string vehicle = get_str(a, "vehicle").value_or("");
  if (type == "reach_pose") {
    const std::string label = get_str(r, "target_label").value_or("the target");
    return distance_signal(d, a, vehicle, field(r, "target"),
                           get_num(r, "tolerance_m").value_or(0.5), "to " + label);
  }
  if (type == "min_distance") {
    const json* to = field(r, "to");
    const std::string other =
        to ? get_str(*to, "label")
                 .value_or(get_str(*to, "vehicle").value_or(get_str(*to, "model").value_or("")))
           : "";
    return distance_signal(d, a, vehicle, to, get_num(r, "min_m").value_or(0), "to " + other);
  }
  if (type == "geofence") return geofence_signal(d, a, r);
  if (type == "within_time" || type == "mission_time") return elapsed_signal(d.model, a, r);
  if (type == "topic_rate" || type == "message_latency" || type == "topic_value") {
    return topic_signal(d, a, r, type);
  }
  if (type == "resource_usage") return resource_signal(d, a, r);
  Signal s;
  s.none = "a " + type + " assertion has no signal over time to plot (its evidence is below)";
  return s;
}

std::vector<std::pair<double, double>> thin(const std::vector<std::pair<double, double>>& v) {
  if (v.size() <= kMaxSignalPoints) return v;
  std::vector<std::pair<double, double>> out;
  const double step = static_cast<double>(v.size() - 1) / static_cast<double>(kMaxSignalPoints - 1);
  for (size_t i = 0; i < kMaxSignalPoints; ++i) {
    out.push_back(v[static_cast<size_t>(std::lround(static_cast<double>(i) * step))]);
  }
  return out;
}

// The value at the verdict's moment: the last sample at or before it (else the first after).
std::optional<double> value_at(const std::vector<std::pair<double, double>>& pts, double t,
                               bool interpolate) {
  if (pts.empty()) return std::nullopt;
  size_t k = 0;
  while (k + 1 < pts.size() && pts[k + 1].first <= t + 1e-9) ++k;
  if (interpolate && k + 1 < pts.size() && pts[k].first <= t && pts[k + 1].first > pts[k].first) {
    const double u = (t - pts[k].first) / (pts[k + 1].first - pts[k].first);
    return pts[k].second + u * (pts[k + 1].second - pts[k].second);
  }
  return pts[k].second;
}

std::string signal_svg(const json& a, const Signal& sig, size_t index) {
  // NaN where absent (optional<double> here trips GCC 12's maybe-uninitialized).
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double t = get_num(a, "t_s").value_or(nan);
  const json* w = field(a, "window");
  double after = w ? get_num(*w, "after_s").value_or(0.0) : 0.0;
  double within = w ? get_num(*w, "within_s").value_or(nan) : nan;
  if (std::isfinite(sig.win_from)) after = sig.win_from;
  if (std::isfinite(sig.win_to)) within = sig.win_to;
  const double mark = std::isfinite(t) ? value_at(sig.pts, t, sig.elapsed).value_or(nan) : nan;
  double t0 = std::min(sig.pts.front().first, after), t1 = sig.pts.back().first;
  double v0 = std::numeric_limits<double>::infinity(), v1 = -v0;
  for (const auto& [x, v] : sig.pts) {
    v0 = std::min(v0, v);
    v1 = std::max(v1, v);
  }
  for (const auto& [v, l] : sig.thresholds) v0 = std::min(v0, v), v1 = std::max(v1, v);
  if (std::isfinite(t)) t0 = std::min(t0, t), t1 = std::max(t1, t);
  if (std::isfinite(within)) t1 = std::max(t1, within);
  svg::Frame f(svg::Axis::fit(t0, t1, 10), svg::Axis::fit(v0, v1, 5), 640, 220);
  std::string s = f.open("signal", "signal of " + show(field(a, "name")),
                         "clip-signal-" + std::to_string(index));
  s += f.axes("timeline time (s)", sig.y_title);
  s += "<g " + f.clip_attr() + ">\n";
  const double wx0 = f.px(std::max(after, f.x().lo));
  const double wx1 = f.px(std::isfinite(within) ? std::min(within, f.x().hi) : f.x().hi);
  s += "<rect class=\"window\" x=\"" + svg::num(wx0) + "\" y=\"" + svg::num(f.py(f.y().hi)) +
       "\" width=\"" + svg::num(std::max(1.0, wx1 - wx0)) + "\" height=\"" +
       svg::num(f.py(f.y().lo) - f.py(f.y().hi)) +
       "\"><title>the assertion's window</title></rect>\n";
  for (const auto& [v, label] : sig.thresholds) {
    s += "<line class=\"threshold\" x1=\"" + svg::num(f.px(f.x().lo)) + "\" x2=\"" +
         svg::num(f.px(f.x().hi)) + "\" y1=\"" + svg::num(f.py(v)) + "\" y2=\"" +
         svg::num(f.py(v)) + "\"><title>threshold " + html_escape(label) + "</title></line>\n";
    s += "<text class=\"threshold-label\" x=\"" + svg::num(f.px(f.x().hi) - 4) + "\" y=\"" +
         svg::num(f.py(v) - 4) + "\" text-anchor=\"end\">" + html_escape(label) + "</text>\n";
  }
  const auto pts = thin(sig.pts);
  std::string dp;
  for (size_t k = 0; k < pts.size(); ++k) {
    const std::string x = svg::num(f.px(pts[k].first)), y = svg::num(f.py(pts[k].second));
    if (k == 0) {
      dp = "M" + x + " " + y;
    } else if (sig.step) {
      dp += " L" + x + " " + svg::num(f.py(pts[k - 1].second)) + " L" + x + " " + y;
    } else {
      dp += " L" + x + " " + y;
    }
  }
  s += "<path class=\"series\" d=\"" + dp + "\"/>\n";
  if (std::isfinite(t) && std::isfinite(mark)) {
    s += "<circle class=\"decision\" cx=\"" + svg::num(f.px(t)) + "\" cy=\"" +
         svg::num(f.py(mark)) + "\" r=\"5\"><title>" +
         html_escape("the deciding sample: " + fmt_num(mark) + " at " + fmt_num(t) + " s") +
         "</title></circle>\n";
  }
  s += "</g>\n" + svg::Frame::close();
  return s;
}

}  // namespace

std::string signals_html(const Report::Data& d) {
  std::string s;
  size_t index = 0;
  for (const auto& a : d.model["assertions"]) {
    if (get_str(a, "status") != "failed") continue;
    const std::string name = show(field(a, "name"));
    s += "<div class=\"failed-assertion\" data-assertion=\"" + html_escape(name) + "\">\n<h3>" +
         html_escape(name + " (" + show(field(a, "type")) + "): failed at " +
                     show_seconds(field(a, "t_s"))) +
         "</h3>\n<p class=\"reason\">" + html_escape(get_str(a, "reason").value_or("")) + "</p>\n";
    const Signal sig = signal_of(d, a);
    if (sig.pts.empty()) {
      s +=
          "<p class=\"none\">" + html_escape(sig.none.empty() ? "no samples" : sig.none) + "</p>\n";
    } else {
      if (!sig.caption.empty()) s += "<p class=\"caption\">" + html_escape(sig.caption) + "</p>\n";
      s += signal_svg(a, sig, index++);
    }
    s += "</div>\n";
  }
  if (s.empty()) return s;
  return "<h3>Failed assertions: the signal each watched</h3>\n<p class=\"legend\">In each plot "
         "the "
         "line is what the assertion watched over timeline time, dashed its threshold, shaded its "
         "window, the dot the deciding sample (where the verdict was given).</p>\n" +
         s;
}

}  // namespace fieldproof::report
