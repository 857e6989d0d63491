// `fieldproof sweep report` (sweep_report.hpp).
#include "fieldproof/fleet/sweep_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "fieldproof/engine/determinism.hpp"
#include "fieldproof/fleet/run_index.hpp"
#include "fieldproof/fleet/sweep.hpp"

namespace fieldproof::fleet {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

double round_to(double v, double q) { return std::round(v / q) * q; }

std::string overrides_text(const json& ov) {
  std::string s;
  for (const json& o : ov) {
    s += (s.empty() ? "" : " ") + o.value("path", "") + "=" + o.value("value", "");
  }
  return s;
}

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

std::string pct(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f%%", v * 100);
  return b;
}

std::string xml(const std::string& s) {
  std::string o;
  for (const char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') {
          o += ' ';
        } else {
          o += c;
        }
    }
  }
  return o;
}

std::string md_cell(const std::string& s) {
  std::string o;
  for (const char c : s) {
    if (c == '|') {
      o += "\\|";
    } else if (c == '\n') {
      o += ' ';
    } else {
      o += c;
    }
  }
  return o;
}

json distribution(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  json d = {{"n", v.size()}};
  if (v.empty()) return d;
  double sum = 0;
  for (const double x : v) sum += x;
  d["min"] = v.front();
  d["max"] = v.back();
  d["mean"] = sum / static_cast<double>(v.size());
  for (const auto& [name, q] : std::vector<std::pair<const char*, double>>{
           {"p5", 0.05}, {"p25", 0.25}, {"p50", 0.5}, {"p75", 0.75}, {"p95", 0.95}}) {
    d[name] = percentile(v, q);
  }
  constexpr int kBins = 10;
  const double lo = v.front();
  const double hi = v.back();
  std::vector<int> counts(kBins, 0);
  json edges = json::array();
  const double w = hi > lo ? (hi - lo) / kBins : 1.0;
  for (int i = 0; i <= kBins; ++i) edges.push_back(lo + w * i);
  for (const double x : v) {
    int b = hi > lo ? static_cast<int>((x - lo) / w) : 0;
    b = std::clamp(b, 0, kBins - 1);
    ++counts[static_cast<size_t>(b)];
  }
  d["histogram"] = {{"edges", edges}, {"counts", counts}};
  return d;
}

}  // namespace

Interval wilson_interval(size_t passed, size_t n, double z) {
  if (n == 0) return {0, 1};
  const double nn = static_cast<double>(n);
  const double p = static_cast<double>(passed) / nn;
  const double z2 = z * z;
  const double denom = 1 + z2 / nn;
  const double center = (p + z2 / (2 * nn)) / denom;
  const double half = z * std::sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn)) / denom;
  return {std::max(0.0, center - half), std::min(1.0, center + half)};
}

double percentile(const std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t i = static_cast<size_t>(std::floor(pos));
  const double f = pos - static_cast<double>(i);
  if (i + 1 >= v.size()) return v.back();
  return v[i] + f * (v[i + 1] - v[i]);
}

