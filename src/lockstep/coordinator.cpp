#include "fieldproof/lockstep/coordinator.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fieldproof/lockstep/pace_regulator.hpp"

namespace fieldproof::lockstep {

std::optional<std::string> CoordinatorOptions::validate() const {
  if (std::isnan(max_rtf) || max_rtf < 0.0) return "max_rtf must be 0 (unlimited) or positive";
  if (max_rtf > 0.0 && !wall_now) return "max_rtf needs a wall clock (options.wall_now)";
  if (ack_timeout <= Duration::zero()) return "ack_timeout must be positive";
  if (follower_timeout <= Duration::zero()) return "follower_timeout must be positive";
  if (max_message_bytes == 0) return "max_message_bytes must be positive";
  if (pace_step <= Duration::zero() || pace_step.is_infinite()) {
    return "pace_step must be positive and finite";
  }
  return std::nullopt;
}

namespace {
Control make_control(ControlOp op) {
  Control c;
  c.op = op;
  return c;
}
}  // namespace

Control pause_request() { return make_control(ControlOp::kPause); }
Control resume_request() { return make_control(ControlOp::kResume); }
Control step_request(Duration d) {
  Control c = make_control(ControlOp::kStep);
  c.duration = d;
  return c;
}
Control run_until_request(SimTime t) {
  Control c = make_control(ControlOp::kRunUntil);
  c.until = t;
  return c;
}
Control set_max_rtf_request(double max_rtf) {
  Control c = make_control(ControlOp::kSetMaxRtf);
  c.max_rtf = max_rtf;
  return c;
}
Control status_request() { return make_control(ControlOp::kStatus); }

namespace {

constexpr uint32_t kNone = UINT32_MAX;

struct ThreadRec {
  bool active = false;
  uint32_t participant = kNone;
  std::string name;
  Role role = Role::kRegulating;
  SimTime announced;
  SimTime effective;
  // Wall time of the last change of `effective` or delivery to the thread: the earliest moment
  // it can have started holding the grant at its current safe time.
  SimTime effective_since;
  std::vector<std::string> topics;
  // Lookahead (set_lookahead): per topic; empty for nearly every thread. While it is not empty,
  // `floors` holds, in the order sent, what each delivery to the thread lowered its safe time to
  // (stamp, or stamp + lookahead), trimmed at each announcement to the ones still unread.
  std::unordered_map<std::string, Duration> lookahead;
  std::deque<SimTime> floors;
  // Relays run in the fan-out (set_relay): per topic; empty for nearly every thread.
  std::unordered_map<std::string, CoordinatorCore::Relay> relays;
  // The batch (Impl::batch) in which a delivery that holds the thread at its stamp (no
  // lookahead) was sent to it: its relays give way to the thread for the rest of that batch.
  uint64_t held_in_batch = 0;
};

struct ParticipantRec {
  bool active = false;
  std::string name;
  ConnId conn = 0;
  Role role = Role::kRegulating;
  bool forwarded = false;  // bound by a cascade child's publish; has no threads here
  std::vector<uint32_t> threads;
};

struct ConnRec {
  std::vector<uint32_t> participants;
  SimTime last_heard;
  uint32_t cached_thread = kNone;  // the last thread that announced on this connection
};

// Heap order: the smallest (stamp, publisher, seq) on top.
struct PendingLater {
  bool operator()(const Publish& a, const Publish& b) const {
    if (a.stamp != b.stamp) return a.stamp > b.stamp;
    if (a.participant != b.participant) return a.participant > b.participant;
    return a.seq > b.seq;
  }
};

std::string seconds_text(Duration d) { return format_seconds(d) + " s"; }

}  // namespace

struct CoordinatorCore::Impl {
  CoordinatorOptions opt;
  SendFn send;
  std::function<void(const Publish&)> tap;
  std::function<void(SimTime, uint64_t)> grant_observer;
  std::function<void(const std::string&, std::string)> failure_handler;
  CoordinatorCore::UnreadProbe unread_probe;

  std::vector<ThreadRec> threads;
  std::vector<uint32_t> free_threads;
  std::vector<uint32_t> regulating;  // active regulating thread indices
  std::vector<ParticipantRec> participants;
  std::vector<uint32_t> free_participants;
  std::unordered_map<std::string, uint32_t> by_name;
  std::unordered_map<ConnId, ConnRec> conns;
  // Connections forgotten (forget()): their frames are ignored until they close.
  std::set<ConnId> forgotten;
  std::vector<ConnId> conn_list;
  std::unordered_map<std::string, std::vector<uint32_t>> subs;
  std::vector<Publish> pending;  // heap (PendingLater)
  uint64_t batch = 0;            // numbers the fan-out batches (one stamp each)
  // The stamp of the batch being fanned out (root only): issued as the grant before its first
  // delivery.
  std::optional<SimTime> batch_grant;

  SimTime grant = SimTime::zero();
  uint64_t grants = 0;
  bool paused = false;
  SimTime hold = SimTime::infinite();
  std::optional<SimTime> step_target;
  PaceRegulator pace;
  RtfMeter meter;
  bool failed = false;
  bool shut_down = false;
  std::string failure;

