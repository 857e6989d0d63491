// world_bench: simulated seconds per wall second of the depot yard, unpaced, with 1, 10, 50 and
// 200 UGVs driving circles with every sensor on (lidar, IMU, odometry, contacts, poses, clock,
// stats), and how the cost per vehicle grows with their number.
//
// The world: examples/worlds/depot.sdf (30 x 20 m, 13 static models) for up to 50 vehicles; for
// more, ceil(N / 50) copies of the depot side by side (each copy's models added as static
// models), 50 vehicles in each: the density of vehicles and obstacles stays that of the 50-UGV
// case, so a world whose cost grows linearly shows a per-vehicle cost ratio near 1.
//
// Figures, each the fastest of --repeat runs (the least disturbed by other load):
//   world_rtf_ugvN               simulated / wall time; baseline = the same loop, sensors off
//   world_cpu_rtf_ugvN           simulated / CPU time of the stepping thread (what a busy
//                                machine's scheduler does not distort); baseline = wall RTF
//   world_proc_cpu_rtf_ugvN      simulated / CPU time of the whole process, the sensor pass's
//                                workers included (comparable across thread counts: with T
//                                threads, wall RTF can reach up to T x this); baseline = wall RTF
//   world_per_vehicle_ratio_ugvN N x RTF(N) / RTF(1): the vehicle-seconds per wall second
//                                relative to one vehicle (1 = linear; 0.5 = twice the cost per
//                                vehicle); from CPU time, baseline = world_cpu_rtf_ugv1
//   world_raycast_share_ugvN     share of wall time spent ray casting
//   world_lockstep_rtf_ugv1      one UGV stepped through the in-process coordinator
//   world_load_3000_models       load time of a generated 3 000-model world (and its peak RSS,
//                                world_load_3000_models_peak_rss), in a child process; baseline:
//                                sdformat reading 100 of them, scaled by 30
// Usage: world_bench [--seconds S] [--repeat K] [--world PATH] [--only N] [--hash] [--load]
//                    [--threads T]   (WorldOptions::threads; default FIELDPROOF_WORLD_THREADS or
//                                     min(hardware, 4))
// --hash prints each count's message-stream hash instead of timing it: the same on every build
// of the same world code, so an optimisation that changes what the world outputs shows.
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "fieldproof/lockstep/inprocess.hpp"
#include "fieldproof/lockstep/participant.hpp"
#include "fieldproof/world/world.hpp"
#include "fieldproof/world/world_participant.hpp"

namespace {

using fieldproof::SimTime;
using fieldproof::world::Pose2D;
using fieldproof::world::StaticShape;
using fieldproof::world::World;
using fieldproof::world::WorldMessage;
using fieldproof::world::WorldOptions;

constexpr int kPerTile = 50;
constexpr double kTileX = 31.0, kTileY = 21.0;  // the depot is 30.4 x 20.2 m

SimTime wall_now() {
  return SimTime::from_ns(std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::steady_clock::now().time_since_epoch())
                              .count());
}

double cpu_s(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}
double thread_cpu_s() { return cpu_s(CLOCK_THREAD_CPUTIME_ID); }
double process_cpu_s() { return cpu_s(CLOCK_PROCESS_CPUTIME_ID); }

int g_threads = 0;  // --threads: WorldOptions::threads
int g_threads_used = 0;

struct Result {
  uint64_t hash =
      1469598103934665603ull;  // FNV-1a of the messages but stats: topic, stamp, payload
  double rtf = 0;              // simulated s per wall s
  double cpu_rtf = 0;          // simulated s per CPU s of this thread
  double proc_cpu_rtf = 0;     // simulated s per CPU s of the process (workers included)
  double raycast_share = 0;    // fraction of wall time
  uint64_t messages = 0;
  int vehicles = 0;
};

// Tile (i, j) of a near-square arrangement of `tiles` copies.
void tile_offset(int t, int tiles, double* dx, double* dy) {
  const int cols = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(tiles))));
  *dx = (t % cols) * kTileX;
  *dy = (t / cols) * kTileY;
}

