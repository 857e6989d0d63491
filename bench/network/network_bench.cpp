// network_bench: what radio links cost.
//   run_with_links: the depot drive (ugv_nav_to_goal's, 40 s of simulated time, sim mode with the
//     pace lifted: --max-rtf 0) with a ground link carrying the goal, the status and every topic
//     the ground station sees (odometry, scan, imu, feedback, cmd_vel as telemetry), against the
//     same drive without a network section as the baseline, measured in the same run; target
//     ratio <= 1.1. Each case runs in a child process; --repeat K keeps the fastest of each (the
//     order of the pair alternates). Wall time, and CPU time (user + system of the run's process,
//     steadier under load) as run_with[out]_links_cpu. run_with_links_paired[_cpu]: the median
//     of each round's own ratio (the link run over the plain run of the same round, a second
//     apart), which a slowdown of the machine lasting seconds moves less than the best of each.
//   link_ns_per_msg: LinkModel::send plus the relay's publish hook per message (a 200-byte
//     payload, 5 % loss, jitter), against a loop that only copies the payload as the baseline.
//   --split: three more cases that tell where run_with_links' extra cost is, each against the same
//     baseline: run_with_links_no_telemetry (the link carries only the goal and the status, no
//     telemetry), run_with_links_zero_latency (the same telemetry with 0 s latency and jitter:
//     every ground copy lands on the instant of the message it copies, so none is an instant of
//     its own) and run_with_links_no_lookahead (run_with_links' drive with the engine's relay
//     lookahead off, as `fieldproof run --no-relay-lookahead`: every delivery the engine reads
//     holds the clock until it has run, docs/lockstep.md "Lookahead"), which shows what the
//     lookahead buys; every case also prints the context switches of its process (ctxsw,
//     voluntary + involuntary), which count the lock-step hand-overs.
//   --cpu N: each case's process runs on CPU N only (sched_setaffinity). The run's threads hand
//     the clock to each other thousands of times a second; spread over two cores each hand-over
//     is a cross-core wake-up whose cost depends on where the scheduler put the threads, which
//     moves a best-of-7 ratio by +-20 % from one bench run to the next. On one core the two
//     cases do the same hand-overs the same way, and the ratio measures the work. The default is
//     --cpu 0 --repeat 7 (what `make bench` prints); --cpu any leaves the threads unpinned.
// Usage: network_bench [--repeat K] [--seconds S] [--split] [--cpu N|any]
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fieldproof/engine/run.hpp"
#include "fieldproof/network/network.hpp"

namespace {

namespace fs = std::filesystem;
using fieldproof::SimTime;

double wall_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

enum class Net { kNone, kLinks, kNoTelemetry, kZeroLatency, kNoLookahead };

const char* case_name(Net n) {
  switch (n) {
    case Net::kNone:
      return "plain";
    case Net::kLinks:
      return "links";
    case Net::kNoTelemetry:
      return "no_telemetry";
    case Net::kZeroLatency:
      return "zero_latency";
    case Net::kNoLookahead:
      return "no_lookahead";
  }
  return "?";
}

fs::path write_scenario(const fs::path& dir, Net net, int seconds) {
  const bool links = net != Net::kNone;
  const fs::path p = dir / (std::string(case_name(net)) + ".yaml");
  std::ofstream out(p);
  out << "name: " << (links ? "drive_links" : "drive_plain") << "\n"
      << "world: " << FIELDPROOF_SOURCE_DIR << "/examples/worlds/depot.sdf\n"
      << "map: {bounds: {x_min: -15.6, x_max: 15.6, y_min: -10.6, y_max: 10.6}}\n"
      << "seed: 7\n"
      << "time: {mode: sim, timeout_s: 5m}\n"
      << "vehicles:\n  - {name: ugv1, spawn: dock, stack: {plugin: fieldproof_ugv_nav_plugin}}\n";
  if (links) {
    out << "network:\n"
        << "  ground_station: {name: gcs, x: -14, y: 0}\n"
        << "  links: [{vehicle: ugv1, latency_s: "
        << (net == Net::kZeroLatency ? "0ms, jitter_s: 0ms" : "30ms, jitter_s: 10ms")
        << ", loss: 0.02}]\n"
        << "  telemetry: "
        << (net == Net::kNoTelemetry
                ? "[]"
                : "[odometry, scan, imu, navigate_to_pose/feedback, cmd_vel, lifecycle]")
        << "\n";
  }
  out << "timeline:\n"
      << "  - {action: navigate_to_pose, name: drive, vehicle: ugv1, at: 2s, goal: goal_a}\n"
      << "  - {action: cmd_vel, name: stop, vehicle: ugv1, at: " << seconds << "s, linear_x: 0}\n"
      << "assertions:\n"
      << "  - {name: reached_goal, type: reach_pose, vehicle: ugv1, target: goal_a, "
         "tolerance_m: 0.5, within_s: 60s}\n"
      << "outputs: {record: true}\n";
  return p;
}

// CPU seconds (user + system) of this process and its threads so far.
double cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// Context switches (voluntary + involuntary) of this process's threads so far.
double ctxsw() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_nvcsw + u.ru_nivcsw);
}

