// `fieldproof validate`, `schema`, `run --dry-run` and `run`, end to end through the CLI: the
// examples' verdicts and run directories, and the refusals (exit 2, nothing started).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <thread>

#include "integration/cli_test_util.hpp"

namespace fieldproof::integration {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const json* assertion(const json& run, const std::string& name) {
  for (const auto& a : run["assertions"]) {
    if (a["name"] == name) return &a;
  }
  return nullptr;
}

TEST(ValidateCli, AValidScenarioExitsZeroWithTheModeNote) {
  const auto r = run_cli("validate examples/scenarios/ugv_nav_to_goal.yaml");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("valid"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("note: time.mode sim"), std::string::npos) << r.out;
}

TEST(ValidateCli, AnUnknownKeyExitsTwoWithFileLineColumnAndPath) {
  const auto r = run_cli("validate tests/integration/data/unknown_key.yaml");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("unknown_key.yaml:6:5: vehicles[0].colour"), std::string::npos) << r.out;
}

TEST(ValidateCli, AStepThatIsNotAWholeNumberOfPhysicsStepsExitsTwo) {
  const auto r = run_cli("validate tests/integration/data/bad_step.yaml");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("bad_step.yaml:6:11: time.step_s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("physics step is 0.001 s"), std::string::npos) << r.out;
}

TEST(ValidateCli, AnUnknownGoalFrameExitsTwoOnce) {
  const auto r = run_cli("validate tests/integration/data/unknown_goal_frame.yaml");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("timeline[0].goal"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(1 error)"), std::string::npos) << r.out;
}

TEST(ValidateCli, AMissingWorldFileExitsTwo) {
  const auto r = run_cli("validate tests/integration/data/missing_world.yaml");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("missing_world.yaml:2:8: world"), std::string::npos) << r.out;
}

TEST(SchemaCli, PrintsTheJsonSchema) {
  const auto r = run_cli("schema");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json schema = json::parse(r.out);
  EXPECT_TRUE(schema.contains("$schema"));
  EXPECT_EQ(r.out, read_file("scenario.schema.json"));
}

TEST(DryRunCli, PrintsTheResolvedPlanAndStartsNothing) {
  const fs::path runs = fresh_runs_dir("dry_run");
  const auto r =
      run_cli("run examples/scenarios/ugv_nav_to_goal.yaml --dry-run --runs-dir " + runs.string(),
              /*stderr_too=*/false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json plan = json::parse(r.out);
  EXPECT_EQ(plan["world"]["physics_step_s"], 0.001);
  EXPECT_EQ(plan["world"]["real_time_factor"], 1.0);
  EXPECT_EQ(plan["seed"], 7);
  EXPECT_EQ(plan["seed_given"], true);
  EXPECT_EQ(plan["time"]["mode"], "sim");
  EXPECT_EQ(plan["time"]["target_rtf"], 1.0);
  EXPECT_EQ(plan["time"]["timeout_s"], 180.0);
  ASSERT_EQ(plan["vehicles"].size(), 1u);
  EXPECT_EQ(plan["vehicles"][0]["spawn"], "dock");
  ASSERT_EQ(plan["timeline"].size(), 1u);
  EXPECT_EQ(plan["timeline"][0]["label"], "drive_ahead");
  EXPECT_EQ(plan["timeline"][0]["at_s"], 2.0);
  ASSERT_EQ(plan["assertions"].size(), 3u);
  EXPECT_EQ(plan["assertions"][0]["resolved"]["target"]["x"], 10.0);
  EXPECT_FALSE(fs::exists(runs));
}

TEST(DryRunCli, ASeedOverrideIsShown) {
  const auto s = run_cli("run examples/scenarios/ugv_nav_to_goal.yaml --dry-run --seed 42", false);
  ASSERT_EQ(s.exit_code, 0) << s.out;
  EXPECT_EQ(json::parse(s.out)["seed"], 42);
}

TEST(DryRunCli, ARefusalOfTheWorldExitsTwo) {
  const auto r = run_cli("run tests/integration/data/bad_step.yaml --dry-run");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("time.step_s"), std::string::npos) << r.out;
}

TEST(RunCli, UgvNavToGoalPassesWithItsRecord) {
  const fs::path runs = fresh_runs_dir("to_goal");
  const auto r = run_cli("run examples/scenarios/ugv_nav_to_goal.yaml --max-rtf 0 --runs-dir " +
                         runs.string() + " --run-id a");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("PASS"), std::string::npos) << r.out;
  const fs::path dir = runs / "a";
  for (const char* f : {"scenario.yaml", "engine.log", "samples.jsonl", "assertions.jsonl"}) {
    EXPECT_TRUE(fs::exists(dir / f)) << f;
  }
  EXPECT_EQ(read_file(dir / "scenario.yaml"), read_file("examples/scenarios/ugv_nav_to_goal.yaml"));
  const json run = run_json(dir);
  EXPECT_EQ(run["status"], "passed");
  EXPECT_EQ(run["verdict"], "PASS");
  EXPECT_EQ(run["exit_code"], 0);
  EXPECT_EQ(run["seed"], 7);
  EXPECT_EQ(run["seed_given"], true);
  EXPECT_EQ(run["clock"]["mode"], "sim");
  EXPECT_GT(run["clock"]["sim_elapsed_s"].get<double>(), 10.0);
  EXPECT_EQ(run["timeline"][0]["status"], "succeeded");
  for (const char* name : {"reached_goal", "no_collision", "arrived_in_time"}) {
    const json* a = assertion(run, name);
    ASSERT_NE(a, nullptr) << name;
    EXPECT_EQ((*a)["status"], "passed") << name << ": " << (*a)["reason"];
  }
  EXPECT_EQ((*assertion(run, "reached_goal"))["evidence"]["excerpt"].size(), 6u);
  // Poses at 10 Hz and the clock once a second.
  const std::string samples = read_file(dir / "samples.jsonl");
  EXPECT_NE(samples.find(R"({"kind":"pose","model":"ugv1","sim":0.1,)"), std::string::npos);
  EXPECT_NE(samples.find(R"("kind":"clock")"), std::string::npos);
}