  // Wall time of the call being served (one clock read per entry point, none when there is no
  // wall clock).
  SimTime now_wall = SimTime::zero();
  // The grant is held by the regulating threads at min safe time `stall_me` (nothing else bounds
  // it lower) since wall time `stall_since`. A thread at that safe time holds the clock since
  // max(stall_since, its effective_since); ack_timeout of that fails the run, whatever its
  // heartbeats do.
  bool stalled = false;
  SimTime stall_me = SimTime::zero();
  SimTime stall_since = SimTime::zero();

  bool upstream = false;
  UpstreamHooks hooks;
  SimTime ceiling = SimTime::zero();
  std::vector<Publish> inbox;  // FIFO of upstream deliveries
  size_t inbox_head = 0;
  std::optional<SimTime> reported;
  bool awaiting_parent_marker = false;
  std::vector<ConnId> marker_conns;  // connections that received a delivery since the last marker
  bool report_needed = true;

  Impl(CoordinatorOptions o, SendFn s) : opt(std::move(o)), send(std::move(s)) {
    if (auto problem = opt.validate()) {
      log("lockstep: coordinator options: " + *problem + "; using the defaults instead");
      CoordinatorOptions d;
      if (std::isnan(opt.max_rtf) || opt.max_rtf < 0.0 || !opt.wall_now) opt.max_rtf = 0.0;
      if (opt.ack_timeout <= Duration::zero()) opt.ack_timeout = d.ack_timeout;
      if (opt.follower_timeout <= Duration::zero()) opt.follower_timeout = d.follower_timeout;
      if (opt.max_message_bytes == 0) opt.max_message_bytes = d.max_message_bytes;
      if (opt.pace_step <= Duration::zero() || opt.pace_step.is_infinite()) {
        opt.pace_step = d.pace_step;
      }
    }
    pace = PaceRegulator(opt.max_rtf);
    const SimTime w = wall();
    now_wall = w;
    pace.anchor(grant, w);
    if (opt.wall_now) meter.start(grant, w);
    if (opt.start_paused) {
      paused = true;
      pace.pause(grant);
      meter.pause(w);
    }
  }

  bool has_wall() const { return static_cast<bool>(opt.wall_now); }
  SimTime wall() const { return opt.wall_now ? opt.wall_now() : SimTime::zero(); }
  // Reads the wall clock once for the call being served.
  void touch() {
    if (has_wall()) now_wall = wall();
  }
  void log(const std::string& line) const {
    if (opt.log) opt.log(line);
  }

  void refuse(ConnId to, ErrorCode code, std::string reason) {
    log(reason);
    send(to, Error{code, std::move(reason)});
  }

  ConnRec& conn(ConnId id) {
    auto it = conns.find(id);
    if (it != conns.end()) return it->second;
    conn_list.push_back(id);
    ConnRec& c = conns[id];
    c.last_heard = now_wall;
    return c;
  }

  uint32_t find_participant(const ConnRec& c, const std::string& name) const {
    for (uint32_t p : c.participants) {
      if (participants[p].name == name) return p;
    }
    return kNone;
  }

  uint32_t find_thread(uint32_t p, const std::string& name) const {
    for (uint32_t t : participants[p].threads) {
      if (threads[t].name == name) return t;
    }
    return kNone;
  }

  // The thread `thread` of the active participant named `participant`, or nullptr.
  ThreadRec* named_thread(const std::string& participant, const std::string& thread) {
    const auto p = by_name.find(participant);
    if (p == by_name.end() || !participants[p->second].active) return nullptr;
    const uint32_t t = find_thread(p->second, thread);
    return t == kNone ? nullptr : &threads[t];
  }

  uint32_t add_participant(ConnId id, ConnRec& c, const std::string& name, bool forwarded) {
    uint32_t p;
    if (!free_participants.empty()) {
      p = free_participants.back();
      free_participants.pop_back();
    } else {
      p = static_cast<uint32_t>(participants.size());
      participants.emplace_back();
    }
    ParticipantRec& rec = participants[p];
    rec = ParticipantRec{};
    rec.active = true;
    rec.name = name;
    rec.conn = id;
    rec.forwarded = forwarded;
    by_name[name] = p;
    c.participants.push_back(p);
    return p;
  }

  uint32_t add_thread(uint32_t p, const std::string& name, Role role, SimTime safe) {
    uint32_t t;
    if (!free_threads.empty()) {
      t = free_threads.back();
      free_threads.pop_back();
    } else {
      t = static_cast<uint32_t>(threads.size());
      threads.emplace_back();
    }
    ThreadRec& rec = threads[t];
    rec = ThreadRec{};
    rec.active = true;
    rec.participant = p;
    rec.name = name;
    rec.role = role;
    rec.announced = safe;
    rec.effective = safe;
    rec.effective_since = now_wall;
    participants[p].threads.push_back(t);
    participants[p].forwarded = false;
    participants[p].role = role;
    if (role == Role::kRegulating) regulating.push_back(t);
    return t;
  }

