// TypeSpec <-> JSON, every field (registry.hpp, type_specs_to_json): what an assertion plugin
// carries as data so `fieldproof validate` can check a scenario against its types without running
// any of its code. The text comes from a file the user gave, so every field is type-checked and
// the nesting is bounded.
#include <nlohmann/json.hpp>

#include <stdexcept>

#include "fieldproof/scenario/registry.hpp"

namespace fieldproof::scenario {

namespace {

using nlohmann::json;

// The deepest nesting of parameters (fields of fields) a metadata file may have.
constexpr int kMaxDepth = 16;

const char* const kKindNames[] = {"string",    "name",   "bool",   "integer",     "number",
                                  "duration",  "enum",   "condition", "placement", "scalar",
                                  "object",    "list",   "map",    "typed",       "bool_or_string"};
const char* const kRefNames[] = {"none", "vehicle", "action", "assertion"};
const char* const kTypedSetNames[] = {"none", "actions", "assertions", "kpis"};
const char* const kScopeNames[] = {"value", "signals"};

template <size_t N>
int index_of(const char* const (&names)[N], const std::string& v, const std::string& where) {
  for (size_t i = 0; i < N; ++i) {
    if (v == names[i]) return static_cast<int>(i);
  }
  std::string all;
  for (size_t i = 0; i < N; ++i) all += (i ? ", " : "") + std::string(names[i]);
  throw std::runtime_error(where + ": '" + v + "' is not one of " + all);
}

json pairs_json(const std::vector<std::pair<std::string, std::vector<std::string>>>& v) {
  json a = json::array();
  for (const auto& [k, deps] : v) a.push_back({{"key", k}, {"requires", deps}});
  return a;
}

json param_json(const ParamSpec& p) {
  json j = {{"name", p.name},
            {"kind", kKindNames[static_cast<int>(p.kind)]},
            {"description", p.description},
            {"required", p.required},
            {"default", p.default_value},
            {"nullable", p.nullable},
            {"choices", p.choices},
            {"exclusive_minimum", p.exclusive_minimum},
            {"exactly_one_of", p.exactly_one_of},
            {"at_least_one_of", p.at_least_one_of},
            {"dependent_required", pairs_json(p.dependent_required)},
            {"min_items", p.min_items},
            {"max_items", p.max_items},
            {"identifier_keys", p.identifier_keys},
            {"ref", kRefNames[static_cast<int>(p.ref)]},
            {"scope", kScopeNames[static_cast<int>(p.scope)]},
            {"discriminator", p.discriminator},
            {"typed_set", kTypedSetNames[static_cast<int>(p.typed_set)]}};
  if (p.minimum) j["minimum"] = *p.minimum;
  if (p.maximum) j["maximum"] = *p.maximum;
  json fields = json::array();
  for (const auto& f : p.fields) fields.push_back(param_json(f));
  j["fields"] = fields;
  return j;
}

// Reading: every key optional except the names, every value of its own JSON type.
class Reader {
 public:
  explicit Reader(const json& j, std::string where) : j_(j), where_(std::move(where)) {
    if (!j_.is_object()) throw std::runtime_error(where_ + ": not an object");
  }
  const std::string& where() const { return where_; }
  std::string str(const char* key, bool required = false) const {
    const json* v = find(key, required);
    if (!v) return {};
    if (!v->is_string()) throw std::runtime_error(at(key) + ": not a string");
    return v->get<std::string>();
  }
  bool boolean(const char* key) const {
    const json* v = find(key, false);
    if (!v) return false;
    if (!v->is_boolean()) throw std::runtime_error(at(key) + ": not true or false");
    return v->get<bool>();
  }
  size_t count(const char* key) const {
    const json* v = find(key, false);
    if (!v) return 0;
    if (!v->is_number_unsigned()) throw std::runtime_error(at(key) + ": not a count");
    return v->get<size_t>();
  }
  std::optional<double> number(const char* key) const {
    const json* v = find(key, false);
    if (!v) return std::nullopt;
    if (!v->is_number()) throw std::runtime_error(at(key) + ": not a number");
    return v->get<double>();
  }
  std::vector<std::string> strings(const char* key) const {
    std::vector<std::string> out;
    const json* v = find(key, false);
    if (!v) return out;
    if (!v->is_array()) throw std::runtime_error(at(key) + ": not a list");
    for (const auto& s : *v) {
      if (!s.is_string()) throw std::runtime_error(at(key) + ": not a list of strings");
      out.push_back(s.get<std::string>());
    }
    return out;
  }
  std::vector<std::pair<std::string, std::vector<std::string>>> pairs(const char* key) const {
    std::vector<std::pair<std::string, std::vector<std::string>>> out;
    const json* v = find(key, false);
    if (!v) return out;
    if (!v->is_array()) throw std::runtime_error(at(key) + ": not a list");
    for (size_t i = 0; i < v->size(); ++i) {
      Reader r((*v)[i], at(key) + "[" + std::to_string(i) + "]");
      out.emplace_back(r.str("key", true), r.strings("requires"));
    }
    return out;
  }
  const json* list(const char* key) const {
    const json* v = find(key, false);
    if (v && !v->is_array()) throw std::runtime_error(at(key) + ": not a list");
    return v;
  }
  std::string at(const char* key) const { return where_ + "." + key; }

