// The JSON Schema of a scenario, generated from the same tables the validator walks.
#include <nlohmann/json.hpp>

#include "fieldproof/scenario/scenario.hpp"

namespace fieldproof::scenario {

namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kDurationPattern =
    "^\\s*([0-9]+(\\.[0-9]*)?|\\.[0-9]+)\\s*(ns|us|ms|s|m|h)?\\s*$";
constexpr const char* kNamePattern = "^[a-z_][a-z0-9_]*$";
constexpr const char* kSignalNamePattern = "^[A-Za-z_][A-Za-z0-9_]*$";

bool plain_number(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || c == '.')) return false;
  }
  return true;
}

Json default_json(const ParamSpec& p) {
  const std::string& d = p.default_value;
  switch (p.kind) {
    case ParamKind::kNumber:
    case ParamKind::kInteger:
      return Json::parse(d);
    case ParamKind::kBool:
    case ParamKind::kBoolOrString:
      if (d == "true" || d == "false") return d == "true";
      return d;
    case ParamKind::kDuration:
      if (plain_number(d)) return Json::parse(d);
      return d;
    default:
      return d;
  }
}

class SchemaBuilder {
 public:
  explicit SchemaBuilder(const SpecRegistry& reg) : reg_(reg) {}

  Json document() {
    Json doc;
    doc["$schema"] = "https://json-schema.org/draft/2020-12/schema";
    doc["$id"] = "urn:fieldproof:scenario";
    doc["title"] = "fieldproof scenario";
    doc["description"] =
        "A fieldproof scenario file (YAML). Generated from the validator's tables by "
        "`fieldproof schema`; do not edit by hand.";
    Json root = node(reg_.root());
    for (auto it = root.begin(); it != root.end(); ++it) {
      if (it.key() != "description") doc[it.key()] = it.value();
    }
    Json defs = Json::object();
    defs["duration"] = {
        {"description", "a duration: a number of seconds, or text like 0.1, 250ms, 1.5s, 10m, 2h"},
        {"anyOf", Json::array({{{"type", "number"}, {"minimum", 0}},
                               {{"type", "string"}, {"pattern", kDurationPattern}}})}};
    defs["placement"] = {
        {"description", "a frame of the world (a string or {frame}) or {x, y, z?, yaw?}"},
        {"oneOf", Json::array({{{"type", "string"}, {"minLength", 1}},
                               {{"type", "object"},
                                {"properties", {{"frame", {{"type", "string"}, {"minLength", 1}}}}},
                                {"required", Json::array({"frame"})},
                                {"additionalProperties", false}},
                               {{"type", "object"},
                                {"properties",
                                 {{"x", {{"type", "number"}}},
                                  {"y", {{"type", "number"}}},
                                  {"z", {{"type", "number"}, {"description", "metres"}}},
                                  {"yaw", {{"type", "number"}, {"description", "radians"}}}}},
                                {"required", Json::array({"x", "y"})},
                                {"additionalProperties", false}}})}};
    for (auto& [name, def] : typed_defs_) defs[name] = def;
    doc["$defs"] = defs;
    return doc;
  }

