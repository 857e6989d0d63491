// The KPI collectors and the run's flat KPI map (docs/assertions.md, "KPI collectors").
#include "fieldproof/assertions/kpis.hpp"

#include <cstdio>
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "builtin.hpp"
#include "util.hpp"

namespace fieldproof::assertions {

using nlohmann::json;
using scenario::ParamValue;
using namespace detail;  // NOLINT(google-build-using-namespace): the part's own helpers

std::string_view to_string(KpiStatus s) {
  switch (s) {
    case KpiStatus::kPending:
      return "pending";
    case KpiStatus::kMeasured:
      return "measured";
    case KpiStatus::kMissing:
      return "missing";
  }
  return "pending";
}

json KpiResult::to_json() const {
  return {{"name", name},     {"type", type},         {"status", to_string(status)},
          {"reason", reason}, {"evidence", evidence}, {"metrics", metrics}};
}

// ---- Collector ----

Collector::Collector(PlannedKpi planned)
    : planned_(std::move(planned)), window_(Window::of(planned_.spec.params)) {}
void Collector::on_sample(const Sample&, SimTime) {}
void Collector::on_tick(SimTime) {}
void Collector::on_action(const std::string&, ActionEvent, SimTime, const std::string&) {}

void Collector::settle(KpiStatus status, std::string reason, json evidence) {
  if (settled()) return;
  status_ = status;
  reason_ = std::move(reason);
  if (!evidence.is_object()) evidence = json::object();
  json excerpt = json::array();
  const size_t start = noted_count_ > noted_.size() ? noted_count_ % noted_.size() : 0;
  for (size_t k = 0; k < noted_.size(); ++k) {
    const Noted& n = noted_[(start + k) % noted_.size()];
    json j = n.sample.to_json();
    if (n.sample.kind == Sample::Kind::kValue) j.erase("message");
    j["t"] = round_to(to_seconds(n.t), 1e-3);
    if (n.key) j[n.key] = round_to(n.value, 1e-4);
    excerpt.push_back(std::move(j));
  }
  evidence["excerpt"] = std::move(excerpt);
  evidence_ = std::move(evidence);
}

void Collector::note(SimTime t, const Sample& sample, const char* key, double value) {
  constexpr size_t kExcerpt = 6;
  if (noted_.size() < kExcerpt) noted_.emplace_back();
  Noted& n = noted_[noted_count_ % kExcerpt];
  ++noted_count_;
  n.t = t;
  n.sample.kind = sample.kind;
  n.sample.sim = sample.sim;
  n.sample.vehicle = sample.vehicle;
  n.sample.pose = sample.pose;
  n.sample.topic = sample.topic;
  n.sample.hz = sample.hz;
  n.sample.window = sample.window;
  n.sample.messages = sample.messages;
  n.sample.latency = sample.latency;
  n.sample.process = sample.process;
  n.sample.cpu_pct = sample.cpu_pct;
  n.sample.memory_mb = sample.memory_mb;
  n.key = key;
  n.value = value;
}

KpiResult Collector::result() const {
  KpiResult r;
  r.name = planned_.spec.name;
  r.type = planned_.spec.type;
  r.status = status_;
  r.reason = reason_;
  r.evidence = evidence_;
  r.metrics = metrics();
  return r;
}

namespace {

// ---- path ----

class PathCollector : public Collector {
 public:
  explicit PathCollector(const PlannedKpi& p) : Collector(p) {
    action_ = p.resolved.value("action", "");
    if (p.resolved.contains("target")) {
      target_ = world::Pose2D{p.resolved["target"]["x"].get<double>(),
                              p.resolved["target"]["y"].get<double>(), 0};
    }
  }
  void on_action(const std::string& label, ActionEvent event, SimTime,
                 const std::string&) override {
    if (action_.empty() || label != action_) return;
    open_ = event == ActionEvent::kStart;
    if (!open_) done_ = true;
  }
  void on_sample(const Sample& s, SimTime t) override {
    if (s.kind != Sample::Kind::kPose || s.vehicle != planned().vehicle) return;
    if (action_.empty() ? !window().contains(t) : !open_) return;
    meter_.add(s.pose, t);
    note(t, s, "path_m", meter_.path_m());
  }
  void finish(SimTime) override {
    if (meter_.poses() < 2) {
      settle(KpiStatus::kMissing, "fewer than two poses of " + planned().vehicle + " in " +
                                      (action_.empty() ? window().describe() : action_ + "'s run"));
      return;
    }
    settle(KpiStatus::kMeasured,
           planned().vehicle + " drove " + fmt("%.2f", meter_.path_m()) + " m (efficiency " +
               fmt("%.2f", meter_.efficiency(target_)) + ")",
           {{"samples", meter_.poses()}});
  }
  json metrics() const override {
    return meter_.poses() < 2 ? json::object() : meter_.metrics(target_);
  }

