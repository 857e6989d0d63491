// sequence on synthetic streams: action, signal and assertion steps in order; within_s and
// max_gap_s; the failures naming the step that did not happen; evidence and metrics; the
// refusals at planning.
#include <gtest/gtest.h>

#include "assertions/signal_fixture.hpp"

namespace fieldproof::assertions {
namespace {

using nlohmann::json;
using synthetic::contains;
using synthetic::plan_refusal;
using synthetic::Stream;

const char* kCmd = "/model/ugv1/cmd_vel";

json forward(double v) { return {{"linear", {{"x", v}}}}; }

// The document's example: the goal sent, a forward speed commanded, the goal reached.
constexpr const char* kOrder = R"(  - name: reached
    type: reach_pose
    vehicle: ugv1
    target: goal_a
  - name: order
    type: sequence
    vehicle: ugv1
    steps:
      - { action: drive, event: started }
      - { topic: cmd_vel, field: linear.x, condition: value > 0, name: commanded }
      - { assertion: reached }
)";

void drive_to_goal(Stream& run) {
  run.start("drive", 1.0);
  run.value(1.5, kCmd, forward(0.5));
  run.pose(6.0, "ugv1", 10.0, 0.0);
}

TEST(Sequence, PlanWatchesTheTopicsOfItsSignalSteps) {
  Stream run(kOrder);
  EXPECT_EQ(run.plan("order").watch.values.count(kCmd), 1u);
}

TEST(Sequence, PassesWhenTheLastStepHappensInOrder) {
  Stream run(kOrder);
  drive_to_goal(run);
  const auto r = run.result("order");
  EXPECT_EQ(r.status, Verdict::kPassed) << r.reason;
  EXPECT_DOUBLE_EQ(to_seconds(r.t), 6.0);
  ASSERT_EQ(r.evidence["steps"].size(), 3u);
  EXPECT_EQ(r.evidence["steps"][0]["event"], "started");
  EXPECT_EQ(r.evidence["steps"][1]["label"], "commanded");
  EXPECT_EQ(r.evidence["steps"][1]["value"], 0.5);
  EXPECT_EQ(r.evidence["steps"][2]["verdict"], "passed");
  EXPECT_EQ(r.evidence["steps_done"], 3);
  EXPECT_EQ(r.metrics["steps_done"]["value"], 3.0);
  EXPECT_DOUBLE_EQ(r.metrics["completed_at_s"]["value"].get<double>(), 6.0);
  EXPECT_DOUBLE_EQ(r.metrics["duration_s"]["value"].get<double>(), 5.0);
  EXPECT_FALSE(r.evidence["excerpt"].empty());
}

TEST(Sequence, ASignalStepCountsOnlyMessagesAfterThePreviousStep) {
  Stream run(kOrder);
  run.value(0.5, kCmd, forward(0.5));  // before the drive started
  run.start("drive", 1.0);
  run.value(1.5, kCmd, forward(0.0));
  EXPECT_EQ(run.result("order").status, Verdict::kPending);
  run.finish(30);
  const auto r = run.result("order");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_TRUE(contains(r.reason, "step 2 (commanded) did not happen by the end")) << r.reason;
  EXPECT_EQ(r.evidence["steps_done"], 1);
}

TEST(Sequence, AnAssertionVerdictGivenBeforeTheStepIsReachedCounts) {
  Stream run(R"(  - name: reached
    type: reach_pose
    vehicle: ugv1
    target: goal_a
  - name: order
    type: sequence
    steps:
      - { assertion: reached }
      - { action: back, event: started }
)");
  run.pose(6.0, "ugv1", 10.0, 0.0);
  run.start("back", 20.0);
  const auto r = run.result("order");
  EXPECT_EQ(r.status, Verdict::kPassed) << r.reason;
  EXPECT_DOUBLE_EQ(to_seconds(r.t), 20.0);
}

TEST(Sequence, AFailedAssertionStepFailsTheSequence) {
  Stream run(R"(  - name: reached
    type: reach_pose
    vehicle: ugv1
    target: goal_a
    within_s: 5s
  - name: order
    type: sequence
    steps:
      - { action: drive, event: started }
      - { assertion: reached }
)");
  run.start("drive", 1.0);
  run.tick(5.1);
  const auto r = run.result("order");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_TRUE(contains(r.reason, "assertion reached failed")) << r.reason;
}

TEST(Sequence, AnActionStepWhoseEntryEndsWithAnotherStatusFailsTheSequence) {
  Stream run(R"(  - name: order
    type: sequence
    steps:
      - { action: drive }
      - { action: back, event: started }
)");
  run.start("drive", 1.0);
  run.end("drive", 4.0, "aborted");
  const auto r = run.result("order");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_DOUBLE_EQ(to_seconds(r.t), 4.0);
  EXPECT_TRUE(contains(r.reason, "drive ended aborted")) << r.reason;
  EXPECT_EQ(r.evidence["excerpt"].back()["kind"], "step");
}

TEST(Sequence, AStartedStepFailsWhenItsEntryIsSkipped) {
  Stream run(R"(  - name: order
    type: sequence
    steps:
      - { action: back, event: started }
)");
  run.end("back", 3.0, "skipped");
  const auto r = run.result("order");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_TRUE(contains(r.reason, "back was skipped")) << r.reason;
}

TEST(Sequence, FinishedMeansTheEntryEndedOk) {
  Stream run(R"(  - name: order
    type: sequence
    steps:
      - { action: drive }
      - { action: back, event: started }
)");
  run.start("drive", 1.0);
  run.end("drive", 4.0, "succeeded");
  run.start("back", 20.0);
  EXPECT_EQ(run.result("order").status, Verdict::kPassed);
}

TEST(Sequence, FailsAtWithinSNamingTheStepThatDidNotHappen) {
  Stream run(std::string(kOrder) + "    within_s: 10s\n");
  run.start("drive", 1.0);
  run.tick(10.0);
  EXPECT_EQ(run.result("order").status, Verdict::kPending);
  run.tick(10.1);
  const auto r = run.result("order");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_TRUE(contains(r.reason, "step 2 (commanded) did not happen by within_s 10 s")) << r.reason;
}

TEST(Sequence, FailsWhenAStepDoesNotHappenWithinMaxGapSOfThePrevious) {
  Stream run(std::string(kOrder) + "    max_gap_s: 2s\n");
  run.start("drive", 1.0);
  run.tick(3.0);
  EXPECT_EQ(run.result("order").status, Verdict::kPending);
  run.value(3.5, kCmd, forward(0.5));  // 2.5 s after the start: too late
  const auto r = run.result("order");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_TRUE(contains(r.reason, "within max_gap_s 2 s of step 1")) << r.reason;
}

TEST(Sequence, WaitsForAnAssertionSettledAtTheEndOfTheTimeline) {
  Stream run(R"(  - name: order
    type: sequence
    steps:
      - { action: drive, event: started }
      - { assertion: safe }
  - name: safe
    type: no_collision
    vehicle: ugv1
)");
  run.start("drive", 1.0);
  run.finish(30.0);
  const auto r = run.result("order");
  EXPECT_EQ(r.status, Verdict::kPassed) << r.reason;
}

TEST(Sequence, TwoSequencesWaitingForEachOtherFailAtTheEndInsteadOfStayingPending) {
  Stream run(R"(  - name: first
    type: sequence
    steps:
      - { assertion: second }
  - name: second
    type: sequence
    steps:
      - { assertion: first }
)");
  run.finish(30.0);
  EXPECT_EQ(run.result("first").status, Verdict::kFailed);
  EXPECT_EQ(run.result("second").status, Verdict::kFailed);
}

TEST(Sequence, AMetricStepReadsTheVehiclesPose) {
  Stream run(R"(  - name: order
    type: sequence
    vehicle: ugv1
    steps:
      - { metric: distance_to, target: goal_a, condition: value < 1 }
      - { metric: x, condition: value < 1 }
)");
  run.pose(1, "ugv1", 5, 0);
  run.pose(2, "ugv1", 9.5, 0);
  run.pose(3, "ugv1", 0.5, 0);
  const auto r = run.result("order");
  EXPECT_EQ(r.status, Verdict::kPassed) << r.reason;
  EXPECT_EQ(r.evidence["steps"][0]["value"], 0.5);
}

TEST(Sequence, AMissingFieldFailsNamingTheStep) {
  Stream run(kOrder);
  run.start("drive", 1.0);
  run.value(1.5, kCmd, {{"angular", 1}});
  const auto r = run.result("order");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_TRUE(contains(r.reason, "step 2 (commanded): the field linear.x")) << r.reason;
}

TEST(Sequence, PlanningRefusesAStepWaitingForTheSequencesOwnVerdict) {
  const std::string why = plan_refusal(R"(  - name: order
    type: sequence
    steps:
      - { assertion: order }
)");
  EXPECT_TRUE(contains(why, "steps[0].assertion")) << why;
}

TEST(Sequence, AStepNamingAnUnknownAssertionIsRefused) {
  const std::string why = plan_refusal(R"(  - name: order
    type: sequence
    steps:
      - { assertion: nowhere }
)");
  EXPECT_TRUE(contains(why, "steps[0].assertion")) << why;
}

TEST(Sequence, AStepNamingAnUnknownActionIsRefused) {
  const std::string why = plan_refusal(R"(  - name: order
    type: sequence
    steps:
      - { action: nowhere }
)");
  EXPECT_TRUE(contains(why, "steps[0].action")) << why;
}

TEST(Sequence, ASignalStepWithABadConditionIsRefusedWithItsColumn) {
  const std::string why = plan_refusal(R"(  - name: order
    type: sequence
    vehicle: ugv1
    steps:
      - { topic: cmd_vel, field: linear.x, condition: value.real > 0 }
)");
  EXPECT_TRUE(contains(why, "steps[0].condition")) << why;
  EXPECT_TRUE(contains(why, "column")) << why;
}

}  // namespace
}  // namespace fieldproof::assertions
