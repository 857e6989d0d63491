// Small helpers shared by the engine's subcommands (world, validate, schema, run).
#pragma once

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "fieldproof/engine/stack_host.hpp"

namespace fieldproof::cli {

// A stack named on the command line, found as a scenario's would be (against the working
// directory): a plugin (a path with a '/', or a name N as N, libN.so or N.so here, on
// FIELDPROOF_PLUGIN_PATH and in the installed stack folder) checked by its ELF symbols, or a
// command line (argv split at spaces; the program here, on PATH or beside fieldproof). nullopt
// and *error when it is not there or not a stack plugin.
inline std::optional<engine::StackSpec> resolve_stack(const std::string& plugin,
                                                      const std::string& command,
                                                      std::string* error) {
  engine::StackSpec spec;
  const std::filesystem::path here = std::filesystem::current_path();
  const std::filesystem::path tools = engine::executable_dir();
  if (!command.empty()) {
    std::vector<std::string> argv;
    for (size_t at = 0; at < command.size();) {
      const size_t space = command.find(' ', at);
      const size_t end = space == std::string::npos ? command.size() : space;
      if (end > at) argv.push_back(command.substr(at, end - at));
      at = end + 1;
    }
    if (argv.empty()) {
      *error = "the stack command is empty";
      return std::nullopt;
    }
    const engine::Resolved r = engine::find_program(argv[0], here, {tools});
    if (!r) {
      *error = r.error;
      return std::nullopt;
    }
    argv[0] = r.path;
    spec.kind = engine::StackSpec::Kind::kProcess;
    spec.argv = argv;
    return spec;
  }
  const engine::Resolved r = engine::find_stack_plugin(plugin, here, engine::stack_plugin_dirs());
  if (!r) {
    *error = r.error;
    return std::nullopt;
  }
  if (const std::string bad = engine::check_stack_plugin(r.path); !bad.empty()) {
    *error = r.path + ": " + bad;
    return std::nullopt;
  }
  spec.kind = engine::StackSpec::Kind::kPlugin;
  spec.plugin = r.path;
  return spec;
}

// The options `run` and `sweep` share, declared once so they mean and say the same: where run
// directories go, and the pace cap given to every run.
inline void add_run_output_options(CLI::App* cmd, std::string* runs_dir,
                                   std::optional<double>* max_rtf) {
  cmd->add_option("--runs-dir", *runs_dir, "where run directories go (default runs)");
  cmd->add_option("--max-rtf", *max_rtf,
                  "pace cap over the scenario's time.rtf (simulated / wall time; 0 = unpaced)");
}

// True when stderr is a terminal (progress is shown only then).
inline bool stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

}  // namespace fieldproof::cli
