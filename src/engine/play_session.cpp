// PlaySession: a record::Player with its coordinator publishing and its control server
// (include/fieldproof/engine/play_session.hpp, docs/playback.md).
#include "fieldproof/engine/play_session.hpp"

#include <zmq.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "fieldproof/lockstep/participant.hpp"
#include "fieldproof/lockstep/transport.hpp"
#include "fieldproof/lockstep/zmq_server.hpp"
#include "fieldproof/lockstep/zmq_socket.hpp"
#include "fieldproof/msgs/ign.hpp"
#include "fieldproof/util/mutex.hpp"
#include "frame_server.hpp"

namespace fieldproof::engine {
namespace {

std::string sec(Duration d) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(d.ns()) / 1e9);
  return buf;
}

Status invalid(std::string message) {
  return Status(StatusCode::kInvalidArgument, std::move(message));
}

}  // namespace

// The leading player on a coordinator (a regulating participant). Stamps on the coordinator are
// log time + offset_: offset_ starts at max(0, grant at joining - range start) and only grows, at
// a backward jump of the player clock (seek back, loop) by just enough that every later stamp is
// >= what was announced, because the coordinator's time never goes backwards. The announcement
// is the stamp of the next message (without a clock rate) or min(player clock, next message)
// (with one, refreshed at that rate): never above a message not yet published, never backwards.
class PlaySession::Publisher {
 public:
  Publisher(lockstep::Participant& participant, bool drive, SimTime range_start)
      : p_(participant), drive_(drive) {
    const SimTime joined = p_.now();
    MutexLock lock(mutex_);
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
    if (!m.next_log_time_ns) ended_at_ = SimTime::from_ns(m.log_time_ns);
    // The next message's stamp, when playback goes forward to it (a loop's next is behind).
    pending_.reset();
    if (m.next_log_time_ns && *m.next_log_time_ns >= m.log_time_ns) {
      pending_ = SimTime::from_ns(*m.next_log_time_ns);
    }
    raise_locked(drive_ ? stamp : next_);
  }

  // The player clock jumped (seek, loop): keep every later stamp at or above the announcement.
  void on_jump(const ClockJump& j) {
    MutexLock lock(mutex_);
    if (j.to + offset_ < announced_) offset_ = announced_ - j.to;
    next_ = j.to + offset_;  // the first message after a jump is stamped >= j.to
    ended_at_.reset();
    pending_.reset();  // unknown until the first message after the jump
  }

  // The clock publisher's tick (with a clock rate): time follows the player clock; /clock says it.
  void on_tick(SimTime log_now) {
    MutexLock lock(mutex_);
    // /clock never passes a message not yet published (the run thread may wake late for it), nor,
    // after the last message, the end of the recording (the player clock runs on until the session
    // leaves): a follower's time then never overtakes what the leader has still to publish.
    if (ended_at_) log_now = std::min(log_now, *ended_at_);
    if (pending_) log_now = std::min(log_now, *pending_);
    raise_locked(std::min(log_now + offset_, next_));
    // A paused clock repeats its time: those publications could only wait, undelivered, until
    // the coordinator's time moves again, so they are left out (a follower's watchdog then says
    // the source is silent, and its time stands still as the leader's does).
    if (last_clock_ && *last_clock_ == log_now) return;
    last_clock_ = log_now;
    ignition::msgs::Clock c;
    *c.mutable_sim() = msgs::to_time(log_now);
    p_.publish_at(announced_, std::string(kPlayClockTopic), msgs::serialize(c),
                  std::string(kPlayClockType));
  }

 private:
  void raise_locked(SimTime t) FIELDPROOF_REQUIRES(mutex_) {
    if (t <= announced_ && !first_) return;
    first_ = false;
    announced_ = std::max(t, announced_);
    p_.main_thread().announce(announced_);
  }

