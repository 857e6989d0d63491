#include "fieldproof/engine/run.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <thread>

#include <sodium.h>

#include "fieldproof/engine/clock_monitor.hpp"
#include "fieldproof/engine/observer.hpp"
#include "fieldproof/engine/timeline.hpp"
#include "engine/links.hpp"
#include "fieldproof/fleet/run_index.hpp"
#include "fieldproof/msgs/ign.hpp"
#include "fieldproof/msgs/navigation.hpp"
#include "fieldproof/network/network.hpp"
#include "fieldproof/record/recorder.hpp"
#include "fieldproof/report/report.hpp"
#include "fieldproof/time/system_clock.hpp"
#include "engine/metrics_message.hpp"
#include "engine/resources.hpp"
#include "fieldproof/engine/stack_host.hpp"
#include "fieldproof/util/mutex.hpp"

namespace fieldproof::engine {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

double secs(Duration d) { return static_cast<double>(d.ns()) / 1e9; }
double secs(SimTime t) { return static_cast<double>(t.ns()) / 1e9; }
double round3(double v) { return std::round(v * 1e3) / 1e3; }

// A JSON-lines file, written under a lock (warnings arrive from other threads).
class JsonLines {
 public:
  bool open(const fs::path& p) {
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
  std::ofstream out_;
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

}  // namespace

std::string check_run_id(const std::string& id) {
  if (id.empty()) return "a run id must not be empty";
  if (id.find('/') != std::string::npos || id.find('\\') != std::string::npos) {
    return "a run id must not contain a path separator";
  }
  if (id.find("..") != std::string::npos) return "a run id must not contain '..'";
  if (id[0] == '.') return "a run id must not start with '.'";
  for (const char c : id) {
    if (static_cast<unsigned char>(c) < 0x20) return "a run id must not contain control characters";
  }
  // It names a directory: one file name (NAME_MAX), or creating it fails with a filesystem error.
  if (id.size() > 200) {
    return "a run id is at most 200 bytes (it names a directory), got " +
           std::to_string(id.size());
  }
  return "";
}

static bool status_ok_for_clock(const std::string& status) {
  return status == "passed" || status == "failed";
}

namespace {

RunOutcome run_scenario_unguarded(const RunOptions& o, fs::path* started_dir) {
  RunOutcome out;
  const auto invalid = [&out](std::vector<std::string> errors) {
    out.exit_code = 2;
    out.status = "invalid";
    out.verdict = "INVALID";
    out.errors = std::move(errors);
    return out;
  };
  const WallNow wall_now = o.wall_now ? o.wall_now : SystemClock::wall_now();
  const UtcNow utc_now = o.utc_now ? o.utc_now : SystemClock::utc_now();

  PlanOptions po;
  po.seed = o.seed;
  po.tool_dir = o.tool_dir;
  po.overrides = o.overrides;
  PlanResult pr = plan_run(o.scenario_file, po);
  if (!pr.plan) return invalid(pr.errors);
  RunPlan& plan = *pr.plan;
  const scenario::Scenario& sc = plan.scenario;
  if (!plan.unsupported.empty()) {
    std::vector<std::string> e;
    for (const auto& u : plan.unsupported) e.push_back(sc.file + ": not supported yet: " + u);
    return invalid(e);
  }
  if (o.max_rtf && (*o.max_rtf < 0 || !std::isfinite(*o.max_rtf))) {
    return invalid({"--max-rtf must be >= 0 (0 = unpaced)"});
  }

  // The run directory: never overwritten.
  std::string id = o.run_id;
  if (!id.empty()) {
    if (const std::string e = check_run_id(id); !e.empty()) {
      return invalid({"--run-id '" + id + "': " + e});
    }
  }
  std::error_code ec;
  fs::create_directories(o.runs_dir, ec);
  if (ec)
    return invalid({o.runs_dir.string() + ": cannot create the runs directory: " + ec.message()});
  if (id.empty()) {
    std::string base;
    for (const char c : sc.name)
      base += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-') ? c : '_';
    if (base.empty()) base = "run";
    if (base.size() > 180) base.resize(180);  // a long scenario name still makes a file name
    for (int n = 1;; ++n) {
      const std::string candidate = base + "-" + std::to_string(n);
      if (!fs::exists(o.runs_dir / candidate, ec)) {
        id = candidate;
        break;
      }
    }
  }
  const fs::path dir = o.runs_dir / id;
  if (fs::exists(dir, ec)) {
    return invalid({dir.string() + ": the run directory exists already; a run directory is never "
                                   "overwritten (choose another --run-id)"});
  }
  if (!fs::create_directory(dir, ec) || ec) {
    return invalid({dir.string() + ": the run directory cannot be created: " +
                    (ec ? ec.message() : std::string("unknown error")) +
                    " (is --runs-dir " + o.runs_dir.string() + " writable?)"});
  }
  out.run_dir = dir;
  out.run_id = id;
  *started_dir = dir;
  fs::copy_file(o.scenario_file, dir / "scenario.yaml", ec);

  JsonLines log, samples, verdicts, clock_lines, resource_lines;
  log.open(dir / "engine.log");
  resource_lines.open(dir / "resources.jsonl");
  samples.open(dir / "samples.jsonl");
  verdicts.open(dir / "assertions.jsonl");
  clock_lines.open(dir / "clock.jsonl");
  const SimTime wall0 = wall_now();
  const std::string started_utc = format_utc(utc_now());
  const auto wall_s = [&] { return round3(secs(wall_now() - wall0)); };
  SimTime sim_now = SimTime::zero();
  const std::string digest = file_digest(o.scenario_file);

  // The recording: the coordinator's ordered stream (the session's tap) and the side channels.
  // Declared before the session so that it outlives the tap.
  record::RecorderOptions ro;
  ro.topics = plan.record_topics;
  for (const PlannedVehicle& v : plan.vehicles) ro.vehicles.push_back(v.name);
  ro.wall_now = wall_now;
  ro.run = {{"run_id", id},
            {"seed", std::to_string(sc.seed)},
            {"scenario", sc.name},
            {"scenario_digest", digest},
            {"engine_version", FIELDPROOF_ENGINE_VERSION}};
  record::Recorder recorder(ro);
  const std::string recording_rel = "recording/" + plan.record_file;
  std::string recording_error;
  bool recording = false;
  if (plan.record) {
    const record::Status st = recorder.open(dir / recording_rel);
    recording = st.ok();
    if (!st.ok()) recording_error = st.to_string();
  }
  SimTime last_poll = wall_now();
  const auto poll_recorder = [&] {
    if (!recording) return;
    const SimTime w = wall_now();
    if (w - last_poll < seconds(1)) return;
    last_poll = w;
    (void)recorder.poll();
  };

  const auto event = [&](const std::string& name, json fields = json::object()) {
    json j = {{"event", name}, {"wall_s", wall_s()}, {"sim_s", secs(sim_now)}};
    for (auto& [k, v] : fields.items()) j[k] = v;
    log.write(j, /*flush=*/true);  // followed live (tail -f, tests)
    if (recording) (void)recorder.event(sim_now, j);
  };
  const auto say = [&](const std::string& line) {
    if (o.on_event) o.on_event(line);
  };
  event("run.start", {{"run_id", id},
                      {"scenario", sc.name},
                      {"seed", sc.seed},
                      {"seed_given", sc.seed_given},
                      {"mode", std::string(scenario::to_string(sc.time.mode))}});
  for (const auto& w : pr.warnings) event("warning", {{"message", w}});
  if (!recording_error.empty()) {
    event("warning",
          {{"message", "outputs.record: cannot write " + recording_rel + ": " + recording_error}});
  }

  // The session.
  SessionOptions so;
  so.world_file = sc.world.string();
  so.seed = static_cast<uint64_t>(sc.seed);
  double pace = o.max_rtf ? *o.max_rtf : plan.target_rtf;
  if (!std::isfinite(pace)) pace = 0.0;
  so.max_rtf = pace;
  so.ack_timeout = sc.time.ack_timeout;
  so.run_dir = fs::absolute(dir).string();
  so.log_dir = so.run_dir;
  so.wall_now = wall_now;
  so.on_warning = [&](const std::string& w) { event("warning", {{"message", w}}); };
  for (const PlannedVehicle& v : plan.vehicles) so.vehicles.push_back(v.setup);
  so.map = plan.map;
  so.gps_denied = plan.gps_denied;
  so.relayed_outputs = faulted_topics(sc);  // the timeline's topic faults (docs/network.md)
  if (recording) {
    so.tap = [&recorder](const lockstep::Publish& p) { (void)recorder.on_message(p); };
  }
  // fieldproof clock: control.sock / control.json in the run directory while it runs; each
  // request in engine.log (clock.<op>) and run.json clock.commands.
  so.control_dir = so.run_dir;
  so.mode = std::string(scenario::to_string(sc.time.mode));
  so.interrupt = o.interrupt;
  // Stacks regulate in lockstep only; in sim and realtime they follow the published clock. An
  // unpaced run (--max-rtf 0) keeps them regulating: a follower cannot keep up with a world that
  // runs as fast as the machine allows.
  so.stacks_follow = sc.time.mode != scenario::TimeMode::kLockstep && pace > 0;
  Mutex clock_commands_mu;
  json clock_commands = json::array();
  so.on_clock_command = [&](const ClockCommand& c) {
    json j = {{"op", c.op},
              {"source", "fieldproof clock"},
              {"ok", c.ok},
              {"sim_s", secs(c.sim)},
              {"paused", c.paused}};
    if (c.op == "step") j["duration_s"] = secs(c.duration);
    if (!c.ok) j["error"] = c.error;
    event(c.ok ? "clock." + c.op : "clock.refused", j);
    j["wall_s"] = wall_s();
    MutexLock lk(clock_commands_mu);
    clock_commands.push_back(j);
  };

  std::string status;
  std::string reason;
  SimTime end_sim = SimTime::zero();
  Duration wall_elapsed = Duration::zero();
  Duration timeline_wall = Duration::zero();
  std::vector<AssertionResult> results;
  std::vector<AssertionResult> resolved_order;
  // The clock monitor (clock_monitor.hpp) and the lock-step counters.
  ClockMonitorOptions cmo;
  cmo.time = sc.time;
  cmo.target_rtf = plan.target_rtf;
  cmo.physics_step = plan.physics_step;
  cmo.pace = pace;
  ClockMonitor clock(cmo);
  LockstepStats lockstep_stats;
  for (const PlannedVehicle& v : plan.vehicles) lockstep_stats.vehicles.push_back(v.name);
  std::unique_ptr<Timeline> timeline;
  lockstep::Participant* engine_p = nullptr;  // set once the session started
  // The radio links (network section; docs/network.md): run.json network.
  std::unique_ptr<network::Network> net;
  std::unique_ptr<RunFaults> faults;  // the timeline's fault.* actions (docs/network.md)
  json network_record;
  // The resource monitor's record (run.json resources).
  json resources_summary = {{"processes", json::array()}, {"samples", 0}, {"last", json::array()}};

  Evaluator ev(plan.assertions, *plan.assertion_types, [&](const AssertionResult& r) {
    json j = r.to_json();
    j["run_id"] = id;
    verdicts.write(j);
    if (recording) (void)recorder.write_side(record::SideChannel::kAssertions, sim_now, j);
    event("assertion." + std::string(to_string(r.status)),
          {{"name", r.name}, {"type", r.type}, {"reason", r.reason}, {"t_s", round3(r.t_s)}});
    say("assertion " + r.name + " " + std::string(to_string(r.status)) + ": " + r.reason);
    resolved_order.push_back(r);
  });
  // on_fail: abort: the loop cancels the timeline the moment this is set.
  std::optional<std::string> abort_reason;
  ev.set_on_abort([&](const AssertionResult& r) {
    abort_reason = ev.abort_reason();
    event("timeline.abort", {{"assertion", r.name}, {"t_s", round3(r.t_s)}});
    if (timeline) timeline->cancel(*abort_reason, engine_p ? engine_p->now() : sim_now);
  });
  assertions::Collectors kpis(plan.kpis);

  std::string error;
  auto session = Session::create(so, &error);
  // The static obstacles, for the report's plot (read before start: the world thread owns it
  // afterwards).
  json obstacles = json::array();
  if (session) {
    for (const world::StaticShape& sh : session->world().static_shapes()) {
      json j = {{"name", sh.model}, {"x", sh.pose.x}, {"y", sh.pose.y}, {"yaw", sh.pose.yaw}};
      if (sh.type == world::ShapeType::kBox) {
        j["size_x"] = sh.size_x;
        j["size_y"] = sh.size_y;
      } else {
        j["radius"] = sh.radius;
      }
      obstacles.push_back(j);
    }
    // The same geometry for Foxglove's 3D panel (/fieldproof/scene).
    if (recording) (void)recorder.write_scene(SimTime::zero(), scene_shapes(*session));
  }
  if (!recording_error.empty()) {
    // Evidence is not lost quietly: a run asked to record that cannot is an error, not a pass.
    status = "error";
    reason = "outputs.record: cannot write " + recording_rel + ": " + recording_error;
  } else if (!session) {
    status = "error";
    reason = "the world could not be set up: " + error;
  } else if (event("phase", {{"phase", "starting"}}), !session->start(&error)) {
    status = "error";
    reason = "the stacks could not be started: " + error;
  }
  const auto t_of = [](SimTime s) { return secs(s); };

  if (status.empty()) {
    event("phase", {{"phase", "ready"}});
    const SimTime ready_wall = wall_now();
    lockstep::Participant& e = session->engine();
    std::set<std::string> vehicle_names;
    for (const auto& v : plan.vehicles) vehicle_names.insert(v.name);

    engine_p = &e;
    // Goals sent this instant: to a vehicle directly (held here, below) or across a link (held
    // at their delivery, until the stack has answered on its side of the link).
    bool direct_goal = false;
    std::vector<std::pair<SimTime, std::string>> link_holds;

    // The network: what the ground station (the engine) sends to a vehicle behind a link, and
    // what the vehicle sends up, crosses the link at the link's delay, or is lost.
    if (sc.network.given) {
      network::NetworkHooks nh;
      nh.publish_at = [&e](SimTime at, const std::string& topic, std::string payload,
                           const std::string& type) {
        e.publish_at(at, topic, std::move(payload), type);
      };
      nh.on_window = [&](const network::LinkWindow& w) {
        if (recording) (void)recorder.write_side(record::SideChannel::kNetwork, w.end,
                                                 network::to_json(w));
      };
      nh.on_change = [&](const std::string& link, const std::string& vehicle, bool up,
                         const std::string& cause, SimTime at) {
        json f = {{"link", link}, {"vehicle", vehicle}, {"t_s", secs(at)}, {"sim_s", secs(at)}};
        if (!up) f["cause"] = cause;
        event(up ? "link.up" : "link.down", f);
      };
      nh.on_retried_delivery = [&](const std::string& topic, const std::string& vehicle,
                                   SimTime at) {
        if (topic == Session::goal_topic(vehicle)) {
          link_holds.emplace_back(at, vehicle);
          std::sort(link_holds.begin(), link_holds.end());
        }
      };
      net = std::make_unique<network::Network>(network_config(sc), std::move(nh));
    }

    // The timeline (timeline.hpp): entries at their exact due simulated time.
    TimelineHooks th;
    th.publish = [&](const std::string& topic, std::string payload, const std::string& type) {
      if (net) {
        const network::Network::Sent sent = net->send_from_ground(e.now(), topic, payload, type);
        if (sent.routed) {
          if (sent.delivery && topic == Session::goal_topic(sent.vehicle)) {
            link_holds.emplace_back(*sent.delivery, sent.vehicle);
            std::sort(link_holds.begin(), link_holds.end());
          }
          return;
        }
      }
      if (topic.ends_with("/navigate_to_pose/goal")) direct_goal = true;
      e.publish(topic, std::move(payload), type);
    };
    th.link = [&](const std::string& vehicle, bool down) {
      if (net) net->set_link_down(vehicle, down, e.now());
    };
    th.event = [&](const std::string& name, const json& fields) {
      json f = fields;
      f["sim_s"] = secs(e.now());  // inside a delivery the loop's sim_now lags
      event(name, f);
    };
    // The timeline's faults: the relay of the diverted world outputs, the stack kills (the
    // resource monitor, created below, follows a killed stack's process to its restart).
    ResourceMonitor* monitor_p = nullptr;
    faults = std::make_unique<RunFaults>(
        static_cast<uint64_t>(sc.seed),
        FaultEnv{[&e](SimTime at, const std::string& topic, std::string payload,
                      const std::string& type) { e.publish_at(at, topic, std::move(payload), type); },
                 [&e] { return e.now(); },
                 [&](const std::string& v, std::string* detail) {
                   const bool killed = session->kill_stack(v, e.now(), detail);
                   if (killed && monitor_p) monitor_p->set_pid(stack_participant(v), 0);
                   return killed;
                 },
                 [&](const std::string& v, std::string* err) {
                   const bool started = session->restart_stack(v, err);
                   if (started && monitor_p) {
                     monitor_p->set_pid(stack_participant(v), session->stack_pid(v));
                   }
                   return started;
                 },
                 [&](const std::string& v) { return session->stack_pid(v); },
                 th.event});
    th.fault = [&faults](const scenario::TimelineEntry& en, bool start) {
      return faults->on_action(en, start);
    };
    th.say = say;
    th.on_action = [&](const std::string& label, ActionEvent ae, double t, const std::string& st) {
      ev.on_action(label, ae, t, st);
      kpis.on_action(label, ae, t, st);
    };
    th.world_held = [&](bool held) {
      if (const std::string err = session->set_paused(held); !err.empty()) {
        event("warning", {{"message", std::string(held ? "pause: " : "resume: ") + err}});
      }
    };
    timeline = std::make_unique<Timeline>(plan, std::move(th));
    if (abort_reason) timeline->cancel(*abort_reason, e.now());

    // One subscription per topic, any number of listeners (the observer, the timeline).
    std::map<std::string, std::vector<std::function<void(const lockstep::Publish&)>>> listeners;
    const auto listen = [&](const std::string& topic,
                            std::function<void(const lockstep::Publish&)> callback) {
      auto& l = listeners[topic];
      l.push_back(std::move(callback));
      if (l.size() == 1) {
        e.subscribe(topic, [&l](const lockstep::Publish& m) {
          for (const auto& f : l) f(m);
        });
      }
    };
    // The observer: what the planned assertions watch, and every vehicle's pose (the report's
    // plot and `fieldproof compare` read them from samples.jsonl).
    ObserverOptions obo;
    for (const PlannedAssertion& a : plan.assertions) obo.watch.merge(a.watch);
    for (const assertions::PlannedKpi& k : plan.kpis) obo.watch.merge(k.watch);
    obo.watch.poses.insert(vehicle_names.begin(), vehicle_names.end());
    obo.pose_topic = session->pose_topic();
    obo.wall_now = wall_now;
    obo.wall0 = wall0;
    obo.stack_pid = [&session](const std::string& v) { return session->stack_pid(v); };
    // samples.jsonl lines carry the calendar wall clock (epoch seconds), as the seed lists.
    obo.write_line = [&](const json& j) {
      json line = j;
      line["wall"] = round3(static_cast<double>(utc_now()) / 1e9);
      samples.write(line);
    };
    obo.watch.merge(plan.timeline_watch);
    obo.on_sample = [&](const assertions::Sample& s) {
      ev.on_sample(s, t_of(s.sim));
      kpis.on_sample(s, t_of(s.sim));
      // The clock sample comes from the engine's loop (emit), the others from deliveries.
      timeline->on_sample(s, s.sim, s.kind != Sample::Kind::kClock);
    };
    // Resources come from the resource monitor (wall seconds, every process), not the observer.
    obo.watch.resources.clear();
    Observer observer(std::move(obo));
    ResourceMonitor monitor(resource_monitor_options(
        plan, *session, wall_now, wall0, utc_now, [&](const json& j) {
          resource_lines.write(j);
          if (recording) {
            (void)recorder.write_side(record::SideChannel::kResources,
                                      SimTime::from_ns(std::llround(j.value("sim", 0.0) * 1e9)), j);
          }
        },
        [&](const std::string& w) { event("warning", {{"message", w}}); }));
    monitor_p = &monitor;
    for (const std::string& t : observer.topics()) {
      listen(t, [&observer](const lockstep::Publish& m) { observer.on_message(m); });
    }
    for (const std::string& t : so.relayed_outputs) {
      listen(Session::raw_topic(session->world_name(), t),
             [&faults, t](const lockstep::Publish& m) {
               faults->on_raw(t, m.stamp, m.payload, m.type);
             });
    }
    observer.start(e.now());
    if (net) {
      for (const std::string& t : net->uplink_topics()) {
        listen(t, [&net](const lockstep::Publish& m) {
          net->on_vehicle_message(m.topic, m.stamp, m.payload, m.type);
        });
      }
      // Range and outage regions follow the vehicles' ground truth.
      listen(session->pose_topic(), [&net, &vehicle_names](const lockstep::Publish& m) {
        const auto poses = msgs::parse<ignition::msgs::Pose_V>(m.payload);
        if (!poses) return;
        for (const auto& p : poses->pose()) {
          if (vehicle_names.count(p.name()) == 0) continue;
          net->on_pose(p.name(), p.position().x(), p.position().y(), m.stamp);
        }
      });
      net->start(e.now());
    }
    for (const auto& v : vehicle_names) {
      // A vehicle behind a link answers the ground station through it.
      const std::string status_at_ground =
          net && net->has_ground_link(v) ? net->ground_topic(Session::status_topic(v))
                                         : Session::status_topic(v);
      listen(status_at_ground, [&](const lockstep::Publish& m) {
        const auto st = msgs::decode_nav_status(m.payload);
        if (!st) return;
        timeline->on_nav_status(st->id, std::string(msgs::to_string(st->status)),
                                final_status(st->status), st->reason, m.stamp);
      });
    }

    // The engine wakes on a grid: every 100 ms (deadlines, the status line); in lockstep every
    // step_s, so the world advances step by step, each held until every vehicle has announced
    // past it (the stacks are regulating participants). While the timeline holds the world (a
    // sim.pause, between sim.steps) the engine does not announce past now(), so nothing
    // advances, and it polls the wall clock instead (the pause's duration, the metrics windows a
    // `when: {metric: rtf}` watches).
    const bool lockstep_mode = sc.time.mode == scenario::TimeMode::kLockstep;
    const Duration tick =
        lockstep_mode ? std::min(sc.time.step, milliseconds(100)) : milliseconds(100);
    event("clock.mode", {{"mode", std::string(scenario::to_string(sc.time.mode))},
                         {"target_rtf", plan.target_rtf},
                         {"pace_cap_rtf", pace},
                         {"tolerance", sc.time.tolerance}});
    if (lockstep_mode) {
      for (const auto& v : plan.vehicles) {
        event("clock.agent", {{"vehicle", v.name}, {"participant", v.name + "_nav"}});
      }
      event("clock.agents", {{"vehicles", lockstep_stats.vehicles}});
      event("clock.locked", {{"origin_sim_s", secs(e.now())}, {"step_s", secs(sc.time.step)}});
    }
    clock.start(e.now(), wall_now());
    monitor.set_sim(e.now());
    monitor.start();
    bool completed = false;
    while (true) {
      const SimTime now = e.now();
      sim_now = now;
      timeline->advance(now, wall_now());
      monitor.set_sim(now);
      for (const Sample& rs : monitor.take()) observer.emit(rs);
      ev.on_tick(t_of(now));
      kpis.on_tick(t_of(now));
      observer.on_tick(now);
      if (net) {
        if (const std::string f = net->tick(now); !f.empty()) {
          status = "error";
          reason = f;
          break;
        }
      }
      if (abort_reason) break;
      // A failed action ends the run (docs/assertions.md); it may have ended in a delivery.
      // A failed action ends the run before the timeline completed, even when it was the last
      // entry: what is still pending is skipped, not judged on a run cut short.
      if (!timeline->failure().empty()) break;
      poll_recorder();
      const SimTime w = wall_now();
      clock.set_paused_wall(session->paused_wall());
      if (const auto win = clock.observe(now, w, timeline->held())) {
        Sample s;
        s.kind = Sample::Kind::kClock;
        s.sim = now;
        s.wall_s = secs(w - wall0);
        s.rtf = win->rtf;
        observer.emit(s);
        const json drift = round3(win->drift_s);
        if (win->violation) {
          event("clock.drift",
                {{"rtf", round3(win->rtf)},
                 {"target_rtf", plan.target_rtf},
                 {"tolerance", sc.time.tolerance},
                 {"level", sc.time.mode == scenario::TimeMode::kRealtime ? "warning" : "info"}});
        }
        clock_lines.write({{"sim", secs(now)},
                           {"wall", round3(s.wall_s)},
                           {"rtf", round3(s.rtf)},
                           {"drift_s", drift},
                           {"paused", win->held},
                           {"violation", win->violation}},
                          /*flush=*/true);
        if (recording) {
          MetricsFrame mf;
          mf.observer = observer.metrics();  // rates_hz, poses, lifecycle
          mf.sim = now;
          mf.wall_s = s.wall_s;
          mf.wall_epoch_s = static_cast<double>(utc_now()) / 1e9;
          mf.mode = std::string(scenario::to_string(sc.time.mode));
          mf.rtf = s.rtf;
          mf.target_rtf = plan.target_rtf;
          mf.drift_s = win->drift_s;
          mf.paused = win->held;
          if (lockstep_mode) {
            mf.lockstep = MetricsFrame::Lockstep{sc.time.step,         win->held,
                                                 timeline->holds(),    lockstep_stats.vehicles,
                                                 now,                  lockstep_stats.max_wait};
          }
          mf.recording = MetricsFrame::Recording{recording_rel, recorder.bytes_written(),
                                                 recorder.message_count()};
          (void)recorder.write_side(record::SideChannel::kMetrics, now, metrics_message(mf));
        }
        if (o.on_status) {
          size_t passed = 0;
          size_t failed = 0;
          for (const auto& r : resolved_order) {
            passed += r.status == Verdict::kPassed;
            failed += r.status == Verdict::kFailed;
          }
          char buf[192];
          std::snprintf(buf, sizeof buf,
                        "sim %.1f s  wall %.1f s  RTF %.1f%s  assertions: %zu passed, %zu failed, "
                        "%zu pending",
                        secs(now), s.wall_s, s.rtf, timeline->held() ? " (paused)" : "", passed,
                        failed, plan.assertions.size() - passed - failed);
          o.on_status(buf);
        }
      }
      if (timeline->take_hold_request() && !direct_goal) {
        // Every goal of this instant crosses a link: it is held at its delivery instead.
        timeline->release_holds();
      } else if (direct_goal) {
        direct_goal = false;
        // A goal was sent at `now`: hold the world there while the deliveries stamped now (the
        // stack's acceptance) arrive, nudging the grant by 1 ns (no physics step fits in it)
        // until the stack has answered, or 10 s of wall time (clock.hold.expired).
        const SimTime hold_wall = wall_now();
        bool failed = false;
        bool expired = false;
        while (true) {
          if (!e.sleep_until(e.now() + Duration::from_ns(1))) {
            failed = true;
            break;
          }
          if (timeline->holds_settled() || (o.interrupt && o.interrupt->load())) break;
          if (wall_now() - hold_wall >= seconds(10)) {
            expired = true;
            break;
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        if (failed) {
          status = "error";
          const std::string f = session->failure();
          reason = !f.empty() ? f : "the coordinator ended the run: " + e.last_error();
          break;
        }
        if (expired) {
          timeline->release_holds();
          event("clock.hold.expired", {{"t_s", secs(now)}, {"level", "warning"}});
        } else {
          event("clock.hold",
                {{"t_s", secs(now)}, {"released_by", "the entry's effect (goal answered)"}});
        }
        continue;
      }
      if (!link_holds.empty() && link_holds.front().first <= now) {
        // A goal crossed a link and reached its stack now: hold the world here, as for a goal
        // sent directly, until the stack has answered on its side of the link (the answer then
        // crosses back at the link's delay), or 10 s of wall time.
        const std::string v = link_holds.front().second;
        const SimTime delivered = link_holds.front().first;
        link_holds.erase(link_holds.begin());
        const SimTime hold_wall = wall_now();
        bool failed = false;
        bool expired = false;
        while (true) {
          const auto seen = net->last_seen(Session::status_topic(v));
          if ((seen && *seen >= delivered) || (o.interrupt && o.interrupt->load())) break;
          if (wall_now() - hold_wall >= seconds(10)) {
            expired = true;
            break;
          }
          if (!e.sleep_until(e.now() + Duration::from_ns(1))) {
            failed = true;
            break;
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        if (failed) {
          status = "error";
          const std::string f = session->failure();
          reason = !f.empty() ? f : "the coordinator ended the run: " + e.last_error();
          break;
        }
        event(expired ? "clock.hold.expired" : "clock.hold",
              {{"t_s", secs(now)},
               {"vehicle", v},
               {"released_by", expired ? "10 s of wall time" : "the goal answered behind the link"},
               {"level", expired ? "warning" : "debug"}});
        continue;
      }
      if (timeline->cancelled()) break;
      // A failed action ends the run before the timeline completed, even when it was the last
      // entry: what is still pending is skipped, not judged on a run cut short.
      if (!timeline->failure().empty()) break;
      if (timeline->complete()) {
        completed = true;
        break;
      }
      if (o.interrupt && o.interrupt->load()) {
        status = "interrupted";
        reason = "interrupted (SIGINT)";
        break;
      }
      if (wall_now() - ready_wall > sc.time.timeout) {
        status = "timeout";
        reason = "time.timeout_s: the timeline did not complete within " +
                 format_seconds(sc.time.timeout) + " s";
        break;
      }
      if (const std::string f = session->failure(); !f.empty()) {
        status = "error";
        reason = f;
        break;
      }
      SimTime next;
      std::optional<SimTime> step_to;
      if (timeline->held()) {
        step_to = timeline->step_target();
        if (!step_to) {
          // Paused: the world stands still; poll the wall clock.
          poll_recorder();
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
          continue;
        }
        // A sim.step: exactly there, a tick at a time, so that SIGINT, SIGTERM and
        // time.timeout_s (checked above between ticks) are honoured inside a long step.
        next = std::min(*step_to, SimTime::from_ns((now.ns() / tick.ns() + 1) * tick.ns()));
        session->set_paused(false);
      } else {
        // Wake at the next tick or the next due time, whichever comes first.
        next = SimTime::from_ns((now.ns() / tick.ns() + 1) * tick.ns());
        if (net) next = std::min(next, net->next_due());
        if (!link_holds.empty()) next = std::min(next, std::max(link_holds.front().first, now));
        const SimTime due = timeline->next_due(now);
        if (due < next) {
          next = due;
          if (lockstep_mode) event("clock.run_until", {{"sim_s", secs(due)}, {"level", "debug"}});
        }
        // An assertion's deadline (within_s, a within_time's limit): 1 ns past it, so that the
        // samples stamped at the deadline count and the verdict is given at the deadline itself.
        if (const auto d = ev.next_deadline(); d && std::isfinite(*d) && *d < 9e9) {
          const SimTime at = SimTime::from_ns(std::llround(*d * 1e9) + 1);
          if (at > now && at < next) next = at;
        }
      }
      const SimTime wait_from = wall_now();
      const bool slept = e.sleep_until(next);
      if (timeline->held() && (!step_to || !slept || e.now() >= *step_to)) {
        session->set_paused(true);
      }
      lockstep_stats.max_wait = std::max(lockstep_stats.max_wait, wall_now() - wait_from);
      if (!slept) {
        status = "error";
        const std::string f = session->failure();
        reason = !f.empty() ? f : "the coordinator ended the run: " + e.last_error();
        break;
      }
    }
    end_sim = e.now();
    sim_now = end_sim;
    if (completed && !so.relayed_outputs.empty()) {
      // The world's outputs stamped at the last instant reach the engine only once it announces
      // past it: one grant 1 ns further (no physics step fits in it) delivers them, the fault
      // relay republishes them at their stamp, and those are delivered (recorded, observed) before
      // that grant (docs/network.md, faults). The run still ends at end_sim.
      (void)e.sleep_until(end_sim + Duration::from_ns(1));
    }
    // The resource monitor's last round, judged with the rest before the verdicts are final.
    monitor.set_sim(end_sim);
    monitor.stop();
    for (const Sample& rs : monitor.take()) observer.emit(rs);
    if (net) {
      net->finish(end_sim);
      network_record = net->summary(end_sim);
    }
    if (completed) {
      ev.finish(t_of(end_sim));
      event("timeline.complete", {});
    } else if (timeline->cancelled()) {
      ev.skip_pending(ev.abort_skip_reason(), t_of(end_sim));
    } else if (!timeline->failure().empty()) {
      // The pending assertions first: cancelling the rest of the timeline must not decide them.
      ev.skip_pending("the run ended before the timeline completed (" + timeline->failure() + ")",
                      t_of(end_sim));
      timeline->cancel(timeline->failure(), end_sim);
    } else {
      timeline->abandon();
      ev.skip_pending("the run ended before the timeline completed (" + status + ")",
                      t_of(end_sim));
    }
    kpis.finish(t_of(end_sim));
    wall_elapsed = wall_now() - ready_wall;
    clock.set_paused_wall(session->paused_wall());
    timeline_wall = wall_elapsed;
    clock.finish(end_sim, wall_now(), timeline->held_wall());
    lockstep_stats.steps =
        sc.time.step.ns() > 0 ? static_cast<uint64_t>(end_sim.ns() / sc.time.step.ns()) : 0;
    {
      MutexLock lk(clock_commands_mu);
      lockstep_stats.commands = timeline->commands() + clock_commands.size();
    }
    lockstep_stats.holds = timeline->holds();
    if (lockstep_mode && status == "error" &&
        (reason.find("sent nothing for") != std::string::npos ||
         reason.find("not acknowledged by") != std::string::npos)) {
      const SimTime step_at =
          SimTime::from_ns((end_sim.ns() / sc.time.step.ns() + 1) * sc.time.step.ns());
      lockstep_stats.timeout = {
          {"step", lockstep_stats.steps + 1}, {"sim_s", secs(step_at)}, {"reason", reason}};
    }
    resources_summary = monitor.summary();
    session->stop();
    event("phase", {{"phase", "stopped"}});
    if (abort_reason) {
      status = "failed";
      reason = *abort_reason;
    } else if (!timeline->failure().empty() && status.empty()) {
      status = "failed";
      reason = timeline->failure();
      if (const size_t n = ev.failed_count(); n > 0) {
        reason += " (and " + std::to_string(n) + " failed assertion" + (n > 1 ? "s" : "") + ")";
      }
    } else if (timeline->cancelled()) {
      status = "failed";
      reason = abort_reason.value_or("the timeline was cancelled");
    } else if (completed) {
      const AssertionResult* f = ev.first_failed();
      if (f) {
        status = "failed";
        reason = "assertion " + f->name + " failed: " + f->reason;
        const size_t more = ev.failed_count() - 1;
        if (more > 0) reason += " (and " + std::to_string(more) + " more)";
      } else {
        status = "passed";
        reason = "every assertion passed";
      }
    }
    if (sc.time.mode == scenario::TimeMode::kRealtime && !clock.locked()) {
      char drift_text[32];
      std::snprintf(drift_text, sizeof drift_text, "%.3f", clock.max_abs_drift_s());
      const std::string lost = std::string("real-time lock lost: the drift reached ") + drift_text +
                               " s, beyond max_drift_s " + format_seconds(sc.time.max_drift) + " s";
      event("clock.drifted",
            {{"max_abs_drift_s", round3(clock.max_abs_drift_s())}, {"verdict", "drifted"}});
      if (sc.time.on_drift == scenario::OnDrift::kFail && status == "passed") {
        status = "failed";
        reason = lost;
      } else {
        event("warning", {{"message", lost + " (on_drift: warn)"}});
      }
    } else if (sc.time.mode == scenario::TimeMode::kRealtime && status_ok_for_clock(status)) {
      event("clock.locked",
            {{"max_abs_drift_s", round3(clock.max_abs_drift_s())}, {"verdict", "locked"}});
    }
  } else {
    ev.skip_pending("the run did not start (" + reason + ")", 0.0);
    kpis.finish(0.0);
    if (session) session->stop();
  }
  results = ev.results();
  // The KPIs: kpis.jsonl and /fieldproof/kpis (each collector, then the flat map).
  const std::vector<assertions::KpiResult> kpi_results = kpis.results();
  {
    JsonLines kpi_lines;
    kpi_lines.open(dir / "kpis.jsonl");
    for (const json& line : assertions::kpi_lines(results, kpi_results)) {
      kpi_lines.write(line);
      if (recording) (void)recorder.write_side(record::SideChannel::kKpis, end_sim, line);
    }
  }

  out.status = status;
  out.reason = reason;
  out.assertions = results;
  if (status == "passed") {
    out.exit_code = 0;
    out.verdict = "PASS";
  } else if (status == "interrupted") {
    out.exit_code = 130;
    out.verdict = "INTERRUPTED";
  } else if (status == "failed") {
    out.exit_code = 1;
    out.verdict = "FAIL";
  } else {
    out.exit_code = 1;
    out.verdict = status == "timeout" ? "TIMEOUT" : "ERROR";
  }
  event("run.end", {{"status", status},
                    {"verdict", out.verdict},
                    {"reason", reason},
                    {"exit_code", out.exit_code}});
  // The recording is finalised on every ending (after the session stopped: no tap any more).
  uint64_t recorded_messages = 0;
  if (recording) {
    const record::Status st = recorder.close(status);
    recorded_messages = recorder.message_count();
    if (!st.ok()) {
      log.write({{"event", "warning"},
                 {"wall_s", wall_s()},
                 {"message", "the recording could not be finalised: " + st.to_string()}},
                true);
    }
  }

  // run.json
  json run;
  run["run_id"] = id;
  run["scenario"] = {{"name", sc.name}, {"file", sc.file}};
  if (!digest.empty()) run["scenario"]["digest"] = digest;
  for (const auto& ov : o.overrides) run["scenario"]["overrides"][ov.path] = ov.value;
  run["world"] = {{"file", sc.world.string()}, {"name", plan.world_name}, {"obstacles", obstacles}};
  run["engine_version"] = FIELDPROOF_ENGINE_VERSION;
  run["status"] = status;
  run["verdict"] = out.verdict;
  run["reason"] = reason;
  run["exit_code"] = out.exit_code;
  run["seed"] = sc.seed;
  run["seed_given"] = sc.seed_given;
  run["clock"] = clock.record(lockstep_stats);
  run["clock"]["commands"] = clock_commands;
  run["timeline"] = timeline ? timeline->to_json() : json::array();
  run["started_utc"] = started_utc;
  run["ended_utc"] = format_utc(utc_now());
  run["durations"] = {{"wall_s", round3(secs(wall_now() - wall0))},
                      {"timeline_s", round3(secs(timeline_wall))},
                      {"sim_s", secs(end_sim)}};
  json artefacts = json::array();
  if (recording) {
    run["recording"] = {
        {"path", recording_rel}, {"messages", recorded_messages}, {"topics", plan.record_topics}};
    artefacts.push_back({{"path", recording_rel}, {"kind", "mcap"}});
  }
  for (const char* f :
       {"engine.log", "samples.jsonl", "resources.jsonl", "clock.jsonl", "assertions.jsonl",
        "kpis.jsonl", "report.json", "report.md", "junit.xml", "report.html"}) {
    artefacts.push_back({{"path", f}});
  }
  run["artefacts"] = artefacts;
  json as = json::array();
  for (const auto& r : results) as.push_back(r.to_json());
  run["assertions"] = as;
  run["kpis"] = assertions::kpi_map(results, kpi_results);
  run["kpi_collectors"] = assertions::kpi_collectors_json(kpi_results);
  run["resources"] = resources_summary;
  if (!network_record.is_null()) run["network"] = network_record;
  run["vehicles"] = json::array();
  for (const auto& v : plan.vehicles) {
    run["vehicles"].push_back({{"name", v.name}, {"spawn", v.spawn_label}, {"stack", v.stack}});
  }
  std::ofstream(dir / "run.json") << run.dump(2) << '\n';
  clock_lines.flush();
  samples.flush();
  resource_lines.flush();
  verdicts.flush();
  // The reports, whatever the status.
  try {
    report::Report::load(dir).write_all(dir);
  } catch (const std::exception& e) {
    log.write({{"event", "warning"},
               {"wall_s", wall_s()},
               {"message", std::string("the reports could not be written: ") + e.what()}},
              true);
  }
  const fs::path index_file = o.index_file.empty() ? o.runs_dir / "index.sqlite" : o.index_file;
  if (const std::string e = fleet::index_finished_run(index_file, dir); !e.empty()) {
    log.write({{"event", "warning"}, {"wall_s", wall_s()}, {"message", "run index: " + e}}, true);
  }
  if (status == "passed" && !o.keep) {
    for (const auto& v : plan.vehicles) {
      if (v.setup.stack.kind == StackSpec::Kind::kProcess) {
        fs::remove(dir / "logs" / (v.name + ".log"), ec);
      }
    }
    fs::remove(dir / "logs", ec);  // only when empty
  }
  return out;
}

}  // namespace

RunOutcome run_scenario(const RunOptions& o) {
  fs::path dir;
  try {
    return run_scenario_unguarded(o, &dir);
  } catch (const std::exception& e) {
    // A bug, or an input no check caught: a stated failure (exit 1), never an abort. A run that
    // had started keeps a run.json saying so.
    RunOutcome out;
    out.exit_code = 1;
    out.status = "error";
    out.verdict = "ERROR";
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
      std::ofstream(dir / "run.json") << run.dump(2, ' ', false, json::error_handler_t::replace)
                                      << '\n';
    }
    return out;
  }
}

}  // namespace fieldproof::engine
