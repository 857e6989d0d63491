// The participant library: what a program under test links to take part in lock-step time.
//
//   Participant p(coord.make_link(), {.name = "ugv1"});       // or connect_participant(...)
//   p.subscribe("cmd", [&](const Publish& m) { apply(m.payload); });
//   Rate rate(p, milliseconds(10));
//   for (int i = 0; i < 100 && rate.sleep(); ++i) p.publish("odom", encode(state()), "Odometry");
//   // the destructor leaves
//
// Time: now() is the latest grant received. sleep_until(t) announces t (the calling thread
// promises to publish nothing stamped before t), then waits for a grant >= t. While it waits it
// is the thread's executor: deliveries to the thread and its timers run inside the wait, on the
// calling thread, with now() at their time; after running them the thread announces again. So
// a thread never needs a separate executor to keep time moving.
//
// Threads: every OS thread that sleeps or announces is its own thread participant within the
// participant (the coordinator waits for each). The thread that uses the Participant's own
// methods is options.thread ("main"); another OS thread gets its handle with thread("worker-1")
// and must use only that handle. Names are chosen by the program, so they are the same in every
// run. A handle announces on creation (at the current time: it holds the clock until it sleeps).
//
// Thread safety: a ParticipantThread is used by one OS thread at a time; different handles of
// one participant may be used concurrently. now(), publish(), ok() and leave() may be called from
// any thread. Callbacks must not block waiting for simulated time of another thread of the same
// participant.
//
// Failure: when the coordinator fails the run, shuts down, refuses the name or the protocol
// version (Error kTimeout, kShutdown, kDuplicateName, kVersion, kNoHello) or the participant
// left, ok() turns false and every sleep returns
// false at once. Other refusals (kStampInPast, ...) are reported to options.on_error and counted.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "fieldproof/lockstep/link.hpp"
#include "fieldproof/lockstep/protocol.hpp"
#include "fieldproof/time/duration.hpp"

namespace fieldproof::lockstep {

struct ParticipantOptions {
  std::string name{};               // unique among the coordinator's participants
  Role role = Role::kRegulating;    // applies to every thread of the participant
  std::string thread = "main";      // the name of the constructing thread
  // Errors the coordinator sent back (refusals), and fatal ones. Empty = ignored (still counted).
  // Called on whichever thread of the participant is reading the link, without the
  // participant's lock (it may call now(), errors(), publish()).
  std::function<void(const Error&)> on_error{};
};

using MessageCallback = std::function<void(const Publish&)>;

// A timer created by create_timer; cancel with cancel_timer. Ids are never reused.
struct TimerHandle {
  uint64_t id = 0;
};

class Participant;

// One thread participant (see the header comment). Obtained from Participant::thread(name) or
// Participant::main_thread(); owned by the Participant.
class ParticipantThread {
 public:
  const std::string& name() const;
  Participant& participant();

  SimTime now() const;
  // Announce t, then wait for a grant >= t, running this thread's deliveries and timers meanwhile.
  // Returns true when the grant reached t, false when the participant failed or left (or stop()
  // was called on the thread). t at or before now() returns true at once (after running what is
  // due at now()).
  bool sleep_until(SimTime t);
  bool sleep_for(Duration d);
  // Announce a safe time without waiting (SimTime::infinite() = idle until a delivery).
  void announce(SimTime safe_time);

  // Deliveries of `topic` go to this thread. Re-subscribing replaces the callback.
  void subscribe(const std::string& topic, MessageCallback callback);
  void unsubscribe(const std::string& topic);

  // A periodic timer on simulated time: fires at start + k x period (start = now() at creation,
  // k = 1, 2, ...), on this thread, inside its waits. Equal due times fire in creation order.
  // A period <= 0 creates nothing and returns TimerHandle{0}.
  TimerHandle create_timer(Duration period, std::function<void()> callback);
  // A one-shot timer at t.
  TimerHandle create_timer_at(SimTime t, std::function<void()> callback);
  void cancel_timer(TimerHandle timer);

