// The lock-step coordinator core: owns the shared simulated time, orders every published message
// and grants time (DESIGN.md, "One idea carries everything"; the invariants are in protocol.hpp).
//
// Transport independent and single-threaded: no I/O, no threads, no clock reads of its own. A
// transport feeds it the frames its peers send (handle), tells it when a peer is gone
// (disconnected), and calls poll() at the wall time poll() asked for; the core answers through the
// SendFn given at construction, synchronously, from inside those calls.
//
//   CoordinatorOptions opts;
//   opts.wall_now = SystemClock::wall_now();   // tests inject a fake
//   CoordinatorCore core(opts, [&](ConnId c, Frame f) { queue_for(c).push(std::move(f)); });
//   core.handle(1, Announce{"ugv1", "main", Role::kRegulating, SimTime::from_ns(1'000'000)});
//   // -> Grant{1 ms, 1} is sent to connection 1 (and to every other connection).
//
// Rules (exact):
//  * A (participant, thread) registers with its first Announce; the participant name is bound to
//    the connection that first used it (kDuplicateName for any other connection). A first
//    announcement below the current grant counts as the current grant (a late joiner cannot
//    rewrite history); the new connection is sent the current Grant at once so it learns now().
//  * effective safe time = min(announced, lowest stamp delivered to the thread since its last
//    announcement). Only regulating threads count; a following thread's announcements bind
//    nothing (and are never refused as going backwards).
//  * A buffered message stamped s is deliverable when s < min effective safe time of all
//    regulating threads and s <= the grant being issued. Before delivering the smallest deliverable
//    stamp s the core issues Grant s (if the grant is below s), then delivers every message stamped
//    s in (stamp, publisher name, publisher seq) order to each subscribed (participant, thread),
//    lowering each receiver's effective safe time to s, and only then recomputes. So every message
//    stamped before a grant is delivered before it, and a receiver sees now() == s in its callback.
//  * End of a batch: after the deliveries of one stamp, every connection that received one of them
//    gets Grant{current grant, same number} again. A participant must not announce again after a
//    Deliver until it has received a Grant frame after it: otherwise, over a transport that
//    splits the batch, it could raise its safe time while deliveries are still in flight to it.
//    (The participant library does this.)
//  * grant = min(min effective safe time, pace limit, run_until hold, step target), never while
//    paused, never backwards, broadcast to every connection as Grant{time, number} only when it
//    increases. An infinite grant is never sent: with no regulating thread (or all idle at +inf)
//    and neither pace nor hold, time stays where it is. With only the pace bounding it, the grant
//    advances along the pace in steps of options.pace_step; with a hold, it jumps to the hold.
//  * A following participant's publish is stamped with the current grant. A publish by a
//    following participant can therefore only be ordered deterministically relative to messages
//    stamped later than the grant (followers do not hold time).
//  * Refused, with Error sent back to the culprit only and a log line, nothing else disturbed:
//    publish stamped before the grant (kStampInPast), a regulating announce below the grant
//    (kAnnounceBackwards), publish / subscribe / unsubscribe before registering (kNotRegistered),
//    a payload larger than max_message_bytes (kOversized), a name bound to another connection
//    (kDuplicateName).
//  * Heartbeats (only when options.wall_now is set): any frame counts for every participant of its
//    connection. A connection whose participants are all following and that is silent past
//    follower_timeout is dropped (as if it left) with a log line. A regulating participant silent
//    past ack_timeout fails the run: no grant is issued any more, every connection receives
//    Error{kTimeout, reason}, the failure handler is called with the participant's name and the
//    reason ("lockstep: participant ugv1 (thread main) sent nothing for 30 s"), and every
//    ControlReply afterwards has ok = false and error = that reason (its status is still filled).
//  * Acknowledgements (only with wall_now and a finite ack_timeout): a regulating thread holds a
//    step when its effective safe time is the minimum and nothing else (pause, hold, step target,
//    parent ceiling, pace) bounds the grant at or below it; it holds since the later of the moment
//    that minimum became binding and its own last announcement change or delivery. Holding for
//    longer than ack_timeout fails the run as above, whatever its connection's heartbeats, with
//    "lockstep: step N (t = S s) not acknowledged by NAME within ack_timeout_s" (N = grants
//    issued + 1, S = the current grant); a silent regulating connection that holds a step gets
//    the same reason. Idle threads (+inf) and a paused coordinator hold nobody responsible.
//  * Leave removes the thread (or the whole participant when thread is empty) and its
//    subscriptions; disconnected(conn) is a Leave of every participant of the connection.
//
// Cascade ("upstream" mode, set_upstream): the core does not order messages itself. Local
// publishes are validated and stamped as above, then handed to hooks.publish; the parent's ordered
// deliveries enter through upstream_deliver() and are fanned out locally exactly as the root does
// (Grant s first if needed, then the deliveries, lowering the local receivers' safe times); the
// parent's grants enter through upstream_grant() and cap the local grant (local grant =
// min(local rules, parent grant)); hooks.safe_time reports the local minimum effective safe time
// whenever it changes and after every fan-out (the parent lowered this child's safe time when it
// delivered, so the child must announce again) -- but never between a delivery from the parent
// and the parent's next Grant frame (the end of its batch, see above), which upstream_grant()
// also mirrors to the local receivers; hooks.subscribe / unsubscribe report the first /
// last local subscriber of a topic. The transport turns these into Announce / Subscribe /
// Publish frames of one participant (the child) at the parent. A participant cannot tell a child
// from the root: it sees the same frames in the same order.
//
// Thread safety: none; the owner serialises every call (the in-process transport holds a mutex).
// Callbacks (SendFn, tap, observers, hooks, log) run synchronously inside the calls and must not
// call back into the core.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "fieldproof/lockstep/protocol.hpp"
#include "fieldproof/time/duration.hpp"
#include "fieldproof/time/system_clock.hpp"