TEST(RunCli, UgvFleetDrivesThreeVehiclesToTheirGoalsKeptApart) {
  const fs::path runs = fresh_runs_dir("fleet");
  const auto r = run_cli("run examples/scenarios/ugv_fleet.yaml --max-rtf 0 --runs-dir " +
                         runs.string() + " --run-id f");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json run = run_json(runs / "f");
  EXPECT_EQ(run["verdict"], "PASS");
  EXPECT_EQ(run["vehicles"].size(), 3u);
  for (const char* name : {"ugv1_arrives", "ugv2_arrives", "ugv3_arrives", "ugv1_keeps_apart",
                           "ugv2_keeps_apart", "ugv3_keeps_apart", "fleet_mission"}) {
    const json* a = assertion(run, name);
    ASSERT_NE(a, nullptr) << name;
    EXPECT_EQ((*a)["status"], "passed") << name << ": " << (*a)["reason"];
  }
  ASSERT_EQ(run["timeline"].size(), 3u);
  for (const json& e : run["timeline"]) EXPECT_EQ(e["status"], "succeeded") << e;
  // Every vehicle's ground truth is sampled.
  const std::string samples = read_file(runs / "f" / "samples.jsonl");
  for (const char* v : {"ugv1", "ugv2", "ugv3"}) {
    EXPECT_NE(samples.find(std::string(R"("model":")") + v + "\""), std::string::npos) << v;
  }
}

TEST(RunCli, DepotPatrolVisitsBothGoalsInOrderAndComesBack) {
  const fs::path runs = fresh_runs_dir("patrol");
  const auto r = run_cli("run examples/scenarios/depot_patrol.yaml --max-rtf 0 --runs-dir " +
                         runs.string() + " --run-id p");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json run = run_json(runs / "p");
  EXPECT_EQ(run["verdict"], "PASS");
  for (const char* name : {"reached_goal_a", "home_again", "no_collision", "first_leg_in_time",
                           "stays_in_yard", "patrol_order"}) {
    const json* a = assertion(run, name);
    ASSERT_NE(a, nullptr) << name;
    EXPECT_EQ((*a)["status"], "passed") << name << ": " << (*a)["reason"];
  }
  // The after-chain: each leg starts when the previous one ended.
  ASSERT_EQ(run["timeline"].size(), 3u);
  EXPECT_TRUE(fs::exists(runs / "p" / "recording" / "recording.mcap"));
}

