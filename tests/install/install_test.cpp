// The installed SDK, used as a team outside the tree would: the
// fixtures installed this build tree into FIELDPROOF_SDK_PREFIX and built the installed copy of
// examples/stacks/cpp_goal_follower against it into FIELDPROOF_FOLLOWER_BUILD. Everything below
// uses the prefix only: its headers, its pkg-config file, its fieldproof and its scenarios.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "shell_util.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kPrefix = FIELDPROOF_SDK_PREFIX;
const fs::path kFollowerBuild = FIELDPROOF_FOLLOWER_BUILD;
const fs::path kTmp = FIELDPROOF_TEST_TMP;

using Result = fieldproof::shell::ShellResult;

Result sh(const std::string& command) { return fieldproof::shell::run_shell(command + " 2>&1"); }

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string quote(const fs::path& p) { return "'" + p.string() + "'"; }

// The flags a user of the installed .pc gets; -std=c++20 after them (ignition-msgs8.pc says
// -std=c++17).
std::string pkg_config(const std::string& what) {
  const Result r = sh("PKG_CONFIG_PATH=" + quote(kPrefix / "lib/pkgconfig") + " pkg-config " +
                      what + " fieldproof");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  std::string flags = r.out;
  while (!flags.empty() && (flags.back() == '\n' || flags.back() == ' ')) flags.pop_back();
  return flags;
}

// A runs directory of the test's own (short: a run directory holds a Unix socket).
fs::path fresh_dir(const std::string& name) {
  const fs::path d = kTmp / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

TEST(InstalledSdk, EveryInstalledHeaderCompilesAloneWithThePrefixOnly) {
  const std::string cflags = pkg_config("--cflags");
  ASSERT_NE(cflags.find("-I" + (kPrefix / "lib/pkgconfig/../../include").string()),
            std::string::npos)
      << cflags;
  ASSERT_EQ(cflags.find(FIELDPROOF_SOURCE_DIR "/include"), std::string::npos) << cflags;
  std::vector<fs::path> headers;
  for (const auto& e : fs::recursive_directory_iterator(kPrefix / "include")) {
    const std::string ext = e.path().extension().string();
    if (e.is_regular_file() && (ext == ".hpp" || ext == ".h")) headers.push_back(e.path());
  }
  ASSERT_GE(headers.size(), 20u) << "too few headers installed under " << kPrefix;
  // Two compilers at a time (the headers that pull in protobuf take seconds each).
  std::vector<Result> results(headers.size());
  const auto compile = [&](size_t first) {
    for (size_t i = first; i < headers.size(); i += 2) {
      results[i] = sh(std::string(FIELDPROOF_CXX) + " " + cflags +
                      " -std=c++20 -Wall -Wextra -fsyntax-only -x c++ " + quote(headers[i]));
    }
  };
  std::thread other(compile, 1);
  compile(0);
  other.join();
  for (size_t i = 0; i < headers.size(); ++i) {
    EXPECT_EQ(results[i].exit_code, 0) << headers[i] << " does not compile alone:\n"
                                       << results[i].out;
  }
  // The stack plugin ABI is plain C.
  const Result c = sh(std::string(FIELDPROOF_C) + " -std=c11 -Wall -Wextra -Wpedantic -I" +
                      quote(kPrefix / "include") + " -fsyntax-only -x c " +
                      quote(kPrefix / "include/fieldproof/stacks/plugin_api.hpp"));
  EXPECT_EQ(c.exit_code, 0) << c.out;
}

TEST(InstalledSdk, NoInstalledTextFileNamesTheSourceOrBuildTree) {
  size_t checked = 0;
  for (const auto& e : fs::recursive_directory_iterator(kPrefix)) {
    const std::string ext = e.path().extension().string();
    if (!e.is_regular_file() ||
        (ext != ".cmake" && ext != ".pc" && ext != ".h" && ext != ".hpp" && ext != ".txt")) {
      continue;
    }
    ++checked;
    const std::string text = read_file(e.path());
    // The build tree (and the prefix, which lies in it) is inside the source tree, so this also
    // catches a file that is not relocatable.
    EXPECT_EQ(text.find(FIELDPROOF_SOURCE_DIR), std::string::npos)
        << e.path() << " names " << FIELDPROOF_SOURCE_DIR;
  }
  EXPECT_GE(checked, 25u);
}

TEST(InstalledSdk, TheFollowerWasBuiltAgainstThePrefixAlone) {
  const std::string cache = read_file(kFollowerBuild / "CMakeCache.txt");
  EXPECT_NE(cache.find("fieldproof_DIR:PATH=" + (kPrefix / "lib/cmake/fieldproof").string()),
            std::string::npos)
      << "find_package(fieldproof) did not find the installed package";
  const std::string commands = read_file(kFollowerBuild / "compile_commands.json");
  ASSERT_FALSE(commands.empty());
  EXPECT_NE(commands.find((kPrefix / "include").string()), std::string::npos) << commands;
  EXPECT_EQ(commands.find(FIELDPROOF_SOURCE_DIR "/include"), std::string::npos) << commands;
  EXPECT_EQ(commands.find(FIELDPROOF_BUILD_DIR "/src"), std::string::npos) << commands;
  const std::string ninja = read_file(kFollowerBuild / "build.ninja");
  EXPECT_NE(ninja.find((kPrefix / "lib/libfieldproof_lockstep_zmq.a").string()), std::string::npos);
  EXPECT_EQ(ninja.find(FIELDPROOF_BUILD_DIR "/src"), std::string::npos);
  EXPECT_TRUE(fs::exists(kFollowerBuild / "cpp_goal_follower"));
}

TEST(InstalledSdk, PkgConfigAloneBuildsAndLinksTheFollower) {
  const fs::path src = kPrefix / "share/fieldproof/examples/stacks/cpp_goal_follower";
  const fs::path out = fresh_dir("pc_build") / "cpp_goal_follower";
  const Result r =
      sh(std::string(FIELDPROOF_CXX) + " " + pkg_config("--cflags") + " -std=c++20 -O1 " +
         quote(src / "main.cpp") + " " + quote(src / "follower.cpp") + " -o " + quote(out) + " " +
         pkg_config("--libs"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  // It runs: without the engine's environment it says what is missing and exits 2.
  const Result run = sh("env -u FIELDPROOF_VEHICLE " + quote(out));
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_NE(run.out.find("FIELDPROOF_VEHICLE is not set"), std::string::npos) << run.out;
}

TEST(InstalledSdk, FindPackageRefusesAnotherMinorVersion) {
  const fs::path dir = fresh_dir("version_check");
  std::ofstream(dir / "CMakeLists.txt") << "cmake_minimum_required(VERSION 3.16)\n"
                                           "project(v LANGUAGES CXX)\n"
                                           "find_package(fieldproof 0.3 CONFIG REQUIRED)\n";
  const Result r =
      sh("cmake -S " + quote(dir) + " -B " + quote(dir / "b") +
         " -DCMAKE_PREFIX_PATH=" + quote(kPrefix) + " -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF");
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("0.2.0"), std::string::npos) << r.out;
}

// The installed engine finds the installed reference stack (the program beside it in bin/, the
// plugin in lib/fieldproof/stacks) with no path from the build tree.
TEST(InstalledSdk, TheInstalledEngineRunsTheReferenceStackAsAProgram) {
  const fs::path runs = fresh_dir("runs_ref");
  const Result r =
      sh("env -u FIELDPROOF_PLUGIN_PATH PATH=/usr/bin:/bin " + quote(kPrefix / "bin/fieldproof") +
         " run " + quote(kPrefix / "share/fieldproof/examples/scenarios/ugv_lockstep.yaml") +
         " --max-rtf 0 --runs-dir " + quote(runs) + " --run-id a");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("PASS"), std::string::npos) << r.out;
}

TEST(InstalledSdk, TheInstalledEngineRunsTheReferenceStackAsAPlugin) {
  const fs::path runs = fresh_dir("runs_plugin");
  const Result r =
      sh("env -u FIELDPROOF_PLUGIN_PATH PATH=/usr/bin:/bin " + quote(kPrefix / "bin/fieldproof") +
         " run " + quote(kPrefix / "share/fieldproof/examples/scenarios/ugv_nav_to_goal.yaml") +
         " --max-rtf 0 --runs-dir " + quote(runs) + " --run-id a");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("PASS"), std::string::npos) << r.out;
}