namespace {

// What the finished points add up to, gathered point by point in plan order.
struct SweepTally {
  size_t finished = 0;
  size_t passed = 0;
  double wall_sum = 0;
  json points = json::array();   // every planned point, with its outcome
  json failing = json::array();  // the failed points, with the command reproducing each
  json not_run = json::array();  // ids of the points without a finished run
  // assertion name -> (type, status -> count), and the names in first-seen order
  std::map<std::string, std::pair<std::string, std::map<std::string, size_t>>> per_assertion;
  std::vector<std::string> assertion_order;
  std::map<std::string, std::vector<double>> kpi_values;
  std::map<std::string, std::string> kpi_units;
  std::vector<std::string> kpi_order;
  // (param index, value) -> (total, passed)
  std::map<std::pair<size_t, std::string>, std::pair<size_t, size_t>> per_value;
  std::map<std::pair<int64_t, size_t>, std::vector<size_t>> groups;  // (seed, combination)
};

// The sweep's own fields, from its plan.
void describe_sweep(const json& plan, const fs::path& sweep_dir, json* d) {
  (*d)["sweep_id"] = plan.value("sweep_id", sweep_dir.filename().string());
  (*d)["scenario"] = plan.value("scenario", json::object());
  (*d)["created_utc"] = plan.value("created_utc", "");
  (*d)["seeds"] = plan.value("seeds", json::array());
  (*d)["params"] = plan.value("params", json::array());
  (*d)["repeat"] = plan.value("repeat", 1);
  (*d)["max_rtf"] = plan.value("max_rtf", json());
}

// A finished run's assertions into the tally; the ones that did not pass.
json tally_assertions(const json& run, SweepTally* t) {
  json failed = json::array();
  for (const json& a : run.value("assertions", json::array())) {
    const std::string name = a.value("name", "");
    if (!t->per_assertion.count(name)) t->assertion_order.push_back(name);
    auto& pa = t->per_assertion[name];
    pa.first = a.value("type", "");
    pa.second[a.value("status", "")] += 1;
    if (a.value("status", "") != "passed") {
      failed.push_back(
          {{"name", name}, {"status", a.value("status", "")}, {"reason", a.value("reason", "")}});
    }
  }
  return failed;
}

// A finished run's numeric KPIs into the tally; them as the point's map.
json tally_kpis(const json& run, SweepTally* t) {
  json kpis = json::object();
  const json run_kpis = run.value("kpis", json::object());
  for (const auto& [name, k] : run_kpis.items()) {
    const json v = k.is_object() ? k.value("value", json()) : k;
    if (!v.is_number()) continue;
    if (!t->kpi_values.count(name)) t->kpi_order.push_back(name);
    t->kpi_values[name].push_back(v.get<double>());
    if (k.is_object()) t->kpi_units[name] = k.value("unit", "");
    kpis[name] = v;
  }
  return kpis;
}

// One planned point `p` and its finished run into the tally.
void tally_finished_point(const json& p, const json& run, const json& params, json pt,
                          SweepTally* t) {
  ++t->finished;
  const std::string status = run.value("status", "");
  const bool ok = status == "passed";
  if (ok) ++t->passed;
  pt["status"] = status;
  pt["verdict"] = run.value("verdict", "");
  pt["reason"] = run.value("reason", "");
  const double wall = run.value("durations", json::object()).value("wall_s", 0.0);
  pt["wall_s"] = wall;
  t->wall_sum += wall;
  const json failed_assertions = tally_assertions(run, t);
  pt["failed_assertions"] = failed_assertions;
  pt["kpis"] = tally_kpis(run, t);
  const json ov = p.value("overrides", json::array());
  for (size_t i = 0; i < params.size(); ++i) {
    for (const json& o : ov) {
      if (o.value("path", "") != params[i].value("path", "")) continue;
      auto& pv = t->per_value[{i, o.value("value", "")}];
      ++pv.first;
      if (ok) ++pv.second;
    }
  }
  t->groups[{p.value("seed", int64_t{0}), p.value("combination", size_t{0})}].push_back(
      t->points.size());
  if (!ok) {
    t->failing.push_back({{"id", p.value("id", "")},
                          {"seed", p.value("seed", int64_t{0})},
                          {"overrides", ov},
                          {"status", status},
                          {"reason", pt["reason"]},
                          {"failed_assertions", failed_assertions},
                          {"command", pt["command"]}});
  }
  t->points.push_back(std::move(pt));
}

// Every planned point: its run.json read from the sweep's folder, or "not_run".
SweepTally tally_points(const json& plan, const fs::path& sweep_dir, const json& params) {
  SweepTally t;
  for (const json& p : plan.value("points", json::array())) {
    const std::string id = p.value("id", "");
    json pt = p;
    pt["command"] = reproduce_command(plan, p);
    pt["run_dir"] = (sweep_dir / id).string();
    const Result<json> run = read_json_object(sweep_dir / id / "run.json");
    if (!run.ok() || run->value("status", "") == "interrupted") {
      pt["status"] = "not_run";
      t.not_run.push_back(id);
      t.points.push_back(pt);
      continue;
    }
    tally_finished_point(p, *run, params, std::move(pt), &t);
  }
  return t;
}

json summary_of(const SweepTally& t, size_t planned) {
  const Interval ci = wilson_interval(t.passed, t.finished);
  return {{"planned", planned},
          {"finished", t.finished},
          {"passed", t.passed},
          {"failed", t.finished - t.passed},
          {"not_run", t.not_run.size()},
          {"pass_rate",
           t.finished ? static_cast<double>(t.passed) / static_cast<double>(t.finished) : 0.0},
          {"confidence", {{"level", 0.95}, {"method", "wilson"}, {"low", ci.low}, {"high", ci.high}}},
          {"points_wall_s", round_to(t.wall_sum, 1e-3)}};
}

json assertions_of(const SweepTally& t) {
  json as = json::array();
  for (const auto& name : t.assertion_order) {
    const auto& [type, counts] = t.per_assertion.at(name);
    size_t total = 0;
    for (const auto& [s, n] : counts) total += n;
    const size_t ok = counts.count("passed") ? counts.at("passed") : 0;
    as.push_back({{"name", name}, {"type", type}, {"total", total}, {"passed", ok},
                  {"not_passed", total - ok}, {"by_status", counts}});
  }
  return as;
}

json kpis_of(const SweepTally& t) {
  json ks = json::array();
  for (const auto& name : t.kpi_order) {
    json k = distribution(t.kpi_values.at(name));
    k["name"] = name;
    const auto unit = t.kpi_units.find(name);
    k["unit"] = unit == t.kpi_units.end() ? std::string() : unit->second;
    ks.push_back(k);
  }
  return ks;
}

// Pass rate per parameter value, with its interval.
json by_parameter(const json& params, const SweepTally& t) {
  json pv = json::array();
  for (size_t i = 0; i < params.size(); ++i) {
    json vals = json::array();
    for (const json& v : params[i].value("values", json::array())) {
      const auto it = t.per_value.find({i, v.get<std::string>()});
      const size_t n = it == t.per_value.end() ? 0 : it->second.first;
      const size_t ok = it == t.per_value.end() ? 0 : it->second.second;
      const Interval c = wilson_interval(ok, n);
      vals.push_back({{"value", v}, {"total", n}, {"passed", ok},
                      {"pass_rate", n ? static_cast<double>(ok) / static_cast<double>(n) : 0.0},
                      {"low", c.low}, {"high", c.high}});
    }
    pv.push_back({{"path", params[i].value("path", "")}, {"values", vals}});
  }
  return pv;
}

// Why the repetitions `idx` (positions in `pts`) of one (seed, values) disagree; "" when they
// agree in verdict and in their ordered message stream.
std::string disagreement(const json& pts, const std::vector<size_t>& idx) {
  std::set<std::string> statuses;
  for (const size_t i : idx) statuses.insert(pts[i].value("status", ""));
  if (statuses.size() > 1) return "verdicts differ";
  for (size_t k = 1; k < idx.size(); ++k) {
    const auto c = engine::compare_streams(pts[idx[0]].value("run_dir", ""),
                                           pts[idx[k]].value("run_dir", ""));
    if (!c.ok) return "the streams could not be compared: " + c.error;
    if (c.difference) {
      return "the " + c.source + " of " + pts[idx[0]].value("id", "") + " and " +
             pts[idx[k]].value("id", "") + " differ at message " +
             std::to_string(c.difference->index) + " (" + c.difference->topic_a + ")";
    }
  }
  return "";
}

// With repetitions, the (seed, values) groups whose runs disagree.
json nondeterministic_groups(const SweepTally& t) {
  json nondet = json::array();
  const json& pts = t.points;
  for (const auto& [key, idx] : t.groups) {
    if (idx.size() < 2) continue;
    const std::string why = disagreement(pts, idx);
    if (why.empty()) continue;
    json reps = json::array();
    for (const size_t i : idx) {
      reps.push_back({{"id", pts[i].value("id", "")}, {"status", pts[i].value("status", "")}});
    }
    nondet.push_back({{"seed", key.first},
                      {"combination", key.second},
                      {"overrides", pts[idx[0]].value("overrides", json::array())},
                      {"repetitions", reps},
                      {"why", why},
                      {"command", pts[idx[0]].value("command", "")}});
  }
  return nondet;
}

}  // namespace

