// `fieldproof validate SCENARIO`: the scenario checked (file:line:column, field path) against the
// tables and its world; on success the notes on what the time mode means. Exit 0 valid, 2 not.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/cli_util.hpp"
#include "cli/commands.hpp"
#include "fieldproof/engine/plan.hpp"

namespace fieldproof::cli {
namespace {

int run_validate(const std::string& file) {
  engine::PlanOptions po;
  po.ugv_nav_exe = ugv_nav_executable();
  const engine::PlanResult r = engine::plan_run(file, po);
  for (const auto& w : r.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  if (!r.plan) {
    for (const auto& e : r.errors) std::fprintf(stderr, "%s\n", e.c_str());
    std::fprintf(stderr, "%s: invalid (%zu error%s)\n", file.c_str(), r.errors.size(),
                 r.errors.size() == 1 ? "" : "s");
    return kExitInvalid;
  }
  std::printf("%s: valid\n", file.c_str());
  for (const auto& n : r.notes) std::printf("note: %s\n", n.c_str());
  for (const auto& u : r.plan->unsupported) {
    std::printf("note: not run by this engine yet: %s\n", u.c_str());
  }
  return kExitOk;
}

}  // namespace

void add_validate_command(CLI::App& app, int* exit_code) {
  auto file = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("validate", "Check a scenario file (exit 2 on any error)");
  cmd->add_option("scenario", *file, "the scenario YAML file")->required();
  cmd->callback([file, exit_code] { *exit_code = run_validate(*file); });
}

void add_schema_command(CLI::App& app, int* exit_code) {
  CLI::App* cmd = app.add_subcommand("schema", "Print the JSON Schema of a scenario");
  cmd->callback([exit_code] {
    std::fputs(scenario::scenario_json_schema().c_str(), stdout);
    *exit_code = kExitOk;
  });
}

}  // namespace fieldproof::cli