 private:
  std::string action_;
  bool open_ = false;
  bool done_ = false;
  std::optional<world::Pose2D> target_;
  PathMeter meter_;
};

// ---- mission_time ----

class MissionTimeCollector : public Collector {
 public:
  explicit MissionTimeCollector(const PlannedKpi& p)
      : Collector(p),
        span_(p.resolved["start"].get<std::string>(), p.resolved["end"].get<std::string>()) {}
  void on_action(const std::string& label, ActionEvent event, SimTime t,
                 const std::string& status) override {
    span_.on_action(label, event, t, status);
  }
  void finish(SimTime t) override {
    span_.finish(t);
    if (auto d = span_.duration()) {
      settle(KpiStatus::kMeasured, "the span took " + seconds_text(*d), span_.evidence());
    } else if (!span_.started()) {
      settle(KpiStatus::kMissing, span_.start() + " never started", span_.evidence());
    } else {
      settle(KpiStatus::kMissing,
             span_.end() + (span_.failed() ? " ended " + span_.end_status() : " never completed"),
             span_.evidence());
    }
  }
  json metrics() const override { return span_.metrics(); }

 private:
  SpanClock span_;
};

// ---- distance ----

class DistanceCollector : public Collector {
 public:
  explicit DistanceCollector(const PlannedKpi& p)
      : Collector(p), meter_(make_distance_meter(p.vehicle, p.resolved["to"])) {}
  void on_sample(const Sample& s, SimTime t) override {
    if (s.kind != Sample::Kind::kPose || !window().contains(t)) return;
    if (meter_.add(s, t)) note(t, s, "distance_m", meter_.distance());
  }
  void finish(SimTime) override {
    if (meter_.measured() == 0) {
      settle(KpiStatus::kMissing, "no distance was measured in " + window().describe());
      return;
    }
    settle(
        KpiStatus::kMeasured,
        "closest " + fmt("%.2f", meter_.closest()) + " m at " + seconds_text(meter_.closest_at()),
        {{"closest", meter_.closest_evidence()}, {"samples", meter_.measured()}});
  }
  json metrics() const override { return meter_.metrics(); }

 private:
  DistanceMeter meter_;
};

// Messages over windows reported once a second: the first window counts whole, each later one
// adds its count over the simulated time since the previous report (exact for a steady stream).
class WindowCounter {
 public:
  void add(double count, Duration window, SimTime sim) {
    if (!any_) {
      total_ += count;
    } else if (window > Duration::zero()) {
      const double dt = to_seconds(sim) - to_seconds(last_);
      total_ += count * std::min(1.0, std::max(0.0, dt / to_seconds(window)));
    }
    any_ = true;
    last_ = sim;
  }
  double total() const { return std::round(total_); }

