// Bad input to the `fieldproof` commands: each is refused with a
// located message and exit 2, or ends with a stated failure (1) or 130, never an abort (134) or a
// hang. Every command runs under `timeout 60`, so a hang shows as exit 124, not a stuck suite.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "shell_util.hpp"

namespace fieldproof::hardening {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kBin = std::string(FIELDPROOF_BIN_DIR) + "/fieldproof";
const std::string kDepot = std::string(FIELDPROOF_SOURCE_DIR) + "/examples/worlds/depot.sdf";

struct Result {
  int exit_code = -1;
  std::string out;
};

// `args` as shell text; stdout and stderr together. A hang is cut at 60 s (exit 124).
Result cli(const std::string& args) {
  const shell::ShellResult r =
      shell::run_shell("timeout -s KILL 60 " + kBin + " " + args + " </dev/null 2>&1");
  return {r.exit_code, r.out};
}

std::string q(const fs::path& p) { return "'" + p.string() + "'"; }

// A fresh directory of the test's own under the build tree.
fs::path fresh_dir(const std::string& name) {
  std::string n = name;
  const std::string filter = ::testing::GTEST_FLAG(filter);
  if (filter != "*" && !filter.empty()) {
    n += "_" + std::to_string(std::hash<std::string>{}(filter) & 0xffffff);
  }
  const fs::path d = fs::path(FIELDPROOF_TEST_TMP) / n;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

// A scenario on the depot world: one vehicle without a stack, `extra` appended as YAML.
std::string scenario(const std::string& name, const std::string& extra,
                     const std::string& time = "time: {mode: sim, timeout_s: 5m}\n") {
  return "name: " + name + "\nworld: " + kDepot + "\n" + time +
         "vehicles:\n  - name: ugv1\n    spawn: dock\n" + extra;
}

void expect_invalid(const Result& r, const std::string& text) {
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find(text), std::string::npos) << "expected '" << text << "' in:\n" << r.out;
}

// ---- item 3: invalid UTF-8, run ids, compare, clock --------------------------------------------

TEST(InvalidUtf8, IsRefusedWithFileLineAndColumnByValidateAndRun) {
  const fs::path d = fresh_dir("utf8");
  struct Case {
    const char* what;
    std::string yaml;
    const char* where;  // line:column of the bad byte
  };
  const Case cases[] = {
      {"name", scenario("bad\xff", ""), ":1:10: "},
      {"a parameters key",
       scenario("ok", "    parameters: {\"k\xc3\x28\": 1}\n"), ":7:20: "},
      {"outputs.topics", scenario("ok", "outputs:\n  topics: [\"/a\xe2\x82\"]\n"), ":8:15: "},
  };
  for (const Case& c : cases) {
    const fs::path f = d / "s.yaml";
    write(f, c.yaml);
    for (const std::string& cmd : std::vector<std::string>{"validate ", "run --dry-run ",
                                                          "run --runs-dir " + q(d / "runs") + " "}) {
      const Result r = cli(cmd + q(f));
      SCOPED_TRACE(std::string(c.what) + " / " + cmd);
      expect_invalid(r, "invalid UTF-8");
      EXPECT_NE(r.out.find(f.string() + c.where), std::string::npos) << r.out;
    }
  }
  EXPECT_FALSE(fs::exists(d / "runs" / "ok-1")) << "an invalid scenario left a run directory";
}

TEST(RunId, OfMoreThan200BytesIsRefusedWithExit2) {
  const fs::path d = fresh_dir("runid");
  write(d / "s.yaml", scenario("ok", ""));
  for (const size_t n : {201u, 256u, 300u, 5000u}) {
    const Result r = cli("run " + q(d / "s.yaml") + " --runs-dir " + q(d / "runs") +
                         " --run-id " + std::string(n, 'x'));
    expect_invalid(r, "a run id is at most 200 bytes");
  }
}

TEST(RunsDir, ThatCannotBeCreatedIsNotCalledExistingAlready) {
  const fs::path d = fresh_dir("runsdir");
  write(d / "s.yaml", scenario("ok", ""));
  // /proc exists and takes no new directory, even for root (CI runs as root: chmod would not do).
  const Result r = cli("run " + q(d / "s.yaml") + " --runs-dir /proc --run-id hardening-x");
  expect_invalid(r, "the run directory cannot be created");
  EXPECT_EQ(r.out.find("exists already"), std::string::npos) << r.out;
}

// A run directory with one pose sample, for compare and report.
fs::path fake_run(const fs::path& d, const std::string& id) {
  const fs::path run = d / id;
  fs::create_directories(run);
  write(run / "samples.jsonl",
        R"({"kind":"pose","vehicle":"ugv1","sim":1.0,"x":1,"y":2})"
        "\n");
  write(run / "run.json", R"({"run_id":")" + id + R"(","status":"passed"})");
  return run;
}

TEST(Compare, RunJsonThatIsADirectoryIsRefusedWithExit2) {
  const fs::path d = fresh_dir("compare_dir");
  const fs::path a = fake_run(d, "a");
  const fs::path b = fake_run(d, "b");
  fs::remove(b / "run.json");
  fs::create_directory(b / "run.json");
  expect_invalid(cli("compare " + q(a) + " " + q(b)), "is a directory, not a regular file");
}

TEST(Compare, RunJsonThatIsNotARunRecordIsRefusedAndGarbageLinesAreWarned) {
  const fs::path d = fresh_dir("compare_record");
  const fs::path a = fake_run(d, "a");
  const fs::path b = fake_run(d, "b");
  write(b / "run.json", "{}");
  expect_invalid(cli("compare " + q(a) + " " + q(b)), "not a run record");
  write(b / "run.json", R"({"run_id":"b","status":"passed"})");
  write(b / "samples.jsonl", std::string("garbage\n") +
                                 R"({"kind":"pose","vehicle":"ugv1","sim":1.0,"x":1,"y":2})" +
                                 "\n\x01\x02\n");
  const Result r = cli("compare " + q(a) + " " + q(b));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find((b / "samples.jsonl").string() + ":1: 2 lines that are not JSON skipped"),
            std::string::npos)
      << r.out;
}

