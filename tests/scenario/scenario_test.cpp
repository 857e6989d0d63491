// Loading and validating scenarios: every field's acceptance and refusal, with the exact
// file:line:column and field path of each message; defaults; the modes' refusals.
#include "fieldproof/scenario/scenario.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

namespace fieldproof::scenario {
namespace {

using ::testing::HasSubstr;

const std::filesystem::path kData =
    std::filesystem::path(FIELDPROOF_SOURCE_DIR) / "tests" / "scenario" / "data";

// The raw string's first newline is dropped so that line 1 is the first line written.
ValidationResult load(std::string_view yaml) {
  if (!yaml.empty() && yaml.front() == '\n') yaml.remove_prefix(1);
  return load_scenario_text(yaml, "s.yaml", kData);
}

// A minimal valid scenario followed by `extra` (which starts at line 7).
ValidationResult load_with(std::string_view extra) {
  std::string yaml =
      "name: t\n"
      "world: world.sdf\n"
      "vehicles:\n"
      "  - name: ugv1\n"
      "    spawn: dock\n"
      "    stack: {plugin: fieldproof_ugv_nav_plugin}\n";
  if (!extra.empty() && extra.front() == '\n') extra.remove_prefix(1);
  yaml += extra;
  return load_scenario_text(yaml, "s.yaml", kData);
}

std::string all_errors(const ValidationResult& r) { return r.format_errors(); }

bool has_error(const ValidationResult& r, const std::string& line) {
  for (const auto& e : r.errors) {
    if (e.to_string().rfind(line, 0) == 0) return true;
  }
  return false;
}

#define EXPECT_ERROR(r, prefix)                                         \
  EXPECT_TRUE(has_error((r), (prefix)))                                 \
      << "expected an error starting with\n  " << (prefix) << "\ngot\n" \
      << all_errors(r)

// ---- a complete file ------------------------------------------------------------------------

TEST(ScenarioLoad, FullFileValidates) {
  auto r = load_scenario_file(kData / "full.yaml");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  const Scenario& s = *r.scenario;
  EXPECT_EQ(s.name, "full");
  EXPECT_EQ(s.world, (kData / "world.sdf").lexically_normal());
  EXPECT_EQ(s.seed, 42);
  EXPECT_TRUE(s.seed_given);
  EXPECT_EQ(s.vehicles.size(), 2u);
  EXPECT_EQ(s.timeline.size(), 4u);
  EXPECT_EQ(s.assertions.size(), 5u);
  EXPECT_EQ(s.kpis.size(), 2u);
}

TEST(ScenarioLoad, TimeSectionIsReadExactly) {
  auto r = load_scenario_file(kData / "full.yaml");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  const TimeSection& t = r.scenario->time;
  EXPECT_EQ(t.mode, TimeMode::kLockstep);
  ASSERT_TRUE(t.rtf.has_value());
  EXPECT_EQ(*t.rtf, 2.0);
  EXPECT_EQ(t.tolerance, 0.2);
  EXPECT_EQ(t.step, milliseconds(50));
  EXPECT_EQ(t.ack_timeout, seconds(10));
  EXPECT_EQ(t.timeout, minutes(5));
  EXPECT_EQ(t.step_pos.line, 10);
  EXPECT_EQ(t.step_pos.column, 11);
}

TEST(ScenarioLoad, VehiclesAreRead) {
  auto r = load_scenario_file(kData / "full.yaml");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  const Vehicle& a = r.scenario->vehicles[0];
  EXPECT_EQ(a.name, "ugv1");
  EXPECT_EQ(a.spawn.frame, "dock");
  EXPECT_EQ(a.stack.kind, Stack::Kind::kPlugin);
  EXPECT_EQ(a.stack.plugin, "fieldproof_ugv_nav_plugin");
  EXPECT_EQ(a.stack.arguments, std::vector<std::string>{"--verbose"});
  ASSERT_NE(a.parameters.get("max_speed"), nullptr);
  EXPECT_EQ(a.parameters.get("max_speed")->number, 0.8);
  EXPECT_EQ(a.parameters.get("planner")->string, "astar");
  EXPECT_TRUE(a.parameters.get("replan")->boolean);
  EXPECT_EQ(a.parameters.get("retries")->integer, 3);
  const Vehicle& b = r.scenario->vehicles[1];
  EXPECT_EQ(b.model, "ugv");  // the default
  EXPECT_FALSE(b.spawn.is_frame());
  EXPECT_EQ(b.spawn.x, 1.5);
  EXPECT_EQ(b.spawn.y, -2.0);
  EXPECT_EQ(*b.spawn.yaw, 1.57);
  EXPECT_EQ(b.stack.kind, Stack::Kind::kCommand);
  EXPECT_EQ(b.stack.command, (std::vector<std::string>{"fieldproof-ugv-nav", "--vehicle", "ugv2"}));
}

TEST(ScenarioLoad, TimelineEntriesAreRead) {
  auto r = load_scenario_file(kData / "full.yaml");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  const auto& tl = r.scenario->timeline;
  EXPECT_EQ(tl[0].label, "drive");
  EXPECT_EQ(tl[0].at, seconds(2));
  EXPECT_EQ(tl[0].params.get("goal")->placement.frame, "goal_a");
  EXPECT_EQ(tl[1].label, "cmd_vel@1s");
  EXPECT_EQ(*tl[1].every, milliseconds(500));
  EXPECT_EQ(*tl[1].until, seconds(10));
  EXPECT_EQ(tl[1].params.get("linear_x")->number, 0.3);
  EXPECT_EQ(tl[1].params.get("angular_z")->number, 0.0);  // default filled in
  EXPECT_TRUE(tl[1].params.get("angular_z")->defaulted);
  EXPECT_EQ(*tl[2].after, "drive");
  ASSERT_TRUE(tl[3].when.has_value());
  EXPECT_EQ(tl[3].when->signal.metric, "sim_time");
  EXPECT_EQ(tl[3].when->condition, "value > 20");
}

TEST(ScenarioLoad, AssertionsKeepTheirParametersWithDefaults) {
  auto r = load_scenario_file(kData / "full.yaml");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  const AssertionSpec& reach = r.scenario->assertions[0];
  EXPECT_EQ(reach.type, "reach_pose");
  EXPECT_EQ(reach.vehicle, "ugv1");
  EXPECT_EQ(*reach.within, seconds(60));
  EXPECT_EQ(reach.params.get("tolerance_m")->number, 0.5);
  EXPECT_EQ(reach.on_fail, OnFail::kContinue);
  EXPECT_EQ(r.scenario->assertions[1].on_fail, OnFail::kAbort);
  EXPECT_EQ(r.scenario->assertions[1].params.get("max_s")->duration, seconds(45));
  EXPECT_EQ(r.scenario->assertions[2].params.get("mode")->string, "inside");
}

TEST(ScenarioLoad, OutputsAreRead) {
  auto r = load_scenario_file(kData / "full.yaml");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  EXPECT_TRUE(r.scenario->outputs.record);
  EXPECT_EQ(r.scenario->outputs.topics,
            (std::vector<std::string>{"/clock", "/model/ugv1/odometry"}));
}

// ---- defaults -------------------------------------------------------------------------------

TEST(ScenarioDefaults, TimeSectionDefaultsAsTheSeedDocument) {
  auto r = load_with("");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  const TimeSection& t = r.scenario->time;
  EXPECT_EQ(t.mode, TimeMode::kSim);
  EXPECT_FALSE(t.rtf.has_value());
  EXPECT_EQ(t.tolerance, 0.1);
  EXPECT_EQ(t.max_drift, seconds(1));
  EXPECT_EQ(t.on_drift, OnDrift::kFail);
  EXPECT_EQ(t.step, milliseconds(100));
  EXPECT_EQ(t.ack_timeout, seconds(30));
  EXPECT_EQ(t.timeout, minutes(10));
}

TEST(ScenarioDefaults, TargetRtfFollowsTheMode) {
  TimeSection t;
  EXPECT_EQ(t.target_rtf(0.5), 0.5);  // sim: the world's own
  t.mode = TimeMode::kLockstep;
  EXPECT_EQ(t.target_rtf(0.5), 1.0);  // lockstep: pace cap 1.0
  t.rtf = 3.0;
  EXPECT_EQ(t.target_rtf(0.5), 3.0);
}

TEST(ScenarioDefaults, AbsentSeedIsZeroAndFlagged) {
  auto r = load_with("");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  EXPECT_EQ(r.scenario->seed, 0);
  EXPECT_FALSE(r.scenario->seed_given);
  EXPECT_THAT(r.notes.back(), HasSubstr("seed: absent"));
}

TEST(ScenarioDefaults, OutputsDoNotRecordByDefault) {
  auto r = load_with("");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  EXPECT_FALSE(r.scenario->outputs.record);
  EXPECT_TRUE(r.scenario->outputs.topics.empty());
}

TEST(ScenarioDefaults, UnnamedEntryIsLabelledActionAtTime) {
  auto r = load_with(R"(
timeline:
  - {action: sim.pause, at: 2.5s, duration_s: 1}
  - {action: sim.resume}
)");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  EXPECT_EQ(r.scenario->timeline[0].label, "sim.pause@2.5s");
  EXPECT_EQ(r.scenario->timeline[1].label, "sim.resume@0s");
}

// ---- the seed -------------------------------------------------------------------------------

TEST(ScenarioSeed, LargestAccepted) {
  auto r = load_with("seed: 2147483647\n");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  EXPECT_EQ(r.scenario->seed, 2147483647);
}

TEST(ScenarioSeed, SourceIsRecorded) {
  auto r = load_with("seed: 3\n");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  EXPECT_EQ(r.scenario->seed_source, SeedSource::kScenario);
  auto d = load_with("");
  ASSERT_TRUE(d.ok()) << all_errors(d);
  EXPECT_EQ(d.scenario->seed_source, SeedSource::kDefault);
}

TEST(ScenarioSeed, CommandLineOverrides) {
  auto r = load_with("seed: 3\n");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  EXPECT_FALSE(override_seed(*r.scenario, 99).has_value());
  EXPECT_EQ(r.scenario->seed, 99);
  EXPECT_TRUE(r.scenario->seed_given);
  EXPECT_EQ(r.scenario->seed_source, SeedSource::kCommandLine);
}

TEST(ScenarioSeed, CommandLineOutOfRangeRefusedAndNothingChanges) {
  auto r = load_with("seed: 3\n");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  auto e = override_seed(*r.scenario, 2147483648);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(*e, "--seed: expected an integer from 0 to 2147483647, got 2147483648");
  EXPECT_EQ(r.scenario->seed, 3);
  EXPECT_TRUE(override_seed(*r.scenario, -1).has_value());
}

TEST(ScenarioSeed, NegativeRefused) {
  auto r = load_with("seed: -1\n");
  EXPECT_ERROR(r, "s.yaml:7:7: seed: expected an integer from 0 to 2147483647, got \"-1\"");
}

TEST(ScenarioSeed, PastTheCIntRefused) {
  auto r = load_with("seed: 2147483648\n");
  EXPECT_ERROR(r, "s.yaml:7:7: seed: expected an integer from 0 to 2147483647");
}

TEST(ScenarioSeed, FractionRefused) {
  auto r = load_with("seed: 7.5\n");
  EXPECT_ERROR(r, "s.yaml:7:7: seed: expected an integer");
}

// ---- unknown keys ---------------------------------------------------------------------------

TEST(ScenarioUnknownKeys, TopLevel) {
  auto r = load_with("timelime: []\n");
  EXPECT_ERROR(r,
               "s.yaml:7:1: timelime: unknown key 'timelime'; expected one of name, "
               "description, world, seed, time, map, vehicles, network, timeline");
}

TEST(ScenarioUnknownKeys, InTime) {
  auto r = load_with("time:\n  mode: sim\n  rate: 2\n");
  EXPECT_ERROR(r, "s.yaml:9:3: time.rate: unknown key 'rate'");
}

TEST(ScenarioUnknownKeys, InAnAssertionNamesTheTypesKeys) {
  auto r = load_with(R"(
assertions:
  - name: a
    type: reach_pose
    vehicle: ugv1
    target: dock
    tolerance: 0.3
)");
  EXPECT_ERROR(r,
               "s.yaml:12:5: assertions[0].tolerance: unknown key 'tolerance'; expected one "
               "of name, type, on_fail, vehicle, target, tolerance_m");
}

TEST(ScenarioUnknownKeys, InATimelineEntry) {
  auto r = load_with(R"(
timeline:
  - action: cmd_vel
    vehicle: ugv1
    speed: 1
)");
  EXPECT_ERROR(r, "s.yaml:10:5: timeline[0].speed: unknown key 'speed'");
}

TEST(ScenarioUnknownKeys, DuplicateKeyRefused) {
  auto r = load_with("seed: 1\nseed: 2\n");
  EXPECT_ERROR(r, "s.yaml:8:1: seed: duplicate key 'seed'");
}

// ---- required keys and types ----------------------------------------------------------------

TEST(ScenarioRequired, MissingWorldNamesTheDocument) {
  auto r = load(R"(
name: t
vehicles: [{name: ugv1, spawn: dock}]
)");
  EXPECT_ERROR(r, "s.yaml:1:1: world: missing required key 'world'");
}

TEST(ScenarioRequired, MissingVehicleSpawn) {
  auto r = load(R"(
name: t
world: world.sdf
vehicles:
  - name: ugv1
)");
  EXPECT_ERROR(r, "s.yaml:4:5: vehicles[0].spawn: missing required key 'spawn'");
}

TEST(ScenarioRequired, EmptyVehicleListRefused) {
  auto r = load("name: t\nworld: world.sdf\nvehicles: []\n");
  EXPECT_ERROR(r, "s.yaml:3:11: vehicles: expected at least 1 item, got 0");
}

TEST(ScenarioRequired, MissingWorldFileNamed) {
  auto r = load("name: t\nworld: nowhere.sdf\nvehicles: [{name: ugv1, spawn: dock}]\n");
  EXPECT_ERROR(r, "s.yaml:2:8: world: the world file ");
  EXPECT_THAT(all_errors(r), HasSubstr("nowhere.sdf does not exist"));
}

TEST(ScenarioTypes, VehicleNameMustBeAName) {
  auto r = load("name: t\nworld: world.sdf\nvehicles: [{name: UGV-1, spawn: dock}]\n");
  EXPECT_ERROR(r, "s.yaml:3:19: vehicles[0].name: expected a name of lower case letters");
}

TEST(ScenarioTypes, ListWhereAMappingIsExpected) {
  auto r = load_with("time: [sim]\n");
  EXPECT_ERROR(r, "s.yaml:7:7: time: expected a mapping");
}

TEST(ScenarioTypes, QuotedNumberRefused) {
  auto r = load_with("time:\n  tolerance: \"0.1\"\n");
  EXPECT_ERROR(r, "s.yaml:8:14: time.tolerance: expected a number of at least 0, got \"0.1\"");
}

TEST(ScenarioTypes, NegativeToleranceRefused) {
  auto r = load_with("time:\n  tolerance: -0.1\n");
  EXPECT_ERROR(r, "s.yaml:8:14: time.tolerance: expected a number of at least 0");
}

// ---- the time section -----------------------------------------------------------------------

TEST(ScenarioTime, ModeNamesWhatIsAccepted) {
  auto r = load_with("time:\n  mode: fast\n");
  EXPECT_ERROR(r, "s.yaml:8:9: time.mode: expected one of sim, realtime, lockstep, got \"fast\"");
}

TEST(ScenarioTime, OnDriftNamesWhatIsAccepted) {
  auto r = load_with("time:\n  mode: realtime\n  on_drift: ignore\n");
  EXPECT_ERROR(r, "s.yaml:9:13: time.on_drift: expected one of fail, warn");
}

TEST(ScenarioTime, DurationsAcceptDecimalUnitsAndBareSeconds) {
  auto r = load_with("time:\n  mode: realtime\n  max_drift_s: 250ms\n  timeout_s: 10m\n");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  EXPECT_EQ(r.scenario->time.max_drift, milliseconds(250));
  EXPECT_EQ(r.scenario->time.timeout, minutes(10));
  auto s = load_with("time:\n  mode: lockstep\n  step_s: 0.1\n  ack_timeout_s: 30\n");
  ASSERT_TRUE(s.ok()) << all_errors(s);
  EXPECT_EQ(s.scenario->time.step.ns(), 100'000'000);
  EXPECT_EQ(s.scenario->time.ack_timeout, seconds(30));
}

TEST(ScenarioTime, BadDurationSaysWhatIsAccepted) {
  auto r = load_with("time:\n  timeout_s: soon\n");
  EXPECT_ERROR(r, "s.yaml:8:14: time.timeout_s: expected a duration like 0.1, 250ms, 10m");
}

TEST(ScenarioTime, ZeroStepRefused) {
  auto r = load_with("time:\n  mode: lockstep\n  step_s: 0\n");
  EXPECT_ERROR(r,
               "s.yaml:9:11: time.step_s: expected a duration like 0.1, 250ms, 10m greater "
               "than 0");
}

TEST(ScenarioTime, NullRtfIsTheDefault) {
  auto r = load_with("time:\n  rtf: null\n");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  EXPECT_FALSE(r.scenario->time.rtf.has_value());
}

TEST(ScenarioTime, RealtimeRefusesAnRtfOtherThanOne) {
  auto r = load_with("time:\n  mode: realtime\n  rtf: 2.0\n");
  EXPECT_ERROR(r, "s.yaml:9:8: time.rtf: realtime mode runs at a real-time factor of 1.0 only");
}

TEST(ScenarioTime, RealtimeAcceptsRtfOne) {
  auto r = load_with("time:\n  mode: realtime\n  rtf: 1.0\n");
  EXPECT_TRUE(r.ok()) << all_errors(r);
}

TEST(ScenarioTime, LockstepRefusesSimPause) {
  auto r = load_with(R"(
time: {mode: lockstep}
timeline:
  - {action: cmd_vel, vehicle: ugv1, at: 1}
  - {action: sim.pause, at: 2}
)");
  EXPECT_ERROR(r, "s.yaml:10:5: timeline[1].action: sim.pause is refused in lockstep mode");
}

TEST(ScenarioTime, LockstepRefusesSimResumeAndSimStep) {
  auto r = load_with(R"(
time: {mode: lockstep}
timeline:
  - {action: sim.resume, at: 2}
  - {action: sim.step, at: 3, steps: 10}
)");
  EXPECT_ERROR(r, "s.yaml:9:5: timeline[0].action: sim.resume is refused in lockstep mode");
  EXPECT_ERROR(r, "s.yaml:10:5: timeline[1].action: sim.step is refused in lockstep mode");
}

TEST(ScenarioTime, SimModeAllowsPauseResumeStep) {
  auto r = load_with(R"(
timeline:
  - {action: sim.pause, at: 1}
  - {action: sim.step, at: 2, steps: 10}
  - {action: sim.step, at: 3, duration_s: 0.5}
  - {action: sim.resume, at: 4}
)");
  EXPECT_TRUE(r.ok()) << all_errors(r);
}

TEST(ScenarioTime, KeysOfAnotherModeAreWarnedAbout) {
  auto r = load_with("time:\n  mode: sim\n  step_s: 0.2\n");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0].to_string(),
            "s.yaml:9:11: time.step_s: step_s applies in lockstep mode only; ignored in sim mode");
}

