// Private: the generic walk of a YAML node against a ParamSpec table, producing a ParamValue tree
// and diagnostics. The model builder (load.cpp) reads the tree; nothing else knows yaml-cpp.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "fieldproof/scenario/registry.hpp"
#include "fieldproof/scenario/scenario.hpp"

namespace fieldproof::scenario::detail {

// A reference to a vehicle, timeline entry or assertion, checked once the whole file is read.
struct RefUse {
  Ref ref = Ref::kNone;
  std::string value;
  SourcePos pos;
  std::string path;
};

class Walker {
 public:
  Walker(const SpecRegistry& registry, std::string file, std::string_view source,
         std::vector<Diagnostic>& errors)
      : reg_(registry), file_(std::move(file)), source_(source), errors_(errors) {}

  // Walks `node` (the value at `path`) against `spec`. Values that do not validate are left out
  // of the result (an error is recorded for each).
  ParamValue walk(const YAML::Node& node, const ParamSpec& spec, const std::string& path);

  const std::vector<RefUse>& refs() const { return refs_; }

  void error(SourcePos pos, const std::string& path, const std::string& message);
  static SourcePos pos_of(const YAML::Node& node);

 private:
  ParamValue walk_object(const YAML::Node& node, const std::vector<ParamSpec>& fields,
                         const std::vector<std::string>& exactly_one_of,
                         const std::vector<std::string>& at_least_one_of,
                         const std::vector<std::pair<std::string, std::vector<std::string>>>& deps,
                         const std::string& path, const std::string& what);
  ParamValue walk_typed(const YAML::Node& node, const ParamSpec& spec, const std::string& path);
  // walk()'s cases, one per kind of value; v holds the node's position.
  ParamValue walk_text(const YAML::Node& node, const ParamSpec& spec, const std::string& path,
                       ParamValue v);
  ParamValue walk_bool(const YAML::Node& node, const ParamSpec& spec, const std::string& path,
                       ParamValue v);
  ParamValue walk_integer(const YAML::Node& node, const ParamSpec& spec, const std::string& path,
                          ParamValue v);
  ParamValue walk_number(const YAML::Node& node, const ParamSpec& spec, const std::string& path,
                         ParamValue v);
  ParamValue walk_duration(const YAML::Node& node, const ParamSpec& spec, const std::string& path,
                           ParamValue v);
  ParamValue walk_enum(const YAML::Node& node, const ParamSpec& spec, const std::string& path,
                       ParamValue v);
  ParamValue walk_scalar(const YAML::Node& node, const ParamSpec& spec, const std::string& path,
                         ParamValue v);
  ParamValue walk_bool_or_string(const YAML::Node& node, const ParamSpec& spec,
                                 const std::string& path, ParamValue v);
  ParamValue walk_list(const YAML::Node& node, const ParamSpec& spec, const std::string& path,
                       ParamValue v);
  ParamValue walk_map(const YAML::Node& node, const ParamSpec& spec, const std::string& path,
                      ParamValue v);
  ParamValue walk_placement(const YAML::Node& node, const std::string& path);
  ParamValue walk_condition(const YAML::Node& node, const ParamSpec& spec, const std::string& path,
                            const std::vector<std::string>& names);
  ParamValue default_value(const ParamSpec& spec, const std::string& path);
  bool scalar_or_error(const YAML::Node& node, const ParamSpec& spec, const std::string& path);

  const SpecRegistry& reg_;
  std::string file_;
  std::string_view source_;
  std::vector<Diagnostic>& errors_;
  std::vector<RefUse> refs_;
  // The sibling `signals` names, for a kSignals condition being walked.
  std::vector<std::string> signal_names_;
};

std::string join(const std::vector<std::string>& items, std::string_view sep = ", ");
// "a duration like 0.1, 250ms, 10m" and friends: what a kind accepts, for messages.
std::string accepted(const ParamSpec& spec);

}  // namespace fieldproof::scenario::detail
