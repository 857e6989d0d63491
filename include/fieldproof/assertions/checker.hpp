// The streaming evaluator: assertion types (plan + checker), their checkers fed by the run's
// samples, ticks and timeline events, and the verdicts as they resolve (docs/assertions.md, "Every
// assertion", "Verdicts, status and exit codes").
//
//   const AssertionTypes& types = AssertionTypes::builtin();   // the 16 built-in types
//   PlanContext ctx{scenario, frames};
//   PlannedAssertion p = types.find("reach_pose")->plan(spec, ctx);   // throws PlanError
//   Evaluator ev(planned, types, [](const AssertionResult& r) { log(r); });
//   ev.on_action("drive_ahead", ActionEvent::kStart, t, "running");   // t: a SimTime
//   ev.on_sample(sample, t); ev.on_tick(t);
//   if (const AssertionResult* a = ev.aborted_by()) cancel_timeline(ev.abort_reason());
//   ev.finish(t);                         // the timeline completed: pending ones are settled
//   ev.skip_pending("the run was interrupted", t);  // or: the run ended before that
//
// A new type derives from AssertionType (plan: resolve and refuse its parameters against the
// scenario and the world; checker: a Checker for one planned assertion) and is added with
// AssertionTypes::add. A checker resolves once (resolve); note() keeps the last six samples it
// looked at, which become the verdict's evidence excerpt; metrics() is what it measured.
// t is the timeline's time, a SimTime (integer nanoseconds; negative before the timeline starts);
// lengths (windows, limits) are Durations. Seconds as a double appear only in what is printed
// (reasons, JSON) and in formulas that need them (a rate, a speed): to_seconds() converts there.
//
// on_fail: abort (docs/assertions.md): the moment an assertion with on_fail abort fails, the
// Evaluator calls on_abort (set_on_abort) once and aborted_by() names it; the engine then cancels
// the timeline: it reports each running entry with on_action(label, kEnd, t, "cancelled") and each
// entry that never ran with on_action(label, kEnd, t, "skipped") (a within_time on it fails), and
// calls skip_pending(abort_skip_reason(), t). abort_reason() is the run's reason.
#pragma once

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "fieldproof/scenario/condition.hpp"
#include "fieldproof/scenario/scenario.hpp"
#include "fieldproof/time/duration.hpp"
#include "fieldproof/time/seconds.hpp"
#include "fieldproof/util/status.hpp"
#include "fieldproof/world/geometry.hpp"