TEST(ScenarioTime, NoteSaysWhatTheModeMeans) {
  auto r = load_with("time: {mode: lockstep, step_s: 0.05}\n");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  EXPECT_THAT(r.notes[0], HasSubstr("time.mode lockstep: the world waits for every vehicle"));
  EXPECT_THAT(r.notes[0], HasSubstr("steps of 0.05 s"));
  auto s = load_with("time: {mode: realtime, on_drift: warn}\n");
  ASSERT_TRUE(s.ok()) << all_errors(s);
  EXPECT_THAT(s.notes[0], HasSubstr("is a warning (on_drift: warn)"));
}

// ---- checks against the world ---------------------------------------------------------------

TEST(ScenarioWorld, StepThatIsAWholeNumberOfPhysicsStepsAccepted) {
  auto r = load_with("time: {mode: lockstep, step_s: 0.1}\n");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  EXPECT_TRUE(validate_against_world(*r.scenario, milliseconds(1)).empty());
}

TEST(ScenarioWorld, StepThatIsNotAWholeNumberOfPhysicsStepsRefused) {
  auto r = load_with("time:\n  mode: lockstep\n  step_s: 0.0015\n");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  auto d = validate_against_world(*r.scenario, milliseconds(1));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].to_string(),
            "s.yaml:9:11: time.step_s: 0.0015 s is not a whole number of physics steps (the "
            "world's physics step is 0.001 s; expected a multiple such as 0.001 or 0.002)");
}

