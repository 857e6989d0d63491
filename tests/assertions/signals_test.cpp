// topic_rate, topic_value, message_latency, resource_usage, lifecycle_state, always, never and
// eventually on synthetic streams: passing, failing at a deadline, at the first bad sample and at
// the end; their evidence and metrics; what they ask the observer for; the refusals at planning.
#include <gtest/gtest.h>

#include "assertions/signal_fixture.hpp"

namespace fieldproof::assertions {
namespace {

using nlohmann::json;
using synthetic::contains;
using synthetic::plan_refusal;
using synthetic::Stream;

const char* kOdom = "/model/ugv1/odom";
const char* kScan = "/model/ugv1/scan";

json speed(double v) { return {{"twist", {{"linear", {{"x", v}}}}}}; }

// ---- topic_rate ----

constexpr const char* kRate = R"(  - name: scan_rate
    type: topic_rate
    vehicle: ugv1
    topic: scan
    min_hz: 5
    max_hz: 15
)";

TEST(TopicRate, PlanWatchesTheTopicsRateOverItsWindow) {
  Stream run(kRate);
  const Watch& w = run.plan("scan_rate").watch;
  ASSERT_EQ(w.rates.count(kScan), 1u);
  EXPECT_EQ(w.rates.at(kScan), seconds(5));
}

TEST(TopicRate, PassesAtTheEndWhenEveryWindowIsWithinBounds) {
  Stream run(kRate);
  run.rate(5, kScan, 10, 5, 50);
  run.rate(6, kScan, 12, 5, 60);
  run.rate(7, kScan, 8, 5, 40);
  EXPECT_EQ(run.result("scan_rate").status, Verdict::kPending);
  run.finish(10);
  const auto r = run.result("scan_rate");
  EXPECT_EQ(r.status, Verdict::kPassed) << r.reason;
  EXPECT_EQ(r.evidence["windows"], 3);
  EXPECT_DOUBLE_EQ(r.metrics["mean_hz"]["value"].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(r.metrics["lowest_hz"]["value"].get<double>(), 8.0);
  EXPECT_DOUBLE_EQ(r.metrics["highest_hz"]["value"].get<double>(), 12.0);
  EXPECT_EQ(r.evidence["excerpt"].size(), 3u);
}

TEST(TopicRate, FailsAtTheFirstWindowBelowMinHz) {
  Stream run(kRate);
  run.rate(5, kScan, 10, 5, 50);
  run.rate(6, kScan, 3, 5, 15);
  const auto r = run.result("scan_rate");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_DOUBLE_EQ(to_seconds(r.t), 6.0);
  EXPECT_TRUE(contains(r.reason, "below min_hz 5")) << r.reason;
  EXPECT_EQ(r.evidence["failing_window"]["hz"], 3.0);
  EXPECT_EQ(r.evidence["lowest_hz"], 3.0);
}

TEST(TopicRate, FailsAtTheFirstWindowAboveMaxHz) {
  Stream run(kRate);
  run.rate(5, kScan, 20, 5, 100);
  const auto r = run.result("scan_rate");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_TRUE(contains(r.reason, "above max_hz 15")) << r.reason;
}

TEST(TopicRate, WindowsBeforeAfterSDoNotCount) {
  Stream run(std::string(kRate) + "    after_s: 3s\n");
  run.rate(2, kScan, 1, 5, 5);
  run.rate(3, kScan, 10, 5, 50);
  run.finish(10);
  const auto r = run.result("scan_rate");
  EXPECT_EQ(r.status, Verdict::kPassed) << r.reason;
  EXPECT_EQ(r.evidence["windows"], 1);
}

TEST(TopicRate, FailsAtTheEndWhenNoWindowWasMeasured) {
  Stream run(kRate);
  run.rate(5, "/model/ugv2/scan", 10, 5, 50);
  run.finish(10);
  const auto r = run.result("scan_rate");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_TRUE(contains(r.reason, "no rate window of /model/ugv1/scan")) << r.reason;
}

TEST(TopicRate, CountsTheMessagesOfOverlappingWindowsOnce) {
  Stream run(kRate);
  for (int t = 5; t <= 9; ++t) run.rate(t, kScan, 10, 5, 50);
  run.finish(10);
  // 50 in the first window, then 10 new ones a second.
  EXPECT_DOUBLE_EQ(run.result("scan_rate").metrics["messages"]["value"].get<double>(), 90.0);
}

// ---- topic_value ----

constexpr const char* kStill = R"(  - name: still
    type: topic_value
    vehicle: ugv1
    topic: odom
    field: twist.linear.x
    condition: abs(value) < 0.05
)";

TEST(TopicValue, PlanWatchesTheTopicsMessages) {
  Stream run(kStill);
  EXPECT_EQ(run.plan("still").watch.values.count(kOdom), 1u);
}

TEST(TopicValue, AlwaysFailsAtTheFirstMessageThatViolatesTheCondition) {
  Stream run(kStill);
  run.value(1, kOdom, speed(0.0));
  run.value(2, kOdom, speed(0.5));
  const auto r = run.result("still");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_DOUBLE_EQ(to_seconds(r.t), 2.0);
  EXPECT_TRUE(contains(r.reason, "= 0.5")) << r.reason;
  EXPECT_EQ(r.evidence["violation"]["value"], 0.5);
  ASSERT_EQ(r.evidence["excerpt"].size(), 2u);
  EXPECT_EQ(r.evidence["excerpt"][1]["value"], 0.5);
  EXPECT_EQ(r.evidence["excerpt"][1]["t"], 2.0);
}

TEST(TopicValue, AlwaysPassesWhenItsWindowClosesAfterMessagesThatAllSatisfy) {
  Stream run(std::string(kStill) + "    after_s: 1s\n    within_s: 4s\n");
  run.value(0.5, kOdom, speed(1.0));  // before after_s
  run.value(2, kOdom, speed(0.01));
  run.value(3, kOdom, speed(-0.02));
  run.tick(4.0);
  EXPECT_EQ(run.result("still").status, Verdict::kPending);
  run.tick(4.1);
  const auto r = run.result("still");
  EXPECT_EQ(r.status, Verdict::kPassed) << r.reason;
  EXPECT_EQ(r.metrics["samples"]["value"], 2.0);
  EXPECT_DOUBLE_EQ(r.metrics["lowest"]["value"].get<double>(), -0.02);
  EXPECT_DOUBLE_EQ(r.metrics["highest"]["value"].get<double>(), 0.01);
  EXPECT_DOUBLE_EQ(r.metrics["last"]["value"].get<double>(), -0.02);
}

TEST(TopicValue, MessagesAfterWithinSDoNotCount) {
  Stream run(std::string(kStill) + "    within_s: 4s\n");
  run.value(2, kOdom, speed(0.0));
  run.value(5, kOdom, speed(3.0));
  EXPECT_EQ(run.result("still").status, Verdict::kPassed);
}

TEST(TopicValue, AlwaysFailsAtTheEndWhenNoMessageWasSeen) {
  Stream run(kStill);
  run.finish(30);
  const auto r = run.result("still");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_TRUE(contains(r.reason, "no message of /model/ugv1/odom")) << r.reason;
}

constexpr const char* kMoves = R"(  - name: moves
    type: topic_value
    vehicle: ugv1
    topic: odom
    field: twist.linear.x
    condition: value > 0.2
    mode: eventually
    within_s: 5s
)";

