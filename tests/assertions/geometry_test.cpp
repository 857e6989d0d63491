// geofence, min_distance, path_efficiency, reach_pose and no_collision on synthetic streams:
// passing, failing at the first bad sample, at a window's close and at the end, with evidence and
// metrics; the windows and the plan's refusals.
#include <gtest/gtest.h>

#include <limits>

#include "stream.hpp"

namespace fieldproof::assertions {
namespace {

using testing::Stream;

constexpr const char* kYard = R"(assertions:
  - name: yard
    type: geofence
    vehicle: ugv1
    region: { box: { x_min: -1.0, x_max: 11.0, y_min: -2.0, y_max: 2.0 } }
)";

TEST(Geofence, PassesAtTheEndOfTheTimelineWithTheMinimumClearance) {
  Stream s(kYard);
  s.pose(0.0, 0.0);
  s.pose(1.0, 5.0, 1.5);
  s.pose(2.0, 10.0);
  EXPECT_EQ(s.status("yard"), Verdict::kPending);
  s.finish(3.0);
  const auto r = s.result("yard");
  EXPECT_EQ(r.status, Verdict::kPassed) << r.reason;
  EXPECT_DOUBLE_EQ(s.metric("yard", "min_clearance_m"), 0.5);
  EXPECT_DOUBLE_EQ(s.metric("yard", "samples"), 3);
  EXPECT_DOUBLE_EQ(r.evidence["min_clearance"]["x"].get<double>(), 5.0);
  EXPECT_DOUBLE_EQ(r.evidence["min_clearance"]["t_s"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(r.evidence["region"]["box"]["x_max"].get<double>(), 11.0);
  EXPECT_EQ(r.evidence["mode"], "inside");
}

TEST(Geofence, FailsAtTheFirstPoseOutsideWithASignedClearance) {
  Stream s(kYard);
  s.pose(1.0, 10.0);
  s.pose(2.0, 12.0);
  const auto r = s.result("yard");
  ASSERT_EQ(r.status, Verdict::kFailed);
  EXPECT_DOUBLE_EQ(to_seconds(r.t), 2.0);
  EXPECT_EQ(r.sim.ns(), 2'000'000'000);
  EXPECT_DOUBLE_EQ(r.evidence["violation"]["clearance_m"].get<double>(), -1.0);
  EXPECT_DOUBLE_EQ(s.metric("yard", "min_clearance_m"), -1.0);
  EXPECT_NE(r.reason.find("outside the region at (12.00, 0.00)"), std::string::npos) << r.reason;
}

TEST(Geofence, APoseOnTheBoundaryCountsAsInside) {
  Stream s(std::string(kYard) + R"(  - name: keep_out
    type: geofence
    vehicle: ugv1
    mode: outside
    region: { box: { x_min: 11.0, x_max: 20.0, y_min: -2.0, y_max: 2.0 } }
)");
  s.pose(1.0, 11.0);
  EXPECT_EQ(s.status("yard"), Verdict::kPending);
  EXPECT_DOUBLE_EQ(s.metric("yard", "min_clearance_m"), 0.0);
  EXPECT_EQ(s.status("keep_out"), Verdict::kFailed);
}

TEST(Geofence, PolygonClearanceIsTheDistanceToTheNearestEdge) {
  Stream s(R"(assertions:
  - name: poly
    type: geofence
    vehicle: ugv1
    region: { polygon: [[0, 0], [10, 0], [10, 10], [0, 10]] }
)");
  s.pose(1.0, 3.0, 4.0);
  EXPECT_DOUBLE_EQ(s.metric("poly", "min_clearance_m"), 3.0);
  s.pose(2.0, 13.0, 14.0);
  ASSERT_EQ(s.status("poly"), Verdict::kFailed);
  EXPECT_DOUBLE_EQ(s.metric("poly", "min_clearance_m"), -5.0);
}

TEST(Geofence, OutsideModeFailsWhenTheVehicleEntersACircle) {
  Stream s(R"(assertions:
  - name: away
    type: geofence
    vehicle: ugv1
    mode: outside
    region: { circle: { x: 5.0, y: 0.0, radius_m: 1.0 } }
)");
  s.pose(1.0, 2.0);
  EXPECT_DOUBLE_EQ(s.metric("away", "min_clearance_m"), 2.0);
  s.pose(2.0, 4.5);
  const auto r = s.result("away");
  ASSERT_EQ(r.status, Verdict::kFailed);
  EXPECT_DOUBLE_EQ(r.evidence["violation"]["clearance_m"].get<double>(), -0.5);
}

TEST(Geofence, HeightBoundsAboveTheGroundExcludeEveryPose) {
  Stream s(R"(assertions:
  - name: air
    type: geofence
    vehicle: ugv1
    region: { circle: { x: 0.0, y: 0.0, radius_m: 10.0 }, z_min: 0.5, z_max: 3.0 }
)");
  s.pose(1.0, 0.0);
  ASSERT_EQ(s.status("air"), Verdict::kFailed);
  EXPECT_DOUBLE_EQ(s.metric("air", "min_clearance_m"), -0.5);
}

TEST(Geofence, FailsAtTheEndWhenNoPoseWasSeen) {
  Stream s(kYard);
  s.pose(1.0, 0.0, 0.0, "ugv2");
  s.finish(5.0);
  const auto r = s.result("yard");
  ASSERT_EQ(r.status, Verdict::kFailed);
  EXPECT_NE(r.reason.find("no pose of ugv1"), std::string::npos) << r.reason;
}

TEST(Geofence, JudgesOnlyItsWindowAndPassesWhenItCloses) {
  Stream s(R"(assertions:
  - name: late
    type: geofence
    vehicle: ugv1
    after_s: 2s
    within_s: 5s
    region: { box: { x_min: 0.0, x_max: 10.0, y_min: -1.0, y_max: 1.0 } }
)");
  s.pose(1.0, -5.0);  // before after_s: not judged
  s.pose(3.0, 1.0);
  s.tick(5.0);
  EXPECT_EQ(s.status("late"), Verdict::kPending);
  s.tick(5.1);
  const auto r = s.result("late");
  EXPECT_EQ(r.status, Verdict::kPassed) << r.reason;
  EXPECT_DOUBLE_EQ(to_seconds(r.t), 5.0);  // judged at the window's end itself
  EXPECT_DOUBLE_EQ(s.metric("late", "samples"), 1);
}

constexpr const char* kApart = R"(assertions:
  - name: apart
    type: min_distance
    vehicle: ugv1
    to: { vehicle: ugv2 }
    min_m: 2.0
)";

TEST(MinDistance, FailsAtTheFirstSampleCloserThanMin) {
  Stream s(kApart);
  s.pose(0.0, 0.0);
  EXPECT_EQ(s.ev->results()[0].metrics.size(), 0u);  // ugv2 not known yet
  s.pose(0.05, 5.0, 0.0, "ugv2");
  s.pose(1.0, 2.0);
  s.pose(1.05, 3.5, 0.0, "ugv2");
  const auto r = s.result("apart");
  ASSERT_EQ(r.status, Verdict::kFailed);
  EXPECT_DOUBLE_EQ(to_seconds(r.t), 1.05);
  EXPECT_DOUBLE_EQ(s.metric("apart", "closest_m"), 1.5);
  EXPECT_DOUBLE_EQ(s.metric("apart", "closest_at_s"), 1.05);
  EXPECT_DOUBLE_EQ(r.evidence["closest"]["other"]["x"].get<double>(), 3.5);
  EXPECT_DOUBLE_EQ(r.evidence["closest"]["vehicle"]["x"].get<double>(), 2.0);
}

TEST(MinDistance, PassesAtTheEndWithClosestAndFinal) {
  Stream s(kApart);
  s.pose(0.0, 0.0);
  s.pose(0.0, 5.0, 0.0, "ugv2");
  s.pose(1.0, 2.5);
  s.pose(2.0, 1.0);
  s.finish(3.0);
  const auto r = s.result("apart");
  EXPECT_EQ(r.status, Verdict::kPassed) << r.reason;
  EXPECT_DOUBLE_EQ(s.metric("apart", "closest_m"), 2.5);
  EXPECT_DOUBLE_EQ(s.metric("apart", "closest_at_s"), 1.0);
  EXPECT_DOUBLE_EQ(s.metric("apart", "final_m"), 4.0);
}

TEST(MinDistance, ToATargetOrAModelAndPlannedWatches) {
  Stream s(R"(assertions:
  - name: crate
    type: min_distance
    vehicle: ugv1
    to: { model: crate }
    min_m: 0.5
    within_s: 10s
  - name: goal
    type: min_distance
    vehicle: ugv1
    to: { target: goal_a }
    min_m: 1.0
)");
  EXPECT_EQ(s.planned[0].watch.poses, (std::set<std::string>{"crate", "ugv1"}));
  EXPECT_EQ(s.planned[1].watch.poses, (std::set<std::string>{"ugv1"}));
  s.pose(0.0, 8.5);
  EXPECT_DOUBLE_EQ(s.metric("goal", "final_m"), 1.5);
  s.pose(0.1, 8.0, 0.0, "crate");
  EXPECT_DOUBLE_EQ(s.metric("crate", "final_m"), 0.5);
  EXPECT_EQ(s.status("crate"), Verdict::kPending);  // exactly min_m is not closer
  s.pose(1.0, 9.5);
  EXPECT_EQ(s.status("goal"), Verdict::kFailed);
  s.tick(10.5);
  EXPECT_EQ(s.status("crate"), Verdict::kPassed);
}

TEST(MinDistance, FailsWhenNoDistanceWasMeasured) {
  Stream s(kApart);
  s.pose(1.0, 0.0);
  s.finish(2.0);
  const auto r = s.result("apart");
  ASSERT_EQ(r.status, Verdict::kFailed);
  EXPECT_NE(r.reason.find("no distance"), std::string::npos) << r.reason;
}

constexpr const char* kStraight = R"(assertions:
  - name: straight
    type: path_efficiency
    vehicle: ugv1
    action: drive
    target: goal_a
    min_ratio: 0.8
)";

TEST(PathEfficiency, AStraightDrivePassesWhenTheActionEnds) {
  Stream s(kStraight);
  s.pose(0.5, -3.0);  // before the action: not part of the path
  s.start("drive", 1.0);
  for (int i = 0; i <= 10; ++i) s.pose(1.0 + i, i * 1.0);
  s.end("drive", 11.0);
  const auto r = s.result("straight");
  ASSERT_EQ(r.status, Verdict::kPassed) << r.reason;
  EXPECT_DOUBLE_EQ(s.metric("straight", "path_m"), 10.0);
  EXPECT_DOUBLE_EQ(s.metric("straight", "straight_m"), 10.0);
  EXPECT_DOUBLE_EQ(s.metric("straight", "efficiency"), 1.0);
  EXPECT_DOUBLE_EQ(s.metric("straight", "max_speed_mps"), 1.0);
  EXPECT_DOUBLE_EQ(s.metric("straight", "mean_speed_mps"), 1.0);
  EXPECT_DOUBLE_EQ(r.evidence["efficiency"].get<double>(), 1.0);
  EXPECT_EQ(r.evidence["samples"], 11);
}

TEST(PathEfficiency, ADetourFailsBelowMinRatio) {
  Stream s(kStraight);
  s.start("drive", 1.0);
  s.pose(1.0, 0.0);
  s.pose(2.0, 0.0, 5.0);
  s.pose(3.0, 10.0, 5.0);
  s.pose(4.0, 10.0, 0.0);
  s.end("drive", 4.0, "aborted");  // judged whatever the status
  const auto r = s.result("straight");
  ASSERT_EQ(r.status, Verdict::kFailed);
  EXPECT_DOUBLE_EQ(s.metric("straight", "efficiency"), 0.5);
  EXPECT_NE(r.reason.find("below min_ratio 0.80"), std::string::npos) << r.reason;
}

TEST(PathEfficiency, StoppingShortOfTheTargetDoesNotBeatTheStraightLine) {
  Stream s(kStraight);
  s.start("drive", 1.0);
  s.pose(1.0, 0.0);
  s.pose(2.0, 9.6);
  s.end("drive", 2.0);
  ASSERT_EQ(s.status("straight"), Verdict::kPassed);
  EXPECT_DOUBLE_EQ(s.metric("straight", "straight_m"), 10.0);
  EXPECT_DOUBLE_EQ(s.metric("straight", "path_m"), 9.6);
  EXPECT_DOUBLE_EQ(s.metric("straight", "efficiency"), 1.0);
}

TEST(PathEfficiency, MaxPathFailsAsSoonAsItIsExceeded) {
  Stream s(R"(assertions:
  - name: short
    type: path_efficiency
    vehicle: ugv1
    max_path_m: 3.0
)");
  s.pose(0.0, 0.0);
  s.pose(1.0, 2.0);
  EXPECT_EQ(s.status("short"), Verdict::kPending);
  s.pose(2.0, 4.0);
  const auto r = s.result("short");
  ASSERT_EQ(r.status, Verdict::kFailed);
  EXPECT_DOUBLE_EQ(to_seconds(r.t), 2.0);
  EXPECT_DOUBLE_EQ(r.evidence["path_m"].get<double>(), 4.0);
}

TEST(PathEfficiency, FewerThanTwoPosesFail) {
  Stream s(kStraight);
  s.start("drive", 1.0);
  s.pose(1.5, 0.0);
  s.end("drive", 2.0);
  const auto r = s.result("straight");
  ASSERT_EQ(r.status, Verdict::kFailed);
  EXPECT_NE(r.reason.find("fewer than two poses"), std::string::npos) << r.reason;
}

TEST(PathEfficiency, AVehicleThatDidNotMoveWithoutTargetHasEfficiencyOne) {
  Stream s(R"(assertions:
  - name: still
    type: path_efficiency
    vehicle: ugv1
    within_s: 3s
)");
  s.pose(0.0, 1.0);
  s.pose(1.0, 1.0);
  s.pose(2.0, 1.0);
  s.tick(3.5);
  const auto r = s.result("still");
  ASSERT_EQ(r.status, Verdict::kPassed) << r.reason;
  EXPECT_DOUBLE_EQ(s.metric("still", "efficiency"), 1.0);
}

TEST(PathEfficiency, PlanRefusesAnActionWithAWindow) {
  const auto sc = testing::load(R"(assertions:
  - name: both
    type: path_efficiency
    vehicle: ugv1
    action: drive
    within_s: 3s
)");
  PlanContext ctx{sc, {}};
  EXPECT_THROW(AssertionTypes::builtin().find("path_efficiency")->plan(sc.assertions[0], ctx),
               PlanError);
}

constexpr const char* kReach = R"(assertions:
  - name: reached
    type: reach_pose
    vehicle: ugv1
    target: { x: 10.0, y: 0.0, yaw: 0.0 }
    tolerance_m: 0.5
    yaw_tolerance_rad: 0.1
    within_s: 20s
)";

TEST(ReachPose, TheHeadingMustBeWithinItsToleranceToo) {
  Stream s(kReach);
  s.pose(5.0, 10.0, 0.0, "ugv1", 0.5);
  EXPECT_EQ(s.status("reached"), Verdict::kPending);
  s.pose(6.0, 10.2, 0.0, "ugv1", 0.05);
  const auto r = s.result("reached");
  ASSERT_EQ(r.status, Verdict::kPassed) << r.reason;
  EXPECT_DOUBLE_EQ(r.evidence["reached"]["t_s"].get<double>(), 6.0);
  EXPECT_DOUBLE_EQ(r.evidence["reached"]["distance_m"].get<double>(), 0.2);
  EXPECT_DOUBLE_EQ(r.evidence["reached"]["heading_error_rad"].get<double>(), 0.05);
  EXPECT_DOUBLE_EQ(s.metric("reached", "reached_at_s"), 6.0);
  EXPECT_DOUBLE_EQ(s.metric("reached", "final_distance_m"), 0.2);
}

TEST(ReachPose, FailsAtTheEndWithClosestAndFinalEvidence) {
  Stream s(R"(assertions:
  - name: reached
    type: reach_pose
    vehicle: ugv1
    target: goal_a
)");
  s.pose(1.0, 8.0);
  s.pose(2.0, 7.0);
  s.finish(3.0);
  const auto r = s.result("reached");
  ASSERT_EQ(r.status, Verdict::kFailed);
  EXPECT_DOUBLE_EQ(r.evidence["closest"]["x"].get<double>(), 8.0);
  EXPECT_DOUBLE_EQ(r.evidence["final"]["x"].get<double>(), 7.0);
  EXPECT_EQ(r.evidence["samples"], 2);
  EXPECT_DOUBLE_EQ(s.metric("reached", "closest_m"), 2.0);
  EXPECT_DOUBLE_EQ(s.metric("reached", "final_distance_m"), 3.0);
  EXPECT_NE(r.reason.find("by the end of the timeline (closest 2.00 m)"), std::string::npos)
      << r.reason;
}

TEST(ReachPose, PlanRefusesAHeadingToleranceWithoutATargetYaw) {
  const auto sc = testing::load(R"(assertions:
  - name: reached
    type: reach_pose
    vehicle: ugv1
    target: { x: 10.0, y: 0.0 }
    yaw_tolerance_rad: 0.1
)");
  PlanContext ctx{sc, {}};
  try {
    AssertionTypes::builtin().find("reach_pose")->plan(sc.assertions[0], ctx);
    FAIL() << "planned";
  } catch (const PlanError& e) {
    EXPECT_EQ(e.path(), "assertions[0].yaw_tolerance_rad");
  }
}

TEST(NoCollision, EvidenceCountsIgnoredContactsAndMessages) {
  Stream s(R"(assertions:
  - name: safe
    type: no_collision
    vehicle: ugv1
    ignore: [cardboard_box]
)");
  EXPECT_EQ(s.planned[0].watch.contacts, (std::set<std::string>{"ugv1"}));
  s.contact(1.0, {"cardboard_box::link::collision"});
  s.contact(2.0, {"shelf_1::link::collision", "cardboard_box"});
  const auto r = s.result("safe");
  ASSERT_EQ(r.status, Verdict::kFailed);
  EXPECT_EQ(r.evidence["ignored_contacts"], 2);
  EXPECT_EQ(r.evidence["messages"], 2);
  EXPECT_EQ(r.evidence["contact"]["with"][0], "shelf_1::link::collision");
  EXPECT_DOUBLE_EQ(s.metric("safe", "contacts"), 1);
}

TEST(Geofence, FailsWhenItsWindowClosesWithoutAPose) {
  Stream s(R"(assertions:
  - name: early
    type: geofence
    vehicle: ugv1
    within_s: 2s
    region: { box: { x_min: 0.0, x_max: 10.0, y_min: -1.0, y_max: 1.0 } }
)");
  s.tick(2.5);
  const auto r = s.result("early");
  ASSERT_EQ(r.status, Verdict::kFailed);
  EXPECT_EQ(r.reason, "no pose of ugv1 was seen in the window [0 s, 2 s]");
  EXPECT_DOUBLE_EQ(to_seconds(r.t), 2.0);
}

TEST(MinDistance, FailsWhenItsWindowClosesWithoutADistance) {
  Stream s(std::string(kApart) + "    within_s: 4s\n");
  s.pose(1.0, 0.0);
  s.tick(4.5);
  const auto r = s.result("apart");
  ASSERT_EQ(r.status, Verdict::kFailed);
  EXPECT_DOUBLE_EQ(to_seconds(r.t), 4.0);
}

TEST(PathEfficiency, IsJudgedWhenItsWindowClosesAndIgnoresLaterPoses) {
  Stream s(R"(assertions:
  - name: zigzag
    type: path_efficiency
    vehicle: ugv1
    within_s: 3s
    min_ratio: 0.9
)");
  s.pose(0.0, 0.0);
  s.pose(1.0, 0.0, 3.0);
  s.pose(2.0, 0.0, 0.0);
  s.pose(3.5, 50.0);  // after the window: closes it first
  const auto r = s.result("zigzag");
  ASSERT_EQ(r.status, Verdict::kFailed);
  EXPECT_DOUBLE_EQ(s.metric("zigzag", "path_m"), 6.0);
  EXPECT_DOUBLE_EQ(s.metric("zigzag", "efficiency"), 0.0);
  EXPECT_DOUBLE_EQ(to_seconds(r.t), 3.0);  // at the window's end, whichever sample closed it
}

TEST(ReachPose, FailsWhenWithinPassesAndIgnoresPosesBeforeTheTimeline) {
  Stream s(kReach);
  s.pose(-1.0, 10.0);  // before the timeline: noted, not judged
  EXPECT_EQ(s.status("reached"), Verdict::kPending);
  s.pose(1.0, 6.0);
  s.tick(20.0);
  EXPECT_EQ(s.status("reached"), Verdict::kPending);
  s.tick(20.2);
  const auto r = s.result("reached");
  ASSERT_EQ(r.status, Verdict::kFailed);
  EXPECT_NE(r.reason.find("within 20 s (closest 4.00 m)"), std::string::npos) << r.reason;
  EXPECT_EQ(r.evidence["excerpt"].size(), 2u);
}

TEST(Excerpt, KeepsTheLastSixNotedSamplesWithTimelineAndSimulationTime) {
  Stream s(kYard);
  for (int i = 0; i < 9; ++i) s.pose(i, i * 1.0);
  s.pose(9.0, 20.0);
  const auto r = s.result("yard");
  ASSERT_EQ(r.status, Verdict::kFailed);
  const auto& ex = r.evidence["excerpt"];
  ASSERT_EQ(ex.size(), 6u);
  EXPECT_DOUBLE_EQ(ex[0]["t"].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(ex[5]["t"].get<double>(), 9.0);
  EXPECT_DOUBLE_EQ(ex[5]["sim"].get<double>(), 9.0);
  EXPECT_DOUBLE_EQ(ex[5]["x"].get<double>(), 20.0);
  EXPECT_DOUBLE_EQ(ex[5]["clearance_m"].get<double>(), -9.0);
}

TEST(Abort, AFailedAbortAssertionIsReportedOnceAndNamesTheReasons) {
  Stream s(R"(assertions:
  - name: yard
    type: geofence
    vehicle: ugv1
    on_fail: abort
    region: { box: { x_min: -1.0, x_max: 11.0, y_min: -2.0, y_max: 2.0 } }
  - name: apart
    type: min_distance
    vehicle: ugv1
    to: { vehicle: ugv2 }
    min_m: 0.1
)");
  s.pose(1.0, 5.0);
  EXPECT_EQ(s.ev->aborted_by(), nullptr);
  s.pose(2.0, 20.0);
  ASSERT_EQ(s.aborts.size(), 1u);
  ASSERT_NE(s.ev->aborted_by(), nullptr);
  EXPECT_EQ(s.ev->aborted_by()->name, "yard");
  EXPECT_EQ(s.ev->abort_reason().rfind("assertion yard failed: ", 0), 0u) << s.ev->abort_reason();
  EXPECT_NE(s.ev->abort_reason().find("(on_fail: abort, the timeline was cancelled)"),
            std::string::npos);
  s.ev->skip_pending(s.ev->abort_skip_reason(), testing::at(2.0));
  const auto r = s.result("apart");
  EXPECT_EQ(r.status, Verdict::kSkipped);
  EXPECT_EQ(r.reason, "the timeline was cancelled: assertion yard failed (on_fail: abort)");
  EXPECT_EQ(s.aborts.size(), 1u);
}

TEST(Abort, AContinueAssertionNeverAborts) {
  Stream s(kYard);
  s.pose(1.0, 50.0);
  EXPECT_EQ(s.status("yard"), Verdict::kFailed);
  EXPECT_EQ(s.ev->aborted_by(), nullptr);
  EXPECT_TRUE(s.aborts.empty());
  EXPECT_EQ(s.ev->abort_reason(), "");
}

TEST(Abort, AFailureSettledAtTheEndOfTheTimelineCancelsNothing) {
  Stream s(R"(assertions:
  - name: reached
    type: reach_pose
    vehicle: ugv1
    on_fail: abort
    target: goal_a
)");
  s.finish(5.0);
  EXPECT_EQ(s.status("reached"), Verdict::kFailed);
  EXPECT_EQ(s.ev->aborted_by(), nullptr);
  EXPECT_TRUE(s.aborts.empty());
}

TEST(WindowTest, AfterAndWithinBoundTheWindowInclusively) {
  const Window w(seconds(2), seconds(5));
  EXPECT_TRUE(w.before(testing::at(1.9)));
  EXPECT_TRUE(w.contains(testing::at(2.0)));
  EXPECT_TRUE(w.contains(testing::at(5.0)));
  EXPECT_FALSE(w.closed(testing::at(5.0)));
  EXPECT_TRUE(w.closed(testing::at(5.01)));
  const Window open;
  EXPECT_FALSE(open.has_end());
  EXPECT_TRUE(open.contains(testing::at(1e9)));
  EXPECT_TRUE(open.before(testing::at(-0.1)));
  EXPECT_EQ(w.describe(), "the window [2 s, 5 s]");
}

// The edges in integer nanoseconds: a time exactly at an edge is inside, one nanosecond beyond
// it is outside, whatever seconds-as-doubles would round the two to.
TEST(WindowTest, TheEdgesAreExactToTheNanosecond) {
  const Window w(milliseconds(2300), milliseconds(5100));
  const SimTime start = SimTime::zero() + milliseconds(2300);
  const SimTime end = SimTime::zero() + milliseconds(5100);
  EXPECT_EQ(w.start(), start);
  EXPECT_EQ(w.end(), end);
  EXPECT_TRUE(w.has_end());

  EXPECT_TRUE(w.before(start - nanoseconds(1)));
  EXPECT_FALSE(w.contains(start - nanoseconds(1)));
  EXPECT_FALSE(w.before(start));
  EXPECT_TRUE(w.contains(start));
  EXPECT_TRUE(w.contains(start + nanoseconds(1)));

  EXPECT_TRUE(w.contains(end - nanoseconds(1)));
  EXPECT_TRUE(w.contains(end));
  EXPECT_FALSE(w.closed(end));
  EXPECT_FALSE(w.contains(end + nanoseconds(1)));
  EXPECT_TRUE(w.closed(end + nanoseconds(1)));

  // Without within_s the window never closes, even at the largest finite time.
  const Window open(milliseconds(100), std::nullopt);
  EXPECT_FALSE(open.has_end());
  EXPECT_EQ(open.end(), SimTime::infinite());
  EXPECT_TRUE(open.contains(SimTime::infinite() - nanoseconds(1)));
  EXPECT_FALSE(open.closed(SimTime::infinite() - nanoseconds(1)));
  EXPECT_TRUE(open.before(SimTime::zero()));
  // Printing still says seconds.
  EXPECT_DOUBLE_EQ(w.after_s(), 2.3);
  EXPECT_DOUBLE_EQ(w.end_s(), 5.1);
  EXPECT_EQ(open.end_s(), std::numeric_limits<double>::infinity());
  EXPECT_EQ(w.describe(), "the window [2.3 s, 5.1 s]");
}

// A checker judging a sample stamped exactly at within_s, and one a nanosecond after it: the
// first counts (inside), the second closes the window at within_s itself.
TEST(WindowTest, ASampleAtWithinSCountsAndOneNanosecondLaterDoesNot) {
  const std::string spec = R"(assertions:
  - name: reached
    type: reach_pose
    vehicle: ugv1
    target: goal_a
    tolerance_m: 0.5
    within_s: 5
)";
  {
    Stream s(spec);
    Sample p;
    p.kind = Sample::Kind::kPose;
    p.vehicle = "ugv1";
    p.pose = {10.0, 0.0, 0.0};
    p.sim = SimTime::zero() + seconds(5);
    s.ev->on_sample(p, p.sim);
    EXPECT_EQ(s.status("reached"), Verdict::kPassed);
  }
  {
    Stream s(spec);
    Sample p;
    p.kind = Sample::Kind::kPose;
    p.vehicle = "ugv1";
    p.pose = {10.0, 0.0, 0.0};
    p.sim = SimTime::zero() + seconds(5) + nanoseconds(1);
    s.ev->on_sample(p, p.sim);
    const AssertionResult r = s.result("reached");
    EXPECT_EQ(r.status, Verdict::kFailed);
    EXPECT_DOUBLE_EQ(to_seconds(r.t), 5.0);  // judged at the window's end itself
  }
}

}  // namespace
}  // namespace fieldproof::assertions
