// within_time and mission_time (seed 004).
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
    PlannedAssertion p{spec, "", json::object(), {}};
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

namespace detail {
void add_timeline_types(AssertionTypes& types) { types.add(std::make_unique<WithinTimeType>()); }
}  // namespace detail

}  // namespace fieldproof::assertions