TEST(Report, RunJsonThatIsNotARunRecordIsRefusedAndGarbageLinesAreWarned) {
  const fs::path d = fresh_dir("report_record");
  const fs::path a = fake_run(d, "a");
  write(a / "run.json", "{}");
  expect_invalid(cli("report " + q(a)), "not a run record");
  write(a / "run.json", R"({"run_id":"a","status":"passed"})");
  write(a / "samples.jsonl", std::string(R"({"kind":"pose","vehicle":"ugv1","sim":1.0,"x":1,"y":2})") +
                                 "\nnot json\n");
  const Result r = cli("report " + q(a));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find((a / "samples.jsonl").string() + ":2: 1 line that is not JSON"),
            std::string::npos)
      << r.out;
}

TEST(Clock, ControlJsonWithWrongTypesIsRefusedNamingTheField) {
  const fs::path d = fresh_dir("clock_types");
  for (const auto& [text, field] :
       std::vector<std::pair<std::string, std::string>>{
           {R"({"mode": "sim", "physics_step_ns": "1ms"})", "physics_step_ns must be"},
           {R"({"mode": 7, "physics_step_ns": 1000000})", "mode must be a string"},
           {R"({"mode": "sim", "endpoint": []})", "endpoint must be a string"},
           {R"([1, 2])", "not a JSON object"},
           {"", "not a JSON object"}}) {
    write(d / "control.json", text);
    expect_invalid(cli("clock " + q(d) + " status"), field);
  }
}

// ---- item 5: what is opened ---------------------------------------------------------------------