 private:
  const json* find(const char* key, bool required) const {
    auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) {
      if (required) throw std::runtime_error(at(key) + ": missing");
      return nullptr;
    }
    return &*it;
  }
  const json& j_;
  std::string where_;
};

ParamSpec read_param(const json& j, const std::string& where, int depth) {
  if (depth > kMaxDepth) {
    throw std::runtime_error(where + ": parameters nested deeper than " +
                             std::to_string(kMaxDepth));
  }
  Reader r(j, where);
  ParamSpec p;
  p.name = r.str("name", true);
  p.kind = static_cast<ParamKind>(index_of(kKindNames, r.str("kind", true), r.at("kind")));
  p.description = r.str("description");
  p.required = r.boolean("required");
  p.default_value = r.str("default");
  p.nullable = r.boolean("nullable");
  p.choices = r.strings("choices");
  p.minimum = r.number("minimum");
  p.maximum = r.number("maximum");
  p.exclusive_minimum = r.boolean("exclusive_minimum");
  p.exactly_one_of = r.strings("exactly_one_of");
  p.at_least_one_of = r.strings("at_least_one_of");
  p.dependent_required = r.pairs("dependent_required");
  p.min_items = r.count("min_items");
  p.max_items = r.count("max_items");
  p.identifier_keys = r.boolean("identifier_keys");
  if (const std::string ref = r.str("ref"); !ref.empty()) {
    p.ref = static_cast<Ref>(index_of(kRefNames, ref, r.at("ref")));
  }
  if (const std::string scope = r.str("scope"); !scope.empty()) {
    p.scope = static_cast<ConditionScope>(index_of(kScopeNames, scope, r.at("scope")));
  }
  p.discriminator = r.str("discriminator");
  if (const std::string set = r.str("typed_set"); !set.empty()) {
    p.typed_set = static_cast<TypedSet>(index_of(kTypedSetNames, set, r.at("typed_set")));
  }
  if (const json* fields = r.list("fields")) {
    for (size_t i = 0; i < fields->size(); ++i) {
      p.fields.push_back(
          read_param((*fields)[i], r.at("fields") + "[" + std::to_string(i) + "]", depth + 1));
    }
  }
  return p;
}

}  // namespace

std::string type_specs_to_json(const std::vector<TypeSpec>& specs) {
  json types = json::array();
  for (const TypeSpec& t : specs) {
    json params = json::array();
    for (const auto& p : t.params) params.push_back(param_json(p));
    json metrics = json::array();
    for (const auto& m : t.metrics) {
      metrics.push_back({{"name", m.name}, {"unit", m.unit}, {"description", m.description}});
    }
    types.push_back({{"type", t.type},
                     {"summary", t.summary},
                     {"params", params},
                     {"metrics", metrics},
                     {"exactly_one_of", t.exactly_one_of},
                     {"at_least_one_of", t.at_least_one_of},
                     {"dependent_required", pairs_json(t.dependent_required)}});
  }
  return json{{"fieldproof_type_specs", 1}, {"types", types}}.dump();
}

std::optional<std::string> type_specs_from_json(std::string_view text,
                                                std::vector<TypeSpec>& out) {
  out.clear();
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::exception& e) {
    return std::string("not JSON: ") + e.what();
  }
  try {
    Reader root(doc, "metadata");
    const json* version = doc.contains("fieldproof_type_specs") ? &doc["fieldproof_type_specs"]
                                                                : nullptr;
    if (!version || !version->is_number_integer() || version->get<int64_t>() != 1) {
      return std::string("metadata.fieldproof_type_specs: missing or not 1 (written by another "
                         "fieldproof: rebuild the plugin)");
    }
    const json* types = root.list("types");
    if (!types) return std::string("metadata.types: missing");
    for (size_t i = 0; i < types->size(); ++i) {
      Reader t((*types)[i], "metadata.types[" + std::to_string(i) + "]");
      TypeSpec s;
      s.type = t.str("type", true);
      s.summary = t.str("summary");
      if (const json* params = t.list("params")) {
        for (size_t k = 0; k < params->size(); ++k) {
          s.params.push_back(
              read_param((*params)[k], t.at("params") + "[" + std::to_string(k) + "]", 1));
        }
      }
      if (const json* metrics = t.list("metrics")) {
        for (size_t k = 0; k < metrics->size(); ++k) {
          Reader m((*metrics)[k], t.at("metrics") + "[" + std::to_string(k) + "]");
          s.metrics.push_back({m.str("name", true), m.str("unit"), m.str("description")});
        }
      }
      s.exactly_one_of = t.strings("exactly_one_of");
      s.at_least_one_of = t.strings("at_least_one_of");
      s.dependent_required = t.pairs("dependent_required");
      out.push_back(std::move(s));
    }
  } catch (const std::exception& e) {
    out.clear();
    return std::string(e.what());
  }
  return std::nullopt;
}

}  // namespace fieldproof::scenario
