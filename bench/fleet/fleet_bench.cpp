// fleet_bench [--points N] [--jobs J] [--index-runs M] [--skip-sweep] [--slurm-points K]
//             [--skip-slurm]
//
// sweep_overhead: `fieldproof sweep examples/scenarios/ugv_nav_to_goal.yaml --seeds 0..N-1 -j J
// --max-rtf 0` (N = 200 by default): the sweep's wall time over the sum of its points' own wall
// times (run.json durations.wall_s) divided by J, measured in the same run. 1.0 would be a pool
// that costs nothing beyond the runs themselves; process start, planning and the index count
// against it. Target <= 1.1. The points are forked by the sweep (the default, --points-by fork);
// sweep_overhead_exec is the same sweep with --points-by exec (one `fieldproof run` exec'd per
// point, the way before the fork server), for comparison.
// sweep_overhead_vs_runs: the same sweep's wall time over (the wall time of S = 10 of its points,
// evenly spaced seeds, each run alone as `fieldproof run ... --max-rtf 0` one after another,
// scaled to N, / J): what sweeping costs over running the points by hand. Below 1 the sweep is
// cheaper than running them (the fork server saves each point's program start and SDF parse).
// runs_list_10k_ms: `fieldproof runs list` (the table, to /dev/null) over an index of M = 10 000
// runs, median of 5, beside the same command over an index of one run. Target <= 100 ms.
// slurm_overhead_per_point_ms: the same K points (K = 20) swept with --executor slurm on a private
// single-node Slurm this bench starts (tests/fleet/slurm_cluster.hpp: root, slurm-wlm, munge),
// and with the local pool, both at -j J: (sweep wall time - points' own wall time / J) / K for
// each, the local pool's the baseline. Without root or the packages it says why and prints no
// BENCH line for it.
#include <fcntl.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fieldproof/fleet/run_index.hpp"
#include "fieldproof/util/spawn.hpp"
#include "fleet/slurm_cluster.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Runs argv with stdout and stderr to /dev/null; the exit code (-1: did not exit). `extra_env`
// ("NAME=value") is added to the environment.
int run(const std::vector<std::string>& args, const std::string& extra_env = "") {
  fieldproof::util::SpawnOptions o;
  o.stdout_to = fieldproof::util::Redirect::null();
  o.stderr_to = fieldproof::util::Redirect::null();
  if (const size_t eq = extra_env.find('='); eq != std::string::npos) {
    o.env = {{extra_env.substr(0, eq), extra_env.substr(eq + 1)}};
  }
  const fieldproof::util::Spawned s = fieldproof::util::spawn_process(args, o);
  if (!s.ok()) return -1;
  int st = 0;
  waitpid(s.pid, &st, 0);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

json fake_run(int i) {
  return {{"run_id", "r" + std::to_string(i)},
          {"scenario", {{"name", i % 3 ? "ugv_nav_to_goal" : "depot_patrol"}, {"file", "x.yaml"}}},
          {"status", i % 10 ? "passed" : "failed"},
          {"verdict", i % 10 ? "PASS" : "FAIL"},
          {"reason", "every assertion passed"},
          {"seed", i},
          {"started_utc", "2026-12-01T10:00:00.000Z"},
          {"durations", {{"wall_s", 1.5}, {"sim_s", 30.0}}},
          {"assertions",
           {{{"name", "reached_goal"}, {"type", "reach_pose"}, {"status", "passed"}},
            {{"name", "no_collision"}, {"type", "no_collision"}, {"status", "passed"}}}},
          {"kpis", {{"drive.length_m", {{"value", 22.5}, {"unit", "m"}}},
                    {"mission.time_s", {{"value", 31.2}, {"unit", "s"}}}}}};
}

bool build_index(const fs::path& dir, int runs) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto fail = [](const fieldproof::Status& s) {
    std::fprintf(stderr, "%s\n", s.message().c_str());
    return false;
  };
  auto opened = fieldproof::fleet::RunIndex::open(dir / "index.sqlite");
  if (!opened.ok()) return fail(opened.status());
  const auto idx = std::move(opened).value();
  if (const fieldproof::Status s = idx->begin(); !s.ok()) return fail(s);
  for (int i = 0; i < runs; ++i) {
    const fs::path d = dir / ("r" + std::to_string(i));
    fs::create_directories(d);
    std::ofstream(d / "run.json") << fake_run(i).dump();
    if (const fieldproof::Status s = idx->add_run(d); !s.ok()) return fail(s);
  }
  const fieldproof::Status s = idx->commit();
  return s.ok() || fail(s);
}