struct Cost {
  double wall = -1;
  double cpu = -1;
  double switches = -1;
};

Cost run_case(const fs::path& scenario, const fs::path& runs, const std::string& id,
              bool lookahead) {
  fieldproof::engine::RunOptions o;
  o.relay_lookahead = lookahead;
  o.scenario_file = scenario;
  o.runs_dir = runs;
  o.run_id = id;
  o.max_rtf = 0.0;
  o.tool_dir = FIELDPROOF_BIN_DIR;
  const double t0 = wall_s();
  const double c0 = cpu_s();
  const double s0 = ctxsw();
  const auto r = fieldproof::engine::run_scenario(o);
  Cost c{wall_s() - t0, cpu_s() - c0, ctxsw() - s0};
  if (r.exit_code != 0) {
    std::fprintf(stderr, "network_bench: %s: %s (%s)\n", id.c_str(), r.verdict.c_str(),
                 r.reason.c_str());
    return {};
  }
  return c;
}

template <typename F>
Cost in_child(F f, int cpu) {
  int fd[2];
  if (pipe(fd) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    if (cpu >= 0) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpu, &set);
      if (sched_setaffinity(0, sizeof set, &set) != 0) {
        std::perror("network_bench: sched_setaffinity");
        _exit(1);
      }
    }
    const Cost c = f();
    (void)!write(fd[1], &c, sizeof c);
    _exit(0);
  }
  close(fd[1]);
  Cost c;
  if (read(fd[0], &c, sizeof c) != static_cast<ssize_t>(sizeof c)) c = {};
  close(fd[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  return c;
}

void keep_best(const Cost& c, Cost* best) {
  if (c.wall > 0 && (best->wall < 0 || c.wall < best->wall)) best->wall = c.wall;
  if (c.cpu > 0 && (best->cpu < 0 || c.cpu < best->cpu)) best->cpu = c.cpu;
  if (c.switches >= 0 && (best->switches < 0 || c.switches < best->switches)) {
    best->switches = c.switches;
  }
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// ns per message through the relay (model + hook), and the copy-only baseline.
std::pair<double, double> per_message(int n) {
  fieldproof::network::NetworkConfig c;
  c.ground = "gcs";
  c.links.push_back({"gcs_ugv1", "ugv1", "", {}, {}});
  c.links[0].params.latency = fieldproof::milliseconds(30);
  c.links[0].params.jitter = fieldproof::milliseconds(10);
  c.links[0].params.loss = 0.05;
  c.uplink = {"odometry"};
  uint64_t sink = 0;
  fieldproof::network::NetworkHooks h;
  h.publish_at = [&sink](SimTime at, const std::string& t, std::string p, const std::string&) {
    sink += static_cast<uint64_t>(at.ns()) + t.size() + p.size();
  };
  fieldproof::network::Network net(c, h);
  const std::string payload(200, 'x');
  const std::string topic = "/model/ugv1/odometry";
  double t0 = wall_s();
  for (int i = 0; i < n; ++i) {
    net.on_vehicle_message(topic, SimTime::from_ns(int64_t{i} * 20'000'000), payload, "T");
    if (i % 50 == 0) net.tick(SimTime::from_ns(int64_t{i} * 20'000'000));
  }
  const double with = (wall_s() - t0) * 1e9 / n;
  t0 = wall_s();
  for (int i = 0; i < n; ++i) {
    std::string p = payload;
    h.publish_at(SimTime::from_ns(int64_t{i} * 20'000'000), topic, std::move(p), "T");
  }
  const double base = (wall_s() - t0) * 1e9 / n;
  if (sink == 42) std::puts("");  // keeps the loops
  return {with, base};
}

}  // namespace

int main(int argc, char** argv) {
  // Defaults: the measurement docs/performance.md quotes (pinned, paired, seven rounds).
  int repeat = 7;
  int seconds = 40;
  bool split = false;
  int cpu = 0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc) {
      repeat = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc) {
      seconds = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--split")) {
      split = true;
    } else if (!std::strcmp(argv[i], "--cpu") && i + 1 < argc) {
      ++i;
      char* end = nullptr;
      const long n = std::strtol(argv[i], &end, 10);
      cpu = !std::strcmp(argv[i], "any")                                    ? -1
            : (end != argv[i] && *end == '\0' && n >= 0 && n < CPU_SETSIZE) ? static_cast<int>(n)
                                                                            : -2;  // refused below
    } else {
      std::fprintf(stderr,
                   "usage: network_bench [--repeat K] [--seconds S] [--split] [--cpu N|any]\n"
                   "  the depot drive with and without radio links, and ns per message\n"
                   "  --split: also the link without telemetry, with 0 s latency and without\n"
                   "  the engine's relay lookahead\n"
                   "  --repeat K: rounds (default 7)\n"
                   "  --cpu N: run each case on CPU N only (default 0: steadier ratios);\n"
                   "  --cpu any: wherever the scheduler puts its threads\n");
      return 2;
    }
  }
  if (repeat < 1 || seconds < 5 || cpu < -1 || cpu >= CPU_SETSIZE) {
    std::fprintf(stderr, "network_bench: --repeat >= 1, --seconds >= 5, --cpu 0 or more, or any\n");
    return 2;
  }
  char tmpl[] = "/tmp/fieldproof-network-bench-XXXXXX";
  if (!mkdtemp(tmpl)) return 1;
  const fs::path dir = tmpl;
  std::vector<Net> cases = {Net::kNone, Net::kLinks};
  if (split) {
    cases.push_back(Net::kNoTelemetry);
    cases.push_back(Net::kZeroLatency);
    cases.push_back(Net::kNoLookahead);
  }
  std::vector<fs::path> files;
  for (Net n : cases) files.push_back(write_scenario(dir, n, seconds));
  std::vector<Cost> best(cases.size());
  // Each round's own ratio of the link run to the plain one: the two ran within a second of each
  // other, so a slowdown of the machine that lasts seconds moves both.
  std::vector<double> round_wall, round_cpu;
  for (int k = 0; k < repeat; ++k) {
    std::vector<Cost> round(cases.size());
    // Rotating which goes first, so that a load that drifts during a round favours none.
    for (size_t j = 0; j < cases.size(); ++j) {
      const size_t c = (j + static_cast<size_t>(k)) % cases.size();
      const std::string id = std::string(case_name(cases[c])) + std::to_string(k);
      const bool lookahead = cases[c] != Net::kNoLookahead;
      round[c] = in_child([&] { return run_case(files[c], dir / "runs", id, lookahead); }, cpu);
      keep_best(round[c], &best[c]);
    }
    if (round[0].wall > 0 && round[1].wall > 0) round_wall.push_back(round[1].wall / round[0].wall);
    if (round[0].cpu > 0 && round[1].cpu > 0) round_cpu.push_back(round[1].cpu / round[0].cpu);
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  for (const Cost& c : best) {
    if (c.wall <= 0) {
      std::fprintf(stderr, "network_bench: a case failed\n");
      return 1;
    }
  }
  const Cost& best_plain = best[0];
  const Cost& best_links = best[1];
  const auto [ns, base_ns] = per_message(2'000'000);
  std::printf("# depot drive, %d s simulated, sim mode unpaced, best of %d%s\n", seconds, repeat,
              cpu >= 0 ? (", on CPU " + std::to_string(cpu) + " only").c_str() : "");
  std::printf("BENCH run_without_links %.3f s ratio=1.000 baseline=run_without_links\n",
              best_plain.wall);
  std::printf("BENCH run_with_links %.3f s ratio=%.3f baseline=run_without_links target=1.1\n",
              best_links.wall, best_links.wall / best_plain.wall);
  // CPU time (user + system, every thread of the run's process) moves less with the machine's
  // load than wall time does.
  std::printf("BENCH run_without_links_cpu %.3f s ratio=1.000 baseline=run_without_links_cpu\n",
              best_plain.cpu);
  std::printf(
      "BENCH run_with_links_cpu %.3f s ratio=%.3f baseline=run_without_links_cpu "
      "target=1.1\n",
      best_links.cpu, best_plain.cpu > 0 ? best_links.cpu / best_plain.cpu : 0.0);
  std::printf("BENCH link_ns_per_msg %.1f ns ratio=%.3f baseline=copy_and_hook_ns_per_msg\n", ns,
              base_ns > 0 ? ns / base_ns : 0.0);
  // The median of the rounds' own ratios (each round's plain run is its baseline).
  const double mw = median(round_wall), mc = median(round_cpu);
  std::printf(
      "BENCH run_with_links_paired %.3f x ratio=%.3f baseline=run_without_links_same_round "
      "target=1.1\n",
      mw, mw);
  std::printf(
      "BENCH run_with_links_paired_cpu %.3f x ratio=%.3f "
      "baseline=run_without_links_cpu_same_round target=1.1\n",
      mc, mc);
  if (split) {
    for (size_t c = 1; c < cases.size(); ++c) {
      const std::string name = c == 1 ? "run_with_links" : std::string("run_with_links_") +
                                                                case_name(cases[c]);
      if (c > 1) {
        std::printf("BENCH %s %.3f s ratio=%.3f baseline=run_without_links\n", name.c_str(),
                    best[c].wall, best[c].wall / best_plain.wall);
        std::printf("BENCH %s_cpu %.3f s ratio=%.3f baseline=run_without_links_cpu\n",
                    name.c_str(), best[c].cpu,
                    best_plain.cpu > 0 ? best[c].cpu / best_plain.cpu : 0.0);
      }
    }
    // Fewest context switches of each case (a count, not a time: steadier than either).
    std::printf("BENCH run_without_links_ctxsw %.0f switches ratio=1.000 "
                "baseline=run_without_links_ctxsw\n",
                best_plain.switches);
    for (size_t c = 1; c < cases.size(); ++c) {
      const std::string name = c == 1 ? "run_with_links" : std::string("run_with_links_") +
                                                                case_name(cases[c]);
      std::printf("BENCH %s_ctxsw %.0f switches ratio=%.3f baseline=run_without_links_ctxsw\n",
                  name.c_str(), best[c].switches,
                  best_plain.switches > 0 ? best[c].switches / best_plain.switches : 0.0);
    }
  }
  return 0;
}
