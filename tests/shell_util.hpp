// Runs a shell command and captures its exit code and output: the one helper the CLI, install and
// package tests share.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace fieldproof::shell {

struct ShellResult {
  int exit_code = -1;
  std::string out;  // what the command printed (stderr too when the command redirects it)
};

// `command` is shell text; 128 + N when a signal N ended it.
inline ShellResult run_shell(const std::string& command) {
  ShellResult r;
  FILE* p = popen(command.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}

}  // namespace fieldproof::shell