// The stages: the plan read, every point tallied, then each section summed from the tally.
Result<json> summarize_sweep(const fs::path& sweep_dir) {
  const Result<json> plan = read_json_object(sweep_dir / kSweepPlanFile);
  if (!plan.ok()) {
    return Status(StatusCode::kNotFound,
                  (sweep_dir / kSweepPlanFile).string() +
                      ": missing or not JSON (is this a sweep? `fieldproof runs list` shows the "
                      "sweeps' points)");
  }
  json d;
  describe_sweep(*plan, sweep_dir, &d);
  const json params = d["params"];
  SweepTally t = tally_points(*plan, sweep_dir, params);
  d["summary"] = summary_of(t, plan->value("points", json::array()).size());
  d["assertions"] = assertions_of(t);
  d["kpis"] = kpis_of(t);
  d["by_parameter"] = by_parameter(params, t);
  d["nondeterministic"] = d["repeat"].get<int>() > 1 ? nondeterministic_groups(t) : json::array();
  d["failing"] = std::move(t.failing);
  d["not_run"] = std::move(t.not_run);
  d["points"] = std::move(t.points);
  return d;
}

std::string render_sweep_md(const json& d) {
  std::ostringstream o;
  const json& s = d["summary"];
  o << "# Sweep " << d.value("sweep_id", "") << "\n\n";
  o << "Scenario `" << d["scenario"].value("name", "") << "` (" << d["scenario"].value("file", "")
    << "), created " << d.value("created_utc", "") << ".\n\n";
  o << "**Pass rate " << pct(s.value("pass_rate", 0.0)) << "** (" << s.value("passed", 0) << " of "
    << s.value("finished", 0) << " points; 95% Wilson interval "
    << pct(s["confidence"].value("low", 0.0)) << " to " << pct(s["confidence"].value("high", 0.0))
    << ")";
  if (s.value("not_run", 0) > 0) o << "; " << s.value("not_run", 0) << " point(s) not run";
  o << ".\n\n";
  o << "## Failures per assertion\n\n| assertion | type | not passed | of |\n|---|---|---:|---:|\n";
  for (const json& a : d["assertions"]) {
    o << "| " << md_cell(a.value("name", "")) << " | " << a.value("type", "") << " | "
      << a.value("not_passed", 0) << " | " << a.value("total", 0) << " |\n";
  }
  o << "\n## KPIs\n\n| KPI | unit | n | min | p5 | p50 | p95 | max | mean |\n"
       "|---|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const json& k : d["kpis"]) {
    o << "| " << md_cell(k.value("name", "")) << " | " << k.value("unit", "") << " | "
      << k.value("n", 0);
    for (const char* f : {"min", "p5", "p50", "p95", "max", "mean"}) o << " | " << num(k.value(f, 0.0));
    o << " |\n";
  }
  if (!d["by_parameter"].empty()) {
    o << "\n## Pass rate by parameter value\n\n| parameter | value | passed | of | rate |\n"
         "|---|---|---:|---:|---:|\n";
    for (const json& p : d["by_parameter"]) {
      for (const json& v : p["values"]) {
        o << "| " << p.value("path", "") << " | " << md_cell(v.value("value", "")) << " | "
          << v.value("passed", 0) << " | " << v.value("total", 0) << " | "
          << pct(v.value("pass_rate", 0.0)) << " |\n";
      }
    }
  }
  o << "\n## Failing points (" << d["failing"].size() << ")\n\n";
  for (const json& f : d["failing"]) {
    o << "- `" << f.value("id", "") << "` seed " << f.value("seed", 0);
    const std::string ov = overrides_text(f["overrides"]);
    if (!ov.empty()) o << " (" << ov << ")";
    o << ": " << f.value("status", "") << ": " << f.value("reason", "") << "\n  `"
      << f.value("command", "") << "`\n";
  }
  if (d.value("repeat", 1) > 1) {
    o << "\n## Nondeterministic points (" << d["nondeterministic"].size() << ")\n\n";
    for (const json& n : d["nondeterministic"]) {
      o << "- seed " << n.value("seed", 0);
      const std::string ov = overrides_text(n["overrides"]);
      if (!ov.empty()) o << " (" << ov << ")";
      o << ": " << n.value("why", "") << "\n  `" << n.value("command", "") << "`\n";
    }
  }
  if (!d["not_run"].empty()) {
    o << "\n## Not run\n\n";
    for (const json& id : d["not_run"]) o << "`" << id.get<std::string>() << "` ";
    o << "\n(`fieldproof sweep ... --sweep-id " << d.value("sweep_id", "")
      << " --resume` runs them)\n";
  }
  return o.str();
}

