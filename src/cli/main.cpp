// `fieldproof`: one executable, one subcommand per file (commands.hpp).
#include <iostream>

#include "cli/commands.hpp"

namespace {

using AddCommand = void (*)(CLI::App&, int*);
constexpr AddCommand kCommands[] = {
    &fieldproof::cli::add_coordinator_command,
    &fieldproof::cli::add_world_command,
    &fieldproof::cli::add_play_command,
    &fieldproof::cli::add_validate_command,
    &fieldproof::cli::add_schema_command,
    &fieldproof::cli::add_run_command,
    &fieldproof::cli::add_report_command,
    &fieldproof::cli::add_compare_command,
    &fieldproof::cli::add_clock_command,
    &fieldproof::cli::add_assertions_command,
    &fieldproof::cli::add_keygen_command,
    &fieldproof::cli::add_sweep_command,
    &fieldproof::cli::add_runs_command,
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fieldproof: simulated time as a controlled, repeatable variable for testing robot "
               "software",
               "fieldproof"};
  app.set_version_flag("--version", "fieldproof " FIELDPROOF_VERSION,
                       "print the version (fieldproof X.Y.Z) and exit");
  app.require_subcommand(1);
  int exit_code = fieldproof::cli::kExitOk;
  for (AddCommand add : kCommands) add(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? fieldproof::cli::kExitOk : fieldproof::cli::kExitInvalid;
  }
  return exit_code;
}
