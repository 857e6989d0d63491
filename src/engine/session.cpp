#include "fieldproof/engine/session.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "control_endpoint.hpp"
#include "fieldproof/engine/clock_control.hpp"
#include "fieldproof/engine/process.hpp"
#include "fieldproof/lockstep/inprocess.hpp"
#include "fieldproof/lockstep/transport.hpp"
#include "fieldproof/lockstep/zmq_server.hpp"
#include "fieldproof/report/run_record.hpp"
#include "fieldproof/time/system_clock.hpp"
#include "fieldproof/util/mutex.hpp"
#include "fieldproof/world/world_participant.hpp"

namespace fieldproof::engine {

namespace {
// Far enough for any run, small enough that rounding up to the step grid cannot overflow.
constexpr int64_t kHorizonNs = int64_t{1} << 62;
}  // namespace

struct VehicleStack {
  std::string vehicle;
  std::unique_ptr<StackHost> host;
};

struct Session::Impl {
  SessionOptions opts;
  std::unique_ptr<world::World> world;
  std::string world_name;
  Duration step;
  double rtf = 1.0;
  bool any_process = false;

  std::unique_ptr<lockstep::InProcessCoordinator> inproc;
  std::unique_ptr<lockstep::CoordinatorServer> server;
  std::string endpoint;
  std::string temp_dir;

  std::unique_ptr<lockstep::Participant> engine;
  std::unique_ptr<lockstep::Participant> world_p;
  std::unique_ptr<world::WorldParticipant> glue;
  std::thread world_thread;
  std::vector<VehicleStack> stacks;
  // The map handed to stack plugins (they copy it at create).
  world::OccupancyGrid grid;
  world::MapBounds map_bounds;  // grid's, as FIELDPROOF_MAP_BOUNDS gives them

  Mutex mu;
  CondVar cv;
  std::set<std::string> announced FIELDPROOF_GUARDED_BY(mu);
  std::string failure FIELDPROOF_GUARDED_BY(mu);
  // start() and stop() are called by the session's owner on one thread: not guarded.
  bool started = false;
  bool stopped = false;
  // Watches the stack processes: one that exits fails the run at once (instead of after
  // ack_timeout) by stopping the server, which the other participants see as a lost connection.
  std::thread watcher;
  bool watching FIELDPROOF_GUARDED_BY(mu) = false;
  SimTime wall_start;

  // Pause accounting (the clock monitor leaves paused wall time out).
  mutable Mutex pause_mu;
  bool paused FIELDPROOF_GUARDED_BY(pause_mu) = false;
  SimTime paused_since FIELDPROOF_GUARDED_BY(pause_mu);
  Duration paused_total FIELDPROOF_GUARDED_BY(pause_mu) = Duration::zero();
  std::unique_ptr<ControlEndpoint> control_ep;
  std::atomic<bool> stopping{false};
  Mutex control_mu;  // one control request at a time (endpoint thread, sim.pause)
  // A `fieldproof clock step` in progress: answered at once, followed here until the clock
  // reaches its target (the pause accounting), while status and the other requests keep being
  // answered.
  std::thread step_thread;
  std::atomic<bool> stepping{false};
  SimTime step_target FIELDPROOF_GUARDED_BY(control_mu);

  void note_paused(bool now_paused) {
    MutexLock lk(pause_mu);
    const SimTime w = opts.wall_now();
    if (now_paused && !paused) paused_since = w;
    if (!now_paused && paused) paused_total += w - paused_since;
    paused = now_paused;
  }
  lockstep::ControlReply core_control(const lockstep::Control& c) {
    if (inproc) return inproc->control(c);
    if (server) return server->control(c);
    lockstep::ControlReply r;
    r.ok = false;
    r.error = "the session has not started";
    return r;
  }
  lockstep::ControlReply handle_control(const lockstep::Control& c);
  void follow_step(SimTime target);
  void on_idle();

