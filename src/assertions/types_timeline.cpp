// within_time and mission_time (docs/assertions.md).
#include <algorithm>
#include <cmath>
#include <limits>

#include "builtin.hpp"
#include "fieldproof/assertions/checker.hpp"
#include "util.hpp"

namespace fieldproof::assertions {

using nlohmann::json;
using namespace detail;  // NOLINT(google-build-using-namespace): the part's own helpers

namespace {

// ---- within_time ----

class WithinTimeChecker : public Checker {
 public:
  explicit WithinTimeChecker(const PlannedAssertion& p) : Checker(p) {
    action_ = p.resolved["action"].get<std::string>();
    max_ = *duration_param(p.spec.params, "max_s");  // planned: present
  }
  void on_action(const std::string& label, ActionEvent event, SimTime t,
                 const std::string& status) override {
    if (label != action_) return;
    if (event == ActionEvent::kStart) {
      if (!start_) start_ = t;
      return;
    }
    if (!start_) {  // skipped or cancelled before it ran
      resolve(Verdict::kFailed, action_ + " never started (it ended " + status + ")", t, t,
              {{"started_t_s", nullptr}, {"action_status", status}});
      return;
    }
    duration_ = t - *start_;
    const json evidence = {{"started_t_s", round_to(to_seconds(*start_), 1e-3)},
                           {"duration_s", round_to(to_seconds(*duration_), 1e-3)},
                           {"action_status", status}};
    if (!is_ok_status(status)) {
      resolve(Verdict::kFailed, action_ + " ended " + status + " after " + seconds_text(*duration_),
              t, t, evidence);
    } else if (*duration_ <= max_) {
      resolve(Verdict::kPassed,
              action_ + " completed in " + seconds_text(*duration_) + " (limit " +
                  seconds_text(max_) + ")",
              t, t, evidence);
    } else {
      over(t);
    }
  }
  void on_tick(SimTime t) override {
    if (start_ && t - *start_ > max_) over(*start_ + max_);  // judged at the limit itself
  }
  std::optional<SimTime> deadline() const override {
    if (!start_ || duration_) return std::nullopt;
    return *start_ + max_;
  }
  void on_finish(SimTime t) override {
    if (!start_) {
      resolve(Verdict::kFailed, action_ + " never started", t, t,
              {{"started_t_s", nullptr}, {"action_status", nullptr}});
    } else {
      over(t);
    }
  }
  json metrics() const override {
    json m = json::object();
    if (duration_) m["duration_s"] = metric(round_to(to_seconds(*duration_), 1e-3), "s");
    return m;
  }

 private:
  void over(SimTime t) {
    resolve(Verdict::kFailed,
            action_ + " has not completed " + seconds_text(max_) + " after its start", t, t,
            {{"started_t_s", round_to(to_seconds(*start_), 1e-3)},
             {"elapsed_s", round_to(to_seconds(t - *start_), 1e-3)},
             {"max_s", to_seconds(max_)},
             {"action_status", "running"}});
  }
  std::string action_;
  Duration max_;
  std::optional<SimTime> start_;
  std::optional<Duration> duration_;
};

class WithinTimeType : public AssertionType {
 public:
  std::string_view name() const override { return "within_time"; }
  PlannedAssertion plan(const scenario::AssertionSpec& spec,
                        const PlanContext& ctx) const override {
    PlannedAssertion p{spec, "", json::object(), {}};
    const auto* action = spec.params.get("action");
    const auto* max = spec.params.get("max_s");
    if (!action || !ctx.scenario.entry(action->string)) {
      throw PlanError(spec.path + ".action", "within_time needs the name of a timeline entry");
    }
    if (!max || max->kind != scenario::ParamValue::Kind::kDuration)
      throw PlanError(spec.path + ".max_s", "within_time needs max_s");
    p.resolved["action"] = action->string;
    p.resolved["max_s"] = to_seconds(max->duration);
    return p;
  }
  std::unique_ptr<Checker> checker(const PlannedAssertion& p) const override {
    return std::make_unique<WithinTimeChecker>(p);
  }
};

// ---- mission_time ----

class MissionTimeChecker : public Checker {
 public:
  explicit MissionTimeChecker(const PlannedAssertion& p)
      : Checker(p),
        span_(p.resolved["start"].get<std::string>(), p.resolved["end"].get<std::string>()) {
    max_ = *duration_param(p.spec.params, "max_s");  // planned: present
    min_ = duration_param(p.spec.params, "min_s");
  }
  void on_action(const std::string& label, ActionEvent event, SimTime t,
                 const std::string& status) override {
    if (!span_.on_action(label, event, t, status)) return;
    if (span_.failed()) {
      const std::string why = span_.started() ? span_.end() + " ended " + span_.end_status()
                                              : span_.end() + " ended " + span_.end_status() +
                                                    " before the span started";
      resolve(Verdict::kFailed, "the span did not complete: " + why, t, t, evidence(t));
      return;
    }
    if (span_.ended()) judge(t);
  }
  void on_tick(SimTime t) override {
    if (span_.started() && !span_.ended() && t - *span_.started() > max_) {
      const SimTime at = *span_.started() + max_;  // judged at the limit itself
      resolve(Verdict::kFailed,
              span_text() + " has not completed " + seconds_text(max_) + " after its start", at, at,
              evidence(at));
    }
  }
  std::optional<SimTime> deadline() const override {
    if (!span_.started() || span_.ended()) return std::nullopt;
    return *span_.started() + max_;
  }
  void on_finish(SimTime t) override {
    span_.finish(t);
    if (!span_.started()) {
      resolve(Verdict::kFailed, span_.start() + " never started", t, t, evidence(t));
    } else if (!span_.ended()) {
      resolve(Verdict::kFailed, span_.end() + " never completed", t, t, evidence(t));
    } else {
      judge(t);
    }
  }
  json metrics() const override { return span_.metrics(); }

