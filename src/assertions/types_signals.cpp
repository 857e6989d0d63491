// topic_rate, topic_value, message_latency, resource_usage, lifecycle_state, always, never and
// eventually (docs/assertions.md), and the signal helpers sequence shares (signal.hpp).
#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <span>

#include "builtin.hpp"
#include "fieldproof/assertions/checker.hpp"
#include "signal.hpp"
#include "util.hpp"

namespace fieldproof::assertions {

using nlohmann::json;
using scenario::ParamValue;
using scenario::Value;
using namespace detail;  // NOLINT(google-build-using-namespace): the part's own helpers

// ---- shared helpers (signal.hpp) ----
namespace detail {

namespace {
std::string param_string(const ParamValue& m, std::string_view key) {
  const ParamValue* p = m.get(key);
  return p != nullptr && p->kind != ParamValue::Kind::kNull ? p->string : std::string();
}
const char* kind_name(SignalRef::Kind k) {
  switch (k) {
    case SignalRef::Kind::kField:
      return "field";
    case SignalRef::Kind::kSimTime:
      return "sim_time";
    case SignalRef::Kind::kRtf:
      return "rtf";
    case SignalRef::Kind::kX:
      return "x";
    case SignalRef::Kind::kY:
      return "y";
    case SignalRef::Kind::kZ:
      return "z";
    case SignalRef::Kind::kYaw:
      return "yaw";
    case SignalRef::Kind::kDistanceTo:
      return "distance_to";
  }
  return "field";
}
}  // namespace

FieldPath::FieldPath(std::string path) : text_(std::move(path)) {
  size_t i = 0;
  const std::string& p = text_;
  while (i < p.size()) {
    if (p[i] == '[') {
      const size_t close = p.find(']', i);
      if (close == std::string::npos || close == i + 1) return;
      const std::string digits = p.substr(i + 1, close - i - 1);
      if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9) return;
      parts_.push_back({"", static_cast<size_t>(std::stoul(digits))});
      i = close + 1;
      if (i < p.size() && p[i] == '.') ++i;
      continue;
    }
    size_t end = p.find_first_of(".[", i);
    if (end == std::string::npos) end = p.size();
    if (end == i) return;
    parts_.push_back({p.substr(i, end - i), 0});
    i = end;
    if (i < p.size() && p[i] == '.') ++i;
  }
  parsed_ = !parts_.empty();
}

Result<const json*> FieldPath::find(const json& message) const {
  if (!parsed_) return find_field(message, text_);
  const json* cur = &message;
  for (const Part& part : parts_) {
    if (part.key.empty()) {
      if (!cur->is_array() || part.index >= cur->size()) return find_field(message, text_);
      cur = &(*cur)[part.index];
    } else {
      if (!cur->is_object()) return find_field(message, text_);
      auto it = cur->find(part.key);
      if (it == cur->end()) return find_field(message, text_);
      cur = &*it;
    }
  }
  return cur;
}

json SignalRef::to_json() const {
  json j = {{"kind", kind_name(kind)}, {"label", label}};
  if (kind == Kind::kField) {
    j["topic"] = topic;
    j["field"] = field;
  }
  if (!vehicle.empty()) j["vehicle"] = vehicle;
  if (kind == Kind::kDistanceTo) j["target"] = {{"x", target.x}, {"y", target.y}};
  return j;
}

SignalRef SignalRef::from_json(const json& j) {
  SignalRef s;
  const std::string k = j.at("kind").get<std::string>();
  for (Kind c : {Kind::kField, Kind::kSimTime, Kind::kRtf, Kind::kX, Kind::kY, Kind::kZ, Kind::kYaw,
                 Kind::kDistanceTo}) {
    if (k == kind_name(c)) s.kind = c;
  }
  s.label = j.value("label", "");
  s.topic = j.value("topic", "");
  s.field = j.value("field", "");
  s.path = FieldPath(s.field);
  s.vehicle = j.value("vehicle", "");
  if (j.contains("target")) {
    s.target = {j["target"]["x"].get<double>(), j["target"]["y"].get<double>(), 0.0};
  }
  return s;
}

SignalRef plan_signal(const ParamValue& m, const std::string& default_vehicle,
                      const PlanContext& ctx, const std::string& path, Watch& watch) {
  SignalRef s;
  s.vehicle = param_string(m, "vehicle");
  if (s.vehicle.empty()) s.vehicle = default_vehicle;
  if (!s.vehicle.empty() && ctx.scenario.vehicle(s.vehicle) == nullptr) {
    throw PlanError(path + ".vehicle", "no vehicle '" + s.vehicle + "' in the scenario");
  }
  const std::string metric = param_string(m, "metric");
  if (metric.empty()) {
    const std::string topic = param_string(m, "topic");
    s.field = param_string(m, "field");
    if (topic.empty()) throw PlanError(path, "a signal needs a topic (with a field) or a metric");
    if (s.field.empty()) throw PlanError(path + ".field", "a topic signal needs a field");
    s.kind = SignalRef::Kind::kField;
    s.path = FieldPath(s.field);
    s.topic = topic_of(s.vehicle, topic);
    s.label = s.topic + " " + s.field;
    watch.values.insert(s.topic);
    return s;
  }
  if (metric == "sim_time" || metric == "rtf") {
    s.kind = metric == "rtf" ? SignalRef::Kind::kRtf : SignalRef::Kind::kSimTime;
    s.label = metric;
    s.vehicle.clear();
    watch.clock = true;
    return s;
  }
  static const std::map<std::string, SignalRef::Kind> kPoseMetrics = {
      {"x", SignalRef::Kind::kX},
      {"y", SignalRef::Kind::kY},
      {"z", SignalRef::Kind::kZ},
      {"yaw", SignalRef::Kind::kYaw},
      {"distance_to", SignalRef::Kind::kDistanceTo}};
  auto it = kPoseMetrics.find(metric);
  if (it == kPoseMetrics.end()) {
    throw PlanError(path + ".metric",
                    "unknown metric '" + metric + "' (sim_time, rtf, x, y, z, yaw, distance_to)");
  }
  if (s.vehicle.empty()) {
    throw PlanError(path + ".metric", "the metric " + metric + " is a vehicle's; give vehicle");
  }
  s.kind = it->second;
  s.label = s.vehicle + " " + metric;
  if (s.kind == SignalRef::Kind::kDistanceTo) {
    const ParamValue* target = m.get("target");
    if (target == nullptr || target->kind != ParamValue::Kind::kPlacement) {
      throw PlanError(path + ".target", "distance_to needs a target (a placement)");
    }
    s.target = ctx.place(target->placement, path + ".target");
    s.label += " (" + fmt("%.2f", s.target.x) + ", " + fmt("%.2f", s.target.y) + ")";
  }
  watch.poses.insert(s.vehicle);
  return s;
}

Result<SignalRead> read_signal(const SignalRef& sig, const Sample& s, Value* out) {
  switch (sig.kind) {
    case SignalRef::Kind::kField: {
      if (s.kind != Sample::Kind::kValue || s.topic != sig.topic) return SignalRead::kNone;
      const Result<const json*> f = sig.path.find(s.message);
      if (!f.ok()) return f.status();
      *out = to_value(**f);
      return SignalRead::kValue;
    }
    case SignalRef::Kind::kSimTime:
    case SignalRef::Kind::kRtf:
      if (s.kind != Sample::Kind::kClock) return SignalRead::kNone;
      *out = Value(sig.kind == SignalRef::Kind::kRtf ? s.rtf : to_seconds(s.sim));
      return SignalRead::kValue;
    default:
      break;
  }
  if (s.kind != Sample::Kind::kPose || s.vehicle != sig.vehicle) return SignalRead::kNone;
  switch (sig.kind) {
    case SignalRef::Kind::kX:
      *out = Value(s.pose.x);
      break;
    case SignalRef::Kind::kY:
      *out = Value(s.pose.y);
      break;
    case SignalRef::Kind::kZ:
      *out = Value(0.0);
      break;
    case SignalRef::Kind::kYaw:
      *out = Value(s.pose.yaw);
      break;
    default:
      *out = Value(std::hypot(s.pose.x - sig.target.x, s.pose.y - sig.target.y));
      break;
  }
  return SignalRead::kValue;
}

json value_json(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kNull:
      return nullptr;
    case Value::Kind::kBool:
      return v.as_bool();
    case Value::Kind::kNumber:
      return std::isfinite(v.as_number()) ? json(v.as_number()) : json(v.repr());
    case Value::Kind::kString:
      return v.as_string();
    case Value::Kind::kList: {
      json a = json::array();
      for (const Value& e : v.as_list()) a.push_back(value_json(e));
      return a;
    }
    case Value::Kind::kMap: {
      json o = json::object();
      for (const auto& [k, e] : v.as_map()) o[k] = value_json(e);
      return o;
    }
  }
  return nullptr;
}

