// The parameter tables of a scenario: every section, every timeline action, the 16 assertion types
// and the 8 KPI collectors, in one place. The validator walks a YAML file against these
// tables, scenario_json_schema() exports them, and `fieldproof assertions` prints them, so the
// three cannot drift apart.
//
//   const SpecRegistry& r = SpecRegistry::builtin();
//   const TypeSpec* t = r.assertion("reach_pose");
//   for (const ParamSpec& p : t->params) std::printf("%s %s\n", p.name.c_str(),
//   p.description.c_str());
//
//   SpecRegistry mine = SpecRegistry::builtin();            // copy, then add a plugin's type
//   if (auto error = mine.add_assertion(my_type)) ...       // refused: duplicate or malformed
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fieldproof::scenario {

enum class ParamKind {
  kString,        // any string
  kName,          // lower case, digits, underscores, starting with a letter or _
  kBool,          // true / false
  kInteger,       // an integer (minimum / maximum apply)
  kNumber,        // a number (minimum / maximum apply)
  kDuration,      // "0.1", "250ms", "10m" or a bare number of seconds, to exact nanoseconds
  kEnum,          // one of `choices`
  kCondition,     // a condition-language expression (condition.hpp), checked when validated
  kPlacement,     // a frame of the world (a string or {frame}) or {x, y, yaw?}
  kScalar,        // a string, number or bool (stack parameters)
  kObject,        // a mapping with the keys `fields` (unknown keys are errors)
  kList,          // a sequence of fields[0]
  kMap,           // a mapping from free keys to fields[0]
  kTyped,         // a mapping whose `discriminator` key selects a TypeSpec of `typed_set`
  kBoolOrString,  // outputs.record: true / false or a path
};

// What a kName / kString value refers to, checked once the whole file is read.
enum class Ref { kNone, kVehicle, kAction, kAssertion };

// Which set a kTyped mapping chooses from.
enum class TypedSet { kNone, kActions, kAssertions, kKpis };

// Which names a kCondition may read.
enum class ConditionScope {
  kValue,    // `value` (topic_value, count_if, sequence steps, when)
  kSignals,  // the keys of the sibling `signals` map (always, never, eventually)
};

struct ParamSpec {
  std::string name;
  ParamKind kind = ParamKind::kString;
  std::string description;
  bool required = false;
  // The default as written in a scenario ("0.5", "5s", "always"); empty when there is none.
  std::string default_value;
  bool nullable = false;             // null is accepted (time.rtf)
  std::vector<std::string> choices;  // kEnum
  std::optional<double> minimum;     // kInteger, kNumber, kDuration (seconds)
  std::optional<double> maximum;
  bool exclusive_minimum = false;
  std::vector<ParamSpec> fields;             // kObject / kTyped: the keys; kList / kMap: fields[0]
  std::vector<std::string> exactly_one_of;   // kObject / kTyped: exactly one of these keys
  std::vector<std::string> at_least_one_of;  // kObject / kTyped: one or more of these keys
  // kObject / kTyped: when the first key is present, the others must be too.
  std::vector<std::pair<std::string, std::vector<std::string>>> dependent_required;
  size_t min_items = 0;          // kList / kMap
  size_t max_items = 0;          // kList: 0 = no limit
  bool identifier_keys = false;  // kMap: keys must be condition-language signal names
  Ref ref = Ref::kNone;
  ConditionScope scope = ConditionScope::kValue;
  std::string discriminator;  // kTyped: "type" or "action"
  TypedSet typed_set = TypedSet::kNone;
};

struct MetricSpec {
  std::string name;
  std::string unit;  // "m", "s", "Hz", "ms", "%", "MiB", "" for counts and ratios
  std::string description;
};

// One assertion type, KPI collector or timeline action.
struct TypeSpec {
  std::string type;  // "reach_pose", "path", "navigate_to_pose"
  std::string summary;
  std::vector<ParamSpec> params;  // its own keys (the common ones are in the section's spec)
  std::vector<MetricSpec> metrics;
  std::vector<std::string> exactly_one_of;
  std::vector<std::string> at_least_one_of;
  std::vector<std::pair<std::string, std::vector<std::string>>> dependent_required;
  std::string plugin;  // the library that registered it; empty for the built-ins
};

class SpecRegistry {
 public:
  // The built-in tables: 16 assertion types, 8 KPI collectors, 13 timeline actions.
  static const SpecRegistry& builtin();

  const std::vector<TypeSpec>& assertions() const { return assertions_; }
  const std::vector<TypeSpec>& kpis() const { return kpis_; }
  const std::vector<TypeSpec>& actions() const { return actions_; }
  const TypeSpec* assertion(std::string_view type) const;
  const TypeSpec* kpi(std::string_view type) const;
  const TypeSpec* action(std::string_view type) const;
  const std::vector<TypeSpec>& set(TypedSet s) const;

  // The document's root (name, world, seed, time, vehicles, timeline, assertions, kpis, outputs,
  // plugins) as one kObject spec.
  const ParamSpec& root() const { return root_; }
  // The keys every assertion has (name, type, on_fail) and every collector has (name, type).
  const std::vector<ParamSpec>& assertion_common() const;
  const std::vector<ParamSpec>& kpi_common() const;
  const std::vector<ParamSpec>& action_common() const;

  // Adds a plugin's assertion type. Returns an error message (nothing added) when the type is
  // empty or malformed, already taken, or one of its parameters is malformed.
  std::optional<std::string> add_assertion(TypeSpec spec);

 private:
  SpecRegistry();
  std::vector<TypeSpec> assertions_;
  std::vector<TypeSpec> kpis_;
  std::vector<TypeSpec> actions_;
  ParamSpec root_;
};

// The name of a kind as the tables print it ("duration", "placement", "list of number", ...).
std::string describe_kind(const ParamSpec& spec);

// The tables as `fieldproof assertions` prints them: every assertion type, then every KPI
// collector and timeline action, each with its summary, parameters (kind, required or default,
// description) and metrics. Plain text, one blank line between types.
std::string format_catalog(const SpecRegistry& registry);
// The same as JSON (`fieldproof assertions --json`):
// {"assertions": [{"type", "summary", "plugin", "parameters": [{"name", "kind", "required",
//   "default", "choices", "description"}], "metrics": [{"name", "unit", "description"}]}],
//  "kpis": [...], "actions": [...]}; the common keys (name, type, on_fail) are listed first.
std::string catalog_json(const SpecRegistry& registry);

// Type specs as data, every field (the `plugin` field left out): what an assertion plugin
// carries in its `.fieldproof.assertions` section (assertions/plugin.hpp) so a scenario can be
// validated against its types without running it. type_specs_from_json reads such a text back,
// or returns why it cannot (a field path such as "metadata.types[0].params[2].kind: ..."); it
// never throws.
std::string type_specs_to_json(const std::vector<TypeSpec>& specs);
std::optional<std::string> type_specs_from_json(std::string_view text, std::vector<TypeSpec>& out);

}  // namespace fieldproof::scenario
