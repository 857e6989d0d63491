// A synthetic run for the signal and sequence tests: a scenario with two vehicles and two
// timeline entries plus the assertions under test, planned with the built-in types, and helpers
// that feed the evaluator one sample, tick or timeline event at a time.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "fieldproof/assertions/checker.hpp"
#include "synthetic_scenario.hpp"

namespace fieldproof::assertions::synthetic {

inline std::string scenario_with(const std::string& assertions) {
  return testing_scenario::synthetic_scenario("at: 20s") + "assertions:\n" + assertions;
}

inline SimTime sim_of(double t) {
  return SimTime::from_ns(static_cast<int64_t>(std::llround(t * 1e9)));
}
inline Duration duration_of(double s) {
  return Duration::from_ns(static_cast<int64_t>(std::llround(s * 1e9)));
}

// What planning the scenario's assertions says: "" when every one plans, otherwise
// "<path>: <message>" of the first refusal (validation errors as the loader formats them).
inline std::string plan_refusal(const std::string& assertions) {
  auto r = scenario::load_scenario_text(scenario_with(assertions), "synthetic.yaml", ".");
  if (!r.ok()) return "invalid: " + r.format_errors();
  PlanContext ctx{*r.scenario, {{"goal_a", {10.0, 0.0, 0.0}}}};
  try {
    for (const auto& a : r.scenario->assertions)
      AssertionTypes::builtin().find(a.type)->plan(a, ctx);
  } catch (const PlanError& e) {
    return e.path() + ": " + e.what();
  }
  return "";
}

struct Stream {
  scenario::Scenario scenario;
  std::vector<PlannedAssertion> planned;
  std::vector<AssertionResult> resolved;
  std::unique_ptr<Evaluator> ev;

  explicit Stream(const std::string& assertions) {
    auto r = scenario::load_scenario_text(scenario_with(assertions), "synthetic.yaml", ".");
    EXPECT_TRUE(r.ok()) << r.format_errors();
    if (!r.ok()) return;
    scenario = *r.scenario;
    PlanContext ctx{scenario, {{"goal_a", {10.0, 0.0, 0.0}}}};
    for (const auto& a : scenario.assertions) {
      planned.push_back(AssertionTypes::builtin().find(a.type)->plan(a, ctx));
    }
    ev = std::make_unique<Evaluator>(planned, AssertionTypes::builtin(),
                                     [this](const AssertionResult& x) { resolved.push_back(x); });
  }

  void value(double t, const std::string& topic, nlohmann::json message) {
    Sample s;
    s.kind = Sample::Kind::kValue;
    s.sim = sim_of(t);
    s.topic = topic;
    s.message = std::move(message);
    ev->on_sample(s, sim_of(t));
  }
  void rate(double t, const std::string& topic, double hz, double window_s, uint64_t messages) {
    Sample s;
    s.kind = Sample::Kind::kRate;
    s.sim = sim_of(t);
    s.topic = topic;
    s.hz = hz;
    s.window = duration_of(window_s);
    s.messages = messages;
    ev->on_sample(s, sim_of(t));
  }
  void latency(double t, const std::string& topic, LatencyWindow w, double window_s = 2.0) {
    Sample s;
    s.kind = Sample::Kind::kLatency;
    s.sim = sim_of(t);
    s.topic = topic;
    s.latency = w;
    s.window = duration_of(window_s);
    ev->on_sample(s, sim_of(t));
  }
  void lifecycle(double t, const std::string& vehicle, const std::string& node,
                 const std::string& state) {
    Sample s;
    s.kind = Sample::Kind::kLifecycle;
    s.sim = sim_of(t);
    s.vehicle = vehicle;
    s.node = node;
    s.state = state;
    ev->on_sample(s, sim_of(t));
  }
  void resources(double t, const std::string& vehicle, double cpu, double mem) {
    Sample s;
    s.kind = Sample::Kind::kResources;
    s.sim = sim_of(t);
    s.vehicle = vehicle;
    s.process = vehicle + "_stack";
    s.cpu_pct = cpu;
    s.memory_mb = mem;
    ev->on_sample(s, sim_of(t));
  }
  void pose(double t, const std::string& vehicle, double x, double y, double yaw = 0.0) {
    Sample s;
    s.kind = Sample::Kind::kPose;
    s.sim = sim_of(t);
    s.vehicle = vehicle;
    s.pose = {x, y, yaw};
    ev->on_sample(s, sim_of(t));
  }
  void clock(double t, double rtf) {
    Sample s;
    s.kind = Sample::Kind::kClock;
    s.sim = sim_of(t);
    s.rtf = rtf;
    ev->on_sample(s, sim_of(t));
  }
  void tick(double t) { ev->on_tick(sim_of(t)); }
  void start(const std::string& label, double t) {
    ev->on_action(label, ActionEvent::kStart, sim_of(t), "running");
  }
  void end(const std::string& label, double t, const std::string& status = "succeeded") {
    ev->on_action(label, ActionEvent::kEnd, sim_of(t), status);
  }
  void finish(double t) { ev->finish(sim_of(t)); }
  AssertionResult result(const std::string& name) const {
    for (const auto& r : ev->results()) {
      if (r.name == name) return r;
    }
    ADD_FAILURE() << "no assertion " << name;
    return {};
  }
  const PlannedAssertion& plan(const std::string& name) const {
    for (const auto& p : planned) {
      if (p.spec.name == name) return p;
    }
    ADD_FAILURE() << "no assertion " << name;
    return planned.front();
  }
};

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace fieldproof::assertions::synthetic
