#include "fieldproof/engine/session.hpp"

#include <unistd.h>

#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "fieldproof/engine/process.hpp"
#include "fieldproof/lockstep/inprocess.hpp"
#include "fieldproof/lockstep/transport.hpp"
#include "fieldproof/lockstep/zmq_server.hpp"
#include "fieldproof/stacks/participant_host.hpp"
#include "fieldproof/stacks/ugv_nav_node.hpp"
#include "fieldproof/time/system_clock.hpp"
#include "fieldproof/world/world_participant.hpp"

namespace fieldproof::engine {

namespace {
// Far enough for any run, small enough that rounding up to the step grid cannot overflow.
constexpr int64_t kHorizonNs = int64_t{1} << 62;
}  // namespace

struct InProcessStack {
  std::string vehicle;
  std::unique_ptr<stacks::UgvNavNode> node;
  std::unique_ptr<lockstep::Participant> participant;
  std::unique_ptr<stacks::UgvNavParticipantHost> host;
  std::thread thread;
};

struct ProcessStack {
  std::string vehicle;
  std::unique_ptr<ChildProcess> process;
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
  std::vector<std::unique_ptr<InProcessStack>> in_process;
  std::vector<ProcessStack> processes;

  std::mutex mu;
  std::condition_variable cv;
  std::set<std::string> announced;
  std::string failure;
  bool started = false;
  bool stopped = false;
  // Watches the stack processes: one that exits fails the run at once (instead of after
  // ack_timeout) by stopping the server, which the other participants see as a lost connection.
  std::thread watcher;
  bool watching = false;  // guarded by mu
  SimTime wall_start;

  void warn(const std::string& w) {
    if (opts.on_warning) opts.on_warning(w);
  }
  void fail(const std::string& who, const std::string& reason) {
    std::lock_guard<std::mutex> lk(mu);
    if (failure.empty()) failure = who.empty() ? reason : who + ": " + reason;
    cv.notify_all();
  }

