// fieldproof-ugv-nav: the reference navigation stack as a process, a regulating participant of
// the coordinator named by --endpoint or $FIELDPROOF_COORDINATOR.
//
//   fieldproof-ugv-nav --vehicle ugv1 --world examples/worlds/depot.sdf [--endpoint EP]
//                      [--params JSON] [--map-resolution 0.05] [--name ugv1_nav]
//
// Started by fieldproof as a vehicle's stack, it needs no argument: each flag defaults to the
// variable the engine sets (docs/vehicle-interface.md): --vehicle $FIELDPROOF_VEHICLE, --world
// $FIELDPROOF_WORLD_FILE, --params-file $FIELDPROOF_PARAMS_FILE, --name $FIELDPROOF_PARTICIPANT,
// --map-bounds $FIELDPROOF_MAP_BOUNDS, --map-resolution $FIELDPROOF_MAP_RESOLUTION, the role from
// $FIELDPROOF_ROLE.
//
// Exit codes: 0 stopped (SIGINT/SIGTERM) or the run ended, 1 the coordinator failed the run or
// could not be reached, 2 bad arguments, world file or params.
#include <CLI/CLI.hpp>

#include <pthread.h>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "fieldproof/lockstep/transport.hpp"
#include "fieldproof/stacks/participant_host.hpp"
#include "fieldproof/stacks/ugv_nav_node.hpp"
#include "fieldproof/time/system_clock.hpp"
#include "fieldproof/world/world.hpp"

