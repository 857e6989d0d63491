#include "scenario/walker.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include "fieldproof/scenario/condition.hpp"

namespace fieldproof::scenario::detail {

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const auto& i : items) {
    if (!out.empty()) out += sep;
    out += i;
  }
  return out;
}

namespace {

std::string range_text(const ParamSpec& spec) {
  std::string out;
  if (spec.minimum) {
    out += spec.exclusive_minimum ? " greater than " : " of at least ";
    out += format_seconds(Duration::from_ns(static_cast<int64_t>(*spec.minimum * 1e9)));
  }
  return out;
}

bool plain(const YAML::Node& n) { return n.Tag() == "?"; }

std::string shown(const YAML::Node& n) {
  if (n.IsScalar()) return "\"" + n.Scalar() + "\"";
  if (n.IsMap()) return "a mapping";
  if (n.IsSequence()) return "a list";
  return "null";
}

bool is_name(std::string_view s) {
  if (s.empty()) return false;
  if (!((s[0] >= 'a' && s[0] <= 'z') || s[0] == '_')) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

std::optional<double> read_number(const std::string& s) {
  if (s == ".inf" || s == ".Inf" || s == ".INF" || s == "+.inf") return HUGE_VAL;
  if (s == "-.inf" || s == "-.Inf" || s == "-.INF") return -HUGE_VAL;
  const char* b = s.data();
  const char* e = s.data() + s.size();
  if (b != e && *b == '+') ++b;
  double d = 0;
  auto [p, ec] = std::from_chars(b, e, d);
  if (ec != std::errc() || p != e || b == e) return std::nullopt;
  return d;
}

std::optional<int64_t> read_integer(const std::string& s) {
  const char* b = s.data();
  const char* e = s.data() + s.size();
  if (b != e && *b == '+') ++b;
  int64_t v = 0;
  auto [p, ec] = std::from_chars(b, e, v);
  if (ec != std::errc() || p != e || b == e) return std::nullopt;
  return v;
}

std::optional<bool> read_bool(const std::string& s) {
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  return std::nullopt;
}

std::string number_text(double d) {
  char buf[40];
  if (d == std::trunc(d) && std::fabs(d) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.0f", d);
  } else {
    std::snprintf(buf, sizeof buf, "%g", d);
  }
  return buf;
}

// parse_duration's message quotes the text and repeats what is accepted; keep only the reason.
std::string duration_reason(const std::string& message) {
  std::string reason = message;
  size_t start = reason.find("\": ");
  if (start != std::string::npos) reason = reason.substr(start + 3);
  size_t cut = reason.find(" (expected");
  if (cut != std::string::npos && cut > 0) reason = reason.substr(0, cut);
  return reason;
}

}  // namespace

std::string accepted(const ParamSpec& spec) {
  switch (spec.kind) {
    case ParamKind::kString:
      return "expected a string";
    case ParamKind::kName:
      return "expected a name of lower case letters, digits and underscores (like ugv1)";
    case ParamKind::kBool:
      return "expected true or false";
    case ParamKind::kInteger:
      if (spec.minimum && spec.maximum) {
        return "expected an integer from " + number_text(*spec.minimum) + " to " +
               number_text(*spec.maximum);
      }
      if (spec.minimum) return "expected an integer of at least " + number_text(*spec.minimum);
      return "expected an integer";
    case ParamKind::kNumber: {
      std::string out = "expected a number";
      if (spec.minimum) {
        out += spec.exclusive_minimum ? " greater than " : " of at least ";
        out += number_text(*spec.minimum);
      }
      if (spec.maximum)
        out += (spec.minimum ? " and at most " : " of at most ") + number_text(*spec.maximum);
      if (spec.nullable) out += ", or null";
      return out;
    }
    case ParamKind::kDuration:
      return "expected a duration like 0.1, 250ms, 10m" + range_text(spec);
    case ParamKind::kEnum:
      return "expected one of " + join(spec.choices);
    case ParamKind::kCondition:
      return "expected a condition such as value < 1.5";
    case ParamKind::kPlacement:
      return "expected a placement: a frame name, {frame: NAME} or {x: X, y: Y, z: Z, yaw: YAW}";
    case ParamKind::kScalar:
      return "expected a string, number or bool";
    case ParamKind::kObject:
    case ParamKind::kTyped:
      return "expected a mapping";
    case ParamKind::kList:
      return "expected a list";
    case ParamKind::kMap:
      return "expected a mapping";
    case ParamKind::kBoolOrString:
      return "expected true, false or a file name";
  }
  return "";
}

SourcePos Walker::pos_of(const YAML::Node& node) {
  YAML::Mark m = node.Mark();
  if (m.line < 0) return {};
  return {m.line + 1, m.column + 1};
}

void Walker::error(SourcePos pos, const std::string& path, const std::string& message) {
  errors_.push_back(Diagnostic{file_, pos, path, message});
}

bool Walker::scalar_or_error(const YAML::Node& node, const ParamSpec& spec,
                             const std::string& path) {
  if (node.IsScalar()) return true;
  error(pos_of(node), path, accepted(spec) + ", got " + shown(node));
  return false;
}

ParamValue Walker::default_value(const ParamSpec& spec, const std::string& path) {
  // Defaults are written as a scenario would write them; walk them as a scalar.
  YAML::Node n(spec.default_value);
  n.SetTag("?");
  size_t before = errors_.size();
  ParamValue v = walk(n, spec, path);
  errors_.resize(before);  // a table's default always validates; never blame the user for it
  v.defaulted = true;
  v.pos = {};
  return v;
}

ParamValue Walker::walk(const YAML::Node& node, const ParamSpec& spec, const std::string& path) {
  ParamValue v;
  v.pos = pos_of(node);
  if (node.IsNull()) {
    if (spec.nullable) return v;
    error(v.pos, path, accepted(spec) + ", got null");
    return v;
  }
  switch (spec.kind) {
    case ParamKind::kString:
    case ParamKind::kName:
      return walk_text(node, spec, path, std::move(v));
    case ParamKind::kBool:
      return walk_bool(node, spec, path, std::move(v));
    case ParamKind::kInteger:
      return walk_integer(node, spec, path, std::move(v));
    case ParamKind::kNumber:
      return walk_number(node, spec, path, std::move(v));
    case ParamKind::kDuration:
      return walk_duration(node, spec, path, std::move(v));
    case ParamKind::kEnum:
      return walk_enum(node, spec, path, std::move(v));
    case ParamKind::kCondition: {
      std::vector<std::string> names = {"value"};
      if (spec.scope == ConditionScope::kSignals) names = signal_names_;
      return walk_condition(node, spec, path, names);
    }
    case ParamKind::kPlacement:
      return walk_placement(node, path);
    case ParamKind::kScalar:
      return walk_scalar(node, spec, path, std::move(v));
    case ParamKind::kBoolOrString:
      return walk_bool_or_string(node, spec, path, std::move(v));
    case ParamKind::kList:
      return walk_list(node, spec, path, std::move(v));
    case ParamKind::kMap:
      return walk_map(node, spec, path, std::move(v));
    case ParamKind::kObject:
      return walk_object(node, spec.fields, spec.exactly_one_of, spec.at_least_one_of,
                         spec.dependent_required, path, spec.name);
    case ParamKind::kTyped:
      return walk_typed(node, spec, path);
  }
  return v;
}

// A string, or a name (letters, digits, _ and -) that may refer to something declared.
ParamValue Walker::walk_text(const YAML::Node& node, const ParamSpec& spec, const std::string& path,
                             ParamValue v) {
  if (!scalar_or_error(node, spec, path)) return {};
  v.kind = ParamValue::Kind::kString;
  v.string = node.Scalar();
  if (spec.kind == ParamKind::kName && !is_name(v.string)) {
    error(v.pos, path, accepted(spec) + ", got \"" + v.string + "\"");
    return {};
  }
  if (spec.kind == ParamKind::kString && v.string.empty()) {
    error(v.pos, path, "expected a non-empty string");
    return {};
  }
  if (spec.ref != Ref::kNone) refs_.push_back({spec.ref, v.string, v.pos, path});
  return v;
}

ParamValue Walker::walk_bool(const YAML::Node& node, const ParamSpec& spec, const std::string& path,
                             ParamValue v) {
  if (!scalar_or_error(node, spec, path)) return {};
  auto b = plain(node) ? read_bool(node.Scalar()) : std::nullopt;
  if (!b) {
    error(v.pos, path, accepted(spec) + ", got " + shown(node));
    return {};
  }
  v.kind = ParamValue::Kind::kBool;
  v.boolean = *b;
  return v;
}

ParamValue Walker::walk_integer(const YAML::Node& node, const ParamSpec& spec,
                                const std::string& path, ParamValue v) {
  if (!scalar_or_error(node, spec, path)) return {};
  auto i = plain(node) ? read_integer(node.Scalar()) : std::nullopt;
  bool in_range = i && (!spec.minimum || static_cast<double>(*i) >= *spec.minimum) &&
                  (!spec.maximum || static_cast<double>(*i) <= *spec.maximum);
  if (!in_range) {
    error(v.pos, path, accepted(spec) + ", got " + shown(node));
    return {};
  }
  v.kind = ParamValue::Kind::kInteger;
  v.integer = *i;
  v.number = static_cast<double>(*i);
  return v;
}

ParamValue Walker::walk_number(const YAML::Node& node, const ParamSpec& spec,
                               const std::string& path, ParamValue v) {
  if (!scalar_or_error(node, spec, path)) return {};
  auto d = plain(node) ? read_number(node.Scalar()) : std::nullopt;
  // .nan and .inf mean nothing as a speed, a rate or a distance: refused like text.
  bool in_range =
      d && std::isfinite(*d) &&
      (!spec.minimum || (spec.exclusive_minimum ? *d > *spec.minimum : *d >= *spec.minimum)) &&
      (!spec.maximum || *d <= *spec.maximum);
  if (!in_range) {
    error(v.pos, path,
          accepted(spec) + ", got " + shown(node) +
              (d && !std::isfinite(*d) ? " (a finite number is needed)" : ""));
    return {};
  }
  v.kind = ParamValue::Kind::kNumber;
  v.number = *d;
  return v;
}

ParamValue Walker::walk_duration(const YAML::Node& node, const ParamSpec& spec,
                                 const std::string& path, ParamValue v) {
  if (!scalar_or_error(node, spec, path)) return {};
  auto d = parse_duration(node.Scalar());
  if (!d.ok()) {
    error(v.pos, path,
          accepted(spec) + ", got " + shown(node) + " (" + duration_reason(d.status().message()) +
              ")");
    return {};
  }
  if (spec.minimum) {
    auto min_ns = static_cast<int64_t>(std::llround(*spec.minimum * 1e9));
    bool ok = spec.exclusive_minimum ? (*d).ns() > min_ns : (*d).ns() >= min_ns;
    if (!ok) {
      error(v.pos, path, accepted(spec) + ", got " + shown(node));
      return {};
    }
  }
  v.kind = ParamValue::Kind::kDuration;
  v.duration = *d;
  return v;
}

ParamValue Walker::walk_enum(const YAML::Node& node, const ParamSpec& spec, const std::string& path,
                             ParamValue v) {
  if (!scalar_or_error(node, spec, path)) return {};
  const std::string& s = node.Scalar();
  bool found = false;
  for (const auto& c : spec.choices) found = found || c == s;
  if (!found) {
    error(v.pos, path, accepted(spec) + ", got " + shown(node));
    return {};
  }
  v.kind = ParamValue::Kind::kString;
  v.string = s;
  return v;
}

// Any scalar, typed by its text: a bool, an integer, a number, else a string.
ParamValue Walker::walk_scalar(const YAML::Node& node, const ParamSpec& spec,
                               const std::string& path, ParamValue v) {
  if (!scalar_or_error(node, spec, path)) return {};
  const std::string& s = node.Scalar();
  if (plain(node)) {
    if (auto b = read_bool(s)) {
      v.kind = ParamValue::Kind::kBool;
      v.boolean = *b;
      return v;
    }
    if (auto i = read_integer(s)) {
      v.kind = ParamValue::Kind::kInteger;
      v.integer = *i;
      v.number = static_cast<double>(*i);
      return v;
    }
    if (auto d = read_number(s)) {
      v.kind = ParamValue::Kind::kNumber;
      v.number = *d;
      return v;
    }
  }
  v.kind = ParamValue::Kind::kString;
  v.string = s;
  return v;
}

ParamValue Walker::walk_bool_or_string(const YAML::Node& node, const ParamSpec& spec,
                                       const std::string& path, ParamValue v) {
  if (!scalar_or_error(node, spec, path)) return {};
  if (plain(node)) {
    if (auto b = read_bool(node.Scalar())) {
      v.kind = ParamValue::Kind::kBool;
      v.boolean = *b;
      return v;
    }
  }
  if (node.Scalar().empty()) {
    error(v.pos, path, accepted(spec));
    return {};
  }
  v.kind = ParamValue::Kind::kString;
  v.string = node.Scalar();
  return v;
}

ParamValue Walker::walk_list(const YAML::Node& node, const ParamSpec& spec, const std::string& path,
                             ParamValue v) {
  if (!node.IsSequence()) {
    error(v.pos, path,
          accepted(spec) + " of " + describe_kind(spec.fields[0]) + ", got " + shown(node));
    return {};
  }
  v.kind = ParamValue::Kind::kList;
  size_t i = 0;
  for (const auto& item : node) {
    ParamValue iv = walk(item, spec.fields[0], path + "[" + std::to_string(i) + "]");
    v.items.push_back(std::move(iv));
    ++i;
  }
  if (v.items.size() < spec.min_items) {
    error(v.pos, path,
          "expected at least " + std::to_string(spec.min_items) +
              (spec.min_items == 1 ? " item" : " items") + ", got " +
              std::to_string(v.items.size()));
  } else if (spec.max_items != 0 && v.items.size() > spec.max_items) {
    error(v.pos, path,
          "expected at most " + std::to_string(spec.max_items) + " items, got " +
              std::to_string(v.items.size()));
  }
  return v;
}

ParamValue Walker::walk_map(const YAML::Node& node, const ParamSpec& spec, const std::string& path,
                            ParamValue v) {
  if (!node.IsMap()) {
    error(v.pos, path,
          accepted(spec) + " of " + describe_kind(spec.fields[0]) + ", got " + shown(node));
    return {};
  }
  v.kind = ParamValue::Kind::kMap;
  std::set<std::string> seen;
  for (const auto& kv : node) {
    SourcePos kpos = pos_of(kv.first);
    if (!kv.first.IsScalar()) {
      error(kpos, path, "keys must be plain names");
      continue;
    }
    std::string key = kv.first.Scalar();
    std::string kpath = path + "." + key;
    if (!seen.insert(key).second) {
      error(kpos, kpath, "duplicate key '" + key + "'");
      continue;
    }
    if (spec.identifier_keys && !is_valid_signal_name(key)) {
      error(kpos, kpath,
            "'" + key +
                "' cannot name a signal: use an identifier (letters, digits, _) "
                "that is not a function, constant or keyword of the condition "
                "language");
      continue;
    }
    v.keys.push_back(key);
    v.items.push_back(walk(kv.second, spec.fields[0], kpath));
  }
  if (node.size() < spec.min_items) {
    error(v.pos, path, "expected at least " + std::to_string(spec.min_items) + " entry");
  }
  return v;
}

ParamValue Walker::walk_object(
    const YAML::Node& node, const std::vector<ParamSpec>& fields,
    const std::vector<std::string>& exactly_one_of, const std::vector<std::string>& at_least_one_of,
    const std::vector<std::pair<std::string, std::vector<std::string>>>& deps,
    const std::string& path, const std::string& what) {
  ParamValue v;
  v.pos = pos_of(node);
  if (!node.IsMap()) {
    std::vector<std::string> names;
    for (const auto& f : fields) names.push_back(f.name);
    error(v.pos, path,
          "expected a mapping (" + (what.empty() ? std::string("keys") : what) + ": " +
              join(names) + "), got " + shown(node));
    return {};
  }
  v.kind = ParamValue::Kind::kMap;
  auto prefix = [&](const std::string& key) { return path.empty() ? key : path + "." + key; };

  // Pass 1: keys, duplicates, unknown keys; remember the value nodes in the table's order.
  std::vector<std::pair<const ParamSpec*, YAML::Node>> present;
  std::set<std::string> seen;
  std::vector<std::string> known;
  for (const auto& f : fields) known.push_back(f.name);
  for (const auto& kv : node) {
    SourcePos kpos = pos_of(kv.first);
    if (!kv.first.IsScalar()) {
      error(kpos, path, "keys must be plain names");
      continue;
    }
    const std::string key = kv.first.Scalar();
    if (!seen.insert(key).second) {
      error(kpos, prefix(key), "duplicate key '" + key + "'");
      continue;
    }
    const ParamSpec* spec = nullptr;
    for (const auto& f : fields) {
      if (f.name == key) spec = &f;
    }
    if (spec == nullptr) {
      error(kpos, prefix(key), "unknown key '" + key + "'; expected one of " + join(known));
      continue;
    }
    present.emplace_back(spec, kv.second);
  }

  // The signals' names come first: a kSignals condition reads them.
  signal_names_.clear();
  if (node["signals"] && node["signals"].IsMap()) {
    for (const auto& kv : node["signals"]) {
      if (kv.first.IsScalar()) signal_names_.push_back(kv.first.Scalar());
    }
  }

  // Pass 2: values, in the table's order (so results do not depend on the file's key order).
  for (const auto& f : fields) {
    const YAML::Node* value = nullptr;
    for (const auto& [spec, n] : present) {
      if (spec == &f) value = &n;
    }
    if (value != nullptr) {
      std::vector<std::string> saved_signals = signal_names_;
      ParamValue pv = walk(*value, f, prefix(f.name));
      signal_names_ = saved_signals;
      v.keys.push_back(f.name);
      v.items.push_back(std::move(pv));
    } else if (f.required) {
      error(v.pos, prefix(f.name),
            "missing required key '" + f.name + "' (" + describe_kind(f) + ": " + f.description +
                ")");
    } else if (!f.default_value.empty()) {
      v.keys.push_back(f.name);
      v.items.push_back(default_value(f, prefix(f.name)));
    }
  }

  auto written = [&](const std::string& key) { return seen.count(key) > 0; };
  auto key_pos = [&](const std::string& key) {
    for (const auto& kv : node) {
      if (kv.first.IsScalar() && kv.first.Scalar() == key) return pos_of(kv.first);
    }
    return v.pos;
  };
  if (!exactly_one_of.empty()) {
    std::vector<std::string> given;  // in the file's order: the later one is blamed
    for (const auto& kv : node) {
      if (!kv.first.IsScalar()) continue;
      const std::string& k = kv.first.Scalar();
      if (std::find(exactly_one_of.begin(), exactly_one_of.end(), k) != exactly_one_of.end() &&
          std::find(given.begin(), given.end(), k) == given.end()) {
        given.push_back(k);
      }
    }
    if (given.empty()) {
      error(v.pos, path, "expected exactly one of " + join(exactly_one_of) + ", got none");
    } else if (given.size() > 1) {
      error(key_pos(given[1]), prefix(given[1]),
            "only one of " + join(exactly_one_of) + " may be given (" + given[0] + " is)");
    }
  }
  if (!at_least_one_of.empty()) {
    bool any = false;
    for (const auto& k : at_least_one_of) any = any || written(k);
    if (!any) error(v.pos, path, "expected at least one of " + join(at_least_one_of));
  }
  for (const auto& [key, needs] : deps) {
    if (!written(key)) continue;
    for (const auto& n : needs) {
      if (!written(n)) {
        error(key_pos(key), prefix(key), "'" + key + "' needs '" + n + "' as well");
      }
    }
  }
  return v;
}

ParamValue Walker::walk_typed(const YAML::Node& node, const ParamSpec& spec,
                              const std::string& path) {
  if (!node.IsMap()) {
    error(pos_of(node), path,
          "expected a mapping with " + spec.discriminator + ", got " + shown(node));
    return {};
  }
  const std::vector<TypeSpec>& set = reg_.set(spec.typed_set);
  std::vector<std::string> types;
  for (const auto& t : set) types.push_back(t.type);
  YAML::Node d = node[spec.discriminator];
  if (!d) {
    error(pos_of(node), path + "." + spec.discriminator,
          "missing required key '" + spec.discriminator + "'; expected one of " + join(types));
    return {};
  }
  const TypeSpec* type = nullptr;
  if (d.IsScalar()) {
    for (const auto& t : set) {
      if (t.type == d.Scalar()) type = &t;
    }
  }
  if (type == nullptr) {
    std::string what = spec.typed_set == TypedSet::kActions ? "action"
                       : spec.typed_set == TypedSet::kKpis  ? "KPI collector type"
                                                            : "assertion type";
    error(pos_of(d), path + "." + spec.discriminator,
          "unknown " + what + " " + shown(d) + "; expected one of " + join(types));
    return {};
  }
  std::vector<ParamSpec> fields = spec.fields;
  fields.insert(fields.end(), type->params.begin(), type->params.end());
  return walk_object(node, fields, type->exactly_one_of, type->at_least_one_of,
                     type->dependent_required, path, type->type);
}

ParamValue Walker::walk_placement(const YAML::Node& node, const std::string& path) {
  ParamValue v;
  v.pos = pos_of(node);
  v.kind = ParamValue::Kind::kPlacement;
  v.placement.pos = v.pos;
  if (node.IsScalar()) {
    if (node.Scalar().empty()) {
      error(v.pos, path, "expected a frame name, {frame: NAME} or {x: X, y: Y, z: Z, yaw: YAW}");
      return {};
    }
    v.placement.frame = node.Scalar();
    return v;
  }
  static const std::vector<ParamSpec> kFields = [] {
    ParamSpec frame;
    frame.name = "frame";
    frame.kind = ParamKind::kString;
    frame.description = "a frame of the world file";
    ParamSpec x;
    x.name = "x";
    x.kind = ParamKind::kNumber;
    x.description = "metres";
    ParamSpec y = x;
    y.name = "y";
    ParamSpec z = x;
    z.name = "z";
    z.description = "metres (height)";
    ParamSpec yaw = x;
    yaw.name = "yaw";
    yaw.description = "radians";
    return std::vector<ParamSpec>{frame, x, y, z, yaw};
  }();
  ParamValue m =
      walk_object(node, kFields, {"frame", "x"}, {},
                  {{"x", {"y"}}, {"y", {"x"}}, {"z", {"x"}}, {"yaw", {"x"}}}, path, "placement");
  if (m.kind != ParamValue::Kind::kMap) return {};
  if (const auto* f = m.get("frame")) v.placement.frame = f->string;
  if (const auto* x = m.get("x")) v.placement.x = x->number;
  if (const auto* y = m.get("y")) v.placement.y = y->number;
  if (const auto* z = m.get("z")) v.placement.z = z->number;
  if (const auto* yaw = m.get("yaw")) v.placement.yaw = yaw->number;
  if (!v.placement.is_frame() && !m.get("x")) return {};
  return v;
}

ParamValue Walker::walk_condition(const YAML::Node& node, const ParamSpec& spec,
                                  const std::string& path, const std::vector<std::string>& names) {
  if (!scalar_or_error(node, spec, path)) return {};
  ParamValue v;
  v.pos = pos_of(node);
  const std::string& text = node.Scalar();
  std::vector<std::string> usable;
  for (const auto& n : names) {
    if (is_valid_signal_name(n)) usable.push_back(n);
  }
  auto c = Condition::compile(text, usable);
  if (!c) {
    const ConditionError& e = c.error();
    std::string message = e.message;
    std::string col_prefix = "column " + std::to_string(e.column) + ": ";
    if (message.rfind(col_prefix, 0) == 0) message = message.substr(col_prefix.size());
    SourcePos where = v.pos;
    // Point at the offending token when the condition sits on the scalar's line as written:
    // a plain scalar or a quoted one (its opening quote is one column before the text).
    YAML::Mark m = node.Mark();
    bool block = m.pos >= 0 && static_cast<size_t>(m.pos) < source_.size() &&
                 (source_[m.pos] == '|' || source_[m.pos] == '>');
    bool single_line = text.find('\n') == std::string::npos;
    if (!block && single_line && e.column > 0) {
      where.column += (plain(node) ? 0 : 1) + e.column - 1;
    }
    error(where, path,
          "in the condition \"" + text + "\", column " + std::to_string(e.column) + ": " + message);
    return {};
  }
  if (spec.scope == ConditionScope::kSignals) {
    std::vector<std::string> read = c->names_read();
    for (const auto& n : usable) {
      if (std::find(read.begin(), read.end(), n) == read.end()) {
        error(v.pos, path,
              "the condition does not read the signal '" + n +
                  "' (every signal must be read; remove it or use it)");
      }
    }
  }
  v.kind = ParamValue::Kind::kString;
  v.string = text;
  return v;
}

}  // namespace fieldproof::scenario::detail
