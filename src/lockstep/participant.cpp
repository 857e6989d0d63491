#include "fieldproof/lockstep/participant.hpp"
#include "fieldproof/util/mutex.hpp"

#include <algorithm>
#include <atomic>
#include <deque>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace fieldproof::lockstep {

namespace {
// How long the receiving thread blocks in one Link::receive before looking at stop flags again.
constexpr Duration kReceiveSlice = milliseconds(50);
}  // namespace

struct TimerRec {
  uint64_t id = 0;
  SimTime start;
  Duration period;  // zero: one-shot at `start`
  int64_t k = 1;
  std::shared_ptr<std::function<void()>> callback;
  SimTime due() const { return period == Duration::zero() ? start : start + period * k; }
};

struct ParticipantThread::State {
  Participant::Shared* sh = nullptr;
  std::string name;
  std::unique_ptr<ParticipantThread> handle;
  // Guarded by Shared::mu.
  std::deque<Publish> inbox;
  std::unordered_map<std::string, std::shared_ptr<MessageCallback>> callbacks;
  std::vector<TimerRec> timers;
  std::optional<SimTime> announced;
  bool lowered = false;          // a delivery lowered this thread's safe time at the coordinator
  bool awaiting_marker = false;  // a Deliver arrived and no Grant frame after it yet
  bool stop = false;
};

struct Participant::Shared {
  Participant* owner = nullptr;
  ParticipantThread* main_handle = nullptr;  // set once in the constructor
  std::unique_ptr<Link> link;
  ParticipantOptions opt;
  mutable Mutex mu;
  CondVar cv;
  SimTime grant FIELDPROOF_GUARDED_BY(mu) = SimTime::zero();
  bool got_grant FIELDPROOF_GUARDED_BY(mu) = false;
  bool fatal FIELDPROOF_GUARDED_BY(mu) = false;
  bool left FIELDPROOF_GUARDED_BY(mu) = false;
  uint64_t errors FIELDPROOF_GUARDED_BY(mu) = 0;
  std::string last_error FIELDPROOF_GUARDED_BY(mu);
  bool receiving FIELDPROOF_GUARDED_BY(mu) = false;
  // Atomic, not under mu: prepare() takes numbers from inside the coordinator's fan-out.
  std::atomic<uint64_t> seq{0};
  uint64_t next_timer FIELDPROOF_GUARDED_BY(mu) = 1;
  std::map<std::string, std::unique_ptr<ParticipantThread::State>> threads
      FIELDPROOF_GUARDED_BY(mu);
  std::vector<Error> unreported
      FIELDPROOF_GUARDED_BY(mu);  // errors for opt.on_error, called without the lock

  bool done() const FIELDPROOF_REQUIRES(mu) { return fatal || left; }

  void dispatch(Frame& f) FIELDPROOF_REQUIRES(mu) {
    if (auto* g = std::get_if<Grant>(&f)) {
      if (g->time > grant) grant = g->time;
      got_grant = true;
      for (auto& [name, th] : threads) th->awaiting_marker = false;
    } else if (auto* d = std::get_if<Deliver>(&f)) {
      auto it = threads.find(d->thread);
      if (it == threads.end()) return;  // a thread this participant never created: ignore
      it->second->inbox.push_back(std::move(d->message));
      it->second->lowered = true;
      it->second->awaiting_marker = true;
    } else if (auto* e = std::get_if<Error>(&f)) {
      ++errors;
      last_error = e->reason;
      if (e->code == ErrorCode::kTimeout || e->code == ErrorCode::kShutdown ||
          e->code == ErrorCode::kDuplicateName || e->code == ErrorCode::kVersion ||
          e->code == ErrorCode::kNoHello) {
        fatal = true;
      }
      if (opt.on_error) unreported.push_back(*e);
    }
  }

  // Waits (lk held) until pred() or the participant is done. One waiting thread at a time is the
  // receiver: it reads the link without the lock and dispatches what arrives; the others wait on
  // Not analysed inside: it releases and retakes the caller's MutexLock `lk` (a scoped lock passed
  // by reference, which the analysis cannot follow); callers are checked to hold mu.
  // the condition variable, which the receiver signals after every read.
  template <typename Pred>
  void pump(MutexLock& lk, Pred pred) FIELDPROOF_REQUIRES(mu) FIELDPROOF_NO_THREAD_SAFETY_ANALYSIS {
    while (!pred() && !done()) {
      if (receiving) {
        cv.wait(mu);
        continue;
      }
      receiving = true;
      lk.unlock();
      std::optional<Frame> f = link->receive(kReceiveSlice);
      lk.lock();
      receiving = false;
      if (f) {
        dispatch(*f);
        // Drain what is already there (a whole batch arrives together in-process).
        while (!done()) {
          std::optional<Frame> more = link->receive(Duration::zero());
          if (!more) break;
          dispatch(*more);
        }
      }
      cv.notify_all();
      if (!unreported.empty()) {
        std::vector<Error> errs = std::move(unreported);
        unreported.clear();
        lk.unlock();
        for (const Error& e : errs) opt.on_error(e);
        lk.lock();
      }
    }
  }

