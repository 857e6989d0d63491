// Re-judging a recorded run (see rejudge.hpp).
#include "fieldproof/engine/rejudge.hpp"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/dynamic_message.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <system_error>
#include <utility>

#include "engine/judge.hpp"
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
  bool marker = false;  // not observed: kept (without data) only to place the events it raised
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

namespace {

// One re-judging, in its steps: plan, open the recording, read the live run's run.json, read the
// recording, feed the judge, end, judge, write. The judge (judge.hpp) is the live run's.
class Rejudging {
 public:
  explicit Rejudging(const RejudgeOptions& o) : o_(o) {}

  RejudgeOutcome execute() {
    if (!plan() || !read_live_run() || !open_recording()) return out_;
    make_judge();
    if (!read_recording()) return out_;
    note_what_is_missing();
    feed();
    end();
    judge();
    if (o_.write_run_dir) write_run_dir();
    return out_;
  }

 private:
  bool fail(std::string error) {
    (void)invalid(out_, std::move(error));
    return false;
  }

  // The scenario, planned as for a live run (its world is loaded for frames).
  bool plan() {
    PlanOptions po;
    po.seed = o_.seed;
    po.tool_dir = o_.tool_dir;
    planned_ = plan_run(o_.scenario_file, po);
    if (!planned_.plan) {
      (void)invalid(out_, planned_.errors.empty() ? "the scenario cannot be planned"
                                                  : planned_.errors.front());
      out_.errors = planned_.errors;
      return false;
    }
    return true;
  }
  const RunPlan& the_plan() const { return *planned_.plan; }

  // A run directory: its recording and its run.json (the live run's ending); else an MCAP file.
  bool read_live_run() {
    out_.recording = o_.recording;
    std::error_code ec;
    if (!fs::is_directory(o_.recording, ec)) return true;
    out_.recording = o_.recording / "recording" / the_plan().record_file;
    if (!fs::exists(out_.recording)) out_.recording = o_.recording / "recording" / "recording.mcap";
    const fs::path file = o_.recording / "run.json";
    if (fs::exists(fs::symlink_status(file, ec))) {
      const Result<std::string> in =
          util::read_input_file(file, util::kMaxRunFileBytes, "run.json");
      if (!in.ok()) return fail(in.status().message());
      live_run_ = json::parse(*in, nullptr, /*allow_exceptions=*/false);
    }
    if (live_run_.is_discarded()) live_run_ = json();
    return true;
  }

  bool open_recording() {
    if (record::Status s = reader_.open(out_.recording.string()); !s.ok()) {
      return fail(out_.recording.string() + ": " + s.to_string() +
                  " (give a run directory or its recording.mcap)");
    }
    return true;
  }

  // The live run's judge, with its observer. Resources cannot be measured after the fact: they
  // come from the recorded /fieldproof/resources lines instead.
  void make_judge() {
    judge_.emplace(the_plan(), [this](const AssertionResult& r) { resolved_.push_back(r); });
    resource_vehicles_ = judge_->watch().resources;
    pose_topic_ = "/world/" + the_plan().world_name + "/pose/info";
    ObserverOptions oo;
    oo.pose_topic = pose_topic_;
    oo.wall_now = [] { return SimTime::zero(); };
    oo.write_line = [this](const json& j) { sample_lines_.push_back(j); };
    const std::vector<std::string> topics = judge_->make_observer(std::move(oo)).topics();
    observed_.insert(topics.begin(), topics.end());
  }

  // The whole recording, in its order (log time, then recorded order): what the observer
  // watches, the events, the metrics and resource lines, the recorder's vehicle poses.
  bool read_recording() {
    // The topics whose deliveries raised events (a navigation status): their messages place
    // those events in the stream even when nothing observes them.
    const record::Status pre = reader_.read_messages(
        {0, std::numeric_limits<int64_t>::max(), {std::string(kEvents)}},
        [this](const record::MessageView& m) {
          const json e = json::parse(m.data_view(), nullptr, /*allow_exceptions=*/false);
          const json* by = e.is_object() ? raised_by(e) : nullptr;
          if (by != nullptr && by->contains("topic") && (*by)["topic"].is_string()) {
            raising_.insert((*by)["topic"].get<std::string>());
          }
          return true;
        });
    if (!pre.ok()) return fail(out_.recording.string() + ": " + pre.to_string());
    const record::Status read =
        reader_.read_messages({}, [this](const record::MessageView& m) { return keep(m); });
    if (!read.ok()) return fail(out_.recording.string() + ": " + read.to_string());
    for (const record::McapProblem& p : reader_.problems()) {
      out_.notes.push_back("the recording is damaged or cut short: at offset " +
                           std::to_string(p.offset) + ": " + p.message);
    }
    // Without the world's pose topic, the vehicles' poses come from the recorder's channels.
    poses_from_vehicles_ =
        observed_.count(pose_topic_) && !seen_.count(pose_topic_) && !decoder_of_.empty();
    return true;
  }

