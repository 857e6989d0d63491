#include "fieldproof/lockstep/inprocess.hpp"
#include "fieldproof/util/mutex.hpp"

#include <algorithm>
#include <chrono>
#include <unordered_map>
#include <utility>
#include <vector>

#include "frame_ring.hpp"

namespace fieldproof::lockstep {

namespace {

struct LinkQueue {
  detail::FrameRing frames;
  CondVar cv;
  bool closed = false;
  bool granted = false;  // a Grant was queued here
};

}  // namespace

struct InProcessCoordinator::State {
  Mutex mu;
  WallNow wall_now;
  std::unordered_map<ConnId, std::shared_ptr<LinkQueue>> links FIELDPROOF_GUARDED_BY(mu);
  ConnId next_id FIELDPROOF_GUARDED_BY(mu) = 1;
  bool shut FIELDPROOF_GUARDED_BY(mu) = false;
  std::unique_ptr<CoordinatorCore> core;

  void deliver(ConnId to, Frame f) FIELDPROOF_REQUIRES(mu) {
    auto it = links.find(to);
    if (it == links.end() || it->second->closed) return;
    LinkQueue& q = *it->second;
    // A grant or a delivery that no thread behind the link has to act on before a later grant
    // (each regulates with an effective safe time past the grant: it waits for a later one, or
    // read its deliveries with a lookahead) is queued without waking the receiver: it reads it
    // with the next frame that wakes it, in the same order. The link's first grant always wakes.
    bool wake = true;
    if (const auto* g = std::get_if<Grant>(&f)) {
      wake = !q.granted || !core->waits_past(to, g->time);
      q.granted = true;
    } else if (const auto* d = std::get_if<Deliver>(&f)) {
      wake = !core->waits_past(to, std::max(core->grant(), d->message.stamp));
    }
    q.frames.push(std::move(f));
    if (wake) q.cv.notify_one();
  }

  void shutdown(const std::string& reason) FIELDPROOF_REQUIRES(mu) {
    if (shut) return;
    core->shutdown(reason);
    shut = true;
  }
};

namespace {

class InProcessLink final : public Link {
 public:
  InProcessLink(std::shared_ptr<InProcessCoordinator::State> st, ConnId id,
                std::shared_ptr<LinkQueue> q)
      : st_(std::move(st)), id_(id), q_(std::move(q)) {}
  ~InProcessLink() override { close(); }

  void send(Frame frame) override {
    MutexLock lk(st_->mu);
    if (q_->closed || st_->shut) return;
    st_->core->handle(id_, std::move(frame));
  }