namespace {

using namespace fieldproof;

int run(int argc, char** argv) {
  CLI::App app{"fieldproof-ugv-nav: the reference navigation stack as a lock-step participant"};
  std::string vehicle;
  std::string world_file;
  std::string endpoint;
  std::string params;
  std::string params_file;
  std::string name;
  double resolution = 0.05;
  std::string map_bounds;
  bool no_watchdog_thread = false;
  const auto env = [](const char* name) {
    const char* v = std::getenv(name);
    return std::string(v ? v : "");
  };
  vehicle = env("FIELDPROOF_VEHICLE");
  world_file = env("FIELDPROOF_WORLD_FILE");
  params_file = env("FIELDPROOF_PARAMS_FILE");
  name = env("FIELDPROOF_PARTICIPANT");
  map_bounds = env("FIELDPROOF_MAP_BOUNDS");
  if (const std::string r = env("FIELDPROOF_MAP_RESOLUTION"); !r.empty()) {
    resolution = std::strtod(r.c_str(), nullptr);
  }
  app.add_option("--vehicle", vehicle,
                 "the vehicle (model name) to drive (default $FIELDPROOF_VEHICLE)");
  app.add_option("--world", world_file,
                 "the SDF world file: its static geometry is the map (default "
                 "$FIELDPROOF_WORLD_FILE)");
  app.add_option(
      "--endpoint", endpoint,
      "the coordinator (ipc://PATH or tcp://HOST:PORT); default $FIELDPROOF_COORDINATOR");
  app.add_option("--params", params, "stack options as JSON (see ugv_nav_stack.hpp)");
  app.add_option("--params-file", params_file,
                 "stack options from a JSON file (default $FIELDPROOF_PARAMS_FILE)");
  app.add_option("--map-resolution", resolution,
                 "map cell size in metres (default $FIELDPROOF_MAP_RESOLUTION, else 0.05)");
  app.add_option("--map-bounds", map_bounds,
                 "what the map covers: X_MIN,Y_MIN,X_MAX,Y_MAX in metres (default "
                 "$FIELDPROOF_MAP_BOUNDS, else the world's extent)");
  app.add_option("--name", name,
                 "participant name (default $FIELDPROOF_PARTICIPANT, else <vehicle>_nav)");
  app.add_flag("--no-wall-watchdog-thread", no_watchdog_thread,
               "check heartbeats only on ticks (not while simulated time stands still)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (vehicle.empty() || world_file.empty()) {
    std::fprintf(stderr,
                 "fieldproof-ugv-nav: give --vehicle and --world (or run it from fieldproof, "
                 "which sets FIELDPROOF_VEHICLE and FIELDPROOF_WORLD_FILE)\n");
    return 2;
  }
  if (!params.empty()) params_file.clear();  // --params wins over the engine's file

  if (!params_file.empty()) {
    std::ifstream in(params_file);
    if (!in) {
      std::fprintf(stderr, "fieldproof-ugv-nav: cannot read --params-file %s\n",
                   params_file.c_str());
      return 2;
    }
    params.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  auto options = stacks::parse_ugv_nav_options(params);
  if (!options.ok()) {
    std::fprintf(stderr, "fieldproof-ugv-nav: %s\n", options.status().message().c_str());
    return 2;
  }
  stacks::UgvNavOptions o = options.value();
  o.vehicle = vehicle;

  world::MapOptions map;
  map.resolution = resolution;
  if (!map_bounds.empty()) {
    world::MapBounds b;
    char tail = 0;
    if (std::sscanf(map_bounds.c_str(), "%lf,%lf,%lf,%lf%c", &b.min_x, &b.min_y, &b.max_x, &b.max_y,
                    &tail) != 4) {
      std::fprintf(stderr,
                   "fieldproof-ugv-nav: --map-bounds '%s': expected X_MIN,Y_MIN,X_MAX,Y_MAX\n",
                   map_bounds.c_str());
      return 2;
    }
    map.bounds = b;
    map.max_cells = 100'000'000;  // the engine checked the cell count
  }
  if (const world::Status s = map.validate(); !s.ok()) {
    std::fprintf(stderr, "fieldproof-ugv-nav: %s\n", s.message().c_str());
    return 2;
  }
  auto loaded = world::World::load(world_file);
  if (!loaded.world) {
    for (const auto& e : loaded.errors) std::fprintf(stderr, "%s\n", e.c_str());
    return 2;
  }
  if (o.pose_source == stacks::PoseSource::kGroundTruth && o.world.empty()) {
    o.world = loaded.world->name();
  }
  // FIELDPROOF_ROLE=following (sim, realtime: the stack follows the clock) or regulating.
  const char* role = std::getenv("FIELDPROOF_ROLE");
  const bool following = role && std::string(role) == "following";
  // The heartbeat watchdog's clock: simulated time when the stack regulates (lockstep: a loaded
  // host cannot fail the run through it), the wall clock when it follows; or as the params say.
  std::atomic<lockstep::Participant*> clock_source{nullptr};
  bool sim_clock =
      o.lifecycle.heartbeat_clock == stacks::LifecycleOptions::Clock::kSim ||
      (o.lifecycle.heartbeat_clock == stacks::LifecycleOptions::Clock::kAuto && !following);
  WallNow watchdog_clock = SystemClock::wall_now();
  if (sim_clock) {
    watchdog_clock = [&clock_source] {
      lockstep::Participant* p = clock_source.load();
      return p ? p->now() : SimTime::zero();
    };
    no_watchdog_thread = true;  // simulated time moves only with ticks
  }
  auto created = stacks::UgvNavNode::create(o, loaded.world->occupancy_grid(map), watchdog_clock);
  if (!created.ok()) {
    std::fprintf(stderr, "fieldproof-ugv-nav: %s\n", created.status().message().c_str());
    return 2;
  }
  std::unique_ptr<stacks::UgvNavNode> node = std::move(created).value();
  loaded.world.reset();

  // Signals go to one thread that asks the loop to stop (nothing async-signal-unsafe runs in a
  // handler). Blocked here, before any thread starts, so every thread inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  lockstep::ParticipantOptions popts;
  popts.name = name.empty() ? vehicle + "_nav" : name;
  popts.role = following ? lockstep::Role::kFollowing : lockstep::Role::kRegulating;
  popts.on_error = [](const lockstep::Error& e) {
    std::fprintf(stderr, "fieldproof-ugv-nav: coordinator: %s\n", e.reason.c_str());
  };
  std::unique_ptr<lockstep::Participant> participant;
  try {
    participant = endpoint.empty() ? lockstep::participant_from_environment(popts)
                                   : lockstep::connect_participant(endpoint, popts);
  } catch (const lockstep::TransportError& e) {
    std::fprintf(stderr, "fieldproof-ugv-nav: %s\n", e.what());
    return 2;
  }
  if (!participant->ok()) {
    std::fprintf(stderr, "fieldproof-ugv-nav: the coordinator refused %s: %s\n", popts.name.c_str(),
                 participant->last_error().c_str());
    return 1;
  }

  clock_source.store(participant.get());
  stacks::ParticipantHostOptions hopts;
  if (no_watchdog_thread) hopts.wall_check_period = Duration::zero();
  hopts.on_problem = [](const std::string& p) {
    std::fprintf(stderr, "fieldproof-ugv-nav: %s\n", p.c_str());
  };
  stacks::UgvNavParticipantHost host(*participant, *node, hopts);

  std::thread signal_thread([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    host.stop();
  });
  const bool ok = host.run();
  participant->leave();
  // Wake the signal thread if no signal came.
  pthread_kill(signal_thread.native_handle(), SIGTERM);
  signal_thread.join();
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fieldproof-ugv-nav: %s\n", e.what());
    return 1;
  }
}
