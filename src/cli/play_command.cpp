// `fieldproof play FILE.mcap [--rate R] [--start-paused] [--start-offset S]
// [--playback-duration D] [--playback-until T] [--loop] [--topics T]... [--echo]
// [--control EP]`: plays a recording with a record::Player (paced by a TimeControllerClock).
//   --echo      one JSON line per message on standard output:
//               {"topic":"/odom","log_time":1000000000,"size":42}
//   keyboard    when standard input is a terminal (raw mode, restored on every exit):
//               space pause/resume, right arrow play the next message (while paused),
//               up/down rate x1.1 / /1.1, left arrow or ',' seek back 5 s, '.' or shift+right
//               seek forward 5 s (shift+left back 5 s), 'q' quit.
//   --control   a ZeroMQ ROUTER endpoint speaking the lock-step control frames
//               (docs/protocol.md 8.1: PlayerControl -> PlayerReply, Control -> ControlReply);
//               `fieldproof clock EP status|pause|resume|toggle|rate R|seek T|play-next|burst N`.
//   progress    a status line on standard error when it is a terminal (quiet when piped).
// The playback itself (the player, its coordinator publishing and its control server) is
// engine::PlaySession (include/fieldproof/engine/play_session.hpp); this file parses, calls it,
// and does the terminal's part: keys, the progress line, --echo, signals and messages.
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

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "fieldproof/engine/play_session.hpp"
#include "fieldproof/record/player.hpp"
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

void say(std::string_view line) {
  std::fprintf(stderr, "fieldproof play: %.*s\n", static_cast<int>(line.size()), line.data());
}

std::string sec(Duration d) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(d.ns()) / 1e9);
  return buf;
}

// Bad input (an option, a file that is not MCAP, an endpoint) is 2; the rest (a file that could
// not be read, no coordinator, a refusal) is 1.
int exit_code(const Status& s) {
  return s.code() == StatusCode::kInvalidArgument || s.code() == StatusCode::kNotMcap
             ? kExitInvalid
             : kExitFailed;
}

