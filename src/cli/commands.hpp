// The subcommands of `fieldproof`. To add one: write <name>_command.cpp defining
// add_<name>_command (register options, set the callback that stores the exit code), declare it
// here, call it in main.cpp's kCommands, add the file to CMakeLists.txt.
#pragma once

#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

namespace fieldproof::cli {

// Exit codes (DESIGN.md): 0 pass, 1 failed / error, 2 invalid input, 130 interrupted.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitInvalid = 2;
inline constexpr int kExitInterrupted = 130;

// The top-level app both executables (main.cpp, front_main.cpp) parse with: its description,
// --version printing `version_line`, exactly one subcommand.
inline void set_up_app(CLI::App& app, const char* version_line) {
  app.description("fieldproof: simulated time as a controlled, repeatable variable for testing "
                  "robot software");
  app.name("fieldproof");
  app.set_version_flag("--version", version_line,
                       "print the version (fieldproof X.Y.Z) and exit");
  app.require_subcommand(1);
}

// Parses the command line and runs the chosen command: its exit code (`exit_code`, which the
// command's callback set), 2 for a command line CLI11 refused (0 for --help and --version), and 1
// with a message for whatever a command did not catch, never an abort. Both executables (main.cpp,
// front_main.cpp) end with it. (`run` writes its run.json with status error itself.)
inline int parse_and_run(CLI::App& app, int argc, char** argv, const int& exit_code) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitInvalid;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fieldproof: internal error: %s (please report it)\n", e.what());
    return kExitFailed;
  } catch (...) {
    std::fprintf(stderr, "fieldproof: internal error (please report it)\n");
    return kExitFailed;
  }
  return exit_code;
}

// Each add_*_command registers a subcommand on `app`; when it runs, its callback stores the
// process exit code in `*exit_code`.
void add_coordinator_command(CLI::App& app, int* exit_code);
void add_world_command(CLI::App& app, int* exit_code);
void add_play_command(CLI::App& app, int* exit_code);
void add_validate_command(CLI::App& app, int* exit_code);
void add_schema_command(CLI::App& app, int* exit_code);
void add_run_command(CLI::App& app, int* exit_code);
void add_report_command(CLI::App& app, int* exit_code);
void add_compare_command(CLI::App& app, int* exit_code);
void add_clock_command(CLI::App& app, int* exit_code);
void add_assertions_command(CLI::App& app, int* exit_code);
void add_keygen_command(CLI::App& app, int* exit_code);
void add_sweep_command(CLI::App& app, int* exit_code);
void add_runs_command(CLI::App& app, int* exit_code);

}  // namespace fieldproof::cli
