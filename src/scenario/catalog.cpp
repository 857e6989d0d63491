// The tables printed for people (`fieldproof assertions`) and as data (`--json`).
#include <nlohmann/json.hpp>

#include "fieldproof/scenario/registry.hpp"

namespace fieldproof::scenario {

namespace {

using Json = nlohmann::ordered_json;

Json param_json(const ParamSpec& p) {
  Json j;
  j["name"] = p.name;
  j["kind"] = describe_kind(p);
  j["required"] = p.required;
  if (!p.default_value.empty()) j["default"] = p.default_value;
  if (!p.choices.empty()) j["choices"] = p.choices;
  j["description"] = p.description;
  return j;
}

Json types_json(const std::vector<TypeSpec>& types, const std::vector<ParamSpec>& common) {
  Json out = Json::array();
  for (const auto& t : types) {
    Json j;
    j["type"] = t.type;
    j["summary"] = t.summary;
    j["plugin"] = t.plugin.empty() ? Json(nullptr) : Json(t.plugin);
    Json params = Json::array();
    for (const auto& p : common) params.push_back(param_json(p));
    for (const auto& p : t.params) params.push_back(param_json(p));
    j["parameters"] = params;
    Json metrics = Json::array();
    for (const auto& m : t.metrics) {
      metrics.push_back({{"name", m.name}, {"unit", m.unit}, {"description", m.description}});
    }
    j["metrics"] = metrics;
    if (!t.exactly_one_of.empty()) j["exactly_one_of"] = t.exactly_one_of;
    if (!t.at_least_one_of.empty()) j["at_least_one_of"] = t.at_least_one_of;
    out.push_back(j);
  }
  return out;
}

std::string param_line(const ParamSpec& p) {
  std::string line = "    " + p.name + " (" + describe_kind(p);
  if (p.required) {
    line += ", required";
  } else if (!p.default_value.empty()) {
    line += ", default " + p.default_value;
  }
  line += ")";
  if (!p.description.empty()) line += ": " + p.description;
  return line + "\n";
}

void format_types(std::string& out, const char* heading, const std::vector<TypeSpec>& types) {
  out += heading;
  out += "\n\n";
  for (const auto& t : types) {
    out += "  " + t.type;
    if (!t.plugin.empty()) out += " [plugin " + t.plugin + "]";
    out += " - " + t.summary + "\n";
    for (const auto& p : t.params) out += param_line(p);
    if (!t.exactly_one_of.empty()) {
      std::string keys;
      for (const auto& k : t.exactly_one_of) keys += (keys.empty() ? "" : ", ") + k;
      out += "    exactly one of: " + keys + "\n";
    }
    if (!t.at_least_one_of.empty()) {
      std::string keys;
      for (const auto& k : t.at_least_one_of) keys += (keys.empty() ? "" : ", ") + k;
      out += "    at least one of: " + keys + "\n";
    }
    if (!t.metrics.empty()) {
      std::string metrics;
      for (const auto& m : t.metrics) {
        metrics +=
            (metrics.empty() ? "" : ", ") + m.name + (m.unit.empty() ? "" : " [" + m.unit + "]");
      }
      out += "    metrics: " + metrics + "\n";
    }
    out += "\n";
  }
}

}  // namespace

std::string format_catalog(const SpecRegistry& registry) {
  std::string out;
  format_types(out,
               "Assertion types (every assertion also has name, type and on_fail: continue | "
               "abort):",
               registry.assertions());
  format_types(out, "KPI collectors (every collector also has name and type):", registry.kpis());
  format_types(out,
               "Timeline actions (every entry also has action, name, at, every, after, when, "
               "until_s):",
               registry.actions());
  return out;
}

std::string catalog_json(const SpecRegistry& registry) {
  Json j;
  j["assertions"] = types_json(registry.assertions(), registry.assertion_common());
  j["kpis"] = types_json(registry.kpis(), registry.kpi_common());
  j["actions"] = types_json(registry.actions(), registry.action_common());
  return j.dump(2) + "\n";
}

}  // namespace fieldproof::scenario