TEST(ScenarioWorld, SimStepDurationMustBeWholePhysicsSteps) {
  auto r = load_with(R"(
timeline:
  - {action: sim.step, at: 1, duration_s: 2.5ms}
)");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  auto d = validate_against_world(*r.scenario, milliseconds(2));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_THAT(d[0].to_string(), HasSubstr("s.yaml:8:43: timeline[0].duration_s: 0.0025 s"));
}

TEST(ScenarioWorld, UnknownFrameRefusedWithItsPosition) {
  auto r = load_with(R"(
timeline:
  - {action: navigate_to_pose, vehicle: ugv1, at: 1, goal: goal_z}
)");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  WorldFacts w{milliseconds(1), {"dock", "goal_a"}, {}};
  auto d = validate_against_world(*r.scenario, w);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].to_string(),
            "s.yaml:8:60: timeline[0].goal: the world has no frame 'goal_z'; its frames are "
            "dock, goal_a");
}

// ---- vehicles and stacks --------------------------------------------------------------------

TEST(ScenarioVehicles, StackIsPluginOrCommandNotBoth) {
  auto r = load(R"(
name: t
world: world.sdf
vehicles:
  - name: ugv1
    spawn: dock
    stack: {plugin: fieldproof_ugv_nav_plugin, command: [a]}
)");
  EXPECT_ERROR(r,
               "s.yaml:6:48: vehicles[0].stack.command: only one of plugin, command may be "
               "given (plugin is)");
}