  lockstep::Participant& p_;
  const bool drive_;
  Mutex mutex_;
  Duration offset_ FIELDPROOF_GUARDED_BY(mutex_) = Duration::zero();
  SimTime announced_ FIELDPROOF_GUARDED_BY(mutex_);
  SimTime next_ FIELDPROOF_GUARDED_BY(mutex_);
  std::optional<SimTime> last_clock_ FIELDPROOF_GUARDED_BY(mutex_);  // the last /clock published
  // The last message's log time, once the last message of the range (not looping) was published.
  std::optional<SimTime> ended_at_ FIELDPROOF_GUARDED_BY(mutex_);
  // The log time of the message that plays next (see on_message), when known.
  std::optional<SimTime> pending_ FIELDPROOF_GUARDED_BY(mutex_);
  bool first_ FIELDPROOF_GUARDED_BY(mutex_) = true;
};

// The control endpoint: a ROUTER bound at open (so a client may connect before playback starts),
// served by a FrameServer on a thread of its own while run() runs (answer_player_frame).
class PlaySession::ControlServer {
 public:
  static Result<std::unique_ptr<ControlServer>> bind(const std::string& endpoint) {
    auto fail = [&](const lockstep::ZmqStatus& s) {
      return invalid("--control " + endpoint + ": " + zmq_strerror(s.error()));
    };
    auto ctx = lockstep::ZmqContext::create();
    if (!ctx.ok()) return fail(ctx.status());
    auto router = lockstep::ZmqSocket::open(*ctx, lockstep::SocketType::kRouter);
    if (!router.ok()) return fail(router.status());
    for (const lockstep::ZmqStatus& s : {router->set_linger(0), router->bind(endpoint)}) {
      if (!s.ok()) return fail(s);
    }
    return std::make_unique<ControlServer>(std::move(ctx).value(), std::move(router).value());
  }

  ControlServer(lockstep::ZmqContext ctx, lockstep::ZmqSocket router)
      : server_(std::move(ctx), std::move(router)) {}

  void start(record::Player& player, const PlayDiagnostic& diagnostic) {
    server_.start([&player, &diagnostic](std::string_view request) {
      return answer_player_frame(player, request, diagnostic);
    });
  }
  void stop() { server_.stop(); }

 private:
  FrameServer server_;
};

Status validate(const PlaySessionOptions& o) {
  if (o.coordinator.empty() && (o.clock_hz || o.follow_clock)) {
    return invalid("--clock and --follow-clock need --coordinator EP");
  }
  if (o.clock_hz && (!std::isfinite(*o.clock_hz) || *o.clock_hz < 0)) {
    char buf[120];
    std::snprintf(buf, sizeof buf, "--clock %g refused: must be a finite number >= 0", *o.clock_hz);
    return invalid(buf);
  }
  if (o.clock_hz && o.follow_clock) {
    return invalid(
        "--clock and --follow-clock exclude each other (a player is the time source or follows "
        "one)");
  }
  if (o.extrapolate && !o.follow_clock) return invalid("--extrapolate needs --follow-clock");
  if (!(o.player.rate > 0.0) || !std::isfinite(o.player.rate)) {
    char buf[120];
    std::snprintf(buf, sizeof buf, "--rate %g refused: must be a finite number > 0", o.player.rate);
    return invalid(buf);
  }
  return {};
}

PlaySession::PlaySession(PlaySessionOptions options) : options_(std::move(options)) {}

PlaySession::~PlaySession() {
  if (control_) control_->stop();
  leave();
}

void PlaySession::say(std::string_view line) const {
  if (options_.on_diagnostic) options_.on_diagnostic(line);
}

Result<std::unique_ptr<PlaySession>> PlaySession::open(PlaySessionOptions options) {
  if (Status v = validate(options); !v.ok()) return v;
  auto session = std::unique_ptr<PlaySession>(new PlaySession(std::move(options)));
  PlaySession& s = *session;
  record::PlayerOptions po = s.options_.player;
  po.follow = nullptr;
  // A follower paces by another player's /clock, received through the coordinator. The watchdog
  // stops its time when that clock goes silent (the leader paused its publication or ended).
  if (s.options_.follow_clock) {
    s.followed_ = std::make_unique<ExternalClock>(
        ExternalClockOptions{.initial = SimTime::from_ns(std::numeric_limits<int64_t>::min()),
                             .extrapolate = s.options_.extrapolate,
                             .window = 8,
                             .watchdog = seconds(1),
                             .on_silent = {},
                             .logger = [&s](std::string_view w) { s.say(w); }});
    po.follow = s.followed_.get();
  }
  auto opened = record::Player::open(s.options_.file, po);
  if (!opened.ok()) {
    const Status st = opened.status();
    return Status(st.code(), s.options_.file + ": " + st.to_string());
  }
  s.player_ = std::move(opened).value();
  if (!s.options_.control.empty()) {
    auto control = ControlServer::bind(s.options_.control);
    if (!control.ok()) return control.status();
    s.control_ = std::move(control).value();
  }
  return session;
}

