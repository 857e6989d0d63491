// Finding a vehicle's software before anything runs: programs on the scenario's folder and PATH,
// stack plugins on the plugin path, and the ELF check that says whether a library is a stack
// plugin of this ABI without loading it.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string_view>

#include "fieldproof/assertions/library_symbols.hpp"
#include "fieldproof/engine/stack_host.hpp"
#include "fieldproof/stacks/plugin_api.hpp"

namespace fieldproof::engine {

namespace fs = std::filesystem;

std::string StackSpec::describe() const {
  switch (kind) {
    case Kind::kProcess:
      if (!as_written.empty()) return as_written + " (process)";
      return (argv.empty() ? std::string("?") : argv.front()) + " (process)";
    case Kind::kPlugin:
      return (as_written.empty() ? plugin : as_written) + " (plugin)";
    case Kind::kNone:
      break;
  }
  return "none";
}

std::string stack_participant(const std::string& vehicle) { return vehicle + "_nav"; }

fs::path executable_dir() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : self.parent_path();
}

namespace {

std::vector<fs::path> split_path(const char* value) {
  std::vector<fs::path> out;
  if (value == nullptr) return out;
  std::string_view rest(value);
  while (!rest.empty()) {
    const auto colon = rest.find(':');
    const std::string_view part = rest.substr(0, colon);
    if (!part.empty()) out.emplace_back(std::string(part));
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return out;
}

bool is_regular(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

bool is_executable_file(const fs::path& p) { return is_regular(p) && access(p.c_str(), X_OK) == 0; }

std::string absolute_of(const fs::path& p) {
  std::error_code ec;
  fs::path a = fs::absolute(p, ec);
  return (ec ? p : a.lexically_normal()).string();
}

}  // namespace

std::vector<fs::path> stack_plugin_dirs(const fs::path& tool_dir) {
  std::vector<fs::path> dirs = split_path(std::getenv("FIELDPROOF_PLUGIN_PATH"));
  const fs::path tools = tool_dir.empty() ? executable_dir() : tool_dir;
  if (!tools.empty()) {
#ifdef FIELDPROOF_STACK_PLUGIN_DIR
    dirs.push_back(tools.parent_path() / FIELDPROOF_STACK_PLUGIN_DIR);
#endif
    dirs.push_back(tools.parent_path() / "lib" / "fieldproof" / "stacks");
    dirs.push_back(tools.parent_path() / "lib");
  }
  return dirs;
}

Resolved find_program(const std::string& program, const fs::path& base_dir,
                      const std::vector<fs::path>& extra_dirs) {
  Resolved r;
  if (program.empty()) {
    r.error = "the command is empty";
    return r;
  }
  const auto check = [&r](const fs::path& p) {
    std::error_code ec;
    if (!fs::exists(p, ec)) return false;
    if (!is_regular(p)) {
      r.error = "'" + p.string() + "' is not a regular file";
      return true;
    }
    if (access(p.c_str(), X_OK) != 0) {
      r.error = "'" + p.string() +
                "' is not executable (chmod +x, or run it through its "
                "interpreter: command: [python3, " +
                p.filename().string() + "])";
      return true;
    }
    r.path = absolute_of(p);
    return true;
  };
  if (program.find('/') != std::string::npos) {
    const fs::path p = fs::path(program).is_absolute() ? fs::path(program) : base_dir / program;
    if (!check(p)) r.error = "the program '" + p.string() + "' does not exist";
    return r;
  }
  std::vector<fs::path> dirs{base_dir};
  for (const fs::path& d : split_path(std::getenv("PATH"))) dirs.push_back(d);
  for (const fs::path& d : extra_dirs) dirs.push_back(d);
  for (const fs::path& d : dirs) {
    const fs::path p = d / program;
    if (is_executable_file(p)) {
      r.path = absolute_of(p);
      return r;
    }
  }
  r.error = "the program '" + program +
            "' was found neither in the scenario's folder nor on PATH nor beside fieldproof";
  return r;
}

Resolved find_stack_plugin(const std::string& plugin, const fs::path& base_dir,
                           const std::vector<fs::path>& dirs) {
  Resolved r;
  if (plugin.empty()) {
    r.error = "the plugin is empty";
    return r;
  }
  if (plugin.find('/') != std::string::npos) {
    const fs::path p = fs::path(plugin).is_absolute() ? fs::path(plugin) : base_dir / plugin;
    std::error_code ec;
    if (!fs::exists(p, ec)) {
      r.error = "the stack plugin '" + p.string() + "' does not exist";
    } else if (!is_regular(p)) {
      r.error = "the stack plugin '" + p.string() + "' is not a regular file";
    } else {
      r.path = absolute_of(p);
    }
    return r;
  }
  std::string searched;
  std::vector<fs::path> folders{base_dir};
  folders.insert(folders.end(), dirs.begin(), dirs.end());
  for (const fs::path& d : folders) {
    for (const std::string& name : {plugin, "lib" + plugin + ".so", plugin + ".so"}) {
      const fs::path p = d / name;
      if (is_regular(p)) {
        r.path = absolute_of(p);
        return r;
      }
    }
    searched += (searched.empty() ? "" : ", ") + d.string();
  }
  r.error = "no stack plugin '" + plugin + "' (looked for " + plugin + ", lib" + plugin +
            ".so and " + plugin + ".so in " + (searched.empty() ? "no folder" : searched) +
            "; set FIELDPROOF_PLUGIN_PATH or give the library's path)";
  return r;
}

Status check_stack_plugin(const std::string& path) {
  const auto refuse = [](std::string why) {
    return Status(StatusCode::kInvalidArgument, std::move(why));
  };
  const assertions::LibrarySymbols lib = assertions::read_library_symbols(path);
  if (!lib.error.empty()) return refuse(lib.error);
  const assertions::LibrarySymbol* create = lib.find(FIELDPROOF_STACK_CREATE_SYMBOL);
  const assertions::LibrarySymbol* abi = lib.find(FIELDPROOF_STACK_ABI_SYMBOL);
  if (create == nullptr) {
    return refuse("it is not a stack plugin: it does not export " FIELDPROOF_STACK_CREATE_SYMBOL
                  " (plugin_api.hpp)");
  }
  if (create->kind != assertions::LibrarySymbol::Kind::kFunction) {
    return refuse("it exports " FIELDPROOF_STACK_CREATE_SYMBOL " as data, not as a function");
  }
  if (abi == nullptr) {
    return refuse("it does not say its stack ABI version (no " FIELDPROOF_STACK_ABI_SYMBOL
                  "; FIELDPROOF_STACK_DECLARE_ABI() in plugin_api.hpp)");
  }
  if (abi->kind != assertions::LibrarySymbol::Kind::kObject || !abi->u32_value) {
    return refuse(FIELDPROOF_STACK_ABI_SYMBOL " is not a 32-bit constant with a stored value");
  }
  if (*abi->u32_value != FIELDPROOF_STACK_ABI_VERSION) {
    return refuse("it is built for stack ABI version " + std::to_string(*abi->u32_value) +
                  "; this engine loads version " + std::to_string(FIELDPROOF_STACK_ABI_VERSION));
  }
  return {};
}

Result<StackSpec> resolve_stack(const std::string& plugin, const std::string& command,
                                const fs::path& base_dir) {
  StackSpec spec;
  if (!command.empty()) {
    std::vector<std::string> argv;
    for (size_t at = 0; at < command.size();) {
      const size_t space = command.find(' ', at);
      const size_t end = space == std::string::npos ? command.size() : space;
      if (end > at) argv.push_back(command.substr(at, end - at));
      at = end + 1;
    }
    if (argv.empty()) return Status(StatusCode::kInvalidArgument, "the stack command is empty");
    const Resolved r = find_program(argv[0], base_dir, {executable_dir()});
    if (!r) return Status(StatusCode::kNotFound, r.error);
    argv[0] = r.path;
    spec.kind = StackSpec::Kind::kProcess;
    spec.argv = std::move(argv);
    return spec;
  }
  const Resolved r = find_stack_plugin(plugin, base_dir, stack_plugin_dirs());
  if (!r) return Status(StatusCode::kNotFound, r.error);
  if (const Status bad = check_stack_plugin(r.path); !bad.ok()) {
    return Status(StatusCode::kInvalidArgument, r.path + ": " + bad.message());
  }
  spec.kind = StackSpec::Kind::kPlugin;
  spec.plugin = r.path;
  return spec;
}

}  // namespace fieldproof::engine