namespace fieldproof::assertions {

enum class Verdict { kPending, kPassed, kFailed, kSkipped };
std::string_view to_string(Verdict v);

// One observation of the run (a line of samples.jsonl). The observer (engine/observer.hpp) makes
// them from the coordinator's ordered stream, only for what the planned assertions and KPIs need
// (docs/assertions.md, "Every assertion"); tests make them by hand. `vehicle` is the model (kPose,
// kContact) or the vehicle a topic, node or process belongs to ("" for an absolute topic and for
// the engine's own process).
struct LatencyWindow {
  uint64_t count = 0;  // messages in the window
  double mean_ms = 0.0;
  double max_ms = 0.0;
  double min_ms = 0.0;
  double p95_ms = 0.0;
  uint64_t unstamped = 0;  // messages in the window that carried no header stamp
};

struct Sample {
  enum class Kind {
    kPose,       // ground truth of a model, 10 Hz: pose
    kContact,    // a contact message of a vehicle: contacts
    kClock,      // once a second: rtf, wall_s
    kValue,      // one per message of a watched topic: topic, message
    kRate,       // once a second per watched topic, once a full window has passed: topic, hz...
    kLatency,    // once a second per stamped topic: topic, latency
    kLifecycle,  // once a second per node and at every transition: node, state
    kResources,  // once a second per process: process, cpu_pct, memory_mb
  };
  Kind kind = Kind::kPose;
  SimTime sim;
  std::string vehicle;
  world::Pose2D pose;                 // kPose
  std::vector<std::string> contacts;  // kContact: the other collisions touched (empty: ended)
  double rtf = 0.0;                   // kClock: over the last second
  double wall_s = 0.0;                // kClock: wall seconds since the run started
  std::string topic;                  // kValue, kRate, kLatency: the absolute topic
  // kValue: the decoded message as JSON, protobuf field names (linear.x, ranges[0], header.stamp);
  // read fields with field_at().
  nlohmann::json message;
  double hz = 0.0;         // kRate: messages per simulated second over the window
  Duration window;         // kRate, kLatency: the window's length (simulated time)
  uint64_t messages = 0;   // kRate: messages in the window; kValue: messages seen on the topic
  LatencyWindow latency;   // kLatency
  std::string node;        // kLifecycle: the node's name (relative to the vehicle)
  std::string state;       // kLifecycle: unconfigured, inactive, active, finalized,
                           //             unavailable, unresponsive
  std::string process;     // kResources: what was measured ("ugv1_nav", "engine")
  double cpu_pct = 0.0;    // kResources: percent of one core over the last second
  double memory_mb = 0.0;  // kResources: resident set, MiB
  nlohmann::json to_json() const;
};

// The field at `path` of a decoded message ("twist.linear.x", "ranges[0]", "status.status"), or
// why there is none: kNotFound saying which part is missing ("no field 'w' in twist.linear",
// "ranges has 3 items, no [3]"), kInvalidArgument for a malformed path.
Result<const nlohmann::json*> find_field(const nlohmann::json& message, std::string_view path);
// The same without the reason: nullptr when the path does not exist.
const nlohmann::json* field_at(const nlohmann::json& message, std::string_view path);
// A JSON value as a condition-language value (numbers, strings, bools, null, lists, maps).
scenario::Value to_value(const nlohmann::json& j);

enum class ActionEvent { kStart, kEnd };

// The after_s / within_s window of an assertion or collector on the timeline (its times count
// from the timeline's start). Without after_s it opens when the timeline starts (t = 0); without
// within_s it closes with the timeline. A sample at exactly within_s is inside; the window is
// closed once t passes it.
//
// The edges are exact: a time and an edge are compared in integer nanoseconds (t is at an edge
// when it is the same nanosecond).
class Window {
 public:
  Window() = default;
  Window(std::optional<Duration> after, std::optional<Duration> within);
  static Window of(const scenario::AssertionSpec& spec) { return {spec.after, spec.within}; }
  // From a parameter map's after_s / within_s (KPI collectors).
  static Window of(const scenario::ParamValue& params);

  // The window's start on the timeline (after_s; zero without it).
  SimTime start() const { return start_; }
  bool has_end() const { return !end_.is_infinite(); }
  // The window's end (within_s); SimTime::infinite() without within_s.
  SimTime end() const { return end_; }
  bool before(SimTime t) const { return t < start_; }
  bool contains(SimTime t) const { return t >= start_ && t <= end_; }
  bool closed(SimTime t) const { return t > end_; }
  // For printing: the edges in seconds (end_s() is +inf without within_s).
  double after_s() const { return to_seconds(start_); }
  double end_s() const {
    return has_end() ? to_seconds(end_) : std::numeric_limits<double>::infinity();
  }
  // "the window [2 s, 10 s]", "the window from 2 s", "the timeline".
  std::string describe() const;

