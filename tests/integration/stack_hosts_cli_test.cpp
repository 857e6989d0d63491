// Any program or stack plugin as a vehicle's stack, as a user runs it: validate and run agree on
// what is valid, a program gets the vehicle's environment, and what is not a stack is refused at
// validate with file:line:column (exit 2), before anything starts.
#include <signal.h>
#include <sys/types.h>

#include <string>

#include "integration/cli_test_util.hpp"

namespace fieldproof::integration {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kData = "tests/integration/data/stacks/";
const std::string kBadPlugins = "FIELDPROOF_PLUGIN_PATH=" FIELDPROOF_BAD_STACKS " ";

struct Refusal {
  const char* file;
  const char* env;
  const char* where;  // file:line:column: field
  const char* what;
};

class StackRefusedAtValidate : public ::testing::TestWithParam<Refusal> {};

TEST_P(StackRefusedAtValidate, ValidateAndRunBothExitTwoNamingTheLineAndWhatIsWrong) {
  const Refusal& c = GetParam();
  const std::string file = kData + c.file;
  const auto v = run_cli("validate " + file, true, c.env);
  EXPECT_EQ(v.exit_code, 2) << v.out;
  EXPECT_NE(v.out.find(file + ":" + c.where), std::string::npos) << v.out;
  EXPECT_NE(v.out.find(c.what), std::string::npos) << v.out;
  const fs::path runs = fresh_runs_dir(std::string("refused_") + c.file);
  const auto r = run_cli("run " + file + " --runs-dir " + runs.string(), true, c.env);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find(c.what), std::string::npos) << r.out;
  // Nothing started: no run directory was made.
  EXPECT_TRUE(!fs::exists(runs) || fs::is_empty(runs));
}

INSTANTIATE_TEST_SUITE_P(
    Stacks, StackRefusedAtValidate,
    ::testing::Values(
        Refusal{"missing_program.yaml", "", "10:23: vehicles[0].stack.command[0]",
                "'no_such_stack_program_anywhere' was found neither in the scenario's folder"},
        Refusal{"not_executable.yaml", "", "10:23: vehicles[0].stack.command[0]",
                "is not executable"},
        Refusal{"missing_plugin.yaml", "", "10:21: vehicles[0].stack.plugin",
                "no stack plugin 'no_such_stack_plugin'"},
        Refusal{"not_a_plugin.yaml", "", "10:21: vehicles[0].stack.plugin",
                "it is not an ELF shared library"},
        Refusal{"other_abi.yaml", kBadPlugins.c_str(), "10:21: vehicles[0].stack.plugin",
                "built for stack ABI version 2; this engine loads version 1"},
        Refusal{"data_entry.yaml", kBadPlugins.c_str(), "10:21: vehicles[0].stack.plugin",
                "exports fieldproof_stack_create as data, not as a function"}),
    [](const ::testing::TestParamInfo<Refusal>& i) {
      std::string n = i.param.file;
      return n.substr(0, n.find('.'));
    });