  bool keep(const record::MessageView& m) {
    const std::string& topic = m.channel->topic;
    seen_.insert(topic);
    if (auto v = m.channel->metadata.find("vehicle"); v != m.channel->metadata.end() &&
                                                      topic.rfind(kVehiclePoses, 0) == 0 &&
                                                      m.schema != nullptr) {
      if (!pose_decoders_.count(m.schema->id)) {
        auto d = std::make_unique<VehiclePoseDecoder>();
        if (!d->init(*m.schema)) d.reset();
        pose_decoders_.emplace(m.schema->id, std::move(d));
      }
      if (pose_decoders_[m.schema->id]) {
        messages_.push_back({topic, SimTime::from_ns(m.log_time_ns), std::string(m.data_view()),
                             m.schema->name, m.sequence, v->second});
        decoder_of_.emplace(topic, pose_decoders_[m.schema->id].get());
      }
      return true;
    }
    if (observed_.count(topic) || topic == kEvents || topic == kMetrics || topic == kResources) {
      std::string type;
      if (auto it = m.channel->metadata.find("type"); it != m.channel->metadata.end()) {
        type = it->second;
      } else if (m.schema != nullptr) {
        type = m.schema->name;
      }
      messages_.push_back({topic, SimTime::from_ns(m.log_time_ns), std::string(m.data_view()),
                           std::move(type), m.sequence, ""});
    } else if (raising_.count(topic)) {
      messages_.push_back(
          {topic, SimTime::from_ns(m.log_time_ns), "", "", m.sequence, "", /*marker=*/true});
    }
    return true;
  }

  // What the recording lacks, in the notes; an assertion that needs a topic it lacks is skipped.
  void note_what_is_missing() {
    if (poses_from_vehicles_) {
      out_.notes.push_back("the recording has no " + pose_topic_ +
                           ": vehicle poses are read from /fieldproof/vehicles/<v>/pose");
    }
    for (const std::string& t : observed_) {
      if (t == pose_topic_ && poses_from_vehicles_) continue;
      if (!seen_.count(t)) {
        out_.notes.push_back("the recording has no " + t + ": what watches it sees nothing");
      }
    }
    for (const std::string& t : raising_) {
      if (!seen_.count(t)) {
        out_.notes.push_back("the recording has no " + t +
                             ": the events its messages raised are judged after the other "
                             "messages of their instant");
      }
    }
    skip_the_unjudgeable();
    if (!seen_.count(std::string(kEvents))) {
      out_.notes.push_back("the recording has no /fieldproof/events: no timeline events");
    }
    if (!resource_vehicles_.empty() && !seen_.count(std::string(kResources))) {
      out_.notes.push_back("the recording has no /fieldproof/resources: resource use is not judged");
    }
  }

  // An assertion that needs a topic the recording lacks is skipped, saying so: judged on nothing
  // it would pass vacuously (a no_collision without contacts "touched nothing"). Lacking means
  // left out by outputs.topics: a recorded topic may have no message at all (contacts are
  // published only while something touches).
  void skip_the_unjudgeable() {
    const RunPlan& plan = the_plan();
    const std::set<std::string> allowed(plan.record_topics.begin(), plan.record_topics.end());
    const auto left_out = [&](const std::string& t) {
      return !allowed.empty() && !allowed.count(t);
    };
    for (const PlannedAssertion& a : plan.assertions) {
      ObserverOptions ao;
      ao.watch = a.watch;
      ao.watch.resources.clear();
      ao.pose_topic = pose_topic_;
      std::string missing;
      for (const std::string& t : Observer(std::move(ao)).topics()) {
        if (seen_.count(t) || (t == pose_topic_ && poses_from_vehicles_) || !left_out(t)) continue;
        missing += (missing.empty() ? "" : ", ") + t;
      }
      if (missing.empty()) continue;
      judge_->evaluator().skip(a.spec.name,
                               "the recording has no " + missing +
                                   " (the topic was not recorded): " + a.spec.name +
                                   " cannot be judged on it",
                               SimTime::zero());
    }
  }

