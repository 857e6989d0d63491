// engine_bench: wall time of ugv_nav_to_goal over 60 s of simulated time in lockstep with the pace
// cap lifted (--max-rtf 0), the stack in-process and as the fieldproof-ugv-nav process, beside
// the floor measured in the same run: the world alone (no stack; its sensor, pose and contact
// topics delivered to the engine), unpaced, through the same session for the same simulated time.
// And the engine's peak RSS (getrusage ru_maxrss of the in-process run). Each case runs in a child
// process of its own (its RSS is its own); --repeat K keeps the fastest. Targets: <= 2 s
// in-process, <= 10 s as a process, peak RSS <= 150 MB; the process run at most 2x the
// in-process run (`run_lockstep_process_vs_inprocess`). Usage: engine_bench [--repeat K]
// [--seconds S] [--only floor|inprocess|process|process_zmq] (--only: that case alone, for a
// profiler: prints its wall time, no BENCH line). The process run uses what a stack process gets
// by default, the same-host shared-memory transport; `process_zmq` is the same run with
// FIELDPROOF_SHM=0 (the stack process on ZeroMQ ipc), measured beside it
// (`run_lockstep_process_zmq`, `run_lockstep_process_shm_vs_zmq`).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "fieldproof/engine/run.hpp"
#include "fieldproof/engine/session.hpp"
#include "fieldproof/lockstep/participant.hpp"