json excerpt_json(const Value& v) {
  if (v.is_list()) return "[" + std::to_string(v.as_list().size()) + " items]";
  if (v.is_map()) return "{" + std::to_string(v.as_map().size()) + " fields}";
  return value_json(v);
}

json excerpt_json(const json& v) {
  if (v.is_array()) return "[" + std::to_string(v.size()) + " items]";
  if (v.is_object()) return "{" + std::to_string(v.size()) + " fields}";
  return v;
}

scenario::Condition compile_condition(const std::string& text, std::vector<std::string> names,
                                      const std::string& path) {
  auto c = scenario::Condition::compile(text, std::move(names));
  if (!c) throw PlanError(path, "condition '" + text + "': " + c.error().message);
  return *c;
}

void StreamChecker::seen(SimTime t, const Sample& s, const std::string* field, const json& value,
                         const char* extra, const json& extra_value) {
  // Numbers go through the JSON-free note(); other values (strings, bools, lists) are rarer.
  if (field != nullptr) {
    if (value.is_number()) {
      note(t, s, "value", value.get<double>());
    } else {
      note(t, s, json{{"value", excerpt_json(value)}});
    }
  } else if (extra != nullptr && extra_value.is_number()) {
    note(t, s, extra, extra_value.get<double>());
  } else {
    note(t, s);
  }
}

void StreamChecker::decide(Verdict v, std::string reason, SimTime t, SimTime sim, json evidence) {
  resolve(v, std::move(reason), t, sim, std::move(evidence));
}

std::string StreamChecker::closing_phrase(SimTime t, bool at_end) const {
  if (!at_end && window().has_end()) return "by " + seconds_text(window().end_s());
  return "by the end of the timeline (" + seconds_text(t) + ")";
}

void WindowCounter::add(SimTime sim, Duration window, double messages) {
  if (!any_ || window <= Duration::zero()) {
    total_ += messages;
  } else {
    // In seconds as before: the fraction of the window since the previous report.
    total_ += messages *
              std::clamp((to_seconds(sim) - to_seconds(last_sim_)) / to_seconds(window), 0.0, 1.0);
  }
  any_ = true;
  last_sim_ = sim;
}

}  // namespace detail

namespace {

double num(const ParamValue& params, std::string_view key, double fallback) {
  const ParamValue* p = params.get(key);
  if (p == nullptr ||
      (p->kind != ParamValue::Kind::kNumber && p->kind != ParamValue::Kind::kInteger)) {
    return fallback;
  }
  return p->number;
}

std::string text(const ParamValue& params, std::string_view key) {
  const ParamValue* p = params.get(key);
  return p != nullptr && p->kind != ParamValue::Kind::kNull ? p->string : std::string();
}

// The topic of a spec (topic_rate, topic_value, message_latency), absolute.
std::string planned_topic(const scenario::AssertionSpec& spec) {
  const std::string topic = text(spec.params, "topic");
  if (topic.empty()) throw PlanError(spec.path + ".topic", spec.type + " needs a topic");
  return topic_of(spec.vehicle, topic);
}

void check_vehicle(const scenario::AssertionSpec& spec, const PlanContext& ctx, bool required) {
  if (spec.vehicle.empty()) {
    if (required) throw PlanError(spec.path + ".vehicle", spec.type + " needs a vehicle");
    return;
  }
  if (ctx.scenario.vehicle(spec.vehicle) == nullptr) {
    throw PlanError(spec.path + ".vehicle", "no vehicle '" + spec.vehicle + "' in the scenario");
  }
}

json number_or_null(double v) { return std::isfinite(v) ? json(v) : json(); }

// ---- topic_rate ----

class TopicRateChecker : public StreamChecker {
 public:
  explicit TopicRateChecker(const PlannedAssertion& p) : StreamChecker(p) {
    topic_ = p.resolved["topic"].get<std::string>();
    min_hz_ = p.resolved["min_hz"].get<double>();
    if (p.resolved.contains("max_hz")) max_hz_ = p.resolved["max_hz"].get<double>();
  }
  void on_sample(const Sample& s, SimTime t) override {
    if (s.kind != Sample::Kind::kRate || s.topic != topic_ || !in_window(t)) return;
    ++windows_;
    sum_hz_ += s.hz;
    lowest_ = std::min(lowest_, s.hz);
    highest_ = std::max(highest_, s.hz);
    counter_.add(s.sim, s.window, static_cast<double>(s.messages));
    seen(t, s);
    const bool low = s.hz < min_hz_;
    const bool high = max_hz_ >= 0 && s.hz > max_hz_;
    if (!low && !high) return;
    json ev = evidence();
    ev["failing_window"] = {{"t_s", round_to(to_seconds(t), 1e-3)},
                            {"sim_s", to_seconds(s.sim)},
                            {"hz", round_to(s.hz, 1e-3)},
                            {"window_s", to_seconds(s.window)},
                            {"messages", s.messages}};
    decide(Verdict::kFailed,
           topic_ + " published at " + fmt("%.2f", s.hz) + " Hz over the " +
               seconds_text(s.window) + " window ending at " + seconds_text(t) + ", " +
               (low ? "below min_hz " + fmt("%g", min_hz_) : "above max_hz " + fmt("%g", max_hz_)),
           t, s.sim, ev);
  }
  json metrics() const override {
    json m = json::object();
    if (windows_ > 0) {
      m["mean_hz"] = metric(sum_hz_ / static_cast<double>(windows_), "Hz");
      m["lowest_hz"] = metric(lowest_, "Hz");
      m["highest_hz"] = metric(highest_, "Hz");
    }
    m["messages"] = metric(std::round(counter_.total()), "");
    return m;
  }