TEST(ScenarioVehicles, EmptyCommandRefused) {
  auto r = load(R"(
name: t
world: world.sdf
vehicles:
  - name: ugv1
    spawn: dock
    stack: {command: []}
)");
  EXPECT_ERROR(r, "s.yaml:6:22: vehicles[0].stack.command: expected at least 1 item");
}

TEST(ScenarioVehicles, DuplicateNameRefused) {
  auto r = load(
      "name: t\nworld: world.sdf\nvehicles: [{name: a, spawn: dock}, "
      "{name: a, spawn: dock}]\n");
  EXPECT_ERROR(r, "s.yaml:3:36: vehicles[1].name: duplicate vehicle name 'a'");
}

TEST(ScenarioPlacement, XWithoutYRefused) {
  auto r = load("name: t\nworld: world.sdf\nvehicles: [{name: a, spawn: {x: 1}}]\n");
  EXPECT_ERROR(r, "s.yaml:3:30: vehicles[0].spawn.x: 'x' needs 'y' as well");
}

TEST(ScenarioPlacement, FrameAndCoordinatesRefused) {
  auto r = load(
      "name: t\nworld: world.sdf\nvehicles: [{name: a, spawn: {frame: dock, x: 1, "
      "y: 2}}]\n");
  EXPECT_ERROR(r, "s.yaml:3:43: vehicles[0].spawn.x: only one of frame, x may be given");
}