namespace fieldproof::lockstep {

// A transport's handle for one peer (a socket identity, an in-process link). Chosen by the
// transport; the core only compares them.
using ConnId = uint64_t;
// How the core answers: the frame for connection `conn`. Called synchronously.
using SendFn = std::function<void(ConnId conn, Frame frame)>;
using LogFn = std::function<void(const std::string& line)>;

struct CoordinatorOptions {
  // Pace cap: the grant never exceeds max_rtf x (unpaused wall time elapsed). 0 = unlimited.
  double max_rtf = 0.0;
  // A regulating participant silent this long, or holding a step this long (see the header
  // comment), fails the run (Duration::infinite() = never).
  Duration ack_timeout = seconds(30);
  // A following participant silent this long is dropped (Duration::infinite() = never).
  Duration follower_timeout = seconds(5);
  // Publish payloads larger than this are refused with kOversized.
  size_t max_message_bytes = size_t{64} << 20;
  // Wall time (SimTime on the wall time line), injected: SystemClock::wall_now() in production,
  // a fake in tests. Empty = no wall clock: max_rtf must be 0, silence is never detected and the
  // measured RTF is 0.
  WallNow wall_now{};
  // Start paused (no grant until a resume or step): lets every participant register first.
  bool start_paused = false;
  // When only the pace bounds the grant (nothing else finite), the grant advances along the pace
  // in multiples of this step (deterministic grant values, bounded grant rate). Must be > 0.
  Duration pace_step = milliseconds(1);
  // Log lines (refusals, dropped followers, failure). Empty = silent.
  LogFn log{};

  // The first problem with these options, or nullopt when they are usable.
  std::optional<std::string> validate() const;
};

// Cascade hooks (see the header comment). Every hook must be set.
struct UpstreamHooks {
  // A local publish, validated and stamped: forward it to the parent unchanged.
  std::function<void(const Publish&)> publish{};
  // The local minimum effective safe time: announce it to the parent.
  std::function<void(SimTime)> safe_time{};
  // The first local subscriber of a topic appeared / the last one left: (un)subscribe upstream.
  std::function<void(const std::string& topic)> subscribe{};
  std::function<void(const std::string& topic)> unsubscribe{};
};

class CoordinatorCore {
 public:
  // Invalid options (validate()) are reported through options.log and replaced by their defaults
  // field by field; call validate() first to refuse them instead.
  CoordinatorCore(CoordinatorOptions options, SendFn send);
  ~CoordinatorCore();
  CoordinatorCore(const CoordinatorCore&) = delete;
  CoordinatorCore& operator=(const CoordinatorCore&) = delete;

  // Anything a participant sends. Grant, Deliver, Error and ControlReply frames are refused with
  // kUnknownKind; a Control frame is answered with a ControlReply to `from`.
  void handle(ConnId from, Frame frame);
  // The peer closed the connection: every participant of the connection leaves (like Leave).
  void disconnected(ConnId conn);
  // The peer vanished without leaving (its socket is gone, e.g. the process was killed): a
  // regulating participant of the connection fails the run (named, as for silence); following
  // ones are dropped with a log line.
  void connection_lost(ConnId conn);
  // Re-evaluates what depends on wall time (pace, heartbeats) now. Returns the next wall time at
  // which poll() must be called, or nullopt when nothing is waiting on wall time.
  std::optional<SimTime> poll();