// The session's options from the command line; the durations are parsed here.
Result<engine::PlaySessionOptions> session_options(const PlayArgs& a) {
  engine::PlaySessionOptions o;
  o.file = a.file;
  o.player.rate = a.rate;
  o.player.start_paused = a.start_paused;
  o.player.loop = a.loop;
  o.player.topics = a.topics;
  o.coordinator = a.coordinator;
  o.clock_hz = a.clock_hz;
  o.follow_clock = a.follow_clock;
  o.extrapolate = a.extrapolate;
  o.name = a.name;
  o.control = a.control;
  o.on_diagnostic = say;
  const auto offset = parse_duration(a.start_offset);
  if (!offset.ok()) {
    return Status(StatusCode::kInvalidArgument, "--start-offset: " + offset.status().message());
  }
  o.player.start_offset = *offset;
  for (auto [text, out, name] :
       {std::tuple{&a.playback_duration, &o.player.playback_duration, "--playback-duration"},
        std::tuple{&a.playback_until, &o.player.playback_until, "--playback-until"}}) {
    if (text->empty()) continue;
    const auto d = parse_duration(*text);
    if (!d.ok()) {
      return Status(StatusCode::kInvalidArgument, std::string(name) + ": " + d.status().message());
    }
    *out = *d;
  }
  return o;
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


// Stop signals are taken by a thread of our own (sigtimedwait), so Ctrl-C ends promptly even
// while paused, and the terminal is restored by the normal return path. They are blocked
// before any other thread starts (the coordinator link's included), so every thread inherits
// the mask; the destructor ends the thread and restores the mask.
class StopSignals {
 public:
  StopSignals() {
    sigemptyset(&signals_);
    sigaddset(&signals_, SIGINT);
    sigaddset(&signals_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals_, &old_mask_);
  }
  ~StopSignals() {
    done_.store(true);
    if (thread_.joinable()) thread_.join();
    pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // A signal stops the session; while joining (which waits for the coordinator's first grant)
  // it ends the process at once.
  void watch(engine::PlaySession& session) {
    thread_ = std::thread([this, &session] {
      const timespec tick{0, 100'000'000};
      while (!done_.load()) {
        if (sigtimedwait(&signals_, nullptr, &tick) > 0) {
          if (joining.load()) {
            std::fprintf(stderr, "fieldproof play: interrupted while joining the coordinator\n");
            std::_Exit(kExitInterrupted);
          }
          interrupted.store(true);
          session.stop();
          return;
        }
      }
    });
  }

  std::atomic<bool> joining{false};
  std::atomic<bool> interrupted{false};

 private:
  sigset_t signals_;
  sigset_t old_mask_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

// The keyboard (when standard input is a terminal) and the progress line (when standard error
// is one), on a thread of their own until the destructor.
class Terminal {
 public:
  explicit Terminal(record::Player& p) : raw_(STDIN_FILENO), progress_(::isatty(STDERR_FILENO) != 0) {
    if (!raw_.active() && !progress_) return;
    thread_ = std::thread([this, &p] {
      std::string pending;
      while (!done_.load()) {
        pollfd pfd{raw_.active() ? STDIN_FILENO : -1, POLLIN, 0};
        if (::poll(&pfd, 1, 100) > 0 && (pfd.revents & POLLIN) != 0) {
          char buf[64];
          const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
          if (n > 0) pending.append(buf, static_cast<size_t>(n));
          if (!handle_keys(p, pending)) p.stop();
        }
        if (progress_) {
          const std::string line = progress_line(p.status());
          std::fputs(line.c_str(), stderr);
          std::fflush(stderr);
        }
      }
    });
  }
  ~Terminal() { stop(); }
  Terminal(const Terminal&) = delete;
  Terminal& operator=(const Terminal&) = delete;
  void stop() {
    done_.store(true);
    if (thread_.joinable()) thread_.join();
  }
  bool progress() const { return progress_; }

 private:
  RawTerminal raw_;
  const bool progress_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

// --echo: one JSON line per message, {"topic":...,"log_time":...,"size":...} in that order.
class Echo {
 public:
  void operator()(const record::PlayedMessage& m) {
    const nlohmann::ordered_json j{{"topic", std::string(m.topic)},
                                   {"log_time", m.log_time_ns},
                                   {"size", m.data.size()}};
    const std::string line =
        j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
    MutexLock lock(mutex_);
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fflush(stdout);
  }

 private:
  Mutex mutex_;  // guards no data: one whole line at a time on stdout
};

int run_play(const PlayArgs& a) {
  if (!a.echo && a.coordinator.empty()) {
    say("nothing to play to: give --echo or --coordinator EP");
    return kExitInvalid;
  }
  auto options = session_options(a);
  if (!options.ok()) {
    say(options.status().message());
    return kExitInvalid;
  }
  // Declared before the signals: their thread (which may stop the session) ends first.
  std::unique_ptr<engine::PlaySession> session;
  StopSignals signals;
  auto opened = engine::PlaySession::open(std::move(options).value());
  if (!opened.ok()) {
    say(opened.status().message());
    return exit_code(opened.status());
  }
  session = std::move(opened).value();
  record::Player& p = session->player();
  for (const std::string& n : p.notices()) say(n);
  for (const std::string& n : p.problems()) say("skipped " + n);

  signals.watch(*session);
  signals.joining.store(!a.coordinator.empty());
  if (const Status joined = session->join(); !joined.ok()) {
    say(joined.message());
    return exit_code(joined);
  }
  signals.joining.store(false);

  Terminal terminal(p);
  Echo echo;
  const engine::PlayOutcome out = session->run([&](const record::PlayedMessage& m) {
    if (a.echo) echo(m);
  });
  terminal.stop();
  if (terminal.progress()) std::fputs("\n", stderr);
  if (!out.complete) {
    std::fprintf(stderr,
                 "fieldproof play: the recording is damaged or cut short: played its %llu "
                 "complete messages, skipped %zu damaged part(s)\n",
                 static_cast<unsigned long long>(out.played), out.damaged);
  }
  if (signals.interrupted.load()) {
    say("interrupted");
    return kExitInterrupted;
  }
  if (!out.complete && out.played == 0) {
    // Nothing at all came out of a damaged file: a stated failure, not a quiet success.
    say("no message could be played: the damage (above) hides every message of the recording");
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
  cmd->add_option(
      "--control", args->control,
      "a ZeroMQ endpoint for control frames (e.g. ipc:///tmp/play.ipc; docs/protocol.md "
      "8.1): fieldproof clock EP status|pause|resume|toggle|rate R|seek T|play-next|"
      "burst N");
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