 private:
  SimTime start_ = SimTime::zero();
  SimTime end_ = SimTime::infinite();
};

struct AssertionResult {
  std::string name;
  std::string type;
  Verdict status = Verdict::kPending;
  std::string reason;
  SimTime t;    // the timeline's time of the verdict ("t_s" in JSON)
  SimTime sim;  // the simulation time of what decided it ("sim_s")
  nlohmann::json evidence = nlohmann::json::object();  // "excerpt": the last noted samples
  nlohmann::json metrics = nlohmann::json::object();   // name -> {value, unit}
  // What the verdict was judged against, for the report's signal plots: the model the checker
  // read ("" none), its after_s / within_s window and the planned parameters as resolved
  // (target, tolerance_m, region, min_hz, max_ms, ...).
  std::string vehicle;
  Window window;
  nlohmann::json resolved = nlohmann::json::object();
  nlohmann::json to_json() const;
};

// A refusal at planning time: where (the field path) and what.
class PlanError : public std::runtime_error {
 public:
  PlanError(std::string path, const std::string& message)
      : std::runtime_error(message), path_(std::move(path)) {}
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct PlanContext {
  const scenario::Scenario& scenario;
  std::map<std::string, world::Pose2D> frames;  // the world's frames
  // A placement resolved in the world; throws PlanError naming `path` for an unknown frame.
  world::Pose2D place(const scenario::Placement& p, const std::string& path) const;
};

// What a planned assertion (or KPI collector) needs the observer to stream. Topics are absolute
// (topic_of()). The observer streams the union over the plan, nothing more. The Evaluator (and
// the Collectors) give a checker only the kinds of samples its Watch asks for (a type that reads
// poses fills `poses`), and kClock samples to every checker.
struct Watch {
  std::set<std::string> poses;              // models whose ground-truth pose is streamed (kPose)
  std::set<std::string> contacts;           // vehicles whose contacts are streamed (kContact)
  std::set<std::string> values;             // topics whose messages are decoded (kValue)
  std::map<std::string, Duration> rates;    // topic -> its window (kRate)
  std::map<std::string, Duration> latencies;  // topic -> its window (kLatency)
  std::set<std::string> lifecycle;          // vehicles whose stack's lifecycle is streamed
  std::set<std::string> resources;          // vehicles whose stack is measured ("" the engine)
  bool clock = false;                       // kClock samples (always streamed, once a second)
  void merge(const Watch& other);
  // Whether a sample of `kind` is asked for (kClock: `clock`; the others: a non-empty set).
  bool wants(Sample::Kind kind) const;
};

// A topic of a scenario as the bus names it: absolute when it starts with '/', otherwise under
// the vehicle's namespace (/model/<vehicle>/<topic>).
std::string topic_of(const std::string& vehicle, const std::string& topic);

struct PlannedAssertion {
  scenario::AssertionSpec spec;
  std::string vehicle;                                 // the model the checker reads, if any
  nlohmann::json resolved = nlohmann::json::object();  // shown by the dry run
  Watch watch;                                         // what the observer must stream for it
};

class Checker {
 public:
  explicit Checker(PlannedAssertion planned);
  virtual ~Checker() = default;
  virtual void on_sample(const Sample& sample, SimTime t);
  virtual void on_tick(SimTime t);
  virtual void on_action(const std::string& label, ActionEvent event, SimTime t,
                         const std::string& status);
  virtual void on_verdict(const AssertionResult& other, SimTime t);
  // The timeline completed; a checker still pending must resolve here.
  virtual void on_finish(SimTime t) = 0;
  virtual nlohmann::json metrics() const { return nlohmann::json::object(); }
  // Assertions whose verdicts this one waits for (a sequence's steps): at the end of the timeline
  // they are settled first, so this checker's on_verdict sees them before its on_finish.
  virtual std::vector<std::string> depends_on() const { return {}; }
  // The timeline time at which on_tick decides this checker unless the stream decides it first
  // (within_s, a within_time's limit, a max_gap_s), or nullopt. Default: the window's end. The
  // engine wakes just past it (samples stamped at the deadline still count), and the checker
  // resolves with the deadline as its t: a deadline is judged at the deadline itself, not at the
  // next periodic wake.
  virtual std::optional<SimTime> deadline() const;

  bool resolved() const { return result_.status != Verdict::kPending; }
  AssertionResult result() const;
  const PlannedAssertion& planned() const { return planned_; }
  // The spec's after_s / within_s.
  const Window& window() const { return window_; }

 protected:
  // Gives the verdict once (later calls are ignored).
  void resolve(Verdict status, std::string reason, SimTime t, SimTime sim,
               nlohmann::json evidence = nlohmann::json::object());
  // Keeps a sample (with fields of the checker's own) for the excerpt: the last six, each with
  // its timeline time t and simulation time. Cheap: the JSON is made only when the verdict is.
  void note(SimTime t, const Sample& sample, nlohmann::json fields = nlohmann::json());
  // The same with one numeric field (no JSON made per call: for every-sample notes).
  void note(SimTime t, const Sample& sample, const char* key, double value);
  // The excerpt so far, as the verdict will carry it.
  nlohmann::json excerpt() const;

