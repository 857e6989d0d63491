#include "fieldproof/engine/run.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <mutex>
#include <sstream>
#include <thread>

#include <sodium.h>

#include "fieldproof/engine/observer.hpp"
#include "fieldproof/msgs/ign.hpp"
#include "fieldproof/msgs/navigation.hpp"
#include "fieldproof/record/recorder.hpp"
#include "fieldproof/report/report.hpp"
#include "fieldproof/time/system_clock.hpp"

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
    std::lock_guard<std::mutex> lk(mu_);
    out_ << j.dump() << '\n';
    if (flush) out_.flush();
  }
  void flush() {
    std::lock_guard<std::mutex> lk(mu_);
    out_.flush();
  }

 private:
  std::mutex mu_;
  std::ofstream out_;
};

struct EntryState {
  bool started = false;
  bool ended = false;
  std::string status = "pending";  // pending, running, succeeded, aborted, rejected, ok, ...
  std::string detail;
  double started_s = -1;
  double ended_s = -1;
  std::optional<SimTime> stop_at;  // cmd_vel with duration_s: when the zero command goes
};

bool final_status(msgs::NavStatusCode c) {
  return c == msgs::NavStatusCode::kSucceeded || c == msgs::NavStatusCode::kAborted ||
         c == msgs::NavStatusCode::kRejected || c == msgs::NavStatusCode::kCanceled;
}

std::string twist_payload(double linear, double angular) {
  ignition::msgs::Twist t;
  t.mutable_linear()->set_x(linear);
  t.mutable_angular()->set_z(angular);
  return msgs::serialize(t);
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
  return "";
}

static bool status_ok_for_clock(const std::string& status) {
  return status == "passed" || status == "failed";
}

