// `fieldproof runs show|diff` helpers (runs.hpp).
#include "fieldproof/fleet/runs.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "fieldproof/fleet/run_index.hpp"
#include "fieldproof/time/system_clock.hpp"

namespace fieldproof::fleet {
namespace fs = std::filesystem;
using json = nlohmann::json;

Result<json> read_run(const fs::path& dir) {
  std::ifstream in(dir / "run.json");
  if (!in) return Status(StatusCode::kIoError, (dir / "run.json").string() + ": cannot be read");
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return Status(StatusCode::kCorrupt,
                  (dir / "run.json").string() + ": not a run record (not a JSON object)");
  }
  return j;
}

Result<fs::path> resolve_run(const fs::path& runs_dir, const std::string& run) {
  std::error_code ec;
  if (fs::exists(fs::path(run) / "run.json", ec)) return fs::path(run);
  const fs::path index_file = runs_dir / "index.sqlite";
  std::string why;
  if (fs::exists(index_file, ec)) {
    if (const auto idx = RunIndex::open(index_file); idx.ok()) {
      const Result<RunRow> row = (*idx)->find(run);
      if (row.ok()) return (*idx)->run_dir(*row);
      // Ambiguous: say so, do not guess.
      if (row.status().code() == StatusCode::kInvalidArgument) return row.status();
    } else {
      why = idx.status().message();
    }
  }
  if (fs::exists(runs_dir / run / "run.json", ec)) return runs_dir / run;
  return Status(StatusCode::kNotFound,
                "'" + run + "': no such run (neither a run directory nor a run in " +
                    index_file.string() + (why.empty() ? "" : ": " + why) + ")");
}

namespace {

json side(const json& r) {
  json s = {{"run_id", r.value("run_id", "")},
            {"verdict", r.value("verdict", "")},
            {"status", r.value("status", "")},
            {"reason", r.value("reason", "")},
            {"seed", r.value("seed", json())},
            {"scenario", r.value("scenario", json::object()).value("name", "")},
            {"digest", r.value("scenario", json::object()).value("digest", "")}};
  const json ov = r.value("scenario", json::object()).value("overrides", json::object());
  if (!ov.empty()) s["overrides"] = ov;
  return s;
}

std::string cell(const json& v) {
  if (v.is_null()) return "-";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) {
    char b[32];
    std::snprintf(b, sizeof b, "%.6g", v.get<double>());
    return b;
  }
  return v.dump();
}

}  // namespace

json diff_runs(const json& a, const json& b) {
  json d;
  d["a"] = side(a);
  d["b"] = side(b);
  d["verdict_changed"] = d["a"]["verdict"] != d["b"]["verdict"];
  d["reason_changed"] = d["a"]["reason"] != d["b"]["reason"];
  int changed = (d["verdict_changed"].get<bool>() ? 1 : 0) + (d["reason_changed"].get<bool>() ? 1 : 0);
  const auto by_name = [](const json& run) {
    std::vector<std::pair<std::string, json>> out;
    for (const json& x : run.value("assertions", json::array())) {
      if (x.is_object()) out.emplace_back(x.value("name", ""), x);
    }
    return out;
  };
  const auto as_a = by_name(a);
  const auto as_b = by_name(b);
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const auto& [n, x] : as_a) if (seen.insert(n).second) names.push_back(n);
  for (const auto& [n, x] : as_b) if (seen.insert(n).second) names.push_back(n);
  const auto find = [](const std::vector<std::pair<std::string, json>>& v, const std::string& n) {
    for (const auto& [k, x] : v) if (k == n) return x;
    return json();
  };
  json as = json::array();
  for (const auto& n : names) {
    const json x = find(as_a, n);
    const json y = find(as_b, n);
    json e = {{"name", n},
              {"a", x.is_null() ? json() : json(x.value("status", ""))},
              {"b", y.is_null() ? json() : json(y.value("status", ""))},
              {"reason_a", x.is_null() ? json() : json(x.value("reason", ""))},
              {"reason_b", y.is_null() ? json() : json(y.value("reason", ""))}};
    e["changed"] = e["a"] != e["b"] || e["reason_a"] != e["reason_b"];
    if (e["changed"].get<bool>()) ++changed;
    as.push_back(e);
  }
  d["assertions"] = as;
  const json ka = a.value("kpis", json::object());
  const json kb = b.value("kpis", json::object());
  std::vector<std::string> kn;
  seen.clear();
  for (const auto& [k, v] : ka.items()) if (seen.insert(k).second) kn.push_back(k);
  for (const auto& [k, v] : kb.items()) if (seen.insert(k).second) kn.push_back(k);
  json ks = json::array();
  const auto value = [](const json& m, const std::string& k) {
    if (!m.contains(k)) return json();
    const json& x = m[k];
    return x.is_object() ? x.value("value", json()) : x;
  };
  for (const auto& k : kn) {
    const json x = value(ka, k);
    const json y = value(kb, k);
    json e = {{"name", k}, {"a", x}, {"b", y}};
    std::string unit;
    if (ka.contains(k) && ka[k].is_object()) unit = ka[k].value("unit", "");
    if (unit.empty() && kb.contains(k) && kb[k].is_object()) unit = kb[k].value("unit", "");
    e["unit"] = unit;
    if (x.is_number() && y.is_number()) e["delta"] = y.get<double>() - x.get<double>();
    e["changed"] = x != y;
    if (e["changed"].get<bool>()) ++changed;
    ks.push_back(e);
  }
  d["kpis"] = ks;
  d["changed"] = changed;
  return d;
}

