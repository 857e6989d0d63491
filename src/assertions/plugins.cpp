// Loading assertion plugins (plugin.hpp): dlopen, the entry point's descriptor, the checks on
// every type, all-or-nothing per library; or, without loading anything, the type tables a plugin
// carries as data (its .fieldproof.assertions section).
#include <dlfcn.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include "fieldproof/assertions/library_symbols.hpp"
#include "fieldproof/assertions/plugin.hpp"

namespace fieldproof::assertions {

namespace {

namespace fs = std::filesystem;

constexpr const char* kEntryPoint = "fieldproof_assertions_plugin_v1";
constexpr uint64_t kMaxTablesBytes = uint64_t{1} << 20;

// A built-in type seen through the extended set (the built-ins live in AssertionTypes::builtin()).
class Forward : public AssertionType {
 public:
  explicit Forward(const AssertionType* inner) : inner_(inner) {}
  std::string_view name() const override { return inner_->name(); }
  PlannedAssertion plan(const scenario::AssertionSpec& spec,
                        const PlanContext& context) const override {
    return inner_->plan(spec, context);
  }
  std::unique_ptr<Checker> checker(const PlannedAssertion& planned) const override {
    return inner_->checker(planned);
  }

 private:
  const AssertionType* inner_;
};

struct Entry {
  scenario::TypeSpec spec;
  std::unique_ptr<AssertionType> type;
};

class CollectingRegistrar : public PluginRegistrar {
 public:
  void add(scenario::TypeSpec spec, std::unique_ptr<AssertionType> type) override {
    entries.push_back({std::move(spec), std::move(type)});
  }
  std::vector<Entry> entries;
};

bool namespaced(const std::string& type) {
  const size_t dot = type.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == type.size()) return false;
  if (type.find('.', dot + 1) != std::string::npos) return false;
  auto word_ok = [](std::string_view w) {
    if (!(w[0] >= 'a' && w[0] <= 'z')) return false;
    return std::all_of(w.begin(), w.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    });
  };
  const std::string_view t(type);
  return word_ok(t.substr(0, dot)) && word_ok(t.substr(dot + 1));
}

