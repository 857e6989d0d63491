// Assertion plugins: an assertion type in a shared library (docs/assertions.md, plugins; the
// example is examples/plugins/visits_waypoints).
//
// A plugin library exports ONE symbol, `fieldproof_assertions_plugin_v1`, which the macro below
// defines. Its body receives a PluginRegistrar and adds each type: the table the scenario is
// validated against (scenario::TypeSpec: type, summary, parameters, metrics) and the
// AssertionType that plans it and makes its Checker (checker.hpp).
//
//   #include "fieldproof/assertions/plugin.hpp"
//   FIELDPROOF_ASSERTIONS_PLUGIN(registrar) {
//     registrar.add(visits_waypoints_spec(), std::make_unique<VisitsWaypointsType>());
//   }
//
// The macro is a shorthand for
//
//   extern "C" const FieldproofAssertionsPluginV1* fieldproof_assertions_plugin_v1();
//
// returning a descriptor (the API version, the ABI key the library was built with, the function
// that registers the types). The engine checks the version and the key before it calls anything
// of C++, so a library built against other fieldproof headers is refused, not run.
//
// Rules a type must keep (anything else reports the library and why, and adds none of its types):
// the type is namespaced (`<namespace>.<name>`, lower case, digits and '_':
// example.visits_waypoints); it is not taken (by a built-in or another plugin); its TypeSpec
// validates (SpecRegistry::add_assertion) and has a summary; TypeSpec::type equals
// AssertionType::name(); the entry point registers at least one type and does not throw.
//
// Type tables as data. `fieldproof validate` (and `schema`) run nothing of a plugin: they read
// its types' tables (TypeSpecs) from the library's `.fieldproof.assertions` section, which the
// plugin's build embeds: fieldproof_assertion_plugin_tables(<target>) in cmake/fieldproof.cmake
// runs `fieldproof-plugin-metadata LIB` after each link (the only time the plugin's code runs
// outside `run`: on its author's build) and adds its output with objcopy. A library without the
// section still runs (`run` loads it), but validation refuses its types as unknown, saying why.
// When a loaded library carries tables, the types it registers must match them exactly.
//
// Loading (load_plugins): the scenario's `plugins:` libraries, then every `*.so` file of each
// directory of FIELDPROOF_PLUGIN_PATH (':'-separated, files in name order); a library met twice is
// loaded once. A library that loaded is never unloaded (the checkers it made run its code), so
// load a set once per process and keep it. Not thread-safe against concurrent loads.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "fieldproof/assertions/checker.hpp"
#include "fieldproof/scenario/registry.hpp"

namespace fieldproof::assertions {

// Bumped when checker.hpp, scenario.hpp or registry.hpp change in a way a built plugin cannot
// follow. Version 2: times in the Checker API are SimTime (integer nanoseconds) instead of double
// seconds; a plugin built for version 1 is refused ("built for plugin API v1"), never run with
// its doubles read as nanoseconds. The entry point's name carries kPluginEntryVersion, the
// version of the descriptor below (unchanged since 1), so that an old plugin is still found and
// refused with its version rather than reported as not a plugin at all.
inline constexpr uint32_t kPluginApiVersion = 2;
inline constexpr uint32_t kPluginEntryVersion = 1;

// A fingerprint of the layouts a plugin and the engine share (the standard library's ABI and the
// sizes of the types that cross the boundary). Both sides compute it from their own headers; a
// plugin whose key differs from the engine's was built against other headers and is refused.
constexpr uint64_t plugin_abi_key() {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a over the sizes
  auto mix = [&h](uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xffU;
      h *= 1099511628211ULL;
    }
  };
  mix(kPluginApiVersion);
#ifdef _GLIBCXX_USE_CXX11_ABI
  mix(_GLIBCXX_USE_CXX11_ABI);
#endif
  mix(sizeof(std::string));
  mix(sizeof(nlohmann::json));
  mix(sizeof(scenario::ParamSpec));
  mix(sizeof(scenario::TypeSpec));
  mix(sizeof(scenario::ParamValue));
  mix(sizeof(scenario::AssertionSpec));
  mix(sizeof(scenario::Scenario));
  mix(sizeof(Sample));
  mix(sizeof(Watch));
  mix(sizeof(PlannedAssertion));
  mix(sizeof(AssertionResult));
  mix(sizeof(PlanContext));
  mix(sizeof(Checker));
  return h;
}

