// `fieldproof validate SCENARIO`: the scenario checked (file:line:column, field path) against the
// tables and its world; on success the notes on what the time mode means. Exit 0 valid, 2 not.
// An assertion plugin is not loaded: its types' tables are read from the library (a plugin
// without them is a warning, and its type is then refused as unknown).
// `fieldproof schema`: the JSON Schema, with the types of FIELDPROOF_PLUGIN_PATH's plugins (their
// tables, read the same way); `fieldproof schema --run`: the JSON Schema of run.json.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/cli_util.hpp"
#include "cli/commands.hpp"
#include "fieldproof/assertions/plugin.hpp"
#include "fieldproof/engine/plan.hpp"
#include "fieldproof/report/run_record.hpp"

namespace fieldproof::cli {
namespace {

int run_validate(const std::string& file) {
  engine::PlanOptions po;
  po.tool_dir = engine::executable_dir();
  po.load_plugin_code = false;  // checking a scenario runs nothing of the user's
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
  CLI::App* cmd = app.add_subcommand(
      "schema", "Print the JSON Schema of a scenario (or, with --run, of a run's run.json)");
  auto run = std::make_shared<bool>(false);
  cmd->add_flag("--run", *run, "the schema of run.json, the record every run writes");
  cmd->callback([exit_code, run] {
    if (*run) {
      std::fputs(report::run_record_schema().c_str(), stdout);
      *exit_code = kExitOk;
      return;
    }
    // The installed plugins' types are part of the schema (FIELDPROOF_PLUGIN_PATH).
    assertions::PluginLoadOptions o;
    o.search_path = assertions::plugin_search_path_from_env();
    o.load_code = false;  // their tables, read from the libraries
    const assertions::PluginSet set = assertions::load_plugins(o);
    for (const auto& p : set.problems) {
      std::fprintf(stderr, "warning: assertion plugin %s (its types are not in the schema)\n",
                   p.to_string().c_str());
    }
    std::fputs(scenario::scenario_json_schema(*set.registry).c_str(), stdout);
    *exit_code = kExitOk;
  });
}

}  // namespace fieldproof::cli
