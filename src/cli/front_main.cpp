// `fieldproof`, the front: the commands that only read the run index (`runs list|show|diff|
// reindex`) and `--version` are served here, by a small executable that does not link sdformat,
// ignition-msgs, protobuf or ZeroMQ, so they cost no static initialisation of those libraries
// (53-76 ms of CPU per start, nearly all sdformat's and ignition's static std::regex objects:
// docs/performance.md). Every other command line is handed, unchanged, to the full program
// `fieldproof-core` beside this one (execv: the same process id, arguments, environment and
// terminal; its exit code is the command's). Users and scripts call `fieldproof` either way.
#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>

#include "cli/commands.hpp"

namespace {

// This executable's folder (from /proc/self/exe, so a symlink to it or a relative argv[0] still
// finds fieldproof-core); empty when it cannot be read.
std::string own_dir() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  const std::string path(buf, static_cast<size_t>(n));
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

[[noreturn]] void exec_core(char** argv) {
  const std::string core = own_dir() + "/fieldproof-core";
  ::execv(core.c_str(), argv);
  std::fprintf(stderr, "fieldproof: cannot run the full program '%s': %s (is the installation "
                       "complete?)\n",
               core.c_str(), std::strerror(errno));
  std::_Exit(fieldproof::cli::kExitFailed);
}

// The front serves `runs ...` and a lone `--version`; everything else is the core's (including
// `--help`, which lists every command).
bool served_here(int argc, char** argv) {
  if (argc < 2) return false;
  const std::string_view first = argv[1];
  return first == "runs" || (first == "--version" && argc == 2);
}

}  // namespace

int main(int argc, char** argv) {
  if (!served_here(argc, argv)) exec_core(argv);
  CLI::App app;
  fieldproof::cli::set_up_app(app, "fieldproof " FIELDPROOF_VERSION);
  int exit_code = fieldproof::cli::kExitOk;
  fieldproof::cli::add_runs_command(app, &exit_code);
  return fieldproof::cli::parse_and_run(app, argc, argv, exit_code);
}
