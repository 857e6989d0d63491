// KPI collectors (docs/assertions.md): what a run measures without judging, fed the same
// stream as the assertions, and the run's flat KPI map.
//
//   std::vector<PlannedKpi> kpis = plan_kpis(scenario, ctx);      // throws PlanError
//   Watch w; for (const auto& k : kpis) w.merge(k.watch);        // what the observer streams
//   Collectors c(kpis);
//   c.on_action("drive", ActionEvent::kStart, t, "running");     // t: a SimTime
//   c.on_sample(sample, t); c.on_tick(t);
//   c.finish(t);                                 // the end of the timeline (or of the run)
//   json map = kpi_map(evaluator.results(), c.results());   // run.json "kpis"
//   json collectors = kpi_collectors_json(c.results());     // run.json "kpi_collectors"
//   for (const json& line : kpi_lines(evaluator.results(), c.results())) kpis_jsonl.write(line);
//
// The eight collectors: path, mission_time, distance, rate, latency, resources, value (with
// count_if), link (a vehicle's link_state: time down, outages, quality; docs/network.md). Each ends
// measured, or missing when it had nothing to measure; neither fails a run. They share their
// measuring code with path_efficiency, min_distance and mission_time, so a collector and an
// assertion over the same window give the same figures.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "fieldproof/assertions/checker.hpp"

namespace fieldproof::assertions {

enum class KpiStatus { kPending, kMeasured, kMissing };
std::string_view to_string(KpiStatus s);

struct KpiResult {
  std::string name;
  std::string type;
  KpiStatus status = KpiStatus::kPending;
  std::string reason;                                  // what was measured, or why nothing was
  nlohmann::json evidence = nlohmann::json::object();  // "excerpt": the last six samples used
  nlohmann::json metrics = nlohmann::json::object();   // name -> {value, unit}
  // {name, type, status, reason, evidence, metrics}
  nlohmann::json to_json() const;
};

struct PlannedKpi {
  scenario::KpiSpec spec;
  std::string vehicle;                                 // the model it reads, if any
  nlohmann::json resolved = nlohmann::json::object();  // shown by the dry run
  Watch watch;                                         // what the observer must stream
};

class Collector {
 public:
  explicit Collector(PlannedKpi planned);
  virtual ~Collector() = default;
  virtual void on_sample(const Sample& sample, SimTime t);
  virtual void on_tick(SimTime t);
  virtual void on_action(const std::string& label, ActionEvent event, SimTime t,
                         const std::string& status);
  // The end of the timeline: settles measured or missing (once).
  virtual void finish(SimTime t) = 0;
  virtual nlohmann::json metrics() const = 0;

  bool settled() const { return status_ != KpiStatus::kPending; }
  KpiResult result() const;
  const PlannedKpi& planned() const { return planned_; }
  // after_s / within_s of the collector's parameters.
  const Window& window() const { return window_; }

 protected:
  void settle(KpiStatus status, std::string reason,
              nlohmann::json evidence = nlohmann::json::object());
  // The excerpt, as Checker::note (the last six).
  void note(SimTime t, const Sample& sample, const char* key = nullptr, double value = 0.0);

 private:
  PlannedKpi planned_;
  Window window_;
  KpiStatus status_ = KpiStatus::kPending;
  std::string reason_;
  nlohmann::json evidence_ = nlohmann::json::object();
  struct Noted {
    SimTime t;
    Sample sample;
    const char* key = nullptr;
    double value = 0;
  };
  std::vector<Noted> noted_;
  size_t noted_count_ = 0;
};

// The collector types known (the seven of docs/assertions.md).
std::vector<std::string> kpi_types();
// Plans one collector: parameters resolved against the scenario and the world (frames, entries,
// vehicles), its Watch filled in. Throws PlanError naming the field path.
PlannedKpi plan_kpi(const scenario::KpiSpec& spec, const PlanContext& context);
// Every collector of the scenario's kpis section, in order.
std::vector<PlannedKpi> plan_kpis(const scenario::Scenario& scenario, const PlanContext& context);
std::unique_ptr<Collector> make_collector(const PlannedKpi& planned);

// All the collectors of a run, fed the stream as the Evaluator is (kinds routed by their Watch).
class Collectors {
 public:
  explicit Collectors(const std::vector<PlannedKpi>& planned);
  void on_sample(const Sample& sample, SimTime t);
  void on_tick(SimTime t);
  void on_action(const std::string& label, ActionEvent event, SimTime t, const std::string& status);
  // The end of the timeline (or of the run): every collector settles. Idempotent.
  void finish(SimTime t);
  std::vector<KpiResult> results() const;
  bool empty() const { return collectors_.empty(); }

 private:
  std::vector<std::unique_ptr<Collector>> collectors_;
  std::vector<std::vector<size_t>> by_kind_;
};

// The run's flat KPI map: "<name>.<metric>" -> {value, unit, source} from every assertion's
// metrics (source "assertion <name>") and every collector's (source "collector <name>"), in that
// order; run.json's "kpis".
nlohmann::json kpi_map(const std::vector<AssertionResult>& assertions,
                       const std::vector<KpiResult>& collectors);
// run.json's "kpi_collectors": each collector's result (KpiResult::to_json), in order.
nlohmann::json kpi_collectors_json(const std::vector<KpiResult>& collectors);
// kpis.jsonl (and /fieldproof/kpis): one line per collector ({"kind": "kpi_collector", ...its
// result}) and then the map ({"kind": "kpis", "kpis": {...}}).
std::vector<nlohmann::json> kpi_lines(const std::vector<AssertionResult>& assertions,
                                      const std::vector<KpiResult>& collectors);

}  // namespace fieldproof::assertions
