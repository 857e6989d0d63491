// junit.xml (docs/reports.md): one testsuite named after the scenario, the run's facts as
// properties, a testcase per assertion, per timeline entry and one named `run`. It follows the
// common JUnit format (Jenkins' junit-10, tests/report/schema/junit.xsd): <testsuites> carries no
// skipped count (the suite does). Every time attribute is simulated seconds (docs/reports.md);
// the wall time is the property duration.wall_s.
#include <algorithm>
#include <string>
#include <vector>

#include "report/internal.hpp"

namespace fieldproof::report {
namespace {

struct Case {
  std::string classname;
  std::string name;
  double time = 0;
  std::string kind;  // "", "failure", "error", "skipped"
  std::string message;
  std::string text;
};

double num_or0(const json* v) { return v && v->is_number() ? v->get<double>() : 0.0; }

std::string suite_name(const json& m) {
  const json& sc = m["scenario"];
  if (auto n = get_str(sc, "name"); n && !n->empty()) return *n;
  if (auto f = get_str(sc, "file"); f && !f->empty()) {
    return std::filesystem::path(*f).stem().string();
  }
  return "fieldproof";
}

// A testcase per assertion: a failed one carries its evidence, a pending one is skipped.
Case assertion_case(const std::string& suite, const json& a) {
  Case c;
  c.classname = suite + ".assertions";
  c.name = get_str(a, "name").value_or(kDash);
  c.time = std::max(0.0, num_or0(field(a, "t_s")));  // a verdict before the timeline: 0
  const std::string st = get_str(a, "status").value_or("pending");
  const std::string reason = get_str(a, "reason").value_or("");
  if (st == "failed") {
    c.kind = "failure";
    c.message = reason;
    c.text = reason + "\n\ntype: " + get_str(a, "type").value_or(kDash) +
             "\nt_s: " + show(field(a, "t_s")) + "\nsim_s: " + show(field(a, "sim_s")) +
             "\nevidence: " + (field(a, "evidence") ? dump(a["evidence"], 2) : kDash);
    if (const json* mt = field(a, "metrics")) c.text += "\nmetrics: " + dump(*mt, 2);
  } else if (st == "skipped" || st == "pending") {
    c.kind = "skipped";
    c.message = reason.empty() ? st : st + ": " + reason;
  } else if (st != "passed") {
    c.kind = "failure";
    c.message = "unknown status '" + st + "'" + (reason.empty() ? "" : ": " + reason);
    c.text = c.message;
  }
  return c;
}

// A testcase per timeline entry, as long as it ran (simulated seconds).
Case timeline_case(const std::string& suite, const json& e) {
  Case c;
  c.classname = suite + ".timeline";
  c.name = get_str(e, "label").value_or(get_str(e, "action").value_or(kDash));
  const json* s = field(e, "started_s");
  const json* en = field(e, "ended_s");
  if (s && en && s->is_number() && en->is_number()) c.time = en->get<double>() - s->get<double>();
  if (c.time < 0) c.time = 0;
  const std::string st = get_str(e, "status").value_or("—");
  if (!entry_ok(st)) {
    c.kind = "failure";
    c.message = "status " + st;
    if (auto det = get_str(e, "detail"); det && !det->empty()) c.message += ": " + *det;
    c.text = c.message + "\naction: " + show(field(e, "action")) +
             "\nvehicle: " + show(field(e, "vehicle")) + "\nat_s: " + show(field(e, "at_s")) +
             "\nstarted_s: " + show(s) + "\nended_s: " + show(en);
  }
  return c;
}

// The testcase `run`: the run's own status (an error when it did not pass or fail).
Case run_case(const std::string& suite, const json& m) {
  Case c;
  c.classname = suite;
  c.name = "run";
  c.time = std::max(0.0, num_or0(field(m["durations"], "sim_s")));
  const std::string st = get_str(m, "status").value_or("");
  const std::string reason = get_str(m, "reason").value_or("");
  if (st == "failed") {
    c.kind = "failure";
  } else if (st != "passed") {
    c.kind = "error";
  }
  if (!c.kind.empty()) {
    c.message = st.empty() ? "the run has no status (it did not finish)" : st + ": " + reason;
    c.text = "status: " + (st.empty() ? std::string(kDash) : st) +
             "\nverdict: " + show(field(m, "verdict")) +
             "\nexit_code: " + show(field(m, "exit_code")) + "\nreason: " + reason;
  }
  return c;
}

// The suite's properties: the run's facts, its recording and its KPIs.
std::vector<std::pair<std::string, std::string>> properties(const Report::Data& d) {
  const json& m = d.model;
  std::vector<std::pair<std::string, std::string>> props = {
      {"run_id", show(field(m, "run_id"))},
      {"verdict", show(field(m, "verdict"))},
      {"status", show(field(m, "status"))},
      {"exit_code", show(field(m, "exit_code"))},
      {"reason", show(field(m, "reason"))},
      {"scenario", show(field(m["scenario"], "name"))},
      {"scenario.path", show(field(m["scenario"], "file"))},
      {"scenario.digest", show(field(m["scenario"], "digest"))},
      {"world", show(field(m["world"], "name"))},
      {"world.path", show(field(m["world"], "file"))},
      {"engine_version", show(field(m, "engine_version"))},
      {"seed", show(field(m, "seed"))},
      {"duration.wall_s", show(field(m["durations"], "wall_s"))},
      {"duration.timeline_s", show(field(m["durations"], "timeline_s"))},
      {"duration.sim_s", show(field(m["durations"], "sim_s"))},
      {"clock", show(field(m, "clock_line"))},
  };
  std::string mcap = kDash;
  for (const auto& a : m["artefacts"]) {
    if (auto p = get_str(a, "path"); p && p->ends_with(".mcap")) {
      mcap = d.dir.empty() ? *p : (d.dir / *p).string();
      break;
    }
  }
  props.emplace_back("mcap", mcap);
  for (const auto& [k, v] : m["kpis"].items()) {
    std::string value = show(field(v, "value"));
    if (auto u = get_str(v, "unit"); u && !u->empty()) value += " " + *u;
    props.emplace_back("kpi." + k, value);
  }
  return props;
}

std::string testcase_xml(const Case& c) {
  std::string x = "    <testcase classname=\"" + xml_escape(c.classname) + "\" name=\"" +
                  xml_escape(c.name) + "\" time=\"" + fmt_fixed3(c.time) + "\"";
  if (c.kind.empty()) return x + "/>\n";
  x += ">\n      <" + c.kind + " message=\"" + xml_escape(c.message) + "\"";
  if (c.kind != "skipped") x += " type=\"" + xml_escape(c.kind) + "\"";
  if (c.text.empty()) {
    x += "/>\n";
  } else {
    x += ">" + xml_escape(c.text) + "</" + c.kind + ">\n";
  }
  return x + "    </testcase>\n";
}

}  // namespace

std::string junit_text(const Report::Data& d, JunitCounts* counts) {
  const json& m = d.model;
  const std::string suite = suite_name(m);
  std::vector<Case> cases;
  for (const auto& a : m["assertions"]) cases.push_back(assertion_case(suite, a));
  for (const auto& e : m["timeline"]) cases.push_back(timeline_case(suite, e));
  cases.push_back(run_case(suite, m));

  JunitCounts n;
  n.tests = static_cast<int>(cases.size());
  for (const auto& c : cases) {
    n.failures += c.kind == "failure";
    n.errors += c.kind == "error";
    n.skipped += c.kind == "skipped";
  }
  if (counts) *counts = n;

  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  // The run's simulated duration: no testcase's time (each a simulated time or span of it) lies
  // beyond it. The assertions are judged side by side, so their times add up to more.
  const std::string time =
      " time=\"" + fmt_fixed3(std::max(0.0, num_or0(field(m["durations"], "sim_s")))) + "\"";
  const std::string totals = " tests=\"" + std::to_string(n.tests) + "\" failures=\"" +
                             std::to_string(n.failures) + "\" errors=\"" +
                             std::to_string(n.errors) + "\"";
  x += "<testsuites name=\"fieldproof\"" + totals + time + ">\n";
  x += "  <testsuite name=\"" + xml_escape(suite) + "\"" + totals + " skipped=\"" +
       std::to_string(n.skipped) + "\"" + time;
  if (auto st = get_str(m, "start")) x += " timestamp=\"" + xml_escape(*st) + "\"";
  x += ">\n    <properties>\n";
  for (const auto& [k, v] : properties(d)) {
    x += "      <property name=\"" + xml_escape(k) + "\" value=\"" + xml_escape(v) + "\"/>\n";
  }
  x += "    </properties>\n";
  for (const auto& c : cases) x += testcase_xml(c);
  x += "  </testsuite>\n</testsuites>\n";
  return x;
}

}  // namespace fieldproof::report
