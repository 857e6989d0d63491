#include "fieldproof/assertions/checker.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "builtin.hpp"
#include "util.hpp"

namespace fieldproof::assertions {

using nlohmann::json;

using detail::round_to;

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::kPending:
      return "pending";
    case Verdict::kPassed:
      return "passed";
    case Verdict::kFailed:
      return "failed";
    case Verdict::kSkipped:
      return "skipped";
  }
  return "pending";
}

json Sample::to_json() const {
  json j;
  switch (kind) {
    case Kind::kPose:
      j = {{"kind", "pose"},
           {"sim", to_seconds(sim)},
           {"model", vehicle},
           {"x", round_to(pose.x, 1e-4)},
           {"y", round_to(pose.y, 1e-4)},
           {"yaw", round_to(pose.yaw, 1e-4)}};
      break;
    case Kind::kContact:
      j = {{"kind", "contact"}, {"sim", to_seconds(sim)}, {"model", vehicle}, {"with", contacts}};
      break;
    case Kind::kClock:
      j = {{"kind", "clock"},
           {"sim", to_seconds(sim)},
           {"wall", round_to(wall_s, 1e-3)},
           {"rtf", round_to(rtf, 1e-2)}};
      break;
    case Kind::kValue:
      j = {{"kind", "value"}, {"sim", to_seconds(sim)}, {"topic", topic}, {"message", message}};
      break;
    case Kind::kRate:
      j = {{"kind", "rate"},
           {"sim", to_seconds(sim)},
           {"topic", topic},
           {"hz", round_to(hz, 1e-3)},
           {"window_s", round_to(to_seconds(window), 1e-3)},
           {"messages", messages}};
      break;
    case Kind::kLatency:
      j = {{"kind", "latency"},
           {"sim", to_seconds(sim)},
           {"topic", topic},
           {"window_s", round_to(to_seconds(window), 1e-3)},
           {"count", latency.count},
           {"mean_ms", round_to(latency.mean_ms, 1e-3)},
           {"max_ms", round_to(latency.max_ms, 1e-3)},
           {"min_ms", round_to(latency.min_ms, 1e-3)},
           {"p95_ms", round_to(latency.p95_ms, 1e-3)}};
      if (latency.unstamped) j["unstamped"] = latency.unstamped;
      break;
    case Kind::kLifecycle:
      j = {{"kind", "lifecycle"}, {"sim", to_seconds(sim)}, {"node", node}, {"state", state}};
      break;
    case Kind::kResources:
      j = {{"kind", "resources"},
           {"sim", to_seconds(sim)},
           {"process", process},
           {"cpu_pct", round_to(cpu_pct, 1e-2)},
           {"memory_mb", round_to(memory_mb, 1e-2)}};
      break;
  }
  if (!vehicle.empty() && kind != Kind::kPose && kind != Kind::kContact) j["vehicle"] = vehicle;
  return j;
}

Result<const json*> find_field(const json& message, std::string_view path) {
  const json* cur = &message;
  std::string walked;
  size_t i = 0;
  auto fail = [](const std::string& what) { return Status(StatusCode::kNotFound, what); };
  auto malformed = [](const std::string& what) {
    return Status(StatusCode::kInvalidArgument, what);
  };
  if (path.empty()) return malformed("an empty field path");
  while (i < path.size()) {
    if (path[i] == '[') {
      const size_t close = path.find(']', i);
      if (close == std::string_view::npos)
        return malformed("no ']' after '[' in '" + std::string(path) + "'");
      const std::string digits(path.substr(i + 1, close - i - 1));
      if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) {
        return malformed("index '" + digits + "' of '" + std::string(path) + "' is not a number");
      }
      const size_t index = std::stoul(digits);
      if (!cur->is_array())
        return fail((walked.empty() ? std::string("the message") : walked) + " is not a list");
      if (index >= cur->size()) {
        return fail(walked + " has " + std::to_string(cur->size()) + " items, no [" + digits + "]");
      }
      cur = &(*cur)[index];
      walked += "[" + digits + "]";
      i = close + 1;
      if (i < path.size() && path[i] == '.') ++i;
      continue;
    }
    size_t end = path.find_first_of(".[", i);
    if (end == std::string_view::npos) end = path.size();
    const std::string key(path.substr(i, end - i));
    if (key.empty()) return malformed("an empty name in '" + std::string(path) + "'");
    if (!cur->is_object())
      return fail((walked.empty() ? std::string("the message") : walked) + " has no fields");
    auto it = cur->find(key);
    if (it == cur->end()) {
      return fail("no field '" + key + "' in " +
                  (walked.empty() ? std::string("the message") : walked));
    }
    cur = &*it;
    walked += (walked.empty() ? "" : ".") + key;
    i = end;
    if (i < path.size() && path[i] == '.') ++i;
  }
  return cur;
}