TEST(RunCli, UgvNavFailsOnTimeExitsOneNamingArrivedInTime) {
  const fs::path runs = fresh_runs_dir("fails_on_time");
  const auto r = run_cli(
      "run examples/scenarios/ugv_nav_fails_on_time.yaml --max-rtf 0 "
      "--runs-dir " +
      runs.string() + " --run-id a");
  ASSERT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("FAIL: assertion arrived_in_time failed"), std::string::npos) << r.out;
  const json run = run_json(runs / "a");
  EXPECT_EQ(run["status"], "failed");
  EXPECT_EQ(run["exit_code"], 1);
  EXPECT_NE(run["reason"].get<std::string>().find("arrived_in_time"), std::string::npos);
  EXPECT_EQ((*assertion(run, "arrived_in_time"))["status"], "failed");
  // Judged at the limit itself: 1 s after the drive's start at 2 s.
  EXPECT_EQ((*assertion(run, "arrived_in_time"))["t_s"], 3.0);
  EXPECT_EQ((*assertion(run, "arrived_in_time"))["sim_s"], 3.0);
  EXPECT_EQ((*assertion(run, "reached_goal"))["status"], "passed");
  EXPECT_EQ((*assertion(run, "no_collision"))["status"], "passed");
  // Verdicts in the order they resolved: the deadline first.
  const std::string lines = read_file(runs / "a" / "assertions.jsonl");
  EXPECT_EQ(json::parse(lines.substr(0, lines.find('\n')))["name"], "arrived_in_time");
}

TEST(RunCli, TheSameSeedGivesTheSameSamples) {
  const fs::path runs = fresh_runs_dir("same_seed");
  const std::string cmd =
      "run examples/scenarios/ugv_nav_fails_on_time.yaml --max-rtf 0 "
      "--runs-dir " +
      runs.string();
  ASSERT_EQ(run_cli(cmd + " --run-id a").exit_code, 1);
  ASSERT_EQ(run_cli(cmd + " --run-id b").exit_code, 1);
  // The clock and resource lines and every line's `wall` carry wall time; the rest must be
  // identical.
  const auto strip = [](const std::string& s) {
    std::istringstream in(s);
    std::string out;
    static const std::regex kWall(R"(,?"wall":[0-9.e+-]+)");
    for (std::string line; std::getline(in, line);) {
      if (line.find(R"("kind":"clock")") == std::string::npos &&
          line.find(R"("kind":"resources")") == std::string::npos) {
        out += std::regex_replace(line, kWall, "") + "\n";
      }
    }
    return out;
  };
  EXPECT_EQ(strip(read_file(runs / "a" / "samples.jsonl")),
            strip(read_file(runs / "b" / "samples.jsonl")));
}

TEST(RunCli, UgvLockstepPassesWithTheStackAsAProcess) {
  const fs::path runs = fresh_runs_dir("lockstep");
  const auto r = run_cli("run examples/scenarios/ugv_lockstep.yaml --max-rtf 0 --runs-dir " +
                         runs.string() + " --run-id a");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json run = run_json(runs / "a");
  EXPECT_EQ(run["status"], "passed");
  EXPECT_EQ(run["vehicles"][0]["stack"], "fieldproof-ugv-nav (process)");
  EXPECT_EQ(run["clock"]["mode"], "lockstep");
  EXPECT_EQ(run["clock"]["lockstep"]["step_s"], 0.1);
  EXPECT_EQ(run["clock"]["lockstep"]["vehicles"], json::array({"ugv1"}));
  EXPECT_GT(run["clock"]["lockstep"]["steps"].get<int>(), 400);
}