std::string render_diff(const json& d, bool color) {
  std::ostringstream o;
  const std::string on = color ? "\033[1;33m" : "";
  const std::string off = color ? "\033[0m" : "";
  const auto row = [&](bool changed, const std::string& name, const std::string& x,
                       const std::string& y, const std::string& extra = "") {
    char b[512];
    std::snprintf(b, sizeof b, "%s %-28s %-22s %-22s%s", changed ? "*" : " ", name.c_str(),
                  x.c_str(), y.c_str(), extra.c_str());
    o << (changed ? on : "") << b << (changed ? off : "") << "\n";
  };
  row(false, "", "A: " + d["a"].value("run_id", ""), "B: " + d["b"].value("run_id", ""));
  row(d["verdict_changed"].get<bool>(), "verdict", d["a"].value("verdict", ""),
      d["b"].value("verdict", ""));
  row(d["a"]["seed"] != d["b"]["seed"], "seed", cell(d["a"]["seed"]), cell(d["b"]["seed"]));
  if (d["a"].contains("overrides") || d["b"].contains("overrides")) {
    const json oa = d["a"].value("overrides", json::object());
    const json ob = d["b"].value("overrides", json::object());
    row(oa != ob, "--set", oa.dump(), ob.dump());
  }
  if (d["reason_changed"].get<bool>()) {
    o << on << "* reason A: " << d["a"].value("reason", "") << off << "\n";
    o << on << "* reason B: " << d["b"].value("reason", "") << off << "\n";
  } else {
    o << "  reason: " << d["a"].value("reason", "") << "\n";
  }
  o << "\nassertions\n";
  for (const json& e : d["assertions"]) {
    row(e["changed"].get<bool>(), e.value("name", ""), cell(e["a"]), cell(e["b"]));
    if (e["changed"].get<bool>() && e["reason_a"] != e["reason_b"]) {
      o << on << "    A: " << cell(e["reason_a"]) << off << "\n";
      o << on << "    B: " << cell(e["reason_b"]) << off << "\n";
    }
  }
  o << "\nkpis\n";
  for (const json& e : d["kpis"]) {
    std::string extra;
    if (e.contains("delta") && e["changed"].get<bool>()) {
      char b[64];
      std::snprintf(b, sizeof b, "  delta %+.6g", e["delta"].get<double>());
      extra = b;
    }
    if (!e.value("unit", "").empty()) extra += " " + e.value("unit", "");
    row(e["changed"].get<bool>(), e.value("name", ""), cell(e["a"]), cell(e["b"]), extra);
  }
  o << "\n" << d.value("changed", 0) << " difference(s)"
    << (d["verdict_changed"].get<bool>() ? "; the verdicts differ" : "; same verdict") << "\n";
  return o.str();
}

Result<std::string> parse_since(const std::string& text, int64_t now_utc_ns) {
  static const std::regex age(R"(^([0-9]+)([smhd])$)");
  static const std::regex date(R"(^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}(:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?)?Z?)?$)");
  std::smatch m;
  if (std::regex_match(text, m, age)) {
    const int64_t n = std::stoll(m[1].str());
    const int64_t unit = m[2] == "s" ? 1 : m[2] == "m" ? 60 : m[2] == "h" ? 3600 : 86400;
    std::string t = format_utc(now_utc_ns - n * unit * 1000000000LL);
    if (!t.empty() && t.back() == 'Z') t.pop_back();
    return t;
  }
  // Without its 'Z', so that "...T10:00:00" sorts before "...T10:00:00.123Z".
  if (std::regex_match(text, date)) return text.back() == 'Z' ? text.substr(0, text.size() - 1) : text;
  return Status(StatusCode::kInvalidArgument,
                "--since '" + text + "': expected a date (2026-12-01), a UTC date-time "
                "(2026-12-01T10:00:00Z) or an age (30m, 2h, 7d)");
}

}  // namespace fieldproof::fleet