// lockstep: the world steps as a regulating participant of an in-process coordinator (one grant
// per physics step, every message published through it) instead of calling step() directly.
Result run(const std::string& path, int n, bool sensors, double sim_seconds, bool lockstep = false,
           bool hash = false) {
  Result res;
  WorldOptions o;
  o.seed = 1;
  o.sensors = sensors;
  o.wall_now = wall_now;
  o.threads = g_threads;
  if (!lockstep) {
    o.sink = [&res, hash](WorldMessage&& m) {
      res.messages += m.payload.size() > 0 ? 1 : 0;
      // Statistics carry the measured (wall-clock) real-time factor: left out.
      if (!hash || m.topic.ends_with("/stats")) return;
      auto mix = [&res](const void* p, size_t n) {
        const auto* b = static_cast<const unsigned char*>(p);
        for (size_t i = 0; i < n; ++i) res.hash = (res.hash ^ b[i]) * 1099511628211ull;
      };
      const int64_t stamp = m.stamp.ns();
      mix(m.topic.data(), m.topic.size());
      mix(&stamp, sizeof stamp);
      mix(m.payload.data(), m.payload.size());
    };
  }
  auto loaded = World::load(path, o);
  if (!loaded.world) {
    for (const auto& e : loaded.errors) std::fprintf(stderr, "%s\n", e.c_str());
    std::exit(2);
  }
  World& w = *loaded.world;
  g_threads_used = w.sensor_threads();
  const int tiles = (n + kPerTile - 1) / kPerTile;
  if (tiles > 1) {
    std::map<std::string, std::vector<StaticShape>> models;
    for (const StaticShape& s : w.static_shapes()) models[s.model].push_back(s);
    for (int t = 1; t < tiles; ++t) {
      double dx = 0, dy = 0;
      tile_offset(t, tiles, &dx, &dy);
      for (const auto& [name, shapes] : models) {
        std::vector<StaticShape> copy = shapes;
        for (StaticShape& s : copy) {
          s.pose.x += dx;
          s.pose.y += dy;
        }
        if (!w.spawn_static(name + "_tile" + std::to_string(t), std::move(copy)).ok()) std::exit(1);
      }
    }
  }
  // Spawn on a lattice over each yard, skipping places taken by obstacles. Circles of radius
  // 0.8 m: neighbours 2.45 m apart do not meet (some vehicles do touch shelves and stop there).
  for (int t = 0; t < tiles; ++t) {
    double dx = 0, dy = 0;
    tile_offset(t, tiles, &dx, &dy);
    int in_tile = 0;
    for (double y = -8.6; y <= 8.6 && in_tile < kPerTile && res.vehicles < n; y += 2.45) {
      for (double x = -13.5; x <= 13.5 && in_tile < kPerTile && res.vehicles < n; x += 2.45) {
        const std::string name = "ugv" + std::to_string(res.vehicles + 1);
        if (w.spawn_vehicle(name, Pose2D{x + dx, y + dy, 0.0}).ok()) {
          (void)w.set_cmd_vel(name, {0.4, 0.5});
          ++res.vehicles;
          ++in_tile;
        }
      }
    }
  }
  const int64_t steps = static_cast<int64_t>(sim_seconds * 1e9) / w.step_size().ns();
  const SimTime t0 = wall_now();
  const double c0 = thread_cpu_s();
  const double p0 = process_cpu_s();
  if (lockstep) {
    fieldproof::lockstep::InProcessCoordinator coord;
    coord.set_tap([&res](const fieldproof::lockstep::Publish&) { ++res.messages; });
    fieldproof::lockstep::ParticipantOptions po;
    po.name = "world";
    fieldproof::lockstep::Participant p(coord.make_link(), po);
    fieldproof::world::WorldParticipant glue(w, p);
    glue.run_until(SimTime::zero() + w.step_size() * steps);
  } else {
    w.step_n(steps);
  }
  const double cpu_s = thread_cpu_s() - c0;
  const double proc_s = process_cpu_s() - p0;
  const double wall_s = static_cast<double>((wall_now() - t0).ns()) * 1e-9;
  res.rtf = w.sim_time().seconds_f() / wall_s;
  res.cpu_rtf = cpu_s > 0 ? w.sim_time().seconds_f() / cpu_s : 0.0;
  res.proc_cpu_rtf = proc_s > 0 ? w.sim_time().seconds_f() / proc_s : 0.0;
  res.raycast_share = static_cast<double>(w.raycast_wall_ns()) * 1e-9 / wall_s;
  return res;
}

// A generated world of n static models (boxes on a 3 m lattice, each with a visual) written to
// a temporary file: the kind of large world that once took 45 s and 8 GB for 3 000.
std::string write_generated_world(int n) {
  char path[] = "/tmp/world_bench_XXXXXX.sdf";
  const int fd = mkstemps(path, 4);
  if (fd < 0) std::exit(1);
  close(fd);
  std::ofstream out(path);
  out << "<?xml version=\"1.0\"?>\n<sdf version=\"1.9\">\n<world name=\"generated\">\n";
  out << "<model name=\"ground_plane\"><static>true</static><link name=\"link\"><collision "
         "name=\"collision\"><geometry><plane><normal>0 0 1</normal><size>400 400</size></plane>"
         "</geometry></collision></link></model>\n";
  for (int i = 0; i < n; ++i) {
    out << "<model name=\"box_" << i << "\">\n  <static>true</static>\n  <pose>"
        << (i % 60) * 3.0 - 90 << " " << (i / 60) * 3.0 - 90 << " 0.5 0 0 " << 0.01 * i
        << "</pose>\n  <link name=\"link\">\n    <collision name=\"collision\"><geometry><box>"
           "<size>1 1 1</size></box></geometry></collision>\n    <visual name=\"visual\">"
           "<geometry><box><size>1 1 1</size></box></geometry></visual>\n  </link>\n</model>\n";
  }
  out << "</world>\n</sdf>\n";
  return path;
}