  // The recording into the judge, one instant (log time) at a time, up to timeline.complete,
  // in the live loop's order at each instant s (run.cpp, run_loop): at its wake the timeline's
  // entries (their events), the tick, the once-a-second records; then, while it waits for its
  // next wake, the messages stamped s (a receiver gets a message stamped s only after every
  // thread has announced past s: docs/lockstep.md) and the events they raised (`in_delivery`).
  // A run that completes at its wake at s never receives the messages stamped s.
  void feed() {
    const RunPlan& plan = the_plan();
    const bool lockstep_mode = plan.scenario.time.mode == scenario::TimeMode::kLockstep;
    const Duration tick =
        lockstep_mode ? std::min(plan.scenario.time.step, milliseconds(100)) : milliseconds(100);
    judge_->observer().start(SimTime::zero());
    SimTime next_tick = SimTime::zero();
    size_t i = 0;
    while (i < messages_.size() && !completed_) {
      const SimTime s = messages_[i].stamp;
      size_t end = i;
      while (end < messages_.size() && messages_[end].stamp == s) ++end;
      // The live run ticks on its grid while the stream goes on.
      while (next_tick < s) {
        judge_->on_tick(next_tick);
        next_tick = next_tick + tick;
      }
      const bool acted = feed_wake(i, end, s);
      if (next_tick == s || acted) {
        judge_->on_tick(s);
        if (next_tick == s) next_tick = next_tick + tick;
      }
      for (size_t k = i; k < end; ++k) {
        const Recorded& m = messages_[k];
        if (m.topic == kMetrics || m.topic == kResources) feed_record(m, s);
      }
      if (!completed_) feed_deliveries(i, end, s);
      last_ = s;
      i = end;
    }
  }

  // The message whose delivery raised an event (run.cpp records it), or null: raised at a wake.
  static const json* raised_by(const json& e) {
    const auto it = e.find("in_delivery_of");
    return it != e.end() && it->is_object() ? &*it : nullptr;
  }

  // The events of the loop's wake at s among [i, end). True when an action started (the live
  // loop ticks at that wake).
  bool feed_wake(size_t i, size_t end, SimTime s) {
    bool acted = false;
    for (size_t k = i; k < end && !completed_; ++k) {
      if (messages_[k].topic != kEvents) continue;
      const json e = json::parse(messages_[k].data, nullptr, /*allow_exceptions=*/false);
      if (!e.is_object() || raised_by(e) != nullptr) continue;
      acted = feed_event(e, s) || acted;
    }
    return acted;
  }

  // The messages stamped s among [i, end), each followed by the events its delivery raised;
  // events whose message was not recorded come last, in file order.
  void feed_deliveries(size_t i, size_t end, SimTime s) {
    std::map<std::pair<std::string, uint64_t>, std::vector<json>> raised;
    std::vector<json> unplaced;
    for (size_t k = i; k < end; ++k) {
      if (messages_[k].topic != kEvents) continue;
      json e = json::parse(messages_[k].data, nullptr, /*allow_exceptions=*/false);
      const json* by = e.is_object() ? raised_by(e) : nullptr;
      if (by == nullptr) continue;
      const auto topic = by->find("topic");
      const auto seq = by->find("seq");
      if (topic == by->end() || !topic->is_string() || seq == by->end() ||
          !seq->is_number_unsigned()) {
        unplaced.push_back(std::move(e));
        continue;
      }
      // The recording keeps the low 32 bits of a publisher's sequence.
      raised[{topic->get<std::string>(), seq->get<uint64_t>() & 0xffffffffULL}].push_back(
          std::move(e));
    }
    for (size_t k = i; k < end; ++k) {
      const Recorded& m = messages_[k];
      if (m.topic == kEvents || m.topic == kMetrics || m.topic == kResources) continue;
      if (!m.vehicle.empty()) {
        if (poses_from_vehicles_) feed_vehicle_pose(m, s);
        continue;
      }
      if (!m.marker) {
        lockstep::Publish p;
        p.topic = m.topic;
        p.stamp = s;
        p.seq = m.sequence;
        p.type = m.type;
        p.payload = m.data;
        judge_->observer().on_message(p);
      }
      if (const auto r = raised.find({m.topic, m.sequence}); r != raised.end()) {
        for (const json& e : r->second) (void)feed_event(e, s);
        raised.erase(r);
      }
    }
    for (auto& [key, events] : raised) {
      for (json& e : events) unplaced.push_back(std::move(e));
    }
    for (const json& e : unplaced) (void)feed_event(e, s);
  }