 private:
  bool any_ = false;
  double total_ = 0;
  SimTime last_;
};

// ---- rate ----

class RateCollector : public Collector {
 public:
  explicit RateCollector(const PlannedKpi& p) : Collector(p) {
    topic_ = p.resolved["topic"].get<std::string>();
  }
  void on_sample(const Sample& s, SimTime t) override {
    if (s.kind != Sample::Kind::kRate || s.topic != topic_ || !window().contains(t)) return;
    ++windows_;
    sum_hz_ += s.hz;
    lowest_ = std::min(lowest_, s.hz);
    highest_ = std::max(highest_, s.hz);
    counter_.add(static_cast<double>(s.messages), s.window, s.sim);
    note(t, s);
  }
  void finish(SimTime) override {
    if (windows_ == 0) {
      settle(KpiStatus::kMissing, "no rate window of " + topic_ + " was measured");
      return;
    }
    settle(KpiStatus::kMeasured,
           topic_ + ": mean " + fmt("%.2f", sum_hz_ / static_cast<double>(windows_)) + " Hz over " +
               std::to_string(windows_) + " windows",
           {{"windows", windows_}});
  }
  json metrics() const override {
    if (windows_ == 0) return json::object();
    return {{"mean_hz", metric(round_to(sum_hz_ / static_cast<double>(windows_), 1e-3), "Hz")},
            {"lowest_hz", metric(round_to(lowest_, 1e-3), "Hz")},
            {"highest_hz", metric(round_to(highest_, 1e-3), "Hz")},
            {"messages", metric(counter_.total(), "")}};
  }

 private:
  std::string topic_;
  uint64_t windows_ = 0;
  double sum_hz_ = 0;
  double lowest_ = std::numeric_limits<double>::infinity();
  double highest_ = 0;
  WindowCounter counter_;
};

// ---- latency ----

class LatencyCollector : public Collector {
 public:
  explicit LatencyCollector(const PlannedKpi& p) : Collector(p) {
    topic_ = p.resolved["topic"].get<std::string>();
  }
  void on_sample(const Sample& s, SimTime t) override {
    if (s.kind != Sample::Kind::kLatency || s.topic != topic_ || !window().contains(t)) return;
    if (s.latency.count == 0) return;
    ++windows_;
    p95_ = std::max(p95_, s.latency.p95_ms);
    max_ = std::max(max_, s.latency.max_ms);
    weighted_ += s.latency.mean_ms * static_cast<double>(s.latency.count);
    weight_ += static_cast<double>(s.latency.count);
    counter_.add(static_cast<double>(s.latency.count), s.window, s.sim);
    note(t, s, "p95_ms", s.latency.p95_ms);
  }
  void finish(SimTime) override {
    if (windows_ == 0) {
      settle(KpiStatus::kMissing, "no latency window of " + topic_ + " was measured");
      return;
    }
    settle(KpiStatus::kMeasured,
           topic_ + ": p95 " + fmt("%.1f", p95_) + " ms, max " + fmt("%.1f", max_) + " ms",
           {{"windows", windows_}});
  }
  json metrics() const override {
    if (windows_ == 0) return json::object();
    return {{"p95_ms", metric(round_to(p95_, 1e-3), "ms")},
            {"max_ms", metric(round_to(max_, 1e-3), "ms")},
            {"mean_ms", metric(round_to(weight_ > 0 ? weighted_ / weight_ : 0.0, 1e-3), "ms")},
            {"messages", metric(counter_.total(), "")}};
  }