struct LoadFigures {
  double seconds = 0;      // World::load wall time
  double cpu_seconds = 0;  // World::load CPU time (user + system), which load distorts far less
  double peak_rss_mb = 0;  // the process's peak resident set, load included
  double base_rss_mb = 0;  // before the load
};

// Loads `path` in a child process of its own (so its peak RSS is the load's), sdformat reading
// every model (direct = false) or the plain ones read directly (the default).
LoadFigures measure_load(const std::string& path, bool direct) {
  int fds[2];
  if (pipe(fds) != 0) std::exit(1);
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    LoadFigures f;
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    f.base_rss_mb = static_cast<double>(ru.ru_maxrss) / 1024.0;
    WorldOptions o;
    if (!direct) o.direct_read_threshold = 0;
    const auto cpu = [](const rusage& u) {
      return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
             static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
    };
    const double cpu0 = cpu(ru);
    const SimTime t0 = wall_now();
    const auto loaded = World::load(path, o);
    f.seconds = static_cast<double>((wall_now() - t0).ns()) * 1e-9;
    getrusage(RUSAGE_SELF, &ru);
    f.cpu_seconds = cpu(ru) - cpu0;
    f.peak_rss_mb = static_cast<double>(ru.ru_maxrss) / 1024.0;
    if (!loaded.world) f.seconds = -1;
    if (write(fds[1], &f, sizeof f) != static_cast<ssize_t>(sizeof f)) _exit(1);
    _exit(0);
  }
  close(fds[1]);
  LoadFigures f;
  const bool got = read(fds[0], &f, sizeof f) == static_cast<ssize_t>(sizeof f);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!got || f.seconds < 0) {
    std::fprintf(stderr, "world_bench: the generated world did not load\n");
    std::exit(1);
  }
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 5.0;
  int repeat = 3;
  int only = 0;
  bool hash = false;
  bool load_only = false;  // --load: only the load figures  // print the stream's hash of each
                           // count instead (determinism across builds)
  std::string path = "examples/worlds/depot.sdf";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
      repeat = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--world") == 0 && i + 1 < argc) {
      path = argv[++i];
    } else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      only = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--load") == 0) {
      load_only = true;
    } else if (std::strcmp(argv[i], "--hash") == 0) {
      hash = true;
    } else if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      g_threads = std::atoi(argv[++i]);
      if (g_threads < 1 || g_threads > 64) {
        std::fprintf(stderr, "world_bench: --threads must be 1..64\n");
        return 2;
      }
    } else {
      std::fprintf(stderr,
                   "usage: world_bench [--seconds S] [--repeat K] [--world PATH] [--only N] "
                   "[--hash] [--load] [--threads T]\n");
      return 2;
    }
  }
  if (!(seconds > 0) || repeat < 1 || only < 0) {
    std::fprintf(stderr, "world_bench: --seconds must be > 0, --repeat >= 1, --only >= 0\n");
    return 2;
  }
  // Best of `repeat` runs, by CPU-time RTF (its wall figure alongside); the wall figure is also
  // the best seen.
  auto best = [&](int n, bool sensors, bool lockstep = false) {
    Result b = run(path, n, sensors, seconds, lockstep);
    for (int k = 1; k < repeat; ++k) {
      const Result r = run(path, n, sensors, seconds, lockstep);
      const double wall = std::max(b.rtf, r.rtf);
      const double proc = std::max(b.proc_cpu_rtf, r.proc_cpu_rtf);
      if (r.cpu_rtf > b.cpu_rtf) b = r;
      b.rtf = wall;
      b.proc_cpu_rtf = proc;
    }
    return b;
  };
  if ((only == 0 && !hash) || load_only) {
    // Loading: 3 000 models read directly, against sdformat reading 100 of them (scaled by 30:
    // its cost per model is flat, about 30 ms and 2.3 MB; reading 3 000 takes minutes).
    constexpr int kModels = 3000, kSdformatModels = 100;
    const std::string big = write_generated_world(kModels);
    const std::string small = write_generated_world(kSdformatModels);
    LoadFigures direct = measure_load(big, true);
    LoadFigures sdf = measure_load(small, false);
    for (int k = 1; k < repeat; ++k) {
      const LoadFigures d = measure_load(big, true);
      if (d.seconds < direct.seconds) direct = d;
      const LoadFigures f = measure_load(small, false);
      if (f.seconds < sdf.seconds) sdf = f;
      direct.cpu_seconds = std::min(direct.cpu_seconds, d.cpu_seconds);
      sdf.cpu_seconds = std::min(sdf.cpu_seconds, f.cpu_seconds);
    }
    std::remove(big.c_str());
    std::remove(small.c_str());
    const double scale = static_cast<double>(kModels) / kSdformatModels;
    const double sdf_s = sdf.seconds * scale;
    const double sdf_mb = (sdf.peak_rss_mb - sdf.base_rss_mb) * scale;
    std::printf(
        "# load: %d models in %.3f s, peak RSS %.0f MB (%.0f MB before); sdformat alone: %d "
        "models in %.2f s, +%.0f MB (x%.0f: %.0f s, %.0f MB)\n",
        kModels, direct.seconds, direct.peak_rss_mb, direct.base_rss_mb, kSdformatModels,
        sdf.seconds, sdf.peak_rss_mb - sdf.base_rss_mb, scale, sdf_s, sdf_mb);
    std::printf("BENCH world_load_3000_models %.3f s ratio=%.4f baseline=sdformat_alone_100_x30\n",
                direct.seconds, direct.seconds / sdf_s);
    std::printf(
        "BENCH world_load_3000_models_cpu %.3f s ratio=%.4f baseline=sdformat_alone_100_x30_cpu\n",
        direct.cpu_seconds, direct.cpu_seconds / (sdf.cpu_seconds * scale));
    std::printf(
        "BENCH world_load_3000_models_peak_rss %.0f MB ratio=%.4f "
        "baseline=sdformat_alone_100_x30_rss_growth\n",
        direct.peak_rss_mb, (direct.peak_rss_mb - direct.base_rss_mb) / sdf_mb);
    if (load_only) return 0;
  }
  std::vector<int> counts = {1, 10, 50, 200};
  if (only > 0) counts = {only};
  if (hash) {
    for (int n : counts) {
      const Result r = run(path, n, true, seconds, false, true);
      std::printf("# ugv%d: %llu messages, stream hash %016llx\n", n,
                  static_cast<unsigned long long>(r.messages),
                  static_cast<unsigned long long>(r.hash));
    }
    return 0;
  }
  double cpu_rtf_1 = 0;
  for (int n : counts) {
    const Result base = best(n, false);
    const Result full = best(n, true);
    if (full.vehicles != n) {
      std::fprintf(stderr, "world_bench: only %d of %d vehicles found room\n", full.vehicles, n);
      return 1;
    }
    if (n == 1) cpu_rtf_1 = full.cpu_rtf;
    std::printf(
        "# ugv%d: %.0f x real time with sensors (%.0f x per CPU second, %llu messages), %.0f x "
        "physics only\n",
        n, full.rtf, full.cpu_rtf, static_cast<unsigned long long>(full.messages), base.rtf);
    std::printf("BENCH world_rtf_ugv%d %.1f x ratio=%.3f baseline=physics_only_ugv%d\n", n,
                full.rtf, full.rtf / base.rtf, n);
    std::printf("BENCH world_cpu_rtf_ugv%d %.1f x ratio=%.3f baseline=world_rtf_ugv%d\n", n,
                full.cpu_rtf, full.cpu_rtf / full.rtf, n);
    std::printf("# ugv%d: sensor pass on %d thread(s)\n", n, g_threads_used);
    std::printf("BENCH world_proc_cpu_rtf_ugv%d %.1f x ratio=%.3f baseline=world_rtf_ugv%d\n", n,
                full.proc_cpu_rtf, full.proc_cpu_rtf / full.rtf, n);
    if (n > 1 && cpu_rtf_1 > 0) {
      const double r = n * full.cpu_rtf / cpu_rtf_1;
      std::printf(
          "BENCH world_per_vehicle_ratio_ugv%d %.3f x ratio=%.3f baseline=world_cpu_rtf_ugv1\n", n,
          r, r);
    }
    std::printf(
        "BENCH world_raycast_share_ugv%d %.1f %% ratio=%.3f baseline=world_wall_time_ugv%d\n", n,
        full.raycast_share * 100, full.raycast_share, n);
  }
  if (only > 0) return 0;
  // The lock-step glue's cost: the same 1-UGV world stepped through the coordinator.
  const Result direct = best(1, true);
  const Result locked = best(1, true, true);
  std::printf("# ugv1 in lock-step (in-process coordinator, a grant per 1 ms step): %.0f x\n",
              locked.rtf);
  std::printf("BENCH world_lockstep_rtf_ugv1 %.1f x ratio=%.3f baseline=direct_step_ugv1\n",
              locked.rtf, locked.rtf / direct.rtf);
  return 0;
}