double median_list_ms(const fs::path& dir) {
  const std::string bin = std::string(FIELDPROOF_BIN_DIR) + "/fieldproof";
  std::vector<double> t;
  run({bin, "runs", "list", "--runs-dir", dir.string()});  // warm the page cache
  for (int i = 0; i < 5; ++i) {
    const double t0 = now_s();
    if (run({bin, "runs", "list", "--runs-dir", dir.string()}) != 0) return -1;
    t.push_back((now_s() - t0) * 1e3);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct SweepTiming {
  double wall = 0;       // the sweep command, start to exit
  double points = 0;     // the sum of the points' own wall times (run.json durations.wall_s)
  int finished = 0;
  int exit_code = -1;
};

SweepTiming time_sweep(const fs::path& runs, int points, int jobs,
                       const std::vector<std::string>& extra_args, const std::string& env = "") {
  const std::string bin = std::string(FIELDPROOF_BIN_DIR) + "/fieldproof";
  std::vector<std::string> args = {
      bin, "sweep", std::string(FIELDPROOF_SOURCE_DIR) + "/examples/scenarios/ugv_nav_to_goal.yaml",
      "--seeds", "0.." + std::to_string(points - 1), "-j", std::to_string(jobs), "--max-rtf", "0",
      "--sweep-id", "bench", "--no-report", "--runs-dir", runs.string()};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  SweepTiming t;
  const double t0 = now_s();
  t.exit_code = run(args, env);
  t.wall = now_s() - t0;
  for (int s = 0; s < points; ++s) {
    std::ifstream in(runs / "bench" / ("s" + std::to_string(s)) / "run.json");
    if (!in) continue;
    const json r = json::parse(in, nullptr, false);
    if (r.is_discarded()) continue;
    t.points += r["durations"].value("wall_s", 0.0);
    ++t.finished;
  }
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  int points = 200, jobs = 2, index_runs = 10000;
  bool skip_sweep = false, skip_slurm = false, skip_exec = false;
  int slurm_points = 20;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--points") && i + 1 < argc) {
      points = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--jobs") && i + 1 < argc) {
      jobs = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--index-runs") && i + 1 < argc) {
      index_runs = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--skip-sweep")) {
      skip_sweep = true;
    } else if (!std::strcmp(argv[i], "--skip-exec")) {
      skip_exec = true;  // no --points-by exec sweep (the longest part; its figure is a baseline)
    } else if (!std::strcmp(argv[i], "--slurm-points") && i + 1 < argc) {
      slurm_points = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--skip-slurm")) {
      skip_slurm = true;
    } else {
      std::fprintf(stderr, "usage: fleet_bench [--points N] [--jobs J] [--index-runs M] "
                           "[--skip-sweep] [--skip-exec] [--slurm-points K] [--skip-slurm]\n");
      return 2;
    }
  }
  const fs::path tmp = fs::temp_directory_path() / ("fleet_bench_" + std::to_string(getpid()));
  fs::remove_all(tmp);

  const fs::path one = tmp / "index1";
  const fs::path many = tmp / "index10k";
  if (!build_index(one, 1) || !build_index(many, index_runs)) return 1;
  const double base_ms = median_list_ms(one);
  const double list_ms = median_list_ms(many);
  if (base_ms < 0 || list_ms < 0) return 1;
  std::printf("runs list: %.1f ms over %d runs, %.1f ms over 1 run (median of 5)\n", list_ms,
              index_runs, base_ms);

  if (!skip_sweep) {
    const SweepTiming t = time_sweep(tmp / "sweep", points, jobs, {});
    if (t.exit_code != 0 && t.exit_code != 1) {
      std::fprintf(stderr, "the sweep exited with %d\n", t.exit_code);
      return 1;
    }
    const double ideal = t.points / jobs;
    std::printf("sweep: %d points (%d finished), -j %d: %.2f s; points' own wall time %.2f s "
                "(/%d = %.2f s)\n",
                points, t.finished, jobs, t.wall, t.points, jobs, ideal);
    std::printf("BENCH sweep_overhead %.3f x ratio=%.3f baseline=points_wall_sum_over_jobs\n",
                t.wall / ideal, t.wall / ideal);
    const SweepTiming e = skip_exec ? SweepTiming{}
                                    : time_sweep(tmp / "sweep_exec", points, jobs, {"--points-by", "exec"});
    if (!skip_exec && (e.exit_code == 0 || e.exit_code == 1)) {
      std::printf("sweep --points-by exec: %.2f s; points' own wall time %.2f s\n", e.wall,
                  e.points);
      std::printf("BENCH sweep_overhead_exec %.3f x ratio=%.3f baseline=points_wall_sum_over_jobs\n",
                  e.wall / (e.points / jobs), e.wall / (e.points / jobs));
    }
    // The same points run alone, one after another: a sample, scaled.
    const int sample = std::min(points, 10);
    double alone = 0;
    const std::string bin = std::string(FIELDPROOF_BIN_DIR) + "/fieldproof";
    for (int k = 0; k < sample; ++k) {
      const int seed = k * points / sample;
      const double a0 = now_s();
      const int rc = run({bin, "run",
                          std::string(FIELDPROOF_SOURCE_DIR) + "/examples/scenarios/ugv_nav_to_goal.yaml",
                          "--seed", std::to_string(seed), "--max-rtf", "0", "--run-id",
                          "alone-" + std::to_string(seed), "--runs-dir", (tmp / "alone").string()});
      if (rc != 0 && rc != 1) {
        std::fprintf(stderr, "fieldproof run --seed %d exited with %d\n", seed, rc);
        return 1;
      }
      alone += now_s() - a0;
    }
    const double runs_ideal = alone * points / sample / jobs;
    std::printf("the same scenario run alone: %d runs %.2f s (%.3f s each), scaled to %d / %d = "
                "%.2f s\n", sample, alone, alone / sample, points, jobs, runs_ideal);
    std::printf("BENCH sweep_overhead_vs_runs %.3f x ratio=%.3f "
                "baseline=alone_runs_wall_sum_scaled_over_jobs\n",
                t.wall / runs_ideal, t.wall / runs_ideal);
  }
  if (!skip_slurm) {
    std::string why;
    const auto cluster =
        fieldproof::testing::SlurmCluster::start(tmp / "slurmd", &why);
    if (!cluster) {
      std::printf("slurm_overhead_per_point_ms: not measured: %s\n", why.c_str());
    } else {
      const SweepTiming local = time_sweep(tmp / "slurm_local", slurm_points, jobs, {});
      const SweepTiming sl =
          time_sweep(tmp / "slurm", slurm_points, jobs,
                     {"--executor", "slurm", "--slurm-poll", "0.2",
                      "--shards", std::to_string(slurm_points)},
                     "SLURM_CONF=" + cluster->conf().string());
      const auto per_point_ms = [&](const SweepTiming& t) {
        return (t.wall - t.points / jobs) / slurm_points * 1e3;
      };
      if (sl.finished != slurm_points || local.finished != slurm_points) {
        std::fprintf(stderr, "slurm bench: %d and %d of %d points finished (slurm, local)\n",
                     sl.finished, local.finished, slurm_points);
        return 1;
      }
      std::printf("slurm: %d points, one task each, -j %d: %.2f s (points %.2f s); local pool "
                  "%.2f s (points %.2f s)\n",
                  slurm_points, jobs, sl.wall, sl.points, local.wall, local.points);
      std::printf("BENCH slurm_overhead_per_point_ms %.1f ms ratio=%.3f "
                  "baseline=local_pool_overhead_per_point_ms(%.1f)\n",
                  per_point_ms(sl), per_point_ms(sl) / per_point_ms(local), per_point_ms(local));
    }
  }
  std::printf("BENCH runs_list_10k_ms %.1f ms ratio=%.3f baseline=runs_list_1_run_ms\n", list_ms,
              list_ms / base_ms);
  fs::remove_all(tmp);
  return 0;
}
