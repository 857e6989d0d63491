// `fieldproof clock RUN|ENDPOINT status|pause|resume|step [--steps N | --seconds S]|rate R`: time
// control of a live run through its control endpoint (engine/clock_control.hpp), or of a bare
// coordinator (`fieldproof coordinator`) at an ipc:// or tcp:// endpoint (--server-key /
// --client-key for CURVE). Exit 0 done, 2 invalid input, a run or coordinator that is not there,
// or a refusal (a lockstep run, a key the coordinator does not accept), 1 another failure.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include "cli/commands.hpp"
#include "fieldproof/engine/clock_control.hpp"
#include "fieldproof/lockstep/zmq_server.hpp"
#include "fieldproof/time/duration.hpp"
#include "fieldproof/util/input_file.hpp"

namespace fieldproof::cli {
namespace {

struct ClockArgs {
  std::string run;
  std::string action;
  std::optional<std::string> value;  // rate R
  std::optional<int64_t> steps;
  std::optional<std::string> seconds;
  std::string step_size = "1ms";
  std::string server_key;
  std::string client_key;
  std::string timeout = "5s";
};

bool is_endpoint(const std::string& s) {
  return s.rfind("ipc://", 0) == 0 || s.rfind("tcp://", 0) == 0;
}

// A Z85 key given as a file (its first line) or as the 40 characters themselves.
std::string key_arg(const std::string& arg, const char* option) {
  std::string key = arg;
  std::error_code ec;
  if (std::filesystem::exists(arg, ec)) {
    const Result<std::string> in =
        util::read_input_file(arg, util::kMaxSmallFileBytes, std::string(option) + " key file");
    if (!in.ok()) throw std::invalid_argument(in.status().message());
    key = in->substr(0, in->find('\n'));
    while (!key.empty() && (key.back() == '\r' || key.back() == ' ')) key.pop_back();
  }
  if (key.size() != 40) {
    throw std::invalid_argument(std::string(option) + " '" + arg +
                                "': neither a readable key file nor a 40-character Z85 key");
  }
  return key;
}

Duration positive_duration(const std::string& text, const char* option) {
  auto d = parse_duration(text);
  if (!d.ok()) throw std::invalid_argument(std::string(option) + ": " + d.status().message());
  if (*d <= Duration::zero()) throw std::invalid_argument(std::string(option) + " must be > 0");
  return *d;
}

std::string status_text(const lockstep::CoordinatorStatus& s, const std::string& done) {
  std::ostringstream out;
  out << "state: " << (s.paused ? "paused" : "running") << "\n";
  out << "sim_time_s: " << format_seconds(s.time) << "\n";
  out << "grants: " << s.grants << "\n";
  char rtf[32];
  std::snprintf(rtf, sizeof rtf, "%.3f", s.measured_rtf);
  out << "rtf: " << (std::isfinite(s.measured_rtf) ? rtf : "inf") << "\n";
  std::snprintf(rtf, sizeof rtf, "%g", s.max_rtf);
  out << "max_rtf: " << (s.max_rtf > 0 ? rtf : "unlimited") << "\n";
  out << "hold_s: " << (s.hold.is_infinite() ? "none" : format_seconds(s.hold)) << "\n";
  std::string parts;
  for (const lockstep::ParticipantStatus& p : s.participants) {
    parts += (parts.empty() ? "" : ", ") + p.participant + "/" + p.thread + " (" +
             (p.role == lockstep::Role::kFollowing ? "following" : "regulating") + ", safe " +
             (p.safe_time.is_infinite() ? "inf" : format_seconds(p.safe_time)) + ")";
  }
  out << "participants: " << parts << "\n";
  if (!done.empty()) out << "done: " << done << "\n";
  return out.str();
}

// A bare coordinator at an endpoint.
int clock_endpoint(const ClockArgs& a) {
  lockstep::Control request;
  lockstep::ConnectOptions co;
  Duration timeout;
  try {
    if (a.action == "status") {
      request = lockstep::status_request();
    } else if (a.action == "pause") {
      request = lockstep::pause_request();
    } else if (a.action == "resume") {
      request = lockstep::resume_request();
    } else if (a.action == "step") {
      if (a.steps.has_value() == a.seconds.has_value()) {
        throw std::invalid_argument("step needs one of --steps N or --seconds S");
      }
      Duration d;
      if (a.steps) {
        if (*a.steps <= 0) throw std::invalid_argument("--steps must be > 0");
        d = positive_duration(a.step_size, "--step-size") * *a.steps;
      } else {
        d = positive_duration(*a.seconds, "--seconds");
      }
      request = lockstep::step_request(d);
    } else if (a.action == "rate") {
      if (!a.value) throw std::invalid_argument("rate needs a value: rate R (0 = unlimited)");
      size_t used = 0;
      double r = -1;
      try {
        r = std::stod(*a.value, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != a.value->size() || !std::isfinite(r) || r < 0) {
        throw std::invalid_argument("rate '" + *a.value + "' is not a number >= 0 (0 = unlimited)");
      }
      request = lockstep::set_max_rtf_request(r);
    } else {
      throw std::invalid_argument("unknown action '" + a.action +
                                  "' (status, pause, resume, step, rate)");
    }
    if (a.action != "step" && (a.steps || a.seconds)) {
      throw std::invalid_argument("--steps and --seconds go with step only");
    }
    if (a.action != "rate" && a.value) {
      throw std::invalid_argument("unexpected argument '" + *a.value + "'");
    }
    if (!a.server_key.empty()) {
      co.curve.server_public_key = key_arg(a.server_key, "--server-key");
    } else if (!a.client_key.empty()) {
      throw std::invalid_argument("--client-key needs --server-key (CURVE)");
    }
    if (!a.client_key.empty()) {
      co.curve.client_secret_key = key_arg(a.client_key, "--client-key");
      co.curve.client_public_key = lockstep::curve_public_key(co.curve.client_secret_key);
    }
    timeout = positive_duration(a.timeout, "--timeout");
    co.connect_timeout = timeout;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fieldproof clock: %s\n", e.what());
    return kExitInvalid;
  }
  lockstep::ControlReply r;
  try {
    lockstep::ControlClient client(a.run, co);
    r = client.request(request, timeout);
  } catch (const lockstep::TransportError& e) {
    std::fprintf(stderr, "fieldproof clock: %s\n", e.what());
    return kExitInvalid;
  }
  if (!r.ok) {
    const bool absent = r.error.rfind("timeout", 0) == 0 ||
                        r.error.find("refused") != std::string::npos ||
                        r.error.find("no coordinator answered") != std::string::npos;
    std::fprintf(stderr, "fieldproof clock: %s: %s\n", a.run.c_str(), r.error.c_str());
    return absent ? kExitInvalid : kExitFailed;
  }
  std::fputs(status_text(r.status, a.action == "status" ? "" : a.action).c_str(), stdout);
  return kExitOk;
}

int clock(const ClockArgs& a) {
  if (is_endpoint(a.run)) return clock_endpoint(a);
  if (!a.server_key.empty() || !a.client_key.empty()) {
    std::fprintf(stderr, "fieldproof clock: --server-key and --client-key go with an endpoint\n");
    return kExitInvalid;
  }
  engine::ClockRequest r;
  r.run_dir = a.run;
  if (a.action == "status") {
    r.action = engine::ClockAction::kStatus;
  } else if (a.action == "pause") {
    r.action = engine::ClockAction::kPause;
  } else if (a.action == "resume") {
    r.action = engine::ClockAction::kResume;
  } else if (a.action == "step") {
    r.action = engine::ClockAction::kStep;
  } else if (a.action == "rate") {
    std::fprintf(stderr,
                 "fieldproof clock: rate goes with a coordinator's endpoint; a run's pace is its "
                 "scenario's (time.rtf)\n");
    return kExitInvalid;
  } else {
    std::fprintf(stderr, "fieldproof clock: unknown action '%s' (status, pause, resume, step)\n",
                 a.action.c_str());
    return kExitInvalid;
  }
  if (r.action != engine::ClockAction::kStep && (a.steps || a.seconds)) {
    std::fprintf(stderr, "fieldproof clock: --steps and --seconds go with step only\n");
    return kExitInvalid;
  }
  if (a.value) {
    std::fprintf(stderr, "fieldproof clock: unexpected argument '%s'\n", a.value->c_str());
    return kExitInvalid;
  }
  r.steps = a.steps;
  r.seconds = a.seconds;
  const engine::ClockOutcome o = engine::clock_command(r);
  if (o.exit_code == 0) {
    std::fputs(o.text.c_str(), stdout);
  } else {
    std::fprintf(stderr, "fieldproof clock: %s", o.text.c_str());
  }
  return o.exit_code;
}

}  // namespace

void add_clock_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ClockArgs>();
  CLI::App* cmd = app.add_subcommand(
      "clock",
      "Time control of a live run (status, pause, resume, step; not in lockstep) or of a\n"
      "coordinator at an ipc:// or tcp:// endpoint (also rate R)");
  cmd->add_option("run", args->run,
                  "the run directory (runs/<run_id>), or a coordinator's endpoint "
                  "(ipc://PATH, tcp://HOST:PORT)")
      ->required();
  cmd->add_option("action", args->action, "status | pause | resume | step | rate")->required();
  cmd->add_option("value", args->value, "rate: the pace cap R (0 = unlimited)");
  cmd->add_option("--steps", args->steps,
                  "step: physics steps of a run; with an endpoint, steps of --step-size");
  cmd->add_option("--seconds", args->seconds, "step: simulated seconds (\"0.5\", \"250ms\")");
  cmd->add_option("--step-size", args->step_size,
                  "with an endpoint: the simulated time of one --steps step")
      ->default_val("1ms");
  cmd->add_option("--server-key", args->server_key,
                  "with a CURVE endpoint: the coordinator's public key (a file or the 40 "
                  "characters)");
  cmd->add_option("--client-key", args->client_key,
                  "with a CURVE endpoint: this client's secret key (a file, e.g. from fieldproof "
                  "keygen, or the 40 characters); the coordinator must authorize its public key");
  cmd->add_option("--timeout", args->timeout,
                  "with an endpoint: how long to wait for the coordinator's reply")
      ->default_val("5s");
  cmd->callback([args, exit_code] { *exit_code = clock(*args); });
}

}  // namespace fieldproof::cli