TEST(RunCli, TwoLockstepRunsWithTheStackAsAProcessGiveTheSameSamples) {
  const fs::path runs = fresh_runs_dir("lockstep_twice");
  const std::string cmd =
      "run examples/scenarios/ugv_lockstep.yaml --max-rtf 0 --runs-dir " + runs.string();
  ASSERT_EQ(run_cli(cmd + " --run-id a").exit_code, 0);
  ASSERT_EQ(run_cli(cmd + " --run-id b").exit_code, 0);
  const auto strip = [](const std::string& s) {
    std::istringstream in(s);
    std::string out;
    static const std::regex kWall(R"(,?"wall":[0-9.e+-]+)");
    for (std::string line; std::getline(in, line);) {
      if (line.find(R"("kind":"clock")") == std::string::npos &&
          line.find(R"("kind":"resources")") == std::string::npos) {
        out += std::regex_replace(line, kWall, "") + "\n";
      }
    }
    return out;
  };
  const std::string a = strip(read_file(runs / "a" / "samples.jsonl"));
  EXPECT_GT(a.size(), 10'000u);
  EXPECT_EQ(a, strip(read_file(runs / "b" / "samples.jsonl")));
}

TEST(RunCli, AStackThatCrashesEndsTheRunInErrorWithExitOne) {
  const fs::path runs = fresh_runs_dir("crash");
  const auto r =
      run_cli("run tests/integration/data/crashing_stack_lockstep.yaml --max-rtf 0 --runs-dir " +
              runs.string() + " --run-id a");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  const json run = run_json(runs / "a");
  EXPECT_EQ(run["status"], "error");
  EXPECT_NE(run["reason"].get<std::string>().find("exited with code 3"), std::string::npos)
      << run["reason"];
  EXPECT_EQ((*assertion(run, "reached_goal"))["status"], "skipped");
  EXPECT_NE(read_file(runs / "a" / "logs" / "ugv1.log").find("crashing_stack: giving up"),
            std::string::npos);
}

TEST(RunCli, SimPauseHoldsTheClockForItsWallDurationAndIsLeftOutOfTheRtf) {
  const fs::path runs = fresh_runs_dir("pause");
  const auto r = run_cli("run tests/integration/data/pause.yaml --max-rtf 0 --runs-dir " +
                         runs.string() + " --run-id a");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json run = run_json(runs / "a");
  EXPECT_GE(run["clock"]["paused_s"].get<double>(), 0.5);
  EXPECT_EQ(run["timeline"][1]["label"], "hold");
  EXPECT_EQ(run["timeline"][1]["status"], "ok");
  EXPECT_EQ(run["timeline"][2]["status"], "ok");
  const std::string log = read_file(runs / "a" / "engine.log");
  const auto pause = log.find(R"("event":"clock.pause")");
  const auto resume = log.find(R"("event":"clock.resume")");
  ASSERT_NE(pause, std::string::npos);
  ASSERT_NE(resume, std::string::npos);
  EXPECT_LT(pause, resume);
}

TEST(RunCli, AStackThatDiesMidRunEndsTheRunAtOnceNamingIt) {
  const fs::path runs = fresh_runs_dir("dies_mid_run");
  const auto r =
      run_cli("run tests/integration/data/dying_stack_lockstep.yaml --max-rtf 0 --runs-dir " +
                  runs.string() + " --run-id a",
              true, "REAL_UGV_NAV=" FIELDPROOF_BIN_DIR "/fieldproof-ugv-nav ");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  const json run = run_json(runs / "a");
  EXPECT_EQ(run["status"], "error");
  // Named by whichever notices first: the process watcher or the coordinator's lost connection.
  const std::string reason = run["reason"];
  EXPECT_TRUE(reason == "the stack of ugv1 exited with code 9" ||
              reason.find("ugv1_nav: lockstep: participant ugv1_nav (thread main) lost its "
                          "connection") == 0)
      << reason;
  // Well before the scenario's ack_timeout_s (30 s).
  EXPECT_LT(run["clock"]["wall_elapsed_s"].get<double>(), 20.0);
  EXPECT_GE(run["clock"]["sim_elapsed_s"].get<double>(), 1.0);  // killed after the drive began
  EXPECT_EQ(run["timeline"][0]["status"], "cancelled");
}

TEST(RunCli, AnAfterEntryStartsTheMomentItsPredecessorEndsOkAndIsSkippedOtherwise) {
  const fs::path runs = fresh_runs_dir("after");
  const auto r = run_cli("run tests/integration/data/after.yaml --max-rtf 0 --runs-dir " +
                         runs.string() + " --run-id a");
  // The rejected goal is a failed action: the run ends failed, naming it.
  ASSERT_EQ(r.exit_code, 1) << r.out;
  const json run = run_json(runs / "a");
  EXPECT_EQ(run["reason"].get<std::string>().rfind(
                "timeline entry into_crate (navigate_to_pose) ended rejected", 0),
            0u)
      << run["reason"];
  const json tl = run["timeline"];
  ASSERT_EQ(tl.size(), 4u);
  EXPECT_EQ(tl[0]["ended_s"], 1.55);
  EXPECT_EQ(tl[1]["label"], "turn");
  EXPECT_EQ(tl[1]["started_s"], 1.55);
  EXPECT_EQ(tl[1]["status"], "ok");
  EXPECT_EQ(tl[2]["status"], "rejected");
  EXPECT_EQ(tl[3]["label"], "never");
  EXPECT_EQ(tl[3]["status"], "skipped");
  EXPECT_EQ(tl[3]["detail"], "into_crate ended rejected");
}

TEST(RunCli, RealtimeHeldAtRealTimeIsLocked) {
  const fs::path runs = fresh_runs_dir("realtime_locked");
  const auto r = run_cli("run tests/integration/data/realtime.yaml --runs-dir " + runs.string() +
                         " --run-id a");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json clock = run_json(runs / "a")["clock"];
  EXPECT_EQ(clock["mode"], "realtime");
  EXPECT_EQ(clock["verdict"], "locked");
  EXPECT_LE(clock["max_abs_drift_s"].get<double>(), 0.5);
  EXPECT_GE(clock["rtf"]["windows"].get<int>(), 1);
}

TEST(RunCli, RealtimeThatLosesTheLockFailsWithOnDriftFail) {
  const fs::path runs = fresh_runs_dir("realtime_drifted");
  // Unpaced, the simulated time runs far ahead of the wall clock.
  const auto r = run_cli("run tests/integration/data/realtime.yaml --max-rtf 0 --runs-dir " +
                         runs.string() + " --run-id a");
  ASSERT_EQ(r.exit_code, 1) << r.out;
  const json run = run_json(runs / "a");
  EXPECT_EQ(run["status"], "failed");
  EXPECT_EQ(run["reason"].get<std::string>().rfind("real-time lock lost", 0), 0u) << run["reason"];
  EXPECT_EQ(run["clock"]["verdict"], "drifted");
}

TEST(RunCli, UgvRealtimeWithOnDriftWarnKeepsTheAssertionsVerdictWhenTheLockIsLost) {
  const fs::path runs = fresh_runs_dir("realtime_warn");
  // Unpaced, the lock is lost on purpose: on_drift warn records it and the assertions decide.
  const auto r = run_cli("run examples/scenarios/ugv_realtime.yaml --max-rtf 0 --runs-dir " +
                         runs.string() + " --run-id w");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json run = run_json(runs / "w");
  EXPECT_EQ(run["verdict"], "PASS");
  EXPECT_EQ(run["clock"]["mode"], "realtime");
  EXPECT_EQ(run["clock"]["on_drift"], "warn");
  EXPECT_EQ(run["clock"]["verdict"], "drifted");
  const json* reached = assertion(run, "reached_goal");
  ASSERT_NE(reached, nullptr);
  EXPECT_EQ((*reached)["status"], "passed");
  EXPECT_NE(read_file(runs / "w" / "engine.log").find(R"("event":"clock.drifted")"),
            std::string::npos);
}

TEST(RunCli, ARunIdWithAPathSeparatorIsRefused) {
  const fs::path runs = fresh_runs_dir("bad_id");
  const auto r = run_cli("run examples/scenarios/ugv_nav_to_goal.yaml --runs-dir " + runs.string() +
                         " --run-id a/b");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("path separator"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(runs / "a"));
}

TEST(RunCli, ARunIdWithDotDotIsRefused) {
  const fs::path runs = fresh_runs_dir("dotdot_id");
  const auto r = run_cli("run examples/scenarios/ugv_nav_to_goal.yaml --runs-dir " + runs.string() +
                         " --run-id ..");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("'..'"), std::string::npos) << r.out;
}