TEST(CppGoalFollower, AnUnknownParameterExitsTwoNamingIt) {
  const fs::path dir = fresh_dir("bad_params");
  std::ofstream(dir / "params.json") << R"({"max_linear": 0.5, "max_speed": 2})";
  const Result r =
      sh("FIELDPROOF_VEHICLE=ugv1 FIELDPROOF_COORDINATOR=ipc:///nonexistent "
         "FIELDPROOF_PARAMS_FILE=" +
         quote(dir / "params.json") + " " + quote(kFollowerBuild / "cpp_goal_follower"));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("params.json: parameters.max_speed: unknown parameter"), std::string::npos)
      << r.out;
}

// Runs an installed scenario with the installed fieldproof, the follower found on PATH.
struct ScenarioRun {
  Result result;
  json record;
};

// examples/scenarios/cpp_goal_follower_<variant>.yaml, as installed.
// `record`: the run directory whose run.json is read ("a", or "a-a" for the first of the
// pair --check-determinism runs).
ScenarioRun run_scenario(const std::string& variant, const std::string& extra = "",
                         const std::string& record = "a") {
  const std::string scenario = "cpp_goal_follower_" + variant + ".yaml";
  const fs::path runs = fresh_dir("runs_" + variant);
  ScenarioRun r;
  r.result =
      sh("PATH=" + quote(kFollowerBuild) + ":\"$PATH\" " + quote(kPrefix / "bin/fieldproof") +
         " run " + quote(kPrefix / "share/fieldproof/examples/scenarios" / scenario) +
         " --runs-dir " + quote(runs) + " --run-id a " + extra);
  const fs::path record_file = runs / record / "run.json";
  if (fs::exists(record_file)) r.record = json::parse(read_file(record_file));
  return r;
}