Status PlaySession::join() {
  const PlaySessionOptions& o = options_;
  if (o.coordinator.empty() || joined_) return {};
  try {
    // A coordinator that does not answer a status request is not there (a typo in the
    // endpoint, not started): said at once instead of waiting for a first grant forever.
    lockstep::ControlClient probe(o.coordinator);
    const lockstep::ControlReply reply = probe.request(lockstep::status_request(), o.join_timeout);
    if (!reply.ok && reply.error.rfind("timeout", 0) == 0) {
      return Status(StatusCode::kUnavailable,
                    "no coordinator answered at " + o.coordinator + " within " +
                        sec(o.join_timeout) + " s (start one with `fieldproof coordinator --bind " +
                        o.coordinator + "`)");
    }
    participant_ = lockstep::connect_participant(
        o.coordinator,
        {.name = o.name.empty() ? (o.follow_clock ? "player-follower" : "player") : o.name,
         .role = o.follow_clock ? lockstep::Role::kFollowing : lockstep::Role::kRegulating,
         .thread = "main",
         .on_error = [this](const lockstep::Error& e) { say("coordinator: " + e.reason); }});
  } catch (const lockstep::TransportError& e) {
    return invalid(std::string("--coordinator: ") + e.what());
  }
  if (!participant_->ok()) {
    Status refused(StatusCode::kUnavailable,
                   "the coordinator at " + o.coordinator +
                       " refused the player: " + participant_->last_error());
    participant_.reset();
    return refused;
  }
  joined_ = true;
  lockstep::ParticipantThread& rx = participant_->thread("rx");
  record::Player& p = *player_;
  if (followed_) {
    ExternalClock* clock = followed_.get();
    rx.subscribe(std::string(kPlayClockTopic), [clock](const lockstep::Publish& m) {
      if (auto c = msgs::parse<ignition::msgs::Clock>(m.payload)) {
        clock->feed(msgs::from_time(c->sim()));
      }
    });
  } else {
    const bool drive = o.clock_hz && *o.clock_hz > 0;
    publisher_ = std::make_unique<Publisher>(*participant_, drive, p.status().range_start);
    Publisher* pub = publisher_.get();
    jump_handler_ = p.clock().add_jump_handler({}, [pub](const ClockJump& j) { pub->on_jump(j); });
    if (drive) {
      (void)p.clock().set_clock_publisher(*o.clock_hz, [pub](SimTime now) { pub->on_tick(now); });
    }
  }
  receiver_ = std::thread([&rx] { (void)rx.spin_until(SimTime::infinite()); });
  return {};
}

PlayOutcome PlaySession::run(const record::MessageSink& on_message) {
  if (control_) control_->start(*player_, options_.on_diagnostic);
  PlayOutcome out;
  out.played = player_->run([&](const record::PlayedMessage& m) {
    if (publisher_) {
      publisher_->on_message(m);
    } else if (participant_) {
      participant_->publish(std::string(m.topic), std::string(m.data), std::string(m.type));
    }
    if (on_message) on_message(m);
  });
  leave();
  if (control_) control_->stop();
  out.complete = player_->complete();
  out.damaged = player_->problems().size();
  return out;
}

void PlaySession::stop() { player_->stop(); }

void PlaySession::leave() {
  if (!participant_) return;
  if (publisher_) {
    (void)player_->clock().set_clock_publisher(0, {});
    (void)player_->clock().remove_jump_handler(jump_handler_);
  }
  participant_->thread("rx").stop();
  if (receiver_.joinable()) receiver_.join();
  participant_->leave();
  participant_.reset();
  publisher_.reset();
}

}  // namespace fieldproof::engine