TEST(ScenarioPlacement, FrameMappingAccepted) {
  auto r = load("name: t\nworld: world.sdf\nvehicles: [{name: a, spawn: {frame: dock}}]\n");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  EXPECT_EQ(r.scenario->vehicles[0].spawn.frame, "dock");
}

// ---- the timeline ---------------------------------------------------------------------------

TEST(ScenarioTimeline, UnknownActionListsTheActions) {
  auto r = load_with("timeline:\n  - {action: teleport, at: 1}\n");
  EXPECT_ERROR(r,
               "s.yaml:8:14: timeline[0].action: unknown action \"teleport\"; expected one of "
               "navigate_to_pose, cmd_vel, sim.pause, sim.resume, sim.step, spawn_model, "
               "link.down, link.up, remove_model, fault.drop_topic, fault.delay_topic, "
               "fault.freeze_sensor, fault.kill_stack");
}

TEST(ScenarioTimeline, BadAtSaysWhatIsAccepted) {
  auto r = load_with("timeline:\n  - {action: sim.pause, at: -1}\n");
  EXPECT_ERROR(r,
               "s.yaml:8:29: timeline[0].at: expected a duration like 0.1, 250ms, 10m, got \"-1\" "
               "(a sign is not accepted");
}

TEST(ScenarioTimeline, NavigateNeedsAVehicleAndAGoal) {
  auto r = load_with("timeline:\n  - {action: navigate_to_pose, at: 1}\n");
  EXPECT_ERROR(r, "s.yaml:8:5: timeline[0].vehicle: missing required key 'vehicle'");
  EXPECT_ERROR(r, "s.yaml:8:5: timeline[0].goal: missing required key 'goal'");
}

TEST(ScenarioTimeline, UnknownVehicleListsTheVehicles) {
  auto r = load_with("timeline:\n  - {action: cmd_vel, vehicle: ugv9, at: 1}\n");
  EXPECT_ERROR(r,
               "s.yaml:8:32: timeline[0].vehicle: unknown vehicle 'ugv9'; the scenario's "
               "vehicles are ugv1");
}

TEST(ScenarioTimeline, SimStepNeedsExactlyStepsOrDuration) {
  auto r = load_with("timeline:\n  - {action: sim.step, at: 1}\n");
  EXPECT_ERROR(r, "s.yaml:8:5: timeline[0]: expected exactly one of steps, duration_s, got none");
  auto s = load_with("timeline:\n  - {action: sim.step, at: 1, steps: 2, duration_s: 1}\n");
  EXPECT_ERROR(
      s,
      "s.yaml:8:41: timeline[0].duration_s: only one of steps, duration_s may be given (steps is)");
}

TEST(ScenarioTimeline, SimPauseDurationIsOptional) {
  auto r = load_with("timeline:\n  - {action: sim.pause, at: 1, duration_s: 2}\n");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  EXPECT_EQ(r.scenario->timeline[0].params.get("duration_s")->duration, seconds(2));
}