  void set_role(uint32_t t, Role role) {
    ThreadRec& rec = threads[t];
    if (rec.role == role) return;
    rec.role = role;
    participants[rec.participant].role = role;
    if (role == Role::kRegulating) {
      regulating.push_back(t);
    } else {
      regulating.erase(std::find(regulating.begin(), regulating.end(), t));
    }
  }

  void remove_subscription(uint32_t t, const std::string& topic) {
    auto it = subs.find(topic);
    if (it == subs.end()) return;
    auto& v = it->second;
    v.erase(std::remove(v.begin(), v.end(), t), v.end());
    if (v.empty()) {
      subs.erase(it);
      if (upstream) hooks.unsubscribe(topic);
    }
  }

  void remove_thread(uint32_t t) {
    ThreadRec& rec = threads[t];
    for (const std::string& topic : rec.topics) remove_subscription(t, topic);
    rec.topics.clear();
    if (rec.role == Role::kRegulating) {
      regulating.erase(std::find(regulating.begin(), regulating.end(), t));
    }
    auto& pt = participants[rec.participant].threads;
    pt.erase(std::remove(pt.begin(), pt.end(), t), pt.end());
    for (auto& [id, c] : conns) {
      if (c.cached_thread == t) c.cached_thread = kNone;
    }
    rec.active = false;
    rec.participant = kNone;
    free_threads.push_back(t);
  }

  void remove_participant(uint32_t p) {
    ParticipantRec& rec = participants[p];
    while (!rec.threads.empty()) remove_thread(rec.threads.back());
    auto cit = conns.find(rec.conn);
    if (cit != conns.end()) {
      auto& v = cit->second.participants;
      v.erase(std::remove(v.begin(), v.end(), p), v.end());
    }
    by_name.erase(rec.name);
    rec.active = false;
    free_participants.push_back(p);
  }

  void remove_conn(ConnId id) {
    auto it = conns.find(id);
    if (it == conns.end()) return;
    while (!it->second.participants.empty()) remove_participant(it->second.participants.back());
    conns.erase(it);
    conn_list.erase(std::remove(conn_list.begin(), conn_list.end(), id), conn_list.end());
  }

  SimTime min_safe() const {
    SimTime m = SimTime::infinite();
    for (uint32_t t : regulating) m = std::min(m, threads[t].effective);
    return m;
  }

  // Every bound on the grant except the participants' safe times. `wall_now` only when the pace
  // is limited.
  SimTime external_bound() const {
    SimTime b = hold;
    if (step_target) b = std::min(b, *step_target);
    if (upstream) b = std::min(b, ceiling);
    if (paused) b = std::min(b, grant);
    return b;
  }

  // The pace's bound on the grant, given every other bound `other`. When the pace allows
  // `other`, that is the bound; otherwise the pace limit rounded down to the pace_step grid
  // (deterministic grant values along the pace). poll() asks to be called exactly when one of the
  // two becomes reachable, so it never asks for a time already past.
  SimTime pace_bound(SimTime other) const {
    if (pace.unlimited() || paused) return SimTime::infinite();
    const SimTime lim = pace.limit(now_wall);
    if (lim >= other) return other;
    const int64_t step = opt.pace_step.ns();
    const int64_t q = lim.ns() >= 0 ? lim.ns() / step : -((-lim.ns() + step - 1) / step);
    return SimTime::from_ns(q * step);
  }

  void issue(SimTime g) {
    grant = g;
    ++grants;
    for (ConnId c : conn_list) send(c, Grant{g, grants});
    if (grant_observer) grant_observer(g, grants);
  }

  void fan_out(Publish msg) {
    if (tap) tap(msg);
    auto it = subs.find(msg.topic);
    if (it == subs.end()) return;
    const auto& receivers = it->second;
    const SimTime s = msg.stamp;
    for (size_t i = 0; i < receivers.size(); ++i) {
      ThreadRec& rec = threads[receivers[i]];
      bool relayed = false;
      bool gave_way = false;
      if (!rec.relays.empty()) {
        const auto r = rec.relays.find(msg.topic);
        // A relay runs here unless a delivery of this batch already holds its thread: then the
        // thread runs it itself, after that delivery, as it would without the relay.
        if (r != rec.relays.end() && rec.held_in_batch == batch) {
          gave_way = true;
        } else if (r != rec.relays.end()) {
          r->second.relay(msg, [this](Publish out) { relay_publish(std::move(out)); });
          if (!r->second.deliver) continue;
          relayed = true;
        }
      }
      if (batch_grant && *batch_grant > grant) issue(*batch_grant);
      if (rec.lookahead.empty()) {
        rec.effective = std::min(rec.effective, s);
        rec.held_in_batch = batch;
      } else {
        const auto la = rec.lookahead.find(msg.topic);
        const bool holds = la == rec.lookahead.end() || gave_way;
        const SimTime floor = holds ? s : s + la->second;
        if (holds) rec.held_in_batch = batch;
        rec.floors.push_back(floor);
        rec.effective = std::min(rec.effective, floor);
      }
      rec.effective_since = now_wall;  // new work for the thread: its acknowledgement restarts
      const ConnId c = participants[rec.participant].conn;
      if (std::find(marker_conns.begin(), marker_conns.end(), c) == marker_conns.end()) {
        marker_conns.push_back(c);
      }
      Deliver d{rec.name, i + 1 == receivers.size() ? std::move(msg) : msg};
      d.message.relayed = relayed;
      send(c, std::move(d));
    }
  }

