// The two stack hosts: any program as a process, any stack plugin in-process.
#include "fieldproof/engine/stack_host.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <thread>

#include "fieldproof/engine/process.hpp"
#include "fieldproof/stacks/plugin_api.hpp"
#include "fieldproof/time/system_clock.hpp"
#include "fieldproof/util/mutex.hpp"

namespace fieldproof::engine {

namespace {

// ---- the process host -------------------------------------------------------------------------

class ProcessHost final : public StackHost {
 public:
  explicit ProcessHost(StackSpec spec) : spec_(std::move(spec)) {}
  ~ProcessHost() override { stop(); }

  Status start(const StackContext& c) override {
    vehicle_ = c.vehicle;
    context_ = c;
    std::vector<std::pair<std::string, std::string>> env = {
        {"FIELDPROOF_COORDINATOR", c.endpoint},
        {"FIELDPROOF_PARTICIPANT", stack_participant(c.vehicle)},
        {"FIELDPROOF_VEHICLE", c.vehicle},
        {"FIELDPROOF_SEED", std::to_string(c.seed)},
        {"FIELDPROOF_ROLE", c.role == lockstep::Role::kFollowing ? "following" : "regulating"},
        {"FIELDPROOF_WORLD_FILE", c.world_file},
        {"FIELDPROOF_WORLD", c.world_name}};
    if (!c.run_dir.empty()) env.emplace_back("FIELDPROOF_RUN_DIR", c.run_dir);
    if (!c.model_file.empty()) env.emplace_back("FIELDPROOF_MODEL_FILE", c.model_file);
    if (c.map != nullptr) {
      const auto num = [](double v) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.17g", v);
        return std::string(buf);
      };
      const world::MapBounds& b = c.map_bounds;
      env.emplace_back("FIELDPROOF_MAP_BOUNDS",
                       num(b.min_x) + "," + num(b.min_y) + "," + num(b.max_x) + "," + num(b.max_y));
      env.emplace_back("FIELDPROOF_MAP_RESOLUTION", num(c.map->resolution));
    }
    if (!c.params_file.empty()) env.emplace_back("FIELDPROOF_PARAMS_FILE", c.params_file);
    // The scenario's own entries come last: they win over the engine's defaults, except the
    // coordinator and the participant name, without which the run cannot work.
    for (const auto& [k, v] : spec_.env) {
      if (k == "FIELDPROOF_COORDINATOR" || k == "FIELDPROOF_PARTICIPANT") continue;
      env.emplace_back(k, v);
    }
    const std::string cwd = spec_.cwd.empty() ? c.run_dir : spec_.cwd;
    if (Status s = process_.start(spec_.argv, env, c.log_file, cwd); !s.ok()) {
      return Status(s.code(), "the stack of " + c.vehicle + " (" + spec_.describe() +
                                  ") could not start: " + s.message());
    }
    return Status();
  }

  bool is_process() const override { return true; }

  std::optional<std::string> exited() override {
    MutexLock lk(mu_);
    if (stopped_ || killed_ || !process_.exited()) return std::nullopt;
    return process_.describe();
  }

  void stop() override {
    MutexLock lk(mu_);
    if (stopped_) return;
    stopped_ = true;
    process_.terminate_group(kStopGrace);
  }

  int pid() const override { return process_.running() ? process_.pid() : -1; }

  Result<std::string> kill() override {
    MutexLock lk(mu_);
    if (stopped_ || killed_ || !process_.running() || process_.exited()) {
      return Status(StatusCode::kFailedPrecondition,
                    "the stack of " + vehicle_ + " was not running (" + process_.describe() + ")");
    }
    const int pid = process_.pid();
    killed_ = true;
    process_.kill_group();
    return "pid " + std::to_string(pid) + ", " + process_.describe();
  }

  Status restart() override {
    {
      MutexLock lk(mu_);
      if (stopped_) {
        return Status(StatusCode::kFailedPrecondition, "the stack of " + vehicle_ + " was stopped");
      }
    }
    // start() spawns without the lock: exited() (the session's watcher) must not wait on it.
    const StackContext c = context_;
    if (Status s = start(c); !s.ok()) return s;
    MutexLock lk(mu_);
    killed_ = false;
    return Status();
  }