TEST(ScenarioTimeline, OneTriggerOnly) {
  auto r = load_with(R"(
timeline:
  - action: sim.pause
    at: 1
    when: {metric: rtf, condition: value < 0.05}
)");
  EXPECT_ERROR(r, "s.yaml:8:5: timeline[0]: give one trigger: at, after or when");
}

TEST(ScenarioTimeline, UntilMustFollowAt) {
  auto r = load_with(R"(
timeline:
  - {action: cmd_vel, vehicle: ugv1, at: 5, every: 1, until_s: 5}
)");
  EXPECT_ERROR(r, "s.yaml:8:64: timeline[0].until_s: until_s (5 s) must be later than at (5 s)");
}

TEST(ScenarioTimeline, UntilNeedsEveryOrWhen) {
  auto r = load_with("timeline:\n  - {action: sim.resume, at: 1, until_s: 5}\n");
  EXPECT_ERROR(r, "s.yaml:8:42: timeline[0].until_s: until_s ends a repetition");
}

TEST(ScenarioTimeline, AfterMustNameAnEntry) {
  auto r = load_with("timeline:\n  - {action: sim.resume, after: nothing}\n");
  EXPECT_ERROR(r, "s.yaml:8:33: timeline[0].after: unknown timeline entry 'nothing'");
}

TEST(ScenarioTimeline, AfterChainsMustNotLoop) {
  auto r = load_with(R"(
timeline:
  - {action: sim.resume, name: a, after: b}
  - {action: sim.resume, name: b, after: a}
)");
  EXPECT_ERROR(r, "s.yaml:8:5: timeline[0].after: the after chain of 'a' loops back to 'a'");
}

TEST(ScenarioTimeline, WhenWithATopicNeedsAField) {
  auto r = load_with(R"(
timeline:
  - action: sim.resume
    when: {topic: /clock, condition: value > 1}
)");
  EXPECT_ERROR(r, "s.yaml:9:12: timeline[0].when.topic: 'topic' needs 'field' as well");
}

TEST(ScenarioTimeline, WhenOnAVehicleMetricNeedsAVehicle) {
  auto r = load_with(R"(
timeline:
  - action: sim.resume
    when: {metric: x, condition: value > 1}
)");
  EXPECT_ERROR(r, "s.yaml:9:20: timeline[0].when.metric: the metric x is a vehicle's");
}

TEST(ScenarioTimeline, DuplicateLabelsAskForNames) {
  auto r = load_with(R"(
timeline:
  - {action: sim.resume, at: 1}
  - {action: sim.resume, at: 1}
)");
  EXPECT_ERROR(r, "s.yaml:9:5: timeline[1]: duplicate timeline entry 'sim.resume@1s'");
}

// ---- assertions and KPIs --------------------------------------------------------------------

TEST(ScenarioAssertions, UnknownTypeListsTheTypes) {
  auto r = load_with("assertions:\n  - {name: a, type: reaches}\n");
  EXPECT_ERROR(r,
               "s.yaml:8:21: assertions[0].type: unknown assertion type \"reaches\"; expected "
               "one of reach_pose, within_time");
}

TEST(ScenarioAssertions, OnFailNamesWhatIsAccepted) {
  auto r =
      load_with("assertions:\n  - {name: a, type: no_collision, vehicle: ugv1, on_fail: stop}\n");
  EXPECT_ERROR(r, "s.yaml:8:59: assertions[0].on_fail: expected one of continue, abort");
}

TEST(ScenarioAssertions, WithinTimeMustNameAnEntry) {
  auto r = load_with("assertions:\n  - {name: a, type: within_time, action: drive, max_s: 5}\n");
  EXPECT_ERROR(r,
               "s.yaml:8:42: assertions[0].action: unknown timeline entry 'drive'; the "
               "entries are none");
}

TEST(ScenarioAssertions, WithinMustFollowAfter) {
  auto r = load_with(R"(
assertions:
  - {name: a, type: geofence, vehicle: ugv1, region: {circle: {x: 0, y: 0, radius_m: 5}},
     after_s: 10, within_s: 5}
)");
  EXPECT_ERROR(r,
               "s.yaml:9:29: assertions[0].within_s: within_s (5 s) must be later than "
               "after_s (10 s)");
}

TEST(ScenarioAssertions, RegionNeedsExactlyOneShape) {
  auto r = load_with("assertions:\n  - {name: a, type: geofence, vehicle: ugv1, region: {}}\n");
  EXPECT_ERROR(r,
               "s.yaml:8:54: assertions[0].region: expected exactly one of polygon, circle, "
               "box, got none");
}

TEST(ScenarioAssertions, PolygonNeedsThreeVertices) {
  auto r = load_with(
      "assertions:\n  - {name: a, type: geofence, vehicle: ugv1, region: {polygon: [[0, 0], "
      "[1, 0]]}}\n");
  EXPECT_ERROR(r, "s.yaml:8:64: assertions[0].region.polygon: expected at least 3 items, got 2");
}

TEST(ScenarioAssertions, ResourceUsageNeedsALimit) {
  auto r = load_with("assertions:\n  - {name: a, type: resource_usage, vehicle: ugv1}\n");
  EXPECT_ERROR(r,
               "s.yaml:8:5: assertions[0]: expected at least one of max_cpu_pct, "
               "max_memory_mb");
}

TEST(ScenarioAssertions, MinDistanceToExactlyOne) {
  auto r = load_with(
      "assertions:\n  - {name: a, type: min_distance, vehicle: ugv1, to: {model: crate, "
      "vehicle: ugv1}, min_m: 1}\n");
  EXPECT_ERROR(r,
               "s.yaml:8:69: assertions[0].to.vehicle: only one of vehicle, model, target may be "
               "given (model is)");
}

