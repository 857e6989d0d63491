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
