// The KPI collectors on synthetic streams (each measured and missing), their plans' watches, and
// the flat KPI map with its JSON forms.
#include "fieldproof/assertions/kpis.hpp"

#include <gtest/gtest.h>

#include "stream.hpp"

namespace fieldproof::assertions {
namespace {

using nlohmann::json;
using testing::at;

struct Kpis {
  scenario::Scenario scenario;
  std::vector<PlannedKpi> planned;
  std::unique_ptr<Collectors> c;

  explicit Kpis(const std::string& kpis) : scenario(testing::load(kpis)) {
    PlanContext ctx{scenario, {{"goal_a", {10.0, 0.0, 0.0}}}};
    planned = plan_kpis(scenario, ctx);
    c = std::make_unique<Collectors>(planned);
  }
  void pose(double t, double x, double y = 0.0, const std::string& model = "ugv1") {
    Sample s;
    s.kind = Sample::Kind::kPose;
    s.sim = at(t);
    s.vehicle = model;
    s.pose = {x, y, 0.0};
    c->on_sample(s, at(t));
  }
  void rate(double t, const std::string& topic, double hz, uint64_t messages) {
    Sample s;
    s.kind = Sample::Kind::kRate;
    s.sim = at(t);
    s.topic = topic;
    s.hz = hz;
    s.window = seconds(5);
    s.messages = messages;
    c->on_sample(s, at(t));
  }
  void latency(double t, const std::string& topic, uint64_t count, double mean, double max,
               double p95) {
    Sample s;
    s.kind = Sample::Kind::kLatency;
    s.sim = at(t);
    s.topic = topic;
    s.window = seconds(2);
    s.latency = {count, mean, max, 0.0, p95, 0};
    c->on_sample(s, at(t));
  }
  void resources(double t, const std::string& vehicle, double cpu, double mem) {
    Sample s;
    s.kind = Sample::Kind::kResources;
    s.sim = at(t);
    s.vehicle = vehicle;
    s.process = vehicle + "_nav";
    s.cpu_pct = cpu;
    s.memory_mb = mem;
    c->on_sample(s, at(t));
  }
  void value(double t, const std::string& topic, json message) {
    Sample s;
    s.kind = Sample::Kind::kValue;
    s.sim = at(t);
    s.topic = topic;
    s.message = std::move(message);
    c->on_sample(s, at(t));
  }
  KpiResult result(const std::string& name) const {
    for (const auto& r : c->results()) {
      if (r.name == name) return r;
    }
    ADD_FAILURE() << "no collector " << name;
    return {};
  }
  double metric(const std::string& name, const std::string& m) const {
    const auto r = result(name);
    if (!r.metrics.contains(m)) {
      ADD_FAILURE() << name << " has no metric " << m << ": " << r.metrics.dump();
      return -1;
    }
    return r.metrics[m]["value"].get<double>();
  }
};

TEST(PathCollector, MeasuresTheActionsRunAgainstATarget) {
  Kpis k(R"(kpis:
  - { name: drive, type: path, vehicle: ugv1, action: drive, target: goal_a }
)");
  EXPECT_EQ(k.planned[0].watch.poses, (std::set<std::string>{"ugv1"}));
  k.pose(0.5, -5.0);
  k.c->on_action("drive", ActionEvent::kStart, at(1.0), "running");
  k.pose(1.0, 0.0);
  k.pose(2.0, 0.0, 4.0);
  k.pose(3.0, 3.0, 0.0);
  k.c->on_action("drive", ActionEvent::kEnd, at(3.0), "ok");
  k.pose(4.0, 9.0);
  k.c->finish(at(5.0));
  const auto r = k.result("drive");
  EXPECT_EQ(r.status, KpiStatus::kMeasured) << r.reason;
  EXPECT_DOUBLE_EQ(k.metric("drive", "path_m"), 9.0);
  EXPECT_DOUBLE_EQ(k.metric("drive", "straight_m"), 10.0);
  EXPECT_DOUBLE_EQ(k.metric("drive", "max_speed_mps"), 5.0);
  EXPECT_DOUBLE_EQ(k.metric("drive", "mean_speed_mps"), 4.5);
  EXPECT_EQ(r.evidence["excerpt"].size(), 3u);
}

TEST(PathCollector, IsMissingWithFewerThanTwoPoses) {
  Kpis k(R"(kpis:
  - { name: drive, type: path, vehicle: ugv1 }
)");
  k.pose(1.0, 0.0);
  k.c->finish(at(5.0));
  EXPECT_EQ(k.result("drive").status, KpiStatus::kMissing);
  EXPECT_TRUE(k.result("drive").metrics.empty());
}

TEST(MissionTimeCollector, MeasuresTheTimelineOrIsMissingWhenItsEndNeverCame) {
  Kpis k(R"(kpis:
  - { name: whole, type: mission_time }
  - { name: span, type: mission_time, start: drive, end: back }
)");
  k.c->on_action("drive", ActionEvent::kStart, at(1.0), "running");
  k.c->on_action("back", ActionEvent::kEnd, at(6.0), "aborted");
  k.c->finish(at(8.0));
  EXPECT_EQ(k.result("whole").status, KpiStatus::kMeasured);
  EXPECT_DOUBLE_EQ(k.metric("whole", "duration_s"), 8.0);
  const auto span = k.result("span");
  EXPECT_EQ(span.status, KpiStatus::kMissing);
  EXPECT_EQ(span.reason, "back ended aborted");
  EXPECT_TRUE(span.metrics.empty());
}

TEST(DistanceCollector, MeasuresClosestAndFinalToAnotherVehicle) {
  Kpis k(R"(kpis:
  - { name: gap, type: distance, vehicle: ugv1, to: { vehicle: ugv2 } }
  - { name: none, type: distance, vehicle: ugv1, to: { model: crate } }
)");
  EXPECT_EQ(k.planned[0].watch.poses, (std::set<std::string>{"ugv1", "ugv2"}));
  k.pose(0.0, 0.0);
  k.pose(0.0, 4.0, 0.0, "ugv2");
  k.pose(1.0, 3.0);
  k.pose(2.0, 1.0);
  k.c->finish(at(3.0));
  EXPECT_EQ(k.result("gap").status, KpiStatus::kMeasured);
  EXPECT_DOUBLE_EQ(k.metric("gap", "closest_m"), 1.0);
  EXPECT_DOUBLE_EQ(k.metric("gap", "closest_at_s"), 1.0);
  EXPECT_DOUBLE_EQ(k.metric("gap", "final_m"), 3.0);
  EXPECT_EQ(k.result("none").status, KpiStatus::kMissing);
}

TEST(RateCollector, MeasuresMeanLowestHighestAndMessages) {
  Kpis k(R"(kpis:
  - { name: scan, type: rate, topic: scan, vehicle: ugv1, after_s: 1s }
)");
  EXPECT_EQ(k.planned[0].watch.rates.at("/model/ugv1/scan"), seconds(5));
  k.rate(0.5, "/model/ugv1/scan", 1.0, 5);  // before after_s
  k.rate(5.0, "/model/ugv1/scan", 10.0, 50);
  k.rate(6.0, "/model/ugv1/scan", 8.0, 40);
  k.rate(6.0, "/model/ugv2/scan", 99.0, 500);
  k.c->finish(at(7.0));
  EXPECT_EQ(k.result("scan").status, KpiStatus::kMeasured);
  EXPECT_DOUBLE_EQ(k.metric("scan", "mean_hz"), 9.0);
  EXPECT_DOUBLE_EQ(k.metric("scan", "lowest_hz"), 8.0);
  EXPECT_DOUBLE_EQ(k.metric("scan", "highest_hz"), 10.0);
  EXPECT_DOUBLE_EQ(k.metric("scan", "messages"), 58.0);  // 50 + 40 * 1 s / 5 s
}

TEST(RateCollector, IsMissingWithoutAWindow) {
  Kpis k(R"(kpis:
  - { name: scan, type: rate, topic: /scan }
)");
  k.c->finish(at(7.0));
  EXPECT_EQ(k.result("scan").status, KpiStatus::kMissing);
  EXPECT_TRUE(k.result("scan").metrics.empty());
}

TEST(LatencyCollector, TakesTheHighestP95AndMaxAndTheWeightedMean) {
  Kpis k(R"(kpis:
  - { name: age, type: latency, topic: odom, vehicle: ugv1 }
)");
  EXPECT_EQ(k.planned[0].watch.latencies.at("/model/ugv1/odom"), seconds(2));
  k.latency(2.0, "/model/ugv1/odom", 100, 10.0, 30.0, 20.0);
  k.latency(3.0, "/model/ugv1/odom", 300, 30.0, 40.0, 35.0);
  k.c->finish(at(4.0));
  EXPECT_EQ(k.result("age").status, KpiStatus::kMeasured);
  EXPECT_DOUBLE_EQ(k.metric("age", "p95_ms"), 35.0);
  EXPECT_DOUBLE_EQ(k.metric("age", "max_ms"), 40.0);
  EXPECT_DOUBLE_EQ(k.metric("age", "mean_ms"), 25.0);
  EXPECT_DOUBLE_EQ(k.metric("age", "messages"), 250.0);  // 100 + 300 * 1 s / 2 s
}

TEST(ResourcesCollector, PeaksAndMeansOfTheVehiclesStack) {
  Kpis k(R"(kpis:
  - { name: stack, type: resources, vehicle: ugv1 }
)");
  EXPECT_EQ(k.planned[0].watch.resources, (std::set<std::string>{"ugv1"}));
  k.resources(1.0, "ugv1", 10.0, 100.0);
  k.resources(2.0, "ugv1", 30.0, 120.0);
  k.resources(2.0, "ugv2", 90.0, 900.0);
  k.c->finish(at(3.0));
  EXPECT_EQ(k.result("stack").status, KpiStatus::kMeasured);
  EXPECT_DOUBLE_EQ(k.metric("stack", "peak_cpu_pct"), 30.0);
  EXPECT_DOUBLE_EQ(k.metric("stack", "mean_cpu_pct"), 20.0);
  EXPECT_DOUBLE_EQ(k.metric("stack", "peak_memory_mb"), 120.0);
  EXPECT_DOUBLE_EQ(k.metric("stack", "mean_memory_mb"), 110.0);
  EXPECT_DOUBLE_EQ(k.metric("stack", "samples"), 2.0);
}

TEST(LatencyCollector, IsMissingWithoutAMeasuredWindow) {
  Kpis k(R"(kpis:
  - { name: age, type: latency, topic: odom, vehicle: ugv1 }
)");
  k.latency(2.0, "/model/ugv1/odom", 0, 0.0, 0.0, 0.0);  // an empty window
  k.c->finish(at(4.0));
  EXPECT_EQ(k.result("age").status, KpiStatus::kMissing);
  EXPECT_EQ(k.result("age").reason, "no latency window of /model/ugv1/odom was measured");
}

TEST(ResourcesCollector, IsMissingWhenTheStackWasNotSampled) {
  Kpis k(R"(kpis:
  - { name: stack, type: resources, vehicle: ugv2 }
)");
  k.resources(1.0, "ugv1", 10.0, 100.0);
  k.c->finish(at(3.0));
  EXPECT_EQ(k.result("stack").status, KpiStatus::kMissing);
  EXPECT_EQ(k.result("stack").reason, "the stack of ugv2 was not sampled");
}

TEST(ValueCollector, CountsTheValuesThatSatisfyCountIf) {
  Kpis k(R"(kpis:
  - { name: commanded, type: value, topic: cmd_vel, vehicle: ugv1, field: linear.x, count_if: value > 0 }
)");
  EXPECT_EQ(k.planned[0].watch.values, (std::set<std::string>{"/model/ugv1/cmd_vel"}));
  for (double x : {0.0, 0.5, 1.0, -0.5}) {
    k.value(1.0, "/model/ugv1/cmd_vel", {{"linear", {{"x", x}}}});
  }
  k.c->finish(at(2.0));
  const auto r = k.result("commanded");
  EXPECT_EQ(r.status, KpiStatus::kMeasured) << r.reason;
  EXPECT_DOUBLE_EQ(k.metric("commanded", "samples"), 4.0);
  EXPECT_DOUBLE_EQ(k.metric("commanded", "count"), 2.0);
  EXPECT_DOUBLE_EQ(k.metric("commanded", "min"), -0.5);
  EXPECT_DOUBLE_EQ(k.metric("commanded", "max"), 1.0);
  EXPECT_DOUBLE_EQ(k.metric("commanded", "mean"), 0.25);
  EXPECT_DOUBLE_EQ(k.metric("commanded", "last"), -0.5);
}

TEST(ValueCollector, IsMissingWithTheReasonWhenTheFieldDoesNotExist) {
  Kpis k(R"(kpis:
  - { name: speed, type: value, topic: cmd_vel, vehicle: ugv1, field: linear.w }
)");
  k.value(1.0, "/model/ugv1/cmd_vel", {{"linear", {{"x", 1.0}}}});
  k.c->finish(at(2.0));
  const auto r = k.result("speed");
  EXPECT_EQ(r.status, KpiStatus::kMissing);
  EXPECT_EQ(r.reason, "/model/ugv1/cmd_vel: no field 'w' in linear");
}

TEST(KpiMap, FlattensAssertionAndCollectorMetricsWithUnitAndSource) {
  AssertionResult a;
  a.name = "reached";
  a.type = "reach_pose";
  a.metrics = {{"closest_m", {{"value", 0.2}, {"unit", "m"}}}};
  KpiResult k;
  k.name = "drive";
  k.type = "path";
  k.status = KpiStatus::kMeasured;
  k.metrics = {{"path_m", {{"value", 9.5}, {"unit", "m"}}}};
  const json map = kpi_map({a}, {k});
  EXPECT_EQ(map["reached.closest_m"],
            json({{"value", 0.2}, {"unit", "m"}, {"source", "assertion reached"}}));
  EXPECT_EQ(map["drive.path_m"],
            json({{"value", 9.5}, {"unit", "m"}, {"source", "collector drive"}}));
  const json collectors = kpi_collectors_json({k});
  ASSERT_EQ(collectors.size(), 1u);
  EXPECT_EQ(collectors[0]["status"], "measured");
  const auto lines = kpi_lines({a}, {k});
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["kind"], "kpi_collector");
  EXPECT_EQ(lines[0]["name"], "drive");
  EXPECT_EQ(lines[1]["kind"], "kpis");
  EXPECT_EQ(lines[1]["kpis"], map);
}

TEST(KpiPlan, RefusesAnUnknownVehicleNamingTheField) {
  auto sc = testing::load(R"(kpis:
  - { name: stack, type: resources, vehicle: ugv1 }
)");
  PlanContext ctx{sc, {}};
  sc.kpis[0].params = scenario::ParamValue{};
  sc.kpis[0].params.kind = scenario::ParamValue::Kind::kMap;
  scenario::ParamValue v;
  v.kind = scenario::ParamValue::Kind::kString;
  v.string = "ugv9";
  sc.kpis[0].params.keys = {"vehicle"};
  sc.kpis[0].params.items = {v};
  try {
    plan_kpi(sc.kpis[0], ctx);
    FAIL() << "planned";
  } catch (const PlanError& e) {
    EXPECT_EQ(e.path(), "kpis[0].vehicle");
  }
  EXPECT_EQ(kpi_types().size(), 8u);
}

}  // namespace
}  // namespace fieldproof::assertions