 protected:
  void close(SimTime t, bool at_end) override {
    if (windows_ == 0) {
      decide(Verdict::kFailed,
             "no rate window of " + topic_ + " was measured " + closing_phrase(t, at_end), t, t,
             evidence());
      return;
    }
    std::string range = "between " + fmt("%.2f", lowest_) + " and " + fmt("%.2f", highest_) +
                        " Hz over " + std::to_string(windows_) + " windows (min_hz " +
                        fmt("%g", min_hz_) +
                        (max_hz_ >= 0 ? ", max_hz " + fmt("%g", max_hz_) : "") + ")";
    decide(Verdict::kPassed, topic_ + " published " + range, t, t, evidence());
  }

 private:
  json evidence() const {
    return {{"windows", windows_},
            {"lowest_hz", windows_ ? json(round_to(lowest_, 1e-3)) : json()},
            {"highest_hz", windows_ ? json(round_to(highest_, 1e-3)) : json()},
            {"messages", std::round(counter_.total())}};
  }
  std::string topic_;
  double min_hz_ = 0;
  double max_hz_ = -1;
  uint64_t windows_ = 0;
  double sum_hz_ = 0;
  double lowest_ = std::numeric_limits<double>::infinity();
  double highest_ = -std::numeric_limits<double>::infinity();
  WindowCounter counter_;
};

class TopicRateType : public AssertionType {
 public:
  std::string_view name() const override { return "topic_rate"; }
  PlannedAssertion plan(const scenario::AssertionSpec& spec,
                        const PlanContext& ctx) const override {
    check_vehicle(spec, ctx, false);
    PlannedAssertion p{spec, spec.vehicle, json::object(), {}};
    const std::string topic = planned_topic(spec);
    const Duration window = duration_param(spec.params, "window_s").value_or(seconds(5));
    if (window <= Duration::zero())
      throw PlanError(spec.path + ".window_s", "window_s must be positive");
    const double min_hz = num(spec.params, "min_hz", -1);
    if (min_hz < 0) throw PlanError(spec.path + ".min_hz", "topic_rate needs min_hz");
    p.resolved = {{"topic", topic}, {"min_hz", min_hz}, {"window_s", to_seconds(window)}};
    if (const double max_hz = num(spec.params, "max_hz", -1); max_hz >= 0) {
      if (max_hz < min_hz) throw PlanError(spec.path + ".max_hz", "max_hz must be at least min_hz");
      p.resolved["max_hz"] = max_hz;
    }
    p.watch.rates[topic] = window;
    return p;
  }
  std::unique_ptr<Checker> checker(const PlannedAssertion& p) const override {
    return std::make_unique<TopicRateChecker>(p);
  }
};

// ---- topic_value ----

class TopicValueChecker : public StreamChecker {
 public:
  explicit TopicValueChecker(const PlannedAssertion& p)
      : StreamChecker(p),
        topic_(p.resolved["topic"].get<std::string>()),
        field_(p.resolved["field"].get<std::string>()),
        path_(field_),
        eventually_(p.resolved["mode"].get<std::string>() == "eventually"),
        condition_(compile_condition(p.resolved["condition"].get<std::string>(), {"value"},
                                     p.spec.path + ".condition")) {}
  void on_sample(const Sample& s, SimTime t) override {
    if (s.kind != Sample::Kind::kValue || s.topic != topic_ || !in_window(t)) return;
    const Result<const json*> found = path_.find(s.message);
    if (!found.ok()) {
      seen(t, s);
      decide(
          Verdict::kFailed,
          "the field " + field_ + " of " + topic_ + " does not exist: " + found.status().message(),
          t, s.sim, evidence());
      return;
    }
    const json* f = *found;
    slot_[0] = to_value(*f);
    const Value& v = slot_[0];
    ++samples_;
    if (v.is_number() && !std::isnan(v.as_number())) {
      lowest_ = std::min(lowest_, v.as_number());
      highest_ = std::max(highest_, v.as_number());
    }
    last_ = v;
    const auto holds = condition_.holds(std::span<const Value>(slot_.data(), 1));
    if (!holds.ok()) {
      seen(t, s, &field_, *f);
      decide(Verdict::kFailed,
             "the condition '" + condition_.text() + "' cannot be evaluated for value = " +
                 v.repr() + " (" + topic_ + " " + field_ + "): " + holds.error().message,
             t, s.sim, evidence());
      return;
    }
    seen(t, s, &field_, *f, "holds", *holds);
    if (!eventually_ && !*holds) {
      json ev = evidence();
      ev["violation"] = {
          {"t_s", round_to(to_seconds(t), 1e-3)}, {"sim_s", to_seconds(s.sim)}, {"value", *f}};
      decide(Verdict::kFailed,
             topic_ + " " + field_ + " = " + v.repr() + " at " + seconds_text(t) +
                 " does not satisfy '" + condition_.text() + "'",
             t, s.sim, ev);
    } else if (eventually_ && *holds) {
      json ev = evidence();
      ev["satisfied"] = {
          {"t_s", round_to(to_seconds(t), 1e-3)}, {"sim_s", to_seconds(s.sim)}, {"value", *f}};
      decide(Verdict::kPassed,
             topic_ + " " + field_ + " = " + v.repr() + " satisfied '" + condition_.text() +
                 "' at " + seconds_text(t),
             t, s.sim, ev);
    }
  }
  json metrics() const override {
    json m = {{"samples", metric(static_cast<double>(samples_), "")}};
    if (std::isfinite(lowest_)) {
      m["lowest"] = metric(lowest_, "");
      m["highest"] = metric(highest_, "");
    }
    if (samples_ > 0) m["last"] = {{"value", value_json(last_)}, {"unit", ""}};
    return m;
  }