const json* field_at(const json& message, std::string_view path) {
  const Result<const json*> r = find_field(message, path);
  return r.ok() ? *r : nullptr;
}

scenario::Value to_value(const json& j) {
  using scenario::Value;
  switch (j.type()) {
    case json::value_t::boolean:
      return Value(j.get<bool>());
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return Value(j.get<double>());
    case json::value_t::string:
      return Value(j.get<std::string>());
    case json::value_t::array: {
      Value::List l;
      l.reserve(j.size());
      for (const json& e : j) l.push_back(to_value(e));
      return Value(std::move(l));
    }
    case json::value_t::object: {
      Value::Map m;
      for (const auto& [k, v] : j.items()) m.emplace(k, to_value(v));
      return Value(std::move(m));
    }
    default:
      return Value(nullptr);
  }
}

bool Watch::wants(Sample::Kind kind) const {
  switch (kind) {
    case Sample::Kind::kPose:
      return !poses.empty();
    case Sample::Kind::kContact:
      return !contacts.empty();
    case Sample::Kind::kClock:
      return clock;
    case Sample::Kind::kValue:
      return !values.empty();
    case Sample::Kind::kRate:
      return !rates.empty();
    case Sample::Kind::kLatency:
      return !latencies.empty();
    case Sample::Kind::kLifecycle:
      return !lifecycle.empty();
    case Sample::Kind::kResources:
      return !resources.empty();
  }
  return false;
}

Window::Window(std::optional<Duration> after, std::optional<Duration> within) {
  if (after) start_ = SimTime::zero() + *after;
  if (within) end_ = SimTime::zero() + *within;
}

Window Window::of(const scenario::ParamValue& params) {
  std::optional<Duration> after;
  std::optional<Duration> within;
  if (const auto* a = params.get("after_s"); a && a->kind == scenario::ParamValue::Kind::kDuration)
    after = a->duration;
  if (const auto* w = params.get("within_s"); w && w->kind == scenario::ParamValue::Kind::kDuration)
    within = w->duration;
  return {after, within};
}

std::string Window::describe() const {
  if (has_end()) {
    return "the window [" + detail::seconds_text(after_s()) + ", " + detail::seconds_text(end_s()) +
           "]";
  }
  if (start_ > SimTime::zero()) return "the window from " + detail::seconds_text(after_s());
  return "the timeline";
}

void Watch::merge(const Watch& o) {
  poses.insert(o.poses.begin(), o.poses.end());
  contacts.insert(o.contacts.begin(), o.contacts.end());
  values.insert(o.values.begin(), o.values.end());
  for (const auto& [t, w] : o.rates) rates[t] = std::max(rates[t], w);
  for (const auto& [t, w] : o.latencies) latencies[t] = std::max(latencies[t], w);
  lifecycle.insert(o.lifecycle.begin(), o.lifecycle.end());
  resources.insert(o.resources.begin(), o.resources.end());
  clock = clock || o.clock;
}

std::string topic_of(const std::string& vehicle, const std::string& topic) {
  if (!topic.empty() && topic[0] == '/') return topic;
  if (vehicle.empty()) return "/" + topic;
  return "/model/" + vehicle + "/" + topic;
}

json AssertionResult::to_json() const {
  return {{"name", name},
          {"type", type},
          {"status", to_string(status)},
          {"reason", reason},
          {"t_s", round_to(to_seconds(t), 1e-3)},
          {"sim_s", to_seconds(sim)},
          {"evidence", evidence},
          {"metrics", metrics},
          {"vehicle", vehicle.empty() ? json(nullptr) : json(vehicle)},
          {"window",
           {{"after_s", round_to(window.after_s(), 1e-3)},
            {"within_s", window.has_end() ? json(round_to(window.end_s(), 1e-3)) : json(nullptr)}}},
          {"resolved", resolved}};
}