TEST(ScenarioAssertions, SequenceStepMustReferToAnAssertion) {
  auto r = load_with(R"(
assertions:
  - name: seq
    type: sequence
    steps:
      - {assertion: nope}
)");
  EXPECT_ERROR(r,
               "s.yaml:11:21: assertions[0].steps[0].assertion: unknown assertion 'nope'; "
               "the assertions are seq");
}

TEST(ScenarioAssertions, DuplicateNamesAcrossAssertionsAndKpisRefused) {
  auto r = load_with(R"(
assertions:
  - {name: m, type: mission_time, max_s: 10}
kpis:
  - {name: m, type: mission_time}
)");
  EXPECT_ERROR(r, "s.yaml:10:5: kpis[0].name: duplicate KPI name 'm'");
}

TEST(ScenarioAssertions, UnknownKpiTypeListsTheCollectors) {
  auto r = load_with("kpis:\n  - {name: k, type: speed}\n");
  EXPECT_ERROR(r,
               "s.yaml:8:21: kpis[0].type: unknown KPI collector type \"speed\"; expected one "
               "of path, mission_time, distance, rate, latency, resources, link, value");
}

// ---- conditions in a scenario ---------------------------------------------------------------

TEST(ScenarioConditions, RefusedConstructPointsAtItsColumnInAPlainScalar) {
  auto r = load_with(R"(
assertions:
  - name: a
    type: topic_value
    topic: odom
    field: twist
    condition: value.linear > 0
)");
  EXPECT_ERROR(r,
               "s.yaml:12:21: assertions[0].condition: in the condition \"value.linear > 0\", "
               "column 6: attribute access");
}

TEST(ScenarioConditions, RefusedConstructPointsAtItsColumnInAQuotedScalar) {
  auto r = load_with(R"(
assertions:
  - name: a
    type: topic_value
    topic: odom
    field: twist
    condition: "value ** 2 < 1"
)");
  EXPECT_ERROR(r,
               "s.yaml:12:23: assertions[0].condition: in the condition \"value ** 2 < 1\", "
               "column 7: '**' (power) is not allowed");
}

TEST(ScenarioConditions, BlockScalarErrorPointsAtTheScalar) {
  auto r = load_with(R"(
assertions:
  - name: a
    type: topic_value
    topic: odom
    field: twist
    condition: |
      value > 1 and
      value.x < 2
)");
  EXPECT_ERROR(r,
               "s.yaml:12:16: assertions[0].condition: in the condition \"value > 1 and\n"
               "value.x < 2\n\", column 20: attribute access");
}

TEST(ScenarioConditions, CountIfIsChecked) {
  auto r = load_with(
      "kpis:\n  - {name: k, type: value, topic: cmd_vel, field: linear.x, count_if: "
      "speed > 0}\n");
  EXPECT_ERROR(r,
               "s.yaml:8:71: kpis[0].count_if: in the condition \"speed > 0\", column 1: "
               "unknown name 'speed'");
}

TEST(ScenarioConditions, SignalsNamesAreReadable) {
  auto r = load_with(R"(
assertions:
  - name: stops
    type: never
    vehicle: ugv1
    signals:
      speed: {topic: odom, field: twist.twist.linear.x}
    condition: value > 1
)");
  EXPECT_ERROR(r,
               "s.yaml:13:16: assertions[0].condition: in the condition \"value > 1\", "
               "column 1: unknown name 'value'; the condition may read speed");
}

TEST(ScenarioConditions, EverySignalMustBeRead) {
  auto r = load_with(R"(
assertions:
  - name: stops
    type: always
    vehicle: ugv1
    signals:
      speed: {topic: odom, field: twist.twist.linear.x}
      lost: {topic: link, field: data}
    condition: speed < 1
)");
  EXPECT_ERROR(r,
               "s.yaml:14:16: assertions[0].condition: the condition does not read the "
               "signal 'lost'");
}

TEST(ScenarioConditions, SignalNamedLikeAFunctionRefused) {
  auto r = load_with(R"(
assertions:
  - name: stops
    type: always
    signals:
      abs: {metric: rtf}
    condition: abs > 0
)");
  EXPECT_ERROR(r, "s.yaml:11:7: assertions[0].signals.abs: 'abs' cannot name a signal");
}

TEST(ScenarioConditions, WhenConditionIsChecked) {
  auto r = load_with(R"(
timeline:
  - action: sim.resume
    when: {metric: rtf, condition: "value <"}
)");
  EXPECT_ERROR(r,
               "s.yaml:9:44: timeline[0].when.condition: in the condition \"value <\", "
               "column 8: the condition ends where a value is expected");
}

// ---- the file as a whole --------------------------------------------------------------------

TEST(ScenarioFile, AllErrorsAreCollectedInFileOrder) {
  auto r = load(R"(
name: t
world: world.sdf
seed: -3
time:
  mode: fast
  timeout_s: never
vehicles: [{name: ugv1, spawn: dock, colour: red}]
)");
  ASSERT_EQ(r.errors.size(), 4u) << all_errors(r);
  EXPECT_EQ(r.errors[0].pos.line, 3);
  EXPECT_EQ(r.errors[1].pos.line, 5);
  EXPECT_EQ(r.errors[2].pos.line, 6);
  EXPECT_EQ(r.errors[3].pos.line, 7);
  EXPECT_FALSE(r.scenario.has_value());
}

