// world_bench: simulated seconds per wall second of examples/worlds/depot.sdf, unpaced, with 1, 10
// and 50 UGVs driving circles with every sensor on, and the share of wall time spent ray casting.
// The baseline of each figure is measured in the same run: the same loop with sensors off
// (physics only). Each case is run --repeat times and the fastest run kept (the least disturbed by
// other load on the machine).
// Usage: world_bench [--seconds S] [--repeat K] [--world PATH]   (S simulated seconds per run)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "fieldproof/lockstep/inprocess.hpp"
#include "fieldproof/lockstep/participant.hpp"
#include "fieldproof/world/world.hpp"
#include "fieldproof/world/world_participant.hpp"

namespace {

using fieldproof::SimTime;
using fieldproof::world::Pose2D;
using fieldproof::world::World;
using fieldproof::world::WorldMessage;
using fieldproof::world::WorldOptions;

SimTime wall_now() {
  return SimTime::from_ns(std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::steady_clock::now().time_since_epoch())
                              .count());
}

struct Result {
  double rtf = 0;            // simulated s per wall s
  double raycast_share = 0;  // fraction of wall time
  uint64_t messages = 0;
  int vehicles = 0;
};

// lockstep: the world steps as a regulating participant of an in-process coordinator (one grant
// per physics step, every message published through it) instead of calling step() directly.
Result run(const std::string& path, int n, bool sensors, double sim_seconds,
           bool lockstep = false) {
  Result res;
  WorldOptions o;
  o.seed = 1;
  o.sensors = sensors;
  o.wall_now = wall_now;
  if (!lockstep) {
    o.sink = [&res](WorldMessage&& m) { res.messages += m.payload.size() > 0 ? 1 : 0; };
  }
  auto loaded = World::load(path, o);
  if (!loaded.world) {
    for (const auto& e : loaded.errors) std::fprintf(stderr, "%s\n", e.c_str());
    std::exit(2);
  }
  World& w = *loaded.world;
  // Spawn on a lattice over the yard, skipping places taken by obstacles. Circles of radius
  // 0.8 m: neighbours 2.5 m apart do not meet (some vehicles do touch shelves and stop there).
  for (double y = -8.6; y <= 8.6 && res.vehicles < n; y += 2.45) {
    for (double x = -13.5; x <= 13.5 && res.vehicles < n; x += 2.45) {
      const std::string name = "ugv" + std::to_string(res.vehicles + 1);
      if (w.spawn_vehicle(name, Pose2D{x, y, 0.0})) {
        (void)w.set_cmd_vel(name, {0.4, 0.5});
        ++res.vehicles;
      }
    }
  }
  const int64_t steps = static_cast<int64_t>(sim_seconds * 1e9) / w.step_size().ns();
  const SimTime t0 = wall_now();
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
  const double wall_s = static_cast<double>((wall_now() - t0).ns()) * 1e-9;
  res.rtf = w.sim_time().seconds_f() / wall_s;
  res.raycast_share = static_cast<double>(w.raycast_wall_ns()) * 1e-9 / wall_s;
  return res;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 5.0;
  int repeat = 3;
  std::string path = "examples/worlds/depot.sdf";
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else if (std::strcmp(argv[i], "--repeat") == 0 && i + 1 < argc) {
      repeat = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--world") == 0 && i + 1 < argc) {
      path = argv[++i];
    } else {
      std::fprintf(stderr, "usage: world_bench [--seconds S] [--repeat K] [--world PATH]\n");
      return 2;
    }
  }
  if (!(seconds > 0) || repeat < 1) {
    std::fprintf(stderr, "world_bench: --seconds must be > 0 and --repeat >= 1\n");
    return 2;
  }
  auto best = [&](int n, bool sensors, bool lockstep = false) {
    Result b = run(path, n, sensors, seconds, lockstep);
    for (int k = 1; k < repeat; ++k) {
      const Result r = run(path, n, sensors, seconds, lockstep);
      if (r.rtf > b.rtf) b = r;
    }
    return b;
  };
  for (int n : {1, 10, 50}) {
    const Result base = best(n, false);
    const Result full = best(n, true);
    if (full.vehicles != n) {
      std::fprintf(stderr, "world_bench: only %d of %d vehicles found room\n", full.vehicles, n);
      return 1;
    }
    std::printf("# ugv%d: %.0f x real time with sensors (%llu messages), %.0f x physics only\n", n,
                full.rtf, static_cast<unsigned long long>(full.messages), base.rtf);
    std::printf("BENCH world_rtf_ugv%d %.1f x ratio=%.3f baseline=physics_only_ugv%d\n", n,
                full.rtf, full.rtf / base.rtf, n);
    std::printf(
        "BENCH world_raycast_share_ugv%d %.1f %% ratio=%.3f baseline=world_wall_time_ugv%d\n", n,
        full.raycast_share * 100, full.raycast_share, n);
  }
  // The lock-step glue's cost: the same 1-UGV world stepped through the coordinator.
  const Result direct = best(1, true);
  const Result locked = best(1, true, true);
  std::printf("# ugv1 in lock-step (in-process coordinator, a grant per 1 ms step): %.0f x\n",
              locked.rtf);
  std::printf("BENCH world_lockstep_rtf_ugv1 %.1f x ratio=%.3f baseline=direct_step_ugv1\n",
              locked.rtf, locked.rtf / direct.rtf);
  return 0;
}
