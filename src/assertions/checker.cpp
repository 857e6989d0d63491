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
using detail::sim_at;
using detail::sim_s;

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
           {"sim", sim_s(sim)},
           {"model", vehicle},
           {"x", round_to(pose.x, 1e-4)},
           {"y", round_to(pose.y, 1e-4)},
           {"yaw", round_to(pose.yaw, 1e-4)}};
      break;
    case Kind::kContact:
      j = {{"kind", "contact"}, {"sim", sim_s(sim)}, {"model", vehicle}, {"with", contacts}};
      break;
    case Kind::kClock:
      j = {{"kind", "clock"},
           {"sim", sim_s(sim)},
           {"wall", round_to(wall_s, 1e-3)},
           {"rtf", round_to(rtf, 1e-2)}};
      break;
    case Kind::kValue:
      j = {{"kind", "value"}, {"sim", sim_s(sim)}, {"topic", topic}, {"message", message}};
      break;
    case Kind::kRate:
      j = {{"kind", "rate"},
           {"sim", sim_s(sim)},
           {"topic", topic},
           {"hz", round_to(hz, 1e-3)},
           {"window_s", round_to(window_s, 1e-3)},
           {"messages", messages}};
      break;
    case Kind::kLatency:
      j = {{"kind", "latency"},
           {"sim", sim_s(sim)},
           {"topic", topic},
           {"window_s", round_to(window_s, 1e-3)},
           {"count", latency.count},
           {"mean_ms", round_to(latency.mean_ms, 1e-3)},
           {"max_ms", round_to(latency.max_ms, 1e-3)},
           {"min_ms", round_to(latency.min_ms, 1e-3)},
           {"p95_ms", round_to(latency.p95_ms, 1e-3)}};
      break;
    case Kind::kLifecycle:
      j = {{"kind", "lifecycle"}, {"sim", sim_s(sim)}, {"node", node}, {"state", state}};
      break;
    case Kind::kResources:
      j = {{"kind", "resources"},
           {"sim", sim_s(sim)},
           {"process", process},
           {"cpu_pct", round_to(cpu_pct, 1e-2)},
           {"memory_mb", round_to(memory_mb, 1e-2)}};
      break;
  }
  if (!vehicle.empty() && kind != Kind::kPose && kind != Kind::kContact) j["vehicle"] = vehicle;
  return j;
}

