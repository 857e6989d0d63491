// `fieldproof assertions [--json] [--plugin LIB]...`: every assertion type known (the built-ins and
// the plugins of FIELDPROOF_PLUGIN_PATH and --plugin) with its summary, parameters and metrics,
// then the KPI collectors and the timeline actions (--json: the same as data, plus
// plugin_problems). Exit 2 when a plugin did not load (why is on
// stderr), 0 otherwise.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "fieldproof/assertions/plugin.hpp"
#include "fieldproof/scenario/registry.hpp"

namespace fieldproof::cli {
namespace {

struct AssertionsArgs {
  bool json = false;
  std::vector<std::string> plugins;
};

int run_assertions(const AssertionsArgs& a) {
  assertions::PluginLoadOptions o;
  for (const auto& p : a.plugins) o.libraries.emplace_back(p);
  o.search_path = assertions::plugin_search_path_from_env();
  const assertions::PluginSet set = assertions::load_plugins(o);
  if (a.json) {
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(scenario::catalog_json(*set.registry));
    nlohmann::ordered_json problems = nlohmann::ordered_json::array();
    for (const auto& p : set.problems) {
      problems.push_back({{"library", p.library}, {"message", p.message}});
    }
    j["plugin_problems"] = problems;
    std::fputs((j.dump(2) + "\n").c_str(), stdout);
  } else {
    std::fputs(scenario::format_catalog(*set.registry).c_str(), stdout);
  }
  for (const auto& p : set.problems) {
    std::fprintf(stderr, "error: assertion plugin %s (its types are not listed)\n",
                 p.to_string().c_str());
  }
  return set.ok() ? kExitOk : kExitInvalid;
}

}  // namespace

void add_assertions_command(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<AssertionsArgs>();
  CLI::App* cmd = app.add_subcommand(
      "assertions",
      "List the assertion types (built-in and plugins), KPI collectors and timeline actions with "
      "their parameters and metrics (exit 2 when a plugin does not load)");
  cmd->add_flag("--json", args->json, "the same as JSON");
  cmd->add_option("--plugin", args->plugins,
                  "an assertion plugin library to load as well (FIELDPROOF_PLUGIN_PATH's "
                  "directories are always loaded)");
  cmd->callback([args, exit_code] { *exit_code = run_assertions(*args); });
}

}  // namespace fieldproof::cli