  std::unique_ptr<lockstep::Participant> participant(const std::string& name) {
    lockstep::ParticipantOptions po;
    po.name = name;
    po.role = lockstep::Role::kRegulating;
    po.on_error = [this, name](const lockstep::Error& e) {
      warn(name + ": coordinator: " + e.reason);
    };
    if (inproc) return std::make_unique<lockstep::Participant>(inproc->make_link(), po);
    return lockstep::connect_participant(endpoint, po);
  }
};

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() { stop(); }

std::unique_ptr<Session> Session::create(SessionOptions options, std::string* error) {
  auto impl = std::make_unique<Impl>();
  if (!options.wall_now) options.wall_now = SystemClock::wall_now();
  world::WorldOptions wo;
  wo.seed = options.seed;
  wo.wall_now = options.wall_now;
  wo.on_warning = options.on_warning;
  if (!std::filesystem::exists(options.world_file)) {
    *error = options.world_file + ": the world file does not exist";
    return nullptr;
  }
  auto loaded = world::World::load(options.world_file, wo);
  if (!loaded.world) {
    std::ostringstream out;
    for (size_t i = 0; i < loaded.errors.size(); ++i) {
      out << (i ? "\n" : "") << loaded.errors[i];
    }
    *error = loaded.errors.empty() ? options.world_file + ": the world does not load" : out.str();
    return nullptr;
  }
  for (const auto& w : loaded.warnings) {
    if (options.on_warning) options.on_warning(w);
  }
  impl->world = std::move(loaded.world);
  world::World& w = *impl->world;
  for (const VehicleSetup& v : options.vehicles) {
    world::Status s = v.pose ? w.spawn_vehicle(v.name, *v.pose) : w.spawn_vehicle(v.name, v.frame);
    if (!s) {
      *error = "vehicle " + v.name + ": " + s.message;
      return nullptr;
    }
    if (v.stack && v.process) {
      impl->any_process = true;
      if (options.ugv_nav_exe.empty() || access(options.ugv_nav_exe.c_str(), X_OK) != 0) {
        *error = "vehicle " + v.name + ": the stack process '" + options.ugv_nav_exe +
                 "' is not an executable file";
        return nullptr;
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

bool Session::start(std::string* error) {
  Impl& m = *impl_;
  if (m.started) {
    *error = "the session was started already";
    return false;
  }
  m.started = true;
  m.wall_start = m.opts.wall_now();
  lockstep::CoordinatorOptions core;
  core.max_rtf = m.opts.max_rtf;
  core.ack_timeout = m.opts.ack_timeout;
  core.wall_now = m.opts.wall_now;
  try {
    if (m.any_process) {
      std::string dir = m.opts.ipc_dir;
      if (dir.empty()) {
        std::string tmpl = (std::filesystem::temp_directory_path() / "fieldproof-XXXXXX").string();
        if (!mkdtemp(tmpl.data())) {
          *error = "cannot create a temporary directory for the coordinator's socket";
          return false;
        }
        dir = m.temp_dir = tmpl;
      }
      lockstep::ServerOptions so;
      so.bind = {"ipc://coordinator.sock"};
      so.ipc_dir = dir;
      so.core = core;
      so.on_failure = [&m](const std::string& p, const std::string& r) { m.fail(p, r); };
      so.on_announce = [&m](const lockstep::Announce& a) {
        std::lock_guard<std::mutex> lk(m.mu);
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
    *error = std::string("cannot start the coordinator: ") + e.what();
    return false;
  }
  if (!m.engine->ok() || !m.world_p->ok()) {
    *error = "the coordinator refused the engine or the world: " + m.engine->last_error() +
             m.world_p->last_error();
    return false;
  }
  m.glue = std::make_unique<world::WorldParticipant>(*m.world, *m.world_p);
  m.glue->refresh_subscriptions();

  const world::OccupancyGrid grid = m.world->occupancy_grid(0.05);
  for (const VehicleSetup& v : m.opts.vehicles) {
    if (!v.stack) continue;
    if (v.process) {
      ProcessStack ps;
      ps.vehicle = v.name;
      ps.process = std::make_unique<ChildProcess>();
      std::vector<std::string> argv = {m.opts.ugv_nav_exe, "--vehicle", v.name, "--world",
                                       m.opts.world_file};
      if (!v.params_json.empty()) {
        argv.push_back("--params");
        argv.push_back(v.params_json);
      }
      std::vector<std::pair<std::string, std::string>> env = {
          {"FIELDPROOF_COORDINATOR", m.endpoint},
          {"FIELDPROOF_VEHICLE", v.name},
          {"FIELDPROOF_SEED", std::to_string(m.opts.seed)}};
      if (!m.opts.run_dir.empty()) env.emplace_back("FIELDPROOF_RUN_DIR", m.opts.run_dir);
      const std::string log =
          m.opts.log_dir.empty() ? "" : m.opts.log_dir + "/" + v.name + "_nav.log";
      if (!ps.process->start(argv, env, error, log)) return false;
      m.processes.push_back(std::move(ps));
      continue;
    }
    auto s = std::make_unique<InProcessStack>();
    s->vehicle = v.name;
    auto parsed = stacks::parse_ugv_nav_options(v.params_json);
    if (!parsed) {
      *error = "vehicle " + v.name + ": stack parameters: " + parsed.error();
      return false;
    }
    stacks::UgvNavOptions o = parsed.value();
    o.vehicle = v.name;
    if (o.world.empty()) o.world = m.world_name;
    s->node = stacks::UgvNavNode::create(o, grid, m.opts.wall_now, error);
    if (!s->node) {
      *error = "vehicle " + v.name + ": " + *error;
      return false;
    }
    s->participant = m.participant(v.name + "_nav");
    stacks::ParticipantHostOptions ho;
    ho.on_problem = [&m, name = v.name](const std::string& p) { m.warn(name + "_nav: " + p); };
    s->host = std::make_unique<stacks::UgvNavParticipantHost>(*s->participant, *s->node, ho);
    m.in_process.push_back(std::move(s));
  }
  for (auto& s : m.in_process) {
    InProcessStack* sp = s.get();
    sp->thread = std::thread([sp] { sp->host->run(); });
  }
  m.world_thread = std::thread([&m] { m.glue->run_until(SimTime::from_ns(kHorizonNs)); });

  // Wait for every process stack to register (or to die trying).
  const SimTime deadline = m.opts.wall_now() + m.opts.ready_timeout;
  for (ProcessStack& ps : m.processes) {
    const std::string name = ps.vehicle + "_nav";
    std::unique_lock<std::mutex> lk(m.mu);
    while (m.announced.count(name) == 0) {
      if (!m.failure.empty()) {
        *error = m.failure;
        return false;
      }
      lk.unlock();
      const bool gone = ps.process->exited().has_value();
      lk.lock();
      if (gone) {
        *error = "the stack of " + ps.vehicle + " (" + m.opts.ugv_nav_exe + ") " +
                 ps.process->describe() + " before it registered";
        return false;
      }
      if (m.opts.wall_now() >= deadline) {
        *error = "the stack of " + ps.vehicle + " did not register within " +
                 format_seconds(m.opts.ready_timeout) + " s";
        return false;
      }
      m.cv.wait_for(lk, std::chrono::milliseconds(20));
    }
  }
  if (!m.processes.empty()) {
    m.watching = true;
    m.watcher = std::thread([&m] {
      std::unique_lock<std::mutex> lk(m.mu);
      while (m.watching) {
        lk.unlock();
        std::string gone;
        for (ProcessStack& ps : m.processes) {
          if (ps.process->exited()) {
            gone = "the stack of " + ps.vehicle + " " + ps.process->describe();
            break;
          }
        }
        lk.lock();
        if (!gone.empty() && m.watching) {
          if (m.failure.empty()) m.failure = gone;
          lk.unlock();
          m.server->stop();
          return;
        }
        m.cv.wait_for(lk, std::chrono::milliseconds(50));
      }
    });
  }
  return true;
}

std::string Session::set_paused(bool paused) {
  Impl& m = *impl_;
  const lockstep::Control c = paused ? lockstep::pause_request() : lockstep::resume_request();
  lockstep::ControlReply r;
  if (m.inproc) {
    r = m.inproc->control(c);
  } else if (m.server) {
    r = m.server->control(c);
  } else {
    return "the session has not started";
  }
  return r.ok ? "" : r.error;
}

std::string Session::failure() {
  Impl& m = *impl_;
  if (!m.watcher.joinable()) {  // otherwise the watcher polls the processes
    for (ProcessStack& ps : m.processes) {
      if (ps.process->exited()) {
        m.fail("", "the stack of " + ps.vehicle + " " + ps.process->describe());
      }
    }
  }
  std::lock_guard<std::mutex> lk(m.mu);
  return m.failure;
}

void Session::stop() {
  Impl& m = *impl_;
  if (m.stopped) return;
  m.stopped = true;
  {
    std::lock_guard<std::mutex> lk(m.mu);
    m.watching = false;
    m.cv.notify_all();
  }
  if (m.watcher.joinable()) m.watcher.join();
  for (auto& s : m.in_process) s->host->stop();
  if (m.world_p) m.world_p->leave();
  if (m.engine) m.engine->leave();
  for (auto& s : m.in_process) {
    if (s->thread.joinable()) s->thread.join();
    s->participant->leave();
  }
  if (m.world_thread.joinable()) m.world_thread.join();
  for (ProcessStack& ps : m.processes) ps.process->terminate_group();
  if (m.inproc) m.inproc->shutdown("the run ended");
  if (m.server) m.server->stop();
  if (!m.temp_dir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(m.temp_dir, ec);
  }
}

}  // namespace fieldproof::engine
