// sequence: action steps (started, or finished ok), signal steps (a topic field or a
// metric with a condition over value) and assertion steps (another assertion passes), in order;
// within_s bounds the last step, max_gap_s each step after the previous.
#include <algorithm>
#include <cmath>
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

namespace {

std::string text(const ParamValue& m, std::string_view key) {
  const ParamValue* p = m.get(key);
  return p != nullptr && p->kind != ParamValue::Kind::kNull ? p->string : std::string();
}

struct Step {
  enum class Kind { kAction, kSignal, kAssertion };
  Kind kind = Kind::kAction;
  std::string label;
  std::string action;
  bool started = false;  // kAction: the start (true) or the ok end (false)
  SignalRef signal;
  std::optional<scenario::Condition> condition;
  std::string assertion;
};

bool ok_status(const std::string& status) { return status == "ok" || status == "succeeded"; }

class SequenceChecker : public StreamChecker {
 public:
  explicit SequenceChecker(const PlannedAssertion& p) : StreamChecker(p) {
    for (const json& j : p.resolved["steps"]) {
      Step s;
      s.label = j["label"].get<std::string>();
      const std::string kind = j["kind"].get<std::string>();
      if (kind == "action") {
        s.kind = Step::Kind::kAction;
        s.action = j["action"].get<std::string>();
        s.started = j["event"].get<std::string>() == "started";
      } else if (kind == "signal") {
        s.kind = Step::Kind::kSignal;
        s.signal = SignalRef::from_json(j["signal"]);
        s.condition = compile_condition(j["condition"].get<std::string>(), {"value"},
                                        p.spec.path + ".steps.condition");
      } else {
        s.kind = Step::Kind::kAssertion;
        s.assertion = j["assertion"].get<std::string>();
      }
      steps_.push_back(std::move(s));
    }
    max_gap_ = duration_param(p.spec.params, "max_gap_s");
  }

  void on_sample(const Sample& s, SimTime t) override {
    if (done() || steps_[current_].kind != Step::Kind::kSignal || t < SimTime::zero()) return;
    const Step& step = steps_[current_];
    const Result<SignalRead> r = read_signal(step.signal, s, &slot_[0]);
    if ((r.ok() && *r == SignalRead::kNone) || !in_window(t) || gap_passed(t)) return;
    if (!r.ok()) {  // the field does not exist in the message
      seen(t, s);
      decide(Verdict::kFailed,
             "step " + std::to_string(current_ + 1) + " (" + step.label + "): the field " +
                 step.signal.field + " of " + step.signal.topic +
                 " does not exist: " + r.status().message(),
             t, s.sim, evidence());
      return;
    }
    const auto holds = step.condition->holds(std::span<const Value>(slot_.data(), 1));
    const json value = excerpt_json(slot_[0]);
    const std::string* field =
        step.signal.kind == SignalRef::Kind::kField ? &step.signal.field : nullptr;
    if (!holds.ok()) {
      seen(t, s, field, value);
      decide(Verdict::kFailed,
             "step " + std::to_string(current_ + 1) + " (" + step.label + "): the condition '" +
                 step.condition->text() + "' cannot be evaluated for value = " + slot_[0].repr() +
                 ": " + holds.error().message,
             t, s.sim, evidence());
      return;
    }
    seen(t, s, field, value, "holds", *holds);
    if (*holds) happen(t, s.sim, {{"value", value_json(slot_[0])}});
  }

  void on_action(const std::string& label, ActionEvent event, SimTime t,
                 const std::string& status) override {
    if (resolved() || done() || steps_[current_].kind != Step::Kind::kAction) return;
    const Step& step = steps_[current_];
    if (label != step.action || !in_window(t) || gap_passed(t)) return;
    if (step.started) {
      if (event == ActionEvent::kStart) {
        happen(t, t, {{"event", "started"}});
      } else if (status == "skipped") {  // it never ran (its trigger failed, or an abort)
        step_note(t, step.label, {{"event", "skipped"}});
        decide(Verdict::kFailed,
               "step " + std::to_string(current_ + 1) + " (" + step.label + "): " + step.action +
                   " was skipped at " + seconds_text(t),
               t, t, evidence());
      }
      return;
    }
    if (event != ActionEvent::kEnd) return;
    if (ok_status(status)) {
      happen(t, t, {{"event", "finished"}, {"status", status}});
      return;
    }
    step_note(t, step.label, {{"event", "finished"}, {"status", status}});
    decide(Verdict::kFailed,
           "step " + std::to_string(current_ + 1) + " (" + step.label + "): " + step.action +
               " ended " + status + " at " + seconds_text(t),
           t, t, evidence());
  }

