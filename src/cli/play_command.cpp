// `fieldproof play FILE.mcap [--rate R] [--start-paused] [--start-offset S]
// [--playback-duration D] [--playback-until T] [--loop] [--topics T]... [--echo]
// [--control EP]`: plays a recording with a record::Player (paced by a TimeControllerClock).
//   --echo      one JSON line per message on standard output:
//               {"topic":"/odom","log_time":1000000000,"size":42}
//   keyboard    when standard input is a terminal (raw mode, restored on every exit):
//               space pause/resume, right arrow play the next message (while paused),
//               up/down rate x1.1 / /1.1, left arrow or ',' seek back 5 s, '.' or shift+right
//               seek forward 5 s (shift+left back 5 s), 'q' quit.
//   --control   a ZeroMQ REP endpoint taking one text command per request: pause, resume,
//               toggle, set_rate R, seek T (from the start of playback; clamped and said),
//               play_next, burst N, status; the reply is one JSON object {"ok":...}.
//   progress    a status line on standard error when it is a terminal (quiet when piped).
// Ctrl-C (SIGINT/SIGTERM) ends promptly, paused or not: exit 130. Problems (a cut file, an offset
// past the end, a clamped seek) go to standard error. Exit 0 played, 1 the file could not be
// read, 2 bad input.
//   --coordinator EP   join the lock-step coordinator at EP (regulating, named --name) and
//               publish each message on its topic with its type, stamped at its log time; the
//               player announces the stamp of its next message, so no participant's time passes
//               a message before it is published (docs/playback.md, "Publishing onto a
//               coordinator").
//   --clock [HZ] (with --coordinator) the player is the time source: it also announces the player
//               clock HZ times per second, so the coordinator's time follows pause, rate and seek,
//               and publishes /clock (ignition.msgs.Clock, sim = the player's log time) at HZ.
//   --follow-clock (with --coordinator) pace by another player's /clock instead (ExternalClock,
//               --extrapolate): a following participant; the controls are refused.
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <termios.h>
#include <unistd.h>
#include <zmq.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/commands.hpp"
#include "fieldproof/lockstep/participant.hpp"
#include "fieldproof/lockstep/zmq_server.hpp"
#include "fieldproof/msgs/ign.hpp"
#include "fieldproof/record/player.hpp"
#include "fieldproof/time/player_clock.hpp"
#include "fieldproof/util/mutex.hpp"

namespace fieldproof::cli {
namespace {

struct PlayArgs {
  std::string file;
  bool echo = false;
  double rate = 1.0;
  bool start_paused = false;
  std::string start_offset = "0";
  std::string playback_duration;
  std::string playback_until;
  bool loop = false;
  std::vector<std::string> topics;
  std::string coordinator;
  std::optional<double> clock_hz;  // set when --clock is given (kDefaultClockHz without a value)
  std::string clock_text;
  bool follow_clock = false;
  bool extrapolate = false;
  std::string name;
  std::string control;
};

constexpr double kDefaultClockHz = 100.0;
// How long the coordinator has to answer before the player gives up joining.
constexpr Duration kJoinTimeout = seconds(5);
constexpr std::string_view kClockTopic = "/clock";
constexpr std::string_view kClockType = "ignition.msgs.Clock";

// The leading player on a coordinator (a regulating participant). Stamps on the coordinator are
// log time + offset_: offset_ starts at max(0, grant at joining - range start) and only grows, at
// a backward jump of the player clock (seek back, loop) by just enough that every later stamp is
// >= what was announced, because the coordinator's time never goes backwards. The announcement
// is the stamp of the next message (without --clock) or min(player clock, next message) (with
// --clock, refreshed at HZ): never above a message not yet published, never backwards.
class CoordinatorPublisher {
 public:
  CoordinatorPublisher(lockstep::Participant& participant, bool drive, SimTime range_start)
      : p_(participant), drive_(drive) {
    const SimTime joined = p_.now();
    announced_ = joined;
    if (joined > range_start) offset_ = joined - range_start;
    next_ = range_start + offset_;
    raise_locked(range_start + offset_);
  }