  void send(Frame f) FIELDPROOF_REQUIRES(mu) {
    if (left) return;
    link->send(std::move(f));
  }

  void announce(ParticipantThread::State& th, SimTime t) FIELDPROOF_REQUIRES(mu) {
    th.announced = t;
    th.lowered = false;
    send(Announce{opt.name, th.name, opt.role, t});
  }

  ParticipantThread::State& add_thread(const std::string& name) FIELDPROOF_REQUIRES(mu) {
    auto st = std::make_unique<ParticipantThread::State>();
    st->sh = this;
    st->name = name;
    st->handle = std::make_unique<ParticipantThread>(st.get());
    auto& ref = *st;
    threads.emplace(name, std::move(st));
    return ref;
  }

  static size_t next_timer_index(const ParticipantThread::State& th) {
    size_t best = th.timers.size();
    for (size_t i = 0; i < th.timers.size(); ++i) {
      if (best == th.timers.size() || th.timers[i].due() < th.timers[best].due() ||
          (th.timers[i].due() == th.timers[best].due() && th.timers[i].id < th.timers[best].id)) {
        best = i;
      }
    }
    return best;
  }

  // The thread's wait: see participant.hpp. Returns true when the grant reached t.
  bool wait_until(ParticipantThread::State& th, SimTime t) FIELDPROOF_EXCLUDES(mu) {
    MutexLock lk(mu);
    for (;;) {
      if (done()) return false;
      if (th.stop) {
        th.stop = false;
        return false;
      }
      if (!th.inbox.empty()) {
        Publish m = std::move(th.inbox.front());
        th.inbox.pop_front();
        auto it = th.callbacks.find(m.topic);
        if (it == th.callbacks.end()) continue;  // unsubscribed meanwhile
        std::shared_ptr<MessageCallback> cb = it->second;
        lk.unlock();
        (*cb)(m);
        lk.lock();
        continue;
      }
      if (th.awaiting_marker) {
        // More deliveries of this batch may be in flight: wait for the batch's end.
        pump(lk, [&] { return !th.inbox.empty() || !th.awaiting_marker || th.stop; });
        continue;
      }
      const size_t ti = next_timer_index(th);
      if (ti < th.timers.size() && th.timers[ti].due() <= grant) {
        TimerRec& timer = th.timers[ti];
        std::shared_ptr<std::function<void()>> cb = timer.callback;
        if (timer.period == Duration::zero()) {
          th.timers.erase(th.timers.begin() + static_cast<std::ptrdiff_t>(ti));
        } else {
          ++timer.k;
        }
        lk.unlock();
        (*cb)();
        lk.lock();
        continue;
      }
      if (grant >= t) return true;
      SimTime target = t;
      if (ti < th.timers.size()) target = std::min(target, th.timers[ti].due());
      if (!th.announced || *th.announced != target || th.lowered) announce(th, target);
      pump(lk, [&]() FIELDPROOF_REQUIRES(mu) {
        return !th.inbox.empty() || grant >= target || th.stop;
      });
    }
  }
};

// ---- ParticipantThread ----

const std::string& ParticipantThread::name() const { return state_->name; }

Participant& ParticipantThread::participant() { return *state_->sh->owner; }

SimTime ParticipantThread::now() const {
  MutexLock lk(state_->sh->mu);
  return state_->sh->grant;
}

bool ParticipantThread::sleep_until(SimTime t) { return state_->sh->wait_until(*state_, t); }

bool ParticipantThread::sleep_for(Duration d) { return sleep_until(now() + d); }

void ParticipantThread::announce(SimTime safe_time) {
  MutexLock lk(state_->sh->mu);
  state_->sh->announce(*state_, safe_time);
}

void ParticipantThread::subscribe(const std::string& topic, MessageCallback callback) {
  auto* sh = state_->sh;
  MutexLock lk(sh->mu);
  if (!state_->announced) sh->announce(*state_, sh->grant);  // registers a thread that left
  const bool fresh = state_->callbacks.count(topic) == 0;
  state_->callbacks[topic] = std::make_shared<MessageCallback>(std::move(callback));
  if (fresh) sh->send(Subscribe{sh->opt.name, state_->name, topic});
}

void ParticipantThread::unsubscribe(const std::string& topic) {
  auto* sh = state_->sh;
  MutexLock lk(sh->mu);
  if (state_->callbacks.erase(topic) == 0) return;
  sh->send(Unsubscribe{sh->opt.name, state_->name, topic});
}

TimerHandle ParticipantThread::create_timer(Duration period, std::function<void()> callback) {
  if (period <= Duration::zero()) return TimerHandle{0};
  auto* sh = state_->sh;
  MutexLock lk(sh->mu);
  TimerRec t;
  t.id = sh->next_timer++;
  t.start = sh->grant;
  t.period = period;
  t.callback = std::make_shared<std::function<void()>>(std::move(callback));
  state_->timers.push_back(std::move(t));
  return TimerHandle{state_->timers.back().id};
}

