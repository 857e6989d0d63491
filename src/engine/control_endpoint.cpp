#include "control_endpoint.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <zmq.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "fieldproof/engine/clock_control.hpp"
#include "fieldproof/lockstep/codec.hpp"
#include "fieldproof/lockstep/transport.hpp"
#include "fieldproof/lockstep/zmq_server.hpp"
#include "fieldproof/time/system_clock.hpp"
#include "fieldproof/util/input_file.hpp"

namespace fieldproof::engine {

namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error(what + ": " + zmq_strerror(zmq_errno()));
}

bool send_part(void* s, const std::string& bytes, int flags) {
  return zmq_send(s, bytes.data(), bytes.size(), flags) >= 0;
}

}  // namespace

ControlEndpoint::ControlEndpoint(std::string socket_path, Handler handler,
                                 std::function<void()> idle)
    : path_(std::move(socket_path)),
      endpoint_("ipc://" + path_),
      handler_(std::move(handler)),
      idle_(std::move(idle)) {
  if (path_.size() >= sizeof(sockaddr_un{}.sun_path)) {
    throw std::runtime_error(path_ + ": the control socket's path is too long for a Unix socket (" +
                             std::to_string(path_.size()) +
                             " characters; use a shorter runs "
                             "directory)");
  }
  context_ = zmq_ctx_new();
  if (!context_) fail("cannot create a ZeroMQ context");
  socket_ = zmq_socket(context_, ZMQ_ROUTER);
  if (!socket_) {
    zmq_ctx_term(context_);
    fail("cannot create the control socket");
  }
  int zero = 0;
  zmq_setsockopt(socket_, ZMQ_LINGER, &zero, sizeof zero);
  if (zmq_bind(socket_, endpoint_.c_str()) != 0) {
    const std::string why = zmq_strerror(zmq_errno());
    zmq_close(socket_);
    zmq_ctx_term(context_);
    throw std::runtime_error("cannot bind the control endpoint " + endpoint_ + ": " + why);
  }
  thread_ = std::thread([this] { serve(); });
}

ControlEndpoint::~ControlEndpoint() { stop(); }

void ControlEndpoint::stop() {
  if (!context_) return;
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  zmq_close(socket_);
  zmq_ctx_term(context_);
  context_ = nullptr;
  socket_ = nullptr;
  ::unlink(path_.c_str());
}

void ControlEndpoint::serve() {
  while (!stop_.load()) {
    zmq_pollitem_t item{socket_, 0, ZMQ_POLLIN, 0};
    const int n = zmq_poll(&item, 1, 50);
    if (n < 0 && zmq_errno() != EINTR) return;
    if (idle_) idle_();
    if (n <= 0 || !(item.revents & ZMQ_POLLIN)) continue;
    while (true) {
      // [routing id][frame] (a DEALER sends no delimiter); anything else is dropped.
      std::string parts[3];
      int count = 0;
      bool more = true;
      bool got = false;
      while (more) {
        zmq_msg_t msg;
        zmq_msg_init(&msg);
        if (zmq_msg_recv(&msg, socket_, ZMQ_DONTWAIT) < 0) {
          zmq_msg_close(&msg);
          break;
        }
        got = true;
        if (count < 3) {
          parts[count].assign(static_cast<const char*>(zmq_msg_data(&msg)), zmq_msg_size(&msg));
        }
        ++count;
        more = zmq_msg_more(&msg) != 0;
        zmq_msg_close(&msg);
      }
      if (!got) break;
      if (count != 2) continue;
      lockstep::Frame reply;
      const lockstep::DecodeResult r = lockstep::decode_frame(parts[1], size_t{1} << 16);
      if (!r) {
        reply = r.error();
      } else if (const auto* c = std::get_if<lockstep::Control>(&r.frame())) {
        reply = handler_(*c);
      } else {
        reply = lockstep::Error{lockstep::ErrorCode::kMalformed,
                                "the run's control endpoint takes only control frames"};
      }
      send_part(socket_, parts[0], ZMQ_SNDMORE | ZMQ_DONTWAIT);
      send_part(socket_, lockstep::encode_frame(reply), ZMQ_DONTWAIT);
    }
  }
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

}  // namespace