TEST(RunCli, AnExistingRunDirectoryIsNeverOverwritten) {
  const fs::path runs = fresh_runs_dir("existing");
  fs::create_directories(runs / "a");
  std::ofstream(runs / "a" / "keep.txt") << "mine";
  const auto r = run_cli("run examples/scenarios/ugv_nav_to_goal.yaml --runs-dir " + runs.string() +
                         " --run-id a");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("never overwritten"), std::string::npos) << r.out;
  EXPECT_EQ(read_file(runs / "a" / "keep.txt"), "mine");
  EXPECT_FALSE(fs::exists(runs / "a" / "run.json"));
}

TEST(RunCli, AnInvalidScenarioStartsNothing) {
  const fs::path runs = fresh_runs_dir("invalid");
  const auto r = run_cli("run tests/integration/data/unknown_key.yaml --runs-dir " + runs.string());
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_FALSE(fs::exists(runs));
}

TEST(RunCli, ASeedOutOfRangeIsRefused) {
  const auto r = run_cli("run examples/scenarios/ugv_nav_to_goal.yaml --dry-run --seed 2147483648");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("2^31-1"), std::string::npos) << r.out;
}

TEST(RunCli, TheTimeoutEndsTheRunWithExitOne) {
  const fs::path runs = fresh_runs_dir("timeout");
  const auto r = run_cli("run tests/integration/data/timeout.yaml --runs-dir " + runs.string() +
                         " --run-id a");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  const json run = run_json(runs / "a");
  EXPECT_EQ(run["status"], "timeout");
  EXPECT_EQ((*assertion(run, "reached_goal"))["status"], "skipped");
}