TEST(ScenarioFile, YamlSyntaxErrorHasLineAndColumn) {
  auto r = load("name: t\nworld: [a, b\nvehicles: []\n");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_THAT(r.errors[0].to_string(), HasSubstr("s.yaml:"));
  EXPECT_THAT(r.errors[0].message, HasSubstr("YAML syntax error"));
  EXPECT_GT(r.errors[0].pos.line, 0);
  EXPECT_GT(r.errors[0].pos.column, 0);
}

TEST(ScenarioFile, TabIndentationIsASyntaxErrorWithPosition) {
  auto r = load("name: t\nworld: w\nvehicles:\n\t- name: a\n");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].pos.line, 4);
}

TEST(ScenarioFile, DeeplyNestedBracketsRefusedBeforeParsing) {
  auto r = load("name: " + std::string(100000, '['));
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].to_string(),
            "s.yaml:1:71: the file nests more than 64 brackets deep; a scenario never needs that");
}

TEST(ScenarioFile, DeeplyIndentedBlocksRefusedBeforeParsing) {
  std::string yaml = "name: t\nx:\n";
  for (int i = 0; i < 1000; ++i) yaml += "- ";
  yaml += "1\n";
  auto r = load(yaml);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].pos.line, 3);
  EXPECT_THAT(r.errors[0].message, HasSubstr("columns of indentation"));
}

TEST(ScenarioFile, SeveralDocumentsRefused) {
  auto r = load("name: a\n---\nname: b\n");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].to_string(),
            "s.yaml:3:1: the file holds 2 YAML documents; a scenario is one document (remove ---)");
}

// yaml-cpp 0.7's LoadAll never returns on a ',' at the top level (found by the scenario loader's
// fuzzer: tests/fuzz/fuzz_corpus/scenario_loader/regression_hang_*.yaml): a located error.
TEST(ScenarioFile, AFlowIndicatorAtTheTopLevelIsASyntaxErrorNotAHang) {
  const char* kStuck = "YAML syntax error: the parser cannot go past this point";
  for (const char* text :
       {",# x\na: 1\n", ",\n", "[a]\n,\n", "name: a\n---\nname: b\n---\n,\n"}) {
    auto r = load(text);
    ASSERT_EQ(r.errors.size(), 1u) << text;
    EXPECT_NE(r.errors[0].to_string().find(kStuck), std::string::npos) << r.errors[0].to_string();
  }
  EXPECT_EQ(load(",# x\na: 1\n").errors[0].to_string().rfind("s.yaml:1:1: ", 0), 0u);
  EXPECT_EQ(load("[a]\n,\n").errors[0].to_string().rfind("s.yaml:2:1: ", 0), 0u);
}

TEST(ScenarioFile, MalformedInputsGiveErrorsNeverACrash) {
  const char* inputs[] = {
      "\x01\x02\xff\xfe",
      "name: &a [*a]",
      "name: t\nworld: world.sdf\nvehicles: [{name: a, spawn: {x: .nan, y: 1}}]\n",
      "name: t\nworld: world.sdf\nvehicles: {name: a}\n",
      "name: t\nworld: world.sdf\nvehicles: [[[]]]\n",
      "name: t\nworld: world.sdf\nvehicles: [{name: a, spawn: dock}]\nassertions: [7, null, []]\n",
      "name: t\nworld: world.sdf\nvehicles: [{name: a, spawn: dock}]\ntimeline: [{action: [1]}]\n",
      "name: t\nworld: world.sdf\nvehicles: [{name: a, spawn: dock}]\nkpis: [{type: {a: 1}}]\n",
      "? [a, b]\n: c\n",
      "name: t\n<<: {world: world.sdf}\n",
      "\"unterminated",
      "name: t\nworld: world.sdf\nvehicles: [{name: a, spawn: dock}]\ntime: {step_s: "
      "99999999999h}\n",
  };
  for (const char* in : inputs) {
    auto r = load(in);
    EXPECT_FALSE(r.ok()) << in;
    EXPECT_FALSE(r.errors.empty()) << in;
  }
}

TEST(ScenarioFile, EmptyFileRefused) {
  auto r = load("");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_THAT(r.errors[0].message, HasSubstr("the file is empty"));
}

TEST(ScenarioFile, DocumentMustBeAMapping) {
  auto r = load("- a\n- b\n");
  EXPECT_ERROR(r, "s.yaml:1:1: expected a mapping (scenario: name, description, world");
}

TEST(ScenarioFile, MissingFileIsAnError) {
  auto r = load_scenario_file(kData / "does_not_exist.yaml");
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_THAT(r.errors[0].to_string(), HasSubstr("cannot read the scenario file"));
}

TEST(ScenarioFile, RecordFileNameMustBePlain) {
  auto r = load_with("outputs: {record: ../x.mcap}\n");
  EXPECT_ERROR(r, "s.yaml:7:19: outputs.record: expected true, false or a plain file name");
}

TEST(ScenarioFile, PluginsResolveAgainstTheScenarioDirectory) {
  auto r = load_with("plugins: [lib/visits.so]\n");
  ASSERT_TRUE(r.ok()) << all_errors(r);
  ASSERT_EQ(r.scenario->plugins.size(), 1u);
  EXPECT_EQ(r.scenario->plugins[0], (kData / "lib/visits.so").lexically_normal());
}

}  // namespace
}  // namespace fieldproof::scenario