TEST(TopicValue, EventuallyPassesAtTheFirstMessageThatSatisfies) {
  Stream run(kMoves);
  run.value(1, kOdom, speed(0.1));
  run.value(2, kOdom, speed(0.3));
  const auto r = run.result("moves");
  EXPECT_EQ(r.status, Verdict::kPassed);
  EXPECT_DOUBLE_EQ(to_seconds(r.t), 2.0);
  EXPECT_EQ(r.evidence["satisfied"]["value"], 0.3);
}

TEST(TopicValue, EventuallyFailsAtItsDeadline) {
  Stream run(kMoves);
  run.value(1, kOdom, speed(0.1));
  run.tick(5.1);
  const auto r = run.result("moves");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_TRUE(contains(r.reason, "by 5 s")) << r.reason;
}

TEST(TopicValue, AFieldThatDoesNotExistFailsNamingTheMissingPart) {
  Stream run(kStill);
  run.value(1, kOdom, {{"twist", {{"angular", {{"z", 0}}}}}});
  const auto r = run.result("still");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_TRUE(contains(r.reason, "no field 'linear' in twist")) << r.reason;
}

TEST(TopicValue, AConditionThatCannotBeEvaluatedFailsWithTheError) {
  Stream run(kStill);
  run.value(1, kOdom, {{"twist", {{"linear", {{"x", "fast"}}}}}});
  const auto r = run.result("still");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_TRUE(contains(r.reason, "cannot be evaluated for value = 'fast'")) << r.reason;
}