  // The session's temporary directory (created on first use, removed by stop()).
  Status ensure_temp_dir() {
    if (!temp_dir.empty()) return Status();
    std::string tmpl = (std::filesystem::temp_directory_path() / "fieldproof-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) {
      return Status(StatusCode::kIoError, "cannot create a temporary directory");
    }
    temp_dir = tmpl;
    return Status();
  }
  // "the stack of V <why>" for the first stack that ended by itself, "" if none.
  std::string stack_gone();
  // Holds the clock where it is and waits (bounded) until every regulating participant but the
  // engine has announced past it.
  void hold_for_teardown();
  // Waits (bounded) until the coordinator has seen every stack leave: a process's last frames
  // (what it said on the way out) travel on its own connection, behind its Leave, and the
  // coordinator must have read them before the engine and the world leave and it stops.
  void wait_for_stacks_to_leave();
  // Waits (wall time, ack_timeout) until every thread of `participant` has announced past `now`
  // (or it is gone). False when it did not.
  bool settle(const std::string& participant, SimTime now);
  static Status start_stacks(Impl& m);
  static Status wait_for_processes(Impl& m);
  // Session::set_engine_lookahead, set_engine_relay.
  bool on_engine_core(
      const std::function<bool(lockstep::CoordinatorCore&, const std::string& participant,
                               const std::string& thread)>& f);
  // The stages of Session::start, in its order.
  static Status start_coordinator(Impl& m);
  static Status attach_world(Impl& m);
  static Status serve_control(Impl& m);
  static void watch_stacks(Impl& m);

  void warn(const std::string& w) {
    if (opts.on_warning) opts.on_warning(w);
  }
  void fail(const std::string& who, const std::string& reason) {
    MutexLock lk(mu);
    if (failure.empty()) failure = who.empty() ? reason : who + ": " + reason;
    cv.notify_all();
  }

