// The tables: the 16 assertion types and 7 KPI collectors of docs/assertions.md (and link,
// docs/network.md), and adding a plugin's type.
#include "fieldproof/scenario/registry.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace fieldproof::scenario {
namespace {

using ::testing::HasSubstr;

std::vector<std::string> types(const std::vector<TypeSpec>& v) {
  std::vector<std::string> out;
  for (const auto& t : v) out.push_back(t.type);
  return out;
}

TEST(Registry, HasTheSixteenAssertionTypes) {
  EXPECT_EQ(types(SpecRegistry::builtin().assertions()),
            (std::vector<std::string>{
                "reach_pose", "within_time", "topic_rate", "no_collision", "topic_value",
                "geofence", "min_distance", "path_efficiency", "mission_time", "message_latency",
                "sequence", "resource_usage", "lifecycle_state", "always", "never", "eventually"}));
}

TEST(Registry, HasTheSevenKpiCollectorsAndLink) {
  EXPECT_EQ(types(SpecRegistry::builtin().kpis()),
            (std::vector<std::string>{"path", "mission_time", "distance", "rate", "latency",
                                      "resources", "link", "value"}));
}

TEST(Registry, EveryAssertionTypeHasASummaryAndMetrics) {
  for (const auto& t : SpecRegistry::builtin().assertions()) {
    EXPECT_FALSE(t.summary.empty()) << t.type;
    EXPECT_FALSE(t.metrics.empty()) << t.type;
    for (const auto& p : t.params) EXPECT_FALSE(p.description.empty()) << t.type << "." << p.name;
  }
}

TEST(Registry, ReachPoseParametersAsTheSeed) {
  const TypeSpec* t = SpecRegistry::builtin().assertion("reach_pose");
  ASSERT_NE(t, nullptr);
  std::vector<std::string> names;
  for (const auto& p : t->params) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"vehicle", "target", "tolerance_m",
                                             "yaw_tolerance_rad", "within_s"}));
  EXPECT_EQ(t->params[2].default_value, "0.5");
}

TEST(Registry, OnlyEventuallyHasForS) {
  auto has_for = [](const char* type) {
    for (const auto& p : SpecRegistry::builtin().assertion(type)->params) {
      if (p.name == "for_s") return true;
    }
    return false;
  };
  EXPECT_TRUE(has_for("eventually"));
  EXPECT_FALSE(has_for("always"));
  EXPECT_FALSE(has_for("never"));
}

TEST(Registry, AddingAPluginTypeMakesItKnown) {
  SpecRegistry reg = SpecRegistry::builtin();
  TypeSpec t;
  t.type = "example.visits_waypoints";
  EXPECT_FALSE(reg.add_assertion(t).has_value());
  EXPECT_NE(reg.assertion("example.visits_waypoints"), nullptr);
  EXPECT_EQ(SpecRegistry::builtin().assertion("example.visits_waypoints"), nullptr);
}

TEST(Registry, ATypeAlreadyTakenIsRefused) {
  SpecRegistry reg = SpecRegistry::builtin();
  TypeSpec t;
  t.type = "reach_pose";
  auto e = reg.add_assertion(t);
  ASSERT_TRUE(e.has_value());
  EXPECT_THAT(*e, HasSubstr("already registered"));
}

TEST(Registry, AnEmptyTypeIsRefused) {
  SpecRegistry reg = SpecRegistry::builtin();
  EXPECT_TRUE(reg.add_assertion(TypeSpec{}).has_value());
}

TEST(Registry, AParameterClashingWithTheCommonKeysIsRefused) {
  SpecRegistry reg = SpecRegistry::builtin();
  TypeSpec t;
  t.type = "mine";
  ParamSpec p;
  p.name = "on_fail";
  p.description = "x";
  t.params.push_back(p);
  auto e = reg.add_assertion(t);
  ASSERT_TRUE(e.has_value());
  EXPECT_THAT(*e, HasSubstr("clashes"));
}

TEST(Registry, AMalformedEnumIsRefused) {
  SpecRegistry reg = SpecRegistry::builtin();
  TypeSpec t;
  t.type = "mine";
  ParamSpec p;
  p.name = "mode";
  p.kind = ParamKind::kEnum;
  t.params.push_back(p);
  EXPECT_TRUE(reg.add_assertion(t).has_value());
}

TEST(Registry, DescribeKindReadsAsTheDocs) {
  const TypeSpec* t = SpecRegistry::builtin().assertion("topic_value");
  for (const auto& p : t->params) {
    if (p.name == "mode") {
      EXPECT_EQ(describe_kind(p), "always | eventually");
    }
  }
  const TypeSpec* n = SpecRegistry::builtin().assertion("no_collision");
  EXPECT_EQ(describe_kind(n->params[2]), "list of string");
}

TEST(RegistryCatalog, TextListsEveryTypeWithParametersAndMetrics) {
  std::string text = format_catalog(SpecRegistry::builtin());
  for (const auto& t : SpecRegistry::builtin().assertions()) {
    EXPECT_THAT(text, HasSubstr("  " + t.type + " - ")) << t.type;
  }
  EXPECT_THAT(text, HasSubstr("    tolerance_m (number, default 0.5): distance to the target\n"));
  EXPECT_THAT(text,
              HasSubstr("    metrics: closest_m [m], reached_at_s [s], final_distance_m [m]"));
  EXPECT_THAT(text, HasSubstr("    at least one of: max_cpu_pct, max_memory_mb"));
  EXPECT_THAT(text, HasSubstr("KPI collectors"));
}

TEST(RegistryCatalog, JsonListsTypesKpisAndActions) {
  auto j = nlohmann::json::parse(catalog_json(SpecRegistry::builtin()));
  EXPECT_EQ(j["assertions"].size(), 16u);
  EXPECT_EQ(j["kpis"].size(), 8u);
  EXPECT_EQ(j["actions"].size(), 13u);
  const auto& reach = j["assertions"][0];
  EXPECT_EQ(reach["type"], "reach_pose");
  EXPECT_EQ(reach["parameters"][0]["name"], "name");  // the common keys first
  EXPECT_EQ(reach["parameters"][2]["choices"], nlohmann::json::array({"continue", "abort"}));
  EXPECT_EQ(reach["metrics"][0]["name"], "closest_m");
  EXPECT_TRUE(reach["plugin"].is_null());
}

}  // namespace
}  // namespace fieldproof::scenario
