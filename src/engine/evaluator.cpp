#include "fieldproof/engine/evaluator.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

namespace fieldproof::engine {

using nlohmann::json;

namespace {

// Rounds to a decimal unit (1e-3, 1e-4) without binary noise in the printed value.
double round_to(double v, double unit) {
  const double scale = std::round(1.0 / unit);
  return std::round(v * scale) / scale;
}
SimTime sim_at(double t) { return SimTime::from_ns(static_cast<int64_t>(std::llround(t * 1e9))); }
double sim_s(SimTime t) { return static_cast<double>(t.ns()) / 1e9; }
std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}
std::string seconds_text(double s) {
  std::string t = fmt("%.3f", s);
  while (t.back() == '0') t.pop_back();
  if (t.back() == '.') t.pop_back();
  return t + " s";
}
json metric(double value, const char* unit) { return {{"value", value}, {"unit", unit}}; }

}  // namespace

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
  }
  return j;
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

// ---- reach_pose ----
namespace {

class ReachPoseChecker : public Checker {
 public:
  explicit ReachPoseChecker(const PlannedAssertion& p) : Checker(p) {
    const json& r = p.resolved;
    target_ = {r["target"]["x"].get<double>(), r["target"]["y"].get<double>(),
               r["target"]["yaw"].get<double>()};
    tolerance_ = r["tolerance_m"].get<double>();
    if (r.contains("yaw_tolerance_rad")) yaw_tolerance_ = r["yaw_tolerance_rad"].get<double>();
    if (r.contains("within_s")) within_ = r["within_s"].get<double>();
    label_ = r["target_label"].get<std::string>();
  }
  void on_sample(const Sample& s, double t) override {
    if (s.kind != Sample::Kind::kPose || s.vehicle != planned().vehicle || resolved()) return;
    const double d = std::hypot(s.pose.x - target_.x, s.pose.y - target_.y);
    final_ = d;
    if (d < closest_) closest_ = d;
    note(t, s, {{"distance_m", round_to(d, 1e-3)}});
    bool yaw_ok = true;
    if (yaw_tolerance_ >= 0) {
      const double dy = std::remainder(s.pose.yaw - target_.yaw, 2 * M_PI);
      yaw_ok = std::abs(dy) <= yaw_tolerance_;
    }
    if (d <= tolerance_ && yaw_ok && t >= 0) {
      reached_at_ = t;
      resolve(Verdict::kPassed,
              planned().vehicle + " came within " + fmt("%.2f", tolerance_) + " m of " + label_ +
                  " (" + fmt("%.2f", d) + " m) at " + seconds_text(t),
              t, s.sim, {{"distance_m", d}});
    }
    last_sim_ = s.sim;
  }
  void on_tick(double t) override {
    if (!resolved() && within_ >= 0 && t > within_) fail(t, "within " + seconds_text(within_));
  }
  void on_finish(double t) override {
    if (!resolved()) fail(t, "by the end of the timeline");
  }
  json metrics() const override {
    json m = json::object();
    if (std::isfinite(closest_)) m["closest_m"] = metric(closest_, "m");
    if (reached_at_ >= 0) m["reached_at_s"] = metric(reached_at_, "s");
    if (std::isfinite(final_)) m["final_distance_m"] = metric(final_, "m");
    return m;
  }

 private:
  void fail(double t, const std::string& when) {
    std::string closest = std::isfinite(closest_) ? fmt("%.2f", closest_) + " m" : "no pose seen";
    resolve(Verdict::kFailed,
            planned().vehicle + " did not come within " + fmt("%.2f", tolerance_) + " m of " +
                label_ + " " + when + " (closest " + closest + ")",
            t, last_sim_, {{"closest_m", std::isfinite(closest_) ? json(closest_) : json()}});
  }
  world::Pose2D target_;
  double tolerance_ = 0.5;
  double yaw_tolerance_ = -1;
  double within_ = -1;
  std::string label_;
  double closest_ = std::numeric_limits<double>::infinity();
  double final_ = std::numeric_limits<double>::infinity();
  double reached_at_ = -1;
  SimTime last_sim_;
};

class ReachPoseType : public AssertionType {
 public:
  std::string_view name() const override { return "reach_pose"; }
  PlannedAssertion plan(const scenario::AssertionSpec& spec,
                        const PlanContext& ctx) const override {
    PlannedAssertion p{spec, spec.vehicle, json::object()};
    const scenario::ParamValue* target = spec.params.get("target");
    if (!target) throw PlanError(spec.path + ".target", "reach_pose needs a target");
    const world::Pose2D pose = ctx.place(target->placement, spec.path + ".target");
    p.resolved["target"] = {{"x", pose.x}, {"y", pose.y}, {"yaw", pose.yaw}};
    p.resolved["target_label"] = target->placement.is_frame()
                                     ? target->placement.frame
                                     : "(" + fmt("%.2f", pose.x) + ", " + fmt("%.2f", pose.y) + ")";
    const scenario::ParamValue* tol = spec.params.get("tolerance_m");
    p.resolved["tolerance_m"] = tol ? tol->number : 0.5;
    if (const auto* y = spec.params.get("yaw_tolerance_rad"); y && y->kind != y->Kind::kNull) {
      p.resolved["yaw_tolerance_rad"] = y->number;
    }
    if (spec.within) p.resolved["within_s"] = static_cast<double>(spec.within->ns()) / 1e9;
    return p;
  }
  std::unique_ptr<Checker> checker(const PlannedAssertion& p) const override {
    return std::make_unique<ReachPoseChecker>(p);
  }
};

// ---- no_collision ----

class NoCollisionChecker : public Checker {
 public:
  explicit NoCollisionChecker(const PlannedAssertion& p) : Checker(p) {
    for (const auto& i : p.resolved["ignore"]) ignore_.push_back(i.get<std::string>());
  }
  void on_sample(const Sample& s, double t) override {
    if (s.kind != Sample::Kind::kContact || s.vehicle != planned().vehicle || resolved()) return;
    if (t < 0) return;  // before the timeline
    std::vector<std::string> counted;
    for (const auto& c : s.contacts) {
      bool ignored = false;
      for (const auto& i : ignore_) {
        if (c == i || c.rfind(i + "::", 0) == 0) ignored = true;
      }
      if (!ignored) counted.push_back(c);
    }
    if (counted.empty()) return;
    contacts_ += counted.size();
    note(t, s);
    resolve(Verdict::kFailed,
            planned().vehicle + " touched " + counted.front() + " at " + seconds_text(t), t, s.sim,
            {{"with", counted}});
  }
  void on_finish(double t) override {
    resolve(Verdict::kPassed, planned().vehicle + " touched nothing", t, sim_at(t));
  }
  json metrics() const override {
    return {{"contacts", metric(static_cast<double>(contacts_), "")}};
  }