  // What a relay publishes from inside the fan-out: queued like a publish (never before the
  // grant), without evaluating (the batch being delivered is still open).
  void relay_publish(Publish&& m) {
    if (m.stamp < grant || m.stamp.is_infinite()) {
      log("lockstep: a relay published on '" + m.topic + "' stamped " + format_seconds(m.stamp) +
          " s, before the current grant " + format_seconds(grant) + " s: dropped");
      return;
    }
    pending.push_back(std::move(m));
    std::push_heap(pending.begin(), pending.end(), PendingLater{});
  }

  // The end of a delivery batch: each connection that received a delivery gets the current grant
  // again (same number). A participant announces again only after it (see coordinator.hpp).
  void send_markers() {
    for (ConnId c : marker_conns) send(c, Grant{grant, grants});
    marker_conns.clear();
  }

  void evaluate() {
    if (failed || shut_down) return;
    for (;;) {
      const SimTime me = min_safe();
      const SimTime external = external_bound();
      const SimTime bound = std::min(external, pace_bound(std::min(me, external)));
      const SimTime g = std::max(grant, std::min(me, bound));
      if (!upstream) {
        if (!pending.empty()) {
          const SimTime s = pending.front().stamp;
          if (s <= g && s < me) {
            // The grant reaches s with the batch's first delivery: a batch that only the tap sees
            // (the ground station's copies no one subscribes to) moves no one's clock.
            batch_grant = s;
            ++batch;
            while (!pending.empty() && pending.front().stamp == s) {
              std::pop_heap(pending.begin(), pending.end(), PendingLater{});
              Publish msg = std::move(pending.back());
              pending.pop_back();
              fan_out(std::move(msg));
            }
            batch_grant.reset();
            send_markers();
            continue;
          }
        }
      } else if (inbox_head < inbox.size()) {
        const SimTime s = inbox[inbox_head].stamp;
        if (s <= std::max(grant, bound)) {
          if (s > grant && s <= me) issue(s);
          Publish msg = std::move(inbox[inbox_head]);
          ++inbox_head;
          if (inbox_head == inbox.size()) {
            inbox.clear();
            inbox_head = 0;
          }
          ++batch;
          fan_out(std::move(msg));
          report_needed = true;
          awaiting_parent_marker = true;
          continue;
        }
      }
      if (g > grant && !g.is_infinite()) issue(g);
      break;
    }
    if (step_target && grant >= *step_target) {
      step_target.reset();
      do_pause();
    }
    track_stall();
    if (upstream && !awaiting_parent_marker) {
      const SimTime me = min_safe();
      if (report_needed || !reported || *reported != me) {
        reported = me;
        report_needed = false;
        hooks.safe_time(me);
      }
    }
  }

  // Whether the regulating threads at the minimum safe time are what holds the grant back (see
  // stall_since): not while paused, not when a hold, step target or parent ceiling is at or below
  // that time or the pace has not reached it yet, not when everyone is idle (+inf).
  void track_stall() {
    if (!has_wall() || opt.ack_timeout.is_infinite() || regulating.empty()) {
      stalled = false;
      return;
    }
    const SimTime me = min_safe();
    const bool holding = !paused && !me.is_infinite() && me < external_bound() &&
                         (pace.unlimited() || pace.limit(now_wall) >= me);
    if (!holding) {
      stalled = false;
    } else if (!stalled || stall_me != me) {
      stalled = true;
      stall_me = me;
      stall_since = now_wall;
    }
  }

  // The regulating thread that has held the grant longest (ties: the smaller (participant,
  // thread) name), and since when; kNone when nobody holds it.
  std::pair<uint32_t, SimTime> longest_holder() const {
    uint32_t best = kNone;
    SimTime since = SimTime::infinite();
    if (!stalled) return {best, since};
    for (uint32_t t : regulating) {
      const ThreadRec& rec = threads[t];
      if (rec.effective != stall_me) continue;
      const SimTime s = std::max(stall_since, rec.effective_since);
      if (best == kNone || s < since ||
          (s == since &&
           std::tie(participants[rec.participant].name, rec.name) <
               std::tie(participants[threads[best].participant].name, threads[best].name))) {
        best = t;
        since = s;
      }
    }
    return {best, since};
  }

  std::string not_acknowledged(uint32_t t) const {
    return "lockstep: step " + std::to_string(grants + 1) + " (t = " + format_seconds(grant) +
           " s) not acknowledged by " + participants[threads[t].participant].name +
           " within ack_timeout_s";
  }

  void check_holders() {
    if (failed || shut_down) return;
    const auto [t, since] = longest_holder();
    if (t == kNone || now_wall - since <= opt.ack_timeout) return;
    fail(participants[threads[t].participant].name, not_acknowledged(t));
  }