 protected:
  void close(SimTime t, bool at_end) override {
    if (eventually_) {
      decide(Verdict::kFailed,
             "no message of " + topic_ + " satisfied '" + condition_.text() + "' on " + field_ +
                 " " + closing_phrase(t, at_end) + " (" + std::to_string(samples_) + " messages)",
             t, t, evidence());
    } else if (samples_ == 0) {
      decide(Verdict::kFailed, "no message of " + topic_ + " " + closing_phrase(t, at_end), t, t,
             evidence());
    } else {
      decide(Verdict::kPassed,
             "all " + std::to_string(samples_) + " messages of " + topic_ + " satisfied '" +
                 condition_.text() + "' on " + field_,
             t, t, evidence());
    }
  }

 private:
  json evidence() const {
    return {{"samples", samples_},
            {"lowest", number_or_null(lowest_)},
            {"highest", number_or_null(highest_)},
            {"last", samples_ ? value_json(last_) : json()}};
  }
  std::string topic_;
  std::string field_;
  FieldPath path_;
  bool eventually_ = false;
  scenario::Condition condition_;
  std::array<Value, 1> slot_;
  uint64_t samples_ = 0;
  double lowest_ = std::numeric_limits<double>::infinity();
  double highest_ = -std::numeric_limits<double>::infinity();
  Value last_;
};

class TopicValueType : public AssertionType {
 public:
  std::string_view name() const override { return "topic_value"; }
  PlannedAssertion plan(const scenario::AssertionSpec& spec,
                        const PlanContext& ctx) const override {
    check_vehicle(spec, ctx, false);
    PlannedAssertion p{spec, spec.vehicle, json::object(), {}};
    const std::string topic = planned_topic(spec);
    const std::string field = text(spec.params, "field");
    if (field.empty()) throw PlanError(spec.path + ".field", "topic_value needs a field");
    const std::string condition = text(spec.params, "condition");
    compile_condition(condition, {"value"}, spec.path + ".condition");
    std::string mode = text(spec.params, "mode");
    if (mode.empty()) mode = "always";
    p.resolved = {{"topic", topic}, {"field", field}, {"condition", condition}, {"mode", mode}};
    p.watch.values.insert(topic);
    return p;
  }
  std::unique_ptr<Checker> checker(const PlannedAssertion& p) const override {
    return std::make_unique<TopicValueChecker>(p);
  }
};

// ---- message_latency ----

class MessageLatencyChecker : public StreamChecker {
 public:
  explicit MessageLatencyChecker(const PlannedAssertion& p) : StreamChecker(p) {
    topic_ = p.resolved["topic"].get<std::string>();
    max_ms_ = p.resolved["max_ms"].get<double>();
    statistic_ = p.resolved["statistic"].get<std::string>();
  }
  void on_sample(const Sample& s, SimTime t) override {
    if (s.kind != Sample::Kind::kLatency || s.topic != topic_ || !in_window(t)) return;
    if (s.latency.unstamped > 0) {
      seen(t, s);
      decide(Verdict::kFailed,
             std::to_string(s.latency.unstamped) + " messages of " + topic_ +
                 " carry no header stamp (in the window ending at " + seconds_text(t) + ")",
             t, s.sim, evidence());
      return;
    }
    if (s.latency.count == 0) {
      seen(t, s);  // an empty window: nothing to judge
      return;
    }
    const LatencyWindow& w = s.latency;
    const double value = statistic_ == "max"    ? w.max_ms
                         : statistic_ == "mean" ? w.mean_ms
                                                : w.p95_ms;
    ++windows_;
    p95_ = std::max(p95_, w.p95_ms);
    max_ = std::max(max_, w.max_ms);
    mean_sum_ += w.mean_ms * static_cast<double>(w.count);
    mean_n_ += static_cast<double>(w.count);
    counter_.add(s.sim, s.window, static_cast<double>(w.count));
    seen(t, s, nullptr, nullptr, "judged_ms", round_to(value, 1e-3));
    if (value <= max_ms_) return;
    json ev = evidence();
    ev["failing_window"] = {
        {"t_s", round_to(to_seconds(t), 1e-3)}, {"sim_s", to_seconds(s.sim)},
        {"window_s", to_seconds(s.window)},     {"count", w.count},
        {"mean_ms", round_to(w.mean_ms, 1e-3)}, {"max_ms", round_to(w.max_ms, 1e-3)},
        {"min_ms", round_to(w.min_ms, 1e-3)},   {"p95_ms", round_to(w.p95_ms, 1e-3)}};
    decide(Verdict::kFailed,
           topic_ + " " + statistic_ + " latency " + fmt("%.1f", value) + " ms over the " +
               seconds_text(s.window) + " window ending at " + seconds_text(t) +
               " is above max_ms " + fmt("%g", max_ms_),
           t, s.sim, ev);
  }
  json metrics() const override {
    json m = json::object();
    if (windows_ > 0) {
      m["p95_ms"] = metric(p95_, "ms");
      m["max_ms"] = metric(max_, "ms");
      m["mean_ms"] = metric(mean_sum_ / mean_n_, "ms");
    }
    m["messages"] = metric(std::round(counter_.total()), "");
    return m;
  }

