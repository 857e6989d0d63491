// The participant library over the in-process transport, with real threads where it matters.
#include "fieldproof/lockstep/participant.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <sstream>
#include <thread>

#include "fieldproof/lockstep/executor.hpp"
#include "fieldproof/lockstep/inprocess.hpp"

namespace fieldproof::lockstep {
namespace {

SimTime ms(int64_t v) { return SimTime::from_ns(v * 1'000'000); }

ParticipantOptions named(const std::string& name, Role role = Role::kRegulating) {
  ParticipantOptions o;
  o.name = name;
  o.role = role;
  return o;
}

CoordinatorOptions paused() {
  CoordinatorOptions o;
  o.start_paused = true;
  return o;
}

// Options whose wall clock is wall_ns, which the test moves by hand.
CoordinatorOptions on_wall_clock(const std::atomic<int64_t>& wall_ns) {
  CoordinatorOptions o;
  o.wall_now = [&wall_ns] { return SimTime::from_ns(wall_ns.load()); };
  return o;
}

// Reads every frame already queued for the link.
void drain(Link& link) {
  while (link.receive(Duration::zero())) {
  }
}

TEST(Participant, JoinsAndLearnsTheTime) {
  InProcessCoordinator coord;
  Participant p(coord.make_link(), named("p"));
  EXPECT_TRUE(p.ok());
  EXPECT_EQ(p.now(), SimTime::zero());
  EXPECT_EQ(coord.status().participants.size(), 1u);
}

TEST(Participant, SleepUntilWakesAtExactlyThatTime) {
  InProcessCoordinator coord;
  Participant p(coord.make_link(), named("p"));
  EXPECT_TRUE(p.sleep_until(ms(5)));
  EXPECT_EQ(p.now(), ms(5));
  EXPECT_TRUE(p.sleep_for(milliseconds(3)));
  EXPECT_EQ(p.now(), ms(8));
  EXPECT_TRUE(p.sleep_until(ms(2)));  // already past: returns at once
  EXPECT_EQ(p.now(), ms(8));
}

TEST(Participant, SingleThreadedGrantLoopNeedsNoOtherThread) {
  InProcessCoordinator coord;
  Participant p(coord.make_link(), named("p"));
  for (int i = 0; i < 10'000; ++i) ASSERT_TRUE(p.sleep_until(p.now() + milliseconds(1)));
  EXPECT_EQ(p.now(), ms(10'000));
  EXPECT_EQ(coord.status().grants, 10'000u);
}

TEST(Participant, RateWakesAtIntegerMultiplesOfThePeriod) {
  InProcessCoordinator coord;
  Participant p(coord.make_link(), named("p"));
  Rate rate(p, milliseconds(3));
  std::vector<SimTime> wakes;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(rate.sleep());
    wakes.push_back(p.now());
  }
  EXPECT_EQ(wakes, (std::vector<SimTime>{ms(3), ms(6), ms(9), ms(12), ms(15)}));
}

TEST(Participant, PeriodicTimerFiresOnSimulatedTimeInsideSleeps) {
  InProcessCoordinator coord;
  Participant p(coord.make_link(), named("p"));
  std::vector<SimTime> fired;
  p.create_timer(milliseconds(2), [&] { fired.push_back(p.now()); });
  ASSERT_TRUE(p.sleep_until(ms(7)));
  EXPECT_EQ(fired, (std::vector<SimTime>{ms(2), ms(4), ms(6)}));
  EXPECT_EQ(p.now(), ms(7));
}

TEST(Participant, OneShotTimerFiresOnceAndCancelledTimerNever) {
  InProcessCoordinator coord;
  Participant p(coord.make_link(), named("p"));
  int once = 0;
  int cancelled = 0;
  p.main_thread().create_timer_at(ms(3), [&] { ++once; });
  TimerHandle t = p.create_timer(milliseconds(1), [&] { ++cancelled; });
  p.cancel_timer(t);
  ASSERT_TRUE(p.sleep_until(ms(10)));
  EXPECT_EQ(once, 1);
  EXPECT_EQ(cancelled, 0);
}

TEST(Participant, PublishedMessageReachesTheSubscriberWithItsStamp) {
  InProcessCoordinator coord(paused());
  Participant a(coord.make_link(), named("a"));
  Participant b(coord.make_link(), named("b"));
  std::vector<std::pair<SimTime, SimTime>> got;  // (stamp, b's now in the callback)
  b.subscribe("t", [&](const Publish& m) { got.emplace_back(m.stamp, b.now()); });
  coord.control(resume_request());
  std::thread tb([&] { b.sleep_until(ms(20)); });
  ASSERT_TRUE(a.sleep_until(ms(4)));
  a.publish("t", "hello");
  ASSERT_TRUE(a.sleep_until(ms(20)));
  tb.join();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].first, ms(4));
  EXPECT_EQ(got[0].second, ms(4));
}

// A relay ("r") reads "in" and publishes each message on "out" 5 ms later, from its own
// thread, while a source publishes on "in" every millisecond. With the lookahead the clock does
// not wait for the relay at each message; what the sink receives must be the same either way,
// and the relay must never publish behind the grant.
std::vector<std::pair<SimTime, std::string>> relay_run(bool lookahead) {
  InProcessCoordinator coord(paused());
  Participant src(coord.make_link(), named("src"));
  Participant relay(coord.make_link(), named("r"));
  Participant sink(coord.make_link(), named("sink"));
  std::vector<std::pair<SimTime, std::string>> got;
  relay.subscribe("in", [&](const Publish& m) {
    // A relay slower than the source (work, not a wait for an event), so that deliveries pile up
    // behind the one it runs and its announcements cross them.
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    relay.publish_at(m.stamp + milliseconds(5), "out", m.payload + "'");
  });
  sink.subscribe("out", [&](const Publish& m) { got.emplace_back(m.stamp, m.payload); });
  if (lookahead) {
    bool ok = false;
    coord.with_core([&](CoordinatorCore& core) {
      ok = core.set_lookahead("r", relay.main_thread().name(), "in", milliseconds(5));
    });
    EXPECT_TRUE(ok);
  }
  coord.control(resume_request());
  std::thread tr([&] { relay.sleep_until(ms(300)); });
  std::thread tk([&] { sink.sleep_until(ms(300)); });
  for (int i = 1; i <= 200; ++i) {
    EXPECT_TRUE(src.sleep_until(ms(i)));
    src.publish("in", std::to_string(i));
  }
  EXPECT_TRUE(src.sleep_until(ms(300)));
  tr.join();
  tk.join();
  EXPECT_EQ(relay.errors(), 0u) << relay.last_error();
  return got;
}

TEST(Participant, ARelayWithLookaheadDeliversTheSameMessagesAtTheSameStamps) {
  const auto with = relay_run(true);
  const auto without = relay_run(false);
  ASSERT_EQ(with.size(), 200u);
  EXPECT_EQ(with, without);
  for (size_t i = 0; i < with.size(); ++i) {
    EXPECT_EQ(with[i].first, ms(static_cast<int64_t>(i) + 1 + 5));
    EXPECT_EQ(with[i].second, std::to_string(i + 1) + "'");
  }
}

TEST(Participant, SingleThreadedExecutorHoldsTheClockDuringACallback) {
  InProcessCoordinator coord(paused());
  Participant sub(coord.make_link(), named("sub"));
  Participant pub(coord.make_link(), named("pub"));
  std::promise<void> entered;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  sub.subscribe("t", [&](const Publish&) {
    entered.set_value();
    released.wait();
  });
  SingleThreadedExecutor exec(sub);
  coord.control(resume_request());
  std::thread ts([&] { exec.spin(); });
  std::thread tp([&] {
    pub.sleep_until(ms(10));
    pub.publish("t", "x");
    pub.sleep_until(ms(100));
  });
  entered.get_future().wait();
  CoordinatorStatus s = coord.status();
  EXPECT_EQ(s.time, ms(10));
  ASSERT_EQ(s.participants.size(), 2u);
  EXPECT_EQ(s.participants[1].participant, "sub");
  EXPECT_EQ(s.participants[1].safe_time, ms(10));  // held at the callback's time
  release.set_value();
  tp.join();  // pub reaches 100 ms only once the callback is done
  EXPECT_EQ(pub.now(), ms(100));
  exec.stop();
  ts.join();
}

TEST(Participant, IdleExecutorAnnouncesItsNextTimer) {
  InProcessCoordinator coord(paused());
  Participant p(coord.make_link(), named("p"));
  Participant other(coord.make_link(), named("other"));
  std::vector<SimTime> fired;
  p.create_timer(milliseconds(25), [&] { fired.push_back(p.now()); });
  SingleThreadedExecutor exec(p);
  coord.control(resume_request());
  std::thread t([&] { exec.spin_until(ms(60)); });
  ASSERT_TRUE(other.sleep_until(ms(60)));
  t.join();
  EXPECT_EQ(fired, (std::vector<SimTime>{ms(25), ms(50)}));
}

TEST(Participant, MultiThreadedExecutorRunsEachCallbackOnItsSubscribingThread) {
  InProcessCoordinator coord(paused());
  Participant p(coord.make_link(), named("p"));
  Participant src(coord.make_link(), named("src"));
  MultiThreadedExecutor exec(p, 2);
  std::mutex mu;
  std::map<std::string, std::thread::id> ran_on;
  exec.worker(0).subscribe("a", [&](const Publish&) {
    std::lock_guard<std::mutex> lk(mu);
    ran_on["a"] = std::this_thread::get_id();
  });
  exec.worker(1).subscribe("b", [&](const Publish&) {
    std::lock_guard<std::mutex> lk(mu);
    ran_on["b"] = std::this_thread::get_id();
  });
  EXPECT_EQ(exec.worker(1).name(), "worker-1");
  coord.control(resume_request());
  std::thread te([&] { exec.spin_until(ms(10)); });
  ASSERT_TRUE(src.sleep_until(ms(2)));
  src.publish("a", "1");
  src.publish("b", "2");
  ASSERT_TRUE(src.sleep_until(ms(10)));
  te.join();
  ASSERT_EQ(ran_on.size(), 2u);
  EXPECT_NE(ran_on["a"], ran_on["b"]);
}

TEST(Participant, MultiThreadedExecutorWorkersLeaveWhenItIsDestroyed) {
  InProcessCoordinator coord(paused());
  Participant p(coord.make_link(), named("p"));
  Participant src(coord.make_link(), named("src"));
  {
    MultiThreadedExecutor exec(p, 3);
    coord.control(resume_request());
    std::thread te([&] { exec.spin_until(ms(10)); });
    ASSERT_TRUE(src.sleep_until(ms(10)));
    te.join();
    EXPECT_EQ(coord.status().participants.size(), 4u);
  }
  EXPECT_EQ(coord.status().participants.size(), 2u);
  std::thread tp([&] { EXPECT_TRUE(p.sleep_until(ms(30))); });
  EXPECT_TRUE(src.sleep_until(ms(30)));  // no worker holds the clock at 10 ms any more
  tp.join();
}

TEST(Participant, ThreadLeaveReleasesTheTimeItHeld) {
  InProcessCoordinator coord;
  Participant p(coord.make_link(), named("p"));
  ParticipantThread& worker = p.thread("worker-1");  // announced at the current time: holds
  worker.leave();
  EXPECT_TRUE(p.sleep_until(ms(5)));
  EXPECT_EQ(coord.status().participants.size(), 1u);
}

TEST(Participant, InProcessPacedSleepWaitsForTheWallClock) {
  std::atomic<int64_t> wall_ns{1'000'000'000};
  CoordinatorOptions o = on_wall_clock(wall_ns);
  o.max_rtf = 1.0;
  o.ack_timeout = Duration::infinite();
  InProcessCoordinator coord(o);
  Participant p(coord.make_link(), named("p"));
  std::thread t([&] { EXPECT_TRUE(p.sleep_until(ms(5))); });
  // Wait until p has announced 5 ms (an event, not a delay).
  while (coord.status().participants.at(0).safe_time != ms(5)) std::this_thread::yield();
  EXPECT_EQ(coord.status().time, SimTime::zero());  // the wall clock has not moved
  wall_ns += 5'000'000;
  coord.poll();
  t.join();
  EXPECT_EQ(p.now(), ms(5));
}

TEST(Participant, InProcessReceivePollsThePaceWithoutAHelperThread) {
  std::atomic<int64_t> wall_ns{1'000'000'000};
  CoordinatorOptions o = on_wall_clock(wall_ns);
  o.max_rtf = 2.0;
  o.ack_timeout = Duration::infinite();
  InProcessCoordinator coord(o);
  Participant p(coord.make_link(), named("p"));
  std::thread t([&] { EXPECT_TRUE(p.sleep_until(ms(8))); });
  while (coord.status().participants.at(0).safe_time != ms(8)) std::this_thread::yield();
  wall_ns += 4'000'000;  // nobody calls coord.poll(): the waiting receive() does
  t.join();
  EXPECT_EQ(p.now(), ms(8));
}

TEST(InProcess, AReceiveAboutToBlockIsAHeartbeat) {
  std::atomic<int64_t> wall_ns{100'000'000'000};
  CoordinatorOptions o = on_wall_clock(wall_ns);
  InProcessCoordinator coord(o);
  std::unique_ptr<Link> link = coord.make_link();
  link->send(Announce{"idle", "main", Role::kRegulating, SimTime::infinite()});
  drain(*link);
  wall_ns += 20'000'000'000;
  SimTime heard;
  coord.with_core([&](CoordinatorCore& core) { heard = core.last_heard(1).value(); });
  EXPECT_EQ(heard, SimTime::from_ns(100'000'000'000));
  EXPECT_FALSE(link->receive(microseconds(1)).has_value());
  coord.with_core([&](CoordinatorCore& core) { heard = core.last_heard(1).value(); });
  EXPECT_EQ(heard, SimTime::from_ns(120'000'000'000));
}

// Waits until the in-process link `conn` has entered receive() and is about to block: its
// heartbeat then carries the wall time `mark` (the fake clock's time since before it started).
void await_blocked_receive(InProcessCoordinator& coord, ConnId conn, int64_t mark) {
  for (;;) {
    SimTime heard;
    coord.with_core([&](CoordinatorCore& core) { heard = core.last_heard(conn).value(); });
    if (heard == SimTime::from_ns(mark)) return;
    std::this_thread::yield();
  }
}

// A grant, a delivery read with a lookahead and the batch's end that no thread behind a link has
// to act on yet are queued without waking its receiver; the grant that reaches its safe time
// wakes it, and it reads every frame in order.
TEST(InProcess, FramesNoThreadCanActOnYetAreQueuedWithoutWakingTheReceiver) {
  std::atomic<int64_t> wall_ns{1'000'000'000};
  CoordinatorOptions o = on_wall_clock(wall_ns);
  InProcessCoordinator coord(o);
  std::unique_ptr<Link> sleeper = coord.make_link();  // connection 1
  std::unique_ptr<Link> driver = coord.make_link();   // connection 2
  driver->send(Announce{"driver", "main", Role::kRegulating, SimTime::zero()});
  sleeper->send(Announce{"sleeper", "main", Role::kRegulating, ms(100)});
  sleeper->send(Subscribe{"sleeper", "main", "t"});
  bool set = false;
  coord.with_core([&](CoordinatorCore& core) {
    set = core.set_lookahead("sleeper", "main", "t", milliseconds(30));
  });
  ASSERT_TRUE(set);
  drain(*sleeper);
  std::promise<std::vector<Frame>> got;
  wall_ns = 2'000'000'000;
  std::thread receiver([&] {
    std::vector<Frame> frames;
    if (auto f = sleeper->receive(seconds(20))) frames.push_back(std::move(*f));
    while (auto f = sleeper->receive(Duration::zero())) frames.push_back(std::move(*f));
    got.set_value(std::move(frames));
  });
  await_blocked_receive(coord, 1, 2'000'000'000);
  std::future<std::vector<Frame>> frames = got.get_future();
  // Grant 10, the delivery at 10 (the sleeper's floor: 40) and the batch's end; then grant 20.
  driver->send(Publish{"driver", "t", ms(10), 1, "T", "x"});
  driver->send(Announce{"driver", "main", Role::kRegulating, ms(20)});
  // Not woken by any of them (the absence of a wake-up can only be waited for).
  EXPECT_EQ(frames.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout);
  driver->send(Announce{"driver", "main", Role::kRegulating, ms(40)});  // grant 40: its floor
  const std::vector<Frame> f = frames.get();
  receiver.join();
  std::vector<std::string> seen;
  for (const Frame& x : f) {
    if (const auto* g = std::get_if<Grant>(&x)) {
      seen.push_back("grant " + format_seconds(g->time));
    } else if (const auto* d = std::get_if<Deliver>(&x)) {
      seen.push_back("deliver " + d->message.topic + " " + format_seconds(d->message.stamp));
    }
  }
  const std::vector<std::string> want = {"grant 0.01", "deliver t 0.01", "grant 0.01", "grant 0.02",
                                         "grant 0.04"};
  EXPECT_EQ(seen, want);
}

// The same without waking: the receiver stays blocked while the grant stays short of its safe
// time (nothing it could act on arrives), and the driver's own grants reach the driver.
TEST(InProcess, AReceiverWaitingForALaterGrantIsNotWokenByEarlierOnes) {
  std::atomic<int64_t> wall_ns{1'000'000'000};
  CoordinatorOptions o = on_wall_clock(wall_ns);
  InProcessCoordinator coord(o);
  std::unique_ptr<Link> sleeper = coord.make_link();
  std::unique_ptr<Link> driver = coord.make_link();
  driver->send(Announce{"driver", "main", Role::kRegulating, SimTime::zero()});
  sleeper->send(Announce{"sleeper", "main", Role::kRegulating, ms(100)});
  drain(*sleeper);
  drain(*driver);
  std::promise<std::optional<Frame>> got;
  wall_ns = 2'000'000'000;
  std::thread receiver([&] { got.set_value(sleeper->receive(seconds(20))); });
  await_blocked_receive(coord, 1, 2'000'000'000);
  std::future<std::optional<Frame>> first = got.get_future();
  for (int64_t t = 10; t < 100; t += 10)
    driver->send(Announce{"driver", "main", Role::kRegulating, ms(t)});
  // Not woken by grants 10 to 90 (the absence of a wake-up can only be waited for).
  EXPECT_EQ(first.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout);
  std::vector<SimTime> driver_grants;
  while (auto f = driver->receive(Duration::zero())) {
    if (const auto* g = std::get_if<Grant>(&*f)) driver_grants.push_back(g->time);
  }
  EXPECT_EQ(driver_grants.size(), 9u);
  driver->send(Announce{"driver", "main", Role::kRegulating, ms(200)});  // grant 100
  const std::optional<Frame> f = first.get();
  receiver.join();
  ASSERT_TRUE(f && std::holds_alternative<Grant>(*f));
  EXPECT_EQ(std::get<Grant>(*f).time, ms(10));
  SimTime last = ms(10);
  int n = 1;
  while (auto more = sleeper->receive(Duration::zero())) {
    if (const auto* g = std::get_if<Grant>(&*more)) {
      EXPECT_GT(g->time, last);
      last = g->time;
      ++n;
    }
  }
  EXPECT_EQ(n, 10);
  EXPECT_EQ(last, ms(100));
}

TEST(InProcess, ExecutorStopsEvenWhenTheInjectedWallClockStandsStill) {
  CoordinatorOptions o;
  o.wall_now = [] { return SimTime::from_ns(42); };  // a fake clock nobody moves
  InProcessCoordinator coord(o);
  Participant p(coord.make_link(), named("p"));
  SingleThreadedExecutor exec(p);
  std::promise<bool> result;
  std::thread t([&] { result.set_value(exec.spin()); });
  // spin() is waiting once it has announced +inf (idle)
  while (coord.status().participants.at(0).safe_time != SimTime::infinite()) {
    std::this_thread::yield();
  }
  exec.stop();
  EXPECT_FALSE(result.get_future().get());
  t.join();
}

TEST(Participant, FollowerSeesTheClockButDoesNotHoldIt) {
  InProcessCoordinator coord(paused());
  Participant reg(coord.make_link(), named("reg"));
  Participant fol(coord.make_link(), named("fol", Role::kFollowing));
  coord.control(resume_request());
  ASSERT_TRUE(reg.sleep_until(ms(30)));  // does not wait for the follower
  ASSERT_TRUE(fol.sleep_until(ms(20)));  // already past
  EXPECT_EQ(fol.now(), ms(30));
}

TEST(Participant, DuplicateNameMakesTheSecondOneNotOk) {
  InProcessCoordinator coord;
  Participant a(coord.make_link(), named("same"));
  Participant b(coord.make_link(), named("same"));
  EXPECT_TRUE(a.ok());
  EXPECT_FALSE(b.ok());
  EXPECT_FALSE(b.sleep_until(ms(1)));
  EXPECT_NE(b.last_error().find("same"), std::string::npos);
}

TEST(Participant, CoordinatorShutdownEndsEverySleep) {
  InProcessCoordinator coord(paused());
  Participant p(coord.make_link(), named("p"));
  std::thread t([&] { EXPECT_FALSE(p.sleep_until(ms(10))); });
  coord.shutdown("test over");
  t.join();
  EXPECT_FALSE(p.ok());
}

TEST(Participant, DestructorLeaves) {
  InProcessCoordinator coord;
  { Participant p(coord.make_link(), named("p")); }
  EXPECT_TRUE(coord.status().participants.empty());
}

TEST(Participant, RefusedPublishIsReportedAndTheParticipantCarriesOn) {
  InProcessCoordinator coord;
  std::vector<ErrorCode> codes;
  ParticipantOptions o = named("p");
  o.on_error = [&](const Error& e) { codes.push_back(e.code); };
  Participant p(coord.make_link(), o);
  ASSERT_TRUE(p.sleep_until(ms(10)));
  p.publish_at(ms(5), "t", "late");
  ASSERT_TRUE(p.sleep_until(ms(20)));
  EXPECT_EQ(codes, std::vector<ErrorCode>{ErrorCode::kStampInPast});
  EXPECT_TRUE(p.ok());
  EXPECT_EQ(p.errors(), 1u);
}

// A Link driven by the test: frames are handed over one by one; what the participant sends and
// what its callbacks do go to one log, in order.
class ScriptedLink final : public Link {
 public:
  void send(Frame f) override {
    std::lock_guard<std::mutex> lk(mu_);
    if (auto* a = std::get_if<Announce>(&f)) {
      log_.push_back("announce " + format_seconds(a->safe_time));
    }
    cv_.notify_all();
  }
  std::optional<Frame> receive(Duration timeout) override {
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait_for(lk, std::chrono::nanoseconds(timeout.ns()),
                 [&] { return !in_.empty() || closed_; });
    if (in_.empty()) return std::nullopt;
    Frame f = std::move(in_.front());
    in_.pop_front();
    return f;
  }
  void close() override {
    std::lock_guard<std::mutex> lk(mu_);
    closed_ = true;
    cv_.notify_all();
  }
  void push(Frame f) {
    std::lock_guard<std::mutex> lk(mu_);
    in_.push_back(std::move(f));
    cv_.notify_all();
  }
  void note(const std::string& line) {
    std::lock_guard<std::mutex> lk(mu_);
    log_.push_back(line);
    cv_.notify_all();
  }
  // Waits until the log has `n` lines; returns them.
  std::vector<std::string> wait_log(size_t n) {
    std::unique_lock<std::mutex> lk(mu_);
    cv_.wait(lk, [&] { return log_.size() >= n; });
    return log_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Frame> in_;
  std::vector<std::string> log_;
  bool closed_ = false;
};

TEST(Participant, AnnouncesAgainOnlyAfterTheGrantThatEndsADeliveryBatch) {
  auto owned = std::make_unique<ScriptedLink>();
  ScriptedLink* link = owned.get();
  link->push(Grant{SimTime::zero(), 0});  // the answer to the registration
  Participant p(std::move(owned), named("p"));
  p.subscribe("t", [&](const Publish& m) { link->note("callback " + m.payload); });
  std::thread t([&] { p.sleep_until(ms(10)); });
  link->wait_log(2);  // announce 0 (registration), announce 0.01
  link->push(Grant{ms(5), 1});
  link->push(Deliver{"main", Publish{"q", "t", ms(5), 1, "", "m1"}});
  link->wait_log(3);
  link->push(Deliver{"main", Publish{"q", "t", ms(5), 2, "", "m2"}});
  link->wait_log(4);
  link->push(Grant{ms(5), 1});  // the end of the batch
  const auto log = link->wait_log(5);
  EXPECT_EQ(log, (std::vector<std::string>{"announce 0", "announce 0.01", "callback m1",
                                           "callback m2", "announce 0.01"}));
  link->push(Grant{ms(10), 2});
  t.join();
  EXPECT_EQ(p.now(), ms(10));
}

// Four participants with different periods on their own threads publish and answer each other;
// the coordinator's ordered trace is byte-identical over five runs.
constexpr int64_t kEndMs = 120;

std::string run_four_participants() {
  InProcessCoordinator coord(paused());
  std::ostringstream trace;
  coord.set_tap([&](const Publish& m) {
    trace << m.stamp.ns() << ' ' << m.participant << ' ' << m.seq << ' ' << m.topic << ' '
          << m.payload << '\n';
  });
  const std::vector<std::pair<std::string, int64_t>> specs = {
      {"alpha", 3}, {"bravo", 5}, {"charlie", 7}, {"delta", 11}};
  std::vector<std::unique_ptr<Participant>> ps;
  for (const auto& [name, period] : specs) {
    ps.push_back(std::make_unique<Participant>(coord.make_link(), named(name)));
  }
  for (size_t i = 0; i < ps.size(); ++i) {
    Participant* self = ps[i].get();
    for (size_t j = 0; j < ps.size(); ++j) {
      if (i == j) continue;
      self->subscribe(specs[j].first, [self](const Publish& m) {
        if (m.payload.rfind("re:", 0) == 0 || self->now() >= ms(kEndMs)) {
          return;
        }
        self->publish(self->name(), "re:" + m.participant + "/" + std::to_string(m.seq));
      });
    }
  }
  coord.control(resume_request());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < ps.size(); ++i) {
    threads.emplace_back([&, i] {
      Participant& p = *ps[i];
      Rate rate(p, milliseconds(specs[i].second));
      int k = 0;
      while (rate.next() < ms(kEndMs)) {
        if (!rate.sleep()) return;
        p.publish(p.name(), "tick " + std::to_string(++k));
      }
      p.sleep_until(ms(kEndMs));
    });
  }
  for (auto& t : threads) t.join();
  return trace.str();
}

TEST(Participant, FourParticipantsOnThreadsGiveAnIdenticalTraceOverFiveRuns) {
  const std::string first = run_four_participants();
  EXPECT_GT(std::count(first.begin(), first.end(), '\n'), 100);
  for (int run = 1; run < 5; ++run) ASSERT_EQ(run_four_participants(), first) << "run " << run;
}

}  // namespace
}  // namespace fieldproof::lockstep