  // Runs this thread's callbacks until stop() (from any thread), failure, or the grant reaching
  // `until`: idle it announces its next timer (or +inf), during a callback it holds the clock.
  // Returns false on failure / leave / stop.
  bool spin_until(SimTime until);
  // Makes the current or next spin_until / sleep of this thread return false (from any thread).
  void stop();
  // This thread stops taking part (Leave{participant, thread}): it no longer holds time and its
  // subscriptions and timers are dropped. Using the handle again registers it anew. Call it when
  // an OS thread that waited on simulated time ends while the participant goes on.
  void leave();

  struct State;
  explicit ParticipantThread(State* state) : state_(state) {}

 private:
  State* state_;
};

class Participant {
 public:
  // Registers options.thread with an announcement at the current time and waits for the
  // coordinator's first Grant (so now() is meaningful on return); ok() is false if the
  // coordinator refused (duplicate name) or is gone.
  Participant(std::unique_ptr<Link> link, ParticipantOptions options);
  ~Participant();  // leave()
  Participant(const Participant&) = delete;
  Participant& operator=(const Participant&) = delete;

  const std::string& name() const;
  Role role() const;
  bool ok() const;
  // Errors received from the coordinator (fatal or not).
  uint64_t errors() const;
  std::string last_error() const;

  SimTime now() const;
  // Publishes on `topic` stamped now() (a following participant's stamp is set by the
  // coordinator), with the next sequence number of this participant. Thread-safe.
  void publish(const std::string& topic, std::string payload, std::string type = "");
  // Publishes with an explicit stamp (>= now(); the coordinator refuses one before its grant).
  void publish_at(SimTime stamp, const std::string& topic, std::string payload,
                  std::string type = "");
  // A publish of this participant with its next sequence number, not sent: for a relay the
  // coordinator runs on its behalf (CoordinatorCore::set_relay), which queues it itself. Takes
  // no lock (callable from inside the fan-out); opt.name must not change meanwhile (it never does).
  Publish prepare(SimTime stamp, const std::string& topic, std::string payload,
                  std::string type = "");

  // The participant's own thread (options.thread), and other named threads (created and
  // announced on first call; the same name returns the same handle).
  ParticipantThread& main_thread();
  ParticipantThread& thread(const std::string& name);

  // Shorthands for main_thread().
  bool sleep_until(SimTime t) { return main_thread().sleep_until(t); }
  bool sleep_for(Duration d) { return main_thread().sleep_for(d); }
  void subscribe(const std::string& topic, MessageCallback cb) {
    main_thread().subscribe(topic, std::move(cb));
  }
  void unsubscribe(const std::string& topic) { main_thread().unsubscribe(topic); }
  TimerHandle create_timer(Duration period, std::function<void()> cb) {
    return main_thread().create_timer(period, std::move(cb));
  }
  void cancel_timer(TimerHandle t) { main_thread().cancel_timer(t); }

  // The whole participant leaves (every thread); later sleeps return false. Idempotent.
  void leave();

  struct Shared;

 private:
  std::unique_ptr<Shared> shared_;
};

// A fixed-rate loop on simulated time: sleep() wakes at start + k x period (start = now() at
// construction; integer deadlines, no drift). A deadline already passed (a following
// participant fell behind) is skipped to the next one after now().
class Rate {
 public:
  Rate(ParticipantThread& thread, Duration period);
  Rate(Participant& participant, Duration period) : Rate(participant.main_thread(), period) {}
  // false when the participant failed or left.
  bool sleep();
  Duration period() const { return period_; }
  SimTime next() const { return start_ + period_ * k_; }

 private:
  ParticipantThread* thread_;
  Duration period_;
  SimTime start_;
  int64_t k_ = 1;
};

}  // namespace fieldproof::lockstep
