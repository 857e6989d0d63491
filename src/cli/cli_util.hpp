// Small helpers shared by the engine's subcommands (world, validate, schema, run).
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "fieldproof/engine/stack_host.hpp"

namespace fieldproof::cli {

// The stack `fieldproof world` drives its vehicles with: the reference stack, found like any
// scenario's (the plugin fieldproof_ugv_nav_plugin on the plugin path, or the program
// fieldproof-ugv-nav on PATH and beside fieldproof). nullopt and *error when it is not there.
inline std::optional<engine::StackSpec> reference_stack(bool process, std::string* error) {
  engine::StackSpec spec;
  const std::filesystem::path tools = engine::executable_dir();
  if (process) {
    const engine::Resolved r = engine::find_program("fieldproof-ugv-nav", tools, {tools});
    if (!r) {
      *error = r.error;
      return std::nullopt;
    }
    spec.kind = engine::StackSpec::Kind::kProcess;
    spec.argv = {r.path};
  } else {
    const engine::Resolved r =
        engine::find_stack_plugin("fieldproof_ugv_nav_plugin", tools, engine::stack_plugin_dirs());
    if (!r) {
      *error = r.error;
      return std::nullopt;
    }
    spec.kind = engine::StackSpec::Kind::kPlugin;
    spec.plugin = r.path;
  }
  return spec;
}

// True when stderr is a terminal (progress is shown only then).
inline bool stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

}  // namespace fieldproof::cli