  void on_message(const record::PlayedMessage& m) {
    MutexLock lock(mutex_);
    SimTime stamp = SimTime::from_ns(m.log_time_ns) + offset_;
    if (stamp < announced_) stamp = announced_;  // defensive: the offset keeps this from happening
    p_.publish_at(stamp, std::string(m.topic), std::string(m.data), std::string(m.type));
    next_ = m.next_log_time_ns ? std::max(SimTime::from_ns(*m.next_log_time_ns) + offset_, stamp)
                               : SimTime::infinite();
    raise_locked(drive_ ? stamp : next_);
  }

  // The player clock jumped (seek, loop): keep every later stamp at or above the announcement.
  void on_jump(const ClockJump& j) {
    MutexLock lock(mutex_);
    if (j.to + offset_ < announced_) offset_ = announced_ - j.to;
    next_ = j.to + offset_;  // the first message after a jump is stamped >= j.to
  }

  // The clock publisher's tick (with --clock): time follows the player clock; /clock says it.
  void on_tick(SimTime log_now, bool publish_clock) {
    MutexLock lock(mutex_);
    raise_locked(std::min(log_now + offset_, next_));
    // A paused clock repeats its time: those publications could only wait, undelivered, until
    // the coordinator's time moves again, so they are left out (a follower's watchdog then says
    // the source is silent, and its time stands still as the leader's does).
    if (!publish_clock || (last_clock_ && *last_clock_ == log_now)) return;
    last_clock_ = log_now;
    ignition::msgs::Clock c;
    *c.mutable_sim() = msgs::to_time(log_now);
    p_.publish_at(announced_, std::string(kClockTopic), msgs::serialize(c),
                  std::string(kClockType));
  }

 private:
  void raise_locked(SimTime t) {
    if (t <= announced_ && !first_) return;
    first_ = false;
    announced_ = std::max(t, announced_);
    p_.main_thread().announce(announced_);
  }

  lockstep::Participant& p_;
  const bool drive_;
  Mutex mutex_;
  Duration offset_ = Duration::zero();
  SimTime announced_;
  SimTime next_;
  std::optional<SimTime> last_clock_;  // the last /clock published
  bool first_ = true;
};

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string sec(Duration d) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(d.ns()) / 1e9);
  return buf;
}

std::string status_json(const record::PlayerStatus& s) {
  std::ostringstream o;
  o << "{\"ok\":true,\"paused\":" << (s.paused ? "true" : "false") << ",\"rate\":" << s.rate
    << ",\"now\":" << s.now.ns() << ",\"offset\":" << sec(s.now - s.range_start)
    << ",\"played\":" << s.played << ",\"position\":" << s.position << ",\"total\":" << s.total
    << ",\"loops\":" << s.loops << "}";
  return o.str();
}

std::string refused_json(const std::string& message) {
  return "{\"ok\":false,\"error\":" + json_string(message) + "}";
}

std::string clock_reply(const ClockStatus& s) {
  return s.ok() ? std::string("{\"ok\":true}") : refused_json(s.message());
}