// What a plugin's entry point is given: add() each type it provides.
class PluginRegistrar {
 public:
  virtual ~PluginRegistrar() = default;
  // `spec.type` must equal `type->name()`; spec.plugin is filled in by the loader.
  virtual void add(scenario::TypeSpec spec, std::unique_ptr<AssertionType> type) = 0;
};

}  // namespace fieldproof::assertions

extern "C" {
// The descriptor fieldproof_assertions_plugin_v1() returns (a plain struct, so the version and
// the key can be read before any C++ object crosses the boundary).
struct FieldproofAssertionsPluginV1 {
  uint32_t api_version;  // kPluginApiVersion the library was built with
  uint64_t abi_key;      // plugin_abi_key() the library was built with
  void (*register_types)(fieldproof::assertions::PluginRegistrar& registrar);
};
}

// Defines the entry point; the block that follows is the registration function's body.
#define FIELDPROOF_ASSERTIONS_PLUGIN(registrar)                                              \
  static void fieldproof_register_assertion_types(                                           \
      fieldproof::assertions::PluginRegistrar& registrar);                                   \
  extern "C" __attribute__((visibility("default"))) const FieldproofAssertionsPluginV1*      \
  fieldproof_assertions_plugin_v1() {                                                        \
    static const FieldproofAssertionsPluginV1 descriptor{                                    \
        fieldproof::assertions::kPluginApiVersion, fieldproof::assertions::plugin_abi_key(), \
        &fieldproof_register_assertion_types};                                               \
    return &descriptor;                                                                      \
  }                                                                                          \
  static void fieldproof_register_assertion_types(                                           \
      fieldproof::assertions::PluginRegistrar& registrar)

namespace fieldproof::assertions {

// A library that could not be used, and why ("/x/libfoo.so: exports no
// fieldproof_assertions_plugin_v1 ...").
struct PluginProblem {
  std::string library;
  std::string message;
  std::string to_string() const { return library + ": " + message; }
};

struct LoadedPlugin {
  std::string library;             // the path it was loaded from
  std::vector<std::string> types;  // the types it added
  bool code_loaded = true;         // false: only its tables were read (no AssertionType)
};

// The section an assertion plugin's type tables are carried in, and its contents for `specs`
// (type_specs_to_json plus the plugin API version and ABI key of this build).
inline constexpr const char* kPluginTablesSection = ".fieldproof.assertions";
std::string plugin_tables_json(const std::vector<scenario::TypeSpec>& specs);

// The built-ins plus every plugin type that loaded. `types` and `registry` are never null; each
// plugin type is in both (TypeSpec::plugin names its library) or in neither, except with
// load_code false: then plugin types are in `registry` only.
struct PluginSet {
  std::shared_ptr<const AssertionTypes> types;
  std::shared_ptr<const scenario::SpecRegistry> registry;
  std::vector<LoadedPlugin> loaded;
  std::vector<PluginProblem> problems;
  bool ok() const { return problems.empty(); }
};

struct PluginLoadOptions {
  // Libraries to load, each by path (a scenario's `plugins:`, resolved).
  std::vector<std::filesystem::path> libraries;
  // Directories whose every *.so is loaded, ':'-separated (FIELDPROOF_PLUGIN_PATH's syntax).
  // A directory that does not exist is a problem; empty entries are ignored.
  std::string search_path;
  // false: nothing of any library is run (no dlopen). Each library's tables are read from its
  // file into `registry`; `types` stays the built-ins (a plugin's assertions cannot be planned).
  bool load_code = true;
  // A loaded library's registered types are compared with the tables it carries (false only for
  // fieldproof-plugin-metadata, which writes them).
  bool compare_tables = true;
};

// FIELDPROOF_PLUGIN_PATH, or "" when unset.
std::string plugin_search_path_from_env();

// Loads the libraries and the search path's libraries (in that order) on top of the built-ins.
// Never throws for a bad library: it is a problem, and none of its types are added.
PluginSet load_plugins(const PluginLoadOptions& options);

// The built-in types alone (no library loaded), as a PluginSet.
PluginSet builtin_plugin_set();

}  // namespace fieldproof::assertions
