// The evaluator's three types on synthetic streams: passing, failing at a deadline, at the
// first contact, at the end; evidence excerpts; skipped verdicts; the resolution order.
#include "fieldproof/engine/evaluator.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "fieldproof/engine/run.hpp"

namespace fieldproof::engine {
namespace {

constexpr const char* kScenario = R"(name: synthetic
world: examples/worlds/depot.sdf
vehicles:
  - name: ugv1
    spawn: {x: 0, y: 0}
timeline:
  - action: navigate_to_pose
    name: drive
    vehicle: ugv1
    at: 1s
    goal: {x: 10, y: 0}
assertions:
  - name: reached
    type: reach_pose
    vehicle: ugv1
    target: goal_a
    tolerance_m: 0.5
    within_s: 20s
  - name: safe
    type: no_collision
    vehicle: ugv1
    ignore: [floor]
  - name: quick
    type: within_time
    action: drive
    max_s: 5s
)";

struct Fixture {
  scenario::Scenario scenario;
  std::vector<PlannedAssertion> planned;
  std::vector<AssertionResult> resolved;
  std::unique_ptr<Evaluator> ev;

  Fixture() {
    auto r = scenario::load_scenario_text(kScenario, "synthetic.yaml", ".");
    EXPECT_TRUE(r.ok()) << r.format_errors();
    scenario = *r.scenario;
    PlanContext ctx{scenario, {{"goal_a", {10.0, 0.0, 0.0}}}};
    for (const auto& a : scenario.assertions) {
      planned.push_back(AssertionTypes::builtin().find(a.type)->plan(a, ctx));
    }
    ev = std::make_unique<Evaluator>(planned, AssertionTypes::builtin(),
                                     [this](const AssertionResult& r) { resolved.push_back(r); });
  }
  // Timeline times are SimTimes; the tests write them in seconds.
  static SimTime tl(double t) { return SimTime::from_ns(std::llround(t * 1e9)); }
  void pose(double t, double x) {
    Sample s;
    s.kind = Sample::Kind::kPose;
    s.sim = SimTime::from_ns(static_cast<int64_t>(t * 1e9));
    s.vehicle = "ugv1";
    s.pose = {x, 0.0, 0.0};
    ev->on_sample(s, tl(t));
  }
  void contact(double t, std::vector<std::string> with) {
    Sample s;
    s.kind = Sample::Kind::kContact;
    s.sim = SimTime::from_ns(static_cast<int64_t>(t * 1e9));
    s.vehicle = "ugv1";
    s.contacts = std::move(with);
    ev->on_sample(s, tl(t));
  }
  AssertionResult result(const std::string& name) const {
    for (const auto& r : ev->results()) {
      if (r.name == name) return r;
    }
    return {};
  }
};

TEST(Evaluator, ReachPosePassesAtTheFirstPoseWithinTolerance) {
  Fixture f;
  for (int i = 0; i <= 10; ++i) f.pose(i, i * 1.0);
  const auto r = f.result("reached");
  EXPECT_EQ(r.status, Verdict::kPassed);
  EXPECT_DOUBLE_EQ(to_seconds(r.t), 10.0);
  EXPECT_EQ(r.evidence["excerpt"].size(), 6u);
  EXPECT_EQ(r.metrics["reached_at_s"]["value"], 10.0);
}

TEST(Evaluator, ReachPoseFailsWhenItsDeadlinePassesNamingTheClosestDistance) {
  Fixture f;
  f.pose(1.0, 2.0);
  f.ev->on_tick(Fixture::tl(20.0));
  EXPECT_EQ(f.result("reached").status, Verdict::kPending);
  f.ev->on_tick(Fixture::tl(20.1));
  const auto r = f.result("reached");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_NE(r.reason.find("closest 8.00 m"), std::string::npos) << r.reason;
}

TEST(Evaluator, NoCollisionFailsAtTheFirstContactNotIgnored) {
  Fixture f;
  f.contact(2.0, {"floor::link::collision"});
  EXPECT_EQ(f.result("safe").status, Verdict::kPending);
  f.contact(3.0, {"crate::link::collision"});
  const auto r = f.result("safe");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_NE(r.reason.find("crate::link::collision"), std::string::npos) << r.reason;
  EXPECT_DOUBLE_EQ(to_seconds(r.t), 3.0);
}

TEST(Evaluator, NoCollisionPassesAtTheEndOfTheTimeline) {
  Fixture f;
  f.ev->finish(Fixture::tl(30.0));
  EXPECT_EQ(f.result("safe").status, Verdict::kPassed);
}

TEST(Evaluator, WithinTimePassesWhenTheActionSucceedsInTime) {
  Fixture f;
  f.ev->on_action("drive", ActionEvent::kStart, Fixture::tl(1.0), "running");
  f.ev->on_action("drive", ActionEvent::kEnd, Fixture::tl(4.0), "succeeded");
  const auto r = f.result("quick");
  EXPECT_EQ(r.status, Verdict::kPassed);
  EXPECT_EQ(r.metrics["duration_s"]["value"], 3.0);
}

TEST(Evaluator, WithinTimeFailsTheMomentItsLimitPasses) {
  Fixture f;
  f.ev->on_action("drive", ActionEvent::kStart, Fixture::tl(1.0), "running");
  f.ev->on_tick(Fixture::tl(6.0));
  EXPECT_EQ(f.result("quick").status, Verdict::kPending);
  f.ev->on_tick(Fixture::tl(6.1));
  const auto r = f.result("quick");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_EQ(r.reason, "drive has not completed 5 s after its start");
  EXPECT_DOUBLE_EQ(to_seconds(r.t), 6.0);  // at the limit itself
}

// The engine wakes just past the earliest pending deadline.
TEST(Evaluator, NextDeadlineIsTheEarliestPendingOne) {
  Fixture f;
  ASSERT_TRUE(f.ev->next_deadline().has_value());
  EXPECT_EQ(*f.ev->next_deadline(), Fixture::tl(20.0));  // reached: within_s 20 s
  f.ev->on_action("drive", ActionEvent::kStart, Fixture::tl(1.0), "running");
  EXPECT_EQ(*f.ev->next_deadline(), Fixture::tl(6.0));  // quick: 5 s after the drive's start
  f.ev->on_action("drive", ActionEvent::kEnd, Fixture::tl(2.0), "succeeded");
  EXPECT_EQ(*f.ev->next_deadline(), Fixture::tl(20.0));
}

TEST(Evaluator, WithinTimeFailsWhenTheActionAborts) {
  Fixture f;
  f.ev->on_action("drive", ActionEvent::kStart, Fixture::tl(1.0), "running");
  f.ev->on_action("drive", ActionEvent::kEnd, Fixture::tl(2.0), "aborted");
  EXPECT_EQ(f.result("quick").status, Verdict::kFailed);
}

TEST(Evaluator, PendingAssertionsAreSkippedWhenTheRunEndsEarly) {
  Fixture f;
  f.ev->skip_pending("interrupted", Fixture::tl(2.0));
  for (const auto& r : f.ev->results()) EXPECT_EQ(r.status, Verdict::kSkipped) << r.name;
  EXPECT_EQ(f.resolved.size(), 3u);
}

TEST(Evaluator, FirstFailedIsTheFirstToResolve) {
  Fixture f;
  f.ev->on_action("drive", ActionEvent::kStart, Fixture::tl(1.0), "running");
  f.ev->on_tick(Fixture::tl(6.5));
  f.contact(7.0, {"crate"});
  ASSERT_NE(f.ev->first_failed(), nullptr);
  EXPECT_EQ(f.ev->first_failed()->name, "quick");
  EXPECT_EQ(f.ev->failed_count(), 2u);
}

TEST(Evaluator, PlanningRefusesAnUnknownFrame) {
  auto r = scenario::load_scenario_text(kScenario, "synthetic.yaml", ".");
  ASSERT_TRUE(r.ok());
  PlanContext ctx{*r.scenario, {}};
  EXPECT_THROW(AssertionTypes::builtin().find("reach_pose")->plan(r.scenario->assertions[0], ctx),
               PlanError);
}

TEST(RunId, RefusesSeparatorsDotDotAndEmpty) {
  EXPECT_TRUE(check_run_id("ok-1").ok());
  EXPECT_FALSE(check_run_id("").ok());
  EXPECT_FALSE(check_run_id("a/b").ok());
  EXPECT_FALSE(check_run_id("a\\b").ok());
  EXPECT_FALSE(check_run_id("..").ok());
  EXPECT_FALSE(check_run_id("x..y").ok());
  EXPECT_FALSE(check_run_id(".hidden").ok());
}

}  // namespace
}  // namespace fieldproof::engine