 private:
  std::string topic_;
  uint64_t windows_ = 0;
  double p95_ = 0;
  double max_ = 0;
  double weighted_ = 0;
  double weight_ = 0;
  WindowCounter counter_;
};

// ---- resources ----

class ResourcesCollector : public Collector {
 public:
  explicit ResourcesCollector(const PlannedKpi& p) : Collector(p) {}
  void on_sample(const Sample& s, SimTime t) override {
    if (s.kind != Sample::Kind::kResources || s.vehicle != planned().vehicle) return;
    if (!window().contains(t)) return;
    ++samples_;
    peak_cpu_ = std::max(peak_cpu_, s.cpu_pct);
    sum_cpu_ += s.cpu_pct;
    peak_mem_ = std::max(peak_mem_, s.memory_mb);
    sum_mem_ += s.memory_mb;
    note(t, s);
  }
  void finish(SimTime) override {
    if (samples_ == 0) {
      settle(KpiStatus::kMissing, "the stack of " + planned().vehicle + " was not sampled");
      return;
    }
    settle(KpiStatus::kMeasured, "peak CPU " + fmt("%.1f", peak_cpu_) + " %, peak memory " +
                                     fmt("%.1f", peak_mem_) + " MiB over " +
                                     std::to_string(samples_) + " samples");
  }
  json metrics() const override {
    if (samples_ == 0) return json::object();
    const double n = static_cast<double>(samples_);
    return {{"peak_cpu_pct", metric(round_to(peak_cpu_, 1e-2), "%")},
            {"mean_cpu_pct", metric(round_to(sum_cpu_ / n, 1e-2), "%")},
            {"peak_memory_mb", metric(round_to(peak_mem_, 1e-2), "MiB")},
            {"mean_memory_mb", metric(round_to(sum_mem_ / n, 1e-2), "MiB")},
            {"samples", metric(n, "")}};
  }

 private:
  uint64_t samples_ = 0;
  double peak_cpu_ = 0, sum_cpu_ = 0, peak_mem_ = 0, sum_mem_ = 0;
};

// ---- value ----

class ValueCollector : public Collector {
 public:
  explicit ValueCollector(const PlannedKpi& p) : Collector(p) {
    topic_ = p.resolved["topic"].get<std::string>();
    field_ = p.resolved["field"].get<std::string>();
    if (p.resolved.contains("count_if")) {
      auto c = scenario::Condition::compile(p.resolved["count_if"].get<std::string>(), {"value"});
      if (c.ok()) count_if_ = *c;  // refused at planning otherwise
    }
  }
  void on_sample(const Sample& s, SimTime t) override {
    if (s.kind != Sample::Kind::kValue || s.topic != topic_ || !window().contains(t)) return;
    const Result<const json*> found = find_field(s.message, field_);
    if (!found.ok()) {
      if (error_.empty()) error_ = topic_ + ": " + found.status().message();
      return;
    }
    const json* v = *found;
    ++samples_;
    last_ = *v;
    if (v->is_number() || v->is_boolean()) {
      const double x = v->is_boolean() ? (v->get<bool>() ? 1.0 : 0.0) : v->get<double>();
      ++numbers_;
      min_ = std::min(min_, x);
      max_ = std::max(max_, x);
      sum_ += x;
      note(t, s, "value", x);
    } else {
      note(t, s);
    }
    if (count_if_) {
      const scenario::Value value = to_value(*v);
      auto r = count_if_->holds(std::span<const scenario::Value>(&value, 1));
      if (!r.ok()) {
        if (error_.empty()) error_ = "count_if: " + r.error().message;
      } else if (*r) {
        ++count_;
      }
    }
  }
  void finish(SimTime) override {
    if (samples_ == 0) {
      settle(KpiStatus::kMissing,
             error_.empty() ? "no message of " + topic_ + " in " + window().describe() : error_);
      return;
    }
    json e = {{"last", last_}};
    if (!error_.empty()) e["error"] = error_;
    settle(KpiStatus::kMeasured,
           std::to_string(samples_) + " values of " + topic_ + " " + field_ +
               (count_if_ ? " (" + std::to_string(count_) + " satisfied count_if)" : ""),
           e);
  }
  json metrics() const override {
    json m = {{"samples", metric(static_cast<double>(samples_), "")}};
    if (numbers_) {
      m["min"] = metric(min_, "");
      m["max"] = metric(max_, "");
      m["mean"] = metric(round_to(sum_ / static_cast<double>(numbers_), 1e-6), "");
    }
    if (samples_) m["last"] = {{"value", last_}, {"unit", ""}};
    if (count_if_) m["count"] = metric(static_cast<double>(count_), "");
    return m;
  }

