// The JSON Schema is generated from the validator's tables; the committed scenario.schema.json
// must equal it, and every example scenario must validate.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "fieldproof/scenario/scenario.hpp"

namespace fieldproof::scenario {
namespace {

using ::testing::HasSubstr;

const std::filesystem::path kRoot(FIELDPROOF_SOURCE_DIR);

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ScenarioSchema, CommittedFileIsGenerated) {
  const std::filesystem::path file = kRoot / "scenario.schema.json";
  const std::string generated = scenario_json_schema();
  if (const char* update = std::getenv("FIELDPROOF_UPDATE_SCHEMA"); update && *update == '1') {
    std::ofstream(file, std::ios::binary) << generated;
  }
  EXPECT_TRUE(read(file) == generated)
      << "scenario.schema.json is not what the validator's tables generate. Regenerate it with\n"
         "  FIELDPROOF_UPDATE_SCHEMA=1 ctest --test-dir build -R "
         "ScenarioSchema.CommittedFileIsGenerated\n"
         "(or `fieldproof schema > scenario.schema.json`) and commit it.";
}

TEST(ScenarioSchema, IsDraft2020WithEveryTypeAndAction) {
  auto j = nlohmann::json::parse(scenario_json_schema());
  EXPECT_EQ(j["$schema"], "https://json-schema.org/draft/2020-12/schema");
  const auto& reg = SpecRegistry::builtin();
  for (const auto& t : reg.assertions()) {
    EXPECT_TRUE(j["$defs"].contains("assertion." + t.type)) << t.type;
  }
  for (const auto& t : reg.kpis()) EXPECT_TRUE(j["$defs"].contains("kpi." + t.type)) << t.type;
  for (const auto& t : reg.actions()) {
    EXPECT_TRUE(j["$defs"].contains("action." + t.type)) << t.type;
  }
  EXPECT_EQ(j["additionalProperties"], false);
  EXPECT_EQ(j["required"], nlohmann::json::array({"name", "world", "vehicles"}));
}

TEST(ScenarioSchema, CarriesTheTablesDefaultsAndChoices) {
  auto j = nlohmann::json::parse(scenario_json_schema());
  const auto& time = j["properties"]["time"]["properties"];
  EXPECT_EQ(time["mode"]["enum"], nlohmann::json::array({"sim", "realtime", "lockstep"}));
  EXPECT_EQ(time["mode"]["default"], "sim");
  EXPECT_EQ(time["timeout_s"]["default"], "10m");
  EXPECT_EQ(time["tolerance"]["default"], 0.1);
  EXPECT_EQ(j["properties"]["seed"]["maximum"], 2147483647);
  const auto& reach = j["$defs"]["assertion.reach_pose"];
  EXPECT_EQ(reach["properties"]["type"]["const"], "reach_pose");
  EXPECT_EQ(reach["properties"]["tolerance_m"]["default"], 0.5);
  EXPECT_EQ(reach["additionalProperties"], false);
}

TEST(ScenarioSchema, IncludesAPluginsType) {
  SpecRegistry reg = SpecRegistry::builtin();
  TypeSpec t;
  t.type = "example.visits_waypoints";
  t.summary = "visits every waypoint";
  ParamSpec v;
  v.name = "vehicle";
  v.kind = ParamKind::kName;
  v.required = true;
  t.params.push_back(v);
  ASSERT_FALSE(reg.add_assertion(t).has_value());
  auto j = nlohmann::json::parse(scenario_json_schema(reg));
  EXPECT_TRUE(j["$defs"].contains("assertion.example.visits_waypoints"));
}

// The depot's facts, read from the SDF the examples use (its physics step and frames).
WorldFacts depot_facts(const std::filesystem::path& sdf) {
  std::string text = read(sdf);
  WorldFacts w;
  std::smatch m;
  if (std::regex_search(text, m, std::regex("<max_step_size>\\s*([0-9.]+)\\s*</max_step_size>"))) {
    w.physics_step = *parse_duration(m[1].str());
  }
  std::regex frame("<frame\\s+name=\"([^\"]+)\"");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), frame);
       it != std::sregex_iterator(); ++it) {
    w.frames.push_back((*it)[1].str());
  }
  return w;
}

TEST(ScenarioExamples, EveryExampleValidates) {
  const auto dir = kRoot / "examples" / "scenarios";
  ASSERT_TRUE(std::filesystem::is_directory(dir));
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    ++count;
    auto r = load_scenario_file(entry.path());
    ASSERT_TRUE(r.ok()) << entry.path() << ":\n" << r.format_errors();
    EXPECT_TRUE(r.warnings.empty()) << entry.path() << ": " << r.warnings[0].to_string();
    WorldFacts w = depot_facts(r.scenario->world);
    ASSERT_GT(w.physics_step.ns(), 0) << r.scenario->world;
    for (const auto& d : validate_against_world(*r.scenario, w)) {
      ADD_FAILURE() << d.to_string();
    }
  }
  EXPECT_GE(count, 4);
}

}  // namespace
}  // namespace fieldproof::scenario