std::string render_sweep_junit(const json& d) {
  std::ostringstream o;
  const json& s = d["summary"];
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  o << "<testsuites name=\"fieldproof sweep\" tests=\"" << s.value("planned", 0) << "\" failures=\""
    << s.value("failed", 0) << "\">\n";
  o << "  <testsuite name=\"" << xml(d.value("sweep_id", "")) << "\" tests=\""
    << s.value("planned", 0) << "\" failures=\"" << s.value("failed", 0) << "\" skipped=\""
    << s.value("not_run", 0) << "\" time=\"" << num(s.value("points_wall_s", 0.0)) << "\">\n";
  const std::string cls = xml(d["scenario"].value("name", ""));
  for (const json& p : d["points"]) {
    o << "    <testcase classname=\"" << cls << "\" name=\"" << xml(p.value("id", ""));
    const std::string ov = overrides_text(p.value("overrides", json::array()));
    if (!ov.empty()) o << " " << xml(ov);
    o << "\" time=\"" << num(p.value("wall_s", 0.0)) << "\">";
    const std::string st = p.value("status", "");
    if (st == "not_run") {
      o << "<skipped message=\"not run (the sweep was interrupted; --resume runs it)\"/>";
    } else if (st != "passed") {
      o << "\n      <failure message=\"" << xml(st + ": " + p.value("reason", "")) << "\">"
        << xml("reproduce: " + p.value("command", "")) << "</failure>\n    ";
    }
    o << "</testcase>\n";
  }
  o << "  </testsuite>\n</testsuites>\n";
  return o.str();
}

