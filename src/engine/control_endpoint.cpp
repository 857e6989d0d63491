#include "control_endpoint.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <variant>
#include <vector>

#include "fieldproof/engine/clock_control.hpp"
#include "fieldproof/lockstep/codec.hpp"
#include "fieldproof/lockstep/transport.hpp"
#include "fieldproof/lockstep/zmq_server.hpp"
#include "fieldproof/lockstep/zmq_socket.hpp"
#include "fieldproof/time/system_clock.hpp"
#include "fieldproof/util/input_file.hpp"

namespace fieldproof::engine {

ControlEndpoint::ControlEndpoint(std::string socket_path, Handler handler,
                                 std::function<void()> idle)
    : path_(std::move(socket_path)), endpoint_("ipc://" + path_), handler_(std::move(handler)) {
  if (path_.size() >= sizeof(sockaddr_un{}.sun_path)) {
    throw std::runtime_error(path_ + ": the control socket's path is too long for a Unix socket (" +
                             std::to_string(path_.size()) +
                             " characters; use a shorter runs "
                             "directory)");
  }
  auto ctx = lockstep::ZmqContext::create();
  if (!ctx.ok()) throw std::runtime_error("cannot create a ZeroMQ context: " + ctx.status().message());
  auto sock = lockstep::ZmqSocket::open(*ctx, lockstep::SocketType::kRouter);
  if (!sock.ok()) {
    throw std::runtime_error("cannot create the control socket: " + sock.status().message());
  }
  lockstep::ZmqSocket s = std::move(sock).value();
  (void)s.set_linger(0);  // best effort, as before: a failure only delays stop()
  if (lockstep::ZmqStatus b = s.bind(endpoint_); !b.ok()) {
    // The status reads "binding '<endpoint>': <why>".
    throw std::runtime_error("cannot bind the control endpoint " + endpoint_ + ": " +
                             b.message().substr(b.message().rfind(": ") + 2));
  }
  server_ = std::make_unique<FrameServer>(std::move(ctx).value(), std::move(s));
  server_->start([this](std::string_view request) { return answer(request); }, std::move(idle));
}

ControlEndpoint::~ControlEndpoint() { stop(); }

void ControlEndpoint::stop() {
  if (!server_) return;
  server_->stop();
  server_.reset();
  ::unlink(path_.c_str());
}

lockstep::Frame ControlEndpoint::answer(std::string_view request) const {
  const lockstep::DecodeResult r = lockstep::decode_frame(request, size_t{1} << 16);
  if (!r) return r.error();
  if (const auto* c = std::get_if<lockstep::Control>(&r.frame())) return handler_(*c);
  return lockstep::Error{lockstep::ErrorCode::kMalformed,
                         "the run's control endpoint takes only control frames"};
}

// ---- the client: fieldproof clock --------------------------------------------------------------

namespace {

// True when something accepts connections on the Unix socket (a stale file after a crash does
// not), so a run that is not live is told at once rather than after the reply timeout.
bool socket_accepts(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) return true;  // cannot tell: let the request decide
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path.c_str());
  const bool ok = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

ClockOutcome invalid(std::string text) { return {2, std::move(text) + "\n"}; }

// What the run's control.json says, and where its socket is.
struct LiveRun {
  std::string run;        // the run directory as given
  std::string not_live;   // the refusal when the run does not answer
  std::string info_file;  // control.json's path, for messages
  int64_t step_ns = 0;
  std::string mode = "sim";
  std::string sock_path;
};

// Reads control.json (every field with its type, or the file is refused naming it: a value of
// another type used to abort the command) and checks that something listens on the socket.
// Returns the refusal, or nothing when `live` is filled in.
std::optional<ClockOutcome> find_live_run(const ClockRequest& req, LiveRun& live) {
  namespace fs = std::filesystem;
  live.run = req.run_dir.string();
  std::error_code ec;
  if (!fs::is_directory(req.run_dir, ec)) return invalid(live.run + ": no such run directory");
  const fs::path info_file = req.run_dir / kControlInfoFile;
  live.info_file = info_file.string();
  live.not_live = live.run + ": the run is not live (" +
                  std::string(fs::exists(req.run_dir / "run.json", ec) ? "it has ended"
                                                                       : "no control endpoint") +
                  "); fieldproof clock acts only on a run in progress";
  if (!fs::exists(info_file, ec)) return invalid(live.not_live);
  const Result<std::string> text =
      util::read_input_file(info_file, util::kMaxSmallFileBytes, "the run's control.json");
  if (!text.ok()) return invalid(text.status().message());
  const nlohmann::json info = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!info.is_object()) {
    return invalid(live.info_file + ": not a JSON object (the run writes it; is it damaged?)");
  }
  const auto field_error = [&](const char* key, const char* type) {
    return invalid(live.info_file + ": " + key + " must be " + type + ", got " + info[key].dump());
  };
  if (info.contains("physics_step_ns")) {
    if (!info["physics_step_ns"].is_number_integer()) {
      return field_error("physics_step_ns", "a whole number of nanoseconds");
    }
    live.step_ns = info["physics_step_ns"].get<int64_t>();
  }
  if (info.contains("mode")) {
    if (!info["mode"].is_string()) return field_error("mode", "a string");
    live.mode = info["mode"].get<std::string>();
  }
  std::string endpoint;
  if (info.contains("endpoint")) {
    if (!info["endpoint"].is_string()) return field_error("endpoint", "a string");
    endpoint = info["endpoint"].get<std::string>();
  }
  // The socket is in the run directory, or (a run directory too deep for a Unix socket's path)
  // where control.json's endpoint says.
  live.sock_path = fs::absolute(req.run_dir / kControlSocketFile).string();
  if (endpoint.rfind("ipc://", 0) == 0) live.sock_path = endpoint.substr(6);
  if (!fs::exists(live.sock_path, ec)) return invalid(live.not_live);
  if (!socket_accepts(live.sock_path)) return invalid(live.not_live);
  return std::nullopt;
}

