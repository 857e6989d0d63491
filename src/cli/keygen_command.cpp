// `fieldproof keygen [--out PREFIX]`: a CURVE key pair for a coordinator (--curve-secret-key) or a
// client (--client-key, an entry of --authorized-keys). Writes PREFIX.key (the secret, mode 0600)
// and PREFIX.pub (the public key, mode 0644), never over an existing file, and prints the public
// key. Exit 0, 2 when a file exists or cannot be written.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "fieldproof/lockstep/transport.hpp"

namespace fieldproof::cli {
namespace {

// Creates `path` (it must not exist) with exactly `mode`, whatever the umask.
std::string write_new(const std::string& path, const std::string& text, mode_t mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) {
    return "cannot create '" + path + "': " + std::strerror(errno) +
           (errno == EEXIST ? " (remove it or choose another --out)" : "");
  }
  std::string error;
  if (::fchmod(fd, mode) != 0) error = "cannot set the mode of '" + path + "'";
  if (error.empty() && ::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    error = "cannot write '" + path + "': " + std::strerror(errno);
  }
  if (::close(fd) != 0 && error.empty()) error = "cannot write '" + path + "'";
  return error;
}

int keygen(const std::string& prefix) {
  lockstep::CurveKeyPair k;
  try {
    k = lockstep::generate_curve_keypair();
  } catch (const lockstep::TransportError& e) {
    std::fprintf(stderr, "fieldproof keygen: %s\n", e.what());
    return kExitFailed;
  }
  const std::string secret_path = prefix + ".key";
  const std::string public_path = prefix + ".pub";
  if (::access(public_path.c_str(), F_OK) == 0) {
    std::fprintf(stderr, "fieldproof keygen: '%s' exists (remove it or choose another --out)\n",
                 public_path.c_str());
    return kExitInvalid;
  }
  std::string error = write_new(secret_path, k.secret_key + "\n", 0600);
  if (error.empty()) {
    error = write_new(public_path, k.public_key + "\n", 0644);
    if (!error.empty()) ::unlink(secret_path.c_str());
  }
  if (!error.empty()) {
    std::fprintf(stderr, "fieldproof keygen: %s\n", error.c_str());
    return kExitInvalid;
  }
  std::printf("%s\n", k.public_key.c_str());
  std::fprintf(stderr, "fieldproof keygen: secret key in %s (mode 0600), public key in %s\n",
               secret_path.c_str(), public_path.c_str());
  return kExitOk;
}

}  // namespace

void add_keygen_command(CLI::App& app, int* exit_code) {
  auto prefix = std::make_shared<std::string>("curve");
  CLI::App* cmd = app.add_subcommand(
      "keygen",
      "Write a CURVE key pair: PREFIX.key (secret, 0600) and PREFIX.pub (public, 0644); print the\n"
      "public key. For `coordinator --curve-secret-key`, `--authorized-keys` and `clock "
      "--client-key`.");
  cmd->add_option("--out", *prefix, "file name prefix")->default_val("curve");
  cmd->callback([prefix, exit_code] { *exit_code = keygen(*prefix); });
}

}  // namespace fieldproof::cli
