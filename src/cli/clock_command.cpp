// `fieldproof clock RUN|ENDPOINT status|pause|resume|step [--steps N | --seconds S]|rate R`: time
// control of a live run through its control endpoint (engine/clock_control.hpp), or of a bare
// coordinator (`fieldproof coordinator`) or a player (`fieldproof play --control EP`; also toggle,
// seek T, play-next, burst N) at an ipc:// or tcp:// endpoint (--server-key / --client-key for
// CURVE). Exit 0 done, 2 invalid input, an endpoint that is not there, an action it does not take
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
#include "fieldproof/lockstep/transport.hpp"
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

// A number (the whole text), or nullopt.
std::optional<double> number_arg(const std::string& text) {
  size_t used = 0;
  double r = 0;
  try {
    r = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used != text.size() || !std::isfinite(r)) return std::nullopt;
  return r;
}

// The value of rate R, seek T and burst N (throws std::invalid_argument naming what is wrong).
void parse_value(const ClockArgs& a, engine::EndpointClockRequest& r) {
  using engine::EndpointAction;
  const bool takes_value = r.action == EndpointAction::kRate || r.action == EndpointAction::kSeek ||
                           r.action == EndpointAction::kBurst;
  if (!takes_value) {
    if (a.value) throw std::invalid_argument("unexpected argument '" + *a.value + "'");
    return;
  }
  if (!a.value) {
    throw std::invalid_argument(
        r.action == EndpointAction::kRate   ? "rate needs a value: rate R (0 = unlimited)"
        : r.action == EndpointAction::kSeek ? "seek needs a value: seek T (\"2s\", from the start)"
                                            : "burst needs a value: burst N (messages)");
  }
  const std::string& v = *a.value;
  if (r.action == EndpointAction::kRate) {
    const std::optional<double> rate = number_arg(v);
    if (!rate || *rate < 0) {
      throw std::invalid_argument("rate '" + v + "' is not a number >= 0 (0 = unlimited)");
    }
    r.rate = *rate;
  } else if (r.action == EndpointAction::kSeek) {
    const auto d = parse_duration(v);
    if (!d.ok()) throw std::invalid_argument("seek: " + d.status().message());
    r.seek = *d;
  } else {
    if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos || v.size() > 18) {
      throw std::invalid_argument("burst '" + v + "' is not a count > 0");
    }
    r.count = std::stoull(v);
    if (r.count == 0) throw std::invalid_argument("burst '" + v + "' is not a count > 0");
  }
}

engine::EndpointAction endpoint_action(const std::string& action) {
  using engine::EndpointAction;
  for (const EndpointAction e :
       {EndpointAction::kStatus, EndpointAction::kPause, EndpointAction::kResume,
        EndpointAction::kStep, EndpointAction::kRate, EndpointAction::kToggle,
        EndpointAction::kSeek, EndpointAction::kPlayNext, EndpointAction::kBurst}) {
    if (action == engine::endpoint_action_name(e)) return e;
  }
  throw std::invalid_argument("unknown action '" + action +
                              "' (status, pause, resume, step, rate; a player also toggle, seek, "
                              "play-next, burst)");
}

// A coordinator or a player at an endpoint.
int clock_endpoint(const ClockArgs& a) {
  engine::EndpointClockRequest r;
  r.endpoint = a.run;
  try {
    r.action = endpoint_action(a.action);
    if (r.action == engine::EndpointAction::kStep) {
      if (a.steps.has_value() == a.seconds.has_value()) {
        throw std::invalid_argument("step needs one of --steps N or --seconds S");
      }
      if (a.steps) {
        if (*a.steps <= 0) throw std::invalid_argument("--steps must be > 0");
        r.step = positive_duration(a.step_size, "--step-size") * *a.steps;
      } else {
        r.step = positive_duration(*a.seconds, "--seconds");
      }
    } else if (a.steps || a.seconds) {
      throw std::invalid_argument("--steps and --seconds go with step only");
    }
    parse_value(a, r);
    if (!a.server_key.empty()) {
      r.connect.curve.server_public_key = key_arg(a.server_key, "--server-key");
    } else if (!a.client_key.empty()) {
      throw std::invalid_argument("--client-key needs --server-key (CURVE)");
    }
    if (!a.client_key.empty()) {
      r.connect.curve.client_secret_key = key_arg(a.client_key, "--client-key");
      r.connect.curve.client_public_key =
          lockstep::curve_public_key(r.connect.curve.client_secret_key);
    }
    r.timeout = positive_duration(a.timeout, "--timeout");
    r.connect.connect_timeout = r.timeout;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fieldproof clock: %s\n", e.what());
    return kExitInvalid;
  }
  const engine::ClockOutcome o = engine::clock_endpoint(r);
  if (o.exit_code == 0) {
    std::fputs(o.text.c_str(), stdout);
  } else {
    std::fprintf(stderr, "fieldproof clock: %s", o.text.c_str());
  }
  return o.exit_code;
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
                 "fieldproof clock: rate goes with a coordinator's or a player's endpoint; a run's "
                 "pace is its "
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
      "Time control of a live run (status, pause, resume, step; not in lockstep), of a\n"
      "coordinator at an ipc:// or tcp:// endpoint (also rate R), or of a player there\n"
      "(fieldproof play --control EP: status, pause, resume, toggle, rate R, seek T,\n"
      "play-next, burst N)");
  cmd->add_option("run", args->run,
                  "the run directory (runs/<run_id>), or a coordinator's or a player's endpoint "
                  "(ipc://PATH, tcp://HOST:PORT)")
      ->required();
  cmd->add_option("action", args->action,
                  "status | pause | resume | step | rate; a player: also toggle | seek | "
                  "play-next | burst")
      ->required();
  cmd->add_option("value", args->value,
                  "rate: a coordinator's pace cap R (0 = unlimited) or a player's rate (> 0); "
                  "seek: where to (\"2s\", from the start of playback); burst: messages N");
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
                  "with an endpoint: how long to wait for the coordinator's or player's reply")
      ->default_val("5s");
  cmd->callback([args, exit_code] { *exit_code = clock(*args); });
}

}  // namespace fieldproof::cli
