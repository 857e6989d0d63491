// example.visits_waypoints on synthetic streams: the scenario validated against the tables with
// the plugin's spec added, planned, and its checker fed poses by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>

#include "fieldproof/scenario/scenario.hpp"
#include "visits_waypoints.hpp"

namespace fieldproof_example {
namespace {

namespace fa = fieldproof::assertions;
namespace fs = fieldproof::scenario;
using fieldproof::SimTime;

// The checker takes timeline times as SimTime (integer nanoseconds); the tests write seconds.
SimTime at(double t) { return SimTime::from_ns(std::llround(t * 1e9)); }

const std::filesystem::path kWorlds =
    std::filesystem::path(FIELDPROOF_SOURCE_DIR) / "examples" / "worlds";

fs::SpecRegistry registry_with_plugin() {
  fs::SpecRegistry r = fs::SpecRegistry::builtin();
  EXPECT_EQ(r.add_assertion(visits_waypoints_spec()), std::nullopt);
  return r;
}

// A scenario on the depot world whose one assertion is `assertion` (YAML lines, indented 4).
fs::ValidationResult load(const std::string& assertion) {
  static const fs::SpecRegistry registry = registry_with_plugin();
  const std::string yaml =
      "name: patrol\nworld: depot.sdf\nvehicles:\n  - {name: ugv1, spawn: dock}\n"
      "assertions:\n  - name: patrol\n    type: example.visits_waypoints\n" +
      assertion;
  fs::LoadOptions o;
  o.registry = &registry;
  return fs::load_scenario_text(yaml, "patrol.yaml", kWorlds, o);
}

struct Stream {
  fs::Scenario scenario;
  std::unique_ptr<fa::AssertionType> type = make_visits_waypoints_type();
  std::unique_ptr<fa::Checker> checker;

