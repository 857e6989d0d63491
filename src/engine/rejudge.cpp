// Re-judging a recorded run (see rejudge.hpp).
#include "fieldproof/engine/rejudge.hpp"

#include <algorithm>
#include <fstream>
#include <set>
#include <system_error>

#include "fieldproof/engine/plan.hpp"
#include "fieldproof/engine/run.hpp"
#include "fieldproof/engine/session.hpp"
#include "fieldproof/msgs/ign.hpp"
#include "fieldproof/record/mcap_reader.hpp"

namespace fieldproof::engine {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr std::string_view kEvents = "/fieldproof/events";
constexpr std::string_view kMetrics = "/fieldproof/metrics";

double secs(SimTime t) { return static_cast<double>(t.ns()) / 1e9; }

// One recorded message, copied out of the reader.
struct Recorded {
  std::string topic;
  SimTime stamp;
  std::string data;
};

RejudgeOutcome invalid(RejudgeOutcome& out, std::string error) {
  out.exit_code = 2;
  out.status = "invalid";
  out.verdict = "INVALID";
  out.reason = error;
  out.errors.push_back(std::move(error));
  return out;
}

std::string free_run_id(const fs::path& runs_dir, const std::string& base) {
  for (int n = 1;; ++n) {
    std::string id = base + "-rejudge-" + std::to_string(n);
    if (!fs::exists(runs_dir / id)) return id;
  }
}

}  // namespace

json RejudgeOutcome::to_json() const {
  json as = json::array();
  for (const AssertionResult& a : assertions) as.push_back(a.to_json());
  return {{"mode", "rejudge"},      {"status", status},
          {"verdict", verdict},     {"reason", reason},
          {"exit_code", exit_code}, {"recording", recording.string()},
          {"notes", notes},         {"errors", errors},
          {"assertions", as},       {"run_dir", run_dir.string()}};
}