  void do_pause() {
    if (paused) return;
    paused = true;
    pace.pause(grant);
    if (has_wall()) meter.pause(now_wall);
  }

  void do_resume() {
    if (!paused) return;
    paused = false;
    const SimTime w = now_wall;
    pace.resume(grant, w);
    if (has_wall()) meter.resume(w);
  }

  // ---- frames ----

  void on_announce(ConnId from, ConnRec& c, const Announce& a) {
    uint32_t t = c.cached_thread;
    if (t != kNone &&
        !(threads[t].name == a.thread &&
          participants[threads[t].participant].name == a.participant)) {
      t = kNone;
    }
    if (t == kNone) {
      uint32_t p = find_participant(c, a.participant);
      if (p == kNone) {
        if (by_name.count(a.participant) != 0) {
          refuse(from, ErrorCode::kDuplicateName,
                 "lockstep: participant name '" + a.participant +
                     "' is already in use on another connection");
          return;
        }
        if (a.participant.empty()) {
          refuse(from, ErrorCode::kMalformed, "lockstep: announce without a participant name");
          return;
        }
        p = add_participant(from, c, a.participant, false);
      }
      t = find_thread(p, a.thread);
      if (t == kNone) {
        const SimTime safe = std::max(a.safe_time, grant);
        t = add_thread(p, a.thread, a.role, safe);
        c.cached_thread = t;
        send(from, Grant{grant, grants});
        evaluate();
        return;
      }
      c.cached_thread = t;
    }
    ThreadRec& rec = threads[t];
    if (rec.role != a.role) set_role(t, a.role);
    if (rec.role == Role::kRegulating && a.safe_time < grant) {
      refuse(from, ErrorCode::kAnnounceBackwards,
             "lockstep: participant " + a.participant + " (thread " + a.thread +
                 ") announced " + format_seconds(a.safe_time) + " s, before the current grant " +
                 format_seconds(grant) + " s");
      return;
    }
    rec.announced = a.safe_time;
    SimTime effective = a.safe_time;
    if (!rec.lookahead.empty()) {
      // The deliveries the thread has not read yet still bind it (they crossed the announcement).
      const size_t unread = unread_probe ? unread_probe(from, rec.name) : 0;
      while (rec.floors.size() > unread) rec.floors.pop_front();
      for (const SimTime f : rec.floors) effective = std::min(effective, f);
    }
    if (rec.effective != effective) rec.effective_since = now_wall;
    rec.effective = effective;
    evaluate();
  }

  // The participant of `name` bound to connection `from`, or kNone after refusing.
  uint32_t registered(ConnId from, ConnRec& c, const std::string& name, const char* what,
                      bool allow_forward) {
    uint32_t p = find_participant(c, name);
    if (p != kNone) return p;
    if (by_name.count(name) != 0) {
      refuse(from, ErrorCode::kDuplicateName,
             std::string("lockstep: ") + what + " by '" + name +
                 "', a participant of another connection");
      return kNone;
    }
    if (allow_forward && !c.participants.empty() && !name.empty()) {
      // A cascade child forwards its local participants' publishes under their own names.
      return add_participant(from, c, name, true);
    }
    refuse(from, ErrorCode::kNotRegistered,
           std::string("lockstep: ") + what + " by '" + name +
               "' before its first announcement");
    return kNone;
  }

  void on_publish(ConnId from, ConnRec& c, Publish&& m) {
    const uint32_t p = registered(from, c, m.participant, "publish", true);
    if (p == kNone) return;
    if (m.payload.size() > opt.max_message_bytes) {
      refuse(from, ErrorCode::kOversized,
             "lockstep: publish by " + m.participant + " on '" + m.topic + "': payload of " +
                 std::to_string(m.payload.size()) + " bytes exceeds the limit of " +
                 std::to_string(opt.max_message_bytes));
      return;
    }
    const ParticipantRec& rec = participants[p];
    if (rec.role == Role::kFollowing && !rec.forwarded) m.stamp = grant;
    if (m.stamp < grant) {
      refuse(from, ErrorCode::kStampInPast,
             "lockstep: publish by " + m.participant + " on '" + m.topic + "' stamped " +
                 format_seconds(m.stamp) + " s, before the current grant " +
                 format_seconds(grant) + " s");
      return;
    }
    if (m.stamp.is_infinite()) {
      refuse(from, ErrorCode::kMalformed,
             "lockstep: publish by " + m.participant + " on '" + m.topic +
                 "' stamped infinite");
      return;
    }
    if (upstream) {
      hooks.publish(m);
      return;
    }
    pending.push_back(std::move(m));
    std::push_heap(pending.begin(), pending.end(), PendingLater{});
    evaluate();
  }