namespace {

namespace fs = std::filesystem;
using fieldproof::SimTime;

double wall_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The scenario: ugv_nav_to_goal in lockstep, the drive at 2 s, a last entry at `seconds` so the
// timeline covers that much simulated time.
fs::path write_scenario(const fs::path& dir, bool process, int seconds) {
  const fs::path p = dir / (process ? "nav_process.yaml" : "nav_inprocess.yaml");
  std::ofstream out(p);
  out << "name: " << (process ? "nav_process" : "nav_inprocess") << "\n"
      << "world: " << FIELDPROOF_SOURCE_DIR << "/examples/worlds/depot.sdf\n"
      << "seed: 7\n"
      << "time: {mode: lockstep, step_s: 0.1, timeout_s: 5m}\n"
      << "vehicles:\n  - name: ugv1\n    spawn: dock\n";
  if (process) {
    out << "    stack: {command: [" << FIELDPROOF_BIN_DIR
        << "/fieldproof-ugv-nav, --vehicle, ugv1]}\n";
  } else {
    out << "    stack: {plugin: fieldproof_ugv_nav_plugin}\n";
  }
  out << "timeline:\n"
      << "  - {action: navigate_to_pose, name: drive_ahead, vehicle: ugv1, at: 2s, goal: goal_a}\n"
      << "  - {action: cmd_vel, name: stop, vehicle: ugv1, at: " << seconds << "s, linear_x: 0}\n"
      << "assertions:\n"
      << "  - {name: reached_goal, type: reach_pose, vehicle: ugv1, target: goal_a, "
         "tolerance_m: 0.5, within_s: 60s}\n";
  return p;
}

// The world alone through a session (no stack), unpaced, for `seconds` of simulated time.
double world_floor(int seconds) {
  fieldproof::engine::SessionOptions so;
  so.world_file = std::string(FIELDPROOF_SOURCE_DIR) + "/examples/worlds/depot.sdf";
  so.seed = 7;
  so.max_rtf = 0;
  fieldproof::engine::VehicleSetup v;
  v.name = "ugv1";
  v.frame = "dock";
  so.vehicles = {v};
  auto created = fieldproof::engine::Session::create(so);
  if (!created.ok()) {
    std::fprintf(stderr, "engine_bench: %s\n", created.status().message().c_str());
    return -1;
  }
  std::unique_ptr<fieldproof::engine::Session> s = std::move(created).value();
  if (const fieldproof::Status st = s->start(); !st.ok()) {
    std::fprintf(stderr, "engine_bench: %s\n", st.message().c_str());
    return -1;
  }
  // The world's output is delivered (to the engine), as in a run, so its sensors count.
  for (const char* t : {"odometry", "imu", "scan", "contacts"}) {
    s->engine().subscribe(std::string("/model/ugv1/") + t,
                          [](const fieldproof::lockstep::Publish&) {});
  }
  s->engine().subscribe(s->pose_topic(), [](const fieldproof::lockstep::Publish&) {});
  const double t0 = wall_s();
  // The engine ticks every 100 ms, as in a run.
  for (int64_t ms = 100; ms <= int64_t{seconds} * 1000; ms += 100) {
    if (!s->engine().sleep_until(SimTime::from_ns(ms * 1'000'000))) return -1;
  }
  const double dt = wall_s() - t0;
  s->stop();
  return dt;
}

double run_case(const fs::path& scenario, const fs::path& runs, const std::string& id) {
  fieldproof::engine::RunOptions o;
  o.scenario_file = scenario;
  o.runs_dir = runs;
  o.run_id = id;
  o.max_rtf = 0.0;
  o.tool_dir = FIELDPROOF_BIN_DIR;
  const double t0 = wall_s();
  const auto r = fieldproof::engine::run_scenario(o);
  const double dt = wall_s() - t0;
  if (r.exit_code != 0) {
    std::fprintf(stderr, "engine_bench: %s: %s (%s)\n", id.c_str(), r.verdict.c_str(),
                 r.reason.c_str());
    for (const auto& e : r.errors) std::fprintf(stderr, "  %s\n", e.c_str());
  }
  return dt;
}

struct Measured {
  double wall = -1;
  double max_rss_mb = 0;
};

// Runs f in a child process: its wall time (from the child, through a pipe) and its peak RSS.
template <typename F>
Measured in_child(F f) {
  int fd[2];
  if (pipe(fd) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    const double w = f();
    (void)!write(fd[1], &w, sizeof w);
    _exit(0);
  }
  close(fd[1]);
  Measured m;
  double w = -1;
  if (read(fd[0], &w, sizeof w) == static_cast<ssize_t>(sizeof w)) m.wall = w;
  close(fd[0]);
  int st = 0;
  rusage ru{};
  wait4(pid, &st, 0, &ru);
  m.max_rss_mb = static_cast<double>(ru.ru_maxrss) / 1024.0;  // KiB on Linux
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 1;
  int seconds = 60;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc) {
      repeat = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc) {
      seconds = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--only") && i + 1 < argc) {
      only = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: engine_bench [--repeat K] [--seconds S] "
                   "[--only floor|inprocess|process|process_zmq]\n");
      return 2;
    }
  }
  if (repeat < 1 || seconds < 5) {
    std::fprintf(stderr, "engine_bench: --repeat >= 1, --seconds >= 5\n");
    return 2;
  }
  if (!only.empty() && only != "floor" && only != "inprocess" && only != "process" &&
      only != "process_zmq") {
    std::fprintf(stderr,
                 "engine_bench: --only takes floor, inprocess, process or process_zmq, not '%s'\n",
                 only.c_str());
    return 2;
  }
  char tmpl[] = "/tmp/fieldproof-engine-bench-XXXXXX";
  if (!mkdtemp(tmpl)) return 1;
  const fs::path dir = tmpl;
  const fs::path inproc = write_scenario(dir, false, seconds);
  const fs::path proc = write_scenario(dir, true, seconds);

  if (only == "process_zmq") {
    ::setenv("FIELDPROOF_SHM", "0", 1);
    only = "process";
  }
  if (!only.empty()) {
    // One case in this process (a profiler sees it and its stack process, nothing else).
    const double w = only == "floor"       ? world_floor(seconds)
                     : only == "inprocess" ? run_case(inproc, dir / "runs", "in")
                                           : run_case(proc, dir / "runs", "pr");
    std::error_code ec;
    fs::remove_all(dir, ec);
    std::printf("%s %.3f s\n", only.c_str(), w);
    return w > 0 ? 0 : 1;
  }
  Measured floor, in, out, out_zmq;
  for (int k = 0; k < repeat; ++k) {
    // The run ids are chosen here: a counter bumped inside the forked child would not move.
    const std::string ia = "in" + std::to_string(k);
    const std::string ib = "pr" + std::to_string(k);
    const Measured f = in_child([&] { return world_floor(seconds); });
    const Measured a = in_child([&] { return run_case(inproc, dir / "runs", ia); });
    const Measured b = in_child([&] { return run_case(proc, dir / "runs", ib); });
    const Measured z = in_child([&] {
      ::setenv("FIELDPROOF_SHM", "0", 1);  // this child and the stack process it starts
      return run_case(proc, dir / "runs", "pz" + std::to_string(k));
    });
    if (out_zmq.wall < 0 || (z.wall >= 0 && z.wall < out_zmq.wall)) out_zmq = z;
    if (floor.wall < 0 || (f.wall >= 0 && f.wall < floor.wall)) floor = f;
    if (in.wall < 0 || (a.wall >= 0 && a.wall < in.wall)) in = a;
    if (out.wall < 0 || (b.wall >= 0 && b.wall < out.wall)) out = b;
    in.max_rss_mb = std::max(in.max_rss_mb, a.max_rss_mb);
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (floor.wall <= 0 || in.wall <= 0 || out.wall <= 0 || out_zmq.wall <= 0) {
    std::fprintf(stderr, "engine_bench: a case failed\n");
    return 1;
  }
  std::printf(
      "# ugv_nav_to_goal, %d s simulated, lockstep step 0.1 s, unpaced; world alone %.3f s\n",
      seconds, floor.wall);
  std::printf("BENCH world_alone_unpaced %.3f s ratio=1.000 baseline=world_alone_unpaced\n",
              floor.wall);
  std::printf(
      "BENCH run_lockstep_inprocess %.3f s ratio=%.3f baseline=world_alone_unpaced "
      "target=2\n",
      in.wall, in.wall / floor.wall);
  std::printf(
      "BENCH run_lockstep_process %.3f s ratio=%.3f baseline=world_alone_unpaced "
      "target=10\n",
      out.wall, out.wall / floor.wall);
  std::printf(
      "BENCH run_lockstep_process_vs_inprocess %.3f s ratio=%.3f baseline=run_lockstep_inprocess "
      "target=2\n",
      out.wall, out.wall / in.wall);
  std::printf(
      "BENCH run_lockstep_process_zmq %.3f s ratio=%.3f baseline=run_lockstep_inprocess\n",
      out_zmq.wall, out_zmq.wall / in.wall);
  std::printf(
      "BENCH run_lockstep_process_shm_vs_zmq %.3f s ratio=%.3f baseline=run_lockstep_process_zmq\n",
      out.wall, out.wall / out_zmq.wall);
  std::printf(
      "BENCH engine_peak_rss_inprocess %.1f MB ratio=%.3f baseline=world_alone_peak_rss "
      "target=150\n",
      in.max_rss_mb, floor.max_rss_mb > 0 ? in.max_rss_mb / floor.max_rss_mb : 0.0);
  return 0;
}