 protected:
  void close(SimTime t, bool at_end) override {
    if (windows_ == 0) {
      decide(Verdict::kFailed,
             "no latency window of " + topic_ + " was measured " + closing_phrase(t, at_end), t, t,
             evidence());
      return;
    }
    decide(Verdict::kPassed,
           topic_ + " " + statistic_ + " latency stayed within " + fmt("%g", max_ms_) +
               " ms over " + std::to_string(windows_) + " windows (highest p95 " +
               fmt("%.1f", p95_) + " ms, max " + fmt("%.1f", max_) + " ms)",
           t, t, evidence());
  }

 private:
  json evidence() const {
    return {{"windows", windows_},
            {"p95_ms", windows_ ? json(round_to(p95_, 1e-3)) : json()},
            {"max_ms", windows_ ? json(round_to(max_, 1e-3)) : json()},
            {"mean_ms", windows_ ? json(round_to(mean_sum_ / mean_n_, 1e-3)) : json()},
            {"messages", std::round(counter_.total())}};
  }
  std::string topic_;
  double max_ms_ = 0;
  std::string statistic_;
  uint64_t windows_ = 0;
  double p95_ = 0;
  double max_ = 0;
  double mean_sum_ = 0;
  double mean_n_ = 0;
  WindowCounter counter_;
};

class MessageLatencyType : public AssertionType {
 public:
  std::string_view name() const override { return "message_latency"; }
  PlannedAssertion plan(const scenario::AssertionSpec& spec,
                        const PlanContext& ctx) const override {
    check_vehicle(spec, ctx, false);
    PlannedAssertion p{spec, spec.vehicle, json::object(), {}};
    const std::string topic = planned_topic(spec);
    const Duration window = duration_param(spec.params, "window_s").value_or(seconds(2));
    if (window <= Duration::zero())
      throw PlanError(spec.path + ".window_s", "window_s must be positive");
    const double max_ms = num(spec.params, "max_ms", -1);
    if (max_ms < 0) throw PlanError(spec.path + ".max_ms", "message_latency needs max_ms");
    std::string statistic = text(spec.params, "statistic");
    if (statistic.empty()) statistic = "p95";
    p.resolved = {{"topic", topic},
                  {"max_ms", max_ms},
                  {"statistic", statistic},
                  {"window_s", to_seconds(window)}};
    p.watch.latencies[topic] = window;
    return p;
  }
  std::unique_ptr<Checker> checker(const PlannedAssertion& p) const override {
    return std::make_unique<MessageLatencyChecker>(p);
  }
};

// ---- resource_usage ----

class ResourceUsageChecker : public StreamChecker {
 public:
  explicit ResourceUsageChecker(const PlannedAssertion& p) : StreamChecker(p) {
    const json& r = p.resolved;
    if (r.contains("max_cpu_pct")) max_cpu_ = r["max_cpu_pct"].get<double>();
    if (r.contains("max_memory_mb")) max_mem_ = r["max_memory_mb"].get<double>();
    window_s_ = r["window_s"].get<double>();
  }
  void on_sample(const Sample& s, SimTime t) override {
    if (s.kind != Sample::Kind::kResources || s.vehicle != planned().vehicle || !in_window(t)) {
      return;
    }
    // The CPU window's arithmetic stays in seconds, with its tolerances of 1e-9 s.
    const double ts = to_seconds(t);
    if (samples_ == 0) first_t_ = ts;
    if (samples_ > 0) interval_ = ts - last_t_;
    last_t_ = ts;
    ++samples_;
    peak_cpu_ = std::max(peak_cpu_, s.cpu_pct);
    peak_mem_ = std::max(peak_mem_, s.memory_mb);
    sum_cpu_ += s.cpu_pct;
    sum_mem_ += s.memory_mb;
    recent_.emplace_back(ts, s.cpu_pct);
    while (!recent_.empty() && recent_.front().first <= ts - window_s_ + 1e-9) recent_.pop_front();
    if (max_mem_ >= 0 && s.memory_mb > max_mem_) {
      seen(t, s);
      json ev = evidence();
      ev["violation"] = {{"t_s", round_to(to_seconds(t), 1e-3)},
                         {"sim_s", to_seconds(s.sim)},
                         {"process", s.process},
                         {"memory_mb", round_to(s.memory_mb, 1e-2)}};
      decide(Verdict::kFailed,
             planned().vehicle + "'s " + process_name(s) + " used " + fmt("%.1f", s.memory_mb) +
                 " MiB at " + seconds_text(t) + ", over max_memory_mb " + fmt("%g", max_mem_),
             t, s.sim, ev);
      return;
    }
    // Each sample is the CPU of the interval before it: the window is covered once the samples
    // since the first span window_s.
    if (max_cpu_ < 0 || interval_ <= 0 || ts - first_t_ + interval_ < window_s_ - 1e-9) {
      seen(t, s);
      return;
    }
    ++cpu_windows_;
    const double mean = window_mean();
    seen(t, s, nullptr, nullptr, "window_cpu_pct", round_to(mean, 1e-2));
    if (mean > max_cpu_) {
      json ev = evidence();
      ev["violation"] = {{"t_s", round_to(to_seconds(t), 1e-3)},
                         {"sim_s", to_seconds(s.sim)},
                         {"process", s.process},
                         {"window_s", window_s_},
                         {"window_cpu_pct", round_to(mean, 1e-2)}};
      decide(Verdict::kFailed,
             planned().vehicle + "'s " + process_name(s) + " used " + fmt("%.1f", mean) +
                 " % CPU on average over the " + seconds_text(window_s_) + " window ending at " +
                 seconds_text(t) + ", over max_cpu_pct " + fmt("%g", max_cpu_),
             t, s.sim, ev);
    }
  }
  json metrics() const override {
    json m = {{"samples", metric(static_cast<double>(samples_), "")}};
    if (samples_ > 0) {
      const double n = static_cast<double>(samples_);
      m["peak_cpu_pct"] = metric(peak_cpu_, "%");
      m["mean_cpu_pct"] = metric(sum_cpu_ / n, "%");
      m["peak_memory_mb"] = metric(peak_mem_, "MiB");
      m["mean_memory_mb"] = metric(sum_mem_ / n, "MiB");
    }
    return m;
  }