world::Pose2D PlanContext::place(const scenario::Placement& p, const std::string& path) const {
  if (!p.is_frame()) return {p.x, p.y, p.yaw.value_or(0.0)};
  auto it = frames.find(p.frame);
  if (it == frames.end()) {
    std::string known;
    for (const auto& [n, f] : frames) known += (known.empty() ? "" : ", ") + n;
    throw PlanError(path, "no frame '" + p.frame + "' in the world (frames: " + known + ")");
  }
  return it->second;
}

// ---- Checker ----

Checker::Checker(PlannedAssertion planned)
    : planned_(std::move(planned)), window_(Window::of(planned_.spec)) {
  result_.name = planned_.spec.name;
  result_.type = planned_.spec.type;
}
void Checker::on_sample(const Sample&, SimTime) {}
void Checker::on_tick(SimTime) {}
std::optional<SimTime> Checker::deadline() const {
  if (!window_.has_end()) return std::nullopt;
  return window_.end();
}
void Checker::on_action(const std::string&, ActionEvent, SimTime, const std::string&) {}
void Checker::on_verdict(const AssertionResult&, SimTime) {}

AssertionResult Checker::result() const {
  AssertionResult r = result_;
  r.metrics = metrics();
  r.vehicle = planned_.vehicle;
  r.window = window_;
  r.resolved = planned_.resolved;
  return r;
}

void Checker::resolve(Verdict status, std::string reason, SimTime t, SimTime sim, json evidence) {
  if (resolved()) return;
  result_.status = status;
  result_.reason = std::move(reason);
  result_.t = t;
  result_.sim = sim;
  if (!evidence.is_object()) evidence = json::object();
  evidence["excerpt"] = excerpt();
  result_.evidence = std::move(evidence);
}

namespace {
// Copies what the sample's kind carries (a kValue's message is left out: the checker notes the
// value it read as a field; a whole scan in every excerpt would drown the evidence).
void keep(Sample& to, const Sample& s) {
  to.kind = s.kind;
  to.sim = s.sim;
  to.vehicle = s.vehicle;
  switch (s.kind) {
    case Sample::Kind::kPose:
      to.pose = s.pose;
      break;
    case Sample::Kind::kContact:
      to.contacts = s.contacts;
      break;
    case Sample::Kind::kClock:
      to.rtf = s.rtf;
      to.wall_s = s.wall_s;
      break;
    case Sample::Kind::kValue:
      to.topic = s.topic;
      to.message = json();
      break;
    case Sample::Kind::kRate:
      to.topic = s.topic;
      to.hz = s.hz;
      to.window = s.window;
      to.messages = s.messages;
      break;
    case Sample::Kind::kLatency:
      to.topic = s.topic;
      to.window = s.window;
      to.latency = s.latency;
      break;
    case Sample::Kind::kLifecycle:
      to.node = s.node;
      to.state = s.state;
      break;
    case Sample::Kind::kResources:
      to.process = s.process;
      to.cpu_pct = s.cpu_pct;
      to.memory_mb = s.memory_mb;
      break;
  }
}
}  // namespace

void Checker::note(SimTime t, const Sample& sample, json fields) {
  if (noted_.size() < kExcerpt) noted_.emplace_back();
  Noted& n = noted_[noted_count_ % kExcerpt];
  ++noted_count_;
  n.t = t;
  keep(n.sample, sample);
  n.fields = std::move(fields);
  n.key = nullptr;
}

void Checker::note(SimTime t, const Sample& sample, const char* key, double value) {
  if (noted_.size() < kExcerpt) noted_.emplace_back();
  Noted& n = noted_[noted_count_ % kExcerpt];
  ++noted_count_;
  n.t = t;
  keep(n.sample, sample);
  n.fields = json();
  n.key = key;
  n.value = value;
}