  std::optional<Frame> receive(Duration timeout) override {
    MutexLock lk(st_->mu);
    if (!q_->frames.empty()) return q_->frames.pop();
    if (q_->closed || timeout <= Duration::zero()) return std::nullopt;
    // A participant blocking in receive() is alive and waiting: that is its heartbeat (an
    // in-process participant sends no Heartbeat frames of its own). A hung one stops calling.
    if (!st_->shut) st_->core->handle(id_, Heartbeat{});
    const bool has_wall = static_cast<bool>(st_->wall_now);
    const SimTime deadline =
        has_wall && !timeout.is_infinite() ? st_->wall_now() + timeout : SimTime::infinite();
    bool waited_once = false;
    Duration real_left = timeout;
    for (;;) {
      std::optional<SimTime> next;
      if (!st_->shut) next = st_->core->poll();
      if (!q_->frames.empty()) return q_->frames.pop();
      if (q_->closed) return std::nullopt;
      if (!has_wall) {
        // No wall clock: nothing depends on wall time, so just wait for a frame.
        if (timeout.is_infinite()) {
          q_->cv.wait(st_->mu, [&] { return !q_->frames.empty() || q_->closed; });
        } else {
          if (waited_once) return std::nullopt;
          q_->cv.wait_for(st_->mu, std::chrono::nanoseconds(timeout.ns()),
                          [&] { return !q_->frames.empty() || q_->closed; });
          waited_once = true;
        }
      } else {
        // Bounded by the injected wall clock (deadline) and, so that a fake clock that does not
        // move cannot keep a finite receive() waiting for ever, by the real time spent waiting.
        const SimTime now = st_->wall_now();
        if (now >= deadline || real_left <= Duration::zero()) return std::nullopt;
        SimTime wake = deadline;
        if (next && *next < wake) wake = *next;
        int64_t wait_ns = INT64_MAX;
        if (!wake.is_infinite()) {
          // A poll time already past (the core wants to be polled again at once) still waits
          // a little, so a misbehaving deadline cannot turn this into a busy loop.
          wait_ns = std::max<int64_t>((wake - now).ns(), 100'000);
        }
        if (!timeout.is_infinite()) wait_ns = std::min(wait_ns, real_left.ns());
        const auto ready = [&] { return !q_->frames.empty() || q_->closed; };
        if (wait_ns == INT64_MAX) {
          q_->cv.wait(st_->mu, ready);
        } else if (!q_->cv.wait_for(st_->mu, std::chrono::nanoseconds(wait_ns), ready) &&
                   !timeout.is_infinite()) {
          real_left -= Duration::from_ns(wait_ns);
        }
      }
    }
  }

  void close() override {
    MutexLock lk(st_->mu);
    if (q_->closed) return;
    q_->closed = true;
    if (!st_->shut) st_->core->disconnected(id_);
    st_->links.erase(id_);
    q_->cv.notify_all();
  }

 private:
  std::shared_ptr<InProcessCoordinator::State> st_;
  ConnId id_;
  std::shared_ptr<LinkQueue> q_;
};

}  // namespace

InProcessCoordinator::InProcessCoordinator(CoordinatorOptions options)
    : state_(std::make_shared<State>()) {
  state_->wall_now = options.wall_now;
  State* st = state_.get();
  state_->core = std::make_unique<CoordinatorCore>(
      std::move(options),
      // The core sends only from handle(), poll(), disconnected() and shutdown(), each called
      // here with mu held; the analysis cannot follow the call through the core.
      [st](ConnId to, Frame f)
          FIELDPROOF_NO_THREAD_SAFETY_ANALYSIS { st->deliver(to, std::move(f)); });
  // The core asks while handling an Announce, from inside InProcessLink::send with mu held: the
  // Deliver frames of that thread still in its connection's queue are the ones it has not read.
  state_->core->set_unread_probe(
      [st](ConnId conn, const std::string& thread) FIELDPROOF_NO_THREAD_SAFETY_ANALYSIS {
        const auto it = st->links.find(conn);
        if (it == st->links.end()) return size_t{0};
        size_t n = 0;
        it->second->frames.for_each([&](const Frame& f) {
          if (const auto* d = std::get_if<Deliver>(&f); d && d->thread == thread) ++n;
        });
        return n;
      });
}

InProcessCoordinator::~InProcessCoordinator() {
  MutexLock lk(state_->mu);
  state_->shutdown("lockstep: the in-process coordinator was destroyed");
}

std::unique_ptr<Link> InProcessCoordinator::make_link() {
  MutexLock lk(state_->mu);
  const ConnId id = state_->next_id++;
  auto q = std::make_shared<LinkQueue>();
  if (state_->shut) {
    q->frames.push(Error{ErrorCode::kShutdown, "lockstep: the coordinator has shut down"});
  }
  state_->links[id] = q;
  return std::make_unique<InProcessLink>(state_, id, std::move(q));
}

ControlReply InProcessCoordinator::control(const Control& request) {
  MutexLock lk(state_->mu);
  return state_->core->control(request);
}

CoordinatorStatus InProcessCoordinator::status() {
  MutexLock lk(state_->mu);
  return state_->core->control(status_request()).status;
}

std::optional<SimTime> InProcessCoordinator::poll() {
  MutexLock lk(state_->mu);
  return state_->core->poll();
}

void InProcessCoordinator::set_tap(std::function<void(const Publish&)> tap) {
  MutexLock lk(state_->mu);
  state_->core->set_tap(std::move(tap));
}

void InProcessCoordinator::set_grant_observer(std::function<void(SimTime, uint64_t)> observer) {
  MutexLock lk(state_->mu);
  state_->core->set_grant_observer(std::move(observer));
}

void InProcessCoordinator::set_failure_handler(
    std::function<void(const std::string& participant, std::string reason)> handler) {
  MutexLock lk(state_->mu);
  state_->core->set_failure_handler(std::move(handler));
}

void InProcessCoordinator::shutdown(const std::string& reason) {
  MutexLock lk(state_->mu);
  state_->shutdown(reason);
}

void InProcessCoordinator::with_core(const std::function<void(CoordinatorCore&)>& f) {
  MutexLock lk(state_->mu);
  f(*state_->core);
}

}  // namespace fieldproof::lockstep