const json* field_at(const json& message, std::string_view path, std::string* why) {
  const json* cur = &message;
  std::string walked;
  size_t i = 0;
  auto fail = [&](const std::string& what) -> const json* {
    if (why) *why = what;
    return nullptr;
  };
  if (path.empty()) return fail("an empty field path");
  while (i < path.size()) {
    if (path[i] == '[') {
      const size_t close = path.find(']', i);
      if (close == std::string_view::npos)
        return fail("no ']' after '[' in '" + std::string(path) + "'");
      const std::string digits(path.substr(i + 1, close - i - 1));
      if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) {
        return fail("index '" + digits + "' of '" + std::string(path) + "' is not a number");
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
    if (key.empty()) return fail("an empty name in '" + std::string(path) + "'");
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

void Watch::merge(const Watch& o) {
  poses.insert(o.poses.begin(), o.poses.end());
  contacts.insert(o.contacts.begin(), o.contacts.end());
  values.insert(o.values.begin(), o.values.end());
  for (const auto& [t, w] : o.rates) rates[t] = std::max(rates[t], w);
  for (const auto& [t, w] : o.latencies) latencies[t] = std::max(latencies[t], w);
  lifecycle.insert(o.lifecycle.begin(), o.lifecycle.end());
  resources.insert(o.resources.begin(), o.resources.end());
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
          {"t_s", round_to(t_s, 1e-3)},
          {"sim_s", sim_s(sim)},
          {"evidence", evidence},
          {"metrics", metrics}};
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

Checker::Checker(PlannedAssertion planned) : planned_(std::move(planned)) {
  result_.name = planned_.spec.name;
  result_.type = planned_.spec.type;
}
void Checker::on_sample(const Sample&, double) {}
void Checker::on_tick(double) {}
void Checker::on_action(const std::string&, ActionEvent, double, const std::string&) {}
void Checker::on_verdict(const AssertionResult&, double) {}

AssertionResult Checker::result() const {
  AssertionResult r = result_;
  r.metrics = metrics();
  return r;
}

void Checker::resolve(Verdict status, std::string reason, double t, SimTime sim, json evidence) {
  if (resolved()) return;
  result_.status = status;
  result_.reason = std::move(reason);
  result_.t_s = t;
  result_.sim = sim;
  if (!evidence.is_object()) evidence = json::object();
  evidence["excerpt"] = excerpt_;
  result_.evidence = std::move(evidence);
}

void Checker::note(double t, const Sample& sample, json fields) {
  json j = sample.to_json();
  j["t"] = round_to(t, 1e-3);
  for (auto& [k, v] : fields.items()) j[k] = v;
  excerpt_.push_back(std::move(j));
  if (excerpt_.size() > 6) excerpt_.erase(excerpt_.begin());
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

Evaluator::Evaluator(const std::vector<PlannedAssertion>& planned, const AssertionTypes& types,
                     OnResolved on_resolved)
    : on_resolved_(std::move(on_resolved)) {
  for (const PlannedAssertion& p : planned) {
    const AssertionType* type = types.find(p.spec.type);
    if (!type) continue;  // refused at planning
    checkers_.push_back(type->checker(p));
    reported_.push_back(false);
  }
}

void Evaluator::collect(double t) {
  // A verdict may settle another checker's (on_verdict); loop until nothing new resolves.
  bool again = true;
  while (again) {
    again = false;
    for (size_t i = 0; i < checkers_.size(); ++i) {
      if (reported_[i] || !checkers_[i]->resolved()) continue;
      reported_[i] = true;
      AssertionResult r = checkers_[i]->result();
      resolved_order_.push_back(r);
      if (on_resolved_) on_resolved_(r);
      for (size_t j = 0; j < checkers_.size(); ++j) {
        if (j != i && !checkers_[j]->resolved()) checkers_[j]->on_verdict(r, t);
      }
      again = true;
    }
  }
}

void Evaluator::on_sample(const Sample& sample, double t) {
  for (auto& c : checkers_) {
    if (!c->resolved()) c->on_sample(sample, t);
  }
  collect(t);
}

void Evaluator::on_tick(double t) {
  for (auto& c : checkers_) {
    if (!c->resolved()) c->on_tick(t);
  }
  collect(t);
}

void Evaluator::on_action(const std::string& label, ActionEvent event, double t,
                          const std::string& status) {
  for (auto& c : checkers_) {
    if (!c->resolved()) c->on_action(label, event, t, status);
  }
  collect(t);
}

void Evaluator::finish(double t) {
  for (auto& c : checkers_) {
    if (!c->resolved()) c->on_finish(t);
  }
  collect(t);
}

namespace {
class Skipper : public Checker {
 public:
  using Checker::Checker;
  void on_finish(double) override {}
  void skip(const std::string& reason, double t) {
    resolve(Verdict::kSkipped, reason, t, sim_at(t));
  }
};
}  // namespace

void Evaluator::skip_pending(const std::string& reason, double t) {
  for (size_t i = 0; i < checkers_.size(); ++i) {
    if (checkers_[i]->resolved()) continue;
    // Keep the measurements, take a skipped verdict.
    const json m = checkers_[i]->metrics();
    auto s = std::make_unique<Skipper>(checkers_[i]->planned());
    s->skip(reason, t);
    AssertionResult r = s->result();
    r.metrics = m;
    reported_[i] = true;
    resolved_order_.push_back(r);
    if (on_resolved_) on_resolved_(r);
  }
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

}  // namespace fieldproof::assertions