// One control command (the --control endpoint; the keyboard maps onto the same calls).
std::string handle_command(record::Player& player, const std::string& line) {
  std::istringstream in(line);
  std::string verb;
  in >> verb;
  if (verb == "pause") return clock_reply(player.pause());
  if (verb == "resume") return clock_reply(player.resume());
  if (verb == "toggle") return clock_reply(player.toggle());
  if (verb == "play_next") return clock_reply(player.play_next());
  if (verb == "status") return status_json(player.status());
  if (verb == "set_rate") {
    std::string text;
    in >> text;
    char* end = nullptr;
    const double rate = std::strtod(text.c_str(), &end);
    if (text.empty() || end == nullptr || *end != '\0') {
      return refused_json("set_rate: '" + text + "' is not a number");
    }
    return clock_reply(player.set_rate(rate));
  }
  if (verb == "burst") {
    std::string text;
    in >> text;
    char* end = nullptr;
    const long long n = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || n <= 0) {
      return refused_json("burst: '" + text + "' is not a count > 0");
    }
    uint64_t played = 0;
    const ClockStatus s = player.burst(static_cast<uint64_t>(n), &played);
    if (!s.ok()) return refused_json(s.message());
    return "{\"ok\":true,\"played\":" + std::to_string(played) + "}";
  }
  if (verb == "seek") {
    std::string text;
    in >> text;
    const auto d = parse_duration(text);
    if (!d) return refused_json("seek: " + d.error());
    const record::SeekResult r = player.seek(player.status().range_start + *d);
    if (r.clamped) std::fprintf(stderr, "fieldproof play: %s\n", r.message.c_str());
    return "{\"ok\":true,\"to\":" + std::to_string(r.to.ns()) +
           ",\"clamped\":" + (r.clamped ? "true" : "false") +
           (r.clamped ? ",\"message\":" + json_string(r.message) : std::string()) + "}";
  }
  return refused_json("unknown command '" + verb +
                      "' (pause, resume, toggle, set_rate R, seek T, play_next, burst N, status)");
}

// Raw mode on a terminal for the keyboard; the destructor restores what was there.
class RawTerminal {
 public:
  explicit RawTerminal(int fd) : fd_(fd) {
    if (!::isatty(fd) || ::tcgetattr(fd, &saved_) != 0) return;
    termios raw = saved_;
    raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);  // ISIG kept: Ctrl-C is SIGINT
    raw.c_cc[VMIN] = 0;
    raw.c_cc[VTIME] = 0;
    active_ = ::tcsetattr(fd, TCSANOW, &raw) == 0;
  }
  ~RawTerminal() {
    if (active_) ::tcsetattr(fd_, TCSANOW, &saved_);
  }
  RawTerminal(const RawTerminal&) = delete;
  RawTerminal& operator=(const RawTerminal&) = delete;
  bool active() const { return active_; }

 private:
  int fd_;
  termios saved_{};
  bool active_ = false;
};

constexpr Duration kSeekStep = seconds(5);

// Handles the keys read so far; returns false on 'q'.
bool handle_keys(record::Player& player, std::string& pending) {
  while (!pending.empty()) {
    auto seek = [&](Duration d) {
      const record::SeekResult r = player.seek_by(d);
      if (r.clamped) std::fprintf(stderr, "\r\nfieldproof play: %s\r\n", r.message.c_str());
    };
    auto rate = [&](double factor) { (void)player.set_rate(player.status().rate * factor); };
    if (pending[0] == '\x1b') {
      // ESC [ A/B/C/D, or ESC [ 1 ; 2 C/D with shift.
      if (pending.size() < 3) return true;  // wait for the rest
      std::string seq;
      size_t n = 2;
      if (pending[1] == '[') {
        while (n < pending.size() && !(pending[n] >= 'A' && pending[n] <= 'Z') &&
               !(pending[n] >= 'a' && pending[n] <= 'z') && pending[n] != '~') {
          ++n;
        }
        if (n >= pending.size()) return true;
        seq = pending.substr(2, n - 1);
      }
      pending.erase(0, n + 1);
      if (seq == "A")
        rate(1.1);
      else if (seq == "B")
        rate(1.0 / 1.1);
      else if (seq == "C")
        (void)player.play_next();
      else if (seq == "D" || seq == "1;2D")
        seek(-kSeekStep);
      else if (seq == "1;2C")
        seek(kSeekStep);
      continue;
    }
    const char c = pending[0];
    pending.erase(0, 1);
    if (c == ' ')
      (void)player.toggle();
    else if (c == ',')
      seek(-kSeekStep);
    else if (c == '.')
      seek(kSeekStep);
    else if (c == 'q')
      return false;
  }
  return true;
}

