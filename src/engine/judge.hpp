// The judging core of a run: what turns observed messages into verdicts, KPI values and a
// status. A live run (run.cpp) feeds it from the session as messages are delivered; re-judging
// (rejudge.cpp) feeds it a recording's messages in log-time order. Both build it the same way
// and end it through the same functions, so a recording judged again gives the live verdicts.
//
//   Judge j(plan, on_verdict);            // the evaluator and the KPI collectors
//   j.make_observer(options);             // the observer: the merged watch, samples to both
//   j.observer().on_message(m); j.on_tick(t); j.on_action(...);   // the feed
//   j.end(t_end, skip_reason);            // the pending verdicts, the KPIs
//   j.judged();                           // the status and its reason
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fieldproof/assertions/kpis.hpp"
#include "fieldproof/engine/evaluator.hpp"
#include "fieldproof/engine/observer.hpp"
#include "fieldproof/engine/plan.hpp"
#include "fieldproof/report/run_record.hpp"

namespace fieldproof::engine {

class Judge {
 public:
  using OnVerdict = std::function<void(const AssertionResult&)>;
  using OnSample = std::function<void(const Sample&)>;

  // The evaluator and the collectors exist before any observer: a run that cannot start still
  // skips its assertions with the reason. `plan` outlives the Judge (the evaluator keeps
  // references into it).
  Judge(const RunPlan& plan, OnVerdict on_verdict);

  // What the run watches: the planned assertions' and KPIs' watches and every vehicle's pose
  // (the report's plot and `fieldproof compare` read them from samples.jsonl). Resources are
  // kept here: the caller decides where they come from.
  assertions::Watch watch() const;

  // The observer over watch() merged with `o.watch` (what else the caller needs observed, e.g.
  // the timeline's `when` conditions), without resources (measured by the caller, never
  // decoded from messages). Its samples go to the evaluator, the collectors, then `also`.
  Observer& make_observer(ObserverOptions o, OnSample also = {});
  Observer& observer() { return *observer_; }
  bool has_observer() const { return observer_.has_value(); }

  // The feed.
  void on_sample(const Sample& s);  // to the evaluator and the collectors
  void on_action(const std::string& label, ActionEvent event, SimTime t,
                 const std::string& status);
  void on_tick(SimTime t);  // the evaluator, the collectors, the observer, in that order

  // The end: the pending verdicts judged at `t_end` (a completed timeline: no skip reason) or
  // skipped with the reason; then the collectors settle at `t_end`. A live run settles the
  // verdicts and the KPIs separately (the timeline is cancelled in between); `end` does both.
  void settle(SimTime t_end, const std::optional<std::string>& skip_reason);
  void finish_kpis(SimTime t_end);
  void end(SimTime t_end, const std::optional<std::string>& skip_reason);

  // The status of a judged run and its reason: failed with the first failed assertion (and how
  // many more), else passed, "every assertion passed".
  struct Judged {
    report::RunStatus status;
    std::string reason;
  };
  Judged judged() const;

  Evaluator& evaluator() { return ev_; }
  const Evaluator& evaluator() const { return ev_; }
  std::vector<AssertionResult> results() const { return ev_.results(); }
  std::vector<assertions::KpiResult> kpi_results() const { return kpis_.results(); }

 private:
  const RunPlan& plan_;
  Evaluator ev_;
  assertions::Collectors kpis_;
  std::optional<Observer> observer_;
};

}  // namespace fieldproof::engine