TEST(TopicValue, ReadsIndexedFields) {
  Stream run(R"(  - name: front
    type: topic_value
    vehicle: ugv1
    topic: scan
    field: ranges[1]
    condition: value > 1
)");
  run.value(1, kScan, {{"ranges", {5.0, 0.5}}});
  EXPECT_EQ(run.result("front").status, Verdict::kFailed);
}

TEST(TopicValue, TheExcerptSummarisesAListValue) {
  Stream run(R"(  - name: full_scan
    type: topic_value
    vehicle: ugv1
    topic: scan
    field: ranges
    condition: len(value) == 3
)");
  run.value(1, kScan, {{"ranges", {1.0, 2.0, 3.0}}});
  run.value(2, kScan, {{"ranges", {1.0, 2.0}}});
  const auto r = run.result("full_scan");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_EQ(r.evidence["excerpt"][1]["value"], "[2 items]");
  EXPECT_EQ(r.evidence["violation"]["value"].size(), 2u);
}

TEST(Eventually, FailsAtTheEndOfTheTimelineWithoutADeadline) {
  Stream run(R"(  - name: arrives
    type: eventually
    vehicle: ugv1
    signals:
      d: { metric: distance_to, target: goal_a }
    condition: d < 0.5
)");
  run.pose(1, "ugv1", 0, 0);
  run.finish(30);
  const auto r = run.result("arrives");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_TRUE(contains(r.reason, "by the end of the timeline")) << r.reason;
  EXPECT_EQ(r.evidence["last_values"]["d"], 10.0);
}

// ---- message_latency ----

constexpr const char* kFresh = R"(  - name: fresh
    type: message_latency
    vehicle: ugv1
    topic: odom
    max_ms: 250
)";

LatencyWindow window(double p95, double max, double mean, uint64_t count = 20) {
  return {count, mean, max, 1.0, p95};
}

TEST(MessageLatency, PlanWatchesTheTopicsLatencyOverItsWindow) {
  Stream run(kFresh);
  ASSERT_EQ(run.plan("fresh").watch.latencies.count(kOdom), 1u);
  EXPECT_EQ(run.plan("fresh").watch.latencies.at(kOdom), seconds(2));
}

TEST(MessageLatency, FailsAtTheFirstWindowWhoseP95IsOverMaxMs) {
  Stream run(kFresh);
  run.latency(2, kOdom, window(100, 300, 50));
  EXPECT_EQ(run.result("fresh").status, Verdict::kPending);
  run.latency(3, kOdom, window(260, 300, 120));
  const auto r = run.result("fresh");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_DOUBLE_EQ(to_seconds(r.t), 3.0);
  EXPECT_TRUE(contains(r.reason, "p95 latency 260.0 ms")) << r.reason;
  EXPECT_EQ(r.evidence["failing_window"]["p95_ms"], 260.0);
  EXPECT_EQ(r.evidence["windows"], 2);
}

TEST(MessageLatency, JudgesTheStatisticItIsGiven) {
  Stream run(std::string(kFresh) + "    statistic: max\n");
  run.latency(2, kOdom, window(100, 300, 50));
  const auto r = run.result("fresh");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_TRUE(contains(r.reason, "max latency 300.0 ms")) << r.reason;
}

TEST(MessageLatency, PassesWhenItsWindowClosesWithMetrics) {
  Stream run(std::string(kFresh) + "    within_s: 5s\n");
  run.latency(2, kOdom, window(100, 200, 50, 10));
  run.latency(3, kOdom, window(120, 240, 80, 30));
  run.tick(5.1);
  const auto r = run.result("fresh");
  EXPECT_EQ(r.status, Verdict::kPassed) << r.reason;
  EXPECT_DOUBLE_EQ(r.metrics["p95_ms"]["value"].get<double>(), 120.0);
  EXPECT_DOUBLE_EQ(r.metrics["max_ms"]["value"].get<double>(), 240.0);
  EXPECT_DOUBLE_EQ(r.metrics["mean_ms"]["value"].get<double>(), 72.5);   // weighted by count
  EXPECT_DOUBLE_EQ(r.metrics["messages"]["value"].get<double>(), 25.0);  // 10 + 30 / 2
}

