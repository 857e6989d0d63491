// One run, as a pipeline (docs/architecture.md, "The data flow of one run"):
//
//   Run::plan_and_open  the plan, the run directory, its files, the recording
//   Run::set_up         the session and everything that listens to it (network, timeline,
//                       observer, resource monitor)
//   Run::run_loop       the engine's wakes until the timeline completes or the run ends
//   Run::wind_down      the last samples, the pending verdicts, the clock's record
//   Run::judge          the status and its reason
//   Run::finish         the KPIs, the recording's end, run.json (a RunRecord), reports, index
//
// The status is a report::RunStatus: its verdict and exit code come from report/run_record.hpp.
#include "fieldproof/engine/run.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include <sodium.h>

#include "engine/judge.hpp"
#include "engine/links.hpp"
#include "engine/metrics_message.hpp"
#include "engine/resources.hpp"
#include "fieldproof/engine/clock_monitor.hpp"
#include "fieldproof/engine/observer.hpp"
#include "fieldproof/engine/stack_host.hpp"
#include "fieldproof/engine/timeline.hpp"
#include "fieldproof/fleet/run_index.hpp"
#include "fieldproof/msgs/ign.hpp"
#include "fieldproof/msgs/navigation.hpp"
#include "fieldproof/network/network.hpp"
#include "fieldproof/record/recorder.hpp"
#include "fieldproof/report/report.hpp"
#include "fieldproof/report/run_record.hpp"
#include "fieldproof/time/seconds.hpp"
#include "fieldproof/time/system_clock.hpp"
#include "fieldproof/util/mutex.hpp"

namespace fieldproof::engine {

using nlohmann::json;
using report::RunStatus;
namespace fs = std::filesystem;

namespace {

double round3(double v) { return std::round(v * 1e3) / 1e3; }

// A JSON-lines file, written under a lock (warnings arrive from other threads).
class JsonLines {
 public:
  bool open(const fs::path& p) {
    MutexLock lk(mu_);
    out_.open(p, std::ios::out | std::ios::trunc);
    return static_cast<bool>(out_);
  }
  void write(const json& j, bool flush = false) {
    MutexLock lk(mu_);
    out_ << j.dump() << '\n';
    if (flush) out_.flush();
  }
  void flush() {
    MutexLock lk(mu_);
    out_.flush();
  }