  // action.start / action.end: the timeline's action events; timeline.complete ends the run.
  bool feed_event(const json& e, SimTime s) {
    const std::string name = e.value("event", "");
    if (name == "action.start") {
      judge_->on_action(e.value("label", ""), ActionEvent::kStart, s, "running");
      return true;
    }
    if (name == "action.end") {
      judge_->on_action(e.value("label", ""), ActionEvent::kEnd, s, e.value("status", ""));
    } else if (name == "timeline.complete") {
      completed_ = s;
    }
    return false;
  }

  // A recorder's vehicle pose, as the world's pose topic would have carried it.
  void feed_vehicle_pose(const Recorded& m, SimTime s) {
    const auto pose = decoder_of_.at(m.topic)->decode(m.data);
    if (!pose) return;
    ignition::msgs::Pose_V v;
    auto* p = v.add_pose();
    p->set_name(m.vehicle);
    msgs::set_planar_pose(p, pose->x, pose->y, pose->yaw);
    lockstep::Publish pub;
    pub.topic = pose_topic_;
    pub.stamp = s;
    pub.type = "ignition.msgs.Pose_V";
    pub.payload = msgs::serialize(v);
    judge_->observer().on_message(pub);
  }

  // A /fieldproof/metrics record (a clock sample) or a /fieldproof/resources line.
  void feed_record(const Recorded& m, SimTime s) {
    const json j = json::parse(m.data, nullptr, false);
    if (!j.is_object()) return;
    Sample smp;
    smp.sim = s;
    if (m.topic == kMetrics) {
      smp.kind = Sample::Kind::kClock;
      smp.wall_s = j.value("wall_s", 0.0);
      smp.rtf = j.value("rtf", 0.0);
      judge_->observer().emit(smp);
      return;
    }
    // A resource line (resources.hpp): the process's own vehicle (null for the engine) and the
    // vehicles whose stacks it hosts.
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
      if (!resource_vehicles_.count(v)) continue;
      smp.vehicle = v;
      sample_lines_.push_back(smp.to_json());
      judge_->on_sample(smp);
    }
  }

  // The pending verdicts: judged at timeline.complete; otherwise the live run skipped them when
  // it ended, and its run.json (when a run directory was given) says how and when, so the
  // reason and time are the live ones.
  void end() {
    if (completed_) {
      judge_->end(*completed_, std::nullopt);
      return;
    }
    std::string why = "the recorded run ended before the timeline completed";
    SimTime at = last_;
    if (live_run_.is_object()) {
      why = "the run ended before the timeline completed (" + live_run_.value("status", "") + ")";
      if (live_run_.contains("clock") && live_run_["clock"].contains("sim_elapsed_s")) {
        // run.json prints seconds: read back to the nanosecond.
        at = SimTime::from_ns(
            std::llround(live_run_["clock"]["sim_elapsed_s"].get<double>() * 1e9));
      }
      // The live run skipped what was pending with one reason (why it ended): the same here.
      if (const auto a = live_run_.find("assertions"); a != live_run_.end() && a->is_array()) {
        for (const json& l : *a) {
          if (l.is_object() && l.value("status", "") == "skipped" && l.contains("reason") &&
              l["reason"].is_string()) {
            why = l["reason"].get<std::string>();
            break;
          }
        }
      }
    }
    judge_->end(at, why);
  }