  void on_subscribe(ConnId from, ConnRec& c, const std::string& participant,
                    const std::string& thread, const std::string& topic, bool add) {
    const uint32_t p =
        registered(from, c, participant, add ? "subscribe" : "unsubscribe", false);
    if (p == kNone) return;
    const uint32_t t = find_thread(p, thread);
    if (t == kNone) {
      refuse(from, ErrorCode::kNotRegistered,
             std::string("lockstep: ") + (add ? "subscribe" : "unsubscribe") + " to '" + topic +
                 "' by " + participant + " thread '" + thread +
                 "', which has not announced");
      return;
    }
    ThreadRec& rec = threads[t];
    auto it = std::find(rec.topics.begin(), rec.topics.end(), topic);
    if (add) {
      if (it != rec.topics.end()) return;
      rec.topics.push_back(topic);
      auto& v = subs[topic];
      v.push_back(t);
      if (upstream && v.size() == 1) hooks.subscribe(topic);
    } else {
      if (it == rec.topics.end()) return;
      rec.topics.erase(it);
      remove_subscription(t, topic);
      evaluate();
    }
  }

  void on_leave(ConnId from, ConnRec& c, const Leave& l) {
    const uint32_t p = registered(from, c, l.participant, "leave", false);
    if (p == kNone) return;
    if (l.thread.empty()) {
      remove_participant(p);
    } else {
      const uint32_t t = find_thread(p, l.thread);
      if (t != kNone) remove_thread(t);
    }
    evaluate();
  }

  void handle(ConnId from, Frame&& frame) {
    if (shut_down || forgotten.count(from) != 0) return;
    touch();
    ConnRec& c = conn(from);
    if (has_wall()) c.last_heard = now_wall;
    if (auto* ctl = std::get_if<Control>(&frame)) {
      send(from, control(*ctl));
      return;
    }
    if (failed) return;
    switch (frame.index()) {
      case 0:
        on_announce(from, c, std::get<Announce>(frame));
        break;
      case 1: {
        auto& s = std::get<Subscribe>(frame);
        on_subscribe(from, c, s.participant, s.thread, s.topic, true);
        break;
      }
      case 2: {
        auto& s = std::get<Unsubscribe>(frame);
        on_subscribe(from, c, s.participant, s.thread, s.topic, false);
        break;
      }
      case 3:
        on_publish(from, c, std::move(std::get<Publish>(frame)));
        break;
      case 4:
        on_leave(from, c, std::get<Leave>(frame));
        break;
      case 5:
        break;  // Heartbeat: being heard is all
      default:
        refuse(from, ErrorCode::kUnknownKind,
               "lockstep: a participant sent a coordinator-to-participant frame (kind " +
                   std::to_string(frame.index()) + ")");
        break;
    }
  }

  void fail(const std::string& participant, std::string reason) {
    if (failed) return;
    failed = true;
    failure = reason;
    log(reason);
    for (ConnId c : conn_list) send(c, Error{ErrorCode::kTimeout, reason});
    if (failure_handler) failure_handler(participant, std::move(reason));
  }

  // The first regulating thread of a connection, or kNone.
  uint32_t regulating_thread_of(const ConnRec& c) const {
    for (uint32_t p : c.participants) {
      for (uint32_t t : participants[p].threads) {
        if (threads[t].role == Role::kRegulating) return t;
      }
    }
    return kNone;
  }

  // A regulating thread of the connection at the held minimum safe time, or kNone.
  uint32_t holding_thread_of(const ConnRec& c) const {
    if (!stalled) return kNone;
    for (uint32_t p : c.participants) {
      for (uint32_t t : participants[p].threads) {
        if (threads[t].role == Role::kRegulating && threads[t].effective == stall_me) return t;
      }
    }
    return kNone;
  }

  // See CoordinatorCore::waits_past.
  bool waits_past(ConnId id, SimTime g) const {
    const auto it = conns.find(id);
    if (it == conns.end() || it->second.participants.empty()) return false;
    for (uint32_t p : it->second.participants) {
      const ParticipantRec& rec = participants[p];
      if (rec.forwarded || rec.threads.empty()) return false;
      for (uint32_t t : rec.threads) {
        if (threads[t].role != Role::kRegulating || threads[t].effective <= g) return false;
      }
    }
    return true;
  }

  bool has_threads(const ConnRec& c) const {
    for (uint32_t p : c.participants) {
      if (!participants[p].threads.empty()) return true;
    }
    return false;
  }

  std::string names_of(const ConnRec& c) const {
    std::string s;
    for (uint32_t p : c.participants) {
      if (!s.empty()) s += ", ";
      s += participants[p].name;
    }
    return s;
  }

  void check_silence() {
    if (!has_wall() || failed || shut_down) return;
    const SimTime w = now_wall;
    std::vector<ConnId> drop;
    for (ConnId id : conn_list) {
      const ConnRec& c = conns.at(id);
      if (!has_threads(c)) continue;
      const Duration silent = w - c.last_heard;
      const uint32_t t = regulating_thread_of(c);
      if (t != kNone) {
        if (silent > opt.ack_timeout) {
          // A silent participant that holds the clock is named as docs/lockstep.md words a
          // step nobody acknowledged.
          const uint32_t h = holding_thread_of(c);
          const std::string& name = participants[threads[h != kNone ? h : t].participant].name;
          fail(name, h != kNone ? not_acknowledged(h)
                                : "lockstep: participant " + name + " (thread " + threads[t].name +
                                      ") sent nothing for " + seconds_text(opt.ack_timeout));
          return;
        }
      } else if (silent > opt.follower_timeout) {
        drop.push_back(id);
      }
    }
    for (ConnId id : drop) {
      log("lockstep: following participant " + names_of(conns.at(id)) + " sent nothing for " +
          seconds_text(opt.follower_timeout) + "; dropped");
      remove_conn(id);
    }
  }