  void on_verdict(const AssertionResult& other, SimTime t) override {
    verdicts_[other.name] = {other.status, to_seconds(other.t)};
    if (resolved() || done()) return;
    if (steps_[current_].kind == Step::Kind::kAssertion &&
        steps_[current_].assertion == other.name) {
      judge_assertion(t);
    }
  }

  void on_tick(SimTime t) override {
    if (!resolved()) gap_passed(t);
    StreamChecker::on_tick(t);
  }

  std::optional<SimTime> deadline() const override {
    std::optional<SimTime> d = StreamChecker::deadline();
    if (max_gap_ && current_ > 0 && !done()) {
      const SimTime gap = last_t_ + *max_gap_ + kGapWake;  // past gap_passed's tolerance
      if (!d || gap < *d) d = gap;
    }
    return d;
  }

  std::vector<std::string> depends_on() const override {
    std::vector<std::string> out;
    for (const Step& s : steps_) {
      if (s.kind == Step::Kind::kAssertion) out.push_back(s.assertion);
    }
    return out;
  }

  json metrics() const override {
    json m = {{"steps_done", metric(static_cast<double>(current_), "")}};
    if (done()) {
      m["completed_at_s"] = metric(round_to(to_seconds(last_t_), 1e-3), "s");
      m["duration_s"] = metric(round_to(to_seconds(last_t_ - first_t_), 1e-3), "s");
    }
    return m;
  }

 protected:
  // The assertions of its steps are settled before it at the end of the timeline (depends_on),
  // so their verdicts are known here.
  void close(SimTime t, bool at_end) override {
    if (resolved()) return;
    fail_missing(t, at_end ? "by the end of the timeline (" + seconds_text(t) + ")"
                           : "by within_s " + seconds_text(window().end_s()));
  }

 private:
  bool done() const { return current_ >= steps_.size(); }

  // max_gap_s: fails when the current step did not happen within max_gap_s of the previous one.
  bool gap_passed(SimTime t) {
    if (resolved()) return true;
    if (!max_gap_ || current_ == 0 || done() || t <= last_t_ + *max_gap_ + kGapTolerance)
      return false;
    fail_missing(last_t_ + *max_gap_, "within max_gap_s " + seconds_text(*max_gap_) + " of step " +
                                          std::to_string(current_) + " (at " +
                                          seconds_text(last_t_) + ")");
    return true;
  }

  void fail_missing(SimTime t, const std::string& when) {
    const Step& step = steps_[current_];
    decide(Verdict::kFailed,
           "step " + std::to_string(current_ + 1) + " (" + step.label + ") did not happen " + when +
               "; " + std::to_string(current_) + " of " + std::to_string(steps_.size()) +
               " steps done",
           t, t, evidence());
  }

  void judge_assertion(SimTime t) {
    const Step& step = steps_[current_];
    auto it = verdicts_.find(step.assertion);
    if (it == verdicts_.end()) return;
    const auto [status, at] = it->second;
    const json how = {{"verdict", std::string(to_string(status))}, {"verdict_t_s", at}};
    if (status == Verdict::kPassed) {
      happen(std::max(t, last_t_), std::max(t, last_t_), how);
      return;
    }
    if (status == Verdict::kPending) return;
    step_note(t, step.label, how);
    decide(Verdict::kFailed,
           "step " + std::to_string(current_ + 1) + " (" + step.label + "): assertion " +
               step.assertion + " " + std::string(to_string(status)),
           t, t, evidence());
  }

  void happen(SimTime t, SimTime sim, json how) {
    const Step& step = steps_[current_];
    if (current_ == 0) first_t_ = t;
    json entry = {{"step", current_ + 1},
                  {"label", step.label},
                  {"t_s", round_to(to_seconds(t), 1e-3)},
                  {"sim_s", to_seconds(sim)}};
    for (auto& [k, v] : how.items()) entry[k] = v;
    if (step.kind != Step::Kind::kSignal) step_note(t, step.label, how);
    happened_.push_back(std::move(entry));
    last_t_ = t;
    ++current_;
    if (done()) {
      decide(Verdict::kPassed,
             "all " + std::to_string(steps_.size()) + " steps happened in order by " +
                 seconds_text(t) + " (" + seconds_text(t - first_t_) + " from the first)",
             t, sim, evidence());
      return;
    }
    // An assertion step counts a verdict given before the sequence reached it.
    if (steps_[current_].kind == Step::Kind::kAssertion) judge_assertion(t);
  }