std::string progress_line(const record::PlayerStatus& s) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "\r[%s] %s / %s s  rate %.3g  %llu/%llu msgs\x1b[K",
                s.paused ? "paused" : "playing", sec(s.now - s.range_start).c_str(),
                sec(s.range_end - s.range_start).c_str(), s.rate,
                static_cast<unsigned long long>(s.position),
                static_cast<unsigned long long>(s.total));
  return buf;
}

int run_play(const PlayArgs& a) {
  if (a.coordinator.empty() && (a.clock_hz || a.follow_clock)) {
    std::fprintf(stderr, "fieldproof play: --clock and --follow-clock need --coordinator EP\n");
    return kExitInvalid;
  }
  if (a.clock_hz && (!std::isfinite(*a.clock_hz) || *a.clock_hz < 0)) {
    std::fprintf(stderr, "fieldproof play: --clock %g refused: must be a finite number >= 0\n",
                 *a.clock_hz);
    return kExitInvalid;
  }
  if (a.clock_hz && a.follow_clock) {
    std::fprintf(stderr,
                 "fieldproof play: --clock and --follow-clock exclude each other (a player is "
                 "the time source or follows one)\n");
    return kExitInvalid;
  }
  if (a.extrapolate && !a.follow_clock) {
    std::fprintf(stderr, "fieldproof play: --extrapolate needs --follow-clock\n");
    return kExitInvalid;
  }
  if (!a.echo && a.coordinator.empty()) {
    std::fprintf(stderr, "fieldproof play: nothing to play to: give --echo or --coordinator EP\n");
    return kExitInvalid;
  }
  if (!(a.rate > 0.0) || !std::isfinite(a.rate)) {
    std::fprintf(stderr, "fieldproof play: --rate %g refused: must be a finite number > 0\n",
                 a.rate);
    return kExitInvalid;
  }
  record::PlayerOptions po;
  po.rate = a.rate;
  po.start_paused = a.start_paused;
  po.loop = a.loop;
  po.topics = a.topics;
  // A follower paces by another player's /clock, received through the coordinator. The watchdog
  // stops its time when that clock goes silent (the leader paused its publication or ended).
  std::unique_ptr<ExternalClock> followed;
  if (a.follow_clock) {
    followed = std::make_unique<ExternalClock>(ExternalClockOptions{
        .initial = SimTime::from_ns(std::numeric_limits<int64_t>::min()),
        .extrapolate = a.extrapolate,
        .window = 8,
        .watchdog = seconds(1),
        .on_silent = {},
        .logger = [](std::string_view w) {
          std::fprintf(stderr, "fieldproof play: %.*s\n", static_cast<int>(w.size()), w.data());
        }});
    po.follow = followed.get();
  }
  const auto offset = parse_duration(a.start_offset);
  if (!offset) {
    std::fprintf(stderr, "fieldproof play: --start-offset: %s\n", offset.error().c_str());
    return kExitInvalid;
  }
  po.start_offset = *offset;
  for (auto [text, out, name] :
       {std::tuple{&a.playback_duration, &po.playback_duration, "--playback-duration"},
        std::tuple{&a.playback_until, &po.playback_until, "--playback-until"}}) {
    if (text->empty()) continue;
    const auto d = parse_duration(*text);
    if (!d) {
      std::fprintf(stderr, "fieldproof play: %s: %s\n", name, d.error().c_str());
      return kExitInvalid;
    }
    *out = *d;
  }

  auto opened = record::Player::open(a.file, po);
  if (!opened.ok()) {
    const record::Status s = opened.status();
    std::fprintf(stderr, "fieldproof play: %s: %s\n", a.file.c_str(), s.to_string().c_str());
    return s.code() == record::StatusCode::kNotMcap ||
                   s.code() == record::StatusCode::kInvalidArgument
               ? kExitInvalid
               : kExitFailed;
  }
  std::unique_ptr<record::Player> player = std::move(opened).value();
  record::Player& p = *player;
  for (const std::string& n : p.notices()) std::fprintf(stderr, "fieldproof play: %s\n", n.c_str());
  for (const std::string& n : p.problems()) {
    std::fprintf(stderr, "fieldproof play: skipped %s\n", n.c_str());
  }

  // The control endpoint binds before playback starts, so a client may connect at once.
  void* zctx = nullptr;
  void* rep = nullptr;
  if (!a.control.empty()) {
    zctx = zmq_ctx_new();
    rep = zmq_socket(zctx, ZMQ_REP);
    const int timeout_ms = 100;
    zmq_setsockopt(rep, ZMQ_RCVTIMEO, &timeout_ms, sizeof timeout_ms);
    const int linger = 0;
    zmq_setsockopt(rep, ZMQ_LINGER, &linger, sizeof linger);
    if (zmq_bind(rep, a.control.c_str()) != 0) {
      std::fprintf(stderr, "fieldproof play: --control %s: %s\n", a.control.c_str(),
                   zmq_strerror(zmq_errno()));
      zmq_close(rep);
      zmq_ctx_term(zctx);
      return kExitInvalid;
    }
  }

  const auto close_control = [&] {
    if (rep != nullptr) {
      zmq_close(rep);
      zmq_ctx_term(zctx);
    }
  };

  // Stop signals are taken by a thread of our own (sigtimedwait), so Ctrl-C ends promptly even
  // while paused, and the terminal is restored by the normal return path. They are blocked
  // before any other thread starts (the coordinator link's included), so every thread inherits
  // the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  sigset_t old_mask;
  pthread_sigmask(SIG_BLOCK, &stop_signals, &old_mask);

  std::atomic<bool> done{false};
  std::atomic<bool> joining{false};
  std::atomic<bool> interrupted{false};
  std::atomic<bool> quit{false};
  std::thread signal_thread([&] {
    const timespec tick{0, 100'000'000};
    while (!done.load()) {
      if (sigtimedwait(&stop_signals, nullptr, &tick) > 0) {
        if (joining.load()) {
          std::fprintf(stderr, "fieldproof play: interrupted while joining the coordinator\n");
          std::_Exit(kExitInterrupted);
        }
        interrupted.store(true);
        p.stop();
        return;
      }
    }
  });

  // Joining waits for the coordinator's first grant: Ctrl-C meanwhile ends the process at once.
  joining.store(!a.coordinator.empty());
  std::unique_ptr<lockstep::Participant> participant;
  std::unique_ptr<CoordinatorPublisher> publisher;
  uint64_t jump_handler = 0;
  std::thread receiver;
  if (!a.coordinator.empty()) {
    try {
      // A coordinator that does not answer a status request is not there (a typo in the
      // endpoint, not started): said at once instead of waiting for a first grant forever.
      lockstep::ControlClient probe(a.coordinator);
      const lockstep::ControlReply reply = probe.request(lockstep::status_request(), kJoinTimeout);
      if (!reply.ok && reply.error.rfind("timeout", 0) == 0) {
        std::fprintf(stderr,
                     "fieldproof play: no coordinator answered at %s within %s s (start one with "
                     "`fieldproof coordinator --bind %s`)\n",
                     a.coordinator.c_str(), sec(kJoinTimeout).c_str(), a.coordinator.c_str());
        done.store(true);
        signal_thread.join();
        close_control();
        pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
        return kExitFailed;
      }
      participant = lockstep::connect_participant(
          a.coordinator,
          {.name = a.name.empty() ? (a.follow_clock ? "player-follower" : "player") : a.name,
           .role = a.follow_clock ? lockstep::Role::kFollowing : lockstep::Role::kRegulating,
           .thread = "main",
           .on_error = [](const lockstep::Error& e) {
             std::fprintf(stderr, "fieldproof play: coordinator: %s\n", e.reason.c_str());
           }});
    } catch (const lockstep::TransportError& e) {
      std::fprintf(stderr, "fieldproof play: --coordinator: %s\n", e.what());
      done.store(true);
      signal_thread.join();
      close_control();
      pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
      return kExitInvalid;
    }
    if (!participant->ok()) {
      std::fprintf(stderr, "fieldproof play: the coordinator at %s refused the player: %s\n",
                   a.coordinator.c_str(), participant->last_error().c_str());
      done.store(true);
      signal_thread.join();
      close_control();
      pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
      return kExitFailed;
    }
    // One thread reads the link (grants, errors, the followed /clock) for the whole run.
    lockstep::ParticipantThread& rx = participant->thread("rx");
    if (followed) {
      ExternalClock* clock = followed.get();
      rx.subscribe(std::string(kClockTopic), [clock](const lockstep::Publish& m) {
        if (auto c = msgs::parse<ignition::msgs::Clock>(m.payload)) {
          clock->feed(msgs::from_time(c->sim()));
        }
      });
    } else {
      const SimTime start = p.status().range_start;
      const bool drive = a.clock_hz && *a.clock_hz > 0;
      publisher = std::make_unique<CoordinatorPublisher>(*participant, drive, start);
      CoordinatorPublisher* pub = publisher.get();
      jump_handler = p.clock().add_jump_handler({}, [pub](const ClockJump& j) { pub->on_jump(j); });
      if (a.clock_hz && *a.clock_hz > 0) {
        (void)p.clock().set_clock_publisher(*a.clock_hz,
                                            [pub](SimTime now) { pub->on_tick(now, true); });
      }
    }
    receiver = std::thread([&rx] { (void)rx.spin_until(SimTime::infinite()); });
  }
  joining.store(false);

  std::thread control_thread;
  if (rep != nullptr) {
    control_thread = std::thread([&] {
      while (!done.load()) {
        char buf[512];
        const int n = zmq_recv(rep, buf, sizeof buf, 0);
        if (n < 0) continue;  // timeout: check done
        const std::string reply =
            handle_command(p, std::string(buf, static_cast<size_t>(std::min<int>(n, sizeof buf))));
        zmq_send(rep, reply.data(), reply.size(), 0);
      }
    });
  }

  RawTerminal terminal(STDIN_FILENO);
  const bool progress = ::isatty(STDERR_FILENO) != 0;
  std::thread ui_thread;
  if (terminal.active() || progress) {
    ui_thread = std::thread([&] {
      std::string pending;
      while (!done.load()) {
        pollfd pfd{terminal.active() ? STDIN_FILENO : -1, POLLIN, 0};
        if (::poll(&pfd, 1, 100) > 0 && (pfd.revents & POLLIN) != 0) {
          char buf[64];
          const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
          if (n > 0) pending.append(buf, static_cast<size_t>(n));
          if (!handle_keys(p, pending)) {
            quit.store(true);
            p.stop();
          }
        }
        if (progress) {
          const std::string line = progress_line(p.status());
          std::fputs(line.c_str(), stderr);
          std::fflush(stderr);
        }
      }
    });
  }

  Mutex out_mutex;
  const uint64_t played = p.run([&](const record::PlayedMessage& m) {
    if (publisher) {
      publisher->on_message(m);
    } else if (participant) {
      participant->publish(std::string(m.topic), std::string(m.data), std::string(m.type));
    }
    if (!a.echo) return;
    const std::string line = "{\"topic\":" + json_string(m.topic) +
                             ",\"log_time\":" + std::to_string(m.log_time_ns) +
                             ",\"size\":" + std::to_string(m.data.size()) + "}\n";
    MutexLock lock(out_mutex);
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fflush(stdout);
  });
  done.store(true);
  if (participant) {
    if (publisher) {
      (void)p.clock().set_clock_publisher(0, {});
      (void)p.clock().remove_jump_handler(jump_handler);
    }
    participant->thread("rx").stop();
    receiver.join();
    participant->leave();
  }
  if (ui_thread.joinable()) ui_thread.join();
  if (control_thread.joinable()) control_thread.join();
  signal_thread.join();
  if (rep != nullptr) {
    zmq_close(rep);
    zmq_ctx_term(zctx);
  }
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  if (progress) std::fputs("\n", stderr);
  if (!p.complete()) {
    std::fprintf(stderr,
                 "fieldproof play: the recording is damaged or cut short: played its %llu "
                 "complete messages, skipped %zu damaged part(s)\n",
                 static_cast<unsigned long long>(played), p.problems().size());
  }
  if (interrupted.load()) {
    std::fprintf(stderr, "fieldproof play: interrupted\n");
    return kExitInterrupted;
  }
  if (!p.complete() && played == 0) {
    // Nothing at all came out of a damaged file: a stated failure, not a quiet success.
    std::fprintf(stderr,
                 "fieldproof play: no message could be played: the damage (above) hides every "
                 "message of the recording\n");
    return kExitFailed;
  }
  return kExitOk;
}

}  // namespace