 private:
  std::string span_text() const {
    const std::string from = span_.start().empty() ? "the timeline's start" : span_.start();
    const std::string to = span_.end().empty() ? "the timeline's end" : span_.end();
    return "the span from " + from + " to " + to;
  }
  json evidence(SimTime t) const {
    json e = span_.evidence();
    if (span_.started() && !span_.ended())
      e["elapsed_s"] = round_to(to_seconds(t - *span_.started()), 1e-3);
    e["max_s"] = to_seconds(max_);
    if (min_) e["min_s"] = to_seconds(*min_);
    return e;
  }
  void judge(SimTime t) {
    const Duration d = *span_.duration();
    if (d > max_) {
      resolve(Verdict::kFailed,
              span_text() + " took " + seconds_text(d) + " (limit " + seconds_text(max_) + ")", t,
              t, evidence(t));
    } else if (min_ && d < *min_) {
      resolve(
          Verdict::kFailed,
          span_text() + " took " + seconds_text(d) + ", shorter than min_s " + seconds_text(*min_),
          t, t, evidence(t));
    } else {
      resolve(Verdict::kPassed,
              span_text() + " took " + seconds_text(d) + " (limit " + seconds_text(max_) + ")", t,
              t, evidence(t));
    }
  }
  SpanClock span_;
  Duration max_;
  std::optional<Duration> min_;
};

class MissionTimeType : public AssertionType {
 public:
  std::string_view name() const override { return "mission_time"; }
  PlannedAssertion plan(const scenario::AssertionSpec& spec,
                        const PlanContext& ctx) const override {
    PlannedAssertion p{spec, "", json::object(), {}};
    const auto max = duration_param(spec.params, "max_s");
    if (!max) throw PlanError(spec.path + ".max_s", "mission_time needs max_s");
    p.resolved["max_s"] = to_seconds(*max);
    if (const auto min = duration_param(spec.params, "min_s"))
      p.resolved["min_s"] = to_seconds(*min);
    for (const char* key : {"start", "end"}) {
      const std::string label = string_param(spec.params, key);
      if (!label.empty() && !ctx.scenario.entry(label)) {
        throw PlanError(spec.path + "." + key, "no timeline entry '" + label + "'");
      }
      p.resolved[key] = label;
    }
    return p;
  }
  std::unique_ptr<Checker> checker(const PlannedAssertion& p) const override {
    return std::make_unique<MissionTimeChecker>(p);
  }
};

}  // namespace

namespace detail {
void add_timeline_types(AssertionTypes& types) {
  types.add(std::make_unique<WithinTimeType>());
  types.add(std::make_unique<MissionTimeType>());
}
}  // namespace detail

}  // namespace fieldproof::assertions
