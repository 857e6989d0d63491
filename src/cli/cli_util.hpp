// Small helpers shared by the engine's subcommands (world, validate, schema, run).
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace fieldproof::cli {

// The reference stack's process: $FIELDPROOF_UGV_NAV, else fieldproof-ugv-nav beside this
// executable.
inline std::string ugv_nav_executable() {
  if (const char* env = std::getenv("FIELDPROOF_UGV_NAV"); env && *env) return env;
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "fieldproof-ugv-nav";
  return (self.parent_path() / "fieldproof-ugv-nav").string();
}

// True when stderr is a terminal (progress is shown only then).
inline bool stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

}  // namespace fieldproof::cli