TEST(RunCli, SigintEndsTheRunInterruptedWithExit130) {
  const fs::path runs = fresh_runs_dir("sigint");
  // Interrupt once the drive has started (the engine logs it).
  ASSERT_EQ(interrupt_run_once_the_drive_started(runs), 130);
  const json run = run_json(runs / "a");
  EXPECT_EQ(run["status"], "interrupted");
  EXPECT_EQ(run["exit_code"], 130);
  EXPECT_EQ((*assertion(run, "reached_goal"))["status"], "skipped");
  EXPECT_EQ(run["timeline"][0]["status"], "cancelled");
}

const json* entry(const json& run, const std::string& label) {
  for (const auto& e : run["timeline"]) {
    if (e["label"] == label) return &e;
  }
  return nullptr;
}

// Every field of run.json's clock that the time document lists, in every mode.
void expect_clock_fields(const json& clock) {
  for (const char* k : {"mode", "target_rtf", "tolerance", "max_drift_s", "on_drift",
                        "origin_sim_s", "sim_elapsed_s", "wall_elapsed_s", "paused_s", "drift_s",
                        "max_abs_drift_s", "rtf", "violations", "verdict", "lockstep"}) {
    EXPECT_TRUE(clock.contains(k)) << k << " in " << clock.dump();
  }
  for (const char* k : {"windows", "mean", "min", "max"}) {
    EXPECT_TRUE(clock["rtf"].contains(k)) << "rtf." << k;
  }
}

TEST(RunCli, UgvSimControlPausesStepsAndResumesOnTheRtfMetric) {
  const fs::path runs = fresh_runs_dir("sim_control");
  const auto r = run_cli("run examples/scenarios/ugv_sim_control.yaml --max-rtf 0 --runs-dir " +
                         runs.string() + " --run-id a");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json run = run_json(runs / "a");
  EXPECT_EQ(run["status"], "passed");
  // The world advanced exactly 100 physics steps, then exactly 0.5 s, while paused at 5 s.
  EXPECT_EQ((*entry(run, "pause"))["ended_s"], 5.0);
  EXPECT_EQ((*entry(run, "step_steps"))["started_s"], 5.0);
  EXPECT_EQ((*entry(run, "step_steps"))["ended_s"], 5.1);
  EXPECT_EQ((*entry(run, "step_time"))["started_s"], 5.1);
  EXPECT_EQ((*entry(run, "step_time"))["ended_s"], 5.6);
  // Resumed by the `when` on the rtf metric, where the steps left the world.
  const json& resume = *entry(run, "resume_when_stalled");
  EXPECT_EQ(resume["trigger"], "when");
  EXPECT_EQ(resume["status"], "ok");
  EXPECT_EQ(resume["started_s"], 5.6);
  EXPECT_EQ((*entry(run, "short_pause"))["status"], "ok");
  EXPECT_EQ((*assertion(run, "resumed"))["status"], "passed");
  const json& clock = run["clock"];
  expect_clock_fields(clock);
  EXPECT_EQ(clock["mode"], "sim");
  // The pause until the rtf window (about 2 s of wall) and the 1 s short pause.
  EXPECT_GE(clock["paused_s"].get<double>(), 1.9);
  EXPECT_EQ(clock["verdict"], nullptr);
  EXPECT_EQ(clock["max_drift_s"], nullptr);
  EXPECT_EQ(clock["lockstep"], nullptr);
  const std::string log = read_file(runs / "a" / "engine.log");
  for (const char* ev :
       {"clock.mode", "clock.pause", "clock.step", "clock.resume", "action.triggered"}) {
    EXPECT_NE(log.find(std::string(R"("event":")") + ev + "\""), std::string::npos) << ev;
  }
  EXPECT_NE(read_file(runs / "a" / "clock.jsonl").find(R"("paused":true)"), std::string::npos);
}