TEST(InputFiles, FifoDevicesDirectoriesAndHugeFilesAreRefusedUnread) {
  const fs::path d = fresh_dir("inputs");
  const fs::path fifo = d / "fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const fs::path huge = d / "huge.yaml";
  {
    std::ofstream(huge).put('x');
    fs::resize_file(huge, uint64_t{3} << 30);  // 3 GiB, sparse
  }
  fs::create_directory(d / "dir.yaml");
  for (const auto& [path, text] : std::vector<std::pair<fs::path, std::string>>{
           {fifo, "is a FIFO (named pipe), not a regular file"},
           {"/dev/zero", "is a character device"},
           {"/dev/urandom", "is a character device"},
           {d / "dir.yaml", "is a directory"},
           {huge, "is 3 GiB, larger than the 16 MiB limit for the scenario"}}) {
    SCOPED_TRACE(path.string());
    expect_invalid(cli("validate " + q(path)), text);
    expect_invalid(cli("run --dry-run " + q(path)), text);
  }
  // The world, a recording, a run's files, a key file.
  expect_invalid(cli("world --spawn ugv1@dock " + q(fifo)), "is a FIFO");
  write(d / "w.yaml", "name: w\nworld: " + fifo.string() +
                          "\ntime: {mode: sim}\nvehicles:\n  - {name: ugv1, spawn: {x: 0, y: 0}}\n");
  expect_invalid(cli("validate " + q(d / "w.yaml")), "w.yaml:2:8: world: the world file");
  for (const fs::path& p : {fifo, fs::path("/dev/zero")}) {
    const Result r = cli("play --echo " + q(p));
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(r.out.find("not a regular file"), std::string::npos) << r.out;
  }
  const fs::path run = fake_run(d, "r");
  fs::remove(run / "run.json");
  ASSERT_EQ(mkfifo((run / "run.json").c_str(), 0600), 0);
  expect_invalid(cli("report " + q(run)), "is a FIFO");
  expect_invalid(cli("compare " + q(run) + " " + q(run)), "is a FIFO");
  fs::remove(run / "run.json");
  fs::create_directory(run / "control.json");
  expect_invalid(cli("clock " + q(run) + " status"), "is a directory");
  expect_invalid(cli("coordinator --bind ipc://" + (d / "c.sock").string() +
                     " --curve-secret-key " + q(fifo)),
                 "is a FIFO");
}

std::string read_depot() {
  std::ifstream in(kDepot);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The depot world with `xml` inserted inside its <world>.
std::string depot_with(const std::string& xml) {
  std::string w = read_depot();
  const size_t at = w.find("</world>");
  w.insert(at, xml);
  return w;
}

TEST(InputFiles, AnSdfIncludeCycleIsRefusedNamingTheChain) {
  const fs::path d = fresh_dir("include_cycle");
  write(d / "self.sdf", depot_with("<include><uri>self.sdf</uri></include>\n"));
  const Result self = cli("world --spawn ugv1@dock " + q(d / "self.sdf"));
  expect_invalid(self, "self.sdf includes itself: " + (d / "self.sdf").string() + " -> " +
                           (d / "self.sdf").string() + " (an include cycle)");
  write(d / "a.sdf", depot_with("<include><uri>file://" + (d / "b").string() + "</uri></include>\n"));
  fs::create_directories(d / "b");
  write(d / "b" / "model.config", "<?xml version='1.0'?><model><sdf version='1.9'>m.sdf</sdf></model>");
  write(d / "b" / "m.sdf", "<sdf version='1.9'><model name='b'><include><uri>../a.sdf</uri></include></model></sdf>");
  const Result chain = cli("world --spawn ugv1@dock " + q(d / "a.sdf"));
  expect_invalid(chain, (d / "a.sdf").string() + " -> " + (d / "b" / "m.sdf").string() + " -> " +
                            (d / "a.sdf").string() + " (an include cycle)");
  // Through a scenario: validate says the same, with the scenario's world: key.
  write(d / "s.yaml", "name: s\nworld: self.sdf\ntime: {mode: sim}\nvehicles:\n  - {name: ugv1, spawn: dock}\n");
  expect_invalid(cli("validate " + q(d / "s.yaml")), "(an include cycle)");
  // An include that is a FIFO is named with who includes it.
  ASSERT_EQ(mkfifo((d / "pipe.sdf").c_str(), 0600), 0);
  write(d / "p.sdf", depot_with("<include><uri>pipe.sdf</uri></include>\n"));
  expect_invalid(cli("world --spawn ugv1@dock " + q(d / "p.sdf")), "is a FIFO (named pipe), not a regular file; nothing was read (included by");
}

// A world 600 m across: its 0.05 m occupancy grid would have 1.44e8 cells. Whether the world
// code refuses it at validation (2), coarsens the map (the run goes on) or throws at run time,
// the command never aborts, and a run that started and failed says so in run.json.
TEST(TopLevel, AHugeWorldNeverAbortsARun) {
  const fs::path d = fresh_dir("huge_world");
  std::string boxes;
  for (const char* xy : {"-300 -300", "300 300"}) {
    boxes += std::string("<model name='b") + (boxes.empty() ? "1" : "2") +
             "'><static>true</static><pose>" + xy +
             " 0.5 0 0 0</pose><link name='l'><collision name='c'><geometry><box><size>1 1 1"
             "</size></box></geometry></collision></link></model>\n";
  }
  write(d / "w.sdf", "<?xml version='1.0'?><sdf version='1.9'><world name='huge'><physics "
                     "name='p' type='ode'><max_step_size>0.001</max_step_size>"
                     "<real_time_factor>1.0</real_time_factor></physics>" + boxes +
                     "</world></sdf>");
  write(d / "s.yaml", "name: huge\nworld: w.sdf\ntime: {mode: sim, timeout_s: 1m}\n"
                      "vehicles:\n  - {name: ugv1, spawn: {x: 0, y: 0}}\n"
                      "timeline:\n  - {action: sim.pause, at: 0.2s, duration_s: 0.1}\n");
  const Result r = cli("run " + q(d / "s.yaml") + " --runs-dir " + q(d / "runs") + " --run-id a");
  EXPECT_NE(r.exit_code, 134) << r.out;
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1 || r.exit_code == 2) << r.out;
  if (r.exit_code == 1) {
    ASSERT_TRUE(fs::exists(d / "runs" / "a" / "run.json")) << r.out;
    const json run = json::parse(std::ifstream(d / "runs" / "a" / "run.json"));
    EXPECT_EQ(run["status"], "error") << run.dump();
    EXPECT_FALSE(run["reason"].get<std::string>().empty());
  }
}

