// A CoordinatorCore with recording connections and a fake wall clock, for the core's tests.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fieldproof/lockstep/coordinator.hpp"

namespace fieldproof::lockstep::testing {

inline SimTime ms(int64_t v) { return SimTime::from_ns(v * 1'000'000); }

struct CoreHarness {
  std::map<ConnId, std::vector<Frame>> out;
  SimTime wall = SimTime::from_ns(1'000'000'000);
  std::vector<std::string> logs;
  std::vector<Publish> trace;
  std::vector<std::pair<std::string, std::string>> failures;
  std::unique_ptr<CoordinatorCore> core;

  explicit CoreHarness(CoordinatorOptions o = {}, bool with_wall = true) {
    if (with_wall) o.wall_now = [this] { return wall; };
    o.log = [this](const std::string& line) { logs.push_back(line); };
    core = std::make_unique<CoordinatorCore>(
        std::move(o), [this](ConnId c, Frame f) { out[c].push_back(std::move(f)); });
    core->set_tap([this](const Publish& p) { trace.push_back(p); });
    core->set_failure_handler([this](const std::string& who, std::string why) {
      failures.emplace_back(who, std::move(why));
    });
  }

  void announce(ConnId c, const std::string& name, SimTime t, Role role = Role::kRegulating,
                const std::string& thread = "main") {
    core->handle(c, Announce{name, thread, role, t});
  }
  void subscribe(ConnId c, const std::string& name, const std::string& topic,
                 const std::string& thread = "main") {
    core->handle(c, Subscribe{name, thread, topic});
  }
  void publish(ConnId c, const std::string& name, const std::string& topic, SimTime stamp,
               uint64_t seq, const std::string& payload = "") {
    core->handle(c, Publish{name, topic, stamp, seq, "t", payload});
  }

  // Frames of one kind received by a connection.
  template <typename T>
  std::vector<T> received(ConnId c) const {
    std::vector<T> v;
    auto it = out.find(c);
    if (it == out.end()) return v;
    for (const Frame& f : it->second) {
      if (auto* x = std::get_if<T>(&f)) v.push_back(*x);
    }
    return v;
  }
  std::vector<Error> errors(ConnId c) const { return received<Error>(c); }
  std::vector<Deliver> deliveries(ConnId c) const { return received<Deliver>(c); }
  SimTime last_grant(ConnId c) const {
    auto g = received<Grant>(c);
    return g.empty() ? SimTime::from_ns(-1) : g.back().time;
  }
  void clear() { out.clear(); }
};

}  // namespace fieldproof::lockstep::testing
