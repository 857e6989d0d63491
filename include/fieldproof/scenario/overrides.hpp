// Scenario values replaced by path (`fieldproof run --set PATH=VALUE`, `fieldproof sweep --param`).
//
//   std::string error;
//   auto o = parse_override("vehicles[0].parameters.controller.max_linear=0.6", &error);
//   OverrideResult r = apply_overrides(yaml_text, {*o});   // r.errors, or r.yaml to validate
//
// A path is keys and list indexes as the scenario's field paths are written (`time.rtf`,
// `assertions[0].tolerance_m`, `vehicles[0].parameters.controller.max_linear`). At each mapping
// the longest run of the following keys joined by '.' that is a key of the file is taken (dotted
// parameter keys), a `parameters` map takes the rest of the path as one dotted key, and a key that
// is not written is added (the validation of the result then names an unknown field). A list
// index must exist. VALUE is read as YAML (0.6, true, 30s, "a b"); replacing a number or a
// boolean by a value of another kind is an error.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fieldproof/util/status.hpp"

namespace fieldproof::scenario {

struct Override {
  std::string path;
  std::string value;
  std::string to_string() const { return path + "=" + value; }
};

// "PATH=VALUE" split at the first '='; an invalid_argument Status saying why when there is no
// '=' or the path or value is empty or the path does not parse.
Result<Override> parse_override(std::string_view text);

struct OverrideResult {
  std::string yaml;                 // the scenario with the values replaced (when no error)
  std::vector<std::string> errors;  // "--set PATH=VALUE: what is wrong"
  bool ok() const { return errors.empty(); }
};

// Applies `overrides` in order to the scenario YAML `yaml`. Never throws.
OverrideResult apply_overrides(std::string_view yaml, const std::vector<Override>& overrides);

struct LoadOptions;
struct ValidationResult;
// load_scenario_file with `overrides` applied before validation (an override that does not
// apply is an error of the result; line numbers then refer to the file as re-emitted, the field
// paths and the file name stay those of the file).
ValidationResult load_scenario_file_with(const std::filesystem::path& path,
                                         const std::vector<Override>& overrides,
                                         const LoadOptions& opts);

}  // namespace fieldproof::scenario