  std::optional<SimTime> poll() {
    if (shut_down) return std::nullopt;
    touch();
    evaluate();
    check_holders();
    check_silence();
    if (failed) return std::nullopt;
    SimTime next = SimTime::infinite();
    if (!pace.unlimited() && !paused) {
      // The next grant the pace will allow: the next pace_step grid point, or the bound.
      const SimTime other = std::min(min_safe(), external_bound());
      const int64_t step = opt.pace_step.ns();
      SimTime grid = grant.ns() >= 0
                         ? SimTime::from_ns(detail::sat_mul(grant.ns() / step + 1, step))
                         : grant + opt.pace_step;
      const SimTime target = std::min(other, grid);
      if (target > grant) next = std::min(next, pace.wall_at(target));
    }
    if (has_wall()) {
      for (ConnId id : conn_list) {
        const ConnRec& c = conns.at(id);
        if (!has_threads(c)) continue;
        const Duration timeout =
            regulating_thread_of(c) != kNone ? opt.ack_timeout : opt.follower_timeout;
        if (timeout.is_infinite()) continue;
        next = std::min(next, c.last_heard + timeout + Duration::from_ns(1));
      }
      if (const auto [t, since] = longest_holder(); t != kNone) {
        next = std::min(next, since + opt.ack_timeout + Duration::from_ns(1));
      }
    }
    if (next.is_infinite()) return std::nullopt;
    return next;
  }

  CoordinatorStatus status() const {
    CoordinatorStatus s;
    s.paused = paused;
    s.time = grant;
    s.grants = grants;
    s.measured_rtf = has_wall() ? meter.rtf(grant, wall()) : 0.0;
    s.max_rtf = pace.max_rtf();
    s.hold = hold;
    for (const ThreadRec& t : threads) {
      if (!t.active) continue;
      s.participants.push_back(
          ParticipantStatus{participants[t.participant].name, t.name, t.role, t.effective});
    }
    std::sort(s.participants.begin(), s.participants.end(),
              [](const ParticipantStatus& a, const ParticipantStatus& b) {
                return std::tie(a.participant, a.thread) < std::tie(b.participant, b.thread);
              });
    return s;
  }

  ControlReply control(const Control& r) {
    touch();
    ControlReply reply;
    if (!failed && !shut_down) {
      switch (r.op) {
        case ControlOp::kPause:
          step_target.reset();
          do_pause();
          break;
        case ControlOp::kResume:
          step_target.reset();
          do_resume();
          break;
        case ControlOp::kStep:
          if (r.duration < Duration::zero()) {
            reply.ok = false;
            reply.error = "step: the duration must not be negative";
            break;
          }
          do_pause();
          if (r.duration > Duration::zero()) {
            step_target = grant + r.duration;
            do_resume();
          }
          break;
        case ControlOp::kRunUntil:
          hold = r.until;
          break;
        case ControlOp::kSetMaxRtf:
          if (std::isnan(r.max_rtf)) {
            reply.ok = false;
            reply.error = "set_max_rtf: not a number";
            break;
          }
          if (r.max_rtf > 0.0 && !has_wall()) {
            reply.ok = false;
            reply.error = "set_max_rtf: this coordinator has no wall clock";
            break;
          }
          pace.set_max_rtf(r.max_rtf, grant, now_wall);
          if (paused) pace.pause(grant);
          break;
        case ControlOp::kStatus:
          break;
        default:
          reply.ok = false;
          reply.error = "unknown control operation " + std::to_string(static_cast<int>(r.op));
          break;
      }
      evaluate();
    }
    if (failed) {
      reply.ok = false;
      reply.error = failure;
    } else if (shut_down) {
      reply.ok = false;
      reply.error = "lockstep: the coordinator has shut down";
    }
    reply.status = status();
    return reply;
  }

  ControlReply forget(const std::string& name) {
    touch();
    ControlReply reply;
    const auto p = by_name.find(name);
    if (p == by_name.end()) {
      reply.ok = false;
      reply.error = "forget: no participant '" + name + "'";
    } else {
      const ConnId c = participants[p->second].conn;
      forgotten.insert(c);
      log("lockstep: participant " + name +
          " forgotten; what its connection still sends is ignored");
      remove_conn(c);
      evaluate();
    }
    reply.status = status();
    return reply;
  }