TEST(MessageLatency, FailsAtTheEndWhenNoWindowWasMeasured) {
  Stream run(kFresh);
  run.latency(2, kOdom, window(0, 0, 0, 0));  // an empty window judges nothing
  run.finish(10);
  const auto r = run.result("fresh");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_TRUE(contains(r.reason, "no latency window")) << r.reason;
}

TEST(MessageLatency, FailsWhenMessagesCarryNoHeaderStamp) {
  Stream run(kFresh);
  Sample s;
  s.kind = Sample::Kind::kLatency;
  s.topic = kOdom;
  s.latency.unstamped = 3;
  run.ev->on_sample(s, synthetic::sim_of(2.0));
  const auto r = run.result("fresh");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_TRUE(contains(r.reason, "3 messages of /model/ugv1/odom carry no header stamp"))
      << r.reason;
}

// ---- resource_usage ----

constexpr const char* kFootprint = R"(  - name: footprint
    type: resource_usage
    vehicle: ugv1
    max_cpu_pct: 50
    max_memory_mb: 200
    window_s: 3s
)";

TEST(ResourceUsage, PlanWatchesTheVehiclesStack) {
  Stream run(kFootprint);
  EXPECT_EQ(run.plan("footprint").watch.resources.count("ugv1"), 1u);
}

TEST(ResourceUsage, FailsAtTheFirstSampleOverTheMemoryLimit) {
  Stream run(kFootprint);
  run.resources(1, "ugv1", 10, 150);
  run.resources(2, "ugv2", 10, 500);  // another vehicle's stack
  EXPECT_EQ(run.result("footprint").status, Verdict::kPending);
  run.resources(3, "ugv1", 10, 210);
  const auto r = run.result("footprint");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_DOUBLE_EQ(to_seconds(r.t), 3.0);
  EXPECT_EQ(r.evidence["violation"]["memory_mb"], 210.0);
  EXPECT_EQ(r.evidence["peak_memory_mb"], 210.0);
}

TEST(ResourceUsage, ACpuSpikeShorterThanTheWindowDoesNotFail) {
  Stream run(kFootprint);
  for (int t = 1; t <= 8; ++t) run.resources(t, "ugv1", t == 5 ? 120 : 10, 100);
  run.finish(10);
  const auto r = run.result("footprint");
  EXPECT_EQ(r.status, Verdict::kPassed) << r.reason;
  EXPECT_DOUBLE_EQ(r.metrics["peak_cpu_pct"]["value"].get<double>(), 120.0);
  EXPECT_DOUBLE_EQ(r.metrics["mean_cpu_pct"]["value"].get<double>(), 23.75);
  EXPECT_DOUBLE_EQ(r.metrics["samples"]["value"].get<double>(), 8.0);
}

TEST(ResourceUsage, FailsAtTheFirstCoveredWindowWhoseMeanCpuIsOver) {
  Stream run(kFootprint);
  run.resources(1, "ugv1", 90, 100);
  run.resources(2, "ugv1", 90, 100);
  EXPECT_EQ(run.result("footprint").status, Verdict::kPending);  // 2 s of 3 covered
  run.resources(3, "ugv1", 90, 100);
  const auto r = run.result("footprint");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_DOUBLE_EQ(to_seconds(r.t), 3.0);
  EXPECT_EQ(r.evidence["violation"]["window_cpu_pct"], 90.0);
  EXPECT_TRUE(contains(r.reason, "over max_cpu_pct 50")) << r.reason;
}

TEST(ResourceUsage, ARunShorterThanTheCpuWindowDoesNotJudgeTheCpu) {
  Stream run(kFootprint);
  run.resources(1, "ugv1", 90, 100);
  run.resources(2, "ugv1", 90, 100);
  run.finish(2.5);
  const auto r = run.result("footprint");
  EXPECT_EQ(r.status, Verdict::kPassed) << r.reason;
  EXPECT_TRUE(contains(r.reason, "CPU not judged")) << r.reason;
  EXPECT_EQ(r.evidence["cpu_windows"], 0);
}

TEST(ResourceUsage, FailsAtTheEndWhenTheStackWasNotSampled) {
  Stream run(kFootprint);
  run.finish(10);
  const auto r = run.result("footprint");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_TRUE(contains(r.reason, "not sampled")) << r.reason;
}