TimerHandle ParticipantThread::create_timer_at(SimTime at, std::function<void()> callback) {
  auto* sh = state_->sh;
  MutexLock lk(sh->mu);
  TimerRec t;
  t.id = sh->next_timer++;
  t.start = at;
  t.period = Duration::zero();
  t.callback = std::make_shared<std::function<void()>>(std::move(callback));
  state_->timers.push_back(std::move(t));
  return TimerHandle{state_->timers.back().id};
}

void ParticipantThread::cancel_timer(TimerHandle timer) {
  MutexLock lk(state_->sh->mu);
  auto& v = state_->timers;
  v.erase(std::remove_if(v.begin(), v.end(), [&](const TimerRec& r) { return r.id == timer.id; }),
          v.end());
}

bool ParticipantThread::spin_until(SimTime until) { return sleep_until(until); }

void ParticipantThread::stop() {
  MutexLock lk(state_->sh->mu);
  state_->stop = true;
  state_->sh->cv.notify_all();
}

void ParticipantThread::leave() {
  auto* sh = state_->sh;
  MutexLock lk(sh->mu);
  if (!state_->announced) return;  // not registered
  sh->send(Leave{sh->opt.name, state_->name});
  state_->announced.reset();
  state_->callbacks.clear();
  state_->timers.clear();
  state_->inbox.clear();
  state_->lowered = false;
  state_->awaiting_marker = false;
}

// ---- Participant ----

Participant::Participant(std::unique_ptr<Link> link, ParticipantOptions options)
    : shared_(std::make_unique<Shared>()) {
  Shared& sh = *shared_;
  sh.owner = this;
  sh.link = std::move(link);
  sh.opt = std::move(options);
  MutexLock lk(sh.mu);
  ParticipantThread::State& main = sh.add_thread(sh.opt.thread);
  sh.main_handle = main.handle.get();
  // Register at the current time (the coordinator raises a late joiner to its grant) and learn
  // the time from the Grant that answers a registration.
  sh.announce(main, SimTime::zero());
  sh.pump(lk, [&]() FIELDPROOF_REQUIRES(sh.mu) { return sh.got_grant; });
  main.announced = sh.grant;
}

Participant::~Participant() { leave(); }

const std::string& Participant::name() const { return shared_->opt.name; }
Role Participant::role() const { return shared_->opt.role; }

bool Participant::ok() const {
  MutexLock lk(shared_->mu);
  return !shared_->done();
}

uint64_t Participant::errors() const {
  MutexLock lk(shared_->mu);
  return shared_->errors;
}

std::string Participant::last_error() const {
  MutexLock lk(shared_->mu);
  return shared_->last_error;
}

SimTime Participant::now() const {
  MutexLock lk(shared_->mu);
  return shared_->grant;
}

void Participant::publish(const std::string& topic, std::string payload, std::string type) {
  Shared& sh = *shared_;
  MutexLock lk(sh.mu);
  sh.send(Publish{sh.opt.name, topic, sh.grant, ++sh.seq, std::move(type), std::move(payload)});
}

void Participant::publish_at(SimTime stamp, const std::string& topic, std::string payload,
                             std::string type) {
  Shared& sh = *shared_;
  MutexLock lk(sh.mu);
  sh.send(Publish{sh.opt.name, topic, stamp, ++sh.seq, std::move(type), std::move(payload)});
}

Publish Participant::prepare(SimTime stamp, const std::string& topic, std::string payload,
                             std::string type) {
  Shared& sh = *shared_;
  return Publish{sh.opt.name, topic, stamp, ++sh.seq, std::move(type), std::move(payload)};
}

ParticipantThread& Participant::main_thread() { return *shared_->main_handle; }

ParticipantThread& Participant::thread(const std::string& name) {
  Shared& sh = *shared_;
  MutexLock lk(sh.mu);
  auto it = sh.threads.find(name);
  if (it != sh.threads.end()) return *it->second->handle;
  ParticipantThread::State& st = sh.add_thread(name);
  sh.announce(st, sh.grant);
  return *st.handle;
}

void Participant::leave() {
  Shared& sh = *shared_;
  {
    MutexLock lk(sh.mu);
    if (sh.left) return;
    sh.send(Leave{sh.opt.name, ""});
    sh.left = true;
    sh.cv.notify_all();
  }
  sh.link->close();
}

// ---- Rate ----

Rate::Rate(ParticipantThread& thread, Duration period)
    : thread_(&thread), period_(period > Duration::zero() ? period : Duration::from_ns(1)),
      start_(thread.now()) {}

bool Rate::sleep() {
  const SimTime now = thread_->now();
  if (next() <= now) k_ = (now - start_) / period_ + 1;  // fell behind: the next one after now
  const bool ok = thread_->sleep_until(next());
  ++k_;
  return ok;
}

}  // namespace fieldproof::lockstep
