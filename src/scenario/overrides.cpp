// Scenario values replaced by path (overrides.hpp).
#include "fieldproof/scenario/overrides.hpp"

#include "fieldproof/scenario/scenario.hpp"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <fstream>
#include <sstream>
#include <charconv>
#include <cstdlib>

namespace fieldproof::scenario {
namespace {

struct Segment {
  std::string key;  // empty for an index
  size_t index = 0;
  bool is_index() const { return key.empty(); }
};

Status invalid(std::string message) {
  return Status(StatusCode::kInvalidArgument, std::move(message));
}

// The segments of a dotted path (time.rtf, vehicles[0].name), or kInvalidArgument saying what is
// wrong with it.
Result<std::vector<Segment>> parse_path(std::string_view path) {
  std::vector<Segment> segs;
  std::vector<Segment>* const out = &segs;
  size_t i = 0;
  bool expect_key = true;
  while (i < path.size()) {
    if (path[i] == '[') {
      const size_t close = path.find(']', i);
      if (close == std::string_view::npos || close == i + 1) {
        return Status(StatusCode::kInvalidArgument, "an index is [N] with a number N");
      }
      size_t n = 0;
      const auto digits = path.substr(i + 1, close - i - 1);
      const auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
      if (ec != std::errc() || p != digits.data() + digits.size()) {
        return Status(StatusCode::kInvalidArgument,
                      "'[" + std::string(digits) + "]' is not a list index (a number)");
      }
      if (out->empty()) {
        return Status(StatusCode::kInvalidArgument,
                      "a path starts with a key (time.rtf, vehicles[0]...)");
      }
      out->push_back({"", n});
      i = close + 1;
      expect_key = false;
      continue;
    }
    if (path[i] == '.') {
      if (expect_key) {
        return Status(StatusCode::kInvalidArgument, "an empty key (two dots, or a leading dot)");
      }
      ++i;
      expect_key = true;
      continue;
    }
    if (!expect_key) {
      return Status(StatusCode::kInvalidArgument, "a key follows a '.'");
    }
    size_t j = i;
    while (j < path.size() && path[j] != '.' && path[j] != '[') ++j;
    out->push_back({std::string(path.substr(i, j - i)), 0});
    i = j;
    expect_key = false;
  }
  if (expect_key) {
    return Status(StatusCode::kInvalidArgument,
                  out->empty() ? "the path is empty" : "the path ends with '.'");
  }
  return segs;
}

enum class Kind { kNull, kBool, kNumber, kOther };

Kind scalar_kind(const YAML::Node& n) {
  if (!n.IsScalar()) return n.IsNull() ? Kind::kNull : Kind::kOther;
  if (n.Tag() == "!") return Kind::kOther;  // quoted: a string whatever it reads as
  const std::string& s = n.Scalar();
  if (s == "true" || s == "false" || s == "True" || s == "False" || s == "TRUE" || s == "FALSE") {
    return Kind::kBool;
  }
  if (s.empty()) return Kind::kOther;
  char* end = nullptr;
  (void)std::strtod(s.c_str(), &end);
  if (end == s.c_str() + s.size() && !std::isspace(static_cast<unsigned char>(s[0]))) {
    return Kind::kNumber;
  }
  return Kind::kOther;
}

std::string kind_name(Kind k) {
  switch (k) {
    case Kind::kBool:
      return "a boolean (true or false)";
    case Kind::kNumber:
      return "a number";
    default:
      return "a value";
  }
}

// Sets one override's value in `root`; kInvalidArgument saying why it cannot.
Status apply_one(YAML::Node root, const Override& o) {
  const Result<std::vector<Segment>> parsed = parse_path(o.path);
  if (!parsed.ok()) return invalid("the path: " + parsed.status().message());
  const std::vector<Segment>& segs = *parsed;
  YAML::Node value;
  try {
    value = YAML::Load(o.value);
  } catch (const YAML::Exception& e) {
    return invalid("the value does not read as YAML: " + e.msg);
  }
  YAML::Node cur = root;
  std::string where;  // the path walked so far
  for (size_t i = 0; i < segs.size(); ++i) {
    const bool last_seg = i + 1 == segs.size();
    if (segs[i].is_index()) {
      if (!cur.IsSequence()) return invalid(where + " is not a list");
      if (segs[i].index >= cur.size()) {
        return invalid(where + " has " + std::to_string(cur.size()) + " item(s); [" +
                       std::to_string(segs[i].index) + "] is not one of them");
      }
      where += "[" + std::to_string(segs[i].index) + "]";
      if (last_seg) {
        cur[segs[i].index] = value;
        return Status();
      }
      cur.reset(cur[segs[i].index]);
      continue;
    }
    if (!cur.IsMap()) {
      if (!cur.IsNull()) return invalid(where + " is not a mapping");
    }
    // The longest run of keys that is a key of the file (dotted parameter keys).
    size_t end = i;
    while (end + 1 < segs.size() && !segs[end + 1].is_index()) ++end;
    std::string key;
    size_t taken = i;
    bool found = false;
    if (cur.IsMap()) {
      for (size_t j = end + 1; j-- > i;) {
        std::string k;
        for (size_t m = i; m <= j; ++m) k += (m > i ? "." : "") + segs[m].key;
        if (static_cast<const YAML::Node&>(cur)[k]) {
          key = k;
          taken = j;
          found = true;
          break;
        }
      }
    }
    const std::string parent_key = i > 0 && !segs[i - 1].is_index() ? segs[i - 1].key : "";
    if (!found) {
      if (parent_key == "parameters") {
        for (size_t m = i; m <= end; ++m) key += (m > i ? "." : "") + segs[m].key;
        taken = end;
      } else {
        key = segs[i].key;
      }
    }
    where += (where.empty() ? "" : ".") + key;
    if (taken + 1 == segs.size()) {
      if (found) {
        const Kind before = scalar_kind(cur[key]);
        const Kind after = scalar_kind(value);
        if ((before == Kind::kNumber || before == Kind::kBool) && after != before) {
          return invalid("'" + o.value + "' is not " + kind_name(before) + " (the scenario has " +
                         cur[key].Scalar() + " there)");
        }
        if (cur[key].IsMap() || cur[key].IsSequence()) {
          if (value.Type() != cur[key].Type()) {
            return invalid(where + " is a " + (cur[key].IsMap() ? "mapping" : "list") +
                           "; give a value of that form or a path into it");
          }
        }
      }
      cur[key] = value;
      return Status();
    }
    if (!found) cur[key] = YAML::Node(YAML::NodeType::Map);
    YAML::Node next = cur[key];
    cur.reset(next);
    i = taken;
  }
  return Status();
}

}  // namespace

Result<Override> parse_override(std::string_view text) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos) {
    return Status(StatusCode::kInvalidArgument, "'" + std::string(text) + "': expected PATH=VALUE");
  }
  Override o{std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
  if (o.path.empty()) {
    return Status(StatusCode::kInvalidArgument,
                  "'" + std::string(text) + "': the path before '=' is empty");
  }
  if (o.value.empty()) {
    return Status(StatusCode::kInvalidArgument,
                  "'" + std::string(text) + "': the value after '=' is empty");
  }
  if (const Result<std::vector<Segment>> segs = parse_path(o.path); !segs.ok()) {
    return Status(StatusCode::kInvalidArgument, "'" + o.path + "': " + segs.status().message());
  }
  return o;
}