// ---- lifecycle_state ----

constexpr const char* kActive = R"(  - name: nav_active
    type: lifecycle_state
    vehicle: ugv1
    node: bt_navigator
    state: active
    within_s: 5s
)";

TEST(LifecycleState, EventuallyPassesAtTheFirstSampleInTheState) {
  Stream run(kActive);
  run.lifecycle(1, "ugv1", "bt_navigator", "inactive");
  run.lifecycle(2, "ugv1", "controller", "active");  // another node
  run.lifecycle(3, "ugv1", "bt_navigator", "active");
  const auto r = run.result("nav_active");
  EXPECT_EQ(r.status, Verdict::kPassed);
  EXPECT_DOUBLE_EQ(to_seconds(r.t), 3.0);
  EXPECT_DOUBLE_EQ(r.metrics["reached_at_s"]["value"].get<double>(), 3.0);
  EXPECT_EQ(r.evidence["states"]["inactive"], 1);
}

TEST(LifecycleState, EventuallyFailsAtItsDeadlineNamingTheLastState) {
  Stream run(kActive);
  run.lifecycle(1, "ugv1", "bt_navigator", "inactive");
  run.tick(5.1);
  const auto r = run.result("nav_active");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_TRUE(contains(r.reason, "(last inactive)")) << r.reason;
}

TEST(LifecycleState, AlwaysFailsAtTheFirstSampleInAnotherStateIncludingUnavailable) {
  Stream run(std::string(kActive) + "    mode: always\n");
  run.lifecycle(1, "ugv1", "bt_navigator", "active");
  run.lifecycle(2, "ugv1", "bt_navigator", "unavailable");
  const auto r = run.result("nav_active");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_EQ(r.evidence["violation"]["state"], "unavailable");
}

TEST(LifecycleState, AVehicleWithoutAnyNodeStateCountsAsUnavailable) {
  Stream run(std::string(kActive) + "    mode: always\n");
  run.lifecycle(1, "ugv1", "", "unavailable");
  const auto r = run.result("nav_active");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_TRUE(contains(r.reason, "was unavailable")) << r.reason;
}

TEST(LifecycleState, AlwaysPassesWhenItsWindowCloses) {
  Stream run(std::string(kActive) + "    mode: always\n");
  run.lifecycle(1, "ugv1", "/ugv1/bt_navigator", "active");
  run.tick(5.1);
  const auto r = run.result("nav_active");
  EXPECT_EQ(r.status, Verdict::kPassed) << r.reason;
  EXPECT_EQ(r.metrics["samples"]["value"], 1.0);
}

TEST(LifecycleState, FailsWhenNoStateWasObserved) {
  Stream run(std::string(kActive) + "    mode: always\n");
  run.finish(3);
  const auto r = run.result("nav_active");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_TRUE(contains(r.reason, "no state of bt_navigator of ugv1")) << r.reason;
}

TEST(LifecycleState, PlanningRefusesANodeOfAnotherNamespace) {
  const std::string why = plan_refusal(R"(  - name: nav_active
    type: lifecycle_state
    vehicle: ugv1
    node: /ugv2/bt_navigator
    state: active
)");
  EXPECT_TRUE(contains(why, "assertions[0].node")) << why;
}

// ---- always, never, eventually ----

constexpr const char* kSafe = R"(  - name: safe
    type: always
    vehicle: ugv1
    signals:
      speed: { topic: odom, field: twist.linear.x }
      d: { metric: distance_to, target: { x: 10, y: 0 } }
    condition: abs(speed) < 1.0 or d < 2
)";

TEST(Always, PlanWatchesTopicsAndPoses) {
  Stream run(kSafe);
  const Watch& w = run.plan("safe").watch;
  EXPECT_EQ(w.values.count(kOdom), 1u);
  EXPECT_EQ(w.poses.count("ugv1"), 1u);
}