TEST(RunCli, EveryRepeatsUntilItsUntilAndWhenStartsOnItsConditionOrIsSkippedAtUntil) {
  const fs::path runs = fresh_runs_dir("every_when");
  const auto r = run_cli("run tests/integration/data/every_when.yaml --max-rtf 0 --runs-dir " +
                         runs.string() + " --run-id a");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json run = run_json(runs / "a");
  const json& nudge = *entry(run, "nudge");
  EXPECT_EQ(nudge["trigger"], "every");
  EXPECT_EQ(nudge["occurrences"], 3);  // 0.5, 1.0 and 1.5 s; until_s 2 s is exclusive
  EXPECT_EQ(nudge["status"], "ok");
  const json& halt = *entry(run, "halt");
  EXPECT_EQ(halt["status"], "ok");
  EXPECT_GT(halt["started_s"].get<double>(), 1.0);
  EXPECT_LT(halt["started_s"].get<double>(), 10.0);
  // The odometry's forward speed passes 0.2 m/s during the nudges (a topic field).
  const json& odom = *entry(run, "on_odometry");
  EXPECT_EQ(odom["status"], "ok");
  EXPECT_GT(odom["started_s"].get<double>(), 0.5);
  EXPECT_LT(odom["started_s"].get<double>(), 2.0);
  EXPECT_EQ((*entry(run, "at_two_and_a_half"))["started_s"], 2.5);
  const json& never = *entry(run, "never");
  EXPECT_EQ(never["status"], "skipped");
  EXPECT_NE(never["detail"].get<std::string>().find("until_s 3 s passed"), std::string::npos)
      << never["detail"];
}

TEST(RunCli, SpawnModelPutsAnObstacleInTheWayAndRemoveModelTakesItAway) {
  const fs::path runs = fresh_runs_dir("spawn_remove");
  const auto r = run_cli("run tests/integration/data/spawn_remove.yaml --max-rtf 0 --runs-dir " +
                         runs.string() + " --run-id a");
  ASSERT_EQ(r.exit_code, 1) << r.out;
  const json run = run_json(runs / "a");
  for (const char* label : {"put_crate_a", "put_crate_b", "take_crate_b"}) {
    EXPECT_EQ((*entry(run, label))["status"], "ok") << label;
  }
  const json& hit = *assertion(run, "ugv1_clear");
  EXPECT_EQ(hit["status"], "failed");
  EXPECT_NE(hit["reason"].get<std::string>().find("crate_a"), std::string::npos) << hit["reason"];
  EXPECT_EQ((*assertion(run, "ugv2_clear"))["status"], "passed");
}

TEST(RunCli, AFailedAbortAssertionCancelsTheTimeline) {
  const fs::path runs = fresh_runs_dir("abort");
  const auto r = run_cli("run tests/integration/data/abort.yaml --max-rtf 0 --runs-dir " +
                         runs.string() + " --run-id a");
  ASSERT_EQ(r.exit_code, 1) << r.out;
  const json run = run_json(runs / "a");
  EXPECT_EQ(run["status"], "failed");
  const std::string reason = run["reason"];
  EXPECT_EQ(reason.rfind("assertion safe failed: ", 0), 0u) << reason;
  EXPECT_NE(reason.find("(on_fail: abort, the timeline was cancelled)"), std::string::npos)
      << reason;
  EXPECT_EQ((*entry(run, "put_crate"))["status"], "ok");
  EXPECT_EQ((*entry(run, "drive"))["status"], "cancelled");
  EXPECT_EQ((*entry(run, "later"))["status"], "skipped");
  EXPECT_EQ((*assertion(run, "far"))["status"], "skipped");
  // Cancelled at the collision, long before the drive's 10 s.
  EXPECT_LT(run["clock"]["sim_elapsed_s"].get<double>(), 5.0);
}

