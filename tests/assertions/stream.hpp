// A synthetic run for the assertion tests: a scenario (the common vehicles and timeline plus the
// assertions under test) planned against frames given by hand, an Evaluator, and helpers that feed
// it poses, contacts and timeline events.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "fieldproof/assertions/checker.hpp"
#include "fieldproof/scenario/scenario.hpp"
#include "synthetic_scenario.hpp"

namespace fieldproof::assertions::testing {

inline const std::string kHeader = testing_scenario::synthetic_scenario("after: drive");

inline SimTime at(double t) { return SimTime::from_ns(static_cast<int64_t>(t * 1e9 + 0.5)); }

inline scenario::Scenario load(const std::string& body) {
  auto r = scenario::load_scenario_text(kHeader + body, "synthetic.yaml", ".");
  EXPECT_TRUE(r.ok()) << r.format_errors();
  return r.scenario ? *r.scenario : scenario::Scenario{};
}

struct Stream {
  scenario::Scenario scenario;
  std::vector<PlannedAssertion> planned;
  std::vector<AssertionResult> resolved;
  std::vector<AssertionResult> aborts;
  std::unique_ptr<Evaluator> ev;

  // `assertions`: the scenario's assertions section, YAML.
  explicit Stream(const std::string& assertions) : scenario(load(assertions)) {
    PlanContext ctx{scenario, {{"goal_a", {10.0, 0.0, 0.0}}, {"dock", {0.0, 0.0, 0.0}}}};
    for (const auto& a : scenario.assertions) {
      const AssertionType* type = AssertionTypes::builtin().find(a.type);
      EXPECT_NE(type, nullptr) << a.type;
      if (type) planned.push_back(type->plan(a, ctx));
    }
    ev = std::make_unique<Evaluator>(planned, AssertionTypes::builtin(),
                                     [this](const AssertionResult& r) { resolved.push_back(r); });
    ev->set_on_abort([this](const AssertionResult& r) { aborts.push_back(r); });
  }
  void pose(double t, double x, double y = 0.0, const std::string& model = "ugv1",
            double yaw = 0.0) {
    Sample s;
    s.kind = Sample::Kind::kPose;
    s.sim = at(t);
    s.vehicle = model;
    s.pose = {x, y, yaw};
    ev->on_sample(s, at(t));
  }
  void contact(double t, std::vector<std::string> with, const std::string& model = "ugv1") {
    Sample s;
    s.kind = Sample::Kind::kContact;
    s.sim = at(t);
    s.vehicle = model;
    s.contacts = std::move(with);
    ev->on_sample(s, at(t));
  }
  void start(const std::string& label, double t) {
    ev->on_action(label, ActionEvent::kStart, at(t), "running");
  }
  void end(const std::string& label, double t, const std::string& status = "ok") {
    ev->on_action(label, ActionEvent::kEnd, at(t), status);
  }
  void tick(double t) { ev->on_tick(at(t)); }
  void finish(double t) { ev->finish(at(t)); }
  AssertionResult result(const std::string& name) const {
    for (const auto& r : ev->results()) {
      if (r.name == name) return r;
    }
    ADD_FAILURE() << "no assertion " << name;
    return {};
  }
  Verdict status(const std::string& name) const { return result(name).status; }
  double metric(const std::string& name, const std::string& m) const {
    const auto r = result(name);
    if (!r.metrics.contains(m)) {
      ADD_FAILURE() << name << " has no metric " << m << ": " << r.metrics.dump();
      return -1;
    }
    return r.metrics[m]["value"].get<double>();
  }
};

}  // namespace fieldproof::assertions::testing
