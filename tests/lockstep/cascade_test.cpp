// The upstream (cascade) mode of the core: two cores wired together in-process give the same
// ordered trace as one core, whatever order the in-flight frames arrive in.
//
// Every frame travels through a FIFO queue (one per direction per connection); a seeded scheduler
// picks which queue delivers next, so each seed is a different arrival order. The participants
// are scripted agents that follow the participant library's rules (announce the next wake, answer
// deliveries, announce again only after a batch's closing Grant).
#include <gtest/gtest.h>

#include <deque>
#include <functional>
#include <memory>
#include <sstream>

#include "fieldproof/lockstep/coordinator.hpp"

namespace fieldproof::lockstep {
namespace {

constexpr int64_t kEndMs = 60;
SimTime ms(int64_t v) { return SimTime::from_ns(v * 1'000'000); }

class Net {
 public:
  explicit Net(uint64_t seed) : rng_(seed * 2654435761ULL + 1) {}
  size_t make_queue() {
    queues_.emplace_back();
    return queues_.size() - 1;
  }
  void post(size_t q, std::function<void()> f) { queues_[q].push_back(std::move(f)); }
  void run() {
    for (;;) {
      std::vector<size_t> ready;
      for (size_t i = 0; i < queues_.size(); ++i) {
        if (!queues_[i].empty()) ready.push_back(i);
      }
      if (ready.empty()) return;
      rng_ = rng_ * 6364136223846793005ULL + 1442695040888963407ULL;
      const size_t q = ready[(rng_ >> 33) % ready.size()];
      auto f = std::move(queues_[q].front());
      queues_[q].pop_front();
      f();
    }
  }

 private:
  uint64_t rng_;
  std::vector<std::deque<std::function<void()>>> queues_;
};

struct Agent {
  std::string name;
  int64_t period_ms = 1;
  std::vector<std::string> listens;
  std::function<void(Frame)> to_core;

  SimTime grant;
  SimTime next_wake;
  std::optional<SimTime> announced;
  bool lowered = false;
  bool awaiting_marker = false;
  uint64_t seq = 0;

  void start() {
    next_wake = ms(period_ms);
    to_core(Announce{name, "main", Role::kRegulating, SimTime::zero()});
    announced = SimTime::zero();
    for (const auto& topic : listens) to_core(Subscribe{name, "main", topic});
  }

  void publish(SimTime stamp, std::string payload) {
    to_core(Publish{name, name, stamp, ++seq, "text", std::move(payload)});
  }

  void on_frame(const Frame& f) {
    if (auto* g = std::get_if<Grant>(&f)) {
      grant = std::max(grant, g->time);
      awaiting_marker = false;
    } else if (auto* d = std::get_if<Deliver>(&f)) {
      lowered = true;
      awaiting_marker = true;
      const Publish& m = d->message;
      if (m.payload.rfind("re:", 0) != 0 && grant < ms(kEndMs)) {
        publish(grant, "re:" + m.participant + "/" + std::to_string(m.seq));
      }
    }
    step();
  }