ClockOutcome clock_command(const ClockRequest& req) {
  namespace fs = std::filesystem;
  const std::string run = req.run_dir.string();
  std::error_code ec;
  if (!fs::is_directory(req.run_dir, ec)) {
    return invalid(run + ": no such run directory");
  }
  const fs::path sock = req.run_dir / kControlSocketFile;
  const fs::path info_file = req.run_dir / kControlInfoFile;
  const std::string not_live =
      run + ": the run is not live (" +
      std::string(fs::exists(req.run_dir / "run.json", ec) ? "it has ended"
                                                           : "no control endpoint") +
      "); fieldproof clock acts only on a run in progress";
  if (!fs::exists(info_file, ec)) return invalid(not_live);
  const util::InputFile text =
      util::read_input_file(info_file, util::kMaxSmallFileBytes, "the run's control.json");
  if (!text.ok()) return invalid(text.error);
  const nlohmann::json info = nlohmann::json::parse(text.text, nullptr, /*allow_exceptions=*/false);
  if (!info.is_object()) {
    return invalid(info_file.string() + ": not a JSON object (the run writes it; is it damaged?)");
  }
  // Each field has its type, or the file is refused naming it (a value of another type used to
  // abort the command).
  const auto field_error = [&](const char* key, const char* type) -> std::string {
    return info_file.string() + ": " + key + " must be " + type + ", got " + info[key].dump();
  };
  int64_t step_ns = 0;
  if (info.contains("physics_step_ns")) {
    if (!info["physics_step_ns"].is_number_integer()) {
      return invalid(field_error("physics_step_ns", "a whole number of nanoseconds"));
    }
    step_ns = info["physics_step_ns"].get<int64_t>();
  }
  std::string mode = "sim";
  if (info.contains("mode")) {
    if (!info["mode"].is_string()) return invalid(field_error("mode", "a string"));
    mode = info["mode"].get<std::string>();
  }
  std::string endpoint;
  if (info.contains("endpoint")) {
    if (!info["endpoint"].is_string()) return invalid(field_error("endpoint", "a string"));
    endpoint = info["endpoint"].get<std::string>();
  }
  // The socket is in the run directory, or (a run directory too deep for a Unix socket's path)
  // where control.json's endpoint says.
  std::string sock_path = fs::absolute(sock).string();
  if (endpoint.rfind("ipc://", 0) == 0) sock_path = endpoint.substr(6);
  if (!fs::exists(sock_path, ec)) return invalid(not_live);
  if (!socket_accepts(sock_path)) return invalid(not_live);

  lockstep::Control c = lockstep::status_request();
  std::string what = "status";
  switch (req.action) {
    case ClockAction::kStatus:
      break;
    case ClockAction::kPause:
      c = lockstep::pause_request();
      what = "pause";
      break;
    case ClockAction::kResume:
      c = lockstep::resume_request();
      what = "resume";
      break;
    case ClockAction::kStep: {
      what = "step";
      if (req.steps.has_value() == req.seconds.has_value()) {
        return invalid("step: give exactly one of --steps N or --seconds S");
      }
      Duration d;
      if (req.steps) {
        if (*req.steps <= 0) return invalid("step: --steps must be a whole number > 0");
        if (step_ns <= 0) return invalid(info_file.string() + ": no physics_step_ns");
        if (*req.steps > (INT64_MAX - 1) / step_ns) {
          return invalid("step: --steps " + std::to_string(*req.steps) +
                         " steps of " + format_seconds(Duration::from_ns(step_ns)) +
                         " s overflow simulated time (about 292 years at most)");
        }
        d = Duration::from_ns(*req.steps) * step_ns;
      } else {
        const auto p = parse_duration(*req.seconds);
        if (!p) return invalid("step: --seconds: " + p.error());
        if (p.value() <= Duration::zero()) return invalid("step: --seconds must be > 0");
        d = p.value();
        // The world advances whole physics steps only (sim.step refuses the same durations).
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
      }
      c = lockstep::step_request(d);
      break;
    }
  }
  lockstep::ControlReply r;
  std::string background;
  try {
    lockstep::ControlClient client("ipc://" + sock_path);
    r = client.request(c, req.timeout);
    if (r.ok && req.action == ClockAction::kStep) {
      // The engine answers a step at once and completes it in the background: follow it with
      // status requests (they keep being answered) for up to the reply timeout.
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
                     " s; `fieldproof clock " + run + " status` follows it)";
      }
    }
  } catch (const std::exception& e) {
    return invalid(run + ": cannot reach the run's control endpoint: " + e.what());
  }
  if (!r.ok) {
    if (r.error.rfind("timeout", 0) == 0) return invalid(not_live + " (" + r.error + ")");
    if (r.error.find(kLockstepRefusal) != std::string::npos || r.error.rfind("refused", 0) == 0 ||
        r.error.find("refused:") != std::string::npos) {
      return invalid(r.error);
    }
    return {1, what + " failed: " + r.error + "\n"};
  }
  const lockstep::Status& s = r.status;
  std::ostringstream out;
  out << "state: " << (s.paused ? "paused" : "running") << "\n";
  out << "mode: " << mode << "\n";
  out << "sim_time_s: " << format_seconds(s.time) << "\n";
  out << "iteration: " << (step_ns > 0 ? s.time.ns() / step_ns : 0) << "\n";
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
  return {0, out.str()};
}

}  // namespace fieldproof::engine