// ---- items 2, 6, 7: values that mean nothing, steps that overflow, lost evidence --------------

TEST(Validate, StepsThatOverflowOrExceedTheBudgetAreRefusedLocated) {
  const fs::path d = fresh_dir("steps");
  const std::string pause = "timeline:\n  - {action: sim.pause, name: p, at: 1s}\n";
  write(d / "overflow.yaml",
        scenario("o", pause + "  - {action: sim.step, name: s, after: p, steps: 9223372036854775807}\n"));
  const Result o = cli("validate " + q(d / "overflow.yaml"));
  expect_invalid(o, "overflow.yaml:9:");
  expect_invalid(o, "timeline[1].steps: 9223372036854775807 steps of 0.001 s overflow simulated time");
  write(d / "budget.yaml",
        scenario("b", pause + "  - {action: sim.step, name: s, after: p, steps: 9000000000}\n",
                 "time: {mode: sim, timeout_s: 10s}\n"));
  expect_invalid(cli("validate " + q(d / "budget.yaml")), "more than time.timeout_s 10 s");
  write(d / "duration.yaml",
        scenario("b", pause + "  - {action: sim.step, name: s, after: p, duration_s: 1h}\n",
                 "time: {mode: sim, timeout_s: 10s}\n"));
  expect_invalid(cli("validate " + q(d / "duration.yaml")), "timeline[1].duration_s: a step of 3600 s");
}

TEST(Validate, InfiniteNumbersAreRefusedLikeNan) {
  const fs::path d = fresh_dir("inf");
  write(d / "s.yaml", scenario("i", "timeline:\n  - {action: cmd_vel, vehicle: ugv1, at: 1s, "
                                    "linear_x: .inf, duration_s: 1}\n"));
  expect_invalid(cli("validate " + q(d / "s.yaml")), "a finite number is needed");
}

TEST(Validate, ARecordingFileNameTooLongIsRefused) {
  const fs::path d = fresh_dir("record_name");
  write(d / "s.yaml", scenario("r", "outputs:\n  record: " + std::string(300, 'r') + ".mcap\n"));
  expect_invalid(cli("validate " + q(d / "s.yaml")),
                 "outputs.record: a recording's file name is 1 to 200 bytes, got 305");
}