  void step() {
    if (awaiting_marker) return;
    while (grant >= next_wake && next_wake < ms(kEndMs)) {
      publish(next_wake, "tick");
      next_wake = next_wake + milliseconds(period_ms);
    }
    const SimTime target = grant >= ms(kEndMs) ? SimTime::infinite()
                                               : std::min(next_wake, ms(kEndMs));
    if (!announced || *announced != target || lowered) {
      announced = target;
      lowered = false;
      to_core(Announce{name, "main", Role::kRegulating, target});
    }
  }
};

const std::vector<std::pair<std::string, int64_t>> kSpecs = {
    {"alpha", 3}, {"bravo", 5}, {"charlie", 7}, {"delta", 4}};

std::vector<std::unique_ptr<Agent>> make_agents() {
  std::vector<std::unique_ptr<Agent>> agents;
  for (size_t i = 0; i < kSpecs.size(); ++i) {
    auto a = std::make_unique<Agent>();
    a->name = kSpecs[i].first;
    a->period_ms = kSpecs[i].second;
    for (size_t j = 0; j < kSpecs.size(); ++j) {
      if (j != i) a->listens.push_back(kSpecs[j].first);
    }
    agents.push_back(std::move(a));
  }
  return agents;
}

std::string serialise(const std::vector<Publish>& trace) {
  std::ostringstream out;
  for (const Publish& m : trace) {
    out << m.stamp.ns() << ' ' << m.participant << ' ' << m.seq << ' ' << m.payload << '\n';
  }
  return out.str();
}

CoordinatorOptions paused_options() {
  CoordinatorOptions o;
  o.start_paused = true;
  return o;
}

// Wires agent i to `core` as connection `conn` through two queues.
void attach(Net& net, CoordinatorCore& core, Agent& agent, ConnId conn,
            std::map<ConnId, Agent*>& by_conn) {
  const size_t up = net.make_queue();
  by_conn[conn] = &agent;
  agent.to_core = [&net, &core, up, conn](Frame f) {
    net.post(up, [&core, conn, f = std::move(f)]() mutable { core.handle(conn, std::move(f)); });
  };
}

std::string run_single(uint64_t seed) {
  Net net(seed);
  std::map<ConnId, Agent*> by_conn;
  std::map<ConnId, size_t> down;
  std::vector<Publish> trace;
  CoordinatorCore root(paused_options(), [&](ConnId c, Frame f) {
    Agent* a = by_conn.at(c);
    net.post(down.at(c), [a, f = std::move(f)] { a->on_frame(f); });
  });
  root.set_tap([&](const Publish& m) { trace.push_back(m); });
  auto agents = make_agents();
  for (size_t i = 0; i < agents.size(); ++i) {
    const ConnId c = i + 1;
    down[c] = net.make_queue();
    attach(net, root, *agents[i], c, by_conn);
    agents[i]->start();
  }
  net.run();
  root.control(resume_request());
  net.run();
  EXPECT_EQ(root.grant(), ms(kEndMs));
  return serialise(trace);
}

// alpha and bravo on the root, charlie and delta under a child coordinator.
std::string run_cascade(uint64_t seed) {
  Net net(seed);
  std::vector<Publish> trace;
  std::map<ConnId, Agent*> root_conns;
  std::map<ConnId, Agent*> child_conns;
  std::map<ConnId, size_t> root_down;
  std::map<ConnId, size_t> child_down;
  constexpr ConnId kChildConn = 100;
  const size_t child_up = net.make_queue();
  const size_t child_from_parent = net.make_queue();
  std::unique_ptr<CoordinatorCore> child;

  CoordinatorCore root(paused_options(), [&](ConnId c, Frame f) {
    if (c == kChildConn) {
      net.post(child_from_parent, [&child, f = std::move(f)]() mutable {
        if (auto* g = std::get_if<Grant>(&f)) child->upstream_grant(g->time);
        if (auto* d = std::get_if<Deliver>(&f)) child->upstream_deliver(std::move(d->message));
      });
      return;
    }
    Agent* a = root_conns.at(c);
    net.post(root_down.at(c), [a, f = std::move(f)] { a->on_frame(f); });
  });
  root.set_tap([&](const Publish& m) { trace.push_back(m); });

  child = std::make_unique<CoordinatorCore>(CoordinatorOptions{}, [&](ConnId c, Frame f) {
    Agent* a = child_conns.at(c);
    net.post(child_down.at(c), [a, f = std::move(f)] { a->on_frame(f); });
  });
  auto to_root = [&](Frame f) {
    net.post(child_up, [&root, f = std::move(f)]() mutable {
      root.handle(kChildConn, std::move(f));
    });
  };
  UpstreamHooks hooks;
  hooks.publish = [to_root](const Publish& m) { to_root(m); };
  hooks.safe_time = [to_root](SimTime t) {
    to_root(Announce{"child", "cascade", Role::kRegulating, t});
  };
  hooks.subscribe = [to_root](const std::string& topic) {
    to_root(Subscribe{"child", "cascade", topic});
  };
  hooks.unsubscribe = [to_root](const std::string& topic) {
    to_root(Unsubscribe{"child", "cascade", topic});
  };
  child->set_upstream(hooks);

  auto agents = make_agents();
  for (size_t i = 0; i < agents.size(); ++i) {
    const ConnId c = i + 1;
    if (i < 2) {
      root_down[c] = net.make_queue();
      attach(net, root, *agents[i], c, root_conns);
    } else {
      child_down[c] = net.make_queue();
      attach(net, *child, *agents[i], c, child_conns);
    }
    agents[i]->start();
  }
  net.run();
  root.control(resume_request());
  net.run();
  EXPECT_EQ(root.grant(), ms(kEndMs));
  EXPECT_EQ(child->grant(), ms(kEndMs));
  EXPECT_FALSE(root.failed());
  return serialise(trace);
}

TEST(Cascade, OneCoreGivesTheSameTraceWhateverTheArrivalOrder) {
  const std::string reference = run_single(1);
  EXPECT_GT(std::count(reference.begin(), reference.end(), '\n'), 50);
  for (uint64_t seed = 2; seed <= 5; ++seed) EXPECT_EQ(run_single(seed), reference) << seed;
}

TEST(Cascade, TwoCoresWiredAsACascadeGiveTheSameTraceAsOneCore) {
  const std::string reference = run_single(1);
  for (uint64_t seed = 1; seed <= 5; ++seed) EXPECT_EQ(run_cascade(seed), reference) << seed;
}

TEST(Cascade, ChildReportsItsLocalMinimumAndSubscriptionsUpstream) {
  std::vector<SimTime> reported;
  std::vector<std::string> subscribed;
  CoordinatorCore child(CoordinatorOptions{}, [](ConnId, Frame) {});
  UpstreamHooks hooks;
  hooks.publish = [](const Publish&) {};
  hooks.safe_time = [&](SimTime t) { reported.push_back(t); };
  hooks.subscribe = [&](const std::string& topic) { subscribed.push_back(topic); };
  hooks.unsubscribe = [](const std::string&) {};
  child.set_upstream(hooks);
  child.handle(1, Announce{"a", "main", Role::kRegulating, ms(10)});
  child.handle(2, Announce{"b", "main", Role::kRegulating, ms(20)});
  child.handle(1, Subscribe{"a", "main", "t"});
  child.handle(2, Subscribe{"b", "main", "t"});
  EXPECT_EQ(subscribed, std::vector<std::string>{"t"});
  ASSERT_FALSE(reported.empty());
  EXPECT_EQ(reported.back(), ms(10));
  child.handle(1, Announce{"a", "main", Role::kRegulating, ms(30)});
  EXPECT_EQ(reported.back(), ms(20));
  EXPECT_EQ(child.grant(), SimTime::zero());  // capped by the parent's grant
  child.upstream_grant(ms(15));
  EXPECT_EQ(child.grant(), ms(15));
}

TEST(Cascade, ChildForwardsLocalPublishesInsteadOfOrderingThem) {
  std::vector<Publish> up;
  CoordinatorCore child(CoordinatorOptions{}, [](ConnId, Frame) {});
  UpstreamHooks hooks;
  hooks.publish = [&](const Publish& m) { up.push_back(m); };
  hooks.safe_time = [](SimTime) {};
  hooks.subscribe = [](const std::string&) {};
  hooks.unsubscribe = [](const std::string&) {};
  child.set_upstream(hooks);
  child.handle(1, Announce{"a", "main", Role::kRegulating, ms(0)});
  child.handle(1, Publish{"a", "t", ms(0), 1, "", "x"});
  ASSERT_EQ(up.size(), 1u);
  EXPECT_EQ(up[0].participant, "a");
  EXPECT_EQ(child.pending_messages(), 0u);
}

}  // namespace
}  // namespace fieldproof::lockstep