// The duration of `fieldproof clock step`: --steps N physics steps or --seconds S (a whole
// number of physics steps, as sim.step requires).
std::variant<Duration, ClockOutcome> step_duration(const ClockRequest& req, const LiveRun& live) {
  if (req.steps.has_value() == req.seconds.has_value()) {
    return invalid("step: give exactly one of --steps N or --seconds S");
  }
  const int64_t step_ns = live.step_ns;
  if (req.steps) {
    if (*req.steps <= 0) return invalid("step: --steps must be a whole number > 0");
    if (step_ns <= 0) return invalid(live.info_file + ": no physics_step_ns");
    if (*req.steps > (INT64_MAX - 1) / step_ns) {
      return invalid("step: --steps " + std::to_string(*req.steps) + " steps of " +
                     format_seconds(Duration::from_ns(step_ns)) +
                     " s overflow simulated time (about 292 years at most)");
    }
    return Duration::from_ns(*req.steps) * step_ns;
  }
  const auto p = parse_duration(*req.seconds);
  if (!p.ok()) return invalid("step: --seconds: " + p.status().message());
  if (p.value() <= Duration::zero()) return invalid("step: --seconds must be > 0");
  const Duration d = p.value();
  if (step_ns > 0 && d.ns() % step_ns != 0) {
    const Duration step = Duration::from_ns(step_ns);
    const int64_t n = d.ns() / step_ns;
    return invalid("step: --seconds: " + format_seconds(d) +
                   " s is not a whole number of physics steps (the world's physics step "
                   "is " +
                   format_seconds(step) + " s; expected a multiple such as " +
                   format_seconds(step * std::max<int64_t>(n, 1)) + " or " +
                   format_seconds(step * (n + 1)) + ")");
  }
  return d;
}

// The Control frame for the action, and the action's name for the "done:" line.
std::variant<lockstep::Control, ClockOutcome> build_request(const ClockRequest& req,
                                                            const LiveRun& live,
                                                            std::string& what) {
  switch (req.action) {
    case ClockAction::kStatus:
      what = "status";
      return lockstep::status_request();
    case ClockAction::kPause:
      what = "pause";
      return lockstep::pause_request();
    case ClockAction::kResume:
      what = "resume";
      return lockstep::resume_request();
    case ClockAction::kStep: {
      what = "step";
      auto d = step_duration(req, live);
      if (auto* refusal = std::get_if<ClockOutcome>(&d)) return std::move(*refusal);
      return lockstep::step_request(std::get<Duration>(d));
    }
  }
  what = "status";
  return lockstep::status_request();
}

