// Re-judging a recorded run (see rejudge.hpp).
#include "fieldproof/engine/rejudge.hpp"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/dynamic_message.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <memory>
#include <set>
#include <system_error>

#include "fieldproof/assertions/kpis.hpp"
#include "fieldproof/engine/observer.hpp"
#include "fieldproof/engine/plan.hpp"
#include "fieldproof/engine/run.hpp"
#include "fieldproof/msgs/ign.hpp"
#include "fieldproof/record/mcap_reader.hpp"
#include "fieldproof/report/report.hpp"
#include "fieldproof/report/run_record.hpp"
#include "fieldproof/time/seconds.hpp"
#include "fieldproof/util/input_file.hpp"

namespace fieldproof::engine {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr std::string_view kEvents = "/fieldproof/events";
constexpr std::string_view kMetrics = "/fieldproof/metrics";
constexpr std::string_view kResources = "/fieldproof/resources";
constexpr std::string_view kVehiclePoses = "/fieldproof/vehicles/";

// One recorded message, copied out of the reader.
struct Recorded {
  std::string topic;
  SimTime stamp;
  std::string data;
  std::string type;  // the bus type (the channel's "type" metadata, else the schema name)
  uint64_t sequence = 0;
  std::string vehicle;  // a /fieldproof/vehicles/<v>/pose message: <v>
};

// The recorder's /fieldproof/vehicles/<v>/pose channels (foxglove.PoseInFrame), read through the
// FileDescriptorSet recorded as their schema: a pose for when /world/<w>/pose/info was not
// recorded (an outputs.topics allow-list without it).
class VehiclePoseDecoder {
 public:
  // False when the schema does not describe a message with pose.position / pose.orientation.
  bool init(const record::Schema& schema) {
    google::protobuf::FileDescriptorSet fds;
    if (!fds.ParseFromString(schema.data)) return false;
    for (const auto& f : fds.file()) (void)pool_.BuildFile(f);
    const auto* d = pool_.FindMessageTypeByName(schema.name);
    if (d == nullptr) return false;
    prototype_ = factory_.GetPrototype(d);
    return prototype_ != nullptr;
  }
  // x, y, yaw; nullopt when the payload does not decode.
  std::optional<world::Pose2D> decode(const std::string& data) const {
    std::unique_ptr<google::protobuf::Message> m(prototype_->New());
    if (!m->ParseFromString(data)) return std::nullopt;
    const google::protobuf::Message* pose = child(*m, "pose");
    const google::protobuf::Message* pos = pose ? child(*pose, "position") : nullptr;
    const google::protobuf::Message* q = pose ? child(*pose, "orientation") : nullptr;
    if (pos == nullptr || q == nullptr) return std::nullopt;
    ignition::msgs::Quaternion iq;
    iq.set_x(number(*q, "x"));
    iq.set_y(number(*q, "y"));
    iq.set_z(number(*q, "z"));
    iq.set_w(number(*q, "w"));
    return world::Pose2D{number(*pos, "x"), number(*pos, "y"), msgs::yaw_of(iq)};
  }