RejudgeOutcome rejudge(const RejudgeOptions& o) {
  RejudgeOutcome out;
  PlanOptions po;
  po.seed = o.seed;
  po.ugv_nav_exe = o.ugv_nav_exe;
  PlanResult planned = plan_run(o.scenario_file, po);
  if (!planned.plan) {
    (void)invalid(
        out, planned.errors.empty() ? "the scenario cannot be planned" : planned.errors.front());
    out.errors = planned.errors;
    return out;
  }
  const RunPlan& plan = *planned.plan;

  out.recording = o.recording;
  std::error_code ec;
  if (fs::is_directory(o.recording, ec)) {
    out.recording = o.recording / "recording" / plan.record_file;
    if (!fs::exists(out.recording)) out.recording = o.recording / "recording" / "recording.mcap";
  }
  record::McapReader reader;
  if (record::Status s = reader.open(out.recording.string()); !s.ok()) {
    return invalid(out, out.recording.string() + ": " + s.to_string() +
                            " (give a run directory or its recording.mcap)");
  }

  // The whole recording, in its order (log time, then recorded order).
  const std::string pose_topic = "/world/" + plan.world_name + "/pose/info";
  std::set<std::string> vehicles;
  std::map<std::string, std::string> contact_topics;  // topic -> vehicle
  for (const PlannedAssertion& a : plan.assertions) {
    vehicles.insert(a.watch.poses.begin(), a.watch.poses.end());
  }
  for (const PlannedVehicle& v : plan.vehicles) {
    vehicles.insert(v.name);
    contact_topics[Session::contacts_topic(v.name)] = v.name;
  }
  std::vector<Recorded> messages;
  std::set<std::string> seen;
  const record::Status read = reader.read_messages({}, [&](const record::MessageView& m) {
    const std::string& topic = m.channel->topic;
    seen.insert(topic);
    if (topic == pose_topic || topic == kEvents || topic == kMetrics ||
        contact_topics.count(topic)) {
      messages.push_back({topic, SimTime::from_ns(m.log_time_ns), std::string(m.data_view())});
    }
    return true;
  });
  if (!read.ok()) return invalid(out, out.recording.string() + ": " + read.to_string());
  for (const record::McapProblem& p : reader.problems()) {
    out.notes.push_back("the recording is damaged or cut short: at offset " +
                        std::to_string(p.offset) + ": " + p.message);
  }
  bool needs_poses = false;
  bool needs_contacts = false;
  for (const PlannedAssertion& a : plan.assertions) {
    needs_poses = needs_poses || !a.watch.poses.empty();
    needs_contacts = needs_contacts || !a.watch.contacts.empty();
  }
  if (needs_poses && !seen.count(pose_topic)) {
    out.notes.push_back("the recording has no " + pose_topic + ": pose assertions see no pose");
  }
  if (!seen.count(std::string(kEvents))) {
    out.notes.push_back("the recording has no /fieldproof/events: no timeline events");
  }
  (void)needs_contacts;

  std::vector<AssertionResult> resolved;
  Evaluator ev(plan.assertions, AssertionTypes::builtin(),
               [&](const AssertionResult& r) { resolved.push_back(r); });

  const bool lockstep_mode = plan.scenario.time.mode == scenario::TimeMode::kLockstep;
  const Duration tick =
      lockstep_mode ? std::min(plan.scenario.time.step, milliseconds(100)) : milliseconds(100);
  SimTime next_tick = SimTime::zero();
  std::optional<SimTime> completed;
  SimTime last = SimTime::zero();

  size_t i = 0;
  while (i < messages.size() && !completed) {
    const SimTime s = messages[i].stamp;
    size_t end = i;
    while (end < messages.size() && messages[end].stamp == s) ++end;
    // The live run ticks on its grid while the stream goes on; messages stamped at a grid
    // point are delivered before that point's tick.
    while (next_tick < s) {
      ev.on_tick(secs(next_tick));
      next_tick = next_tick + tick;
    }
    bool acted = false;
    std::vector<const Recorded*> metrics;
    for (size_t k = i; k < end; ++k) {
      const Recorded& m = messages[k];
      if (m.topic == pose_topic) {
        const auto poses = msgs::parse<ignition::msgs::Pose_V>(m.data);
        if (!poses) continue;
        for (const auto& p : poses->pose()) {
          if (!vehicles.count(p.name())) continue;
          Sample smp;
          smp.kind = Sample::Kind::kPose;
          smp.sim = s;
          smp.vehicle = p.name();
          smp.pose = {p.position().x(), p.position().y(), msgs::yaw_of(p.orientation())};
          ev.on_sample(smp, secs(s));
        }
      } else if (auto ct = contact_topics.find(m.topic); ct != contact_topics.end()) {
        const auto c = msgs::parse<ignition::msgs::Contacts>(m.data);
        if (!c) continue;
        Sample smp;
        smp.kind = Sample::Kind::kContact;
        smp.sim = s;
        smp.vehicle = ct->second;
        for (const auto& x : c->contact()) smp.contacts.push_back(x.collision2().name());
        ev.on_sample(smp, secs(s));
      } else if (m.topic == kEvents) {
        const json e = json::parse(m.data, nullptr, /*allow_exceptions=*/false);
        if (!e.is_object()) continue;
        const std::string name = e.value("event", "");
        if (name == "action.start") {
          ev.on_action(e.value("label", ""), ActionEvent::kStart, secs(s), "running");
          acted = true;
        } else if (name == "action.end") {
          ev.on_action(e.value("label", ""), ActionEvent::kEnd, secs(s), e.value("status", ""));
        } else if (name == "timeline.complete") {
          completed = s;
        }
      } else if (m.topic == kMetrics) {
        metrics.push_back(&m);
      }
    }
    if (next_tick == s || acted) {
      ev.on_tick(secs(s));
      if (next_tick == s) next_tick = next_tick + tick;
    }
    for (const Recorded* m : metrics) {
      const json j = json::parse(m->data, nullptr, false);
      if (!j.is_object()) continue;
      Sample smp;
      smp.kind = Sample::Kind::kClock;
      smp.sim = s;
      smp.wall_s = j.value("wall_s", 0.0);
      smp.rtf = j.value("rtf", 0.0);
      ev.on_sample(smp, secs(s));
    }
    last = s;
    i = end;
  }
  if (completed) {
    ev.finish(secs(*completed));
  } else {
    ev.skip_pending("the recorded run ended before the timeline completed", secs(last));
  }

  out.assertions = ev.results();
  const AssertionResult* f = ev.first_failed();
  if (f) {
    out.status = "failed";
    out.verdict = "FAIL";
    out.exit_code = 1;
    out.reason = "assertion " + f->name + " failed: " + f->reason;
    if (ev.failed_count() > 1) {
      out.reason += " (and " + std::to_string(ev.failed_count() - 1) + " more)";
    }
  } else {
    out.status = "passed";
    out.verdict = "PASS";
    out.reason = completed ? "every assertion passed"
                           : "no assertion failed (the recorded run ended early: the pending "
                             "ones were skipped)";
  }

  if (o.write_run_dir) {
    const std::string id =
        o.run_id.empty() ? free_run_id(o.runs_dir, plan.scenario.name) : o.run_id;
    if (const std::string bad = check_run_id(id); !bad.empty()) return invalid(out, bad);
    const fs::path dir = o.runs_dir / id;
    if (fs::exists(dir)) {
      return invalid(
          out, "run directory " + dir.string() + " exists (a run directory is never overwritten)");
    }
    fs::create_directories(dir, ec);
    if (ec) return invalid(out, "cannot create " + dir.string() + ": " + ec.message());
    out.run_dir = dir;
    fs::copy_file(o.scenario_file, dir / "scenario.yaml", ec);
    std::ofstream lines(dir / "assertions.jsonl");
    for (const AssertionResult& r : resolved) {
      json j = r.to_json();
      j["run_id"] = id;
      lines << j.dump() << "\n";
    }
    json run = out.to_json();
    run["run_id"] = id;
    run["scenario"] = plan.scenario.name;
    std::ofstream(dir / "run.json") << run.dump(2) << "\n";
  }
  return out;
}

}  // namespace fieldproof::engine
