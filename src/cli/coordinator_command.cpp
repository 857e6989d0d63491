// `fieldproof coordinator`: runs a root or a child (cascade) lock-step coordinator until SIGINT
// or SIGTERM.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "fieldproof/lockstep/cascade.hpp"
#include "fieldproof/lockstep/zmq_server.hpp"
#include "fieldproof/time/duration.hpp"
#include "fieldproof/util/input_file.hpp"

namespace fieldproof::cli {
namespace {

struct CoordinatorArgs {
  std::vector<std::string> bind;
  std::string parent;
  double max_rtf = 0.0;
  std::string control;
  std::string ipc_dir;
  std::string curve_secret_key_file;
  std::string parent_server_key_file;
  std::string authorized_keys_file;
  std::string ack_timeout = "30s";
  std::string follower_timeout = "5s";
  std::string heartbeat = "0.5s";
  std::string name;
  std::string max_message_bytes = "67108864";
  bool start_paused = false;
};

// Reads a Z85 key (40 characters) from the first line of a file.
std::string read_key(const std::string& path, const char* what) {
  const Result<std::string> in =
      util::read_input_file(path, util::kMaxSmallFileBytes, std::string(what) + " file");
  if (!in.ok()) throw std::invalid_argument(in.status().message());
  std::string line = in->substr(0, in->find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  if (line.size() != 40) {
    throw std::invalid_argument(std::string(what) + " file '" + path +
                                "' must hold a 40-character Z85 key on its first line");
  }
  return line;
}

// --max-message-bytes: a whole number of bytes from 1 to 4294967295 (the protocol's lengths are
// u32). 0, negative, fractional, NaN or anything else is refused (no value means "no limit").
size_t max_message_bytes_arg(const std::string& text) {
  const std::string what = "--max-message-bytes '" + text + "': ";
  if (text.empty() || text.size() > 10 ||
      text.find_first_not_of("0123456789") != std::string::npos) {
    throw std::invalid_argument(what + "must be a whole number of bytes from 1 to 4294967295");
  }
  const unsigned long long v = std::stoull(text);
  if (v == 0 || v > 4294967295ULL) {
    throw std::invalid_argument(what + "must be from 1 to 4294967295 bytes (there is no "
                                       "unlimited: the default is 67108864, 64 MiB)");
  }
  return static_cast<size_t>(v);
}

Duration duration_arg(const std::string& text, const char* option) {
  auto d = parse_duration(text);
  if (!d.ok()) throw std::invalid_argument(std::string(option) + ": " + d.status().message());
  if (*d <= Duration::zero()) throw std::invalid_argument(std::string(option) + " must be > 0");
  return *d;
}

int run_coordinator(const CoordinatorArgs& a) {
  lockstep::ServerOptions o;
  try {
    if (a.max_rtf < 0) throw std::invalid_argument("--max-rtf must be >= 0 (0 = unlimited)");
    o.bind = a.bind;
    o.control = a.control;
    o.ipc_dir = a.ipc_dir;
    o.core.max_rtf = a.max_rtf;
    o.core.ack_timeout = duration_arg(a.ack_timeout, "--ack-timeout");
    o.core.follower_timeout = duration_arg(a.follower_timeout, "--follower-timeout");
    o.core.max_message_bytes = max_message_bytes_arg(a.max_message_bytes);
    o.core.start_paused = a.start_paused;
    if (!a.curve_secret_key_file.empty()) {
      o.curve_secret_key = read_key(a.curve_secret_key_file, "--curve-secret-key");
    }
    if (!a.authorized_keys_file.empty()) {
      if (o.curve_secret_key.empty()) {
        throw std::invalid_argument(
            "--authorized-keys needs CURVE: give the server's secret key with --curve-secret-key");
      }
      Result<std::vector<std::string>> keys =
          lockstep::read_authorized_keys(a.authorized_keys_file);
      if (!keys.ok()) throw std::invalid_argument("--authorized-keys: " + keys.status().message());
      o.authorized_keys = std::move(*keys);
    }
    o.parent = a.parent;
    o.child_name = a.name;
    o.parent_connect.heartbeat_interval = duration_arg(a.heartbeat, "--heartbeat");
    if (!a.parent_server_key_file.empty()) {
      o.parent_connect.curve.server_public_key =
          read_key(a.parent_server_key_file, "--parent-server-key");
    }
  } catch (const std::invalid_argument& e) {
    std::cerr << "fieldproof coordinator: " << e.what() << "\n";
    return kExitInvalid;
  }
  o.log = [](const std::string& line) { std::cerr << "coordinator: " << line << std::endl; };
  o.on_failure = [](const std::string& participant, const std::string& reason) {
    std::cerr << "coordinator: participant " << participant << " failed: " << reason << std::endl;
  };

  // Block the stop signals before any thread starts, so every thread inherits the mask and the
  // main thread receives them with sigwait.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  std::unique_ptr<lockstep::CoordinatorServer> server;
  try {
    server = std::make_unique<lockstep::CoordinatorServer>(std::move(o));
  } catch (const lockstep::TransportError& e) {
    std::cerr << "fieldproof coordinator: " << e.what() << "\n";
    return kExitInvalid;
  } catch (const std::exception& e) {
    std::cerr << "fieldproof coordinator: " << e.what() << "\n";
    return kExitFailed;
  }
  for (const auto& ep : server->endpoints()) std::cout << "bound " << ep << "\n";
  if (!server->control_endpoint().empty()) {
    std::cout << "control " << server->control_endpoint() << "\n";
  }
  if (!server->curve_public_key().empty()) {
    std::cout << "curve-public-key " << server->curve_public_key() << "\n";
  }
  if (!a.parent.empty()) std::cout << "parent " << a.parent << "\n";
  std::cout << "ready" << std::endl;

  int sig = 0;
  sigwait(&stop_signals, &sig);
  server->stop();
  std::cerr << "coordinator: stopped by signal " << sig << std::endl;
  return kExitOk;
}

}  // namespace

void add_coordinator_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<CoordinatorArgs>();
  CLI::App* cmd = app.add_subcommand(
      "coordinator",
      "Run a lock-step time coordinator (a root, or a child under --parent) until SIGINT or\n"
      "SIGTERM; participants connect to a --bind endpoint (FIELDPROOF_COORDINATOR=<endpoint>),\n"
      "and the bound endpoints are printed one per line ('bound EP'), then 'ready'");
  cmd->add_option("--bind", args->bind,
                  "an endpoint to serve participants on: ipc://PATH (relative to --ipc-dir) or "
                  "tcp://HOST:PORT (PORT * = any free port); repeatable")
      ->required();
  cmd->add_option("--parent", args->parent,
                  "run as a child coordinator under the coordinator at this endpoint (cascade): "
                  "announce the local minimum to it, forward publishes, republish its grants");
  cmd->add_option("--max-rtf", args->max_rtf,
                  "the pace cap: simulated time never runs faster than R x wall time (0 = "
                  "unlimited; default 0)")
      ->default_val(0.0);
  cmd->add_option("--control", args->control,
                  "an extra endpoint that takes control requests only (pause, resume, step, "
                  "run_until, rate, status); --bind takes them too");
  cmd->add_option("--ipc-dir", args->ipc_dir,
                  "the directory relative ipc:// paths resolve against (default .)")
      ->default_val(".");
  cmd->add_option("--curve-secret-key", args->curve_secret_key_file,
                  "a file holding the server's Z85 CURVE secret key: every endpoint then requires "
                  "CURVE, and peers need the printed public key");
  cmd->add_option("--authorized-keys", args->authorized_keys_file,
                  "with --curve-secret-key: a file of the client public keys allowed in, one Z85 "
                  "key per line (# comments); any other client is refused and logged");
  cmd->add_option("--parent-server-key", args->parent_server_key_file,
                  "with --parent: a file holding the parent's Z85 CURVE public key");
  cmd->add_option("--name", args->name,
                  "the name a child announces to its parent (default cascade-<pid>)");
  cmd->add_option("--ack-timeout", args->ack_timeout,
                  "a regulating participant silent this long, or holding a step this long, "
                  "fails the run (\"30s\", \"500ms\"; default 30s)")
      ->default_val("30s");
  cmd->add_option("--follower-timeout", args->follower_timeout,
                  "a following participant silent this long is dropped (default 5s)")
      ->default_val("5s");
  cmd->add_option("--heartbeat", args->heartbeat,
                  "with --parent: the heartbeat interval towards the parent (default 0.5s)")
      ->default_val("0.5s");
  cmd->add_option("--max-message-bytes", args->max_message_bytes,
                  "frames larger than this many bytes are refused with an error (1 to "
                  "4294967295; one more than 64 KiB over it ends the sender's connection)")
      ->default_val("67108864");
  cmd->add_flag("--start-paused", args->start_paused, "start paused (resume by a control request)");
  cmd->callback([args, exit_code] { *exit_code = run_coordinator(*args); });
}

}  // namespace fieldproof::cli