  std::unique_ptr<lockstep::Participant> participant(
      const std::string& name, lockstep::Role role = lockstep::Role::kRegulating) {
    lockstep::ParticipantOptions po;
    po.name = name;
    po.role = role;
    po.on_error = [this, name](const lockstep::Error& e) {
      warn(name + ": coordinator: " + e.reason);
    };
    if (inproc) return std::make_unique<lockstep::Participant>(inproc->make_link(), po);
    // The engine's own participants (the engine, the world, plugin stacks) share the server's
    // core without a socket; only the stack processes go through ipc.
    return std::make_unique<lockstep::Participant>(server->make_local_link(), po);
  }
};

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() { stop(); }

Result<std::unique_ptr<Session>> Session::create(SessionOptions options) {
  auto impl = std::make_unique<Impl>();
  if (!options.wall_now) options.wall_now = SystemClock::wall_now();
  world::WorldOptions wo;
  wo.seed = options.seed;
  wo.wall_now = options.wall_now;
  wo.on_warning = options.on_warning;
  wo.gps_denied = options.gps_denied;
  if (!std::filesystem::exists(options.world_file)) {
    return Status(StatusCode::kInvalidArgument,
                  options.world_file + ": the world file does not exist");
  }
  auto loaded = world::World::load(options.world_file, wo);
  if (!loaded.world) {
    std::ostringstream out;
    for (size_t i = 0; i < loaded.errors.size(); ++i) {
      out << (i ? "\n" : "") << loaded.errors[i];
    }
    return Status(
        StatusCode::kInvalidArgument,
        loaded.errors.empty() ? options.world_file + ": the world does not load" : out.str());
  }
  for (const auto& w : loaded.warnings) {
    if (options.on_warning) options.on_warning(w);
  }
  impl->world = std::move(loaded.world);
  world::World& w = *impl->world;
  for (const VehicleSetup& v : options.vehicles) {
    world::Status s = v.pose ? w.spawn_vehicle(v.name, *v.pose, v.params)
                             : w.spawn_vehicle(v.name, v.frame, v.params);
    if (!s.ok()) {
      return Status(StatusCode::kInvalidArgument, "vehicle " + v.name + ": " + s.message());
    }
    if (v.stack.kind == StackSpec::Kind::kProcess) {
      impl->any_process = true;
      if (v.stack.argv.empty() || access(v.stack.argv[0].c_str(), X_OK) != 0) {
        return Status(StatusCode::kInvalidArgument,
                      "vehicle " + v.name + ": the stack program '" +
                          (v.stack.argv.empty() ? std::string() : v.stack.argv[0]) +
                          "' is not an executable file");
      }
    }
  }
  impl->world_name = w.name();
  impl->step = w.step_size();
  impl->rtf = w.target_real_time_factor();
  impl->opts = std::move(options);
  return std::unique_ptr<Session>(new Session(std::move(impl)));
}

world::World& Session::world() { return *impl_->world; }
const std::string& Session::world_name() const { return impl_->world_name; }
Duration Session::physics_step() const { return impl_->step; }
double Session::world_rtf() const { return impl_->rtf; }
lockstep::Participant& Session::engine() { return *impl_->engine; }
// Runs `f` on the in-process coordinator's core with the engine's participant and main thread
// names; false when the engine is not on the in-process coordinator.
bool Session::Impl::on_engine_core(
    const std::function<bool(lockstep::CoordinatorCore&, const std::string& participant,
                             const std::string& thread)>& f) {
  if (!inproc || !engine) return false;
  bool ok = false;
  const std::string name = engine->name();
  const std::string thread = engine->main_thread().name();
  inproc->with_core([&](lockstep::CoordinatorCore& core) { ok = f(core, name, thread); });
  return ok;
}

bool Session::set_engine_lookahead(const std::string& topic, Duration lookahead) {
  return impl_->on_engine_core(
      [&](lockstep::CoordinatorCore& core, const std::string& name, const std::string& thread) {
        return core.set_lookahead(name, thread, topic, lookahead);
      });
}

bool Session::set_engine_relay(const std::string& topic, lockstep::CoordinatorCore::Relay relay) {
  return impl_->on_engine_core(
      [&](lockstep::CoordinatorCore& core, const std::string& name, const std::string& thread) {
        return core.set_relay(name, thread, topic, std::move(relay));
      });
}

std::string Session::goal_topic(const std::string& v) {
  return "/model/" + v + "/navigate_to_pose/goal";
}
std::string Session::status_topic(const std::string& v) {
  return "/model/" + v + "/navigate_to_pose/status";
}
std::string Session::cmd_vel_topic(const std::string& v) { return "/model/" + v + "/cmd_vel"; }
std::string Session::contacts_topic(const std::string& v) { return "/model/" + v + "/contacts"; }
std::string Session::pose_topic() const { return "/world/" + impl_->world_name + "/pose/info"; }

Duration Session::wall_elapsed() const { return impl_->opts.wall_now() - impl_->wall_start; }

// The coordinator (a ZeroMQ server when any participant is a process, else in-process),
// started paused, and the engine's and the world's places on it.
Status Session::Impl::start_coordinator(Impl& m) {
  lockstep::CoordinatorOptions core;
  core.max_rtf = m.opts.max_rtf;
  core.ack_timeout = m.opts.ack_timeout;
  core.wall_now = m.opts.wall_now;
  core.start_paused = true;  // resumed once every participant has registered (the origin)
  try {
    if (m.any_process) {
      std::string dir = m.opts.ipc_dir;
      if (dir.empty()) {
        if (Status s = m.ensure_temp_dir(); !s.ok()) {
          return Status(StatusCode::kUnavailable, s.message() + " for the coordinator's socket");
        }
        dir = m.temp_dir;
      }
      lockstep::ServerOptions so;
      so.bind = {"ipc://coordinator.sock"};
      so.ipc_dir = dir;
      so.core = core;
      so.on_failure = [&m](const std::string& p, const std::string& r) { m.fail(p, r); };
      so.on_announce = [&m](const lockstep::Announce& a) {
        MutexLock lk(m.mu);
        m.announced.insert(a.participant);
        m.cv.notify_all();
      };
      so.log = [&m](const std::string& line) { m.warn(line); };
      so.tap = m.opts.tap;
      m.server = std::make_unique<lockstep::CoordinatorServer>(std::move(so));
      m.endpoint = m.server->endpoints().at(0);
    } else {
      m.inproc = std::make_unique<lockstep::InProcessCoordinator>(core);
      m.inproc->set_failure_handler([&m](const std::string& p, std::string r) { m.fail(p, r); });
      if (m.opts.tap) m.inproc->set_tap(m.opts.tap);
    }
    // The engine first: it holds time at 0 until the caller sleeps.
    m.engine = m.participant("engine");
    m.world_p = m.participant("world");
  } catch (const std::exception& e) {
    return Status(StatusCode::kUnavailable,
                  std::string("cannot start the coordinator: ") + e.what());
  }
  if (!m.engine->ok() || !m.world_p->ok()) {
    return Status(StatusCode::kUnavailable, "the coordinator refused the engine or the world: " +
                                                m.engine->last_error() + m.world_p->last_error());
  }
  return Status();
}

// The world on its participant (with the relayed outputs diverted), and the map the stacks
// plan on.
Status Session::Impl::attach_world(Impl& m) {
  m.glue = std::make_unique<world::WorldParticipant>(*m.world, *m.world_p);
  if (!m.opts.relayed_outputs.empty()) {
    std::map<std::string, std::string> diverted;
    for (const std::string& t : m.opts.relayed_outputs) diverted[t] = raw_topic(m.world_name, t);
    m.glue->divert(std::move(diverted));
  }
  m.glue->refresh_subscriptions();

  try {
    m.grid = m.world->occupancy_grid(m.opts.map);
  } catch (const std::invalid_argument& e) {
    return Status(StatusCode::kUnavailable, e.what());
  }
  // Bounds from which occupancy_grid makes exactly this grid (its corner, and half a cell short
  // of its far edges, so rounding cannot add a row): what a process stack is told.
  m.map_bounds = world::MapBounds{m.grid.origin_x, m.grid.origin_y,
                                  m.grid.origin_x + (m.grid.width - 0.5) * m.grid.resolution,
                                  m.grid.origin_y + (m.grid.height - 0.5) * m.grid.resolution};
  return Status();
}

// fieldproof clock's endpoint, and control.json saying where it is.
Status Session::Impl::serve_control(Impl& m) {
  const std::filesystem::path dir = std::filesystem::absolute(m.opts.control_dir);
  // A Unix socket's path is limited to 107 characters: a run directory deeper than that serves
  // from the session's temporary directory instead (control.json says where).
  std::filesystem::path sock = dir / kControlSocketFile;
  if (sock.string().size() >= 100) {
    if (Status s = m.ensure_temp_dir(); !s.ok()) {
      return Status(StatusCode::kUnavailable, s.message() + " for the control socket");
    }
    sock = std::filesystem::path(m.temp_dir) / kControlSocketFile;
  }
  try {
    m.control_ep = std::make_unique<ControlEndpoint>(
        sock.string(), [&m](const lockstep::Control& c) { return m.handle_control(c); },
        [&m] { m.on_idle(); });
  } catch (const std::exception& e) {
    return Status(StatusCode::kUnavailable,
                  std::string("cannot serve fieldproof clock: ") + e.what());
  }
  const nlohmann::json info = {{"endpoint", m.control_ep->endpoint()},
                               {"mode", m.opts.mode},
                               {"physics_step_ns", m.step.ns()},
                               {"world", m.world_name},
                               {"pid", static_cast<int64_t>(getpid())}};
  // Atomically: a `fieldproof clock` reading it meanwhile sees the whole file or none.
  if (Status s = report::write_file_atomically(dir / kControlInfoFile, info.dump(2) + "\n");
      !s.ok()) {
    return Status(StatusCode::kUnavailable, "cannot write control.json: " + s.message());
  }
  return Status();
}

// A thread that ends the run when a stack is gone: the others see a lost connection
// (processes) or a shut-down coordinator and stop.
void Session::Impl::watch_stacks(Impl& m) {
  {
    MutexLock lk(m.mu);
    m.watching = true;
  }
  m.watcher = std::thread([&m] {
    MutexLock lk(m.mu);
    while (m.watching) {
      lk.unlock();
      std::string gone = m.stack_gone();
      lk.lock();
      if (!gone.empty() && m.watching) {
        if (m.failure.empty()) m.failure = gone;
        lk.unlock();
        if (m.server) m.server->stop();
        if (m.inproc) m.inproc->shutdown(gone);
        return;
      }
      (void)m.cv.wait_for(m.mu, std::chrono::milliseconds(50));
    }
  });
}

Status Session::start() {
  Impl& m = *impl_;
  if (m.started) return Status(StatusCode::kUnavailable, "the session was started already");
  m.started = true;
  m.wall_start = m.opts.wall_now();
  if (Status s = Impl::start_coordinator(m); !s.ok()) return s;
  if (Status s = Impl::attach_world(m); !s.ok()) return s;
  if (Status s = Impl::start_stacks(m); !s.ok())
    return Status(StatusCode::kUnavailable, s.message());
  m.world_thread = std::thread([&m] { m.glue->run_until(SimTime::from_ns(kHorizonNs)); });
  if (Status s = Impl::wait_for_processes(m); !s.ok()) return s;
  // The origin: every participant is there and time is still at 0. The coordinator started
  // paused (a pace with nobody registered yet would advance time on its own); resuming anchors
  // the pace now, so the first window holds the cap like every other and the bring-up's wall
  // time is neither simulated nor owed as a burst.
  if (const lockstep::ControlReply r = m.core_control(lockstep::resume_request()); !r.ok) {
    return Status(StatusCode::kUnavailable, "the coordinator did not start: " + r.error);
  }
  // fieldproof clock: served once every stack has registered (the run is live).
  if (!m.opts.control_dir.empty()) {
    if (Status s = Impl::serve_control(m); !s.ok()) return s;
  }
  if (!m.stacks.empty()) Impl::watch_stacks(m);
  return Status();
}

void Session::Impl::hold_for_teardown() {
  lockstep::ControlReply r = core_control(lockstep::status_request());
  if (!r.ok) return;  // the run failed: nothing is granted any more
  const SimTime end = r.status.time;
  if (!core_control(lockstep::run_until_request(end)).ok) return;
  // Every regulating participant but the engine (the stacks, the world) finishes its work at
  // `end` (announces past it) before anything is stopped; otherwise whether a tick or an output
  // due at `end` happened before the stop would depend on the wall clock.
  const SimTime give_up = opts.wall_now() + std::min(opts.ack_timeout, Duration(seconds(10)));
  while (opts.wall_now() < give_up) {
    bool settled = true;
    for (const lockstep::ParticipantStatus& p : r.status.participants) {
      if (p.participant != "engine" && p.role == lockstep::Role::kRegulating &&
          p.safe_time <= end) {
        settled = false;
      }
    }
    if (settled || !stack_gone().empty()) return;
    std::this_thread::sleep_for(std::chrono::microseconds(500));
    r = core_control(lockstep::status_request());
    if (!r.ok) return;
  }
}

void Session::Impl::wait_for_stacks_to_leave() {
  if (stacks.empty()) return;
  std::set<std::string> names;
  for (const VehicleStack& vs : stacks) names.insert(stack_participant(vs.vehicle));
  const SimTime give_up = opts.wall_now() + seconds(2);
  while (opts.wall_now() < give_up) {
    const lockstep::ControlReply r = core_control(lockstep::status_request());
    if (!r.ok) return;
    bool listed = false;
    for (const lockstep::ParticipantStatus& p : r.status.participants) {
      listed = listed || names.count(p.participant) != 0;
    }
    if (!listed) return;
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
}

std::string Session::Impl::stack_gone() {
  for (VehicleStack& vs : stacks) {
    if (auto why = vs.host->exited()) return "the stack of " + vs.vehicle + " " + *why;
  }
  return "";
}

Status Session::Impl::start_stacks(Impl& m) {
  namespace fs = std::filesystem;
  const std::string world_file = fs::absolute(m.opts.world_file).lexically_normal().string();
  for (const VehicleSetup& v : m.opts.vehicles) {
    if (v.stack.kind == StackSpec::Kind::kNone) continue;
    StackContext c;
    c.vehicle = v.name;
    c.role = m.opts.stacks_follow ? lockstep::Role::kFollowing : lockstep::Role::kRegulating;
    c.seed = m.opts.seed;
    c.world_file = world_file;
    c.world_name = m.world_name;
    c.model_file = v.model_file;
    c.run_dir = m.opts.run_dir;
    c.endpoint = m.endpoint;
    c.map = &m.grid;
    c.map_bounds = m.map_bounds;
    c.wall_now = m.opts.wall_now;
    c.participant = [&m](const std::string& name, lockstep::Role role) {
      return m.participant(name, role);
    };
    c.on_problem = [&m, name = stack_participant(v.name)](const std::string& p) {
      m.warn(name + ": " + p);
    };
    if (v.stack.kind == StackSpec::Kind::kProcess) {
      // The parameters as a file: <log_dir>/<vehicle>.params.json (or the temporary directory).
      std::string dir = m.opts.log_dir;
      if (dir.empty()) {
        if (Status s = m.ensure_temp_dir(); !s.ok()) return s;
        dir = m.temp_dir;
      }
      c.params_file = (fs::path(dir) / "params" / (v.name + ".json")).string();
      std::error_code ec;
      fs::create_directories(fs::path(c.params_file).parent_path(), ec);
      std::ofstream params(c.params_file);
      params << v.stack.params_json << '\n';
      params.close();
      if (!params) {
        return Status(
            StatusCode::kIoError,
            "vehicle " + v.name + ": cannot write the stack's parameters to " + c.params_file);
      }
      if (!m.opts.log_dir.empty()) {
        c.log_file = (fs::path(m.opts.log_dir) / "logs" / (v.name + ".log")).string();
      }
    }
    VehicleStack vs{v.name, make_stack_host(v.stack)};
    if (Status s = vs.host->start(c); !s.ok()) return s;
    m.stacks.push_back(std::move(vs));
  }
  return Status();
}

Status Session::Impl::wait_for_processes(Impl& m) {
  // Wait for every process stack to register (or to die trying).
  const SimTime deadline = m.opts.wall_now() + m.opts.ready_timeout;
  for (VehicleStack& vs : m.stacks) {
    if (!vs.host->is_process()) continue;
    const std::string name = stack_participant(vs.vehicle);
    MutexLock lk(m.mu);
    while (m.announced.count(name) == 0) {
      if (!m.failure.empty()) return Status(StatusCode::kUnavailable, m.failure);
      lk.unlock();
      const std::optional<std::string> gone = vs.host->exited();
      lk.lock();
      if (gone) {
        return Status(StatusCode::kUnavailable,
                      "the stack of " + vs.vehicle + " " + *gone + " before it registered as " +
                          name +
                          (m.opts.log_dir.empty() ? std::string()
                                                  : " (its output: logs/" + vs.vehicle + ".log)"));
      }
      if (m.opts.wall_now() >= deadline) {
        return Status(StatusCode::kUnavailable,
                      "the stack of " + vs.vehicle + " did not register as " + name + " within " +
                          format_seconds(m.opts.ready_timeout) +
                          " s of wall time (a program must connect to $FIELDPROOF_COORDINATOR and "
                          "announce as $FIELDPROOF_PARTICIPANT: docs/vehicle-interface.md)");
      }
      (void)m.cv.wait_for(m.mu, std::chrono::milliseconds(20));
    }
  }
  return Status();
}

Status Session::set_paused(bool paused) {
  Impl& m = *impl_;
  MutexLock lk(m.control_mu);
  const lockstep::ControlReply r =
      m.core_control(paused ? lockstep::pause_request() : lockstep::resume_request());
  if (r.ok) m.note_paused(paused);
  if (!r.ok) return Status(StatusCode::kFailedPrecondition, r.error);
  return Status();
}

Duration Session::paused_wall() const {
  const Impl& m = *impl_;
  MutexLock lk(m.pause_mu);
  return m.paused_total + (m.paused ? m.opts.wall_now() - m.paused_since : Duration::zero());
}

int Session::stack_pid(const std::string& vehicle) const {
  const Impl& m = *impl_;
  for (const VehicleStack& vs : m.stacks) {
    if (vs.vehicle == vehicle) return vs.host->pid();
  }
  for (const VehicleSetup& v : m.opts.vehicles) {
    if (v.name == vehicle) return v.stack.kind == StackSpec::Kind::kProcess ? -1 : 0;
  }
  return -1;
}

std::string Session::raw_topic(const std::string& world, const std::string& topic) {
  return "/world/" + world + "/raw" + topic;
}

bool Session::Impl::settle(const std::string& participant, SimTime now) {
  const SimTime give_up = opts.wall_now() + opts.ack_timeout;
  while (opts.wall_now() < give_up) {
    const lockstep::ControlReply r = core_control(lockstep::status_request());
    if (!r.ok) return false;
    bool settled = true;
    for (const lockstep::ParticipantStatus& p : r.status.participants) {
      if (p.participant == participant && p.safe_time <= now) settled = false;
    }
    if (settled) return true;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return false;
}

Result<std::string> Session::kill_stack(const std::string& vehicle, SimTime now) {
  Impl& m = *impl_;
  for (VehicleStack& vs : m.stacks) {
    if (vs.vehicle != vehicle) continue;
    if (!vs.host->is_process()) break;
    const std::string name = stack_participant(vehicle);
    // A regulating stack's outputs up to `now` are part of the run, the same in every run.
    const bool settled = m.opts.stacks_follow || m.settle(name, now);
    if (m.server) (void)m.server->forget(name);
    Result<std::string> killed = vs.host->kill();
    if (!killed.ok() || settled) return killed;
    return *killed + " (it had not finished its work at the kill's time)";
  }
  return Status(StatusCode::kNotFound, "vehicle " + vehicle + " has no process stack");
}

Status Session::restart_stack(const std::string& vehicle) {
  Impl& m = *impl_;
  for (VehicleStack& vs : m.stacks) {
    if (vs.vehicle != vehicle) continue;
    if (Status s = vs.host->restart(); !s.ok())
      return Status(StatusCode::kUnavailable, s.message());
    const std::string name = stack_participant(vehicle);
    const SimTime deadline = m.opts.wall_now() + m.opts.ready_timeout;
    // Registered: the coordinator lists it again (the killed process's last frames, read after
    // the kill, are ignored there, whereas the server's announce hook still sees them).
    const auto registered = [&m, &name] {
      const lockstep::ControlReply r = m.core_control(lockstep::status_request());
      for (const lockstep::ParticipantStatus& p : r.status.participants) {
        if (p.participant == name) return true;
      }
      return false;
    };
    while (!registered()) {
      const std::optional<std::string> gone = vs.host->exited();
      if (gone) {
        return Status(StatusCode::kUnavailable,
                      "the restarted stack of " + vehicle + " " + *gone + " before it registered");
      }
      if (m.opts.wall_now() >= deadline) {
        return Status(StatusCode::kUnavailable,
                      "the restarted stack of " + vehicle + " did not register as " + name +
                          " within " + format_seconds(m.opts.ready_timeout) + " s of wall time");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return Status();
  }
  return Status(StatusCode::kNotFound, "vehicle " + vehicle + " has no process stack");
}

std::string Session::control_endpoint() const {
  return impl_->control_ep ? impl_->control_ep->endpoint() : "";
}

lockstep::ControlReply Session::Impl::handle_control(const lockstep::Control& c) {
  MutexLock lk(control_mu);
  ClockCommand cmd;
  lockstep::ControlReply r;
  switch (c.op) {
    case lockstep::ControlOp::kStatus:
      cmd.op = "status";
      break;
    case lockstep::ControlOp::kPause:
      cmd.op = "pause";
      break;
    case lockstep::ControlOp::kResume:
      cmd.op = "resume";
      break;
    case lockstep::ControlOp::kStep:
      cmd.op = "step";
      cmd.duration = c.duration;
      break;
    default:
      cmd.op = "other";
      break;
  }
  if (cmd.op == "other") {
    r.ok = false;
    r.error = "refused: the run's control endpoint takes status, pause, resume and step";
  } else if (opts.mode == "lockstep" && cmd.op != "status") {
    r.ok = false;
    r.error = cmd.op + " refused: " + kLockstepRefusal;
  } else if (cmd.op == "step") {
    if (c.duration <= Duration::zero()) {
      r.ok = false;
      r.error = "refused: step: the duration must be > 0";
    } else if (stepping.load()) {
      r.ok = false;
      r.error = "refused: a step to " + format_seconds(step_target) +
                " s is in progress (status shows it; pause ends it)";
    } else {
      // Paused first, so the target is exact; the step's own wall time is running time.
      r = core_control(lockstep::pause_request());
      note_paused(true);
      const SimTime target = r.status.time + c.duration;
      if (r.ok) {
        note_paused(false);
        r = core_control(c);
      }
      if (r.ok) {
        // Answered now; the step completes in the background (a long one used to hold this
        // endpoint, and every other request was told the run was not live).
        if (step_thread.joinable()) step_thread.join();
        step_target = target;
        stepping.store(true);
        step_thread = std::thread([this, target] { follow_step(target); });
      } else {
        note_paused(true);
      }
    }
  } else {
    r = core_control(c);
    if (r.ok && cmd.op != "status") note_paused(cmd.op == "pause");
  }
  if (r.ok && cmd.op == "status") r = core_control(lockstep::status_request());
  cmd.ok = r.ok;
  cmd.error = r.error;
  cmd.sim = r.status.time;
  cmd.paused = r.status.paused;
  // A status request changes nothing (and `fieldproof clock step` sends them while it follows a
  // step): only what acts on the clock is recorded.
  if (opts.on_clock_command && cmd.op != "status") opts.on_clock_command(cmd);
  return r;
}

void Session::Impl::follow_step(SimTime target) {
  while (!stopping.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    lockstep::ControlReply r;
    {
      MutexLock lk(control_mu);
      r = core_control(lockstep::status_request());
    }
    // Reached, or paused by someone else (a pause, the timeline), or the run is ending.
    if (!r.ok || r.status.time >= target || r.status.paused) break;
  }
  note_paused(true);
  stepping.store(false);
}

void Session::Impl::on_idle() {
  if (!opts.interrupt || !opts.interrupt->load()) return;
  bool was_paused = false;
  {
    MutexLock lk(pause_mu);
    was_paused = paused;
  }
  if (!was_paused) return;
  MutexLock lk(control_mu);
  if (core_control(lockstep::resume_request()).ok) note_paused(false);
}

std::string Session::failure() {
  Impl& m = *impl_;
  if (!m.watcher.joinable()) {  // otherwise the watcher polls the stacks
    if (const std::string gone = m.stack_gone(); !gone.empty()) m.fail("", gone);
  }
  MutexLock lk(m.mu);
  return m.failure;
}

void Session::stop() {
  Impl& m = *impl_;
  if (m.stopped) return;
  m.stopped = true;
  {
    MutexLock lk(m.mu);
    m.watching = false;
    m.cv.notify_all();
  }
  if (m.watcher.joinable()) m.watcher.join();
  if (m.control_ep) {
    m.stopping.store(true);
    m.control_ep->stop();
    if (m.step_thread.joinable()) m.step_thread.join();
    std::error_code ec;
    std::filesystem::remove(std::filesystem::path(m.opts.control_dir) / kControlInfoFile, ec);
  }
  // The end: the world is held where the run ended while the stacks shut down, so everything
  // they say on the way out is stamped at that time, in the total order, in every run.
  m.hold_for_teardown();
  for (VehicleStack& vs : m.stacks) vs.host->stop();
  m.wait_for_stacks_to_leave();
  if (m.world_p) m.world_p->leave();
  if (m.engine) m.engine->leave();
  if (m.world_thread.joinable()) m.world_thread.join();
  if (m.inproc) m.inproc->shutdown("the run ended");
  if (m.server) m.server->stop();
  if (!m.temp_dir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(m.temp_dir, ec);
  }
}

}  // namespace fieldproof::engine