 private:
  Json node(const ParamSpec& p) {
    Json j;
    if (!p.description.empty()) j["description"] = p.description;
    switch (p.kind) {
      case ParamKind::kString:
        j["type"] = "string";
        j["minLength"] = 1;
        break;
      case ParamKind::kName:
        j["type"] = "string";
        j["pattern"] = kNamePattern;
        break;
      case ParamKind::kBool:
        j["type"] = "boolean";
        break;
      case ParamKind::kInteger:
        j["type"] = "integer";
        if (p.minimum) j["minimum"] = static_cast<int64_t>(*p.minimum);
        if (p.maximum) j["maximum"] = static_cast<int64_t>(*p.maximum);
        break;
      case ParamKind::kNumber:
        if (p.nullable) {
          j["type"] = Json::array({"number", "null"});
        } else {
          j["type"] = "number";
        }
        if (p.minimum) j[p.exclusive_minimum ? "exclusiveMinimum" : "minimum"] = *p.minimum;
        if (p.maximum) j["maximum"] = *p.maximum;
        break;
      case ParamKind::kDuration:
        if (p.minimum && (*p.minimum != 0 || p.exclusive_minimum)) {
          Json num = {{"type", "number"}};
          num[p.exclusive_minimum ? "exclusiveMinimum" : "minimum"] = *p.minimum;
          j["anyOf"] = Json::array({num, {{"type", "string"}, {"pattern", kDurationPattern}}});
        } else {
          j["$ref"] = "#/$defs/duration";
        }
        break;
      case ParamKind::kEnum:
        j["enum"] = p.choices;
        break;
      case ParamKind::kCondition:
        j["type"] = "string";
        j["minLength"] = 1;
        j["x-fieldproof-kind"] = "condition";
        break;
      case ParamKind::kPlacement:
        j["$ref"] = "#/$defs/placement";
        break;
      case ParamKind::kScalar:
        j["type"] = Json::array({"string", "number", "boolean"});
        break;
      case ParamKind::kBoolOrString:
        j["type"] = Json::array({"boolean", "string"});
        break;
      case ParamKind::kObject:
        object(j, p.fields, p.exactly_one_of, p.at_least_one_of, p.dependent_required, "");
        break;
      case ParamKind::kList:
        j["type"] = "array";
        j["items"] = node(p.fields[0]);
        if (p.min_items > 0) j["minItems"] = p.min_items;
        if (p.max_items > 0) j["maxItems"] = p.max_items;
        break;
      case ParamKind::kMap:
        j["type"] = "object";
        j["additionalProperties"] = node(p.fields[0]);
        if (p.min_items > 0) j["minProperties"] = p.min_items;
        if (p.identifier_keys) j["propertyNames"] = {{"pattern", kSignalNamePattern}};
        break;
      case ParamKind::kTyped: {
        Json variants = Json::array();
        std::string prefix = p.typed_set == TypedSet::kActions ? "action."
                             : p.typed_set == TypedSet::kKpis  ? "kpi."
                                                               : "assertion.";
        for (const TypeSpec& t : reg_.set(p.typed_set)) {
          std::vector<ParamSpec> fields = p.fields;
          fields.insert(fields.end(), t.params.begin(), t.params.end());
          Json v;
          v["description"] = t.summary;
          object(v, fields, t.exactly_one_of, t.at_least_one_of, t.dependent_required, "");
          v["properties"][p.discriminator] = {{"const", t.type}};
          typed_defs_.emplace_back(prefix + t.type, v);
          variants.push_back({{"$ref", "#/$defs/" + prefix + t.type}});
        }
        j["type"] = "object";
        j["required"] = Json::array({p.discriminator});
        j["oneOf"] = variants;
        break;
      }
    }
    if (!p.default_value.empty()) j["default"] = default_json(p);
    return j;
  }

  void object(Json& j, const std::vector<ParamSpec>& fields,
              const std::vector<std::string>& exactly_one_of,
              const std::vector<std::string>& at_least_one_of,
              const std::vector<std::pair<std::string, std::vector<std::string>>>& deps,
              const std::string&) {
    j["type"] = "object";
    Json props = Json::object();
    Json required = Json::array();
    for (const auto& f : fields) {
      props[f.name] = node(f);
      if (f.required) required.push_back(f.name);
    }
    j["properties"] = props;
    if (!required.empty()) j["required"] = required;
    j["additionalProperties"] = false;
    if (!exactly_one_of.empty()) {
      Json one = Json::array();
      for (const auto& k : exactly_one_of) one.push_back({{"required", Json::array({k})}});
      j["oneOf"] = one;
    }
    if (!at_least_one_of.empty()) {
      Json any = Json::array();
      for (const auto& k : at_least_one_of) any.push_back({{"required", Json::array({k})}});
      j["anyOf"] = any;
    }
    if (!deps.empty()) {
      Json d = Json::object();
      for (const auto& [k, needs] : deps) d[k] = needs;
      j["dependentRequired"] = d;
    }
  }

  const SpecRegistry& reg_;
  std::vector<std::pair<std::string, Json>> typed_defs_;
};

}  // namespace

std::string scenario_json_schema(const SpecRegistry& registry) {
  return SchemaBuilder(registry).document().dump(2) + "\n";
}

}  // namespace fieldproof::scenario