OverrideResult apply_overrides(std::string_view yaml, const std::vector<Override>& overrides) {
  OverrideResult r;
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception&) {
    r.yaml = std::string(yaml);  // the validation names the syntax error with its position
    return r;
  }
  if (!root.IsMap()) {
    r.yaml = std::string(yaml);
    return r;
  }
  for (const Override& o : overrides) {
    try {
      if (const Status s = apply_one(root, o); !s.ok()) {
        r.errors.push_back("--set " + o.to_string() + ": " + s.message());
      }
    } catch (const YAML::Exception& e) {
      r.errors.push_back("--set " + o.to_string() + ": " + e.msg);
    }
  }
  if (!r.errors.empty()) return r;
  YAML::Emitter out;
  out << root;
  r.yaml = std::string(out.c_str()) + "\n";
  return r;
}

ValidationResult load_scenario_file_with(const std::filesystem::path& path,
                                         const std::vector<Override>& overrides,
                                         const LoadOptions& opts) {
  if (overrides.empty()) return load_scenario_file(path, opts);
  std::ifstream in(path, std::ios::binary);
  if (!in) return load_scenario_file(path, opts);  // it says why
  std::stringstream ss;
  ss << in.rdbuf();
  OverrideResult o = apply_overrides(ss.str(), overrides);
  if (!o.ok()) {
    ValidationResult r;
    for (auto& e : o.errors) r.errors.push_back({path.string(), {}, "", std::move(e)});
    return r;
  }
  std::filesystem::path base = path.parent_path();
  if (base.empty()) base = ".";
  return load_scenario_text(o.yaml, path.string(), base, opts);
}

}  // namespace fieldproof::scenario