 private:
  std::vector<std::string> ignore_;
  size_t contacts_ = 0;
};

class NoCollisionType : public AssertionType {
 public:
  std::string_view name() const override { return "no_collision"; }
  PlannedAssertion plan(const scenario::AssertionSpec& spec, const PlanContext&) const override {
    PlannedAssertion p{spec, spec.vehicle, json::object()};
    json ignore = json::array();
    if (const auto* i = spec.params.get("ignore"); i && i->kind == i->Kind::kList) {
      for (const auto& item : i->items) ignore.push_back(item.string);
    }
    p.resolved["ignore"] = ignore;
    p.resolved["topic"] = "/model/" + spec.vehicle + "/contacts";
    return p;
  }
  std::unique_ptr<Checker> checker(const PlannedAssertion& p) const override {
    return std::make_unique<NoCollisionChecker>(p);
  }
};

// ---- within_time ----

class WithinTimeChecker : public Checker {
 public:
  explicit WithinTimeChecker(const PlannedAssertion& p) : Checker(p) {
    action_ = p.resolved["action"].get<std::string>();
    max_ = p.resolved["max_s"].get<double>();
  }
  void on_action(const std::string& label, ActionEvent event, double t,
                 const std::string& status) override {
    if (label != action_ || resolved()) return;
    if (event == ActionEvent::kStart) {
      start_ = t;
      return;
    }
    duration_ = t - start_;
    if (status != "succeeded" && status != "ok") {
      resolve(Verdict::kFailed, action_ + " ended " + status + " after " + seconds_text(duration_),
              t, sim_at(t), {{"duration_s", duration_}, {"status", status}});
    } else if (duration_ <= max_) {
      resolve(Verdict::kPassed,
              action_ + " completed in " + seconds_text(duration_) + " (limit " +
                  seconds_text(max_) + ")",
              t, sim_at(t), {{"duration_s", duration_}});
    } else {
      over(t);
    }
  }
  void on_tick(double t) override {
    if (!resolved() && start_ >= 0 && t - start_ > max_) over(t);
  }
  void on_finish(double t) override {
    if (resolved()) return;
    if (start_ < 0) {
      resolve(Verdict::kFailed, action_ + " never started", t, sim_at(t));
    } else {
      over(t);
    }
  }
  json metrics() const override {
    json m = json::object();
    if (duration_ >= 0) m["duration_s"] = metric(duration_, "s");
    return m;
  }

 private:
  void over(double t) {
    resolve(Verdict::kFailed,
            action_ + " has not completed " + seconds_text(max_) + " after its start", t, sim_at(t),
            {{"started_at_s", start_}, {"max_s", max_}});
  }
  std::string action_;
  double max_ = 0;
  double start_ = -1;
  double duration_ = -1;
};

class WithinTimeType : public AssertionType {
 public:
  std::string_view name() const override { return "within_time"; }
  PlannedAssertion plan(const scenario::AssertionSpec& spec,
                        const PlanContext& ctx) const override {
    PlannedAssertion p{spec, "", json::object()};
    const auto* action = spec.params.get("action");
    const auto* max = spec.params.get("max_s");
    if (!action || !ctx.scenario.entry(action->string)) {
      throw PlanError(spec.path + ".action", "within_time needs the name of a timeline entry");
    }
    if (!max) throw PlanError(spec.path + ".max_s", "within_time needs max_s");
    p.resolved["action"] = action->string;
    p.resolved["max_s"] = static_cast<double>(max->duration.ns()) / 1e9;
    return p;
  }
  std::unique_ptr<Checker> checker(const PlannedAssertion& p) const override {
    return std::make_unique<WithinTimeChecker>(p);
  }
};

}  // namespace

// ---- registry ----

const AssertionTypes& AssertionTypes::builtin() {
  static const AssertionTypes* types = [] {
    auto* t = new AssertionTypes();
    t->add(std::make_unique<ReachPoseType>());
    t->add(std::make_unique<NoCollisionType>());
    t->add(std::make_unique<WithinTimeType>());
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

}  // namespace fieldproof::engine