TEST(Always, IsEvaluatedOnlyOnceEverySignalHasAValue) {
  Stream run(kSafe);
  run.value(1, kOdom, speed(5.0));  // d has no value yet
  EXPECT_EQ(run.result("safe").status, Verdict::kPending);
  run.pose(1.1, "ugv1", 9.0, 0.0);  // d = 1: holds
  EXPECT_EQ(run.result("safe").status, Verdict::kPending);
  run.pose(1.2, "ugv1", 5.0, 0.0);  // d = 5, speed 5: does not hold
  const auto r = run.result("safe");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_DOUBLE_EQ(to_seconds(r.t), 1.2);
  EXPECT_EQ(r.evidence["violation"]["values"]["speed"], 5.0);
  EXPECT_EQ(r.evidence["violation"]["values"]["d"], 5.0);
  EXPECT_EQ(r.evidence["evaluations"], 2);
  EXPECT_TRUE(contains(r.reason, "speed = 5, d = 5")) << r.reason;
}

TEST(Always, PassesWhenItsWindowCloses) {
  Stream run(std::string(kSafe) + "    within_s: 3s\n");
  run.value(1, kOdom, speed(0.5));
  run.pose(1, "ugv1", 0, 0);
  run.value(2, kOdom, speed(0.7));
  run.tick(3.1);
  const auto r = run.result("safe");
  EXPECT_EQ(r.status, Verdict::kPassed) << r.reason;
  EXPECT_EQ(r.metrics["evaluations"]["value"], 2.0);
  EXPECT_DOUBLE_EQ(r.metrics["satisfied_at_s"]["value"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(r.metrics["longest_hold_s"]["value"].get<double>(), 1.0);
}

TEST(Always, FailsWhenTheConditionWasNeverEvaluatedNamingTheSignalWithoutAValue) {
  Stream run(kSafe);
  run.value(1, kOdom, speed(0.5));
  run.finish(10);
  const auto r = run.result("safe");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_TRUE(contains(r.reason, "never evaluated")) << r.reason;
  EXPECT_TRUE(contains(r.reason, "no value for d")) << r.reason;
}

TEST(Always, AMissingFieldFailsNamingTheSignal) {
  Stream run(kSafe);
  run.value(1, kOdom, {{"pose", 1}});
  const auto r = run.result("safe");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_TRUE(contains(r.reason, "signal speed")) << r.reason;
  EXPECT_TRUE(contains(r.reason, "no field 'twist'")) << r.reason;
}

TEST(Always, AConditionThatCannotBeEvaluatedFails) {
  Stream run(kSafe);
  run.pose(1, "ugv1", 0, 0);
  run.value(1, kOdom, {{"twist", {{"linear", {{"x", nullptr}}}}}});
  const auto r = run.result("safe");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_TRUE(contains(r.reason, "cannot be evaluated")) << r.reason;
}

constexpr const char* kNeverFast = R"(  - name: never_fast
    type: never
    signals:
      rtf: { metric: rtf }
    condition: rtf > 2
    after_s: 1s
    within_s: 4s
)";

TEST(Never, FailsAtTheFirstEvaluationThatHolds) {
  Stream run(kNeverFast);
  run.clock(0.5, 5.0);  // before after_s
  run.clock(1, 1.0);
  run.clock(2, 2.5);
  const auto r = run.result("never_fast");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_DOUBLE_EQ(to_seconds(r.t), 2.0);
  EXPECT_EQ(r.evidence["violation"]["values"]["rtf"], 2.5);
}

TEST(Never, PassesWhenItsWindowCloses) {
  Stream run(kNeverFast);
  run.clock(1, 1.0);
  run.clock(2, 1.1);
  run.tick(4.1);
  const auto r = run.result("never_fast");
  EXPECT_EQ(r.status, Verdict::kPassed) << r.reason;
  EXPECT_EQ(r.evidence["evaluations"], 2);
}

constexpr const char* kSettles = R"(  - name: settles
    type: eventually
    vehicle: ugv1
    signals:
      lost: { topic: link_state, field: data }
      speed: { topic: odom, field: twist.linear.x }
    condition: not lost and abs(speed) < 0.05
    within_s: 20s
)";

TEST(Eventually, PassesAtTheFirstEvaluationThatHolds) {
  Stream run(kSettles);
  run.value(1, "/model/ugv1/link_state", {{"data", false}});
  run.value(2, kOdom, speed(0.5));
  run.value(3, kOdom, speed(0.01));
  const auto r = run.result("settles");
  EXPECT_EQ(r.status, Verdict::kPassed);
  EXPECT_DOUBLE_EQ(to_seconds(r.t), 3.0);
  EXPECT_EQ(r.evidence["satisfied"]["values"]["lost"], false);
}