json Checker::excerpt() const {
  json out = json::array();
  const size_t start = noted_count_ > kExcerpt ? noted_count_ % kExcerpt : 0;
  for (size_t k = 0; k < noted_.size(); ++k) {
    const Noted& n = noted_[(start + k) % noted_.size()];
    json j = n.sample.to_json();
    if (n.sample.kind == Sample::Kind::kValue) j.erase("message");
    j["t"] = round_to(to_seconds(n.t), 1e-3);
    if (n.key) j[n.key] = round_to(n.value, 1e-4);
    if (n.fields.is_object()) {
      for (auto& [k2, v] : n.fields.items()) j[k2] = v;
    }
    out.push_back(std::move(j));
  }
  return out;
}

// ---- registry ----

const AssertionTypes& AssertionTypes::builtin() {
  static const AssertionTypes* types = [] {
    auto* t = new AssertionTypes();
    detail::add_pose_types(*t);
    detail::add_timeline_types(*t);
    detail::add_geometry_types(*t);
    detail::add_signal_types(*t);
    detail::add_sequence_types(*t);
    return t;
  }();
  return *types;
}

void AssertionTypes::add(std::unique_ptr<AssertionType> type) {
  const std::string n(type->name());
  types_[n] = std::move(type);
}

const AssertionType* AssertionTypes::find(std::string_view name) const {
  auto it = types_.find(name);
  return it == types_.end() ? nullptr : it->second.get();
}

std::vector<std::string> AssertionTypes::names() const {
  std::vector<std::string> n;
  for (const auto& [k, v] : types_) n.push_back(k);
  return n;
}

// ---- Evaluator ----

namespace {
constexpr size_t kKinds = 8;  // Sample::Kind's values
}

Evaluator::Evaluator(const std::vector<PlannedAssertion>& planned, const AssertionTypes& types,
                     OnResolved on_resolved)
    : by_kind_(kKinds), on_resolved_(std::move(on_resolved)) {
  for (const PlannedAssertion& p : planned) {
    const AssertionType* type = types.find(p.spec.type);
    if (!type) continue;  // refused at planning
    const size_t i = checkers_.size();
    checkers_.push_back(type->checker(p));
    reported_.push_back(false);
    abort_.push_back(p.spec.on_fail == scenario::OnFail::kAbort);
    for (size_t k = 0; k < kKinds; ++k) {
      // Clock samples (once a second) go to every checker.
      const auto kind = static_cast<Sample::Kind>(k);
      if (kind == Sample::Kind::kClock || p.watch.wants(kind)) by_kind_[k].push_back(i);
    }
    tick_.push_back(i);
  }
}

void Evaluator::report(size_t i, AssertionResult r) {
  reported_[i] = true;
  resolved_order_.push_back(std::move(r));
  const AssertionResult& done = resolved_order_.back();
  if (on_resolved_) on_resolved_(done);
  if (abort_[i] && done.status == Verdict::kFailed && !aborted_ && !finished_) {
    aborted_ = resolved_order_.size() - 1;
    if (on_abort_) on_abort_(resolved_order_[*aborted_]);
  }
}

void Evaluator::collect(SimTime t) {
  dirty_ = false;
  // A verdict may settle another checker's (on_verdict); loop until nothing new resolves.
  bool any = false;
  bool again = true;
  while (again) {
    again = false;
    for (size_t i = 0; i < checkers_.size(); ++i) {
      if (reported_[i] || !checkers_[i]->resolved()) continue;
      report(i, checkers_[i]->result());
      const AssertionResult r = resolved_order_.back();
      for (size_t j = 0; j < checkers_.size(); ++j) {
        if (j != i && !checkers_[j]->resolved()) checkers_[j]->on_verdict(r, t);
      }
      again = true;
      any = true;
    }
  }
  if (!any) return;
  // Resolved checkers take no more of the stream.
  auto gone = [this](size_t i) { return reported_[i]; };
  for (auto& v : by_kind_) v.erase(std::remove_if(v.begin(), v.end(), gone), v.end());
  tick_.erase(std::remove_if(tick_.begin(), tick_.end(), gone), tick_.end());
}

void Evaluator::on_sample(const Sample& sample, SimTime t) {
  const size_t k = static_cast<size_t>(sample.kind);
  if (k >= kKinds) return;
  for (size_t i : by_kind_[k]) {
    Checker& c = *checkers_[i];
    if (c.resolved()) continue;
    c.on_sample(sample, t);
    if (c.resolved()) dirty_ = true;
  }
  if (dirty_) collect(t);
}