// Sends the request; for a step, follows it to its end. The engine answers a step at once and
// completes it in the background: status requests (they keep being answered) follow it for up to
// the reply timeout. `background` says where it goes on when the timeout came first.
lockstep::ControlReply send_request(const ClockRequest& req, const LiveRun& live,
                                    const lockstep::Control& c, std::string& background) {
  lockstep::ControlClient client("ipc://" + live.sock_path);
  lockstep::ControlReply r = client.request(c, req.timeout);
  if (!r.ok || req.action != ClockAction::kStep) return r;
  const SimTime target = r.status.time + c.duration;
  const WallNow wall = SystemClock::wall_now();
  const SimTime give_up = wall() + req.timeout;
  while (!(r.status.paused && r.status.time >= target) && wall() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const lockstep::ControlReply s = client.request(lockstep::status_request(), req.timeout);
    if (!s.ok) break;
    r = s;
  }
  if (r.status.time < target) {
    background = " (continuing in the background to " + format_seconds(target) +
                 " s; `fieldproof clock " + live.run + " status` follows it)";
  }
  return r;
}

// A failed reply: a run gone quiet or a refusal is invalid input (2), anything else a failure (1).
ClockOutcome failed_reply(const LiveRun& live, const lockstep::ControlReply& r,
                          const std::string& what) {
  if (r.error.rfind("timeout", 0) == 0) return invalid(live.not_live + " (" + r.error + ")");
  if (r.error.find(kLockstepRefusal) != std::string::npos || r.error.rfind("refused", 0) == 0 ||
      r.error.find("refused:") != std::string::npos) {
    return invalid(r.error);
  }
  return {1, what + " failed: " + r.error + "\n"};
}

// The status as "key: value" lines.
std::string format_status(const LiveRun& live, const lockstep::CoordinatorStatus& s,
                          const std::string& what, const std::string& background) {
  std::ostringstream out;
  out << "state: " << (s.paused ? "paused" : "running") << "\n";
  out << "mode: " << live.mode << "\n";
  out << "sim_time_s: " << format_seconds(s.time) << "\n";
  out << "iteration: " << (live.step_ns > 0 ? s.time.ns() / live.step_ns : 0) << "\n";
  out << "rtf: " << (std::isfinite(s.measured_rtf) ? fixed(s.measured_rtf, 3) : "inf") << "\n";
  // Each participant once (its threads share its role), in the coordinator's order.
  std::string parts;
  std::vector<std::string> seen;
  for (const lockstep::ParticipantStatus& p : s.participants) {
    if (std::find(seen.begin(), seen.end(), p.participant) != seen.end()) continue;
    seen.push_back(p.participant);
    parts += (parts.empty() ? "" : ", ") + p.participant + " (" +
             (p.role == lockstep::Role::kFollowing ? "following" : "regulating") + ")";
  }
  out << "participants: " << parts << "\n";
  if (what != "status") out << "done: " << what << background << "\n";
  return out.str();
}

}  // namespace

ClockOutcome clock_command(const ClockRequest& req) {
  LiveRun live;
  if (auto refusal = find_live_run(req, live)) return std::move(*refusal);
  std::string what;
  auto request = build_request(req, live, what);
  if (auto* refusal = std::get_if<ClockOutcome>(&request)) return std::move(*refusal);
  const lockstep::Control& c = std::get<lockstep::Control>(request);
  lockstep::ControlReply r;
  std::string background;
  try {
    r = send_request(req, live, c, background);
  } catch (const std::exception& e) {
    return invalid(live.run + ": cannot reach the run's control endpoint: " + e.what());
  }
  if (!r.ok) return failed_reply(live, r, what);
  return {0, format_status(live, r.status, what, background)};
}

}  // namespace fieldproof::engine