void add_play_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<PlayArgs>();
  CLI::App* cmd = app.add_subcommand("play", "Play a recording (MCAP), paced by the player clock");
  cmd->footer(
      "Keys (when standard input is a terminal):\n"
      "  space          pause / resume\n"
      "  right arrow    play the next message (while paused)\n"
      "  up / down      rate x1.1 / /1.1\n"
      "  left arrow ,   seek back 5 s (also shift+left)\n"
      "  . shift+right  seek forward 5 s\n"
      "  q              quit\n"
      "Ctrl-C ends at once (exit 130). Exit 0 played, 1 the file could not be read, 2 bad input.");
  cmd->add_option("file", args->file, "the recording (.mcap)")->required();
  cmd->add_flag("--echo", args->echo,
                "print each message as a JSON line {topic, log_time, size} on standard output");
  cmd->add_option("--rate", args->rate, "playback rate (> 0; default 1)");
  cmd->add_option("--start-offset", args->start_offset,
                  "start this far after the first message (e.g. 2.5s; default 0)");
  cmd->add_flag("--start-paused", args->start_paused, "start paused (space or 'resume' plays)");
  cmd->add_option("--playback-duration", args->playback_duration,
                  "play this much log time from the start (inclusive)");
  cmd->add_option("--playback-until", args->playback_until,
                  "stop after messages stamped this long after the first message (inclusive)");
  cmd->add_flag("--loop", args->loop, "start again at the end");
  // One topic per --topics (repeat it, or separate with commas): a list that took every word
  // would swallow the file named after it (play --topics /a FILE).
  cmd->add_option("--topics", args->topics,
                  "play only this topic; repeat the flag or separate with commas for more "
                  "(--topics /a --topics /b, --topics /a,/b)")
      ->allow_extra_args(false)
      ->delimiter(',');
  cmd->add_option("--coordinator", args->coordinator,
                  "publish each message onto the lock-step coordinator at this endpoint "
                  "(ipc://PATH or tcp://HOST:PORT), stamped at its log time");
  CLI::Option* clock_option =
      cmd->add_option("--clock", args->clock_text,
                      "with --coordinator: be the time source; the coordinator's time follows the "
                      "player clock and /clock is published HZ times per second (default 100; 0 = "
                      "no /clock)")
          ->expected(0, 1);
  cmd->add_flag("--follow-clock", args->follow_clock,
                "with --coordinator: pace by another player's /clock (that player has --clock)");
  cmd->add_flag("--extrapolate", args->extrapolate,
                "with --follow-clock: extrapolate between /clock samples");
  cmd->add_option("--name", args->name,
                  "participant name on the coordinator (default player, or player-follower)");
  cmd->add_option("--control", args->control,
                  "a ZeroMQ REP endpoint for control commands (e.g. ipc:///tmp/play.ipc)");
  cmd->callback([args, exit_code, clock_option] {
    if (clock_option->count() > 0) {
      if (args->clock_text.empty()) {
        args->clock_hz = kDefaultClockHz;
      } else {
        char* end = nullptr;
        args->clock_hz = std::strtod(args->clock_text.c_str(), &end);
        if (end == nullptr || *end != '\0') {
          std::fprintf(stderr, "fieldproof play: --clock '%s' is not a number (HZ)\n",
                       args->clock_text.c_str());
          *exit_code = kExitInvalid;
          return;
        }
      }
    }
    *exit_code = run_play(*args);
  });
}

}  // namespace fieldproof::cli