 private:
  std::string topic_;
  std::string field_;
  std::optional<scenario::Condition> count_if_;
  uint64_t samples_ = 0;
  uint64_t numbers_ = 0;
  uint64_t count_ = 0;
  double min_ = std::numeric_limits<double>::infinity();
  double max_ = -std::numeric_limits<double>::infinity();
  double sum_ = 0;
  json last_;
  std::string error_;
};

// ---- link ----

// The vehicle's link_state (docs/network.md), integrated over simulated time: each message holds
// until the next one (or the window's end).
class LinkCollector : public Collector {
 public:
  explicit LinkCollector(const PlannedKpi& p) : Collector(p) {
    topic_ = p.resolved["topic"].get<std::string>();
  }
  void on_sample(const Sample& s, SimTime t) override {
    if (s.kind != Sample::Kind::kValue || s.topic != topic_ || !window().contains(t)) return;
    const json* up = s.message.contains("up") ? &s.message["up"] : nullptr;
    const bool is_up = up != nullptr && up->is_boolean() && up->get<bool>();
    const double q = s.message.contains("quality") && s.message["quality"].is_number()
                         ? s.message["quality"].get<double>()
                         : 0.0;
    advance(t);
    if (samples_ == 0 || (last_up_ && !is_up)) {
      if (!is_up) {
        ++outages_;
        down_since_ = t;
      }
    }
    if (!last_up_ && is_up && samples_ > 0) {
      longest_ = std::max(longest_, t - down_since_);
    }
    ++samples_;
    last_up_ = is_up;
    last_q_ = q;
    min_q_ = std::min(min_q_, q);
    note(t, s, "quality", q);
  }
  void finish(SimTime t) override {
    if (samples_ == 0) {
      settle(KpiStatus::kMissing, "no link_state of " + planned().vehicle + " in " +
                                      window().describe() + " (has it a link in network?)");
      return;
    }
    advance(window().has_end() ? std::min(t, window().end()) : t);
    if (!last_up_) longest_ = std::max(longest_, last_t_ - down_since_);
    char text[96];
    std::snprintf(text, sizeof text, "%llu outage(s), %.3f s down",
                  static_cast<unsigned long long>(outages_), to_seconds(down_));
    settle(KpiStatus::kMeasured, text);
  }
  json metrics() const override {
    json m = {{"samples", metric(static_cast<double>(samples_), "")},
              {"outages", metric(static_cast<double>(outages_), "")},
              {"down_s", metric(round_to(to_seconds(down_), 1e-6), "s")},
              {"longest_outage_s", metric(round_to(to_seconds(longest_), 1e-6), "s")}};
    if (samples_) {
      m["min_quality"] = metric(min_q_, "");
      m["mean_quality"] = metric(
          span_ > Duration::zero() ? round_to(q_integral_ / to_seconds(span_), 1e-6) : last_q_, "");
    }
    return m;
  }