 protected:
  void close(SimTime t, bool at_end) override {
    if (samples_ == 0) {
      decide(Verdict::kFailed,
             planned().vehicle + "'s stack was not sampled " + closing_phrase(t, at_end), t, t,
             evidence());
      return;
    }
    std::string limits;
    if (max_cpu_ >= 0) limits += "CPU within " + fmt("%g", max_cpu_) + " %";
    if (max_mem_ >= 0) {
      limits += (limits.empty() ? "" : " and ") + std::string("memory within ") +
                fmt("%g", max_mem_) + " MiB";
    }
    decide(Verdict::kPassed,
           planned().vehicle + "'s stack kept " + limits + " over " + std::to_string(samples_) +
               " samples (peak " + fmt("%.1f", peak_cpu_) + " %, " + fmt("%.1f", peak_mem_) +
               " MiB)" +
               (max_cpu_ >= 0 && cpu_windows_ == 0
                    ? "; no full " + seconds_text(window_s_) + " window: CPU not judged"
                    : std::string()),
           t, t, evidence());
  }

 private:
  static std::string process_name(const Sample& s) {
    return s.process.empty() ? std::string("stack") : s.process;
  }
  double window_mean() const {
    double sum = 0;
    for (const auto& [t, c] : recent_) sum += c;
    return recent_.empty() ? 0.0 : sum / static_cast<double>(recent_.size());
  }
  json evidence() const {
    const double n = static_cast<double>(samples_);
    return {{"samples", samples_},
            {"cpu_windows", cpu_windows_},
            {"peak_cpu_pct", samples_ ? json(round_to(peak_cpu_, 1e-2)) : json()},
            {"mean_cpu_pct", samples_ ? json(round_to(sum_cpu_ / n, 1e-2)) : json()},
            {"peak_memory_mb", samples_ ? json(round_to(peak_mem_, 1e-2)) : json()},
            {"mean_memory_mb", samples_ ? json(round_to(sum_mem_ / n, 1e-2)) : json()}};
  }
  double max_cpu_ = -1;
  double max_mem_ = -1;
  double window_s_ = 5;
  uint64_t samples_ = 0;
  double first_t_ = 0;
  double last_t_ = 0;
  double interval_ = 0;
  uint64_t cpu_windows_ = 0;  // covered windows judged
  double peak_cpu_ = 0;
  double peak_mem_ = 0;
  double sum_cpu_ = 0;
  double sum_mem_ = 0;
  std::deque<std::pair<double, double>> recent_;  // (t, cpu_pct) within window_s
};

class ResourceUsageType : public AssertionType {
 public:
  std::string_view name() const override { return "resource_usage"; }
  PlannedAssertion plan(const scenario::AssertionSpec& spec,
                        const PlanContext& ctx) const override {
    check_vehicle(spec, ctx, true);
    PlannedAssertion p{spec, spec.vehicle, json::object(), {}};
    const double cpu = num(spec.params, "max_cpu_pct", -1);
    const double mem = num(spec.params, "max_memory_mb", -1);
    if (cpu < 0 && mem < 0) {
      throw PlanError(spec.path, "resource_usage needs max_cpu_pct or max_memory_mb (or both)");
    }
    const double window = to_seconds(duration_param(spec.params, "window_s").value_or(seconds(5)));
    if (window <= 0) throw PlanError(spec.path + ".window_s", "window_s must be positive");
    p.resolved = {{"container", "vehicle"}, {"window_s", window}};
    if (cpu >= 0) p.resolved["max_cpu_pct"] = cpu;
    if (mem >= 0) p.resolved["max_memory_mb"] = mem;
    p.watch.resources.insert(spec.vehicle);
    return p;
  }
  std::unique_ptr<Checker> checker(const PlannedAssertion& p) const override {
    return std::make_unique<ResourceUsageChecker>(p);
  }
};

// ---- lifecycle_state ----

// A node's name relative to its vehicle: "/ugv1/bt_navigator", "/model/ugv1/bt_navigator" and
// "bt_navigator" are the same node of ugv1.
std::string relative_node(const std::string& vehicle, const std::string& node) {
  for (const std::string& prefix : {"/model/" + vehicle + "/", "/" + vehicle + "/"}) {
    if (node.rfind(prefix, 0) == 0) return node.substr(prefix.size());
  }
  return node;
}

class LifecycleStateChecker : public StreamChecker {
 public:
  explicit LifecycleStateChecker(const PlannedAssertion& p) : StreamChecker(p) {
    node_ = p.resolved["node"].get<std::string>();
    state_ = p.resolved["state"].get<std::string>();
    always_ = p.resolved["mode"].get<std::string>() == "always";
  }
  void on_sample(const Sample& s, SimTime t) override {
    if (s.kind != Sample::Kind::kLifecycle || s.vehicle != planned().vehicle) return;
    // A sample without a node is the vehicle's: none of its nodes answers (unavailable).
    if ((!s.node.empty() && relative_node(s.vehicle, s.node) != node_) || !in_window(t)) return;
    ++samples_;
    ++states_[s.state];
    last_ = s.state;
    seen(t, s);
    if (!always_ && s.state == state_) {
      reached_at_ = t;  // the first: the verdict follows
      decide(Verdict::kPassed,
             node_ + " of " + planned().vehicle + " was " + state_ + " at " + seconds_text(t), t,
             s.sim, evidence());
    } else if (always_ && s.state != state_) {
      json ev = evidence();
      ev["violation"] = {
          {"t_s", round_to(to_seconds(t), 1e-3)}, {"sim_s", to_seconds(s.sim)}, {"state", s.state}};
      decide(Verdict::kFailed,
             node_ + " of " + planned().vehicle + " was " + s.state + ", not " + state_ + ", at " +
                 seconds_text(t),
             t, s.sim, ev);
    } else if (always_ && !reached_at_) {
      reached_at_ = t;
    }
  }
  json metrics() const override {
    json m = {{"samples", metric(static_cast<double>(samples_), "")}};
    if (reached_at_) m["reached_at_s"] = metric(round_to(to_seconds(*reached_at_), 1e-3), "s");
    return m;
  }

 protected:
  void close(SimTime t, bool at_end) override {
    const std::string who = node_ + " of " + planned().vehicle;
    if (samples_ == 0) {
      decide(Verdict::kFailed, "no state of " + who + " was observed " + closing_phrase(t, at_end),
             t, t, evidence());
    } else if (!always_) {
      decide(Verdict::kFailed,
             who + " was not " + state_ + " " + closing_phrase(t, at_end) + " (last " + last_ + ")",
             t, t, evidence());
    } else {
      decide(Verdict::kPassed,
             who + " was " + state_ + " at all " + std::to_string(samples_) + " samples", t, t,
             evidence());
    }
  }

