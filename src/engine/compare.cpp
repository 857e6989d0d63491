#include "fieldproof/engine/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <set>

#include "fieldproof/util/input_file.hpp"

namespace fieldproof::engine {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// run.json of a run directory (null when absent); an error when it is there but is no run
// record.
Result<json> run_json_of(const fs::path& dir) {
  const fs::path file = dir / "run.json";
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(file, ec))) return json();
  const Result<std::string> in = util::read_input_file(file, util::kMaxRunFileBytes, "run.json");
  if (!in.ok()) return in.status();
  json run = json::parse(*in, nullptr, /*allow_exceptions=*/false);
  if (!run.is_object() || !run.contains("run_id") || !run["run_id"].is_string() ||
      !run.contains("status") || !run["status"].is_string()) {
    return Status(StatusCode::kInvalidArgument,
                  file.string() +
                      ": not a run record (a JSON object with run_id and status, as `fieldproof "
                      "run` writes it)");
  }
  return run;
}

// The run's clock.origin_sim_s (0 when run.json or the field is absent).
double origin_of(const json& run) {
  if (!run.is_object() || !run.contains("clock") || !run["clock"].is_object()) return 0.0;
  const json& c = run["clock"];
  if (c.contains("origin_sim_s") && c["origin_sim_s"].is_number()) {
    const double o = c["origin_sim_s"].get<double>();
    if (std::isfinite(o)) return o;
  }
  return 0.0;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

Result<Trajectories> load_trajectories(const fs::path& run_dir,
                                       std::vector<std::string>* warnings) {
  std::error_code ec;
  if (!fs::is_directory(run_dir, ec)) {
    return Status(StatusCode::kNotFound, run_dir.string() + ": no such run directory");
  }
  const fs::path file = run_dir / "samples.jsonl";
  if (!fs::exists(file, ec)) {
    return Status(StatusCode::kNotFound, file.string() + ": missing (not a run directory?)");
  }
  util::CheckedFile in(file, util::kNoSizeLimit, "samples.jsonl");
  if (!in.status().ok()) return in.status();
  const Result<json> run_or = run_json_of(run_dir);
  if (!run_or.ok()) return run_or.status();
  const json& run = *run_or;
  const double origin = origin_of(run);
  // The vehicles of the run (run.json): the watched static models (a crate a geofence or
  // min_distance asks for) are poses too, but no trajectory to compare.
  std::optional<std::set<std::string>> vehicles;
  if (run.is_object() && run.contains("vehicles") && run["vehicles"].is_array()) {
    vehicles.emplace();
    for (const json& v : run["vehicles"]) {
      if (v.is_object() && v.contains("name") && v["name"].is_string()) {
        vehicles->insert(v["name"].get<std::string>());
      }
    }
  }
  Trajectories out;
  util::LineReader lines(in.fd());
  size_t garbage = 0;
  int first_garbage = 0;
  while (const std::optional<util::LineReader::Line> line = lines.next()) {
    const json j = line->too_long ? json(json::value_t::discarded)
                                  : json::parse(line->text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() && (line->too_long || !line->text.empty())) {
      if (garbage++ == 0) first_garbage = lines.line_number();
      continue;
    }
    if (!j.is_object() || !j.contains("kind") || !j["kind"].is_string() ||
        j["kind"].get<std::string>() != "pose") {
      continue;
    }
    std::string name;
    for (const char* k : {"model", "vehicle"}) {
      if (j.contains(k) && j[k].is_string()) name = j[k].get<std::string>();
    }
    if (name.empty() || (vehicles && !vehicles->count(name))) continue;
    const auto num = [&](const char* k, double* v) {
      if (!j.contains(k) || !j[k].is_number()) return false;
      *v = j[k].get<double>();
      return std::isfinite(*v);
    };
    TrajectoryPoint p;
    double sim = 0;
    if (!num("sim", &sim) || !num("x", &p.x) || !num("y", &p.y)) continue;
    p.t = sim - origin;
    out[name].push_back(p);
  }
  if (garbage > 0 && warnings != nullptr) {
    warnings->push_back(file.string() + ":" + std::to_string(first_garbage) + ": " +
                        std::to_string(garbage) + (garbage == 1 ? " line that is" : " lines that are") +
                        " not JSON skipped (the first here)");
  }
  if (out.empty()) {
    return Status(StatusCode::kInvalidArgument, file.string() + ": no ground-truth pose samples");
  }
  for (auto& [name, v] : out) {
    std::stable_sort(v.begin(), v.end(),
                     [](const TrajectoryPoint& l, const TrajectoryPoint& r) { return l.t < r.t; });
  }
  return out;
}

TrajectoryPoint interpolate(const std::vector<TrajectoryPoint>& tr, double t) {
  auto hi = std::lower_bound(tr.begin(), tr.end(), t,
                             [](const TrajectoryPoint& p, double v) { return p.t < v; });
  if (hi == tr.end()) return {t, tr.back().x, tr.back().y};
  if (hi == tr.begin() || hi->t == t) return {t, hi->x, hi->y};
  const auto lo = hi - 1;
  const double span = hi->t - lo->t;
  const double f = span > 0 ? (t - lo->t) / span : 0.0;
  return {t, lo->x + f * (hi->x - lo->x), lo->y + f * (hi->y - lo->y)};
}

namespace {
// The mean time between two samples of a trajectory (0 with fewer than two).
double sample_period(const std::vector<TrajectoryPoint>& tr) {
  if (tr.size() < 2) return 0.0;
  return (tr.back().t - tr.front().t) / static_cast<double>(tr.size() - 1);
}
}  // namespace

CompareResult compare_trajectories(const Trajectories& a, const Trajectories& b, double tolerance_m,
                                   double span_tolerance_s) {
  CompareResult r;
  r.tolerance_m = tolerance_m;
  r.within = !a.empty();
  for (const auto& [name, ta] : a) {
    VehicleDeviation d;
    d.vehicle = name;
    const auto it = b.find(name);
    if (it == b.end() || it->second.empty()) {
      d.note = "not in the second run";
    } else if (ta.empty()) {
      d.note = "no samples in the first run";
    } else {
      const auto& tb = it->second;
      d.span_a = {ta.front().t, ta.back().t};
      d.span_b = {tb.front().t, tb.back().t};
      d.span_diff_s = std::max(std::abs(d.span_a.first - d.span_b.first),
                               std::abs(d.span_a.second - d.span_b.second));
      d.span_tolerance_s = span_tolerance_s >= 0
                               ? span_tolerance_s
                               : 1.5 * std::max(sample_period(ta), sample_period(tb));
      d.span_ok = d.span_diff_s <= d.span_tolerance_s + 1e-9;
      const double t0 = std::max(ta.front().t, tb.front().t);
      const double t1 = std::min(ta.back().t, tb.back().t);
      double sum = 0;
      for (const auto& p : ta) {
        if (p.t < t0 || p.t > t1) continue;
        const TrajectoryPoint q = interpolate(tb, p.t);
        const double dev = std::hypot(p.x - q.x, p.y - q.y);
        if (d.compared == 0 || dev > d.max_m) {
          d.max_m = dev;
          d.max_t_s = p.t;
        }
        sum += dev;
        ++d.compared;
        d.final_m = dev;
        d.final_t_s = p.t;
      }
      if (d.compared == 0) {
        d.note = "the runs' samples share no time span";
      } else {
        d.mean_m = sum / static_cast<double>(d.compared);
        d.within = d.max_m <= tolerance_m && d.span_ok;
      }
    }
    r.within = r.within && d.within;
    r.vehicles.push_back(d);
  }
  return r;
}

json CompareResult::to_json() const {
  json vs = json::array();
  for (const auto& d : vehicles) {
    json j = {{"vehicle", d.vehicle}, {"compared", d.compared}, {"within", d.within}};
    if (d.compared > 0) {
      j["max_m"] = d.max_m;
      j["max_t_s"] = d.max_t_s;
      j["mean_m"] = d.mean_m;
      j["final_m"] = d.final_m;
      j["final_t_s"] = d.final_t_s;
      j["span_a_s"] = {d.span_a.first, d.span_a.second};
      j["span_b_s"] = {d.span_b.first, d.span_b.second};
      j["span_diff_s"] = d.span_diff_s;
      j["span_tolerance_s"] = d.span_tolerance_s;
      j["span_within"] = d.span_ok;
    } else {
      j["note"] = d.note;
    }
    vs.push_back(j);
  }
  return {{"tolerance_m", tolerance_m}, {"within", within}, {"vehicles", vs}};
}

std::string CompareResult::to_text() const {
  std::string s;
  for (const auto& d : vehicles) {
    s += d.vehicle + ": ";
    if (d.compared == 0) {
      s += "not compared (" + d.note + ")  OUT\n";
      continue;
    }
    s += "max " + fmt("%.3f", d.max_m) + " m at t=" + fmt("%.2f", d.max_t_s) + " s, mean " +
         fmt("%.3f", d.mean_m) + " m, final " + fmt("%.3f", d.final_m) + " m (" +
         std::to_string(d.compared) + " samples)";
    if (!d.span_ok) {
      const double len_a = d.span_a.second - d.span_a.first;
      const double len_b = d.span_b.second - d.span_b.first;
      s += "; the runs cover different spans: the first " + fmt("%.2f", d.span_a.first) + ".." +
           fmt("%.2f", d.span_a.second) + " s, the second " + fmt("%.2f", d.span_b.first) + ".." +
           fmt("%.2f", d.span_b.second) + " s (" + fmt("%.2f", d.span_diff_s) +
           " s apart; the second is " + fmt("%.2f", std::abs(len_b - len_a)) + " s " +
           (len_b < len_a ? "shorter" : "longer") + ")";
    }
    s += std::string("  ") + (d.within ? "within" : "OUT") + "\n";
  }
  s += std::string(within ? "WITHIN" : "DIFFERENT") + " tolerance " + fmt("%.3f", tolerance_m) +
       " m\n";
  return s;
}

}  // namespace fieldproof::engine
