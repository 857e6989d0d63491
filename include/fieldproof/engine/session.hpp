// A Session is the running machinery of one simulation: a coordinator, the embedded world as a
// regulating participant (on a thread of its own), each vehicle's stack on its host
// (stack_host.hpp: any program as a process over an ipc endpoint, in its own process group, or
// any stack plugin in-process, on a thread), and the engine's own participant, "engine", which
// the caller drives from its thread (the timeline, the observer). Used by `fieldproof world` and
// `fieldproof run`.
//
//   SessionOptions o;
//   o.world_file = "examples/worlds/depot.sdf";
//   o.vehicles = {{.name = "ugv1", .frame = "dock", .stack = spec}};
//   std::string error;
//   Result<std::unique_ptr<Session>> s = Session::create(o);  // bad input: a Status, what/where
//   if (!s.ok() || !(*s)->start().ok()) ...;       // every stack registered, time still at 0
//   lockstep::Participant& e = s->engine();
//   e.subscribe(...); e.publish(...); e.sleep_until(...);
//   s->stop();                                     // ends everything (idempotent; destructor too)
//
// Before start() the world may be read through world() (frames, map, step); after it, only the
// world's thread touches it: observe it through the bus. The engine participant registers first
// and holds simulated time at 0 until the caller first sleeps, so every stack is subscribed
// before anything is delivered.
//
// Process stacks get the environment of docs/vehicle-interface.md (FIELDPROOF_COORDINATOR,
// FIELDPROOF_PARTICIPANT, FIELDPROOF_VEHICLE, FIELDPROOF_ROLE, FIELDPROOF_SEED,
// FIELDPROOF_WORLD_FILE, FIELDPROOF_WORLD, FIELDPROOF_PARAMS_FILE, FIELDPROOF_RUN_DIR), their
// output in <log_dir>/<vehicle>.log, and are ended as a group (SIGTERM, then SIGKILL after
// kStopGrace) by stop(), whatever happens.
//
// Time control (`fieldproof clock`): with control_dir set, start() serves control requests on
// ipc://<control_dir>/control.sock and writes <control_dir>/control.json (clock_control.hpp);
// stop() removes both. Status is always answered; pause, resume and step act on the coordinator
// (a step waits until the clock has advanced by its duration, then answers), except in a lockstep
// session, which refuses them. Each request is reported to on_clock_command.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fieldproof/engine/stack_host.hpp"
#include "fieldproof/lockstep/coordinator.hpp"
#include "fieldproof/lockstep/participant.hpp"
#include "fieldproof/time/duration.hpp"
#include "fieldproof/util/status.hpp"
#include "fieldproof/world/world.hpp"

namespace fieldproof::engine {

struct VehicleSetup {
  std::string name;
  std::string frame;                  // spawn at this world frame, or
  std::optional<world::Pose2D> pose;  // at this pose
  world::VehicleParams params;        // from its model file (the defaults: the reference UGV's)
  std::string model_file;             // that file, absolute (FIELDPROOF_MODEL_FILE); may be empty
  StackSpec stack;                    // the vehicle's software (kNone: driven by cmd_vel only)
};

// A time-control request the session received (fieldproof clock), as it was answered.
struct ClockCommand {
  std::string op;  // status, pause, resume, step
  bool ok = true;
  std::string error;    // why it was refused
  SimTime sim;          // the clock when it was answered
  Duration duration;    // step: simulated time stepped
  bool paused = false;  // the coordinator's state afterwards
};

struct SessionOptions {
  std::string world_file;
  uint64_t seed = 0;
  std::vector<VehicleSetup> vehicles;
  // The map every stack plans on (a scenario's map section): a plugin gets it as its grid, a
  // process learns its bounds and resolution from FIELDPROOF_MAP_BOUNDS and
  // FIELDPROOF_MAP_RESOLUTION. Default: the world's extent at 5 cm.
  world::MapOptions map;
  // Where the vehicles' navsat has no fix (a scenario's gps_denied regions).
  std::vector<world::GpsDeniedRegion> gps_denied;
  // Pace cap of the coordinator (simulated / wall time); 0 = unpaced.
  double max_rtf = 0.0;
  // A regulating participant silent this long fails the run.
  Duration ack_timeout = seconds(30);
  // The ipc socket's directory; empty: a fresh temporary directory, removed by stop().
  std::string ipc_dir;
  std::string run_dir;  // FIELDPROOF_RUN_DIR of the processes (may be empty)
  // Where process stacks' output goes (<log_dir>/<vehicle>.log) and their parameter files
  // (<log_dir>/<vehicle>.params.json); empty: inherited stderr, parameters in the temporary
  // directory.
  std::string log_dir;
  // How long start() waits (wall time) for every process stack to register.
  Duration ready_timeout = seconds(15);
  // Wall clock (RTF, the pace); empty: SystemClock::wall_now().
  std::function<SimTime()> wall_now;
  // Warnings (world geometry left out, refused commands) and problems of the stacks.
  std::function<void(const std::string&)> on_warning;
  // Every message of the coordinator's ordered stream, in order (the recorder); may be empty.
  // Called on the coordinator's thread.
  std::function<void(const lockstep::Publish&)> tap;