TEST(Validate, AWorldRealTimeFactorOfMinusOneOrNanIsRefused) {
  const fs::path d = fresh_dir("rtf");
  const std::string depot = read_depot();
  for (const std::string v : {"-1", "nan"}) {
    std::string w = depot;
    const std::string from = "<real_time_factor>1.0</real_time_factor>";
    ASSERT_NE(w.find(from), std::string::npos);
    w.replace(w.find(from), from.size(), "<real_time_factor>" + v + "</real_time_factor>");
    write(d / "w.sdf", w);
    const Result r = cli("world --spawn ugv1@dock " + q(d / "w.sdf"));
    EXPECT_EQ(r.exit_code, 2) << v << ": " << r.out;
    EXPECT_NE(r.out.find("real_time_factor"), std::string::npos) << r.out;
  }
}

// ---- item 2: a long advance stays stoppable ----------------------------------------------------

// Starts `fieldproof run` on a scenario whose world is paused at 0.5 s and then stepped by
// `step`; returns its pid once engine.log shows the step under way.
pid_t start_long_step(const fs::path& d, const std::string& pause_at, const std::string& step,
                      const std::string& time, const std::string& extra_args = "") {
  write(d / "s.yaml",
        scenario("long", "timeline:\n  - {action: sim.pause, name: p, at: " + pause_at + "}\n"
                         "  - {action: sim.step, name: long, after: p, duration_s: " + step + "}\n",
                 time));
  const pid_t pid = fork();
  if (pid == 0) {
    const std::string cmd = kBin + " run " + q(d / "s.yaml") + " --runs-dir " + q(d / "runs") +
                            " --run-id a " + extra_args + " >/dev/null 2>&1";
    execl("/bin/sh", "sh", "-c", ("exec " + cmd).c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  const fs::path log = d / "runs" / "a" / "engine.log";
  for (int i = 0; i < 3000; ++i) {
    std::ifstream in(log);
    std::stringstream ss;
    ss << in.rdbuf();
    if (ss.str().find("\"event\":\"clock.step\"") != std::string::npos) return pid;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // polling a file another process writes
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return -1;
}

int wait_exit(pid_t pid, double* seconds) {
  const auto t0 = std::chrono::steady_clock::now();
  int st = 0;
  waitpid(pid, &st, 0);
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

TEST(LongStep, SigintAndSigtermEndARunInsideALongStepWithin1s) {
  for (const int sig : {SIGINT, SIGTERM}) {
    const fs::path d = fresh_dir(sig == SIGINT ? "long_int" : "long_term");
    const pid_t pid = start_long_step(d, "0.5s", "300", "time: {mode: sim, timeout_s: 10m}\n");
    ASSERT_GT(pid, 0) << "the step did not start";
    kill(pid, sig);
    double s = 0;
    EXPECT_EQ(wait_exit(pid, &s), 130);
    EXPECT_LT(s, 1.5) << "seconds from the signal to the exit";
    const json run = json::parse(std::ifstream(d / "runs" / "a" / "run.json"));
    EXPECT_EQ(run["status"], "interrupted");
  }
}

TEST(LongStep, TimeoutEndsARunInsideALongStep) {
  const fs::path d = fresh_dir("long_timeout");
  // 1.5 s of simulated time fits the 3 s budget at the world's rtf 1; paced at 0.05 it would
  // take 30 s: time.timeout_s ends it.
  const pid_t pid =
      start_long_step(d, "0.02s", "1.5", "time: {mode: sim, timeout_s: 3s}\n", "--max-rtf 0.05");
  ASSERT_GT(pid, 0) << "the step did not start";
  double s = 0;
  EXPECT_EQ(wait_exit(pid, &s), 1);
  EXPECT_LT(s, 5.0);
  const json run = json::parse(std::ifstream(d / "runs" / "a" / "run.json"));
  EXPECT_EQ(run["status"], "timeout");
}

}  // namespace
}  // namespace fieldproof::hardening
