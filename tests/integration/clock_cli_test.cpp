// `fieldproof clock RUN status|pause|resume|step` on a real run: the status, a pause that stops
// time, a step of exactly N physics steps, a resume, the record of the commands, and the
// refusals (a lockstep run, a run that is not live, a step without a size).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>

#include "integration/cli_test_util.hpp"

namespace fieldproof::integration {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// `key: value` lines of a status.
std::map<std::string, std::string> parse_status(const std::string& text) {
  std::map<std::string, std::string> m;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(": ");
    if (colon != std::string::npos) m[line.substr(0, colon)] = line.substr(colon + 2);
  }
  return m;
}

// A `fieldproof run` in the background, ended with SIGINT by stop() (or the destructor).
class LiveRun {
 public:
  LiveRun(const std::string& scenario, const fs::path& runs, const std::string& id)
      : dir_(runs / id) {
    pid_ = fork();
    if (pid_ == 0) {
      const std::string bin = std::string(FIELDPROOF_BIN_DIR) + "/fieldproof";
      const std::string r = runs.string();
      execl(bin.c_str(), bin.c_str(), "run", scenario.c_str(), "--runs-dir", r.c_str(), "--run-id",
            id.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  ~LiveRun() { stop(); }
  // Waits (up to 30 s) until the run serves its control endpoint; false at once if it exited.
  bool wait_live() {
    for (int i = 0; i < 3000; ++i) {
      // control.json is written once the socket is bound (in the run directory, or elsewhere
      // when the run directory is too deep for a Unix socket's path).
      if (fs::exists(dir_ / "control.json")) return true;
      int st = 0;
      if (pid_ > 0 && waitpid(pid_, &st, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  const fs::path& dir() const { return dir_; }
  // SIGINT, then the exit code (-1 if it did not exit normally).
  int stop() {
    if (pid_ <= 0) return exit_code_;
    kill(pid_, SIGINT);
    int st = 0;
    if (waitpid(pid_, &st, 0) == pid_ && WIFEXITED(st)) exit_code_ = WEXITSTATUS(st);
    pid_ = -1;
    return exit_code_;
  }

 private:
  fs::path dir_;
  pid_t pid_ = -1;
  int exit_code_ = -1;
};

CommandResult clock(const fs::path& run, const std::string& args) {
  return run_cli("clock " + run.string() + " " + args);
}

// A run directory too deep for a Unix socket's path (107 characters) still runs and is
// controlled: the socket is served from a temporary directory that control.json names.
TEST(ClockCliDeep, ARunDirectoryTooDeepForASocketPathIsStillControlled) {
  const fs::path runs =
      fresh_runs_dir("clock_cli_deep") / std::string(60, 'd') / std::string(60, 'e');
  LiveRun run("examples/scenarios/ugv_nav_to_goal.yaml", runs, "deep");
  ASSERT_TRUE(run.wait_live());
  const json info = json::parse(read_file(run.dir() / "control.json"));
  EXPECT_GT((run.dir() / "control.sock").string().size(), 107u);
  EXPECT_EQ(info["endpoint"].get<std::string>().find("ipc://" + run.dir().string()),
            std::string::npos);
  const CommandResult r = clock(run.dir(), "status");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(parse_status(r.out)["state"], "running") << r.out;
  EXPECT_EQ(run.stop(), 130);
}

// One live sim-mode run (paced at real time) shared by the tests that leave it running.
class ClockCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    run_ =
        new LiveRun("examples/scenarios/ugv_nav_to_goal.yaml", fresh_runs_dir("clock_cli"), "live");
  }
  static void TearDownTestSuite() {
    delete run_;
    run_ = nullptr;
  }
  void SetUp() override { ASSERT_TRUE(run_->wait_live()) << "the run never served control.sock"; }
  static LiveRun* run_;
};
LiveRun* ClockCli::run_ = nullptr;

TEST_F(ClockCli, StatusPrintsStateSimTimeIterationAndRtf) {
  const auto r = clock(run_->dir(), "status");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto s = parse_status(r.out);
  EXPECT_EQ(s.at("state"), "running") << r.out;
  EXPECT_EQ(s.at("mode"), "sim") << r.out;
  ASSERT_TRUE(s.count("sim_time_s") && s.count("iteration") && s.count("rtf")) << r.out;
  // The depot's physics step is 1 ms: the iteration is the simulated time in milliseconds.
  EXPECT_EQ(std::llround(std::stod(s.at("sim_time_s")) * 1000), std::stoll(s.at("iteration")));
}

TEST_F(ClockCli, InASimRunTheStackFollowsTheClockAndTheWorldRegulates) {
  const auto r = clock(run_->dir(), "status");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const std::string parts = parse_status(r.out).at("participants");
  EXPECT_NE(parts.find("ugv1_nav (following)"), std::string::npos) << parts;
  EXPECT_NE(parts.find("world (regulating)"), std::string::npos) << parts;
  EXPECT_NE(parts.find("engine (regulating)"), std::string::npos) << parts;
}

TEST_F(ClockCli, PauseStopsTime) {
  const auto p = clock(run_->dir(), "pause");
  ASSERT_EQ(p.exit_code, 0) << p.out;
  EXPECT_EQ(parse_status(p.out).at("state"), "paused");
  const auto a = parse_status(clock(run_->dir(), "status").out);
  const auto b = parse_status(clock(run_->dir(), "status").out);
  EXPECT_EQ(a.at("state"), "paused");
  EXPECT_EQ(a.at("sim_time_s"), b.at("sim_time_s"));
  EXPECT_EQ(a.at("iteration"), b.at("iteration"));
  ASSERT_EQ(clock(run_->dir(), "resume").exit_code, 0);
}

TEST_F(ClockCli, StepMovesExactlyNPhysicsSteps) {
  ASSERT_EQ(clock(run_->dir(), "pause").exit_code, 0);
  const auto before = parse_status(clock(run_->dir(), "status").out);
  const auto r = clock(run_->dir(), "step --steps 150");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const auto after = parse_status(clock(run_->dir(), "status").out);
  EXPECT_EQ(std::stoll(after.at("iteration")) - std::stoll(before.at("iteration")), 150);
  EXPECT_EQ(after.at("state"), "paused");
  ASSERT_EQ(clock(run_->dir(), "resume").exit_code, 0);
}

TEST_F(ClockCli, StepBySecondsMovesThatMuchSimulatedTime) {
  ASSERT_EQ(clock(run_->dir(), "pause").exit_code, 0);
  const auto before = parse_status(clock(run_->dir(), "status").out);
  ASSERT_EQ(clock(run_->dir(), "step --seconds 0.2").exit_code, 0);
  const auto after = parse_status(clock(run_->dir(), "status").out);
  EXPECT_EQ(std::stoll(after.at("iteration")) - std::stoll(before.at("iteration")), 200);
  ASSERT_EQ(clock(run_->dir(), "resume").exit_code, 0);
}

TEST_F(ClockCli, ResumeLetsTimeRunAgain) {
  ASSERT_EQ(clock(run_->dir(), "pause").exit_code, 0);
  const auto paused = parse_status(clock(run_->dir(), "status").out);
  const auto r = clock(run_->dir(), "resume");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(parse_status(r.out).at("state"), "running");
  // Awaited: the clock moves on (paced at real time, within a second).
  bool moved = false;
  for (int i = 0; i < 100 && !moved; ++i) {
    const auto s = parse_status(clock(run_->dir(), "status").out);
    moved = std::stoll(s.at("iteration")) > std::stoll(paused.at("iteration"));
  }
  EXPECT_TRUE(moved);
}

TEST_F(ClockCli, StepWithoutASizeIsInvalid) {
  const auto r = clock(run_->dir(), "step");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--steps N or --seconds S"), std::string::npos) << r.out;
}

// sim.step refuses a duration off the physics grid; so does the live step:
// the world does not move.
TEST_F(ClockCli, StepBySecondsOffThePhysicsGridIsRefusedAndTimeDoesNotMove) {
  ASSERT_EQ(clock(run_->dir(), "pause").exit_code, 0);
  const auto before = parse_status(clock(run_->dir(), "status").out);
  const auto r = clock(run_->dir(), "step --seconds 1500us");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("0.0015 s is not a whole number of physics steps"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("expected a multiple such as 0.001 or 0.002"), std::string::npos) << r.out;
  const auto after = parse_status(clock(run_->dir(), "status").out);
  EXPECT_EQ(after.at("iteration"), before.at("iteration"));
  ASSERT_EQ(clock(run_->dir(), "resume").exit_code, 0);
}

TEST_F(ClockCli, AnUnknownActionIsInvalid) {
  const auto r = clock(run_->dir(), "rewind");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("unknown action 'rewind'"), std::string::npos) << r.out;
}

TEST(ClockCliRecord, CommandsAppearInEngineLogAndRunJson) {
  LiveRun run("examples/scenarios/ugv_nav_to_goal.yaml", fresh_runs_dir("clock_cli_record"), "r");
  ASSERT_TRUE(run.wait_live());
  ASSERT_EQ(clock(run.dir(), "pause").exit_code, 0);
  ASSERT_EQ(clock(run.dir(), "step --steps 10").exit_code, 0);
  ASSERT_EQ(clock(run.dir(), "resume").exit_code, 0);
  EXPECT_EQ(run.stop(), 130);
  const std::string log = read_file(run.dir() / "engine.log");
  EXPECT_NE(log.find("\"event\":\"clock.pause\""), std::string::npos);
  EXPECT_NE(log.find("\"event\":\"clock.step\""), std::string::npos);
  EXPECT_NE(log.find("\"event\":\"clock.resume\""), std::string::npos);
  const json commands = run_json(run.dir())["clock"]["commands"];
  ASSERT_EQ(commands.size(), 3u) << commands.dump();
  EXPECT_EQ(commands[0]["op"], "pause");
  EXPECT_EQ(commands[1]["op"], "step");
  EXPECT_EQ(commands[1]["duration_s"], 0.01);
  EXPECT_EQ(commands[2]["op"], "resume");
  EXPECT_GT(run_json(run.dir())["clock"]["paused_s"].get<double>(), 0.0);
}

TEST(ClockCliRecord, AnInterruptEndsARunPausedByClock) {
  LiveRun run("examples/scenarios/ugv_nav_to_goal.yaml", fresh_runs_dir("clock_cli_int"), "i");
  ASSERT_TRUE(run.wait_live());
  ASSERT_EQ(clock(run.dir(), "pause").exit_code, 0);
  EXPECT_EQ(run.stop(), 130);
  EXPECT_EQ(run_json(run.dir())["status"], "interrupted");
  EXPECT_FALSE(fs::exists(run.dir() / "control.sock"));
}

TEST(ClockCliLockstep, PauseResumeAndStepAreRefusedStatusIsAnswered) {
  LiveRun run("examples/scenarios/ugv_lockstep.yaml", fresh_runs_dir("clock_cli_lockstep"), "l");
  ASSERT_TRUE(run.wait_live());
  const auto s = clock(run.dir(), "status");
  EXPECT_EQ(s.exit_code, 0) << s.out;
  EXPECT_EQ(parse_status(s.out).at("mode"), "lockstep");
  EXPECT_NE(parse_status(s.out).at("participants").find("ugv1_nav (regulating)"), std::string::npos)
      << s.out;
  for (const char* action : {"pause", "resume", "step --steps 10"}) {
    const auto r = clock(run.dir(), action);
    EXPECT_EQ(r.exit_code, 2) << action << ": " << r.out;
    EXPECT_NE(r.out.find("leaves a lockstep run alone"), std::string::npos) << r.out;
  }
  EXPECT_EQ(parse_status(clock(run.dir(), "status").out).at("state"), "running");
  run.stop();
  EXPECT_NE(read_file(run.dir() / "engine.log").find("\"event\":\"clock.refused\""),
            std::string::npos);
}

TEST(ClockCliNotLive, AnEndedRunIsRefused) {
  const fs::path dir = fresh_runs_dir("clock_cli_ended") / "done";
  fs::create_directories(dir);
  std::ofstream(dir / "run.json") << "{}\n";
  const auto r = clock(dir, "status");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("the run is not live (it has ended)"), std::string::npos) << r.out;
}

TEST(ClockCliNotLive, AStaleEndpointIsRefusedAtOnce) {
  const fs::path dir = fresh_runs_dir("clock_cli_stale") / "crashed";
  fs::create_directories(dir);
  std::ofstream(dir / "control.sock") << "";
  std::ofstream(dir / "control.json") << R"({"mode": "sim", "physics_step_ns": 1000000})";
  const auto r = clock(dir, "pause");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("the run is not live (no control endpoint)"), std::string::npos) << r.out;
}

TEST(ClockCliNotLive, AMissingRunDirectoryIsRefused) {
  const auto r = run_cli("clock runs/does-not-exist-anywhere status");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("no such run directory"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace fieldproof::integration