 private:
  Mutex mu_;
  std::ofstream out_ FIELDPROOF_GUARDED_BY(mu_);
};

bool final_status(msgs::NavStatusCode c) {
  return c == msgs::NavStatusCode::kSucceeded || c == msgs::NavStatusCode::kAborted ||
         c == msgs::NavStatusCode::kRejected || c == msgs::NavStatusCode::kCanceled;
}

// "sha256:<hex>" of a file's bytes, "" when it cannot be read.
std::string file_digest(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return "";
  std::ostringstream ss;
  ss << in.rdbuf();
  const std::string bytes = ss.str();
  unsigned char h[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(h, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "sha256:";
  for (const unsigned char c : h) {
    out += kHex[c >> 4];
    out += kHex[c & 0xf];
  }
  return out;
}

// The run directory's name when --run-id is not given: the scenario's name made a file name,
// then -1, -2, ... the first not taken.
std::string free_run_id(const fs::path& runs_dir, const std::string& scenario_name) {
  std::string base;
  for (const char c : scenario_name)
    base += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-') ? c : '_';
  if (base.empty()) base = "run";
  if (base.size() > 180) base.resize(180);  // a long scenario name still makes a file name
  std::error_code ec;
  for (int n = 1;; ++n) {
    const std::string candidate = base + "-" + std::to_string(n);
    if (!fs::exists(runs_dir / candidate, ec)) return candidate;
  }
}

// The run directory's record files (DESIGN.md "The run directory").
struct RunFiles {
  JsonLines log, samples, verdicts, clock_lines, resource_lines;
  // The names of those that could not be created (a warning each: the run goes on).
  std::vector<std::string> open(const fs::path& dir) {
    std::vector<std::string> failed;
    const std::pair<JsonLines*, const char*> files[] = {{&log, "engine.log"},
                                                        {&resource_lines, "resources.jsonl"},
                                                        {&samples, "samples.jsonl"},
                                                        {&verdicts, "assertions.jsonl"},
                                                        {&clock_lines, "clock.jsonl"}};
    for (const auto& [f, name] : files) {
      if (!f->open(dir / name)) failed.push_back(name);
    }
    return failed;
  }
  void flush_all() {
    clock_lines.flush();
    samples.flush();
    resource_lines.flush();
    verdicts.flush();
  }
};

// Why the coordinator ended a run: the session's failure, else the participant's last error.
std::string coordinator_reason(Session& session, const lockstep::Participant& e) {
  const std::string f = session.failure();
  return !f.empty() ? f : "the coordinator ended the run: " + e.last_error();
}

class Run {
 public:
  Run(const RunOptions& o, fs::path* started_dir)
      : o_(o),
        started_dir_(started_dir),
        wall_now_(o.wall_now ? o.wall_now : SystemClock::wall_now()),
        utc_now_(o.utc_now ? o.utc_now : SystemClock::utc_now()),
        pr_(plan_run(o.scenario_file, plan_options(o))) {}

  RunOutcome execute() {
    if (!plan_and_open()) return out_;
    set_up();
    if (!status_) {
      run_loop();
      wind_down();
      judge();
    } else {
      judge_->end(SimTime::zero(), "the run did not start (" + reason_ + ")");
      if (session_) session_->stop();
    }
    return finish();
  }

 private:
  static PlanOptions plan_options(const RunOptions& o) {
    PlanOptions po;
    po.seed = o.seed;
    po.tool_dir = o.tool_dir;
    po.overrides = o.overrides;
    return po;
  }
  RunPlan& plan() { return *pr_.plan; }
  const RunPlan& plan() const { return *pr_.plan; }

  // --- plan_and_open -------------------------------------------------------------------------

  RunOutcome& invalid(std::vector<std::string> errors) {
    out_.run_status = RunStatus::kInvalid;
    out_.exit_code = report::exit_code_of(RunStatus::kInvalid);
    out_.status = std::string(report::to_string(RunStatus::kInvalid));
    out_.verdict = std::string(report::verdict_of(RunStatus::kInvalid));
    out_.errors = std::move(errors);
    return out_;
  }

  // The plan, the run directory, its files and the recording; false (out_ says why, exit 2) when
  // the input is refused before anything started.
  bool plan_and_open() {
    if (!pr_.plan) return invalid(pr_.errors), false;
    const scenario::Scenario& sc = plan().scenario;
    if (!plan().unsupported.empty()) {
      std::vector<std::string> e;
      for (const auto& u : plan().unsupported) e.push_back(sc.file + ": not supported yet: " + u);
      return invalid(e), false;
    }
    if (o_.max_rtf && (*o_.max_rtf < 0 || !std::isfinite(*o_.max_rtf))) {
      return invalid({"--max-rtf must be >= 0 (0 = unpaced)"}), false;
    }
    if (!make_run_directory()) return false;
    open_record_files();
    return true;
  }

  // runs/<id>/, never overwritten.
  bool make_run_directory() {
    id_ = o_.run_id;
    if (!id_.empty()) {
      if (const Status e = check_run_id(id_); !e.ok()) {
        return invalid({"--run-id '" + id_ + "': " + e.message()}), false;
      }
    }
    std::error_code ec;
    fs::create_directories(o_.runs_dir, ec);
    if (ec) {
      return invalid(
                 {o_.runs_dir.string() + ": cannot create the runs directory: " + ec.message()}),
             false;
    }
    if (id_.empty()) id_ = free_run_id(o_.runs_dir, plan().scenario.name);
    dir_ = o_.runs_dir / id_;
    if (fs::exists(dir_, ec)) {
      return invalid({dir_.string() + ": the run directory exists already; a run directory is "
                                      "never overwritten (choose another --run-id)"}),
             false;
    }
    if (!fs::create_directory(dir_, ec) || ec) {
      return invalid({dir_.string() + ": the run directory cannot be created: " +
                      (ec ? ec.message() : std::string("unknown error")) + " (is --runs-dir " +
                      o_.runs_dir.string() + " writable?)"}),
             false;
    }
    out_.run_dir = dir_;
    out_.run_id = id_;
    *started_dir_ = dir_;
    return true;
  }

  void open_record_files() {
    std::error_code ec;
    fs::copy_file(o_.scenario_file, dir_ / "scenario.yaml", ec);
    const std::string not_copied = ec ? ec.message() : "";
    const std::vector<std::string> not_open = files_.open(dir_);
    wall0_ = wall_now_();
    started_utc_ = format_utc(utc_now_());
    digest_ = file_digest(o_.scenario_file);
    open_recording();
    const scenario::Scenario& sc = plan().scenario;
    event("run.start", {{"run_id", id_},
                        {"scenario", sc.name},
                        {"seed", sc.seed},
                        {"seed_given", sc.seed_given},
                        {"mode", std::string(scenario::to_string(sc.time.mode))}});
    for (const auto& w : pr_.warnings) event("warning", {{"message", w}});
    if (ec) {
      event("warning", {{"message",
                         "scenario.yaml: the scenario could not be copied into the run "
                         "directory: " +
                             ec.message()}});
    }
    for (const std::string& f : not_open) {
      event("warning", {{"message", f + ": cannot be created in " + dir_.string()}});
    }
    if (!not_copied.empty()) {
      event("warning", {{"message", "scenario.yaml: cannot be copied into " + dir_.string() + ": " +
                                        not_copied}});
    }
    if (!recording_error_.empty()) {
      event("warning", {{"message", "outputs.record: cannot write " + recording_rel_ + ": " +
                                        recording_error_}});
    }
    make_evaluators();
  }

  // The recording: the coordinator's ordered stream (the session's tap) and the side channels.
  void open_recording() {
    const scenario::Scenario& sc = plan().scenario;
    record::RecorderOptions ro;
    ro.topics = plan().record_topics;
    for (const PlannedVehicle& v : plan().vehicles) ro.vehicles.push_back(v.name);
    ro.wall_now = wall_now_;
    ro.run = {{"run_id", id_},
              {"seed", std::to_string(sc.seed)},
              {"scenario", sc.name},
              {"scenario_digest", digest_},
              {"engine_version", FIELDPROOF_ENGINE_VERSION}};
    recorder_.emplace(ro);
    recording_rel_ = "recording/" + plan().record_file;
    if (plan().record) {
      const record::Status st = recorder_->open(dir_ / recording_rel_);
      recording_ = st.ok();
      if (!st.ok()) recording_error_ = st.to_string();
    }
    last_poll_ = wall_now_();
  }

  // The clock monitor, the evaluator and the KPI collectors: they exist before the session, so
  // that a run that cannot start still skips its assertions with the reason.
  void make_evaluators() {
    const scenario::Scenario& sc = plan().scenario;
    pace_ = o_.max_rtf ? *o_.max_rtf : plan().target_rtf;
    if (!std::isfinite(pace_)) pace_ = 0.0;
    ClockMonitorOptions cmo;
    cmo.time = sc.time;
    cmo.target_rtf = plan().target_rtf;
    cmo.physics_step = plan().physics_step;
    cmo.pace = pace_;
    clock_.emplace(cmo);
    for (const PlannedVehicle& v : plan().vehicles) lockstep_stats_.vehicles.push_back(v.name);
    judge_.emplace(plan(), [this](const AssertionResult& r) { on_verdict(r); });
    // on_fail: abort: the loop cancels the timeline the moment this is set.
    judge_->evaluator().set_on_abort([this](const AssertionResult& r) {
      abort_reason_ = judge_->evaluator().abort_reason();
      event("timeline.abort", {{"assertion", r.name}, {"t_s", round3(to_seconds(r.t))}});
      if (timeline_) timeline_->cancel(*abort_reason_, engine_ ? engine_->now() : sim_now_);
    });
  }

  void on_verdict(const AssertionResult& r) {
    json j = r.to_json();
    j["run_id"] = id_;
    files_.verdicts.write(j);
    if (recording_) (void)recorder_->write_side(record::SideChannel::kAssertions, sim_now_, j);
    event("assertion." + std::string(to_string(r.status)), {{"name", r.name},
                                                            {"type", r.type},
                                                            {"reason", r.reason},
                                                            {"t_s", round3(to_seconds(r.t))}});
    say("assertion " + r.name + " " + std::string(to_string(r.status)) + ": " + r.reason);
    resolved_order_.push_back(r);
  }

  // --- the record's small helpers ------------------------------------------------------------

  double wall_s() const { return round3(to_seconds(wall_now_() - wall0_)); }

  // An event at the loop's wake, or at `at` (an event raised inside a delivery, where the
  // loop's sim_now lags): its sim_s and its log time in the recording are the same instant, so
  // re-judging feeds it to the judge when the live run did.
  void event(const std::string& name, json fields = json::object(),
             std::optional<SimTime> at = std::nullopt) {
    const SimTime t = at.value_or(sim_now_);
    json j = {{"event", name}, {"wall_s", wall_s()}, {"sim_s", to_seconds(t)}};
    for (auto& [k, v] : fields.items()) j[k] = v;
    // Raised by the delivery of a message stamped sim_s (after the loop's tick at that instant):
    // re-judging feeds it right after that message, as here.
    if (delivering_ != nullptr) {
      j["in_delivery_of"] = {{"topic", delivering_->topic}, {"seq", delivering_->seq}};
    }
    files_.log.write(j, /*flush=*/true);  // followed live (tail -f, tests)
    if (recording_) (void)recorder_->event(t, j);
  }
  void warn(const std::string& message) { event("warning", {{"message", message}}); }
  void say(const std::string& line) const {
    if (o_.on_event) o_.on_event(line);
  }
  void poll_recorder() {
    if (!recording_) return;
    const SimTime w = wall_now_();
    if (w - last_poll_ < seconds(1)) return;
    last_poll_ = w;
    (void)recorder_->poll();
  }
  void end_with(RunStatus s, std::string reason) {
    status_ = s;
    reason_ = std::move(reason);
  }

  // --- set_up --------------------------------------------------------------------------------

  SessionOptions session_options() {
    const scenario::Scenario& sc = plan().scenario;
    SessionOptions so;
    so.world_file = sc.world.string();
    so.seed = static_cast<uint64_t>(sc.seed);
    so.max_rtf = pace_;
    so.ack_timeout = sc.time.ack_timeout;
    so.run_dir = fs::absolute(dir_).string();
    so.log_dir = so.run_dir;
    so.wall_now = wall_now_;
    so.on_warning = [this](const std::string& w) { warn(w); };
    for (const PlannedVehicle& v : plan().vehicles) so.vehicles.push_back(v.setup);
    so.map = plan().map;
    so.gps_denied = plan().gps_denied;
    so.relayed_outputs = faulted_topics(sc);  // the timeline's topic faults (docs/network.md)
    if (recording_) {
      so.tap = [this](const lockstep::Publish& p) { (void)recorder_->on_message(p); };
    }
    // fieldproof clock: control.sock / control.json in the run directory while it runs; each
    // request in engine.log (clock.<op>) and run.json clock.commands.
    so.control_dir = so.run_dir;
    so.mode = std::string(scenario::to_string(sc.time.mode));
    so.interrupt = o_.interrupt;
    // Stacks regulate in lockstep only; in sim and realtime they follow the published clock. An
    // unpaced run (--max-rtf 0) keeps them regulating: a follower cannot keep up with a world
    // that runs as fast as the machine allows.
    so.stacks_follow = sc.time.mode != scenario::TimeMode::kLockstep && pace_ > 0;
    so.on_clock_command = [this](const ClockCommand& c) { on_clock_command(c); };
    return so;
  }

  void on_clock_command(const ClockCommand& c) {
    json j = {{"op", c.op},
              {"source", "fieldproof clock"},
              {"ok", c.ok},
              {"sim_s", to_seconds(c.sim)},
              {"paused", c.paused}};
    if (c.op == "step") j["duration_s"] = to_seconds(c.duration);
    if (!c.ok) j["error"] = c.error;
    event(c.ok ? "clock." + c.op : "clock.refused", j);
    j["wall_s"] = wall_s();
    MutexLock lk(clock_commands_mu_);
    clock_commands_.push_back(j);
  }

  // The session and what listens to it; status_ is set when the run cannot start.
  void set_up() {
    relayed_outputs_ = faulted_topics(plan().scenario);
    Result<std::unique_ptr<Session>> created = Session::create(session_options());
    if (created.ok()) {
      session_ = std::move(created).value();
      record_scene();
    }
    if (!recording_error_.empty()) {
      // Evidence is not lost quietly: a run asked to record that cannot is an error, not a pass.
      end_with(RunStatus::kError,
               "outputs.record: cannot write " + recording_rel_ + ": " + recording_error_);
    } else if (!session_) {
      end_with(RunStatus::kError, "the world could not be set up: " + created.status().message());
    } else {
      event("phase", {{"phase", "starting"}});
      if (const Status started = session_->start(); !started.ok()) {
        end_with(RunStatus::kError, "the stacks could not be started: " + started.message());
      }
    }
    if (status_) return;
    event("phase", {{"phase", "ready"}});
    ready_wall_ = wall_now_();
    engine_ = &session_->engine();
    for (const auto& v : plan().vehicles) vehicle_names_.insert(v.name);
    if (plan().scenario.network.given) make_network();
    make_timeline();
    make_observer();
    listen_to_session();
  }

  // The static obstacles, for the report's plot (read before start: the world thread owns it
  // afterwards), and the same geometry for Foxglove's 3D panel (/fieldproof/scene).
  void record_scene() {
    for (const world::StaticShape& sh : session_->world().static_shapes()) {
      json j = {{"name", sh.model}, {"x", sh.pose.x}, {"y", sh.pose.y}, {"yaw", sh.pose.yaw}};
      if (sh.type == world::ShapeType::kBox) {
        j["size_x"] = sh.size_x;
        j["size_y"] = sh.size_y;
      } else {
        j["radius"] = sh.radius;
      }
      obstacles_.push_back(j);
    }
    if (recording_) (void)recorder_->write_scene(SimTime::zero(), scene_shapes(*session_));
  }

  // The network: what the ground station (the engine) sends to a vehicle behind a link, and
  // what the vehicle sends up, crosses the link at the link's delay, or is lost.
  void make_network() {
    lockstep::Participant& e = *engine_;
    network::NetworkHooks nh;
    // Held by with_net() or relay_in_fan_out(): from inside the coordinator's fan-out straight
    // into its queue, otherwise once the call has released the network.
    nh.publish_at = [this, &e](SimTime at, const std::string& topic, std::string payload,
                               const std::string& type) FIELDPROOF_NO_THREAD_SAFETY_ANALYSIS {
      if (relay_emit_ != nullptr) {
        (*relay_emit_)(e.prepare(at, topic, std::move(payload), type));
      } else {
        net_out_.push_back({at, topic, std::move(payload), type});
      }
    };
    nh.on_window = [this](const network::LinkWindow& w) {
      if (recording_) {
        (void)recorder_->write_side(record::SideChannel::kNetwork, w.end, network::to_json(w));
      }
    };
    nh.on_change = [this](const std::string& link, const std::string& vehicle, bool up,
                          const std::string& cause, SimTime at) {
      json f = {
          {"link", link}, {"vehicle", vehicle}, {"t_s", to_seconds(at)}, {"sim_s", to_seconds(at)}};
      if (!up) f["cause"] = cause;
      event(up ? "link.up" : "link.down", f);
    };
    nh.on_retried_delivery = [this](const std::string& topic, const std::string& vehicle,
                                    SimTime at) {
      if (topic == Session::goal_topic(vehicle)) hold_link_goal_at(at, vehicle);
    };
    net_ = std::make_unique<network::Network>(network_config(plan().scenario), std::move(nh));
  }

  // The network is shared by the engine's thread and the coordinator's fan-out, where the
  // relays of the vehicles' telemetry run (relay_in_fan_out): every call takes net_mu_. What a
  // call from the engine's thread publishes is sent once the lock is released, since the
  // participant's publish takes the coordinator's lock, which the fan-out holds when it takes
  // net_mu_. The coordinator never runs a relay while the engine acts (the engine holds the
  // grant), so the lock orders nothing; it only makes that a rule of the code.
  struct NetPublish {
    SimTime at;
    std::string topic;
    std::string payload;
    std::string type;
  };
  void with_net(const std::function<void(network::Network&)>& f) {
    std::vector<NetPublish> out;
    {
      MutexLock lk(net_mu_);
      f(*net_);
      out.swap(net_out_);
    }
    for (NetPublish& p : out) engine_->publish_at(p.at, p.topic, std::move(p.payload), p.type);
  }

  // A vehicle's message relayed across its links from inside the coordinator's fan-out (its
  // lock held): what the network publishes goes straight into the coordinator's queue.
  void relay_in_fan_out(const lockstep::Publish& m,
                        const std::function<void(lockstep::Publish)>& emit) {
    MutexLock lk(net_mu_);
    relay_emit_ = &emit;
    net_->on_vehicle_message(m.topic, m.stamp, m.payload, m.type);
    relay_emit_ = nullptr;
  }

  void hold_link_goal_at(SimTime at, const std::string& vehicle) {
    link_holds_.emplace_back(at, vehicle);
    std::sort(link_holds_.begin(), link_holds_.end());
  }

  // The timeline (timeline.hpp): entries at their exact due simulated time.
  void make_timeline() {
    lockstep::Participant& e = *engine_;
    TimelineHooks th;
    th.publish = [this, &e](const std::string& topic, std::string payload,
                            const std::string& type) {
      if (net_) {
        network::Network::Sent sent;
        with_net(
            [&](network::Network& n) { sent = n.send_from_ground(e.now(), topic, payload, type); });
        if (sent.routed) {
          if (sent.delivery && topic == Session::goal_topic(sent.vehicle)) {
            hold_link_goal_at(*sent.delivery, sent.vehicle);
          }
          return;
        }
      }
      if (topic.ends_with("/navigate_to_pose/goal")) direct_goal_ = true;
      e.publish(topic, std::move(payload), type);
    };
    th.link = [this, &e](const std::string& vehicle, bool down) {
      if (net_) with_net([&](network::Network& n) { n.set_link_down(vehicle, down, e.now()); });
    };
    th.event = [this, &e](const std::string& name, const json& fields) {
      // Inside a delivery the loop's sim_now lags, and the engine's clock may be past the
      // message's stamp (a delivery read with the lookahead): at the stamp.
      event(name, fields, delivering_ != nullptr ? delivering_->stamp : e.now());
    };
    faults_ = std::make_unique<RunFaults>(static_cast<uint64_t>(plan().scenario.seed),
                                          fault_env(th.event));
    th.fault = [this](const scenario::TimelineEntry& en, bool start) {
      return faults_->on_action(en, start);
    };
    th.say = [this](const std::string& line) { say(line); };
    th.on_action = [this](const std::string& label, ActionEvent ae, SimTime t,
                          const std::string& st) {
      judge_->on_action(label, ae, t, st);
    };
    th.world_held = [this](bool held) {
      if (const Status s = session_->set_paused(held); !s.ok()) {
        warn(std::string(held ? "pause: " : "resume: ") + s.message());
      }
    };
    timeline_ = std::make_unique<Timeline>(plan(), std::move(th));
    if (abort_reason_) timeline_->cancel(*abort_reason_, e.now());
  }

  // The timeline's faults: the relay of the diverted world outputs, the stack kills (the
  // resource monitor, created later, follows a killed stack's process to its restart).
  FaultEnv fault_env(std::function<void(const std::string&, const json&)> on_event) {
    lockstep::Participant& e = *engine_;
    return FaultEnv{
        [&e](SimTime at, const std::string& topic, std::string payload, const std::string& type) {
          e.publish_at(at, topic, std::move(payload), type);
        },
        [&e] { return e.now(); },
        [this, &e](const std::string& v) {
          Result<std::string> killed = session_->kill_stack(v, e.now());
          if (killed.ok() && monitor_) monitor_->set_pid(stack_participant(v), 0);
          return killed;
        },
        [this](const std::string& v) {
          const Status restarted = session_->restart_stack(v);
          if (restarted.ok() && monitor_) {
            monitor_->set_pid(stack_participant(v), session_->stack_pid(v));
          }
          return restarted;
        },
        [this](const std::string& v) { return session_->stack_pid(v); },
        std::move(on_event)};
  }

  // The observer: what the judge watches (Judge::watch) and what the timeline's `when`
  // conditions read; the resource monitor.
  void make_observer() {
    ObserverOptions obo;
    obo.watch = plan().timeline_watch;
    obo.pose_topic = session_->pose_topic();
    obo.wall_now = wall_now_;
    obo.wall0 = wall0_;
    obo.stack_pid = [this](const std::string& v) { return session_->stack_pid(v); };
    // samples.jsonl lines carry the calendar wall clock (epoch seconds), as the seed lists.
    obo.write_line = [this](const json& j) {
      json line = j;
      line["wall"] = round3(static_cast<double>(utc_now_()) / 1e9);
      files_.samples.write(line);
    };
    // Resources come from the resource monitor (wall seconds, every process), not the observer
    // (Judge::make_observer leaves them out).
    observer_ = &judge_->make_observer(std::move(obo), [this](const assertions::Sample& s) {
      // The clock sample comes from the engine's loop (emit), the others from deliveries.
      timeline_->on_sample(s, s.sim, s.kind != Sample::Kind::kClock);
    });
    monitor_.emplace(resource_monitor_options(
        plan(), *session_, wall_now_, wall0_, utc_now_,
        [this](const json& j) {
          files_.resource_lines.write(j);
          if (recording_) {
            (void)recorder_->write_side(record::SideChannel::kResources,
                                        SimTime::from_ns(std::llround(j.value("sim", 0.0) * 1e9)),
                                        j);
          }
        },
        [this](const std::string& w) { warn(w); }));
  }

  // How a listener reads its topic; it decides whether the engine may read the topic late
  // (relay_with_lookahead). One that acts may publish or change the run at the delivery's instant
  // (the timeline, the faults, the network's link state), so the delivery holds the clock until
  // it has run. One that relays publishes nothing sooner than its links' least latency after the
  // stamp. One that observes judges and records at the message's stamp and never publishes into
  // the run.
  enum class Reading { kActs, kRelays, kObserves };
  struct Listener {
    Reading reading;
    std::function<void(const lockstep::Publish&)> callback;
  };

  // One subscription per topic, any number of listeners (the observer, the timeline).
  void listen(const std::string& topic, Reading reading,
              std::function<void(const lockstep::Publish&)> callback) {
    auto& l = listeners_[topic];
    l.push_back({reading, std::move(callback)});
    if (l.size() == 1) {
      engine_->subscribe(topic, [this, &l](const lockstep::Publish& m) {
        delivering_ = &m;
        for (const Listener& f : l) f.callback(m);
        delivering_ = nullptr;
      });
    }
  }

  // The observer only observes a topic unless what it reads there can change the run at once: a
  // timeline `when` on the topic (on the simulated time: any sample; on a pose: the pose topic)
  // starts an entry, and a failed assertion with on_fail: abort cancels the timeline.
  Reading observer_reading(const std::string& topic) const {
    for (const PlannedAssertion& a : plan().assertions) {
      if (a.spec.on_fail == scenario::OnFail::kAbort) return Reading::kActs;
    }
    for (const PlannedEntry& pe : plan().timeline) {
      if (!pe.entry->when) continue;
      if (pe.when_topic == topic || pe.entry->when->signal.metric == "sim_time") {
        return Reading::kActs;
      }
      if (!pe.when_vehicle.empty() && topic == session_->pose_topic()) return Reading::kActs;
    }
    return Reading::kObserves;
  }

  void listen_to_session() {
    for (const std::string& t : observer_->topics()) {
      listen(t, observer_reading(t),
             [this](const lockstep::Publish& m) { observer_->on_message(m); });
    }
    for (const std::string& t : relayed_outputs_) {
      listen(Session::raw_topic(session_->world_name(), t), Reading::kActs,
             [this, t](const lockstep::Publish& m) {
               faults_->on_raw(t, m.stamp, m.payload, m.type);
             });
    }
    observer_->start(engine_->now());
    if (net_) {
      for (const std::string& t : net_->uplink_topics()) {
        listen(t, Reading::kRelays, [this](const lockstep::Publish& m) {
          if (m.relayed) return;  // the coordinator ran the relay in its fan-out
          with_net([&](network::Network& n) {
            n.on_vehicle_message(m.topic, m.stamp, m.payload, m.type);
          });
        });
      }
      // Range and outage regions follow the vehicles' ground truth (without either, positions
      // change nothing and the poses are not parsed for the network).
      if (net_->uses_positions()) {
        listen(session_->pose_topic(), Reading::kActs, [this](const lockstep::Publish& m) {
          const auto poses = msgs::parse<ignition::msgs::Pose_V>(m.payload);
          if (!poses) return;
          for (const auto& p : poses->pose()) {
            if (vehicle_names_.count(p.name()) == 0) continue;
            with_net([&](network::Network& n) {
              n.on_pose(p.name(), p.position().x(), p.position().y(), m.stamp);
            });
          }
        });
      }
      with_net([&](network::Network& n) { n.start(engine_->now()); });
    }
    for (const auto& v : vehicle_names_) {
      // A vehicle behind a link answers the ground station through it.
      const std::string status_at_ground = net_ && net_->has_ground_link(v)
                                               ? net_->ground_topic(Session::status_topic(v))
                                               : Session::status_topic(v);
      listen(status_at_ground, Reading::kActs, [this](const lockstep::Publish& m) {
        const auto st = msgs::decode_nav_status(m.payload);
        if (!st) return;
        timeline_->on_nav_status(st->id, std::string(msgs::to_string(st->status)),
                                 final_status(st->status), st->reason, m.stamp);
      });
    }
    if (net_ && o_.relay_lookahead) relay_with_lookahead();
  }

  // A vehicle-side topic the engine reads only to relay it across a link, and maybe to observe
  // it, gets nothing published for it sooner than the link's least latency after the message:
  // its deliveries need not hold the clock until the engine has run them (docs/lockstep.md,
  // Lookahead). The observer still reads each message at its stamp, in the total order, before
  // the engine's wake past it; same deliveries and draws, same record; fewer stops of the world
  // at the engine.
  void relay_with_lookahead() {
    json read_late = json::object();  // topic: lookahead (s)
    json relayed_in_fan_out = json::array();
    for (const std::string& t : net_->uplink_topics()) {
      const auto l = listeners_.find(t);
      if (l == listeners_.end()) continue;
      const bool late_ok = std::all_of(l->second.begin(), l->second.end(), [](const Listener& r) {
        return r.reading != Reading::kActs;
      });
      if (!late_ok) continue;
      const Duration d = net_->min_delay(t);
      if (d > Duration::zero() && session_->set_engine_lookahead(t, d)) {
        read_late[t] = to_seconds(d);
        // The relay itself runs in the coordinator's fan-out: the engine is not woken for it,
        // and gets the message only for its other readers (the observer).
        const bool observed =
            std::any_of(l->second.begin(), l->second.end(),
                        [](const Listener& r) { return r.reading != Reading::kRelays; });
        lockstep::CoordinatorCore::Relay relay;
        relay.relay = [this](const lockstep::Publish& m,
                             const std::function<void(lockstep::Publish)>& emit) {
          relay_in_fan_out(m, emit);
        };
        relay.deliver = observed;
        if (session_->set_engine_relay(t, std::move(relay))) relayed_in_fan_out.push_back(t);
      }
    }
    // engine.log only: the recording is the same with and without the lookahead.
    if (!read_late.empty()) {
      files_.log.write({{"event", "clock.lookahead"},
                        {"wall_s", wall_s()},
                        {"sim_s", to_seconds(sim_now_)},
                        {"topics", read_late},
                        {"relayed_by_coordinator", relayed_in_fan_out},
                        {"level", "debug"}},
                       true);
    }
  }

  // --- run_loop ------------------------------------------------------------------------------

  bool lockstep_mode() const { return plan().scenario.time.mode == scenario::TimeMode::kLockstep; }

  void announce_clock_mode() {
    const scenario::Scenario& sc = plan().scenario;
    event("clock.mode", {{"mode", std::string(scenario::to_string(sc.time.mode))},
                         {"target_rtf", plan().target_rtf},
                         {"pace_cap_rtf", pace_},
                         {"tolerance", sc.time.tolerance}});
    if (lockstep_mode()) {
      for (const auto& v : plan().vehicles) {
        event("clock.agent", {{"vehicle", v.name}, {"participant", v.name + "_nav"}});
      }
      event("clock.agents", {{"vehicles", lockstep_stats_.vehicles}});
      event("clock.locked",
            {{"origin_sim_s", to_seconds(engine_->now())}, {"step_s", to_seconds(sc.time.step)}});
    }
  }

  // The engine wakes on a grid: every 100 ms (deadlines, the status line); in lockstep every
  // step_s, so the world advances step by step, each held until every vehicle has announced
  // past it (the stacks are regulating participants). While the timeline holds the world (a
  // sim.pause, between sim.steps) the engine does not announce past now(), so nothing advances,
  // and it polls the wall clock instead (the pause's duration, the metrics windows a
  // `when: {metric: rtf}` watches).
  void run_loop() {
    const scenario::Scenario& sc = plan().scenario;
    tick_ = lockstep_mode() ? std::min(sc.time.step, milliseconds(100)) : milliseconds(100);
    announce_clock_mode();
    clock_->start(engine_->now(), wall_now_());
    monitor_->set_sim(engine_->now());
    monitor_->start();
    while (true) {
      const SimTime now = engine_->now();
      sim_now_ = now;
      if (!observe(now)) break;
      const Step step = hold_or_go(now);
      if (step == Step::kStop) break;
      if (step == Step::kAgain) continue;
      if (ended()) break;
      if (!advance(now)) break;
    }
    end_sim_ = engine_->now();
    sim_now_ = end_sim_;
  }

  // What the engine does at each wake before deciding how far to go: the timeline's due
  // entries, the monitors, the metrics window. False when the run ends here.
  bool observe(SimTime now) {
    timeline_->advance(now, wall_now_());
    monitor_->set_sim(now);
    for (const Sample& rs : monitor_->take()) observer_->emit(rs);
    judge_->on_tick(now);
    if (net_) {
      std::string f;
      with_net([&](network::Network& n) { f = n.tick(now); });
      if (!f.empty()) {
        end_with(RunStatus::kError, f);
        return false;
      }
    }
    if (abort_reason_) return false;
    // A failed action ends the run before the timeline completed, even when it was the last
    // entry (it may have ended in a delivery): what is still pending is skipped, not judged on a
    // run cut short.
    if (!timeline_->failure().empty()) return false;
    poll_recorder();
    const SimTime w = wall_now_();
    clock_->set_paused_wall(session_->paused_wall());
    if (const auto win = clock_->observe(now, w, timeline_->held())) metrics_window(now, w, *win);
    return true;
  }

  // A closed one-second window: the clock sample, clock.jsonl, /fieldproof/metrics, the status
  // line.
  void metrics_window(SimTime now, SimTime w, const ClockWindow& win) {
    const scenario::Scenario& sc = plan().scenario;
    Sample s;
    s.kind = Sample::Kind::kClock;
    s.sim = now;
    s.wall_s = to_seconds(w - wall0_);
    s.rtf = win.rtf;
    observer_->emit(s);
    if (win.violation) {
      event("clock.drift",
            {{"rtf", round3(win.rtf)},
             {"target_rtf", plan().target_rtf},
             {"tolerance", sc.time.tolerance},
             {"level", sc.time.mode == scenario::TimeMode::kRealtime ? "warning" : "info"}});
    }
    files_.clock_lines.write({{"sim", to_seconds(now)},
                              {"wall", round3(s.wall_s)},
                              {"rtf", round3(s.rtf)},
                              {"drift_s", round3(win.drift_s)},
                              {"paused", win.held},
                              {"violation", win.violation}},
                             /*flush=*/true);
    if (recording_) record_metrics(now, s, win);
    if (o_.on_status) status_line(now, s);
  }

  void record_metrics(SimTime now, const Sample& s, const ClockWindow& win) {
    const scenario::Scenario& sc = plan().scenario;
    MetricsFrame mf;
    mf.observer = observer_->metrics();  // rates_hz, poses, lifecycle
    mf.sim = now;
    mf.wall_s = s.wall_s;
    mf.wall_epoch_s = static_cast<double>(utc_now_()) / 1e9;
    mf.mode = std::string(scenario::to_string(sc.time.mode));
    mf.rtf = s.rtf;
    mf.target_rtf = plan().target_rtf;
    mf.drift_s = win.drift_s;
    mf.paused = win.held;
    if (lockstep_mode()) {
      mf.lockstep = MetricsFrame::Lockstep{sc.time.step,
                                           win.held,
                                           timeline_->holds(),
                                           lockstep_stats_.vehicles,
                                           now,
                                           lockstep_stats_.max_wait};
    }
    mf.recording = MetricsFrame::Recording{recording_rel_, recorder_->bytes_written(),
                                           recorder_->message_count()};
    (void)recorder_->write_side(record::SideChannel::kMetrics, now, metrics_message(mf));
  }

  void status_line(SimTime now, const Sample& s) {
    size_t passed = 0;
    size_t failed = 0;
    for (const auto& r : resolved_order_) {
      passed += r.status == Verdict::kPassed;
      failed += r.status == Verdict::kFailed;
    }
    char buf[192];
    std::snprintf(buf, sizeof buf,
                  "sim %.1f s  wall %.1f s  RTF %.1f%s  assertions: %zu passed, %zu failed, "
                  "%zu pending",
                  to_seconds(now), s.wall_s, s.rtf, timeline_->held() ? " (paused)" : "", passed,
                  failed, plan().assertions.size() - passed - failed);
    o_.on_status(buf);
  }

  enum class Step { kGo, kAgain, kStop };

  // A goal sent this instant holds the world until its stack has answered.
  Step hold_or_go(SimTime now) {
    if (timeline_->take_hold_request() && !direct_goal_) {
      // Every goal of this instant crosses a link: it is held at its delivery instead.
      timeline_->release_holds();
    } else if (direct_goal_) {
      direct_goal_ = false;
      return hold_direct_goal(now);
    }
    if (!link_holds_.empty() && link_holds_.front().first <= now) return hold_link_goal(now);
    return Step::kGo;
  }

  // A goal was sent at `now`: hold the world there while the deliveries stamped now (the stack's
  // acceptance) arrive, nudging the grant by 1 ns (no physics step fits in it) until the stack
  // has answered, or 10 s of wall time (clock.hold.expired).
  Step hold_direct_goal(SimTime now) {
    const SimTime hold_wall = wall_now_();
    bool expired = false;
    while (true) {
      if (!engine_->sleep_until(engine_->now() + Duration::from_ns(1))) {
        end_with(RunStatus::kError, coordinator_reason(*session_, *engine_));
        return Step::kStop;
      }
      if (timeline_->holds_settled() || interrupted()) break;
      if (wall_now_() - hold_wall >= seconds(10)) {
        expired = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (expired) {
      timeline_->release_holds();
      event("clock.hold.expired", {{"t_s", to_seconds(now)}, {"level", "warning"}});
    } else {
      event("clock.hold",
            {{"t_s", to_seconds(now)}, {"released_by", "the entry's effect (goal answered)"}});
    }
    return Step::kAgain;
  }

  // A goal crossed a link and reached its stack now: hold the world here, as for a goal sent
  // directly, until the stack has answered on its side of the link (the answer then crosses
  // back at the link's delay), or 10 s of wall time.
  Step hold_link_goal(SimTime now) {
    const std::string v = link_holds_.front().second;
    const SimTime delivered = link_holds_.front().first;
    link_holds_.erase(link_holds_.begin());
    const SimTime hold_wall = wall_now_();
    bool expired = false;
    while (true) {
      std::optional<SimTime> seen;
      with_net([&](network::Network& n) { seen = n.last_seen(Session::status_topic(v)); });
      if ((seen && *seen >= delivered) || interrupted()) break;
      if (wall_now_() - hold_wall >= seconds(10)) {
        expired = true;
        break;
      }
      if (!engine_->sleep_until(engine_->now() + Duration::from_ns(1))) {
        end_with(RunStatus::kError, coordinator_reason(*session_, *engine_));
        return Step::kStop;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    event(expired ? "clock.hold.expired" : "clock.hold",
          {{"t_s", to_seconds(now)},
           {"vehicle", v},
           {"released_by", expired ? "10 s of wall time" : "the goal answered behind the link"},
           {"level", expired ? "warning" : "debug"}});
    return Step::kAgain;
  }

  bool interrupted() const { return o_.interrupt && o_.interrupt->load(); }

  // Whether the run ends at this wake: the timeline done, cancelled or failed, SIGINT, the wall
  // timeout, a failed participant.
  bool ended() {
    if (timeline_->cancelled()) return true;
    if (!timeline_->failure().empty()) return true;
    if (timeline_->complete()) {
      completed_ = true;
      return true;
    }
    if (interrupted()) {
      end_with(RunStatus::kInterrupted, "interrupted (SIGINT)");
      return true;
    }
    if (wall_now_() - ready_wall_ > plan().scenario.time.timeout) {
      end_with(RunStatus::kTimeout, "time.timeout_s: the timeline did not complete within " +
                                        format_seconds(plan().scenario.time.timeout) + " s");
      return true;
    }
    if (const std::string f = session_->failure(); !f.empty()) {
      end_with(RunStatus::kError, f);
      return true;
    }
    return false;
  }

  // The next wake: the next tick or the next due time, whichever comes first.
  SimTime next_wake(SimTime now) {
    SimTime next = SimTime::from_ns((now.ns() / tick_.ns() + 1) * tick_.ns());
    if (net_) with_net([&](network::Network& n) { next = std::min(next, n.next_due()); });
    if (!link_holds_.empty()) next = std::min(next, std::max(link_holds_.front().first, now));
    const SimTime due = timeline_->next_due(now);
    if (due < next) {
      next = due;
      if (lockstep_mode())
        event("clock.run_until", {{"sim_s", to_seconds(due)}, {"level", "debug"}});
    }
    // An assertion's deadline (within_s, a within_time's limit): 1 ns past it, so that the
    // samples stamped at the deadline count and the verdict is given at the deadline itself.
    if (const auto d = judge_->evaluator().next_deadline(); d && !d->is_infinite()) {
      const SimTime at = *d + nanoseconds(1);
      if (at > now && at < next) next = at;
    }
    return next;
  }

  // Sleeps the engine to its next wake; false when the coordinator ended the run.
  bool advance(SimTime now) {
    SimTime next;
    std::optional<SimTime> step_to;
    if (timeline_->held()) {
      step_to = timeline_->step_target();
      if (!step_to) {
        // Paused: the world stands still; poll the wall clock.
        poll_recorder();
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        return true;
      }
      // A sim.step: exactly there, a tick at a time, so that SIGINT, SIGTERM and time.timeout_s
      // (checked between ticks) are honoured inside a long step.
      next = std::min(*step_to, SimTime::from_ns((now.ns() / tick_.ns() + 1) * tick_.ns()));
      static_cast<void>(session_->set_paused(false));  // unreported, as it always was
    } else {
      next = next_wake(now);
    }
    const SimTime wait_from = wall_now_();
    const bool slept = engine_->sleep_until(next);
    if (timeline_->held() && (!step_to || !slept || engine_->now() >= *step_to)) {
      static_cast<void>(session_->set_paused(true));  // unreported, as it always was
    }
    lockstep_stats_.max_wait = std::max(lockstep_stats_.max_wait, wall_now_() - wait_from);
    if (!slept) {
      end_with(RunStatus::kError, coordinator_reason(*session_, *engine_));
      return false;
    }
    return true;
  }

  // --- wind_down -----------------------------------------------------------------------------

  void wind_down() {
    if (completed_ && !relayed_outputs_.empty()) {
      // The world's outputs stamped at the last instant reach the engine only once it announces
      // past it: one grant 1 ns further (no physics step fits in it) delivers them, the fault
      // relay republishes them at their stamp, and those are delivered (recorded, observed)
      // before that grant (docs/network.md, faults). The run still ends at end_sim.
      (void)engine_->sleep_until(end_sim_ + Duration::from_ns(1));
    }
    // The resource monitor's last round, judged with the rest before the verdicts are final.
    monitor_->set_sim(end_sim_);
    monitor_->stop();
    for (const Sample& rs : monitor_->take()) observer_->emit(rs);
    if (net_) {
      with_net([&](network::Network& n) {
        n.finish(end_sim_);
        network_record_ = n.summary(end_sim_);
      });
    }
    settle_pending();
    judge_->finish_kpis(end_sim_);
    timeline_wall_ = wall_now_() - ready_wall_;
    clock_->set_paused_wall(session_->paused_wall());
    clock_->finish(end_sim_, wall_now_(), timeline_->held_wall());
    count_lockstep();
    resources_summary_ = monitor_->summary();
    session_->stop();
    event("phase", {{"phase", "stopped"}});
  }

  // The assertions still pending: judged at the end of a completed timeline, skipped otherwise.
  void settle_pending() {
    const SimTime t_end = end_sim_;
    if (completed_) {
      judge_->settle(t_end, std::nullopt);
      event("timeline.complete", {});
    } else if (timeline_->cancelled()) {
      judge_->settle(t_end, judge_->evaluator().abort_skip_reason());
    } else if (!timeline_->failure().empty()) {
      // The pending assertions first: cancelling the rest of the timeline must not decide them.
      judge_->settle(t_end, "the run ended before the timeline completed (" +
                                timeline_->failure() + ")");
      timeline_->cancel(timeline_->failure(), end_sim_);
    } else {
      timeline_->abandon();
      judge_->settle(t_end,
                     "the run ended before the timeline completed (" + status_text() + ")");
    }
  }

  std::string status_text() const {
    return status_ ? std::string(report::to_string(*status_)) : std::string();
  }

  void count_lockstep() {
    const scenario::Scenario& sc = plan().scenario;
    lockstep_stats_.steps =
        sc.time.step.ns() > 0 ? static_cast<uint64_t>(end_sim_.ns() / sc.time.step.ns()) : 0;
    {
      MutexLock lk(clock_commands_mu_);
      lockstep_stats_.commands = timeline_->commands() + clock_commands_.size();
    }
    lockstep_stats_.holds = timeline_->holds();
    if (lockstep_mode() && status_ == RunStatus::kError &&
        (reason_.find("sent nothing for") != std::string::npos ||
         reason_.find("not acknowledged by") != std::string::npos)) {
      const SimTime step_at =
          SimTime::from_ns((end_sim_.ns() / sc.time.step.ns() + 1) * sc.time.step.ns());
      lockstep_stats_.timeout = {
          {"step", lockstep_stats_.steps + 1}, {"sim_s", to_seconds(step_at)}, {"reason", reason_}};
    }
  }

  // --- judge ---------------------------------------------------------------------------------

  void judge() {
    if (abort_reason_) {
      end_with(RunStatus::kFailed, *abort_reason_);
    } else if (!timeline_->failure().empty() && !status_) {
      std::string reason = timeline_->failure();
      if (const size_t n = judge_->evaluator().failed_count(); n > 0) {
        reason += " (and " + std::to_string(n) + " failed assertion" + (n > 1 ? "s" : "") + ")";
      }
      end_with(RunStatus::kFailed, reason);
    } else if (timeline_->cancelled()) {
      end_with(RunStatus::kFailed, abort_reason_.value_or("the timeline was cancelled"));
    } else if (completed_) {
      Judge::Judged j = judge_->judged();
      end_with(j.status, std::move(j.reason));
    }
    judge_clock();
  }

  // In realtime, a lost lock fails a passing run (on_drift: fail) or warns.
  void judge_clock() {
    const scenario::Scenario& sc = plan().scenario;
    if (sc.time.mode != scenario::TimeMode::kRealtime) return;
    if (!clock_->locked()) {
      char drift_text[32];
      std::snprintf(drift_text, sizeof drift_text, "%.3f", clock_->max_abs_drift_s());
      const std::string lost = std::string("real-time lock lost: the drift reached ") + drift_text +
                               " s, beyond max_drift_s " + format_seconds(sc.time.max_drift) + " s";
      event("clock.drifted",
            {{"max_abs_drift_s", round3(clock_->max_abs_drift_s())}, {"verdict", "drifted"}});
      if (sc.time.on_drift == scenario::OnDrift::kFail && status_ == RunStatus::kPassed) {
        end_with(RunStatus::kFailed, lost);
      } else {
        warn(lost + " (on_drift: warn)");
      }
    } else if (status_ && report::is_judged(*status_)) {
      event("clock.locked",
            {{"max_abs_drift_s", round3(clock_->max_abs_drift_s())}, {"verdict", "locked"}});
    }
  }

  // --- finish --------------------------------------------------------------------------------

  RunOutcome finish() {
    const std::vector<AssertionResult> results = judge_->results();
    const std::vector<assertions::KpiResult> kpi_results = judge_->kpi_results();
    write_kpis(results, kpi_results);
    if (!status_) end_with(RunStatus::kError, "the run ended without a status");
    const RunStatus st = *status_;
    out_.run_status = st;
    out_.status = std::string(report::to_string(st));
    out_.reason = reason_;
    out_.assertions = results;
    out_.exit_code = report::exit_code_of(st);
    out_.verdict = std::string(report::verdict_of(st));
    event("run.end", {{"status", out_.status},
                      {"verdict", out_.verdict},
                      {"reason", reason_},
                      {"exit_code", out_.exit_code}});
    // The recording is finalised on every ending (after the session stopped: no tap any more).
    uint64_t recorded_messages = 0;
    if (recording_) {
      const record::Status rs = recorder_->close(out_.status);
      recorded_messages = recorder_->message_count();
      if (!rs.ok()) log_warning("the recording could not be finalised: " + rs.to_string());
    }
    const report::RunRecord record = run_record(results, kpi_results, recorded_messages);
    if (const Status s = report::write_run_record(dir_, record); !s.ok()) {
      // Without its record the run's evidence cannot be read: that is the run's error.
      log_warning("run.json could not be written: " + s.to_string());
      out_.run_status = RunStatus::kError;
      out_.status = std::string(report::to_string(RunStatus::kError));
      out_.verdict = std::string(report::verdict_of(RunStatus::kError));
      out_.exit_code = report::exit_code_of(RunStatus::kError);
      out_.reason = "run.json could not be written: " + s.to_string();
    }
    files_.flush_all();
    if (o_.on_recorded) o_.on_recorded();
    write_reports_and_index();
    return out_;
  }

  // kpis.jsonl and /fieldproof/kpis (each collector, then the flat map).
  void write_kpis(const std::vector<AssertionResult>& results,
                  const std::vector<assertions::KpiResult>& kpi_results) {
    JsonLines kpi_lines;
    if (!kpi_lines.open(dir_ / "kpis.jsonl")) warn("kpis.jsonl: cannot be created");
    for (const json& line : assertions::kpi_lines(results, kpi_results)) {
      kpi_lines.write(line);
      if (recording_) (void)recorder_->write_side(record::SideChannel::kKpis, end_sim_, line);
    }
  }

  // engine.log only: the recording is closed by now.
  void log_warning(const std::string& message) {
    files_.log.write({{"event", "warning"}, {"wall_s", wall_s()}, {"message", message}}, true);
  }

  report::RunRecord run_record(const std::vector<AssertionResult>& results,
                               const std::vector<assertions::KpiResult>& kpi_results,
                               uint64_t recorded_messages) {
    const scenario::Scenario& sc = plan().scenario;
    report::RunRecord r;
    r.run_id = id_;
    r.scenario.name = sc.name;
    r.scenario.file = sc.file;
    r.scenario.digest = digest_;
    for (const auto& ov : o_.overrides) r.scenario.overrides[ov.path] = ov.value;
    r.world = report::RunRecord::World{sc.world.string(), plan().world_name, obstacles_};
    r.engine_version = FIELDPROOF_ENGINE_VERSION;
    r.status = *status_;
    r.reason = reason_;
    r.seed = sc.seed;
    r.seed_given = sc.seed_given;
    r.clock = clock_->record(lockstep_stats_);
    {
      MutexLock lk(clock_commands_mu_);
      r.clock["commands"] = clock_commands_;
    }
    r.timeline = timeline_ ? timeline_->to_json() : json::array();
    r.started_utc = started_utc_;
    r.ended_utc = format_utc(utc_now_());
    r.durations =
        report::RunRecord::Durations{round3(to_seconds(wall_now_() - wall0_)),
                                     round3(to_seconds(timeline_wall_)), to_seconds(end_sim_)};
    if (recording_) {
      r.recording =
          report::RunRecord::Recording{recording_rel_, recorded_messages, plan().record_topics};
      r.artefacts.push_back({recording_rel_, "mcap"});
    }
    for (const char* f :
         {"engine.log", "samples.jsonl", "resources.jsonl", "clock.jsonl", "assertions.jsonl",
          "kpis.jsonl", "report.json", "report.md", "junit.xml", "report.html"}) {
      r.artefacts.push_back({f, ""});
    }
    for (const auto& a : results) r.assertions.push_back(a.to_json());
    r.kpis = assertions::kpi_map(results, kpi_results);
    r.kpi_collectors = assertions::kpi_collectors_json(kpi_results);
    r.resources = resources_summary_;
    r.network = network_record_;
    for (const auto& v : plan().vehicles) r.vehicles.push_back({v.name, v.spawn_label, v.stack});
    return r;
  }

  // The reports, whatever the status; the run index; a passed run's stack logs.
  void write_reports_and_index() {
    if (const Status s = report::write_reports(dir_); !s.ok()) {
      log_warning("the reports could not be written: " + s.message());
    }
    const fs::path index_file =
        o_.index_file.empty() ? o_.runs_dir / "index.sqlite" : o_.index_file;
    if (const Status s = fleet::index_finished_run(index_file, dir_); !s.ok()) {
      log_warning("run index: " + s.message());
    }
    if (out_.run_status == RunStatus::kPassed && !o_.keep) {
      std::error_code ec;
      for (const auto& v : plan().vehicles) {
        if (v.setup.stack.kind == StackSpec::Kind::kProcess) {
          fs::remove(dir_ / "logs" / (v.name + ".log"), ec);
        }
      }
      fs::remove(dir_ / "logs", ec);  // only when empty
    }
  }

  // --- state, in the order it is built (destroyed in reverse: the session before what its
  // threads call, the recorder after the session's tap) ---------------------------------------

  const RunOptions& o_;
  fs::path* started_dir_;
  const WallNow wall_now_;
  const UtcNow utc_now_;
  RunOutcome out_;
  PlanResult pr_;  // built in place: the evaluator and the timeline keep references into it
  std::string id_;
  fs::path dir_;
  RunFiles files_;
  SimTime wall0_ = SimTime::zero();
  std::string started_utc_;
  std::string digest_;
  SimTime sim_now_ = SimTime::zero();
  std::optional<record::Recorder> recorder_;
  std::string recording_rel_;
  std::string recording_error_;
  bool recording_ = false;
  // The message whose listeners run (listen), while they do: the events they raise say so.
  const lockstep::Publish* delivering_ = nullptr;
  SimTime last_poll_ = SimTime::zero();
  double pace_ = 0;
  Mutex clock_commands_mu_;
  json clock_commands_ FIELDPROOF_GUARDED_BY(clock_commands_mu_) = json::array();
  std::optional<RunStatus> status_;
  std::string reason_;
  SimTime end_sim_ = SimTime::zero();
  Duration timeline_wall_ = Duration::zero();
  std::vector<AssertionResult> resolved_order_;
  std::optional<ClockMonitor> clock_;
  LockstepStats lockstep_stats_;
  std::unique_ptr<Timeline> timeline_;
  lockstep::Participant* engine_ = nullptr;  // set once the session started
  std::unique_ptr<network::Network> net_;    // the radio links (docs/network.md); with_net()
  Mutex net_mu_;
  std::vector<NetPublish> net_out_ FIELDPROOF_GUARDED_BY(net_mu_);
  // Set while a relay runs inside the coordinator's fan-out (relay_in_fan_out).
  const std::function<void(lockstep::Publish)>* relay_emit_ FIELDPROOF_GUARDED_BY(net_mu_) =
      nullptr;
  std::unique_ptr<RunFaults> faults_;        // the timeline's fault.* actions
  json network_record_;
  json resources_summary_ = {{"processes", json::array()}, {"samples", 0}, {"last", json::array()}};
  // The evaluator, the KPI collectors and the observer (judge.hpp), as re-judging builds them.
  std::optional<Judge> judge_;
  std::optional<std::string> abort_reason_;
  std::vector<std::string> relayed_outputs_;
  json obstacles_ = json::array();
  std::unique_ptr<Session> session_;
  SimTime ready_wall_ = SimTime::zero();
  std::set<std::string> vehicle_names_;
  // Goals sent this instant: to a vehicle directly (held here) or across a link (held at their
  // delivery, until the stack has answered on its side of the link).
  bool direct_goal_ = false;
  std::vector<std::pair<SimTime, std::string>> link_holds_;
  std::map<std::string, std::vector<Listener>> listeners_;
  Observer* observer_ = nullptr;  // judge_'s, once the session started
  std::optional<ResourceMonitor> monitor_;
  Duration tick_ = milliseconds(100);
  bool completed_ = false;
};

}  // namespace

Status check_run_id(const std::string& id) {
  if (id.empty()) return Status(StatusCode::kInvalidArgument, "a run id must not be empty");
  if (id.find('/') != std::string::npos || id.find('\\') != std::string::npos) {
    return Status(StatusCode::kInvalidArgument, "a run id must not contain a path separator");
  }
  if (id.find("..") != std::string::npos)
    return Status(StatusCode::kInvalidArgument, "a run id must not contain '..'");
  if (id[0] == '.') return Status(StatusCode::kInvalidArgument, "a run id must not start with '.'");
  for (const char c : id) {
    if (static_cast<unsigned char>(c) < 0x20)
      return Status(StatusCode::kInvalidArgument, "a run id must not contain control characters");
  }
  // It names a directory: one file name (NAME_MAX), or creating it fails with a filesystem error.
  if (id.size() > 200) {
    return Status(
        StatusCode::kInvalidArgument,
        "a run id is at most 200 bytes (it names a directory), got " + std::to_string(id.size()));
  }
  return {};
}

RunOutcome run_scenario(const RunOptions& o) {
  fs::path dir;
  try {
    return Run(o, &dir).execute();
  } catch (const std::exception& e) {
    // A bug, or an input no check caught: a stated failure (exit 1), never an abort. A run that
    // had started keeps a run.json saying so.
    RunOutcome out;
    out.run_status = RunStatus::kError;
    out.exit_code = report::exit_code_of(RunStatus::kError);
    out.status = std::string(report::to_string(RunStatus::kError));
    out.verdict = std::string(report::verdict_of(RunStatus::kError));
    out.reason = std::string("internal error: ") + e.what();
    out.run_dir = dir;
    out.run_id = dir.filename().string();
    std::error_code ec;
    if (!dir.empty() && !fs::exists(dir / "run.json", ec)) {
      const json run = {{"run_id", out.run_id},
                        {"scenario", {{"file", o.scenario_file.string()}}},
                        {"engine_version", FIELDPROOF_ENGINE_VERSION},
                        {"status", out.status},
                        {"verdict", out.verdict},
                        {"reason", out.reason},
                        {"exit_code", out.exit_code}};
      (void)report::write_file_atomically(
          dir / "run.json", run.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
    }
    return out;
  }
}

}  // namespace fieldproof::engine