RunOutcome run_scenario(const RunOptions& o) {
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
  po.ugv_nav_exe = o.ugv_nav_exe;
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
    for (int n = 1;; ++n) {
      const std::string candidate = base + "-" + std::to_string(n);
      if (!fs::exists(o.runs_dir / candidate)) {
        id = candidate;
        break;
      }
    }
  }
  const fs::path dir = o.runs_dir / id;
  if (fs::exists(dir) || !fs::create_directory(dir, ec) || ec) {
    return invalid({dir.string() + ": the run directory exists already; a run directory is never "
                                   "overwritten (choose another --run-id)"});
  }
  out.run_dir = dir;
  out.run_id = id;
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
  so.ugv_nav_exe = o.ugv_nav_exe;
  so.run_dir = fs::absolute(dir).string();
  so.log_dir = so.run_dir;
  so.wall_now = wall_now;
  so.on_warning = [&](const std::string& w) { event("warning", {{"message", w}}); };
  for (const PlannedVehicle& v : plan.vehicles) so.vehicles.push_back(v.setup);
  if (recording) {
    so.tap = [&recorder](const lockstep::Publish& p) { (void)recorder.on_message(p); };
  }
  // fieldproof clock: control.sock / control.json in the run directory while it runs; each
  // request in engine.log (clock.<op>) and run.json clock.commands.
  so.control_dir = so.run_dir;
  so.mode = std::string(scenario::to_string(sc.time.mode));
  so.interrupt = o.interrupt;
  std::mutex clock_commands_mu;
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
    std::lock_guard<std::mutex> lk(clock_commands_mu);
    clock_commands.push_back(j);
  };

  std::vector<EntryState> entries(plan.timeline.size());
  std::map<std::string, size_t> goal_ids;  // goal id (the entry's label) -> entry
  std::string status;
  std::string reason;
  SimTime end_sim = SimTime::zero();
  Duration wall_elapsed = Duration::zero();
  Duration timeline_wall = Duration::zero();
  std::vector<AssertionResult> results;
  std::vector<AssertionResult> resolved_order;
  uint64_t steps = 0;
  // The clock monitor: one-second windows of the real-time factor, and in realtime mode the
  // drift of simulated against wall time (pauses left out).
  uint64_t rtf_windows = 0;
  uint64_t rtf_violations = 0;
  double rtf_min = std::numeric_limits<double>::infinity();
  double rtf_max = 0.0;
  double drift_s = 0.0;
  double max_abs_drift_s = 0.0;
  Duration paused_wall = Duration::zero();
  Duration max_wait = Duration::zero();
  // The resource monitor's record (run.json resources).
  uint64_t resource_samples = 0;
  std::map<std::string, json> last_resources;

  Evaluator ev(plan.assertions, AssertionTypes::builtin(), [&](const AssertionResult& r) {
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
  ev.set_on_abort([&](const AssertionResult&) { abort_reason = ev.abort_reason(); });
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
  }
  if (!session) {
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

    // Starting and ending entries. An entry with `after` starts the moment the entry it names
    // ends ok (inside the delivery that ended it, so at that exact simulated time), and is
    // skipped, with its own dependents, when that entry ended otherwise.
    std::function<void(size_t, SimTime)> start_entry;
    std::function<void(size_t, SimTime, const std::string&, const std::string&)> end_entry;
    std::function<void(size_t, SimTime, const std::string&)> skip_entry;
    const auto dependents = [&](size_t i) {
      std::vector<size_t> out;
      const scenario::TimelineEntry& ref = *plan.timeline[i].entry;
      for (size_t j = 0; j < plan.timeline.size(); ++j) {
        const auto& after = plan.timeline[j].entry->after;
        if (after && (*after == ref.label || *after == ref.name) && !entries[j].started &&
            !entries[j].ended) {
          out.push_back(j);
        }
      }
      return out;
    };
    skip_entry = [&](size_t i, SimTime now, const std::string& why) {
      EntryState& es = entries[i];
      es.ended = true;
      es.status = "skipped";
      es.detail = why;
      const std::string& label = plan.timeline[i].entry->label;
      event("action.skipped", {{"label", label}, {"detail", why}});
      for (size_t j : dependents(i)) skip_entry(j, now, label + " was skipped");
    };
    end_entry = [&](size_t i, SimTime now, const std::string& code, const std::string& detail) {
      EntryState& es = entries[i];
      const std::string& label = plan.timeline[i].entry->label;
      es.ended = true;
      es.status = code;
      es.detail = detail;
      es.ended_s = t_of(now);
      event("action.end", {{"label", label}, {"status", code}, {"detail", detail}});
      say("action " + label + " " + code + (detail.empty() ? "" : ": " + detail));
      ev.on_action(label, ActionEvent::kEnd, t_of(now), code);
      kpis.on_action(label, ActionEvent::kEnd, t_of(now), code);
      const bool ok = code == "ok" || code == "succeeded";
      for (size_t j : dependents(i)) {
        if (ok) {
          start_entry(j, now);
        } else {
          skip_entry(j, now, label + " ended " + code);
        }
      }
    };
    start_entry = [&](size_t i, SimTime now) {
      const PlannedEntry& pe = plan.timeline[i];
      EntryState& es = entries[i];
      const scenario::TimelineEntry& te = *pe.entry;
      es.started = true;
      es.status = "running";
      es.started_s = t_of(now);
      json params = json::object();
      if (te.action == "navigate_to_pose") {
        goal_ids[te.label] = i;
        e.publish(Session::goal_topic(te.vehicle),
                  msgs::encode(msgs::NavGoal{te.label, pe.goal->x, pe.goal->y, pe.goal->yaw}),
                  "fieldproof.msgs.NavigateToPoseGoal");
        params = {{"goal", pe.goal_label}};
      } else if (te.action == "cmd_vel") {
        const auto* lx = te.params.get("linear_x");
        const auto* az = te.params.get("angular_z");
        const double lin = lx ? lx->number : 0.0;
        const double ang = az ? az->number : 0.0;
        e.publish(Session::cmd_vel_topic(te.vehicle), twist_payload(lin, ang),
                  "ignition.msgs.Twist");
        params = {{"linear_x", lin}, {"angular_z", ang}};
        const auto* d = te.params.get("duration_s");
        if (d && d->kind == scenario::ParamValue::Kind::kDuration) {
          es.stop_at = now + d->duration;
        }
      }
      event("action.start", {{"label", te.label},
                             {"action", te.action},
                             {"vehicle", te.vehicle},
                             {"at_s", secs(te.at)},
                             {"params", params}});
      say("action " + te.label + " started");
      ev.on_action(te.label, ActionEvent::kStart, t_of(now), "running");
      kpis.on_action(te.label, ActionEvent::kStart, t_of(now), "running");
      if (te.action == "sim.pause") {
        // The engine holds the clock: nothing advances until the wall-clock duration has
        // passed (stacks' wall-clock watchdogs keep running, as with a paused Gazebo).
        const auto* d = te.params.get("duration_s");
        const Duration hold = d ? d->duration : Duration::zero();
        event("clock.pause", {{"label", te.label}, {"duration_s", secs(hold)}});
        if (const std::string err = session->set_paused(true); !err.empty()) {
          event("warning", {{"message", "pause: " + err}});
        }
        const SimTime until = wall_now() + hold;
        while (wall_now() < until && !(o.interrupt && o.interrupt->load())) {
          poll_recorder();
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        if (const std::string err = session->set_paused(false); !err.empty()) {
          event("warning", {{"message", "resume: " + err}});
        }
        event("clock.resume", {{"label", te.label}});
      }
      if ((te.action == "cmd_vel" && !es.stop_at) || te.action == "sim.pause" ||
          te.action == "sim.resume") {
        end_entry(i, now, "ok", "");
      }
    };

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
    obo.write_line = [&](const json& j) { samples.write(j); };
    obo.on_sample = [&](const assertions::Sample& s) {
      ev.on_sample(s, t_of(s.sim));
      kpis.on_sample(s, t_of(s.sim));
    };
    obo.on_resources = [&](const json& j) {
      resource_lines.write(j);
      ++resource_samples;
      last_resources[j.value("process", std::string())] = j;
      if (recording) (void)recorder.write_side(record::SideChannel::kResources, sim_now, j);
    };
    Observer observer(std::move(obo));
    for (const std::string& t : observer.topics()) {
      listen(t, [&observer](const lockstep::Publish& m) { observer.on_message(m); });
    }
    observer.start(e.now());
    for (const auto& v : vehicle_names) {
      listen(Session::status_topic(v), [&](const lockstep::Publish& m) {
        const auto st = msgs::decode_nav_status(m.payload);
        if (!st) return;
        auto it = goal_ids.find(st->id);
        if (it == goal_ids.end()) return;
        EntryState& es = entries[it->second];
        const std::string code(msgs::to_string(st->status));
        const std::string& label = plan.timeline[it->second].entry->label;
        event("action.status", {{"label", label}, {"status", code}, {"reason", st->reason}});
        if (es.ended || !final_status(st->status)) return;
        end_entry(it->second, m.stamp, code, st->reason);
      });
    }

    // The engine wakes on a grid: every 100 ms (deadlines, the status line); in lockstep every
    // step_s, so the world advances step by step, each held until every vehicle has announced
    // past it (the stacks are regulating participants).
    const bool lockstep_mode = sc.time.mode == scenario::TimeMode::kLockstep;
    const Duration tick =
        lockstep_mode ? std::min(sc.time.step, milliseconds(100)) : milliseconds(100);
    SimTime next_clock = SimTime::zero() + seconds(1);
    SimTime last_clock_sim = SimTime::zero();
    SimTime last_clock_wall = wall_now();
    bool completed = false;
    while (true) {
      const SimTime now = e.now();
      sim_now = now;
      if (abort_reason) break;  // an on_fail: abort assertion failed during the last delivery
      // Entries due now (the engine holds the clock at their due time while acting).
      for (size_t i = 0; i < plan.timeline.size(); ++i) {
        const PlannedEntry& pe = plan.timeline[i];
        EntryState& es = entries[i];
        const scenario::TimelineEntry& te = *pe.entry;
        if (!es.started && !es.ended && !te.after && SimTime::zero() + te.at <= now) {
          start_entry(i, now);
        }
        if (es.stop_at && !es.ended && *es.stop_at <= now) {
          e.publish(Session::cmd_vel_topic(te.vehicle), twist_payload(0, 0), "ignition.msgs.Twist");
          end_entry(i, now, "ok", "");
        }
      }
      ev.on_tick(t_of(now));
      kpis.on_tick(t_of(now));
      observer.on_tick(now);
      if (abort_reason) break;
      poll_recorder();
      if (now >= next_clock) {
        const SimTime w = wall_now();
        Sample s;
        s.kind = Sample::Kind::kClock;
        s.sim = now;
        s.wall_s = secs(w - wall0);
        // Paused wall time (sim.pause, fieldproof clock) is left out of the window.
        const Duration paused_now = session->paused_wall();
        const double dw = secs(w - last_clock_wall) - secs(paused_now - paused_wall);
        paused_wall = paused_now;
        s.rtf = dw > 0 ? secs(now - last_clock_sim) / dw : 0.0;
        if (dw > 0 && pace > 0) {
          ++rtf_windows;
          rtf_min = std::min(rtf_min, s.rtf);
          rtf_max = std::max(rtf_max, s.rtf);
          if (std::abs(s.rtf - plan.target_rtf) > sc.time.tolerance) {
            ++rtf_violations;
            if (sc.time.mode == scenario::TimeMode::kRealtime) {
              event("clock.drift", {{"rtf", round3(s.rtf)}, {"target_rtf", plan.target_rtf}});
            }
          }
        }
        if (sc.time.mode == scenario::TimeMode::kRealtime) {
          drift_s = secs(now) - (secs(w - ready_wall) - secs(paused_wall));
          max_abs_drift_s = std::max(max_abs_drift_s, std::abs(drift_s));
        }
        observer.emit(s);
        const json drift =
            sc.time.mode == scenario::TimeMode::kRealtime ? json(round3(drift_s)) : json();
        clock_lines.write({{"sim", secs(now)},
                           {"wall", round3(s.wall_s)},
                           {"rtf", round3(s.rtf)},
                           {"drift_s", drift}},
                          /*flush=*/true);
        if (recording) {
          (void)recorder.write_side(record::SideChannel::kMetrics, now,
                                    {{"sim_s", secs(now)},
                                     {"wall_s", round3(s.wall_s)},
                                     {"rtf", round3(s.rtf)},
                                     {"target_rtf", plan.target_rtf},
                                     {"drift_s", drift}});
        }
        if (o.on_status) {
          size_t passed = 0;
          size_t failed = 0;
          for (const auto& r : resolved_order) {
            passed += r.status == Verdict::kPassed;
            failed += r.status == Verdict::kFailed;
          }
          char buf[160];
          std::snprintf(
              buf, sizeof buf,
              "sim %.1f s  wall %.1f s  RTF %.1f  assertions: %zu passed, %zu failed, %zu pending",
              secs(now), s.wall_s, s.rtf, passed, failed, plan.assertions.size() - passed - failed);
          o.on_status(buf);
        }
        last_clock_sim = now;
        last_clock_wall = w;
        next_clock = now + seconds(1);
      }
      bool all_ended = true;
      for (const auto& es : entries) all_ended = all_ended && es.ended;
      if (all_ended) {
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
      // Wake at the next 100 ms tick or the next due time, whichever comes first.
      SimTime next = SimTime::from_ns((now.ns() / tick.ns() + 1) * tick.ns());
      for (size_t i = 0; i < plan.timeline.size(); ++i) {
        const EntryState& es = entries[i];
        const SimTime due = SimTime::zero() + plan.timeline[i].entry->at;
        if (!es.started && !es.ended && !plan.timeline[i].entry->after && due < next) next = due;
        if (es.stop_at && !es.ended && *es.stop_at < next) next = *es.stop_at;
      }
      const SimTime wait_from = wall_now();
      const bool slept = e.sleep_until(next);
      ++steps;
      max_wait = std::max(max_wait, wall_now() - wait_from);
      if (!slept) {
        status = "error";
        const std::string f = session->failure();
        reason = !f.empty() ? f : "the coordinator ended the run: " + e.last_error();
        break;
      }
    }
    end_sim = e.now();
    sim_now = end_sim;
    if (completed) {
      ev.finish(t_of(end_sim));
      event("timeline.complete", {});
    } else {
      for (size_t i = 0; i < entries.size(); ++i) {
        EntryState& es = entries[i];
        if (es.ended) continue;
        es.status = es.started ? "cancelled" : "skipped";
        if (abort_reason) {
          ev.on_action(plan.timeline[i].entry->label, ActionEvent::kEnd, t_of(end_sim), es.status);
          event("action." + es.status, {{"label", plan.timeline[i].entry->label},
                                        {"detail", "on_fail: abort, the timeline was cancelled"}});
        }
      }
      if (abort_reason) {
        status = "failed";
        reason = *abort_reason;
        ev.skip_pending(ev.abort_skip_reason(), t_of(end_sim));
      } else {
        ev.skip_pending("the run ended before the timeline completed (" + status + ")",
                        t_of(end_sim));
      }
    }
    kpis.finish(t_of(end_sim));
    wall_elapsed = wall_now() - ready_wall;
    paused_wall = session->paused_wall();
    timeline_wall = wall_elapsed;
    session->stop();
    event("phase", {{"phase", "stopped"}});
    if (completed) {
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
    if (sc.time.mode == scenario::TimeMode::kRealtime &&
        max_abs_drift_s > secs(sc.time.max_drift)) {
      char drift_text[32];
      std::snprintf(drift_text, sizeof drift_text, "%.3f", max_abs_drift_s);
      const std::string lost = std::string("real-time lock lost: the drift reached ") + drift_text +
                               " s, beyond max_drift_s " + format_seconds(sc.time.max_drift) + " s";
      event("clock.drifted", {{"max_abs_drift_s", round3(max_abs_drift_s)}});
      if (sc.time.on_drift == scenario::OnDrift::kFail && status == "passed") {
        status = "failed";
        reason = lost;
      } else {
        event("warning", {{"message", lost + " (on_drift: warn)"}});
      }
    } else if (sc.time.mode == scenario::TimeMode::kRealtime && status_ok_for_clock(status)) {
      event("clock.locked", {{"max_abs_drift_s", round3(max_abs_drift_s)}});
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
  run["world"] = {{"file", sc.world.string()}, {"name", plan.world_name}, {"obstacles", obstacles}};
  run["engine_version"] = FIELDPROOF_ENGINE_VERSION;
  run["status"] = status;
  run["verdict"] = out.verdict;
  run["reason"] = reason;
  run["exit_code"] = out.exit_code;
  run["seed"] = sc.seed;
  run["seed_given"] = sc.seed_given;
  const double wall_total = secs(wall_elapsed);
  run["clock"] = {{"mode", std::string(scenario::to_string(sc.time.mode))},
                  {"target_rtf", plan.target_rtf},
                  {"pace_cap_rtf", pace},
                  {"physics_step_s", secs(plan.physics_step)},
                  {"origin_sim_s", 0.0},
                  {"paused_s", round3(secs(paused_wall))},
                  {"sim_elapsed_s", secs(end_sim)},
                  {"wall_elapsed_s", round3(wall_total)},
                  {"rtf",
                   {{"mean", wall_total - secs(paused_wall) > 0
                                 ? round3(secs(end_sim) / (wall_total - secs(paused_wall)))
                                 : 0.0}}}};
  run["clock"]["tolerance"] = sc.time.tolerance;
  run["clock"]["rtf"]["windows"] = rtf_windows;
  run["clock"]["rtf"]["min"] = rtf_windows ? json(round3(rtf_min)) : json();
  run["clock"]["rtf"]["max"] = rtf_windows ? json(round3(rtf_max)) : json();
  run["clock"]["violations"] = rtf_violations;
  run["clock"]["commands"] = clock_commands;
  if (sc.time.mode == scenario::TimeMode::kRealtime) {
    run["clock"]["max_drift_s"] = secs(sc.time.max_drift);
    run["clock"]["on_drift"] = std::string(scenario::to_string(sc.time.on_drift));
    run["clock"]["drift_s"] = round3(drift_s);
    run["clock"]["max_abs_drift_s"] = round3(max_abs_drift_s);
    run["clock"]["verdict"] = max_abs_drift_s > secs(sc.time.max_drift) ? "drifted" : "locked";
  }
  if (sc.time.mode == scenario::TimeMode::kLockstep) {
    json vehicles = json::array();
    for (const auto& v : plan.vehicles) vehicles.push_back(v.name);
    run["clock"]["lockstep"] = {{"step_s", secs(sc.time.step)},
                                {"vehicles", vehicles},
                                {"origin_sim_s", 0.0},
                                {"steps", steps},
                                {"max_wait_s", round3(secs(max_wait))},
                                {"ack_timeout_s", secs(sc.time.ack_timeout)}};
  }
  json tl = json::array();
  for (size_t i = 0; i < plan.timeline.size(); ++i) {
    const auto& te = *plan.timeline[i].entry;
    const auto& es = entries[i];
    json j = {
        {"label", te.label}, {"action", te.action}, {"at_s", secs(te.at)}, {"status", es.status}};
    if (!te.vehicle.empty()) j["vehicle"] = te.vehicle;
    if (const auto& g = plan.timeline[i].goal) {
      j["goal"] = {
          {"name", plan.timeline[i].goal_label}, {"x", g->x}, {"y", g->y}, {"yaw", g->yaw}};
    }
    if (es.started_s >= 0) j["started_s"] = es.started_s;
    if (es.ended_s >= 0) j["ended_s"] = es.ended_s;
    if (!es.detail.empty()) j["detail"] = es.detail;
    tl.push_back(j);
  }
  run["timeline"] = tl;
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
  run["resources"] = {
      {"processes", json::array()}, {"samples", resource_samples}, {"last", json::array()}};
  for (const auto& [process, last] : last_resources) {
    run["resources"]["processes"].push_back(process);
    run["resources"]["last"].push_back(last);
  }
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
  if (status == "passed" && !o.keep) {
    for (const auto& v : plan.vehicles) {
      if (v.setup.process) fs::remove(dir / (v.name + "_nav.log"), ec);
    }
  }
  return out;
}

}  // namespace fieldproof::engine