 private:
  static const google::protobuf::Message* child(const google::protobuf::Message& m,
                                                const char* name) {
    const auto* f = m.GetDescriptor()->FindFieldByName(name);
    if (f == nullptr || f->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) {
      return nullptr;
    }
    return &m.GetReflection()->GetMessage(m, f);
  }
  static double number(const google::protobuf::Message& m, const char* name) {
    const auto* f = m.GetDescriptor()->FindFieldByName(name);
    if (f == nullptr || f->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_DOUBLE) {
      return 0.0;
    }
    return m.GetReflection()->GetDouble(m, f);
  }
  google::protobuf::DescriptorPool pool_;
  google::protobuf::DynamicMessageFactory factory_{&pool_};
  const google::protobuf::Message* prototype_ = nullptr;
};

// status, verdict and exit code from the one table (report/run_record.hpp).
void set_status(RejudgeOutcome& out, report::RunStatus s) {
  out.status = std::string(report::to_string(s));
  out.verdict = std::string(report::verdict_of(s));
  out.exit_code = report::exit_code_of(s);
}

RejudgeOutcome invalid(RejudgeOutcome& out, std::string error) {
  set_status(out, report::RunStatus::kInvalid);
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
  return {{"mode", "rejudge"},
          {"status", status},
          {"verdict", verdict},
          {"reason", reason},
          {"exit_code", exit_code},
          {"recording", recording.string()},
          {"notes", notes},
          {"errors", errors},
          {"assertions", as},
          {"run_dir", run_dir.string()},
          {"kpis", assertions::kpi_map(assertions, kpi_collectors)},
          {"kpi_collectors", assertions::kpi_collectors_json(kpi_collectors)}};
}

RejudgeOutcome rejudge(const RejudgeOptions& o) {
  RejudgeOutcome out;
  PlanOptions po;
  po.seed = o.seed;
  po.tool_dir = o.tool_dir;
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
  json live_run;  // the recorded run's run.json, when a run directory was given
  if (fs::is_directory(o.recording, ec)) {
    const fs::path file = o.recording / "run.json";
    if (fs::exists(fs::symlink_status(file, ec))) {
      const util::InputFile in = util::read_input_file(file, util::kMaxRunFileBytes, "run.json");
      if (!in.ok()) return invalid(out, in.error);
      live_run = json::parse(in.text, nullptr, /*allow_exceptions=*/false);
    }
    if (live_run.is_discarded()) live_run = json();
  }
  record::McapReader reader;
  if (record::Status s = reader.open(out.recording.string()); !s.ok()) {
    return invalid(out, out.recording.string() + ": " + s.to_string() +
                            " (give a run directory or its recording.mcap)");
  }

  // The scenario's KPI collectors, fed the same stream as the evaluator.
  std::vector<assertions::PlannedKpi> planned_kpis;
  try {
    planned_kpis =
        assertions::plan_kpis(plan.scenario, assertions::PlanContext{plan.scenario, plan.frames});
  } catch (const assertions::PlanError& e) {
    return invalid(out, o.scenario_file.string() + ": " + e.path() + ": " + e.what());
  }
  assertions::Collectors collectors(planned_kpis);

  // What the plan watches, observed by the live run's Observer. Resources cannot be measured
  // after the fact: they come from the recorded /fieldproof/resources lines instead.
  assertions::Watch watch;
  for (const PlannedAssertion& a : plan.assertions) watch.merge(a.watch);
  for (const assertions::PlannedKpi& k : planned_kpis) watch.merge(k.watch);
  for (const PlannedVehicle& v : plan.vehicles) watch.poses.insert(v.name);  // as live
  const std::set<std::string> resource_vehicles = watch.resources;
  watch.resources.clear();
  const std::string pose_topic = "/world/" + plan.world_name + "/pose/info";

  std::vector<AssertionResult> resolved;
  std::vector<json> sample_lines;
  Evaluator ev(plan.assertions, *plan.assertion_types,
               [&](const AssertionResult& r) { resolved.push_back(r); });
  ObserverOptions oo;
  oo.watch = watch;
  oo.pose_topic = pose_topic;
  oo.wall_now = [] { return SimTime::zero(); };
  oo.write_line = [&](const json& j) { sample_lines.push_back(j); };
  oo.on_sample = [&](const Sample& smp) {
    ev.on_sample(smp, smp.sim);
    collectors.on_sample(smp, smp.sim);
  };
  Observer observer(std::move(oo));
  const std::vector<std::string> observed_list = observer.topics();
  const std::set<std::string> observed(observed_list.begin(), observed_list.end());

  // The whole recording, in its order (log time, then recorded order).
  std::vector<Recorded> messages;
  std::set<std::string> seen;
  std::map<uint16_t, std::unique_ptr<VehiclePoseDecoder>> pose_decoders;  // by schema id
  std::map<std::string, const VehiclePoseDecoder*> decoder_of;            // by topic
  const record::Status read = reader.read_messages({}, [&](const record::MessageView& m) {
    const std::string& topic = m.channel->topic;
    seen.insert(topic);
    if (auto v = m.channel->metadata.find("vehicle"); v != m.channel->metadata.end() &&
                                                      topic.rfind(kVehiclePoses, 0) == 0 &&
                                                      m.schema != nullptr) {
      if (!pose_decoders.count(m.schema->id)) {
        auto d = std::make_unique<VehiclePoseDecoder>();
        if (!d->init(*m.schema)) d.reset();
        pose_decoders.emplace(m.schema->id, std::move(d));
      }
      if (pose_decoders[m.schema->id]) {
        messages.push_back({topic, SimTime::from_ns(m.log_time_ns), std::string(m.data_view()),
                            m.schema->name, m.sequence, v->second});
        decoder_of.emplace(topic, pose_decoders[m.schema->id].get());
      }
      return true;
    }
    if (observed.count(topic) || topic == kEvents || topic == kMetrics || topic == kResources) {
      std::string type;
      if (auto it = m.channel->metadata.find("type"); it != m.channel->metadata.end()) {
        type = it->second;
      } else if (m.schema != nullptr) {
        type = m.schema->name;
      }
      messages.push_back({topic, SimTime::from_ns(m.log_time_ns), std::string(m.data_view()),
                          std::move(type), m.sequence, ""});
    }
    return true;
  });
  if (!read.ok()) return invalid(out, out.recording.string() + ": " + read.to_string());
  for (const record::McapProblem& p : reader.problems()) {
    out.notes.push_back("the recording is damaged or cut short: at offset " +
                        std::to_string(p.offset) + ": " + p.message);
  }
  // Without the world's pose topic, the vehicles' poses come from the recorder's channels.
  const bool poses_from_vehicles =
      observed.count(pose_topic) && !seen.count(pose_topic) && !decoder_of.empty();
  if (poses_from_vehicles) {
    out.notes.push_back("the recording has no " + pose_topic +
                        ": vehicle poses are read from /fieldproof/vehicles/<v>/pose");
  }
  for (const std::string& t : observed) {
    if (t == pose_topic && poses_from_vehicles) continue;
    if (!seen.count(t)) {
      out.notes.push_back("the recording has no " + t + ": what watches it sees nothing");
    }
  }
  // An assertion that needs a topic the recording lacks is skipped, saying so: judged on nothing
  // it would pass vacuously (a no_collision without contacts "touched nothing"). Lacking means
  // left out by outputs.topics: a recorded topic may have no message at all (contacts are
  // published only while something touches).
  const std::set<std::string> allowed(plan.record_topics.begin(), plan.record_topics.end());
  const auto left_out = [&](const std::string& t) { return !allowed.empty() && !allowed.count(t); };
  for (const PlannedAssertion& a : plan.assertions) {
    ObserverOptions ao;
    ao.watch = a.watch;
    ao.watch.resources.clear();
    ao.pose_topic = pose_topic;
    std::string missing;
    for (const std::string& t : Observer(std::move(ao)).topics()) {
      if (seen.count(t) || (t == pose_topic && poses_from_vehicles) || !left_out(t)) continue;
      missing += (missing.empty() ? "" : ", ") + t;
    }
    if (missing.empty()) continue;
    ev.skip(a.spec.name,
            "the recording has no " + missing + " (the topic was not recorded): " + a.spec.name +
                " cannot be judged on it",
            SimTime::zero());
  }
  if (!seen.count(std::string(kEvents))) {
    out.notes.push_back("the recording has no /fieldproof/events: no timeline events");
  }
  if (!resource_vehicles.empty() && !seen.count(std::string(kResources))) {
    out.notes.push_back("the recording has no /fieldproof/resources: resource use is not judged");
  }

  const bool lockstep_mode = plan.scenario.time.mode == scenario::TimeMode::kLockstep;
  const Duration tick =
      lockstep_mode ? std::min(plan.scenario.time.step, milliseconds(100)) : milliseconds(100);
  const auto do_tick = [&](SimTime t) {
    ev.on_tick(t);
    collectors.on_tick(t);
    observer.on_tick(t);
  };
  observer.start(SimTime::zero());
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
      do_tick(next_tick);
      next_tick = next_tick + tick;
    }
    bool acted = false;
    std::vector<const Recorded*> metrics;
    for (size_t k = i; k < end; ++k) {
      const Recorded& m = messages[k];
      if (m.topic == kEvents) {
        const json e = json::parse(m.data, nullptr, /*allow_exceptions=*/false);
        if (!e.is_object()) continue;
        const std::string name = e.value("event", "");
        if (name == "action.start") {
          ev.on_action(e.value("label", ""), ActionEvent::kStart, s, "running");
          collectors.on_action(e.value("label", ""), ActionEvent::kStart, s, "running");
          acted = true;
        } else if (name == "action.end") {
          ev.on_action(e.value("label", ""), ActionEvent::kEnd, s, e.value("status", ""));
          collectors.on_action(e.value("label", ""), ActionEvent::kEnd, s, e.value("status", ""));
        } else if (name == "timeline.complete") {
          completed = s;
        }
      } else if (m.topic == kMetrics || m.topic == kResources) {
        metrics.push_back(&m);
      } else if (!m.vehicle.empty()) {
        if (!poses_from_vehicles) continue;
        const auto pose = decoder_of.at(m.topic)->decode(m.data);
        if (!pose) continue;
        ignition::msgs::Pose_V v;
        auto* p = v.add_pose();
        p->set_name(m.vehicle);
        msgs::set_planar_pose(p, pose->x, pose->y, pose->yaw);
        lockstep::Publish pub;
        pub.topic = pose_topic;
        pub.stamp = s;
        pub.type = "ignition.msgs.Pose_V";
        pub.payload = msgs::serialize(v);
        observer.on_message(pub);
      } else {
        lockstep::Publish p;
        p.topic = m.topic;
        p.stamp = s;
        p.seq = m.sequence;
        p.type = m.type;
        p.payload = m.data;
        observer.on_message(p);
      }
    }
    if (next_tick == s || acted) {
      do_tick(s);
      if (next_tick == s) next_tick = next_tick + tick;
    }
    // The once-a-second records come after the tick, as live.
    for (const Recorded* m : metrics) {
      const json j = json::parse(m->data, nullptr, false);
      if (!j.is_object()) continue;
      Sample smp;
      smp.sim = s;
      if (m->topic == kMetrics) {
        smp.kind = Sample::Kind::kClock;
        smp.wall_s = j.value("wall_s", 0.0);
        smp.rtf = j.value("rtf", 0.0);
        observer.emit(smp);
      } else {
        // A resource line (resources.hpp): the process's own vehicle (null for the engine) and
        // the vehicles whose stacks it hosts.
        smp.kind = Sample::Kind::kResources;
        const auto text = [&j](const char* key) {
          const auto it = j.find(key);
          return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
        };
        const auto number = [&j](const char* key) {
          const auto it = j.find(key);
          return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
        };
        smp.process = text("process");
        smp.cpu_pct = number("cpu_pct");
        smp.memory_mb = number("memory_mb");
        std::vector<std::string> vehicles;
        if (const std::string v = text("vehicle"); !v.empty()) vehicles.push_back(v);
        if (const auto h = j.find("hosts"); h != j.end() && h->is_array()) {
          for (const json& v : *h) {
            if (v.is_string()) vehicles.push_back(v.get<std::string>());
          }
        }
        for (const std::string& v : vehicles) {
          if (!resource_vehicles.count(v)) continue;
          smp.vehicle = v;
          sample_lines.push_back(smp.to_json());
          ev.on_sample(smp, s);
          collectors.on_sample(smp, s);
        }
      }
    }
    last = s;
    i = end;
  }
  if (completed) {
    ev.finish(*completed);
    collectors.finish(*completed);
  } else {
    // The live run skipped its pending assertions when it ended; its run.json (when a run
    // directory was given) says how and when, so the reason and time are the live ones.
    std::string why = "the recorded run ended before the timeline completed";
    SimTime at = last;
    if (live_run.is_object()) {
      why = "the run ended before the timeline completed (" + live_run.value("status", "") + ")";
      if (live_run.contains("clock") && live_run["clock"].contains("sim_elapsed_s")) {
        // run.json prints seconds: read back to the nanosecond.
        at = SimTime::from_ns(std::llround(live_run["clock"]["sim_elapsed_s"].get<double>() * 1e9));
      }
    }
    ev.skip_pending(why, at);
    collectors.finish(at);
  }

  out.assertions = ev.results();
  out.kpi_collectors = collectors.results();
  const AssertionResult* f = ev.first_failed();
  if (f) {
    set_status(out, report::RunStatus::kFailed);
    out.reason = "assertion " + f->name + " failed: " + f->reason;
    if (ev.failed_count() > 1) {
      out.reason += " (and " + std::to_string(ev.failed_count() - 1) + " more)";
    }
  } else {
    set_status(out, report::RunStatus::kPassed);
    size_t skipped = 0;
    for (const AssertionResult& a : out.assertions) skipped += a.status == Verdict::kSkipped;
    out.reason = !completed    ? "no assertion failed (the recorded run ended early: the pending "
                                 "ones were skipped)"
                 : skipped > 0 ? "no assertion failed (" + std::to_string(skipped) +
                                     " skipped: the recording lacks what they watch)"
                               : "every assertion passed";
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
    std::ofstream samples(dir / "samples.jsonl");
    for (const json& j : sample_lines) samples << j.dump() << "\n";
    std::ofstream kpi_file(dir / "kpis.jsonl");
    for (const json& j : assertions::kpi_lines(out.assertions, out.kpi_collectors)) {
      kpi_file << j.dump() << "\n";
    }
    std::ofstream lines(dir / "assertions.jsonl");
    for (const AssertionResult& r : resolved) {
      json j = r.to_json();
      j["run_id"] = id;
      lines << j.dump() << "\n";
    }
    json run = out.to_json();
    run["run_id"] = id;
    run["scenario"] = plan.scenario.name;
    if (const Status st = report::write_file_atomically(
            dir / "run.json", run.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
        !st.ok()) {
      out.notes.push_back("run.json could not be written: " + st.to_string());
    }
    // The same reports as a live run's (report.json, report.md, junit.xml, report.html).
    try {
      report::Report::load(dir).write_all(dir);
    } catch (const std::exception& e) {
      out.notes.push_back(std::string("the reports could not be written: ") + e.what());
    }
  }
  return out;
}

}  // namespace fieldproof::engine