 private:
  friend class Evaluator;  // skip_pending gives the skipped verdict, keeping the excerpt
  struct Noted {
    SimTime t;
    Sample sample;
    nlohmann::json fields;
    const char* key = nullptr;
    double value = 0.0;
  };
  static constexpr size_t kExcerpt = 6;
  PlannedAssertion planned_;
  AssertionResult result_;
  Window window_;
  std::vector<Noted> noted_;  // a ring of kExcerpt
  size_t noted_count_ = 0;    // ever noted
};

class AssertionType {
 public:
  virtual ~AssertionType() = default;
  virtual std::string_view name() const = 0;
  virtual PlannedAssertion plan(const scenario::AssertionSpec& spec,
                                const PlanContext& context) const = 0;
  virtual std::unique_ptr<Checker> checker(const PlannedAssertion& planned) const = 0;
};

class AssertionTypes {
 public:
  static const AssertionTypes& builtin();
  void add(std::unique_ptr<AssertionType> type);
  const AssertionType* find(std::string_view name) const;
  std::vector<std::string> names() const;

 private:
  std::map<std::string, std::unique_ptr<AssertionType>, std::less<>> types_;
};

class Evaluator {
 public:
  using OnResolved = std::function<void(const AssertionResult&)>;
  Evaluator(const std::vector<PlannedAssertion>& planned, const AssertionTypes& types,
            OnResolved on_resolved);
  // Called once, right after on_resolved, when the first assertion with on_fail: abort fails
  // while the timeline runs (not for failures settled by finish(): nothing is left to cancel).
  void set_on_abort(OnResolved on_abort) { on_abort_ = std::move(on_abort); }
  void on_sample(const Sample& sample, SimTime t);
  void on_tick(SimTime t);
  void on_action(const std::string& label, ActionEvent event, SimTime t, const std::string& status);
  // The earliest deadline() of the pending checkers (timeline time), or nullopt.
  std::optional<SimTime> next_deadline() const;
  // The timeline completed: every checker's on_finish.
  void finish(SimTime t);
  // The run ended early: every pending assertion is skipped with `reason`.
  void skip_pending(const std::string& reason, SimTime t);
  // One assertion cannot be judged (a re-judged recording lacks a topic it needs): it is skipped
  // with `reason` now, unless it has resolved already. False when no assertion has that name.
  bool skip(const std::string& name, const std::string& reason, SimTime t);

  std::vector<AssertionResult> results() const;
  // The first failed assertion in the order they resolved, or nullptr.
  const AssertionResult* first_failed() const;
  size_t failed_count() const;
  // The first assertion with on_fail: abort that failed, or nullptr (valid until the next call).
  const AssertionResult* aborted_by() const;
  // "assertion stays_in_yard failed: <reason> (on_fail: abort, the timeline was cancelled)".
  std::string abort_reason() const;
  // "the timeline was cancelled: assertion stays_in_yard failed (on_fail: abort)".
  std::string abort_skip_reason() const;
  // How many assertions are evaluated (those of a known type).
  size_t size() const { return checkers_.size(); }

 private:
  void collect(SimTime t);
  void report(size_t i, AssertionResult r);
  std::vector<std::unique_ptr<Checker>> checkers_;
  std::vector<bool> reported_;
  std::vector<bool> abort_;                   // on_fail: abort, per checker
  std::vector<std::vector<size_t>> by_kind_;  // Sample::Kind -> checkers whose Watch wants it
  std::vector<size_t> tick_;                  // every checker (on_tick, on_action)
  bool dirty_ = false;                        // a checker may have resolved since collect()
  bool finished_ = false;  // finish() or skip_pending() was called: no more aborts
  std::vector<AssertionResult> resolved_order_;
  std::optional<size_t> aborted_;  // index in resolved_order_
  OnResolved on_resolved_;
  OnResolved on_abort_;
};

}  // namespace fieldproof::assertions