  // Time control: the directory of control.sock / control.json (empty: none).
  std::string control_dir;
  // The scenario's time mode ("sim", "realtime", "lockstep"): lockstep refuses pause, resume and
  // step from fieldproof clock.
  std::string mode = "sim";
  // The stacks' role: following (they get the clock and the messages and never hold time: sim and
  // realtime, where only the world and the timeline regulate) or regulating (lockstep: time
  // waits for them). Process stacks learn it from FIELDPROOF_ROLE (following | regulating).
  bool stacks_follow = false;
  // World outputs the engine relays (its topic faults, docs/network.md): the world publishes
  // each on raw_topic(world, topic) instead, and the engine republishes it on the topic.
  std::vector<std::string> relayed_outputs;
  // Every control request answered (on the control endpoint's thread); may be empty.
  std::function<void(const ClockCommand&)> on_clock_command;
  // Set when the run is being interrupted: a clock paused by fieldproof clock is resumed so the
  // engine can end the run.
  const std::atomic<bool>* interrupt = nullptr;
};

class Session {
 public:
  // Loads the world and spawns the vehicles. On bad input an invalid_argument Status saying
  // what and where (file:line where known): a world that does not load, an unknown frame, a
  // spawn inside an obstacle, a process stack without an executable.
  static Result<std::unique_ptr<Session>> create(SessionOptions options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Starts the coordinator, the world, the stacks; returns once every stack has registered (time
  // held at 0 by the engine). An unavailable Status when the coordinator or a stack could not
  // start or register.
  Status start();
  // The engine's participant ("engine", regulating); valid after start().
  lockstep::Participant& engine();
  // Deliveries of `topic` to the engine lower its safe time to stamp + lookahead (the
  // coordinator's set_lookahead): for a topic whose only reader on the engine is a relay that
  // publishes nothing sooner than that. False when the coordinator cannot (the engine is not on
  // the in-process coordinator); then the engine holds the clock at every delivery as before.
  bool set_engine_lookahead(const std::string& topic, Duration lookahead);
  // The coordinator runs `relay` for the engine inside its fan-out of `topic` (the coordinator's
  // set_relay) instead of waking the engine for it. False when it cannot (the engine is not on
  // the in-process coordinator); then the engine relays every delivery itself.
  bool set_engine_relay(const std::string& topic, lockstep::CoordinatorCore::Relay relay);
  // The world; only before start() (afterwards the world thread owns it).
  world::World& world();
  const std::string& world_name() const;
  Duration physics_step() const;
  double world_rtf() const;
  // The topic names of a vehicle.
  static std::string goal_topic(const std::string& vehicle);
  static std::string status_topic(const std::string& vehicle);
  static std::string cmd_vel_topic(const std::string& vehicle);
  static std::string contacts_topic(const std::string& vehicle);
  std::string pose_topic() const;
  // Where the world publishes a relayed output: /world/<world>/raw<topic>.
  static std::string raw_topic(const std::string& world, const std::string& topic);

  // fault.kill_stack (docs/network.md). Kills the vehicle's stack process (SIGKILL to its group)
  // at the engine's time `now`, which the engine holds: a regulating stack first finishes its
  // work at `now` (announces past it, bounded by ack_timeout of wall time), then the coordinator
  // forgets it (a lockstep run goes on without it) and the group is killed. Not a failure of the
  // run. What died ("pid 4242, killed by signal 9"); not_found when the vehicle has no process
  // stack, failed_precondition when it was not running.
  Result<std::string> kill_stack(const std::string& vehicle, SimTime now);
  // Starts a killed stack again and waits (wall time, ready_timeout) until it has registered
  // again, the engine holding the clock meanwhile. unavailable when it could not, not_found
  // when the vehicle has no process stack.
  Status restart_stack(const std::string& vehicle);

  // Pauses or resumes the coordinator (no grant while paused; the pace regulator leaves paused
  // wall time out). kFailedPrecondition saying why when the coordinator refused.
  [[nodiscard]] Status set_paused(bool paused);
  // Wall time the coordinator has been paused (sim.pause, fieldproof clock) since start(),
  // including a pause in progress.
  Duration paused_wall() const;
  // The pid of the vehicle's process stack (for /proc sampling): 0 when its stack runs in-process
  // or it has none, -1 for an unknown vehicle or a process that has exited.
  int stack_pid(const std::string& vehicle) const;
  // The control endpoint ("ipc://...control.sock"), empty when there is none.
  std::string control_endpoint() const;
  // Why the run cannot go on (a stack process that exited, the coordinator failed), "" if none.
  std::string failure();
  // Ends everything: the engine and world leave, in-process stacks stop, processes are ended as
  // groups, threads joined, the coordinator shut down. Idempotent.
  void stop();
  // Wall time since start() (ns), on options.wall_now.
  Duration wall_elapsed() const;

  struct Impl;

 private:
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace fieldproof::engine