  // An excerpt entry for a step that has no sample of its own (an action event, a verdict).
  void step_note(SimTime t, const std::string& label, const json& how) {
    Sample s;
    s.kind = Sample::Kind::kValue;
    s.sim = t;
    s.topic = label;
    json fields = {{"kind", "step"}, {"step", label}};
    for (const auto& [k, v] : how.items()) fields[k] = v;
    note(t, s, std::move(fields));
  }

  json evidence() const { return {{"steps", happened_}, {"steps_done", current_}}; }

  // A step 1 ns past max_gap_s still counts, and the deadline wakes 10 ns past the gap: the
  // tolerances the judgement had when it compared seconds as doubles, kept so that runs judge
  // and wake at the same times as before.
  static constexpr Duration kGapTolerance = nanoseconds(1);
  static constexpr Duration kGapWake = nanoseconds(10);
  std::vector<Step> steps_;
  std::optional<Duration> max_gap_;
  size_t current_ = 0;
  SimTime first_t_;
  SimTime last_t_;
  json happened_ = json::array();
  std::map<std::string, std::pair<Verdict, double>> verdicts_;
  std::array<Value, 1> slot_;
};

class SequenceType : public AssertionType {
 public:
  std::string_view name() const override { return "sequence"; }
  PlannedAssertion plan(const scenario::AssertionSpec& spec,
                        const PlanContext& ctx) const override {
    if (!spec.vehicle.empty() && ctx.scenario.vehicle(spec.vehicle) == nullptr) {
      throw PlanError(spec.path + ".vehicle", "no vehicle '" + spec.vehicle + "' in the scenario");
    }
    PlannedAssertion p{spec, spec.vehicle, json::object(), {}};
    const ParamValue* steps = spec.params.get("steps");
    if (steps == nullptr || steps->kind != ParamValue::Kind::kList || steps->items.empty()) {
      throw PlanError(spec.path + ".steps", "sequence needs one or more steps");
    }
    json out = json::array();
    for (size_t i = 0; i < steps->items.size(); ++i) {
      const ParamValue& m = steps->items[i];
      const std::string path = spec.path + ".steps[" + std::to_string(i) + "]";
      const std::string name = text(m, "name");
      json j;
      if (const std::string action = text(m, "action"); !action.empty()) {
        if (ctx.scenario.entry(action) == nullptr) {
          throw PlanError(path + ".action", "no timeline entry '" + action + "'");
        }
        std::string event = text(m, "event");
        if (event.empty()) event = "finished";
        j = {{"kind", "action"},
             {"action", action},
             {"event", event},
             {"label", name.empty() ? action + " " + event : name}};
      } else if (const std::string assertion = text(m, "assertion"); !assertion.empty()) {
        const auto& all = ctx.scenario.assertions;
        const bool known =
            std::any_of(all.begin(), all.end(), [&](const auto& a) { return a.name == assertion; });
        if (!known) throw PlanError(path + ".assertion", "no assertion '" + assertion + "'");
        if (assertion == spec.name) {
          throw PlanError(path + ".assertion", "a sequence cannot wait for its own verdict");
        }
        j = {{"kind", "assertion"},
             {"assertion", assertion},
             {"label", name.empty() ? "assertion " + assertion : name}};
      } else {
        const SignalRef s = plan_signal(m, spec.vehicle, ctx, path, p.watch);
        const std::string condition = text(m, "condition");
        if (condition.empty()) {
          throw PlanError(path + ".condition", "a signal step needs a condition over value");
        }
        compile_condition(condition, {"value"}, path + ".condition");
        j = {{"kind", "signal"},
             {"signal", s.to_json()},
             {"condition", condition},
             {"label", name.empty() ? s.label + ": " + condition : name}};
      }
      out.push_back(std::move(j));
    }
    p.resolved = {{"steps", out}};
    if (auto g = duration_param(spec.params, "max_gap_s")) p.resolved["max_gap_s"] = to_seconds(*g);
    if (spec.within) p.resolved["within_s"] = static_cast<double>(spec.within->ns()) / 1e9;
    return p;
  }
  std::unique_ptr<Checker> checker(const PlannedAssertion& p) const override {
    return std::make_unique<SequenceChecker>(p);
  }
};

}  // namespace

namespace detail {
void add_sequence_types(AssertionTypes& types) { types.add(std::make_unique<SequenceType>()); }
}  // namespace detail

}  // namespace fieldproof::assertions