 private:
  StackSpec spec_;
  std::string vehicle_;
  StackContext context_;
  Mutex mu_;
  ChildProcess process_;
  bool stopped_ FIELDPROOF_GUARDED_BY(mu_) = false;
  bool killed_ FIELDPROOF_GUARDED_BY(mu_) = false;  // by kill(), until restart()
};

// ---- the plugin host --------------------------------------------------------------------------

// Drives a plugin through its function table on one thread: it ticks on simulated time (sleeping
// until its next tick; deliveries run inside the wait), and a wall-clock watchdog thread runs
// check_wall while simulated time stands still. Calls on the plugin are serialised by mu_, as the
// ABI requires.
class PluginHost final : public StackHost {
 public:
  explicit PluginHost(StackSpec spec) : spec_(std::move(spec)) {}
  ~PluginHost() override { stop(); }

  Status start(const StackContext& c) override {
    vehicle_ = c.vehicle;
    on_problem_ = c.on_problem;
    const std::string who = "the stack plugin of " + c.vehicle + " (" + spec_.plugin + ")";
    if (const Status bad = check_stack_plugin(spec_.plugin); !bad.ok()) {
      return Status(StatusCode::kUnavailable, who + ": " + bad.message());
    }
    so_ = dlopen(spec_.plugin.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (so_ == nullptr) {
      const char* e = dlerror();
      return Status(StatusCode::kUnavailable,
                    who + ": cannot be loaded: " + (e ? e : "dlopen failed"));
    }
    void* sym = dlsym(so_, FIELDPROOF_STACK_CREATE_SYMBOL);
    if (sym == nullptr) {
      return Status(StatusCode::kUnavailable,
                    who + ": does not export " FIELDPROOF_STACK_CREATE_SYMBOL);
    }
    auto create = reinterpret_cast<fieldproof_stack_create_fn>(sym);
    if (c.map == nullptr) {
      return Status(StatusCode::kUnavailable, who + ": no static map to give it");
    }
    fieldproof_grid_v1 grid{c.map->resolution,
                            c.map->origin_x,
                            c.map->origin_y,
                            static_cast<int32_t>(c.map->width),
                            static_cast<int32_t>(c.map->height),
                            c.map->cells.data()};
    char message[1024] = {0};
    stack_ = create(c.vehicle.c_str(), spec_.params_json.c_str(), &grid, message, sizeof message);
    if (stack_ == nullptr) {
      return Status(StatusCode::kUnavailable,
                    who + ": refused to start: " + (message[0] ? message : "(no message)"));
    }
    if (stack_->abi_version != FIELDPROOF_STACK_ABI_VERSION ||
        stack_->struct_size < sizeof(fieldproof_stack_v1)) {
      stack_ = nullptr;  // not ours to destroy through an unknown table
      return Status(StatusCode::kUnavailable, who + ": its stack table is of ABI version " +
                                                  std::to_string(stack_->abi_version) + " (" +
                                                  std::to_string(stack_->struct_size) +
                                                  " bytes); this engine needs version " +
                                                  std::to_string(FIELDPROOF_STACK_ABI_VERSION));
    }
    // A regulating stack (lockstep, unpaced runs) gets simulated time as its wall clock: its
    // watchdogs then count the time it was given, and a loaded machine cannot fail it.
    regulating_ = c.role == lockstep::Role::kRegulating;
    if (regulating_) {
      wall_now_ = [this] { return participant_ ? participant_->now() : SimTime::zero(); };
    } else {
      wall_now_ = c.wall_now ? c.wall_now : SystemClock::wall_now();
    }
    stack_->set_wall_clock(
        stack_,
        [](void* self) -> int64_t { return static_cast<PluginHost*>(self)->wall_now_().ns(); },
        this);
    try {
      participant_ = c.participant(stack_participant(c.vehicle), c.role);
    } catch (const std::exception& e) {
      return Status(StatusCode::kUnavailable, who + ": cannot join the coordinator: " + e.what());
    }
    for (size_t i = 0; i < stack_->subscription_count(stack_); ++i) {
      const char* topic = stack_->subscription(stack_, i);
      if (topic != nullptr) subscriptions_.emplace_back(topic);
    }
    thread_ = std::thread([this] { run(); });
    return Status();
  }

  bool is_process() const override { return false; }

  std::optional<std::string> exited() override {
    MutexLock lk(mu_);
    if (stop_.load() || failure_.empty()) return std::nullopt;
    return failure_;
  }

  void stop() override {
    if (stopped_) return;
    stopped_ = true;
    stop_.store(true);
    if (participant_) participant_->main_thread().stop();
    if (thread_.joinable()) thread_.join();
    if (participant_) participant_->leave();
    participant_.reset();
    if (stack_ != nullptr) stack_->destroy(stack_);
    stack_ = nullptr;
    // The library stays loaded: a plugin's static destructors or threads may still refer to it,
    // and unloading buys nothing for one run.
  }

  int pid() const override { return 0; }

 private:
  void problem(const std::string& what) {
    if (on_problem_) on_problem_(what);
  }

  // Publishes the plugin's pending outputs, none stamped before `floor`. mu_ held.
  void publish_locked(SimTime floor) {
    struct Ctx {
      lockstep::Participant* p;
      SimTime floor;
    } ctx{participant_.get(), floor};
    stack_->drain(
        stack_,
        [](void* user, const char* topic, int64_t stamp_ns, const char* type, const char* payload,
           size_t size) {
          auto* x = static_cast<Ctx*>(user);
          x->p->publish_at(std::max(SimTime::from_ns(stamp_ns), x->floor), topic ? topic : "",
                           std::string(payload ? payload : "", payload ? size : 0),
                           type ? type : "");
        },
        &ctx);
  }

  void fail_locked(const std::string& what) FIELDPROOF_REQUIRES(mu_) {
    if (failure_.empty()) failure_ = "the plugin's " + what;
  }

  void run() {
    for (const std::string& topic : subscriptions_) {
      participant_->subscribe(topic, [this](const lockstep::Publish& m) {
        MutexLock lk(mu_);
        if (stack_->deliver(stack_, m.topic.c_str(), m.stamp.ns(), m.type.c_str(), m.payload.data(),
                            m.payload.size()) != 0) {
          problem(std::string("refused a message on ") + m.topic + ": " +
                  stack_->last_error(stack_));
        }
        publish_locked(participant_->now());
      });
    }
    PeriodicThread watchdog(PeriodicThreadOptions{
        .spin = Duration::zero(), .now = SystemClock::wall_now(), .sleep_until = {}});
    // Following, simulated time may stand still (a paused world) while the wall clock goes on:
    // a thread runs the plugin's wall-clock checks. Regulating, its clock is simulated time.
    if (!regulating_)
      watchdog.start(milliseconds(250), [this](const PeriodicTick&) {
        MutexLock lk(mu_);
        if (stack_->check_wall(stack_) != 0) problem(stack_->last_error(stack_));
        // The main thread announced the next tick: nothing may be published before it.
        publish_locked(SimTime::from_ns(stack_->next_tick_ns(stack_)));
      });
    while (!stop_.load()) {
      SimTime next;
      {
        MutexLock lk(mu_);
        next = SimTime::from_ns(stack_->next_tick_ns(stack_));
      }
      if (!participant_->sleep_until(next)) break;
      MutexLock lk(mu_);
      if (stack_->tick(stack_, participant_->now().ns()) != 0) {
        fail_locked(std::string("tick failed: ") + stack_->last_error(stack_));
        break;
      }
      publish_locked(participant_->now());
    }
    watchdog.stop();
    if (participant_->ok()) {
      MutexLock lk(mu_);
      const SimTime now = participant_->now();
      stack_->shutdown(stack_, now.ns(), stop_.load() ? "stopped" : "the run ended");
      publish_locked(now);
    }
  }

  StackSpec spec_;
  std::string vehicle_;
  std::function<void(const std::string&)> on_problem_;
  void* so_ = nullptr;
  fieldproof_stack_v1* stack_ = nullptr;
  WallNow wall_now_;
  std::unique_ptr<lockstep::Participant> participant_;
  std::vector<std::string> subscriptions_;
  std::thread thread_;
  Mutex mu_;
  std::string failure_ FIELDPROOF_GUARDED_BY(mu_);
  std::atomic<bool> stop_{false};
  bool stopped_ = false;
  bool regulating_ = false;
};

class NoStack final : public StackHost {
 public:
  Status start(const StackContext&) override { return Status(); }
  bool is_process() const override { return false; }
  std::optional<std::string> exited() override { return std::nullopt; }
  void stop() override {}
  int pid() const override { return 0; }
};

}  // namespace

std::unique_ptr<StackHost> make_stack_host(const StackSpec& spec) {
  switch (spec.kind) {
    case StackSpec::Kind::kProcess:
      return std::make_unique<ProcessHost>(spec);
    case StackSpec::Kind::kPlugin:
      return std::make_unique<PluginHost>(spec);
    case StackSpec::Kind::kNone:
      break;
  }
  return std::make_unique<NoStack>();
}

}  // namespace fieldproof::engine
