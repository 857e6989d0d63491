// One refusal per key of the tables, each with its exact line:column, field path and message, and
// a minimal accepted instance of every assertion type, KPI collector and timeline action.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fieldproof/scenario/scenario.hpp"

namespace fieldproof::scenario {
namespace {

const std::filesystem::path kData =
    std::filesystem::path(FIELDPROOF_SOURCE_DIR) / "tests" / "scenario" / "data";

// Seven lines of a valid scenario; a case's snippet starts at line 7.
constexpr const char* kBase =
    "name: t\n"
    "world: world.sdf\n"
    "vehicles:\n"
    "  - name: ugv1\n"
    "    spawn: dock\n"
    "    stack: {plugin: fieldproof_ugv_nav_plugin}\n";

ValidationResult load_with(const std::string& snippet) {
  return load_scenario_text(std::string(kBase) + snippet, "s.yaml", kData);
}

struct Refusal {
  const char* name;     // the test's name
  const char* snippet;  // appended at line 7
  int line;             // the error's line
  const char* at;       // the error's column is where this text first appears on that line
  const char* path;     // the field path
  const char* message;  // how the message starts
};

std::string line_of(const std::string& text, int line) {
  size_t start = 0;
  for (int i = 1; i < line; ++i) start = text.find('\n', start) + 1;
  return text.substr(start, text.find('\n', start) - start);
}

class RefusalTest : public ::testing::TestWithParam<Refusal> {};

TEST_P(RefusalTest, NamesLineColumnPathAndWhatIsAccepted) {
  const Refusal& c = GetParam();
  const std::string text = std::string(kBase) + c.snippet;
  const std::string line = line_of(text, c.line);
  const size_t col = line.find(c.at);
  ASSERT_NE(col, std::string::npos) << "'" << c.at << "' is not on line " << c.line;
  const std::string expected = "s.yaml:" + std::to_string(c.line) + ":" + std::to_string(col + 1) +
                               ": " + c.path + ": " + c.message;
  auto r = load_with(c.snippet);
  EXPECT_FALSE(r.ok());
  bool found = false;
  for (const auto& e : r.errors) found = found || e.to_string().rfind(expected, 0) == 0;
  EXPECT_TRUE(found) << "expected an error starting with\n  " << expected << "\ngot\n"
                     << r.format_errors();
}

const Refusal kRefusals[] = {
    // top level
    {"NameNotAString", "description: [a]\n", 7, "[a]", "description", "expected a string"},
    {"TimelineNotAList", "timeline: {a: 1}\n", 7, "{a", "timeline", "expected a list"},
    {"PluginsNotAList", "plugins: lib.so\n", 7, "lib.so", "plugins", "expected a list"},
    // time
    {"RtfZero", "time: {rtf: 0}\n", 7, "0}", "time.rtf",
     "expected a number greater than 0, or null"},
    {"RtfText", "time: {rtf: fast}\n", 7, "fast", "time.rtf", "expected a number"},
    {"MaxDriftBad", "time: {mode: realtime, max_drift_s: 1.5x}\n", 7, "1.5x", "time.max_drift_s",
     "expected a duration like 0.1, 250ms, 10m"},
    {"AckTimeoutZero", "time: {mode: lockstep, ack_timeout_s: 0}\n", 7, "0}", "time.ack_timeout_s",
     "expected a duration like 0.1, 250ms, 10m greater than 0"},
    {"TimeoutZero", "time: {timeout_s: 0s}\n", 7, "0s", "time.timeout_s",
     "expected a duration like 0.1, 250ms, 10m greater than 0"},
    // timeline
    {"EveryZero", "timeline: [{action: sim.resume, every: 0}]\n", 7, "0}", "timeline[0].every",
     "expected a duration like 0.1, 250ms, 10m greater than 0"},
    {"AfterNotAName", "timeline: [{action: sim.resume, after: [x]}]\n", 7, "[x]",
     "timeline[0].after", "expected a string"},
    {"WhenMetricUnknown", "timeline: [{action: sim.resume, when: {metric: speed, condition: 1}}]\n",
     7, "speed", "timeline[0].when.metric",
     "expected one of sim_time, rtf, x, y, z, yaw, distance_to"},
    {"WhenVehicleUnknown",
     "timeline: [{action: sim.resume, when: {metric: x, vehicle: ugv7, condition: 1}}]\n", 7,
     "ugv7", "timeline[0].when.vehicle", "unknown vehicle 'ugv7'"},
    {"WhenNeedsACondition", "timeline: [{action: sim.resume, when: {metric: rtf}}]\n", 7, "{metric",
     "timeline[0].when.condition", "missing required key 'condition'"},
    {"DistanceToNeedsATarget",
     "timeline: [{action: sim.resume, when: {metric: distance_to, vehicle: ugv1, condition: 1}}]\n",
     7, "distance_to", "timeline[0].when.metric", "distance_to needs a target"},
    {"CmdVelSpeedNotANumber", "timeline: [{action: cmd_vel, vehicle: ugv1, linear_x: fast}]\n", 7,
     "fast", "timeline[0].linear_x", "expected a number"},
    {"SimStepStepsZero", "timeline: [{action: sim.step, steps: 0}]\n", 7, "0}", "timeline[0].steps",
     "expected an integer of at least 1"},
    {"SpawnSizeTwoItems",
     "timeline: [{action: spawn_model, model: box1, pose: dock, size: [1, 1]}]\n", 7, "[1, 1]",
     "timeline[0].size", "expected at least 3 items, got 2"},
    {"SpawnShapeUnknown",
     "timeline: [{action: spawn_model, model: box1, pose: dock, shape: cone}]\n", 7, "cone",
     "timeline[0].shape", "expected one of box, cylinder, sphere, vehicle"},
    {"SpawnNeedsAPose", "timeline: [{action: spawn_model, model: box1}]\n", 7, "{action",
     "timeline[0].pose", "missing required key 'pose'"},
    {"RemoveNeedsAModel", "timeline: [{action: remove_model}]\n", 7, "{action", "timeline[0].model",
     "missing required key 'model'"},
    {"SimPauseForZero", "timeline: [{action: sim.pause, duration_s: 0}]\n", 7, "0}",
     "timeline[0].duration_s", "expected a duration like 0.1, 250ms, 10m greater than 0"},
    {"CmdVelForZero", "timeline: [{action: cmd_vel, vehicle: ugv1, duration_s: 0ms}]\n", 7, "0ms",
     "timeline[0].duration_s", "expected a duration like 0.1, 250ms, 10m greater than 0"},
    {"UntilZeroWithoutAt", "timeline: [{action: sim.resume, every: 1, until_s: 0}]\n", 7, "0}",
     "timeline[0].until_s", "until_s (0 s) must be later than at (0 s)"},
    {"SimPauseHasNoVehicle", "timeline: [{action: sim.pause, vehicle: ugv1}]\n", 7, "vehicle",
     "timeline[0].vehicle", "unknown key 'vehicle'"},
    // assertions
    {"AssertionNameNotAName", "assertions: [{name: Reached, type: mission_time, max_s: 1}]\n", 7,
     "Reached", "assertions[0].name", "expected a name of lower case letters"},
    {"AssertionWithoutType", "assertions: [{name: a}]\n", 7, "{name", "assertions[0].type",
     "missing required key 'type'; expected one of reach_pose"},
    {"ReachToleranceZero",
     "assertions: [{name: a, type: reach_pose, vehicle: ugv1, target: dock, tolerance_m: 0}]\n", 7,
     "0}", "assertions[0].tolerance_m", "expected a number greater than 0"},
    {"ReachYawToleranceNegative",
     "assertions: [{name: a, type: reach_pose, vehicle: ugv1, target: dock, yaw_tolerance_rad: "
     "-1}]\n",
     7, "-1", "assertions[0].yaw_tolerance_rad", "expected a number greater than 0"},
    {"ReachNeedsATarget", "assertions: [{name: a, type: reach_pose, vehicle: ugv1}]\n", 7, "{name",
     "assertions[0].target", "missing required key 'target'"},
    {"ReachTargetBadPlacement",
     "assertions: [{name: a, type: reach_pose, vehicle: ugv1, target: [1, 2]}]\n", 7, "[1, 2]",
     "assertions[0].target", "expected a mapping (placement: frame, x, y, z, yaw)"},
    {"WithinTimeNeedsMaxS", "assertions: [{name: a, type: within_time, action: x}]\n", 7, "{name",
     "assertions[0].max_s", "missing required key 'max_s'"},
    {"TopicRateNeedsMinHz", "assertions: [{name: a, type: topic_rate, topic: scan}]\n", 7, "{name",
     "assertions[0].min_hz", "missing required key 'min_hz'"},
    {"TopicRateMaxBelowMin",
     "assertions: [{name: a, type: topic_rate, topic: scan, min_hz: 5, max_hz: 2}]\n", 7, "2}",
     "assertions[0].max_hz", "max_hz must be at least min_hz"},
    {"TopicRateWindowZero",
     "assertions: [{name: a, type: topic_rate, topic: scan, min_hz: 5, window_s: 0}]\n", 7, "0}",
     "assertions[0].window_s", "expected a duration like 0.1, 250ms, 10m greater than 0"},
    {"NoCollisionIgnoreNotAList",
     "assertions: [{name: a, type: no_collision, vehicle: ugv1, ignore: crate}]\n", 7, "crate",
     "assertions[0].ignore", "expected a list of string"},
    {"TopicValueModeUnknown",
     "assertions: [{name: a, type: topic_value, topic: odom, field: x, condition: value > 0, mode: "
     "sometimes}]\n",
     7, "sometimes", "assertions[0].mode", "expected one of always, eventually"},
    {"TopicValueNeedsACondition",
     "assertions: [{name: a, type: topic_value, topic: odom, field: x}]\n", 7, "{name",
     "assertions[0].condition", "missing required key 'condition'"},
    {"GeofenceModeUnknown",
     "assertions: [{name: a, type: geofence, vehicle: ugv1, region: {circle: {x: 0, y: 0, "
     "radius_m: 1}}, mode: near}]\n",
     7, "near", "assertions[0].mode", "expected one of inside, outside"},
    {"GeofenceBoxInverted",
     "assertions: [{name: a, type: geofence, vehicle: ugv1, region: {box: {x_min: 5, x_max: 1, "
     "y_min: 0, y_max: 1}}}]\n",
     7, "1, y_min", "assertions[0].region.box.x_max", "x_max must exceed x_min"},
    {"GeofenceCircleRadiusZero",
     "assertions: [{name: a, type: geofence, vehicle: ugv1, region: {circle: {x: 0, y: 0, "
     "radius_m: 0}}}]\n",
     7, "0}}", "assertions[0].region.circle.radius_m", "expected a number greater than 0"},
    {"GeofenceVertexOfThree",
     "assertions: [{name: a, type: geofence, vehicle: ugv1, region: {polygon: [[0, 0, 1], [1, 0], "
     "[0, 1]]}}]\n",
     7, "[0, 0, 1]", "assertions[0].region.polygon[0]", "expected at most 2 items, got 3"},
    {"MinDistanceNegative",
     "assertions: [{name: a, type: min_distance, vehicle: ugv1, to: {model: crate}, min_m: -1}]\n",
     7, "-1", "assertions[0].min_m", "expected a number of at least 0"},
    {"MinDistanceToUnknownVehicle",
     "assertions: [{name: a, type: min_distance, vehicle: ugv1, to: {vehicle: ugv2}, min_m: 1}]\n",
     7, "ugv2", "assertions[0].to.vehicle", "unknown vehicle 'ugv2'"},
    {"PathEfficiencyRatioAboveOne",
     "assertions: [{name: a, type: path_efficiency, vehicle: ugv1, min_ratio: 1.5}]\n", 7, "1.5",
     "assertions[0].min_ratio", "expected a number of at least 0 and at most 1"},
    {"PathEfficiencyMaxPathZero",
     "assertions: [{name: a, type: path_efficiency, vehicle: ugv1, max_path_m: 0}]\n", 7, "0}",
     "assertions[0].max_path_m", "expected a number greater than 0"},
    {"MissionTimeMinAboveMax", "assertions: [{name: a, type: mission_time, max_s: 5, min_s: 9}]\n",
     7, "9}", "assertions[0].min_s", "min_s must not be more than max_s"},
    {"MissionTimeUnknownEnd", "assertions: [{name: a, type: mission_time, max_s: 5, end: done}]\n",
     7, "done", "assertions[0].end", "unknown timeline entry 'done'"},
    {"LatencyStatisticUnknown",
     "assertions: [{name: a, type: message_latency, topic: odom, max_ms: 5, statistic: p99}]\n", 7,
     "p99", "assertions[0].statistic", "expected one of p95, max, mean"},
    {"LatencyNeedsMaxMs", "assertions: [{name: a, type: message_latency, topic: odom}]\n", 7,
     "{name", "assertions[0].max_ms", "missing required key 'max_ms'"},
    {"SequenceNoSteps", "assertions: [{name: a, type: sequence, steps: []}]\n", 7, "[]",
     "assertions[0].steps", "expected at least 1 item, got 0"},
    {"SequenceStepTwoKinds",
     "assertions: [{name: a, type: sequence, steps: [{assertion: a, metric: rtf}]}]\n", 7, "metric",
     "assertions[0].steps[0].metric", "only one of action, topic, metric, assertion may be given"},
    {"SequenceEventWithoutAction",
     "assertions: [{name: a, type: sequence, steps: [{assertion: a, event: started}]}]\n", 7,
     "event", "assertions[0].steps[0].event", "'event' needs 'action' as well"},
    {"SequenceEventUnknown",
     "assertions: [{name: a, type: sequence, steps: [{action: x, event: ended}]}]\n", 7, "ended",
     "assertions[0].steps[0].event", "expected one of started, finished"},
    {"SequenceMaxGapBad",
     "assertions: [{name: a, type: sequence, steps: [{assertion: a}], max_gap_s: soon}]\n", 7,
     "soon", "assertions[0].max_gap_s", "expected a duration like 0.1, 250ms, 10m"},
    {"ResourceContainerUnknown",
     "assertions: [{name: a, type: resource_usage, vehicle: ugv1, max_cpu_pct: 50, container: "
     "gpu}]\n",
     7, "gpu", "assertions[0].container", "expected one of vehicle"},
    {"ResourceCpuZero",
     "assertions: [{name: a, type: resource_usage, vehicle: ugv1, max_cpu_pct: 0}]\n", 7, "0}",
     "assertions[0].max_cpu_pct", "expected a number greater than 0"},
    {"LifecycleStateUnknown",
     "assertions: [{name: a, type: lifecycle_state, vehicle: ugv1, node: nav, state: running}]\n",
     7, "running", "assertions[0].state",
     "expected one of unconfigured, inactive, active, finalized"},
    {"LifecycleNeedsANode",
     "assertions: [{name: a, type: lifecycle_state, vehicle: ugv1, state: active}]\n", 7, "{name",
     "assertions[0].node", "missing required key 'node'"},
    {"AlwaysNoSignals", "assertions: [{name: a, type: always, signals: {}, condition: 'True'}]\n",
     7, "{}", "assertions[0].signals", "expected at least 1 entry"},
    {"NeverHasNoForS",
     "assertions: [{name: a, type: never, signals: {r: {metric: rtf}}, condition: r < 0, for_s: "
     "1}]\n",
     7, "for_s", "assertions[0].for_s", "unknown key 'for_s'"},
    {"EventuallyForSBad",
     "assertions: [{name: a, type: eventually, signals: {r: {metric: rtf}}, condition: r > 0, "
     "for_s: x}]\n",
     7, "x}", "assertions[0].for_s", "expected a duration like 0.1, 250ms, 10m"},
    {"SignalTopicAndMetric",
     "assertions: [{name: a, type: always, signals: {r: {metric: rtf, topic: t, field: f}}, "
     "condition: r > 0}]\n",
     7, "topic", "assertions[0].signals.r.topic", "only one of topic, metric may be given"},
    // kpis
    {"KpiValueNeedsAField", "kpis: [{name: k, type: value, topic: odom}]\n", 7, "{name",
     "kpis[0].field", "missing required key 'field'"},
    {"KpiRateWindowBad", "kpis: [{name: k, type: rate, topic: scan, window_s: -1}]\n", 7, "-1",
     "kpis[0].window_s", "expected a duration like 0.1, 250ms, 10m"},
    {"KpiLatencyUnknownKey", "kpis: [{name: k, type: latency, topic: scan, max_ms: 5}]\n", 7,
     "max_ms", "kpis[0].max_ms", "unknown key 'max_ms'"},
    {"KpiResourcesContainerUnknown",
     "kpis: [{name: k, type: resources, vehicle: ugv1, container: gpu}]\n", 7, "gpu",
     "kpis[0].container", "expected one of vehicle"},
    {"KpiDistanceNeedsTo", "kpis: [{name: k, type: distance, vehicle: ugv1}]\n", 7, "{name",
     "kpis[0].to", "missing required key 'to'"},
    {"KpiPathNeedsAVehicle", "kpis: [{name: k, type: path}]\n", 7, "{name", "kpis[0].vehicle",
     "missing required key 'vehicle'"},
    {"KpiPathUnknownAction", "kpis: [{name: k, type: path, vehicle: ugv1, action: x}]\n", 7, "x}",
     "kpis[0].action", "unknown timeline entry 'x'"},
    // outputs
    {"OutputsTopicsNotAList", "outputs: {topics: /clock}\n", 7, "/clock", "outputs.topics",
     "expected a list of string"},
    {"OutputsUnknownKey", "outputs: {video: true}\n", 7, "video", "outputs.video",
     "unknown key 'video'; expected one of record, topics"},
};

INSTANTIATE_TEST_SUITE_P(EveryKey, RefusalTest, ::testing::ValuesIn(kRefusals),
                         [](const ::testing::TestParamInfo<Refusal>& info) {
                           return std::string(info.param.name);
                         });

TEST(VehicleRefusals, ParameterValueMustBeAScalar) {
  auto r = load_scenario_text(
      "name: t\nworld: world.sdf\nvehicles: [{name: a, spawn: dock, parameters: {k: [1]}}]\n",
      "s.yaml", kData);
  ASSERT_FALSE(r.errors.empty());
  EXPECT_EQ(r.errors[0].to_string(),
            "s.yaml:3:51: vehicles[0].parameters.k: expected a string, number or bool, got a list");
}

TEST(VehicleRefusals, EmptyPluginNameRefused) {
  auto r = load_scenario_text(
      "name: t\nworld: world.sdf\nvehicles: [{name: a, spawn: dock, stack: {plugin: ''}}]\n",
      "s.yaml", kData);
  ASSERT_FALSE(r.errors.empty());
  EXPECT_EQ(r.errors[0].to_string(),
            "s.yaml:3:51: vehicles[0].stack.plugin: expected a non-empty string");
}

TEST(VehicleRefusals, UnknownStackKey) {
  auto r = load_scenario_text(
      "name: t\nworld: world.sdf\nvehicles: [{name: a, spawn: dock, stack: {image: x}}]\n",
      "s.yaml", kData);
  EXPECT_THAT(r.format_errors(),
              ::testing::HasSubstr("s.yaml:3:43: vehicles[0].stack.image: unknown key 'image'; "
                                   "expected one of plugin, command, arguments"));
}

// ---- a minimal accepted instance of every type ----------------------------------------------

struct Accepted {
  const char* name;
  const char* snippet;
};

class AcceptedTest : public ::testing::TestWithParam<Accepted> {};

TEST_P(AcceptedTest, Validates) {
  auto r = load_with(GetParam().snippet);
  EXPECT_TRUE(r.ok()) << r.format_errors();
  EXPECT_TRUE(r.warnings.empty());
}

const Accepted kAccepted[] = {
    {"ReachPose",
     "assertions: [{name: a, type: reach_pose, vehicle: ugv1, target: {x: 1, y: 2}}]\n"},
    {"WithinTime",
     "timeline: [{action: sim.resume, name: r}]\n"
     "assertions: [{name: a, type: within_time, action: r, max_s: 250ms}]\n"},
    {"TopicRate", "assertions: [{name: a, type: topic_rate, topic: /scan, min_hz: 2}]\n"},
    {"NoCollision",
     "assertions: [{name: a, type: no_collision, vehicle: ugv1, ignore: [crate, "
     "'shelf_1::link::collision']}]\n"},
    {"TopicValue",
     "assertions: [{name: a, type: topic_value, topic: cmd_vel, vehicle: ugv1, field: linear.x, "
     "condition: abs(value) < 0.2, mode: eventually, after_s: 1, within_s: 10}]\n"},
    {"GeofencePolygon",
     "assertions: [{name: a, type: geofence, vehicle: ugv1, region: {polygon: [[0, 0], [4, 0], "
     "[0, 4]], z_min: 0, z_max: 2}, mode: outside}]\n"},
    {"MinDistanceToTarget",
     "assertions: [{name: a, type: min_distance, vehicle: ugv1, to: {target: goal_a}, min_m: "
     "0.5}]\n"},
    {"PathEfficiency",
     "assertions: [{name: a, type: path_efficiency, vehicle: ugv1, after_s: 1, within_s: 20, "
     "min_ratio: 0.6, max_path_m: 30}]\n"},
    {"MissionTime", "assertions: [{name: a, type: mission_time, max_s: 10m, min_s: 1s}]\n"},
    {"MessageLatency",
     "assertions: [{name: a, type: message_latency, topic: odom, vehicle: ugv1, max_ms: 250, "
     "statistic: max, window_s: 1}]\n"},
    {"SequenceOfSignals",
     "assertions: [{name: a, type: sequence, vehicle: ugv1, within_s: 30, max_gap_s: 10, steps: "
     "[{name: near, metric: distance_to, target: goal_a, condition: value < 1}, {metric: "
     "sim_time, condition: value > 5}]}]\n"},
    {"ResourceUsage",
     "assertions: [{name: a, type: resource_usage, vehicle: ugv1, max_memory_mb: 150}]\n"},
    {"LifecycleState",
     "assertions: [{name: a, type: lifecycle_state, vehicle: ugv1, node: bt_navigator, state: "
     "active, mode: always}]\n"},
    {"Always",
     "assertions: [{name: a, type: always, vehicle: ugv1, signals: {px: {metric: x}}, condition: "
     "px < 20}]\n"},
    {"Never",
     "assertions: [{name: a, type: never, signals: {r: {metric: rtf}}, condition: isnan(r)}]\n"},
    {"EventuallyForS",
     "assertions: [{name: a, type: eventually, vehicle: ugv1, signals: {lost: {topic: link_state, "
     "field: data}, speed: {topic: odom, field: twist.twist.linear.x}}, condition: not lost and "
     "abs(speed) < 0.05, after_s: 5s, for_s: 10s, within_s: 36s}]\n"},
    {"KpiPath", "kpis: [{name: k, type: path, vehicle: ugv1, target: {x: 1, y: 1}}]\n"},
    {"KpiMissionTime", "kpis: [{name: k, type: mission_time}]\n"},
    {"KpiDistance", "kpis: [{name: k, type: distance, vehicle: ugv1, to: {model: crate}}]\n"},
    {"KpiRate", "kpis: [{name: k, type: rate, topic: scan, vehicle: ugv1, window_s: 2}]\n"},
    {"KpiLatency", "kpis: [{name: k, type: latency, topic: scan}]\n"},
    {"KpiResources", "kpis: [{name: k, type: resources, vehicle: ugv1, container: vehicle}]\n"},
    {"KpiValue",
     "kpis: [{name: k, type: value, topic: cmd_vel, field: linear.x, count_if: value > 0}]\n"},
    {"NavigateToXYYaw",
     "timeline: [{action: navigate_to_pose, vehicle: ugv1, goal: {x: 1, y: 2, yaw: 0.5}}]\n"},
    {"CmdVelEvery",
     "timeline: [{action: cmd_vel, vehicle: ugv1, every: 100ms, until_s: 5, linear_x: 0.5, "
     "angular_z: -0.1, duration_s: 0.1}]\n"},
    {"SimPauseForAWhile", "timeline: [{action: sim.pause, at: 3, duration_s: 500ms}]\n"},
    {"SimStepBySteps", "timeline: [{action: sim.step, at: 1, steps: 100}]\n"},
    {"SpawnCylinder",
     "timeline: [{action: spawn_model, at: 1, model: barrel, shape: cylinder, radius_m: 0.3, "
     "length_m: 1, pose: {x: 3, y: 0}}]\n"},
    {"RemoveAfterSpawn",
     "timeline: [{action: spawn_model, name: s, model: crate_2, pose: goal_a}, {action: "
     "remove_model, after: s, model: crate_2}]\n"},
    {"WhenOnATopic",
     "timeline: [{action: sim.resume, when: {topic: /model/ugv1/odometry, field: "
     "twist.twist.linear.x, condition: value > 0.1}, until_s: 20}]\n"},
    {"OutputsRecordFile", "outputs: {record: run.mcap, topics: []}\n"},
};

INSTANTIATE_TEST_SUITE_P(EveryType, AcceptedTest, ::testing::ValuesIn(kAccepted),
                         [](const ::testing::TestParamInfo<Accepted>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace fieldproof::scenario