  // pause, resume, step, run_until, set_max_rtf, status. step(d): resume until the grant reaches
  // (grant at the call) + d, then pause (a running clock is paused first). run_until(t): never
  // grant past t (infinite lifts it); it does not pause.
  ControlReply control(const Control& request);
  CoordinatorStatus status() const;
  // Removes the participant named `participant` and every other one of its connection as if they
  // had left, and ignores whatever that connection still sends, its loss included (the engine's
  // fault.kill_stack ends a stack's process without failing a lockstep run). Not a wire request.
  // ok = false when no participant has that name.
  ControlReply forget(const std::string& participant);

  // Lookahead (in-process transports only; docs/lockstep.md, Lookahead). A delivery of `topic`
  // to (participant, thread) lowers the thread's effective safe time to stamp + lookahead instead
  // of stamp: the thread promises that what it does with such a message publishes nothing stamped
  // before stamp + lookahead (a relay with a known least delay). The grant can then move on while
  // the thread has not yet run the callback, and more deliveries can reach the thread meanwhile;
  // each keeps its own floor (stamp, or stamp + lookahead) until the thread announces having read
  // it. Which deliveries an announcement has read is the transport's to say: the probe returns
  // how many Deliver frames for (connection, thread) are still unread when an Announce of that
  // thread is handled (the in-process coordinator counts its queue). Without a probe, or for an
  // unknown participant or thread, a zero or negative lookahead: false, nothing changes. The
  // thread must be its participant's only thread that waits (one receiver, which announces only
  // after dispatching what it read). A lookahead only changes when the grant may move, never the
  // order of the deliveries nor what a thread sees before its own timers.
  using UnreadProbe = std::function<size_t(ConnId conn, const std::string& thread)>;
  void set_unread_probe(UnreadProbe probe);
  bool set_lookahead(const std::string& participant, const std::string& thread,
                     const std::string& topic, Duration lookahead);

  // Relays (a root coordinator only; docs/lockstep.md, Relays). A delivery of `topic` to
  // (participant, thread) runs `relay` inside the fan-out instead, under whatever lock serialises
  // this core, before the message reaches any later receiver: what it publishes through `emit`
  // (the participant's own publishes, Participant::prepare) is queued at once, never before the
  // grant. The thread then gets the message only when `deliver` is set (it has other readers of
  // the topic), marked Publish::relayed so that it does not relay it again. A relay must not call
  // back into this core, and must do only what the thread would have done with the message at
  // that point of the total order: so it gives way when a delivery of the same batch (the
  // messages of one stamp delivered together) that holds the thread at its stamp has already
  // been sent to it; the thread then gets this message unmarked, holding it as well, and relays
  // it itself in order. False for an unknown participant or thread, or on a cascade child.
  struct Relay {
    std::function<void(const Publish& message, const std::function<void(Publish)>& emit)> relay;
    bool deliver = false;
  };
  bool set_relay(const std::string& participant, const std::string& thread,
                 const std::string& topic, Relay relay);

  // Sees every message once, in delivery order (root: the total order; child: the fan-out order).
  void set_tap(std::function<void(const Publish&)> tap);
  // Called for every grant issued: (time, number).
  void set_grant_observer(std::function<void(SimTime, uint64_t)> observer);
  // Called once when the run fails (a regulating participant went silent).
  void set_failure_handler(
      std::function<void(const std::string& participant, std::string reason)> handler);
  void set_log(LogFn log);

  // Cascade (see the header comment). Call set_upstream before any frame is handled.
  void set_upstream(UpstreamHooks hooks);
  void upstream_grant(SimTime parent_grant);
  void upstream_deliver(Publish message);

  // Ends the run: Error{kShutdown} to every connection; later frames are ignored.
  void shutdown(const std::string& reason);

  SimTime grant() const;
  uint64_t grants_issued() const;
  bool failed() const;
  // The failure reason, empty while the run is healthy.
  const std::string& failure() const;
  // Minimum effective safe time of the regulating threads (infinite when there is none).
  SimTime min_safe_time() const;
  // Whether every thread behind `conn` regulates with an effective safe time past `g`: each waits
  // for a later grant or for a delivery, so a Grant{g} changes nothing it does until a later
  // frame. A transport may then queue such a grant without waking the receiver (the in-process
  // coordinator does, for a grant of a new number); the frames and their order are the same. False
  // for an unknown connection, one without threads (controllers, participants still registering),
  // with a following thread or a cascade child's forwarded participant.
  bool waits_past(ConnId conn, SimTime g) const;
  // Messages buffered and not yet deliverable.
  size_t pending_messages() const;
  // The wall time the connection was last heard from (nullopt: unknown connection).
  std::optional<SimTime> last_heard(ConnId conn) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Convenience constructors of Control requests.
Control pause_request();
Control resume_request();
Control step_request(Duration d);
Control run_until_request(SimTime t);
Control set_max_rtf_request(double max_rtf);
Control status_request();

}  // namespace fieldproof::lockstep