 private:
  json evidence() const {
    return {
        {"states", states_}, {"last", last_.empty() ? json() : json(last_)}, {"samples", samples_}};
  }
  std::string node_;
  std::string state_;
  bool always_ = false;
  uint64_t samples_ = 0;
  std::map<std::string, uint64_t> states_;
  std::string last_;
  std::optional<SimTime> reached_at_;
};

class LifecycleStateType : public AssertionType {
 public:
  std::string_view name() const override { return "lifecycle_state"; }
  PlannedAssertion plan(const scenario::AssertionSpec& spec,
                        const PlanContext& ctx) const override {
    check_vehicle(spec, ctx, true);
    PlannedAssertion p{spec, spec.vehicle, json::object(), {}};
    const std::string node = relative_node(spec.vehicle, text(spec.params, "node"));
    if (node.empty()) throw PlanError(spec.path + ".node", "lifecycle_state needs a node");
    if (node[0] == '/') {
      throw PlanError(spec.path + ".node", "the node " + node + " is not under " + spec.vehicle +
                                               "'s namespace (/" + spec.vehicle + "/...)");
    }
    const std::string state = text(spec.params, "state");
    if (state.empty()) throw PlanError(spec.path + ".state", "lifecycle_state needs a state");
    std::string mode = text(spec.params, "mode");
    if (mode.empty()) mode = "eventually";
    p.resolved = {{"node", node}, {"state", state}, {"mode", mode}};
    p.watch.lifecycle.insert(spec.vehicle);
    return p;
  }
  std::unique_ptr<Checker> checker(const PlannedAssertion& p) const override {
    return std::make_unique<LifecycleStateChecker>(p);
  }
};

// ---- always, never, eventually ----

enum class Temporal { kAlways, kNever, kEventually };

class TemporalChecker : public StreamChecker {
 public:
  TemporalChecker(const PlannedAssertion& p, Temporal kind)
      : StreamChecker(p),
        kind_(kind),
        names_(signal_names(p.resolved)),
        condition_(compile_condition(p.resolved["condition"].get<std::string>(), names_,
                                     p.spec.path + ".condition")) {
    for (const json& s : p.resolved["signals"])
      signals_.push_back(SignalRef::from_json(s["signal"]));
    slots_.resize(signals_.size());
    has_.assign(signals_.size(), false);
    if (p.resolved.contains("for_s")) for_s_ = p.resolved["for_s"].get<double>();
  }
  // The holds are timed in seconds, as they were judged before times were integers (their
  // tolerances of 1e-9 s included), so that verdicts and figures stay the same.
  void on_sample(const Sample& s, SimTime t) override {
    bool changed = false;
    const std::string* field = nullptr;
    json value;
    Value v;
    for (size_t i = 0; i < signals_.size(); ++i) {
      const Result<SignalRead> r = read_signal(signals_[i], s, &v);
      if (r.ok() && *r == SignalRead::kNone) continue;
      if (!r.ok()) {  // the field does not exist in the message
        if (!in_window(t)) return;
        seen(t, s);
        decide(Verdict::kFailed,
               "signal " + names_[i] + ": the field " + signals_[i].field + " of " +
                   signals_[i].topic + " does not exist: " + r.status().message(),
               t, s.sim, evidence());
        return;
      }
      if (signals_[i].kind == SignalRef::Kind::kField) {
        field = &signals_[i].field;
        value = excerpt_json(v);
      } else if (value.is_null()) {
        value = excerpt_json(v);
      }
      slots_[i] = std::move(v);
      if (!has_[i]) {
        has_[i] = true;
        ++have_;
      }
      changed = true;
    }
    if (!changed || !in_window(t) || have_ < signals_.size()) return;
    const auto holds = condition_.holds(std::span<const Value>(slots_));
    ++evaluations_;
    const double ts = to_seconds(t);
    last_eval_t_ = ts;
    if (!holds.ok()) {
      seen(t, s, field, value);
      decide(Verdict::kFailed,
             "the condition '" + condition_.text() + "' cannot be evaluated for " + values_text() +
                 ": " + holds.error().message,
             t, s.sim, evidence());
      return;
    }
    seen(t, s, field, value, "holds", *holds);
    if (*holds) {
      if (!holding_) {
        holding_ = true;
        held_since_ = ts;
      }
      if (satisfied_at_ < 0) satisfied_at_ = ts;
      longest_ = std::max(longest_, ts - held_since_);
    } else {
      if (holding_) longest_ = std::max(longest_, ts - held_since_);
      holding_ = false;
    }
    switch (kind_) {
      case Temporal::kAlways:
        if (!*holds) fail_snapshot(t, s.sim, "violation", "did not hold");
        break;
      case Temporal::kNever:
        if (*holds) fail_snapshot(t, s.sim, "violation", "held");
        break;
      case Temporal::kEventually:
        if (*holds) check_hold(t, s.sim);
        break;
    }
  }
  void on_tick(SimTime t) override {
    if (!resolved() && kind_ == Temporal::kEventually && holding_) check_hold(t, t);
    StreamChecker::on_tick(t);
  }
  json metrics() const override {
    double longest = longest_;
    if (holding_) longest = std::max(longest, last_eval_t_ - held_since_);
    json m = {{"evaluations", metric(static_cast<double>(evaluations_), "")}};
    if (satisfied_at_ >= 0) m["satisfied_at_s"] = metric(round_to(satisfied_at_, 1e-3), "s");
    if (evaluations_ > 0) m["longest_hold_s"] = metric(round_to(longest, 1e-3), "s");
    return m;
  }

 protected:
  void close(SimTime t, bool at_end) override {
    if (kind_ == Temporal::kEventually && holding_) {
      check_hold(t, t);
      if (resolved()) return;
    }
    if (evaluations_ == 0) {
      std::string missing;
      for (size_t i = 0; i < signals_.size(); ++i) {
        if (!has_[i]) missing += (missing.empty() ? "" : ", ") + names_[i];
      }
      decide(Verdict::kFailed,
             "the condition '" + condition_.text() + "' was never evaluated " +
                 closing_phrase(t, at_end) +
                 (missing.empty() ? std::string(" (no signal changed in the window)")
                                  : " (no value for " + missing + ")"),
             t, t, evidence());
      return;
    }
    const std::string n = std::to_string(evaluations_) + " evaluations";
    switch (kind_) {
      case Temporal::kAlways:
        decide(Verdict::kPassed, "'" + condition_.text() + "' held at all " + n, t, t, evidence());
        break;
      case Temporal::kNever:
        decide(Verdict::kPassed, "'" + condition_.text() + "' never held in " + n, t, t,
               evidence());
        break;
      case Temporal::kEventually:
        decide(Verdict::kFailed,
               "'" + condition_.text() + "' did not hold" +
                   (for_s_ > 0 ? " for " + seconds_text(for_s_) : std::string()) + " " +
                   closing_phrase(t, at_end) + " (" + n + ", longest hold " +
                   seconds_text(std::max(0.0, longest_)) + ")",
               t, t, evidence());
        break;
    }
  }