// Until the engine's stack hosts land the engine refuses other programs.
#define SKIP_IF_THE_ENGINE_HAS_NO_STACK_HOSTS(run)                                        \
  if ((run).result.exit_code == 2 &&                                                      \
      (run).result.out.find("only fieldproof-ugv-nav is started") != std::string::npos) { \
    GTEST_SKIP() << "this engine starts only fieldproof-ugv-nav as a process (the stack " \
                    "hosts of issue 11 item 1 have not landed)";                          \
  }

void expect_every_assertion_passed(const ScenarioRun& run) {
  ASSERT_EQ(run.result.exit_code, 0) << run.result.out;
  ASSERT_TRUE(run.record.is_object()) << run.result.out;
  EXPECT_EQ(run.record["verdict"], "PASS") << run.result.out;
  ASSERT_EQ(run.record["assertions"].size(), 4u);
  for (const json& a : run.record["assertions"]) {
    EXPECT_EQ(a["status"], "passed") << a["name"] << ": " << a["reason"];
  }
  EXPECT_EQ(run.record["timeline"][0]["status"], "succeeded") << run.record["timeline"];
}

TEST(CppGoalFollower, SimDrivesRoundTheCrateToGoalA) {
  const ScenarioRun run = run_scenario("sim", "--max-rtf 0");
  SKIP_IF_THE_ENGINE_HAS_NO_STACK_HOSTS(run);
  expect_every_assertion_passed(run);
}

// Run twice (--check-determinism): the follower is deterministic given its inputs, so the two
// ordered message streams are identical.
TEST(CppGoalFollower, LockstepDrivesRoundTheCrateToGoalAIdenticallyTwice) {
  const ScenarioRun run = run_scenario("lockstep", "--max-rtf 0 --check-determinism", "a-a");
  SKIP_IF_THE_ENGINE_HAS_NO_STACK_HOSTS(run);
  expect_every_assertion_passed(run);
  EXPECT_NE(run.result.out.find("IDENTICAL"), std::string::npos) << run.result.out;
}

TEST(CppGoalFollower, RealtimeDrivesRoundTheCrateToGoalA) {
  const ScenarioRun run = run_scenario("realtime");
  SKIP_IF_THE_ENGINE_HAS_NO_STACK_HOSTS(run);
  expect_every_assertion_passed(run);
}

// The second robot, found where the SDK installs its models (share/fieldproof/models): the
// installed fieldproof resolves model://fieldproof_tug with no resource path set.
TEST(CppGoalFollower, DrivesTheTugFromTheInstalledModelsToGoalA) {
  ASSERT_TRUE(fs::exists(kPrefix / "share/fieldproof/models/fieldproof_tug/model.sdf"));
  ASSERT_TRUE(fs::exists(kPrefix / "share/fieldproof/models/fieldproof_ugv/model.config"));
  const ScenarioRun run = run_scenario("tug", "--max-rtf 0");
  SKIP_IF_THE_ENGINE_HAS_NO_STACK_HOSTS(run);
  expect_every_assertion_passed(run);
}

TEST(CppGoalFollower, WithoutAvoidanceItStopsShortOfTheCrateAndTheRunFails) {
  const ScenarioRun run = run_scenario("blocked", "--max-rtf 0");
  SKIP_IF_THE_ENGINE_HAS_NO_STACK_HOSTS(run);
  EXPECT_EQ(run.result.exit_code, 1) << run.result.out;
  ASSERT_TRUE(run.record.is_object()) << run.result.out;
  EXPECT_EQ(run.record["verdict"], "FAIL");
  std::map<std::string, std::string> status;
  for (const json& a : run.record["assertions"]) status[a["name"]] = a["status"];
  EXPECT_EQ(status["follower_active"], "passed");
  // The aborted drive is a failed action: it ends the run, naming it; within_time on it fails
  // with it, the assertions still pending are skipped (docs/assertions.md).
  EXPECT_EQ(run.record["reason"].get<std::string>().rfind(
                "timeline entry drive (navigate_to_pose) ended aborted", 0),
            0u)
      << run.record["reason"];
  EXPECT_EQ(status["reached_goal"], "skipped");
  EXPECT_EQ(status["no_collision"], "skipped");
  EXPECT_EQ(status["arrived_in_time"], "failed");
  // The evidence: the goal was aborted, with the follower's reason.
  const json& drive = run.record["timeline"][0];
  EXPECT_EQ(drive["status"], "aborted") << drive;
  EXPECT_NE(drive["detail"].get<std::string>().find("blocked by an obstacle"), std::string::npos)
      << drive;
}

}  // namespace