  void connection_lost(ConnId id) {
    touch();
    if (forgotten.erase(id) != 0) return;
    auto it = conns.find(id);
    if (it == conns.end()) return;
    if (!failed && !shut_down) {
      const uint32_t t = regulating_thread_of(it->second);
      if (t != kNone) {
        const std::string name = participants[threads[t].participant].name;
        fail(name, "lockstep: participant " + name + " (thread " + threads[t].name +
                       ") lost its connection without leaving");
        return;
      }
      if (has_threads(it->second)) {
        log("lockstep: following participant " + names_of(it->second) +
            " lost its connection; dropped");
      }
    }
    remove_conn(id);
    evaluate();
  }
};

CoordinatorCore::CoordinatorCore(CoordinatorOptions options, SendFn send)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(send))) {}
CoordinatorCore::~CoordinatorCore() = default;

void CoordinatorCore::handle(ConnId from, Frame frame) { impl_->handle(from, std::move(frame)); }

void CoordinatorCore::disconnected(ConnId conn) {
  impl_->touch();
  impl_->forgotten.erase(conn);
  impl_->remove_conn(conn);
  impl_->evaluate();
}

void CoordinatorCore::connection_lost(ConnId conn) { impl_->connection_lost(conn); }

std::optional<SimTime> CoordinatorCore::poll() { return impl_->poll(); }
ControlReply CoordinatorCore::control(const Control& request) { return impl_->control(request); }
ControlReply CoordinatorCore::forget(const std::string& participant) {
  return impl_->forget(participant);
}
CoordinatorStatus CoordinatorCore::status() const { return impl_->status(); }

void CoordinatorCore::set_unread_probe(UnreadProbe probe) {
  impl_->unread_probe = std::move(probe);
}

bool CoordinatorCore::set_lookahead(const std::string& participant, const std::string& thread,
                                    const std::string& topic, Duration lookahead) {
  Impl& m = *impl_;
  if (!m.unread_probe || lookahead <= Duration::zero() || lookahead.is_infinite()) return false;
  ThreadRec* rec = m.named_thread(participant, thread);
  if (rec == nullptr) return false;
  rec->lookahead[topic] = lookahead;
  return true;
}

bool CoordinatorCore::set_relay(const std::string& participant, const std::string& thread,
                                const std::string& topic, Relay relay) {
  Impl& m = *impl_;
  if (m.upstream || !relay.relay) return false;
  ThreadRec* rec = m.named_thread(participant, thread);
  if (rec == nullptr) return false;
  rec->relays[topic] = std::move(relay);
  return true;
}

void CoordinatorCore::set_tap(std::function<void(const Publish&)> tap) {
  impl_->tap = std::move(tap);
}
void CoordinatorCore::set_grant_observer(std::function<void(SimTime, uint64_t)> observer) {
  impl_->grant_observer = std::move(observer);
}
void CoordinatorCore::set_failure_handler(
    std::function<void(const std::string& participant, std::string reason)> handler) {
  impl_->failure_handler = std::move(handler);
}
void CoordinatorCore::set_log(LogFn log) { impl_->opt.log = std::move(log); }

void CoordinatorCore::set_upstream(UpstreamHooks hooks) {
  impl_->touch();
  impl_->upstream = true;
  impl_->hooks = std::move(hooks);
  if (!impl_->hooks.publish) impl_->hooks.publish = [](const Publish&) {};
  if (!impl_->hooks.safe_time) impl_->hooks.safe_time = [](SimTime) {};
  if (!impl_->hooks.subscribe) impl_->hooks.subscribe = [](const std::string&) {};
  if (!impl_->hooks.unsubscribe) impl_->hooks.unsubscribe = [](const std::string&) {};
  impl_->evaluate();
}

void CoordinatorCore::upstream_grant(SimTime parent_grant) {
  // Any grant from the parent ends the parent's delivery batch: mirror it locally.
  impl_->touch();
  impl_->awaiting_parent_marker = false;
  if (!impl_->failed && !impl_->shut_down) impl_->send_markers();
  if (parent_grant > impl_->ceiling) impl_->ceiling = parent_grant;
  impl_->evaluate();
}

void CoordinatorCore::upstream_deliver(Publish message) {
  impl_->touch();
  impl_->inbox.push_back(std::move(message));
  impl_->evaluate();
}

void CoordinatorCore::shutdown(const std::string& reason) {
  if (impl_->shut_down) return;
  impl_->log(reason);
  for (ConnId c : impl_->conn_list) impl_->send(c, Error{ErrorCode::kShutdown, reason});
  impl_->shut_down = true;
}

SimTime CoordinatorCore::grant() const { return impl_->grant; }
uint64_t CoordinatorCore::grants_issued() const { return impl_->grants; }
bool CoordinatorCore::failed() const { return impl_->failed; }
const std::string& CoordinatorCore::failure() const { return impl_->failure; }
SimTime CoordinatorCore::min_safe_time() const { return impl_->min_safe(); }
bool CoordinatorCore::waits_past(ConnId conn, SimTime g) const {
  return impl_->waits_past(conn, g);
}
std::optional<SimTime> CoordinatorCore::last_heard(ConnId conn) const {
  auto it = impl_->conns.find(conn);
  if (it == impl_->conns.end()) return std::nullopt;
  return it->second.last_heard;
}

size_t CoordinatorCore::pending_messages() const {
  return impl_->pending.size() + (impl_->inbox.size() - impl_->inbox_head);
}

}  // namespace fieldproof::lockstep