TEST(StackHostsCli, AProgramGetsTheVehiclesEnvironmentCwdArgumentsAndParameters) {
  const fs::path runs = fresh_runs_dir("env_process");
  const auto r = run_cli(
      "run " + kData + "env_process.yaml --max-rtf 0 --runs-dir " + runs.string() + " --run-id a",
      true, "REAL_UGV_NAV=" FIELDPROOF_BIN_DIR "/fieldproof-ugv-nav ");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string env = read_file(runs / "a" / "stack_env.txt");
  const std::string run_dir = fs::absolute(runs / "a").lexically_normal().string();
  EXPECT_NE(env.find("args=--flag extra\n"), std::string::npos) << env;
  EXPECT_NE(env.find("pwd=" + fs::canonical(kData + "work").string() + "\n"), std::string::npos)
      << env;
  EXPECT_NE(env.find("FIELDPROOF_COORDINATOR=ipc://"), std::string::npos) << env;
  EXPECT_NE(env.find("FIELDPROOF_PARTICIPANT=ugv1_nav\n"), std::string::npos) << env;
  EXPECT_NE(env.find("FIELDPROOF_VEHICLE=ugv1\n"), std::string::npos) << env;
  EXPECT_NE(env.find("FIELDPROOF_ROLE=regulating\n"), std::string::npos) << env;
  EXPECT_NE(env.find("FIELDPROOF_SEED=3\n"), std::string::npos) << env;
  EXPECT_NE(env.find("FIELDPROOF_WORLD=depot\n"), std::string::npos) << env;
  EXPECT_NE(env.find("FIELDPROOF_WORLD_FILE=" +
                     fs::absolute("examples/worlds/depot.sdf").lexically_normal().string()),
            std::string::npos)
      << env;
  EXPECT_NE(env.find("FIELDPROOF_RUN_DIR=" + run_dir + "\n"), std::string::npos) << env;
  EXPECT_NE(env.find("MY_SETTING=on_purpose\n"), std::string::npos) << env;
  EXPECT_NE(env.find("MY_NUMBER=7\n"), std::string::npos) << env;
  EXPECT_NE(env.find(R"(params={"controller":{"max_linear":0.7}})"), std::string::npos) << env;
  const json run = json::parse(read_file(runs / "a" / "run.json"));
  EXPECT_EQ(run["vehicles"][0]["stack"], "./env_stack.sh (process)");
  // A passed run's stack log goes unless --keep; this one is kept by the next run.
  EXPECT_FALSE(fs::exists(runs / "a" / "logs" / "ugv1.log"));
  const auto k = run_cli("run " + kData + "env_process.yaml --max-rtf 0 --keep --runs-dir " +
                             runs.string() + " --run-id b",
                         true, "REAL_UGV_NAV=" FIELDPROOF_BIN_DIR "/fieldproof-ugv-nav ");
  ASSERT_EQ(k.exit_code, 0) << k.out;
  EXPECT_NE(read_file(runs / "b" / "logs" / "ugv1.log").find("env_stack: starting"),
            std::string::npos);
}

TEST(StackHostsCli, ThePluginIsFoundByItsFileNameOnThePluginPath) {
  const fs::path runs = fresh_runs_dir("plugin_by_name");
  const std::string lib_dir = fs::path(FIELDPROOF_UGV_NAV_PLUGIN).parent_path().string();
  const auto r = run_cli("run " + kData + "plugin_by_name.yaml --max-rtf 0 --runs-dir " +
                             runs.string() + " --run-id a",
                         true, "FIELDPROOF_PLUGIN_PATH=" + lib_dir + " ");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const json run = json::parse(read_file(runs / "a" / "run.json"));
  EXPECT_EQ(run["vehicles"][0]["stack"], "libfieldproof_ugv_nav_plugin.so (plugin)");
  EXPECT_EQ(run["verdict"], "PASS");
}

TEST(StackHostsCli, AProgramThatNeverRegistersEndsTheRunInErrorWithinTheReadyBound) {
  const fs::path runs = fresh_runs_dir("silent");
  const auto start = std::chrono::steady_clock::now();
  const auto r =
      run_cli("run " + kData + "silent_stack.yaml --runs-dir " + runs.string() + " --run-id a");
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 1) << r.out;
  const json run = json::parse(read_file(runs / "a" / "run.json"));
  EXPECT_EQ(run["status"], "error");
  const std::string reason = run["reason"];
  EXPECT_NE(reason.find("the stack of ugv1 did not register as ugv1_nav within 15 s"),
            std::string::npos)
      << reason;
  EXPECT_LT(took, 15.0 + 10.0);  // the bound, plus start-up and the group's termination
  // Nothing is left running: the group was ended (this run's own program, by the pid it wrote;
  // other runs of this test may be sleeping beside it).
  const std::string pid_text = read_file(runs / "a" / "silent_stack.pid");
  const pid_t pid = static_cast<pid_t>(std::stol(pid_text));
  ASSERT_GT(pid, 1) << pid_text;
  EXPECT_NE(kill(pid, 0), 0) << "the stack program (pid " << pid << ") is still running";
}

TEST(StackHostsCli, AProgramThatExitsAtOnceInSimModeIsAnErrorNamingItsExit) {
  const fs::path runs = fresh_runs_dir("crash_sim");
  const auto r =
      run_cli("run " + kData + "crashing_sim.yaml --runs-dir " + runs.string() + " --run-id a");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  const json run = json::parse(read_file(runs / "a" / "run.json"));
  EXPECT_EQ(run["status"], "error");
  EXPECT_NE(run["reason"].get<std::string>().find("the stack of ugv1 exited with code 3"),
            std::string::npos)
      << run["reason"];
  EXPECT_NE(read_file(runs / "a" / "logs" / "ugv1.log").find("crashing_stack: giving up"),
            std::string::npos);
}

}  // namespace
}  // namespace fieldproof::integration