std::string hex(uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

// What a library's .fieldproof.assertions section says: its types' tables and the version and
// ABI key the plugin was built with.
struct Tables {
  bool found = false;
  std::string error;  // why the section cannot be used
  std::vector<scenario::TypeSpec> specs;
  std::optional<uint32_t> api_version;
  std::optional<uint64_t> abi_key;
};

Tables read_tables(const std::string& path) {
  Tables t;
  const LibrarySection section = read_library_section(path, kPluginTablesSection, kMaxTablesBytes);
  t.found = section.found;
  if (!section.error.empty() || !section.found) {
    t.error = section.error;
    return t;
  }
  if (auto e = scenario::type_specs_from_json(section.bytes, t.specs)) {
    t.error = std::string("its ") + kPluginTablesSection + " section is unreadable: " + *e;
    return t;
  }
  // Parsed once more for the two numbers (type_specs_from_json accepted the text).
  const nlohmann::json j = nlohmann::json::parse(section.bytes, nullptr, false);
  if (j.is_object()) {
    if (auto it = j.find("api_version"); it != j.end() && it->is_number_unsigned()) {
      t.api_version = it->get<uint32_t>();
    }
    if (auto it = j.find("abi_key"); it != j.end() && it->is_string()) {
      try {
        t.abi_key = std::stoull(it->get<std::string>(), nullptr, 16);
      } catch (const std::exception&) {
      }
    }
  }
  return t;
}

class Loader {
 public:
  explicit Loader(const PluginLoadOptions& options)
      : load_code_(options.load_code), compare_tables_(options.compare_tables) {
    auto types = std::make_shared<AssertionTypes>();
    const AssertionTypes& builtin = AssertionTypes::builtin();
    for (const auto& n : builtin.names()) types->add(std::make_unique<Forward>(builtin.find(n)));
    types_ = types;
    registry_ = std::make_shared<scenario::SpecRegistry>(scenario::SpecRegistry::builtin());
  }

  // scanning: met in a FIELDPROOF_PLUGIN_PATH directory (which stack plugins share) rather than
  // named by the scenario.
  void load(const fs::path& library, bool scanning = false) {
    std::error_code ec;
    fs::path canonical = fs::weakly_canonical(library, ec);
    if (ec) canonical = library;
    if (!seen_.insert(canonical.string()).second) return;
    const std::string lib = library.string();
    if (!fs::exists(library, ec)) {
      problem(lib, "no such file");
      return;
    }
    // Read before anything of the library runs: an entry point exported as data would crash the
    // call, and a stack plugin on the shared search path is not ours to load.
    const LibrarySymbols symbols = read_library_symbols(canonical.string());
    // Not a library of this machine (text, another architecture, a program): refused unread.
    if (!symbols.error.empty()) {
      problem(lib, symbols.error);
      return;
    }
    {
      const LibrarySymbol* entry = symbols.find(kEntryPoint);
      if (entry == nullptr && scanning && symbols.find("fieldproof_stack_create") != nullptr) {
        return;
      }
      if (entry != nullptr && entry->kind != LibrarySymbol::Kind::kFunction) {
        problem(lib, std::string("exports ") + kEntryPoint +
                         " as data, not as a function (define it with "
                         "FIELDPROOF_ASSERTIONS_PLUGIN, fieldproof/assertions/plugin.hpp)");
        return;
      }
    }
    if (!load_code_) {
      load_tables(lib, canonical.string(), symbols);
      return;
    }
    // RTLD_LOCAL: a plugin's symbols (its copy of the assertion library) stay its own.
    void* handle = dlopen(canonical.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* e = dlerror();
      problem(lib, std::string("cannot be loaded: ") + (e ? e : "dlopen failed"));
      return;
    }
    std::vector<std::string> why;
    std::vector<Entry> entries = call_entry_point(handle, why);
    if (why.empty()) check(entries, why);
    if (why.empty() && compare_tables_) compare_with_tables(canonical.string(), entries, why);
    if (!why.empty()) {
      for (auto& w : why) problem(lib, w);
      entries.clear();  // the library's objects go before the library
      dlclose(handle);
      return;
    }
    // Commit: every type of the library, or (above) none.
    LoadedPlugin loaded{lib, {}, /*code_loaded=*/true};
    for (auto& e : entries) {
      e.spec.plugin = lib;
      loaded.types.push_back(e.spec.type);
      (void)registry_->add_assertion(e.spec);  // checked on a copy in check()
      types_->add(std::move(e.type));
      owner_[loaded.types.back()] = lib;
    }
    loaded_.push_back(std::move(loaded));
  }

  void load_search_path(const std::string& search_path) {
    std::stringstream in(search_path);
    std::string dir;
    while (std::getline(in, dir, ':')) {
      if (dir.empty()) continue;
      std::error_code ec;
      if (!fs::is_directory(dir, ec)) {
        problem(dir, "FIELDPROOF_PLUGIN_PATH names a directory that does not exist");
        continue;
      }
      std::vector<fs::path> libs;
      for (const auto& f : fs::directory_iterator(dir, ec)) {
        if (f.path().extension() == ".so" && (f.is_regular_file(ec) || f.is_symlink(ec))) {
          libs.push_back(f.path());
        }
      }
      std::sort(libs.begin(), libs.end());
      for (const auto& l : libs) load(l, /*scanning=*/true);
    }
  }

  PluginSet result() && {
    PluginSet s;
    s.types = std::move(types_);
    s.registry = std::move(registry_);
    s.loaded = std::move(loaded_);
    s.problems = std::move(problems_);
    return s;
  }

 private:
  // Validation without running anything of the library: its tables, read from the file.
  void load_tables(const std::string& lib, const std::string& path, const LibrarySymbols& symbols) {
    if (symbols.find(kEntryPoint) == nullptr) {
      for (int v = 0; v <= 9; ++v) {
        const std::string other = "fieldproof_assertions_plugin_v" + std::to_string(v);
        if (v != static_cast<int>(kPluginEntryVersion) && symbols.find(other) != nullptr) {
          problem(lib, "built for plugin API v" + std::to_string(v) + " (exports " + other +
                           "); this fieldproof loads " + kEntryPoint +
                           ": rebuild the plugin against this fieldproof");
          return;
        }
      }
      problem(lib, std::string("exports no ") + kEntryPoint +
                       " (not an assertion plugin: define the entry point with "
                       "FIELDPROOF_ASSERTIONS_PLUGIN, fieldproof/assertions/plugin.hpp)");
      return;
    }
    Tables t = read_tables(path);
    if (!t.error.empty()) {
      problem(lib, t.error);
      return;
    }
    if (!t.found) {
      problem(lib, std::string("carries no type tables (no ") + kPluginTablesSection +
                       " section), and validation runs no plugin code: build it with "
                       "fieldproof_assertion_plugin_tables() (cmake/fieldproof.cmake), which "
                       "embeds what fieldproof-plugin-metadata prints");
      return;
    }
    if (t.api_version && *t.api_version != kPluginApiVersion) {
      problem(lib, "ABI version mismatch: built for plugin API v" +
                       std::to_string(*t.api_version) + ", this fieldproof loads v" +
                       std::to_string(kPluginApiVersion) + ": rebuild the plugin");
      return;
    }
    if (t.abi_key && *t.abi_key != plugin_abi_key()) {
      problem(lib, "ABI mismatch: built against other fieldproof headers or another standard "
                   "library (ABI key " + hex(*t.abi_key) + ", this fieldproof " +
                       hex(plugin_abi_key()) + "): rebuild the plugin against this fieldproof");
      return;
    }
    std::vector<Entry> entries;
    for (auto& spec : t.specs) entries.push_back({std::move(spec), nullptr});
    std::vector<std::string> why;
    if (entries.empty()) why.push_back("its tables name no assertion type");
    check(entries, why);
    if (!why.empty()) {
      for (auto& w : why) problem(lib, w);
      return;
    }
    LoadedPlugin loaded{lib, {}, /*code_loaded=*/false};
    for (auto& e : entries) {
      e.spec.plugin = lib;
      loaded.types.push_back(e.spec.type);
      (void)registry_->add_assertion(e.spec);
      owner_[loaded.types.back()] = lib;
    }
    loaded_.push_back(std::move(loaded));
  }

  // A library that carries tables must register exactly those (the tables are what validate
  // checked the scenario against).
  void compare_with_tables(const std::string& path, const std::vector<Entry>& entries,
                           std::vector<std::string>& why) const {
    const Tables t = read_tables(path);
    if (!t.found) return;
    if (!t.error.empty()) {
      why.push_back(t.error);
      return;
    }
    std::vector<scenario::TypeSpec> registered;
    for (const auto& e : entries) {
      registered.push_back(e.spec);
      registered.back().plugin.clear();
    }
    if (scenario::type_specs_to_json(registered) != scenario::type_specs_to_json(t.specs)) {
      why.push_back(std::string("the types it registers differ from its ") +
                    kPluginTablesSection +
                    " tables (what validate checks scenarios against): rebuild the plugin so "
                    "the tables are written again");
    }
  }

  void problem(const std::string& lib, std::string message) {
    problems_.push_back({lib, std::move(message)});
  }

  static std::vector<Entry> call_entry_point(void* handle, std::vector<std::string>& why) {
    using EntryFn = const FieldproofAssertionsPluginV1* (*)();
    void* sym = dlsym(handle, kEntryPoint);
    if (sym == nullptr) {
      for (int v = 0; v <= 9; ++v) {
        if (v == static_cast<int>(kPluginEntryVersion)) continue;
        const std::string other = "fieldproof_assertions_plugin_v" + std::to_string(v);
        if (dlsym(handle, other.c_str()) != nullptr) {
          why.push_back("built for plugin API v" + std::to_string(v) + " (exports " + other +
                        "); this fieldproof loads " + kEntryPoint +
                        ": rebuild the plugin against this fieldproof");
          return {};
        }
      }
      why.push_back(std::string("exports no ") + kEntryPoint +
                    " (not an assertion plugin: define the entry point with "
                    "FIELDPROOF_ASSERTIONS_PLUGIN, fieldproof/assertions/plugin.hpp)");
      return {};
    }
    const FieldproofAssertionsPluginV1* d = nullptr;
    try {
      d = reinterpret_cast<EntryFn>(sym)();
    } catch (...) {
      why.push_back(std::string(kEntryPoint) + " threw");
      return {};
    }
    if (d == nullptr) {
      why.push_back(std::string(kEntryPoint) + " returned no descriptor");
      return {};
    }
    if (d->api_version != kPluginApiVersion) {
      why.push_back("ABI version mismatch: built for plugin API v" +
                    std::to_string(d->api_version) + ", this fieldproof loads v" +
                    std::to_string(kPluginApiVersion) + ": rebuild the plugin");
      return {};
    }
    if (d->abi_key != plugin_abi_key()) {
      why.push_back(
          "ABI mismatch: built against other fieldproof headers or another standard "
          "library (ABI key " +
          hex(d->abi_key) + ", this fieldproof " + hex(plugin_abi_key()) +
          "): rebuild the plugin against this fieldproof");
      return {};
    }
    if (d->register_types == nullptr) {
      why.push_back(std::string(kEntryPoint) + "'s descriptor has no register_types");
      return {};
    }
    CollectingRegistrar registrar;
    try {
      d->register_types(registrar);
    } catch (const std::exception& e) {
      why.push_back("registering its types threw: " + std::string(e.what()));
      return {};
    } catch (...) {
      why.push_back("registering its types threw (not a std::exception)");
      return {};
    }
    if (registrar.entries.empty()) why.push_back("registers no assertion type");
    return std::move(registrar.entries);
  }

  // Every type of one library, against the tables as they would be with it added.
  void check(const std::vector<Entry>& entries, std::vector<std::string>& why) const {
    scenario::SpecRegistry trial = *registry_;
    std::set<std::string> own;
    for (const auto& e : entries) {
      const std::string& t = e.spec.type;
      const std::string label = "type '" + t + "'";
      if (e.type == nullptr && load_code_) {
        why.push_back(label + ": no AssertionType given");
        continue;
      }
      if (e.type != nullptr && std::string(e.type->name()) != t) {
        why.push_back(label + ": its AssertionType is named '" + std::string(e.type->name()) +
                      "' (TypeSpec::type and AssertionType::name() must be equal)");
        continue;
      }
      if (!own.insert(t).second) {
        why.push_back(label + ": registered twice by this library");
        continue;
      }
      if (registry_->assertion(t) != nullptr || types_->find(t) != nullptr ||
          owner_.count(t) != 0) {
        auto it = owner_.find(t);
        why.push_back(label + " is already taken by " +
                      (it == owner_.end() ? std::string("a built-in type") : it->second));
        continue;
      }
      if (!namespaced(t)) {
        why.push_back(label +
                      ": a plugin's type is namespaced: <namespace>.<name>, lower case letters, "
                      "digits and '_' (e.g. example.visits_waypoints)");
        continue;
      }
      if (e.spec.summary.empty()) {
        why.push_back(label + ": the TypeSpec has no summary");
        continue;
      }
      std::set<std::string> metrics;
      bool metrics_ok = true;
      for (const auto& m : e.spec.metrics) {
        if (m.name.empty() || !metrics.insert(m.name).second) {
          why.push_back(label + ": metric '" + m.name + "' is empty or declared twice");
          metrics_ok = false;
        }
      }
      if (!metrics_ok) continue;
      if (auto err = trial.add_assertion(e.spec)) {
        why.push_back(label + ": its spec does not validate: " + *err);
      }
    }
  }

  bool load_code_;
  bool compare_tables_;
  std::shared_ptr<AssertionTypes> types_;
  std::shared_ptr<scenario::SpecRegistry> registry_;
  std::vector<LoadedPlugin> loaded_;
  std::vector<PluginProblem> problems_;
  std::set<std::string> seen_;
  std::map<std::string, std::string> owner_;  // plugin type -> library
};

}  // namespace

std::string plugin_tables_json(const std::vector<scenario::TypeSpec>& specs) {
  std::vector<scenario::TypeSpec> plain = specs;
  for (auto& s : plain) s.plugin.clear();
  nlohmann::json j = nlohmann::json::parse(scenario::type_specs_to_json(plain));
  j["api_version"] = kPluginApiVersion;
  j["abi_key"] = hex(plugin_abi_key()).substr(2);
  return j.dump(1);
}

std::string plugin_search_path_from_env() {
  const char* p = std::getenv("FIELDPROOF_PLUGIN_PATH");
  return p ? std::string(p) : std::string();
}

PluginSet load_plugins(const PluginLoadOptions& options) {
  Loader loader(options);
  for (const auto& l : options.libraries) loader.load(l);
  loader.load_search_path(options.search_path);
  return std::move(loader).result();
}

PluginSet builtin_plugin_set() { return load_plugins({}); }

}  // namespace fieldproof::assertions