 private:
  // eventually: passes once the condition has held for_s without a break (within the window).
  void check_hold(SimTime t, SimTime sim) {
    if (!holding_) return;
    if (for_s_ <= 0) {
      json ev = evidence();
      ev["satisfied"] = snapshot(t);
      decide(Verdict::kPassed, "'" + condition_.text() + "' held at " + seconds_text(t), t, sim,
             ev);
      return;
    }
    const double ts = to_seconds(t);
    const double done_at = held_since_ + for_s_;
    if (ts + 1e-9 < done_at) return;
    if (window().has_end() && done_at > window().end_s() + 1e-9) return;
    longest_ = std::max(longest_, ts - held_since_);
    json ev = evidence();
    ev["satisfied"] = snapshot(t);
    decide(Verdict::kPassed,
           "'" + condition_.text() + "' held for " + seconds_text(for_s_) + " from " +
               seconds_text(held_since_),
           t, sim, ev);
  }
  void fail_snapshot(SimTime t, SimTime sim, const char* key, const std::string& what) {
    json ev = evidence();
    ev[key] = snapshot(t);
    decide(
        Verdict::kFailed,
        "'" + condition_.text() + "' " + what + " at " + seconds_text(t) + " with " + values_text(),
        t, sim, ev);
  }
  json last_values() const {
    json v = json::object();
    for (size_t i = 0; i < signals_.size(); ++i) {
      const Value& x = slots_[i];
      v[names_[i]] = !has_[i] ? json()
                     : x.is_number() && std::isfinite(x.as_number())
                         ? json(round_to(x.as_number(), 1e-6))
                         : value_json(x);
    }
    return v;
  }
  json snapshot(SimTime t) const {
    return {{"t_s", round_to(to_seconds(t), 1e-3)}, {"values", last_values()}};
  }
  std::string values_text() const {
    std::string out;
    for (size_t i = 0; i < signals_.size(); ++i) {
      std::string r = has_[i] ? slots_[i].repr() : "(no value)";
      if (r.size() > 60) r = r.substr(0, 57) + "...";
      out += (out.empty() ? "" : ", ") + names_[i] + " = " + r;
    }
    return out;
  }
  json evidence() const {
    json e = {{"evaluations", evaluations_}, {"last_values", last_values()}};
    e["held_since_t_s"] = holding_ ? json(round_to(held_since_, 1e-3)) : json();
    return e;
  }
  static std::vector<std::string> signal_names(const json& resolved) {
    std::vector<std::string> names;
    for (const json& s : resolved["signals"]) names.push_back(s["name"].get<std::string>());
    return names;
  }
  Temporal kind_;
  std::vector<std::string> names_;
  scenario::Condition condition_;
  std::vector<SignalRef> signals_;
  std::vector<Value> slots_;
  std::vector<bool> has_;
  size_t have_ = 0;
  double for_s_ = 0;
  uint64_t evaluations_ = 0;
  double last_eval_t_ = 0;
  bool holding_ = false;
  double held_since_ = 0;
  double satisfied_at_ = -1;
  double longest_ = 0;
};

class TemporalType : public AssertionType {
 public:
  TemporalType(const char* name, Temporal kind) : name_(name), kind_(kind) {}
  std::string_view name() const override { return name_; }
  PlannedAssertion plan(const scenario::AssertionSpec& spec,
                        const PlanContext& ctx) const override {
    check_vehicle(spec, ctx, false);
    PlannedAssertion p{spec, spec.vehicle, json::object(), {}};
    const ParamValue* sigs = spec.params.get("signals");
    if (sigs == nullptr || sigs->kind != ParamValue::Kind::kMap || sigs->items.empty()) {
      throw PlanError(spec.path + ".signals", name_ + " needs one or more signals");
    }
    json signals = json::array();
    std::vector<std::string> names;
    for (size_t i = 0; i < sigs->items.size(); ++i) {
      const std::string& n = sigs->keys[i];
      const std::string path = spec.path + ".signals." + n;
      if (!scenario::is_valid_signal_name(n)) {
        throw PlanError(path, "'" + n + "' cannot name a signal (an identifier that is not a " +
                                  "function, constant or keyword)");
      }
      SignalRef s = plan_signal(sigs->items[i], spec.vehicle, ctx, path, p.watch);
      signals.push_back({{"name", n}, {"signal", s.to_json()}});
      names.push_back(n);
    }
    const std::string condition = text(spec.params, "condition");
    const scenario::Condition c = compile_condition(condition, names, spec.path + ".condition");
    const std::vector<std::string> read = c.names_read();
    for (const std::string& n : names) {
      if (std::find(read.begin(), read.end(), n) == read.end()) {
        throw PlanError(spec.path + ".signals." + n,
                        "the condition does not read the signal '" + n +
                            "' (every signal must be read; remove it or use it)");
      }
    }
    p.resolved = {{"signals", signals}, {"condition", condition}};
    if (kind_ == Temporal::kEventually) {
      if (auto f = duration_param(spec.params, "for_s"); f && *f > Duration::zero())
        p.resolved["for_s"] = to_seconds(*f);
    }
    return p;
  }
  std::unique_ptr<Checker> checker(const PlannedAssertion& p) const override {
    return std::make_unique<TemporalChecker>(p, kind_);
  }

 private:
  std::string name_;
  Temporal kind_;
};

}  // namespace

namespace detail {
void add_signal_types(AssertionTypes& types) {
  types.add(std::make_unique<TopicRateType>());
  types.add(std::make_unique<TopicValueType>());
  types.add(std::make_unique<MessageLatencyType>());
  types.add(std::make_unique<ResourceUsageType>());
  types.add(std::make_unique<LifecycleStateType>());
  types.add(std::make_unique<TemporalType>("always", Temporal::kAlways));
  types.add(std::make_unique<TemporalType>("never", Temporal::kNever));
  types.add(std::make_unique<TemporalType>("eventually", Temporal::kEventually));
}
}  // namespace detail

}  // namespace fieldproof::assertions