TEST(Eventually, FailsAtItsDeadline) {
  Stream run(kSettles);
  run.value(1, "/model/ugv1/link_state", {{"data", true}});
  run.value(2, kOdom, speed(0.0));
  run.tick(20.0);
  EXPECT_EQ(run.result("settles").status, Verdict::kPending);
  run.tick(20.1);
  const auto r = run.result("settles");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_TRUE(contains(r.reason, "by 20 s")) << r.reason;
}

TEST(Eventually, WithForSPassesOnTheClockOnceTheConditionHeldThatLong) {
  Stream run(std::string(kSettles) + "    for_s: 5s\n");
  run.value(1, "/model/ugv1/link_state", {{"data", false}});
  run.value(2, kOdom, speed(0.0));  // holds from 2 s
  run.tick(6.9);
  EXPECT_EQ(run.result("settles").status, Verdict::kPending);
  run.tick(7.0);
  const auto r = run.result("settles");
  EXPECT_EQ(r.status, Verdict::kPassed) << r.reason;
  EXPECT_DOUBLE_EQ(to_seconds(r.t), 7.0);
  EXPECT_EQ(r.evidence["held_since_t_s"], 2.0);
  EXPECT_DOUBLE_EQ(r.metrics["longest_hold_s"]["value"].get<double>(), 5.0);
}

TEST(Eventually, WithForSABreakRestartsTheHold) {
  Stream run(std::string(kSettles) + "    for_s: 5s\n");
  run.value(1, "/model/ugv1/link_state", {{"data", false}});
  run.value(2, kOdom, speed(0.0));
  run.value(4, kOdom, speed(0.3));  // broken after 2 s
  run.value(5, kOdom, speed(0.0));  // holds again from 5 s
  run.tick(9.5);
  EXPECT_EQ(run.result("settles").status, Verdict::kPending);
  run.value(10, kOdom, speed(0.01));
  const auto r = run.result("settles");
  EXPECT_EQ(r.status, Verdict::kPassed) << r.reason;
  EXPECT_DOUBLE_EQ(to_seconds(r.t), 10.0);
  EXPECT_DOUBLE_EQ(r.metrics["satisfied_at_s"]["value"].get<double>(), 2.0);
}

TEST(Eventually, WithForSFailsAtTheDeadlineWhenTheHoldIsTooShort) {
  Stream run(std::string(kSettles) + "    for_s: 5s\n");
  run.value(1, "/model/ugv1/link_state", {{"data", false}});
  run.value(17, kOdom, speed(0.0));
  run.tick(20.1);
  const auto r = run.result("settles");
  EXPECT_EQ(r.status, Verdict::kFailed);
  EXPECT_TRUE(contains(r.reason, "did not hold for 5 s")) << r.reason;
}

TEST(Eventually, ReadsTheVehiclesPoseMetrics) {
  Stream run(R"(  - name: arrives
    type: eventually
    vehicle: ugv1
    signals:
      px: { metric: x }
      heading: { metric: yaw }
      t: { metric: sim_time }
    condition: px > 9 and abs(heading) < 0.1 and t > 3
)");
  run.clock(1, 1.0);
  run.pose(2, "ugv1", 9.5, 0, 0.05);  // t = 1 still
  EXPECT_EQ(run.result("arrives").status, Verdict::kPending);
  run.clock(4, 1.0);
  EXPECT_EQ(run.result("arrives").status, Verdict::kPassed);
}

TEST(Temporal, ASignalNamedAfterAFunctionIsRefused) {
  const std::string why = plan_refusal(R"(  - name: x
    type: always
    signals:
      abs: { metric: rtf }
    condition: abs > 0
)");
  EXPECT_TRUE(contains(why, "signals")) << why;
}

TEST(Temporal, ASignalTheConditionDoesNotReadIsRefused) {
  const std::string why = plan_refusal(R"(  - name: x
    type: always
    signals:
      r: { metric: rtf }
      t: { metric: sim_time }
    condition: r > 0
)");
  EXPECT_TRUE(contains(why, "every signal must be read")) << why;
}

TEST(Temporal, APoseMetricWithoutAVehicleIsRefused) {
  const std::string why = plan_refusal(R"(  - name: x
    type: always
    signals:
      px: { metric: x }
    condition: px < 3
)");
  EXPECT_TRUE(contains(why, "the metric x is a vehicle's")) << why;
}

}  // namespace
}  // namespace fieldproof::assertions
