// `fieldproof`: one executable, one subcommand per file (commands.hpp).
#include <cstdio>
#include <cstdlib>
#include <exception>
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

// An exception that escapes a thread (or a noexcept function) ends the program here instead of
// in an abort: the message, and exit 1 (a stated failure), never 134.
[[noreturn]] void on_terminate() {
  std::string what = "an unknown error";
  if (std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      what = ex.what();
    } catch (...) {
    }
  }
  std::fprintf(stderr, "fieldproof: internal error: %s (please report it)\n", what.c_str());
  std::fflush(stderr);
  std::_Exit(fieldproof::cli::kExitFailed);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app;
  fieldproof::cli::set_up_app(app, "fieldproof " FIELDPROOF_VERSION);
  int exit_code = fieldproof::cli::kExitOk;
  for (AddCommand add : kCommands) add(app, &exit_code);
  std::set_terminate(on_terminate);
  return fieldproof::cli::parse_and_run(app, argc, argv, exit_code);
}
