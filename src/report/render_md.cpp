// report.md: the run for a reader, failures with the stream that led to them.
#include <string>

#include "report/internal.hpp"

namespace fieldproof::report {
namespace {

std::string row(std::initializer_list<std::string> cells) {
  std::string s = "|";
  for (const auto& c : cells) s += " " + md_cell(c) + " |";
  return s + "\n";
}

std::string vehicle_text(const json& v) {
  std::string s = show(field(v, "name"));
  std::string extra;
  for (const char* k : {"spawn", "stack"}) {
    if (const json* f = field(v, k))
      extra += (extra.empty() ? "" : ", ") + std::string(k) + " " + show(*f);
  }
  return extra.empty() ? s : s + " (" + extra + ")";
}

// One excerpt sample: its times first, then the rest as k=v.
std::string sample_text(const json& s) {
  std::string out;
  if (!s.is_object()) return show(s);
  for (auto& [k, v] : s.items()) {
    if (k == "t" || k == "sim") continue;
    out += (out.empty() ? "" : ", ") + k + "=" + show(v);
  }
  return out;
}

// The heading, the verdict and the table of what was run.
std::string head_text(const json& m) {
  std::string s;
  s += "# fieldproof run " + md_cell(show(field(m, "run_id"))) + ": " +
       md_cell(show(field(m, "verdict"))) + "\n\n";
  s += "**Verdict:** " + md_cell(show(field(m, "verdict"))) + " (exit code " +
       show(field(m, "exit_code")) + ", status " + md_cell(show(field(m, "status"))) + ")  \n";
  s += "**Reason:** " + md_cell(show(field(m, "reason"))) + "\n\n";

  s += "| | |\n|---|---|\n";
  const json& sc = m["scenario"];
  std::string scen = show(field(sc, "name"));
  if (field(sc, "file")) scen += " (" + show(field(sc, "file")) + ")";
  if (field(sc, "digest")) scen += " digest " + show(field(sc, "digest"));
  s += row({"Scenario", scen});
  std::string world = show(field(m["world"], "name"));
  if (field(m["world"], "file")) world += " (" + show(field(m["world"], "file")) + ")";
  s += row({"World", world});
  std::string vs;
  for (const auto& v : m["vehicles"]) vs += (vs.empty() ? "" : "; ") + vehicle_text(v);
  s += row({"Vehicles", vs.empty() ? kDash : vs});
  s += row({"Start", show(field(m, "start"))});
  s += row({"End", show(field(m, "end"))});
  const json& du = m["durations"];
  s += row({"Durations", "wall " + show_seconds(field(du, "wall_s")) + " · timeline " +
                             show_seconds(field(du, "timeline_s")) + " · simulated " +
                             show_seconds(field(du, "sim_s"))});
  std::string seed = show(field(m, "seed"));
  if (const json* g = field(m, "seed_given"); g && g->is_boolean()) {
    seed += g->get<bool>() ? " (given)" : " (drawn)";
  }
  s += row({"Seed", seed});
  s += row({"Engine", show(field(m, "engine_version"))});
  s += "\n**Clock:** " + md_cell(show(field(m, "clock_line"))) + "\n\n";
  return s;
}

// A failed assertion's reason, its excerpt and the rest of its evidence.
std::string failure_text(const json& a) {
  std::string s = "#### " + md_cell(show(field(a, "name"))) + "\n\n";
  s += md_cell(show(field(a, "reason"))) + "\n\n";
  const json* ev = field(a, "evidence");
  const json* ex = ev ? field(*ev, "excerpt") : nullptr;
  if (!ex || !ex->is_array() || ex->empty()) {
    s += "No excerpt.\n\n";
  } else {
    s += "| t (s) | sim (s) | sample |\n|---|---|---|\n";
    for (const auto& e : *ex) {
      s += row({show(field(e, "t")), show(field(e, "sim")), sample_text(e)});
    }
    s += "\n";
  }
  if (ev && ev->is_object()) {
    std::string other;
    for (auto& [k, v] : ev->items()) {
      if (k != "excerpt") other += (other.empty() ? "" : ", ") + k + "=" + show(v);
    }
    if (!other.empty()) s += "Evidence: " + md_cell(other) + "\n\n";
  }
  return s;
}

std::string assertions_text(const json& m) {
  std::string s = "## Assertions\n\n";
  const json& as = m["assertions"];
  if (as.empty()) return s + "No assertions.\n\n";
  s += "| Assertion | Type | Status | t (s) | Reason |\n|---|---|---|---|---|\n";
  for (const auto& a : as) {
    s += row({show(field(a, "name")), show(field(a, "type")), show(field(a, "status")),
              show(field(a, "t_s")), show(field(a, "reason"))});
  }
  s += "\n";
  bool heading = false;
  for (const auto& a : as) {
    if (get_str(a, "status") != "failed") continue;
    if (!heading) {
      s += "### Excerpts of the failed assertions\n\n";
      heading = true;
    }
    s += failure_text(a);
  }
  return s;
}

std::string kpis_text(const json& m) {
  std::string s = "## KPIs\n\n";
  if (m["kpis"].empty()) {
    s += "No KPIs.\n\n";
  } else {
    s += "| KPI | Value | Unit | Source |\n|---|---|---|---|\n";
    for (const auto& [k, v] : m["kpis"].items()) {
      s += row({k, show(field(v, "value")), show(field(v, "unit")), show(field(v, "source"))});
    }
    s += "\n";
  }
  if (!m["kpi_collectors"].empty()) {
    s += "### KPI collectors\n\n| Collector | Type | Status | Reason |\n|---|---|---|---|\n";
    for (const auto& c : m["kpi_collectors"]) {
      s += row({show(field(c, "name")), show(field(c, "type")), show(field(c, "status")),
                show(field(c, "reason"))});
    }
    s += "\n";
  }
  return s;
}

std::string timeline_text(const json& m) {
  std::string s = "## Timeline\n\n";
  if (m["timeline"].empty()) return s + "No timeline entries.\n\n";
  s += "| Entry | Action | Vehicle | At (s) | Started (s) | Ended (s) | Status | Detail |\n"
       "|---|---|---|---|---|---|---|---|\n";
  for (const auto& e : m["timeline"]) {
    s += row({show(field(e, "label")), show(field(e, "action")), show(field(e, "vehicle")),
              show(field(e, "at_s")), show(field(e, "started_s")), show(field(e, "ended_s")),
              show(field(e, "status")), show(field(e, "detail"))});
  }
  return s + "\n";
}

std::string phases_text(const json& m) {
  std::string s = "## Phases\n\n";
  const json& ph = m["phases"];
  if (ph.empty()) return s + "No phases recorded.\n\n";
  if (ph.is_object()) {
    for (const auto& [k, v] : ph.items()) s += "- " + md_cell(k) + ": " + md_cell(show(v)) + "\n";
    return s + "\n";
  }
  for (const auto& p : ph) {
    if (p.is_object()) {
      std::string t = show(first_field(p, {"phase", "name"}));
      std::string rest;
      for (auto& [k, v] : p.items()) {
        if (k != "phase" && k != "name") rest += (rest.empty() ? "" : ", ") + k + " " + show(v);
      }
      s += "- " + md_cell(t) + (rest.empty() ? "" : " (" + md_cell(rest) + ")") + "\n";
    } else {
      s += "- " + md_cell(show(p)) + "\n";
    }
  }
  return s + "\n";
}

std::string artefacts_text(const json& m) {
  std::string s = "## Artefacts\n\n";
  if (m["artefacts"].empty()) return s + "No artefacts found.\n";
  s += "| File | Size |\n|---|---|\n";
  for (const auto& a : m["artefacts"]) {
    const json* sz = field(a, "size");
    std::string size = sz && sz->is_number_unsigned()
                           ? human_size(sz->get<uint64_t>()) + " (" + show(*sz) + " bytes)"
                       : field(a, "with_report") ? "written with this report"
                                                 : (field(a, "missing") ? "missing" : kDash);
    s += row({show(field(a, "path")), size});
  }
  return s;
}

}  // namespace

std::string markdown_text(const Report::Data& d) {
  const json& m = d.model;
  return head_text(m) + assertions_text(m) + kpis_text(m) + timeline_text(m) + phases_text(m) +
         artefacts_text(m);
}

}  // namespace fieldproof::report
