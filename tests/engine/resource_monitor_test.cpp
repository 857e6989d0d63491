// The resource monitor: every process of the run with role and vehicle, once
// a second of wall time whatever the pace, cpu_pct in percent of one core, memory_mb,
// memory_limit_mb from the cgroup (or null), pids. A fake /proc and /sys/fs/cgroup tree, a
// hand-moved wall clock; the thread test awaits its lines (no sleep).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "engine/resources.hpp"

namespace fieldproof::engine {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

void proc(const fs::path& root, int pid, uint64_t utime, int rss_kb, int threads,
          const std::string& cgroup) {
  const fs::path d = root / std::to_string(pid);
  fs::create_directories(d);
  std::ofstream(d / "stat") << pid << " (a (b) c) S 1 1 1 0 -1 0 0 0 0 0 " << utime
                            << " 0 0 0 20 0 3 0 100 0 0\n";
  std::ofstream(d / "status") << "Name:\tx\nVmRSS:\t" << rss_kb << " kB\nThreads:\t" << threads
                              << "\n";
  std::ofstream(d / "cgroup") << cgroup << "\n";
}

fs::path fresh(const std::string& name) {
  const fs::path p = fs::path(testing::TempDir()) / ("resmon_" + name + "_" +
                                                      std::to_string(getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

TEST(ResourceMonitor, EveryProcessWithRoleVehicleCpuMemoryLimitAndPids) {
  const fs::path root = fresh("lines");
  const fs::path procs = root / "proc";
  const fs::path cg = root / "cgroup";
  // The engine in a v2 group limited at its parent (512 MiB) with "max" below; the stack in a
  // v1 memory group without a limit (v1 writes a page-rounded INT64_MAX).
  fs::create_directories(cg / "run" / "engine");
  std::ofstream(cg / "run" / "memory.max") << (512ull << 20) << "\n";
  std::ofstream(cg / "run" / "engine" / "memory.max") << "max\n";
  fs::create_directories(cg / "memory" / "stack");
  std::ofstream(cg / "memory" / "stack" / "memory.limit_in_bytes") << "9223372036854771712\n";
  proc(procs, 100, 0, 10240, 7, "0::/run/engine");
  proc(procs, 4242, 0, 20480, 3, "5:cpuset,memory:/stack");

  SimTime wall = SimTime::from_ns(50'000'000'000);
  std::vector<json> lines;
  ResourceMonitorOptions o;
  o.processes = {{"engine", "engine", "", 100, {"ugv2"}}, {"ugv1_nav", "stack", "ugv1", 4242, {}}};
  o.wall_now = [&] { return wall; };
  o.wall0 = wall;
  o.utc_now = [] { return int64_t{1'700'000'000'000'000'000}; };
  o.on_line = [&](const json& j) { lines.push_back(j); };
  o.proc_root = procs.string();
  o.cgroup_root = cg.string();
  ResourceMonitor m(o);
  // The baseline, as start() takes it, without the thread: then one round a wall second later.
  m.sample_once();
  EXPECT_TRUE(lines.empty());  // a first reading gives no CPU figure
  const long hz = sysconf(_SC_CLK_TCK);
  proc(procs, 100, static_cast<uint64_t>(hz) / 2, 10240, 7, "0::/run/engine");  // 0.5 s CPU
  proc(procs, 4242, static_cast<uint64_t>(hz) * 2, 20480, 3, "5:cpuset,memory:/stack");
  wall = wall + seconds(2);  // 2 s of wall time: 25 % and 100 % of one core
  m.set_sim(SimTime::from_ns(123'000'000'000));
  m.sample_once();
  ASSERT_EQ(lines.size(), 2u);
  const json& e = lines[0];
  EXPECT_EQ(e["process"], "engine");
  EXPECT_EQ(e["role"], "engine");
  EXPECT_TRUE(e["vehicle"].is_null());
  EXPECT_EQ(e["hosts"], json::array({"ugv2"}));
  EXPECT_DOUBLE_EQ(e["cpu_pct"].get<double>(), 25.0);
  EXPECT_DOUBLE_EQ(e["memory_mb"].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(e["memory_limit_mb"].get<double>(), 512.0);  // the parent's limit
  EXPECT_EQ(e["pids"], 7);
  EXPECT_DOUBLE_EQ(e["sim"].get<double>(), 123.0);
  EXPECT_DOUBLE_EQ(e["wall"].get<double>(), 1'700'000'000.0);
  EXPECT_DOUBLE_EQ(e["wall_s"].get<double>(), 2.0);
  const json& s = lines[1];
  EXPECT_EQ(s["process"], "ugv1_nav");
  EXPECT_EQ(s["role"], "stack");
  EXPECT_EQ(s["vehicle"], "ugv1");
  EXPECT_EQ(s["pid"], 4242);
  EXPECT_DOUBLE_EQ(s["cpu_pct"].get<double>(), 100.0);
  EXPECT_TRUE(s["memory_limit_mb"].is_null());  // unlimited
  EXPECT_EQ(s["pids"], 3);
  // The evaluator's samples: the stack's for ugv1, the engine's for the vehicle it hosts.
  const auto samples = m.take();
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].vehicle, "ugv2");
  EXPECT_EQ(samples[0].process, "engine");
  EXPECT_EQ(samples[1].vehicle, "ugv1");
  EXPECT_DOUBLE_EQ(samples[1].cpu_pct, 100.0);
  EXPECT_TRUE(m.take().empty());
  const json sum = m.summary();
  EXPECT_EQ(sum["samples"], 2);
  EXPECT_EQ(sum["processes"], json::array({"engine", "ugv1_nav"}));
  EXPECT_EQ(sum["last"].size(), 2u);
}

TEST(ResourceMonitor, AProcessThatCannotBeReadIsReportedOnce) {
  const fs::path root = fresh("gone");
  std::vector<std::string> errors;
  std::vector<json> lines;
  ResourceMonitorOptions o;
  o.processes = {{"ugv1_nav", "stack", "ugv1", 999999, {}}};
  o.on_line = [&](const json& j) { lines.push_back(j); };
  o.on_error = [&](const std::string& e) { errors.push_back(e); };
  o.proc_root = root.string();
  ResourceMonitor m(o);
  m.sample_once();
  m.sample_once();
  EXPECT_TRUE(lines.empty());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("ugv1_nav (pid 999999)"), std::string::npos) << errors[0];
}

// fault.kill_stack with restart: the stack's process is gone, then runs again under a new pid. The
// monitor follows it (set_pid) instead of reading the dead pid for the rest of the run.
TEST(ResourceMonitor, ARestartedStackIsSampledUnderItsNewPid) {
  const fs::path root = fresh("restart");
  const fs::path procs = root / "proc";
  proc(procs, 4242, 0, 20480, 3, "0::/");
  SimTime wall = SimTime::from_ns(10'000'000'000);
  std::vector<json> lines;
  std::vector<std::string> errors;
  ResourceMonitorOptions o;
  o.processes = {{"ugv1_nav", "stack", "ugv1", 4242, {}}};
  o.wall_now = [&] { return wall; };
  o.on_line = [&](const json& j) { lines.push_back(j); };
  o.on_error = [&](const std::string& e) { errors.push_back(e); };
  o.proc_root = procs.string();
  o.cgroup_root = (root / "cgroup").string();
  ResourceMonitor m(o);
  m.sample_once();  // the baseline
  wall = wall + seconds(1);
  m.sample_once();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["pid"], 4242);
  // Killed: not running until the restart, nothing read, nothing reported.
  fs::remove_all(procs / "4242");
  m.set_pid("ugv1_nav", 0);
  wall = wall + seconds(1);
  m.sample_once();
  EXPECT_EQ(lines.size(), 1u);
  EXPECT_TRUE(errors.empty()) << errors[0];
  // Restarted as 5151: its baseline at once, its line at the next round, with the new pid.
  const long hz = sysconf(_SC_CLK_TCK);
  proc(procs, 5151, 0, 30720, 4, "0::/");
  m.set_pid("ugv1_nav", 5151);
  proc(procs, 5151, static_cast<uint64_t>(hz) / 2, 30720, 4, "0::/");
  wall = wall + milliseconds(100);
  m.sample_once();  // too soon after the restart for a CPU figure: skipped
  EXPECT_EQ(lines.size(), 1u);
  wall = wall + milliseconds(900);
  m.sample_once();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1]["pid"], 5151);
  EXPECT_EQ(lines[1]["process"], "ugv1_nav");
  EXPECT_EQ(lines[1]["role"], "stack");
  EXPECT_EQ(lines[1]["vehicle"], "ugv1");
  EXPECT_DOUBLE_EQ(lines[1]["cpu_pct"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(lines[1]["memory_mb"].get<double>(), 30.0);
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(m.summary()["last"][0]["pid"], 5151);
  // The new process dies too: reported (once), naming its pid.
  fs::remove_all(procs / "5151");
  wall = wall + seconds(1);
  m.sample_once();
  m.sample_once();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("ugv1_nav (pid 5151)"), std::string::npos) << errors[0];
}

// A run that ends soon after a restart still has a line for the new process: the teardown
// measures it from the restart, even when the others' last interval is too short for a round.
TEST(ResourceMonitor, TheTeardownMeasuresAProcessRestartedSinceTheLastRound) {
  const fs::path root = fresh("restart_end");
  const fs::path procs = root / "proc";
  proc(procs, 100, 0, 10240, 7, "0::/");
  proc(procs, 4242, 0, 20480, 3, "0::/");
  // The monitor's thread reads this clock too; its first round (1000 s on) is never due here.
  std::atomic<int64_t> wall_ns{10'000'000'000};
  std::vector<json> lines;  // written by the rounds this thread runs
  ResourceMonitorOptions o;
  o.processes = {{"engine", "engine", "", 100, {}}, {"ugv1_nav", "stack", "ugv1", 4242, {}}};
  o.wall_now = [&] { return SimTime::from_ns(wall_ns.load()); };
  o.on_line = [&](const json& j) { lines.push_back(j); };
  o.proc_root = procs.string();
  o.cgroup_root = (root / "cgroup").string();
  o.period = seconds(1000);
  ResourceMonitor m(o);
  m.start();
  wall_ns += 600'000'000'000;
  m.sample_once();
  ASSERT_EQ(lines.size(), 2u);
  proc(procs, 5151, 0, 30720, 4, "0::/");
  m.set_pid("ugv1_nav", 5151);
  wall_ns += 10'000'000'000;  // 1 % of a period: no final round for the engine
  m.stop();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[2]["process"], "ugv1_nav");
  EXPECT_EQ(lines[2]["pid"], 5151);
}

// The thread samples on the wall clock: simulated time does not move at all here (an unpaced
// run's simulated seconds would be milliseconds of wall time), yet lines come once a period of
// wall time, each measuring CPU over that period. This process itself is the one measured.
TEST(ResourceMonitor, ThreadSamplesOncePerWallPeriodWhateverSimulatedTimeDoes) {
  std::mutex mu;
  std::vector<json> lines;
  ResourceMonitorOptions o;
  const auto steady = [] {
    return SimTime::from_ns(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::steady_clock::now().time_since_epoch())
                                .count());
  };
  o.wall_now = steady;
  o.wall0 = steady();
  o.period = milliseconds(100);
  o.processes = {{"engine", "engine", "", static_cast<int>(getpid()), {}}};
  o.on_line = [&](const json& j) {
    std::lock_guard<std::mutex> lk(mu);
    lines.push_back(j);
  };
  ResourceMonitor m(o);
  m.start();
  ASSERT_TRUE(m.wait_lines(3, std::chrono::seconds(10)));
  const auto before_stop = std::chrono::steady_clock::now();
  m.stop();
  const double elapsed_s = static_cast<double>((steady() - o.wall0).ns()) / 1e9;
  // stop() ends the wait at once (a condition variable), not at the next period.
  EXPECT_LT(std::chrono::steady_clock::now() - before_stop, std::chrono::milliseconds(100));
  std::lock_guard<std::mutex> lk(mu);
  ASSERT_GE(lines.size(), 3u);
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i]["sim"].get<double>(), 0.0);
    EXPECT_GE(lines[i]["cpu_pct"].get<double>(), 0.0);
    EXPECT_LE(lines[i]["cpu_pct"].get<double>(), 100.0 * cores + 1.0);
    EXPECT_GT(lines[i]["memory_mb"].get<double>(), 0.0);
    EXPECT_GE(lines[i]["pids"].get<int>(), 2);  // this test's thread and the monitor's
    // On the wall grid from start(): the i-th round is never early (a late one may be late).
    EXPECT_GE(lines[i]["wall_s"].get<double>(), 0.1 * static_cast<double>(i + 1) - 1e-3) << i;
  }
  // And never more often than once a period.
  EXPECT_LE(static_cast<double>(lines.size()), elapsed_s / 0.1 + 1e-9);
}

}  // namespace
}  // namespace fieldproof::engine