  // The status and its reason, as the live run judges a completed timeline; a pass says what
  // was not judged.
  void judge() {
    out_.assertions = judge_->results();
    out_.kpi_collectors = judge_->kpi_results();
    Judge::Judged j = judge_->judged();
    set_status(out_, j.status);
    out_.reason = std::move(j.reason);
    // A live run that ended on an error, a timeout or an interruption before its timeline
    // completed ended so for a reason a recording does not hold (a stack that did not start, a
    // signal): the re-judged run ends as it did, with its reason.
    if (!completed_ && live_run_.is_object()) {
      const auto live = report::parse_run_status(live_run_.value("status", ""));
      if (live && !report::is_judged(*live)) {
        set_status(out_, *live);
        out_.reason = live_run_.value("reason", "");
        return;
      }
    }
    if (j.status != report::RunStatus::kPassed) return;
    size_t skipped = 0;
    for (const AssertionResult& a : out_.assertions) skipped += a.status == Verdict::kSkipped;
    if (!completed_) {
      out_.reason =
          "no assertion failed (the recorded run ended early: the pending ones were skipped)";
    } else if (skipped > 0) {
      out_.reason = "no assertion failed (" + std::to_string(skipped) +
                    " skipped: the recording lacks what they watch)";
    }
  }

  // The run directory: the same files and reports as a live run's.
  void write_run_dir() {
    const std::string id =
        o_.run_id.empty() ? free_run_id(o_.runs_dir, the_plan().scenario.name) : o_.run_id;
    if (const Status bad = check_run_id(id); !bad.ok()) return (void)fail(bad.message());
    const fs::path dir = o_.runs_dir / id;
    if (fs::exists(dir)) {
      return (void)fail("run directory " + dir.string() +
                        " exists (a run directory is never overwritten)");
    }
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return (void)fail("cannot create " + dir.string() + ": " + ec.message());
    out_.run_dir = dir;
    fs::copy_file(o_.scenario_file, dir / "scenario.yaml", ec);
    if (ec) out_.notes.push_back("scenario.yaml could not be copied: " + ec.message());
    std::string samples;
    for (const json& j : sample_lines_) samples += j.dump() + "\n";
    std::string kpis;
    for (const json& j : assertions::kpi_lines(out_.assertions, out_.kpi_collectors)) {
      kpis += j.dump() + "\n";
    }
    std::string lines;
    for (const AssertionResult& r : resolved_) {
      json j = r.to_json();
      j["run_id"] = id;
      lines += j.dump() + "\n";
    }
    for (const auto& [name, text] :
         {std::pair<const char*, const std::string&>{"samples.jsonl", samples},
          {"kpis.jsonl", kpis},
          {"assertions.jsonl", lines}}) {
      if (const Status st = report::write_file_atomically(dir / name, text); !st.ok()) {
        out_.notes.push_back(std::string(name) + " could not be written: " + st.to_string());
      }
    }
    json run = out_.to_json();
    run["run_id"] = id;
    run["scenario"] = the_plan().scenario.name;
    if (const Status st = report::write_file_atomically(
            dir / "run.json", run.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
        !st.ok()) {
      out_.notes.push_back("run.json could not be written: " + st.to_string());
    }
    // The same reports as a live run's (report.json, report.md, junit.xml, report.html).
    if (const Status s = report::write_reports(dir); !s.ok()) {
      out_.notes.push_back("the reports could not be written: " + s.message());
    }
  }

  const RejudgeOptions& o_;
  RejudgeOutcome out_;
  PlanResult planned_;  // the judge keeps references into the plan
  json live_run_;       // the recorded run's run.json, when a run directory was given
  record::McapReader reader_;
  std::optional<Judge> judge_;
  std::vector<AssertionResult> resolved_;  // in the order they were resolved
  std::vector<json> sample_lines_;
  std::set<std::string> resource_vehicles_;
  std::string pose_topic_;
  std::set<std::string> observed_;
  std::set<std::string> raising_;  // topics whose deliveries raised events (read_recording)
  std::vector<Recorded> messages_;
  std::set<std::string> seen_;
  std::map<uint16_t, std::unique_ptr<VehiclePoseDecoder>> pose_decoders_;  // by schema id
  std::map<std::string, const VehiclePoseDecoder*> decoder_of_;            // by topic
  bool poses_from_vehicles_ = false;
  std::optional<SimTime> completed_;
  SimTime last_ = SimTime::zero();
};

}  // namespace

RejudgeOutcome rejudge(const RejudgeOptions& o) { return Rejudging(o).execute(); }

}  // namespace fieldproof::engine
