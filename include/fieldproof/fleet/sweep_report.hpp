// `fieldproof sweep report ID`: a sweep's points summed up (docs/sweeps.md).
//
//   Result<nlohmann::json> r = summarize_sweep("runs/ugv_nav_to_goal-sweep-1");
//   if (!r.ok()) ...r.status().message()...
//   Status s = write_sweep_report(*r, "runs/ugv_nav_to_goal-sweep-1");  // sweep.json/.md/.html,
//                                                                        // junit.xml
//
// Read from the sweep's plan and its points' run.json (never from the index, which may lag).
// The pass rate is over the finished points, with its 95% Wilson score interval; each KPI's
// distribution (percentiles by linear interpolation, a 10-bin histogram); pass rate per
// parameter value; the failing points with the `fieldproof run` command reproducing each; with
// repetitions, the (seed, values) groups whose runs disagree in verdict or in their ordered
// message stream (engine::compare_streams) are listed as nondeterministic.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "fieldproof/util/status.hpp"

namespace fieldproof::fleet {

struct Interval {
  double low = 0;
  double high = 0;
};
// The Wilson score interval of `passed` out of `n` at z (1.96: 95%); [0, 1] when n is 0.
Interval wilson_interval(size_t passed, size_t n, double z = 1.96);
// The q-quantile (0..1) of sorted values, linear interpolation between order statistics.
double percentile(const std::vector<double>& sorted, double q);

// sweep.json's content; kNotFound when `sweep_dir` holds no readable sweep plan.
Result<nlohmann::json> summarize_sweep(const std::filesystem::path& sweep_dir);
// Writes sweep.json, sweep.md, junit.xml and sweep.html (from summarize_sweep's `data`) into
// `dir`; kIoError naming the file that could not be written.
Status write_sweep_report(const nlohmann::json& data, const std::filesystem::path& dir);

std::string render_sweep_md(const nlohmann::json& data);
std::string render_sweep_junit(const nlohmann::json& data);
std::string render_sweep_html(const nlohmann::json& data);

}  // namespace fieldproof::fleet