  explicit Stream(const std::string& assertion) {
    auto r = load(assertion);
    EXPECT_TRUE(r.ok()) << r.format_errors();
    scenario = *r.scenario;
    fa::PlanContext ctx{scenario, {{"goal_a", {10, -1, 0}}, {"goal_b", {-4, 8, 0}}}};
    checker = type->checker(type->plan(scenario.assertions[0], ctx));
  }
  void pose(double t, double x, double y) {
    fa::Sample s;
    s.kind = fa::Sample::Kind::kPose;
    s.vehicle = "ugv1";
    s.sim = SimTime::from_ns(static_cast<int64_t>(t * 1e9));
    s.pose = {x, y, 0};
    checker->on_sample(s, at(t));
  }
};

TEST(VisitsWaypoints, PassesOnceEveryWaypointIsVisitedInAnyOrder) {
  Stream run("    vehicle: ugv1\n    waypoints: [goal_a, {x: 0, y: 0}, goal_b]\n");
  run.pose(1, 0.2, 0.1);  // (0, 0)
  run.pose(2, -4, 7.7);   // goal_b
  EXPECT_FALSE(run.checker->resolved());
  run.pose(3, 10.3, -1);  // goal_a
  ASSERT_TRUE(run.checker->resolved());
  const fa::AssertionResult r = run.checker->result();
  EXPECT_EQ(r.status, fa::Verdict::kPassed) << r.reason;
  EXPECT_EQ(r.evidence["visited"].size(), 3u);
  EXPECT_EQ(r.evidence["excerpt"].size(), 3u);
  EXPECT_DOUBLE_EQ(run.checker->metrics()["visited"]["value"].get<double>(), 3);
  EXPECT_DOUBLE_EQ(run.checker->metrics()["completed_at_s"]["value"].get<double>(), 3);
}

TEST(VisitsWaypoints, FailsAtTheEndNamingTheMissingWaypoint) {
  Stream run("    vehicle: ugv1\n    waypoints: [goal_a, goal_b]\n");
  run.pose(1, 10, -1.4);  // goal_a, within 0.5 m
  run.pose(2, -4, 6);     // 2 m short of goal_b
  run.checker->on_finish(at(5));
  const fa::AssertionResult r = run.checker->result();
  EXPECT_EQ(r.status, fa::Verdict::kFailed);
  EXPECT_NE(r.reason.find("did not visit goal_b by the end of the timeline"), std::string::npos)
      << r.reason;
  EXPECT_DOUBLE_EQ(r.evidence["missing"][0]["closest_m"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(run.checker->metrics()["visited"]["value"].get<double>(), 1);
}

TEST(VisitsWaypoints, FailsAtItsDeadline) {
  Stream run("    vehicle: ugv1\n    waypoints: [goal_a]\n    within_s: 10s\n");
  run.checker->on_tick(at(9.9));
  EXPECT_FALSE(run.checker->resolved());
  run.checker->on_tick(at(10.1));
  ASSERT_TRUE(run.checker->resolved());
  EXPECT_NE(run.checker->result().reason.find("within 10 s"), std::string::npos);
}

TEST(VisitsWaypoints, ToleranceIsAParameter) {
  Stream run("    vehicle: ugv1\n    waypoints: [goal_a]\n    tolerance_m: 2\n");
  run.pose(1, 11.5, -1);  // 1.5 m away
  EXPECT_EQ(run.checker->result().status, fa::Verdict::kPassed);
}

TEST(VisitsWaypoints, PosesBeforeTheTimelineDoNotCount) {
  Stream run("    vehicle: ugv1\n    waypoints: [goal_a]\n");
  run.pose(-1, 10, -1);
  EXPECT_FALSE(run.checker->resolved());
}

TEST(VisitsWaypoints, OtherVehiclesPosesDoNotCount) {
  Stream run("    vehicle: ugv1\n    waypoints: [goal_a]\n");
  fa::Sample s;
  s.kind = fa::Sample::Kind::kPose;
  s.vehicle = "ugv2";
  s.pose = {10, -1, 0};
  run.checker->on_sample(s, at(1));
  EXPECT_FALSE(run.checker->resolved());
}

TEST(VisitsWaypoints, PlanWatchesTheVehiclesPose) {
  Stream run("    vehicle: ugv1\n    waypoints: [goal_a]\n");
  EXPECT_EQ(run.checker->planned().watch.poses, (std::set<std::string>{"ugv1"}));
  EXPECT_EQ(run.checker->planned().resolved["tolerance_m"].get<double>(), 0.5);
}

TEST(VisitsWaypoints, AnEmptyListIsRefusedByTheValidator) {
  auto r = load("    vehicle: ugv1\n    waypoints: []\n");
  EXPECT_FALSE(r.ok());
}

TEST(VisitsWaypoints, AnUnknownKeyIsRefusedByTheValidator) {
  auto r = load("    vehicle: ugv1\n    waypoints: [goal_a]\n    speed: 3\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.format_errors().find("speed"), std::string::npos) << r.format_errors();
}

TEST(VisitsWaypoints, AnUnknownVehicleIsRefusedByTheValidator) {
  auto r = load("    vehicle: ugv9\n    waypoints: [goal_a]\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.format_errors().find("unknown vehicle 'ugv9'"), std::string::npos)
      << r.format_errors();
}

TEST(VisitsWaypoints, AFrameTheWorldDoesNotHaveIsRefusedWhenPlanned) {
  auto r = load("    vehicle: ugv1\n    waypoints: [goal_a, nowhere]\n");
  ASSERT_TRUE(r.ok()) << r.format_errors();
  fa::PlanContext ctx{*r.scenario, {{"goal_a", {10, -1, 0}}}};
  try {
    (void)make_visits_waypoints_type()->plan(r.scenario->assertions[0], ctx);
    FAIL() << "planned with an unknown frame";
  } catch (const fa::PlanError& e) {
    EXPECT_EQ(e.path(), "assertions[0].waypoints[1]");
  }
}

}  // namespace
}  // namespace fieldproof_example