 private:
  void advance(SimTime t) {
    if (samples_ > 0 && t > last_t_) {
      const Duration dt = t - last_t_;
      if (!last_up_) down_ += dt;
      q_integral_ += last_q_ * to_seconds(dt);  // quality x seconds
      span_ += dt;
    }
    last_t_ = std::max(last_t_, t);
  }
  std::string topic_;
  uint64_t samples_ = 0;
  uint64_t outages_ = 0;
  bool last_up_ = true;
  double last_q_ = 0.0;
  SimTime last_t_ = SimTime::zero();
  SimTime down_since_ = SimTime::zero();
  Duration down_;
  Duration longest_;
  double min_q_ = std::numeric_limits<double>::infinity();
  double q_integral_ = 0.0;
  Duration span_;
};

std::string topic_param(const scenario::KpiSpec& spec, const std::string& vehicle) {
  const std::string topic = string_param(spec.params, "topic");
  if (topic.empty()) throw PlanError(spec.path + ".topic", spec.type + " needs a topic");
  return topic_of(vehicle, topic);
}

Duration window_param(const scenario::KpiSpec& spec, Duration otherwise) {
  return duration_param(spec.params, "window_s").value_or(otherwise);
}

}  // namespace

std::vector<std::string> kpi_types() {
  return {"path", "mission_time", "distance", "rate", "latency", "resources", "value", "link"};
}

PlannedKpi plan_kpi(const scenario::KpiSpec& spec, const PlanContext& ctx) {
  PlannedKpi p{spec, string_param(spec.params, "vehicle"), json::object(), {}};
  const std::string& type = spec.type;
  const auto need_vehicle = [&] {
    if (p.vehicle.empty()) throw PlanError(spec.path + ".vehicle", type + " needs a vehicle");
    if (!ctx.scenario.vehicle(p.vehicle))
      throw PlanError(spec.path + ".vehicle", "no vehicle '" + p.vehicle + "' in the scenario");
  };
  const auto entry = [&](const char* key) {
    const std::string label = string_param(spec.params, key);
    if (!label.empty() && !ctx.scenario.entry(label))
      throw PlanError(spec.path + "." + key, "no timeline entry '" + label + "'");
    return label;
  };
  if (type == "path") {
    need_vehicle();
    p.watch.poses.insert(p.vehicle);
    if (const std::string a = entry("action"); !a.empty()) p.resolved["action"] = a;
    if (const ParamValue* t = spec.params.get("target");
        t && t->kind == ParamValue::Kind::kPlacement) {
      const world::Pose2D pose = ctx.place(t->placement, spec.path + ".target");
      p.resolved["target"] = {{"x", pose.x}, {"y", pose.y}};
    }
  } else if (type == "mission_time") {
    p.resolved["start"] = entry("start");
    p.resolved["end"] = entry("end");
  } else if (type == "distance") {
    need_vehicle();
    p.watch.poses.insert(p.vehicle);
    plan_target(spec.params, spec.path, ctx, p.resolved, p.watch);
  } else if (type == "rate") {
    const std::string topic = topic_param(spec, p.vehicle);
    p.resolved["topic"] = topic;
    p.watch.rates[topic] = window_param(spec, seconds(5));
  } else if (type == "latency") {
    const std::string topic = topic_param(spec, p.vehicle);
    p.resolved["topic"] = topic;
    p.watch.latencies[topic] = window_param(spec, seconds(2));
  } else if (type == "resources") {
    need_vehicle();
    p.resolved["container"] = "vehicle";
    p.watch.resources.insert(p.vehicle);
  } else if (type == "link") {
    need_vehicle();
    const std::string topic = "/model/" + p.vehicle + "/link_state";
    p.resolved["topic"] = topic;
    p.watch.values.insert(topic);
  } else if (type == "value") {
    const std::string topic = topic_param(spec, p.vehicle);
    const std::string field = string_param(spec.params, "field");
    if (field.empty()) throw PlanError(spec.path + ".field", "value needs a field");
    p.resolved["topic"] = topic;
    p.resolved["field"] = field;
    p.watch.values.insert(topic);
    if (const std::string c = string_param(spec.params, "count_if"); !c.empty()) {
      auto compiled = scenario::Condition::compile(c, {"value"});
      if (!compiled.ok()) throw PlanError(spec.path + ".count_if", compiled.error().message);
      p.resolved["count_if"] = c;
    }
  } else {
    throw PlanError(spec.path + ".type", "no KPI collector '" + type + "'");
  }
  return p;
}

std::vector<PlannedKpi> plan_kpis(const scenario::Scenario& scenario, const PlanContext& ctx) {
  std::vector<PlannedKpi> out;
  for (const scenario::KpiSpec& k : scenario.kpis) out.push_back(plan_kpi(k, ctx));
  return out;
}

std::unique_ptr<Collector> make_collector(const PlannedKpi& p) {
  const std::string& t = p.spec.type;
  if (t == "path") return std::make_unique<PathCollector>(p);
  if (t == "mission_time") return std::make_unique<MissionTimeCollector>(p);
  if (t == "distance") return std::make_unique<DistanceCollector>(p);
  if (t == "rate") return std::make_unique<RateCollector>(p);
  if (t == "latency") return std::make_unique<LatencyCollector>(p);
  if (t == "resources") return std::make_unique<ResourcesCollector>(p);
  if (t == "value") return std::make_unique<ValueCollector>(p);
  if (t == "link") return std::make_unique<LinkCollector>(p);
  return nullptr;
}

// ---- Collectors ----

Collectors::Collectors(const std::vector<PlannedKpi>& planned) : by_kind_(8) {
  for (const PlannedKpi& p : planned) {
    auto c = make_collector(p);
    if (!c) continue;
    const size_t i = collectors_.size();
    collectors_.push_back(std::move(c));
    for (size_t k = 0; k < by_kind_.size(); ++k) {
      if (p.watch.wants(static_cast<Sample::Kind>(k))) by_kind_[k].push_back(i);
    }
  }
}

void Collectors::on_sample(const Sample& sample, SimTime t) {
  const size_t k = static_cast<size_t>(sample.kind);
  if (k >= by_kind_.size()) return;
  for (size_t i : by_kind_[k]) {
    if (!collectors_[i]->settled()) collectors_[i]->on_sample(sample, t);
  }
}

void Collectors::on_tick(SimTime t) {
  for (auto& c : collectors_) {
    if (!c->settled()) c->on_tick(t);
  }
}

void Collectors::on_action(const std::string& label, ActionEvent event, SimTime t,
                           const std::string& status) {
  for (auto& c : collectors_) {
    if (!c->settled()) c->on_action(label, event, t, status);
  }
}

void Collectors::finish(SimTime t) {
  for (auto& c : collectors_) {
    if (!c->settled()) c->finish(t);
  }
}

std::vector<KpiResult> Collectors::results() const {
  std::vector<KpiResult> out;
  out.reserve(collectors_.size());
  for (const auto& c : collectors_) out.push_back(c->result());
  return out;
}

// ---- the flat map ----

namespace {
void add_metrics(json& map, const std::string& name, const json& metrics,
                 const std::string& source) {
  if (!metrics.is_object()) return;
  for (auto it = metrics.begin(); it != metrics.end(); ++it) {
    const json& m = it.value();
    json entry = {{"value", nullptr}, {"unit", ""}, {"source", source}};
    if (m.is_object()) {
      if (m.contains("value")) entry["value"] = m["value"];
      if (m.contains("unit")) entry["unit"] = m["unit"];
    } else {
      entry["value"] = m;
    }
    map[name + "." + it.key()] = std::move(entry);
  }
}
}  // namespace

json kpi_map(const std::vector<AssertionResult>& assertions,
             const std::vector<KpiResult>& collectors) {
  json map = json::object();
  for (const AssertionResult& a : assertions)
    add_metrics(map, a.name, a.metrics, "assertion " + a.name);
  for (const KpiResult& k : collectors) add_metrics(map, k.name, k.metrics, "collector " + k.name);
  return map;
}

json kpi_collectors_json(const std::vector<KpiResult>& collectors) {
  json out = json::array();
  for (const KpiResult& k : collectors) out.push_back(k.to_json());
  return out;
}

std::vector<json> kpi_lines(const std::vector<AssertionResult>& assertions,
                            const std::vector<KpiResult>& collectors) {
  std::vector<json> out;
  for (const KpiResult& k : collectors) {
    json j = k.to_json();
    j["kind"] = "kpi_collector";
    out.push_back(std::move(j));
  }
  out.push_back({{"kind", "kpis"}, {"kpis", kpi_map(assertions, collectors)}});
  return out;
}

}  // namespace fieldproof::assertions
