// `fieldproof compare RUN_A RUN_B [--tolerance-m 0.25] [--json]`: the second run's ground-truth
// trajectories against the first's (engine/compare.hpp). Exit 0 when every vehicle stays within
// the tolerance over the same span, 1 otherwise, 2 on bad input (a missing run, no pose samples).
// Only the runs' vehicles are compared (not the static models whose poses were watched).
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "fieldproof/engine/compare.hpp"

namespace fieldproof::cli {
namespace {

struct CompareArgs {
  std::string run_a;
  std::string run_b;
  double tolerance_m = 0.25;
  double span_tolerance_s = -1.0;
  bool json = false;
};

int run_compare(const CompareArgs& a) {
  if (!std::isfinite(a.tolerance_m) || a.tolerance_m < 0) {
    std::fprintf(stderr, "fieldproof compare: --tolerance-m must be a number >= 0\n");
    return kExitInvalid;
  }
  if (!std::isfinite(a.span_tolerance_s) ||
      (a.span_tolerance_s < 0 && a.span_tolerance_s != -1.0)) {
    std::fprintf(stderr, "fieldproof compare: --span-tolerance-s must be a number >= 0\n");
    return kExitInvalid;
  }
  std::vector<std::string> warnings;
  const Result<engine::Trajectories> ta = engine::load_trajectories(a.run_a, &warnings);
  if (!ta.ok()) {
    std::fprintf(stderr, "fieldproof compare: %s\n", ta.status().message().c_str());
    return kExitInvalid;
  }
  const Result<engine::Trajectories> tb = engine::load_trajectories(a.run_b, &warnings);
  if (!tb.ok()) {
    std::fprintf(stderr, "fieldproof compare: %s\n", tb.status().message().c_str());
    return kExitInvalid;
  }
  for (const std::string& w : warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  const engine::CompareResult r =
      engine::compare_trajectories(*ta, *tb, a.tolerance_m, a.span_tolerance_s);
  const std::string text = a.json ? r.to_json().dump(2) + "\n" : r.to_text();
  std::fwrite(text.data(), 1, text.size(), stdout);
  return r.within ? kExitOk : kExitFailed;
}

}  // namespace

void add_compare_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* cmd = app.add_subcommand(
      "compare", "Compare two runs' ground-truth trajectories (largest, mean, final deviation)");
  cmd->add_option("run_a", args->run_a, "the first run directory (the reference)")->required();
  cmd->add_option("run_b", args->run_b, "the second run directory")->required();
  cmd->add_option("--tolerance-m", args->tolerance_m,
                  "largest deviation allowed per vehicle, metres (default 0.25)");
  cmd->add_option("--span-tolerance-s", args->span_tolerance_s,
                  "how far the runs' first and last pose samples may differ, seconds (default: "
                  "1.5 sample periods); beyond it the vehicle is OUT");
  cmd->add_flag("--json", args->json, "print the comparison as JSON");
  cmd->callback([args, exit_code] { *exit_code = run_compare(*args); });
}

}  // namespace fieldproof::cli