TEST(RunCli, TheRealtimeClockRecordHasTheDriftSettingsAndVerdict) {
  const fs::path runs = fresh_runs_dir("realtime_record");
  const auto r = run_cli("run tests/integration/data/realtime.yaml --max-rtf 0 --runs-dir " +
                         runs.string() + " --run-id a");
  ASSERT_EQ(r.exit_code, 1) << r.out;
  const json clock = run_json(runs / "a")["clock"];
  expect_clock_fields(clock);
  EXPECT_EQ(clock["mode"], "realtime");
  EXPECT_EQ(clock["on_drift"], "fail");
  EXPECT_EQ(clock["max_drift_s"], 0.5);
  EXPECT_EQ(clock["verdict"], "drifted");
  EXPECT_GT(clock["max_abs_drift_s"].get<double>(), 0.5);
  EXPECT_EQ(clock["lockstep"], nullptr);
  EXPECT_NE(read_file(runs / "a" / "engine.log").find(R"("event":"clock.drifted")"),
            std::string::npos);
}

TEST(RunCli, TheLockstepClockRecordCountsStepsHoldsAndWaits) {
  const fs::path runs = fresh_runs_dir("lockstep_record");
  // The stack in-process: the same lockstep, a tenth of the wall time of the process stack.
  const auto r =
      run_cli("run tests/integration/data/nav_lockstep_inprocess.yaml --max-rtf 0 --runs-dir " +
              runs.string() + " --run-id a");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json clock = run_json(runs / "a")["clock"];
  expect_clock_fields(clock);
  const json& ls = clock["lockstep"];
  for (const char* k : {"step_s", "vehicles", "origin_sim_s", "steps", "holds", "max_wait_s",
                        "commands", "timeout"}) {
    EXPECT_TRUE(ls.contains(k)) << k;
  }
  EXPECT_EQ(ls["origin_sim_s"], 0.0);
  EXPECT_NEAR(ls["steps"].get<double>(),
              clock["sim_elapsed_s"].get<double>() / ls["step_s"].get<double>(), 1.0);
  EXPECT_GE(ls["holds"].get<int>(), 1);  // the goal, sent with the world held at its at
  EXPECT_EQ(ls["commands"], 0);
  EXPECT_EQ(ls["timeout"], nullptr);
  EXPECT_EQ(clock["verdict"], nullptr);
  const std::string log = read_file(runs / "a" / "engine.log");
  for (const char* ev : {"clock.mode", "clock.agent", "clock.agents", "clock.locked"}) {
    EXPECT_NE(log.find(std::string(R"("event":")") + ev + "\""), std::string::npos) << ev;
  }
}

// Issue 5's "Bad input": each refused with its position, exit 2, nothing started.
struct Refusal {
  const char* file;
  const char* where;  // file:line:column: field path
};

class RefusalCli : public ::testing::TestWithParam<Refusal> {};

TEST_P(RefusalCli, ExitsTwoNamingThePositionAndStartsNothing) {
  const Refusal& c = GetParam();
  const fs::path runs = fresh_runs_dir(std::string("refusal_") + c.file);
  const auto r = run_cli("run tests/integration/data/" + std::string(c.file) + ".yaml --runs-dir " +
                         runs.string());
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find(c.where), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(runs));
}

INSTANTIATE_TEST_SUITE_P(
    BadInput, RefusalCli,
    ::testing::Values(Refusal{"realtime_rtf", "realtime_rtf.yaml:5:8: time.rtf"},
                      Refusal{"lockstep_pause", "lockstep_pause.yaml:9:5: timeline[0].action"},
                      Refusal{"unknown_vehicle", "unknown_vehicle.yaml:8:14: timeline[0].vehicle"},
                      Refusal{"unknown_action", "unknown_action.yaml:7:13: timeline[0].action"},
                      Refusal{"bad_duration", "bad_duration.yaml:9:9: timeline[0].at"},
                      Refusal{"bad_step", "bad_step.yaml:6:11: time.step_s"},
                      Refusal{"missing_world", "missing_world.yaml:2:8: world"}),
    [](const ::testing::TestParamInfo<Refusal>& i) { return std::string(i.param.file); });

}  // namespace
}  // namespace fieldproof::integration
