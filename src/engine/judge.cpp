// The judging core shared by a live run and re-judging (see judge.hpp).
#include "engine/judge.hpp"

#include <utility>

namespace fieldproof::engine {

Judge::Judge(const RunPlan& plan, OnVerdict on_verdict)
    : plan_(plan),
      ev_(plan.assertions, *plan.assertion_types, std::move(on_verdict)),
      kpis_(plan.kpis) {}

assertions::Watch Judge::watch() const {
  assertions::Watch w;
  for (const PlannedAssertion& a : plan_.assertions) w.merge(a.watch);
  for (const assertions::PlannedKpi& k : plan_.kpis) w.merge(k.watch);
  for (const PlannedVehicle& v : plan_.vehicles) w.poses.insert(v.name);
  return w;
}

Observer& Judge::make_observer(ObserverOptions o, OnSample also) {
  assertions::Watch w = watch();
  w.merge(o.watch);
  w.resources.clear();
  o.watch = std::move(w);
  o.on_sample = [this, also = std::move(also)](const Sample& s) {
    on_sample(s);
    if (also) also(s);
  };
  observer_.emplace(std::move(o));
  return *observer_;
}

void Judge::on_sample(const Sample& s) {
  ev_.on_sample(s, s.sim);
  kpis_.on_sample(s, s.sim);
}

void Judge::on_action(const std::string& label, ActionEvent event, SimTime t,
                      const std::string& status) {
  ev_.on_action(label, event, t, status);
  kpis_.on_action(label, event, t, status);
}

void Judge::on_tick(SimTime t) {
  ev_.on_tick(t);
  kpis_.on_tick(t);
  if (observer_) observer_->on_tick(t);
}

void Judge::settle(SimTime t_end, const std::optional<std::string>& skip_reason) {
  if (skip_reason) {
    ev_.skip_pending(*skip_reason, t_end);
  } else {
    ev_.finish(t_end);
  }
}

void Judge::finish_kpis(SimTime t_end) { kpis_.finish(t_end); }

void Judge::end(SimTime t_end, const std::optional<std::string>& skip_reason) {
  settle(t_end, skip_reason);
  finish_kpis(t_end);
}

Judge::Judged Judge::judged() const {
  if (const AssertionResult* f = ev_.first_failed()) {
    std::string reason = "assertion " + f->name + " failed: " + f->reason;
    if (const size_t more = ev_.failed_count() - 1; more > 0) {
      reason += " (and " + std::to_string(more) + " more)";
    }
    return {report::RunStatus::kFailed, reason};
  }
  return {report::RunStatus::kPassed, "every assertion passed"};
}

}  // namespace fieldproof::engine