void Evaluator::on_tick(SimTime t) {
  for (size_t i : tick_) {
    if (!checkers_[i]->resolved()) checkers_[i]->on_tick(t);
  }
  collect(t);
}

std::optional<SimTime> Evaluator::next_deadline() const {
  std::optional<SimTime> next;
  for (size_t i : tick_) {
    if (checkers_[i]->resolved()) continue;
    const auto d = checkers_[i]->deadline();
    if (d && (!next || *d < *next)) next = d;
  }
  return next;
}

void Evaluator::on_action(const std::string& label, ActionEvent event, SimTime t,
                          const std::string& status) {
  for (size_t i : tick_) {
    if (!checkers_[i]->resolved()) checkers_[i]->on_action(label, event, t, status);
  }
  collect(t);
}

void Evaluator::finish(SimTime t) {
  // Failures from here on cancel nothing: the timeline has completed.
  finished_ = true;
  // Checkers that wait for others' verdicts (depends_on) are settled after them.
  std::map<std::string, size_t, std::less<>> index;
  for (size_t i = 0; i < checkers_.size(); ++i) index[checkers_[i]->planned().spec.name] = i;
  const auto ready = [&](size_t i) {
    for (const std::string& d : checkers_[i]->depends_on()) {
      auto it = index.find(d);
      if (it != index.end() && it->second != i && !checkers_[it->second]->resolved()) return false;
    }
    return true;
  };
  bool progress = true;
  while (progress) {
    progress = false;
    for (size_t i = 0; i < checkers_.size(); ++i) {
      if (checkers_[i]->resolved() || !ready(i)) continue;
      checkers_[i]->on_finish(t);
      collect(t);
      progress = true;
    }
  }
  for (auto& c : checkers_) {  // a cycle of dependencies: in the scenario's order
    if (!c->resolved()) c->on_finish(t);
    collect(t);
  }
  collect(t);
}

void Evaluator::skip_pending(const std::string& reason, SimTime t) {
  collect(t);
  finished_ = true;
  for (size_t i = 0; i < checkers_.size(); ++i) {
    if (reported_[i]) continue;
    // The checker's measurements and excerpt stay; the verdict is skipped.
    checkers_[i]->resolve(Verdict::kSkipped, reason, t, t);
    report(i, checkers_[i]->result());
  }
  tick_.clear();
  for (auto& v : by_kind_) v.clear();
}

bool Evaluator::skip(const std::string& name, const std::string& reason, SimTime t) {
  for (size_t i = 0; i < checkers_.size(); ++i) {
    if (checkers_[i]->planned().spec.name != name) continue;
    if (!checkers_[i]->resolved()) {
      checkers_[i]->resolve(Verdict::kSkipped, reason, t, t);
      collect(t);
    }
    return true;
  }
  return false;
}

std::vector<AssertionResult> Evaluator::results() const {
  std::vector<AssertionResult> out;
  for (size_t i = 0; i < checkers_.size(); ++i) {
    const std::string& name = checkers_[i]->planned().spec.name;
    AssertionResult r = checkers_[i]->result();
    for (const auto& done : resolved_order_) {
      if (done.name == name) r = done;
    }
    out.push_back(r);
  }
  return out;
}

const AssertionResult* Evaluator::first_failed() const {
  for (const auto& r : resolved_order_) {
    if (r.status == Verdict::kFailed) return &r;
  }
  return nullptr;
}

size_t Evaluator::failed_count() const {
  size_t n = 0;
  for (const auto& r : resolved_order_) n += r.status == Verdict::kFailed;
  return n;
}

const AssertionResult* Evaluator::aborted_by() const {
  return aborted_ ? &resolved_order_[*aborted_] : nullptr;
}

std::string Evaluator::abort_reason() const {
  const AssertionResult* a = aborted_by();
  if (!a) return "";
  return "assertion " + a->name + " failed: " + a->reason +
         " (on_fail: abort, the timeline was cancelled)";
}

std::string Evaluator::abort_skip_reason() const {
  const AssertionResult* a = aborted_by();
  if (!a) return "";
  return "the timeline was cancelled: assertion " + a->name + " failed (on_fail: abort)";
}

}  // namespace fieldproof::assertions