namespace {

std::string histogram_svg(const json& k) {
  if (!k.contains("histogram")) return "";
  const json& counts = k["histogram"]["counts"];
  const json& edges = k["histogram"]["edges"];
  int maxc = 1;
  for (const json& c : counts) maxc = std::max(maxc, c.get<int>());
  constexpr int kW = 300, kH = 90, kPad = 14;
  const double bw = static_cast<double>(kW) / static_cast<double>(counts.size());
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kW << "\" height=\"" << kH + 2 * kPad
    << "\" role=\"img\"><title>" << xml(k.value("name", "")) << " histogram</title>";
  for (size_t i = 0; i < counts.size(); ++i) {
    const double h = static_cast<double>(counts[i].get<int>()) / maxc * kH;
    o << "<rect x=\"" << num(bw * static_cast<double>(i) + 1) << "\" y=\"" << num(kPad + kH - h)
      << "\" width=\"" << num(bw - 2) << "\" height=\"" << num(h)
      << "\" fill=\"#4a7bd0\"><title>" << num(edges[i].get<double>()) << " to "
      << num(edges[i + 1].get<double>()) << ": " << counts[i].get<int>() << "</title></rect>";
  }
  o << "<text x=\"0\" y=\"" << kH + 2 * kPad - 2 << "\" font-size=\"10\">"
    << num(edges.front().get<double>()) << "</text><text x=\"" << kW << "\" y=\""
    << kH + 2 * kPad - 2 << "\" font-size=\"10\" text-anchor=\"end\">"
    << num(edges.back().get<double>()) << "</text><text x=\"0\" y=\"10\" font-size=\"10\">max "
    << maxc << "</text></svg>";
  return o.str();
}

std::string rate_bar(double rate, double low, double high) {
  constexpr int kW = 160;
  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kW << "\" height=\"14\">"
    << "<rect x=\"0\" y=\"2\" width=\"" << kW << "\" height=\"10\" fill=\"#eee\"/>"
    << "<rect x=\"0\" y=\"2\" width=\"" << num(rate * kW) << "\" height=\"10\" fill=\"#3a9d5d\"/>"
    << "<line x1=\"" << num(low * kW) << "\" x2=\"" << num(high * kW)
    << "\" y1=\"7\" y2=\"7\" stroke=\"#000\" stroke-width=\"2\"/></svg>";
  return o.str();
}

}  // namespace

std::string render_sweep_html(const json& d) {
  std::ostringstream o;
  const json& s = d["summary"];
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Sweep "
    << xml(d.value("sweep_id", "")) << "</title><style>"
    << "body{font-family:sans-serif;margin:2em;max-width:1100px}table{border-collapse:collapse;"
       "margin:.5em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}"
       "th{background:#f3f3f3}.fail{color:#b00020}.pass{color:#2b7a3d}code{font-size:90%;"
       "background:#f6f6f6;padding:1px 3px}.big{font-size:1.6em}"
    << "</style></head><body>\n";
  o << "<h1>Sweep " << xml(d.value("sweep_id", "")) << "</h1>\n<p>Scenario <code>"
    << xml(d["scenario"].value("name", "")) << "</code> (" << xml(d["scenario"].value("file", ""))
    << "), created " << xml(d.value("created_utc", "")) << "; " << d["seeds"].size()
    << " seed(s), " << d["params"].size() << " parameter(s), " << d.value("repeat", 1)
    << " run(s) per point.</p>\n";
  o << "<p class=\"big\">Pass rate <b>" << pct(s.value("pass_rate", 0.0)) << "</b> ("
    << s.value("passed", 0) << " of " << s.value("finished", 0) << ")</p><p>95% confidence "
    << "interval (Wilson score): " << pct(s["confidence"].value("low", 0.0)) << " to "
    << pct(s["confidence"].value("high", 0.0)) << " "
    << rate_bar(s.value("pass_rate", 0.0), s["confidence"].value("low", 0.0),
                s["confidence"].value("high", 0.0));
  if (s.value("not_run", 0) > 0) o << "<br>" << s.value("not_run", 0) << " point(s) not run";
  o << "</p>\n<h2>Failures per assertion</h2>\n<table><tr><th>assertion</th><th>type</th>"
       "<th>not passed</th><th>of</th></tr>\n";
  for (const json& a : d["assertions"]) {
    o << "<tr><td>" << xml(a.value("name", "")) << "</td><td>" << xml(a.value("type", ""))
      << "</td><td" << (a.value("not_passed", 0) > 0 ? " class=\"fail\"" : "") << ">"
      << a.value("not_passed", 0) << "</td><td>" << a.value("total", 0) << "</td></tr>\n";
  }
  o << "</table>\n<h2>KPI distributions</h2>\n<table><tr><th>KPI</th><th>n</th><th>min</th>"
       "<th>p5</th><th>p25</th><th>p50</th><th>p75</th><th>p95</th><th>max</th><th>mean</th>"
       "<th>histogram</th></tr>\n";
  for (const json& k : d["kpis"]) {
    o << "<tr><td>" << xml(k.value("name", ""));
    if (!k.value("unit", "").empty()) o << " (" << xml(k.value("unit", "")) << ")";
    o << "</td><td>" << k.value("n", 0) << "</td>";
    for (const char* f : {"min", "p5", "p25", "p50", "p75", "p95", "max", "mean"}) {
      o << "<td>" << num(k.value(f, 0.0)) << "</td>";
    }
    o << "<td>" << histogram_svg(k) << "</td></tr>\n";
  }
  o << "</table>\n";
  if (!d["by_parameter"].empty()) {
    o << "<h2>Pass rate by parameter value</h2>\n<table><tr><th>parameter</th><th>value</th>"
         "<th>passed</th><th>of</th><th>rate</th><th>(95% interval)</th></tr>\n";
    for (const json& p : d["by_parameter"]) {
      for (const json& v : p["values"]) {
        o << "<tr><td><code>" << xml(p.value("path", "")) << "</code></td><td>"
          << xml(v.value("value", "")) << "</td><td>" << v.value("passed", 0) << "</td><td>"
          << v.value("total", 0) << "</td><td>" << pct(v.value("pass_rate", 0.0)) << "</td><td>"
          << rate_bar(v.value("pass_rate", 0.0), v.value("low", 0.0), v.value("high", 1.0))
          << "</td></tr>\n";
      }
    }
    o << "</table>\n";
  }
  o << "<h2>Failing points (" << d["failing"].size() << ")</h2>\n";
  if (!d["failing"].empty()) {
    o << "<table><tr><th>point</th><th>seed</th><th>parameters</th><th>reason</th>"
         "<th>reproduce</th></tr>\n";
    for (const json& f : d["failing"]) {
      o << "<tr><td class=\"fail\">" << xml(f.value("id", "")) << "</td><td>" << f.value("seed", 0)
        << "</td><td>" << xml(overrides_text(f["overrides"])) << "</td><td>"
        << xml(f.value("status", "") + ": " + f.value("reason", "")) << "</td><td><code>"
        << xml(f.value("command", "")) << "</code></td></tr>\n";
    }
    o << "</table>\n";
  }
  if (d.value("repeat", 1) > 1) {
    o << "<h2>Nondeterministic points (" << d["nondeterministic"].size() << ")</h2>\n";
    if (d["nondeterministic"].empty()) {
      o << "<p>Every point's " << d.value("repeat", 1)
        << " runs agreed (verdict and ordered message stream).</p>\n";
    } else {
      o << "<table><tr><th>seed</th><th>parameters</th><th>runs</th><th>why</th>"
           "<th>reproduce</th></tr>\n";
      for (const json& n : d["nondeterministic"]) {
        std::string reps;
        for (const json& r : n["repetitions"]) {
          reps += (reps.empty() ? "" : ", ") + r.value("id", "") + " " + r.value("status", "");
        }
        o << "<tr><td>" << n.value("seed", 0) << "</td><td>" << xml(overrides_text(n["overrides"]))
          << "</td><td>" << xml(reps) << "</td><td>" << xml(n.value("why", "")) << "</td><td><code>"
          << xml(n.value("command", "")) << "</code></td></tr>\n";
      }
      o << "</table>\n";
    }
  }
  o << "<h2>All points</h2>\n<table><tr><th>point</th><th>seed</th><th>parameters</th>"
       "<th>status</th><th>wall s</th></tr>\n";
  for (const json& p : d["points"]) {
    const std::string st = p.value("status", "");
    o << "<tr><td>" << xml(p.value("id", "")) << "</td><td>" << p.value("seed", 0) << "</td><td>"
      << xml(overrides_text(p.value("overrides", json::array()))) << "</td><td class=\""
      << (st == "passed" ? "pass" : "fail") << "\">" << xml(st) << "</td><td>"
      << num(p.value("wall_s", 0.0)) << "</td></tr>\n";
  }
  o << "</table>\n</body></html>\n";
  return o.str();
}

Status write_sweep_report(const json& data, const fs::path& dir) {
  const std::vector<std::pair<const char*, std::string>> files = {
      {"sweep.json", data.dump(2) + "\n"},
      {"sweep.md", render_sweep_md(data)},
      {"junit.xml", render_sweep_junit(data)},
      {"sweep.html", render_sweep_html(data)}};
  for (const auto& [name, text] : files) {
    std::ofstream out(dir / name);
    out << text;
    if (!out) return {StatusCode::kIoError, (dir / name).string() + ": cannot be written"};
  }
  return {};
}

}  // namespace fieldproof::fleet
