// Assertion plugins (assertions/plugin.hpp): the example plugin loads from its library and its
// checker runs; every kind of bad plugin is reported with its path and why, and adds no type.
#include "fieldproof/assertions/plugin.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "fieldproof/scenario/scenario.hpp"

namespace fieldproof::assertions {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const fs::path kExample(FIELDPROOF_EXAMPLE_PLUGIN);
const fs::path kBadDir(FIELDPROOF_BAD_PLUGIN_DIR);
const fs::path kDuplicate(FIELDPROOF_DUP_PLUGIN);

PluginSet load(std::vector<fs::path> libraries, std::string search_path = "") {
  return load_plugins({std::move(libraries), std::move(search_path)});
}

fs::path bad(const std::string& name) { return kBadDir / (name + ".so"); }

// Loads one bad library and returns its one problem's message (and checks nothing was added).
std::string refusal(const fs::path& library) {
  const PluginSet set = load({library});
  EXPECT_TRUE(set.loaded.empty());
  EXPECT_EQ(set.registry->assertions().size(),
            scenario::SpecRegistry::builtin().assertions().size());
  EXPECT_EQ(set.types->names().size(), AssertionTypes::builtin().names().size());
  EXPECT_GE(set.problems.size(), 1u);
  if (set.problems.empty()) return "";
  EXPECT_EQ(set.problems[0].library, library.string());
  return set.problems[0].message;
}

TEST(PluginLoading, WithoutPluginsTheBuiltinsAreAllThereIs) {
  const PluginSet set = builtin_plugin_set();
  EXPECT_TRUE(set.ok());
  EXPECT_EQ(set.types->names(), AssertionTypes::builtin().names());
  EXPECT_EQ(set.registry->assertions().size(), 16u);
  EXPECT_NE(set.types->find("reach_pose"), nullptr);
}

TEST(PluginLoading, TheExamplePluginAddsItsTypeToBothTables) {
  const PluginSet set = load({kExample});
  ASSERT_TRUE(set.ok()) << set.problems[0].to_string();
  ASSERT_EQ(set.loaded.size(), 1u);
  EXPECT_EQ(set.loaded[0].types, std::vector<std::string>{"example.visits_waypoints"});
  ASSERT_NE(set.types->find("example.visits_waypoints"), nullptr);
  const scenario::TypeSpec* spec = set.registry->assertion("example.visits_waypoints");
  ASSERT_NE(spec, nullptr);
  EXPECT_EQ(spec->plugin, kExample.string());
  EXPECT_FALSE(spec->summary.empty());
  EXPECT_EQ(set.types->names().size(), AssertionTypes::builtin().names().size() + 1);
  EXPECT_EQ(set.registry->assertions().size(), 17u);
  EXPECT_NE(set.types->find("reach_pose"), nullptr);  // the built-ins stay
}

TEST(PluginLoading, TheExamplePluginsCheckerRunsFromTheLibrary) {
  const PluginSet set = load({kExample});
  ASSERT_TRUE(set.ok());
  scenario::LoadOptions o;
  o.registry = set.registry.get();
  auto r = scenario::load_scenario_text(
      "name: patrol\nworld: depot.sdf\nvehicles:\n  - {name: ugv1, spawn: dock}\n"
      "assertions:\n  - {name: patrol, type: example.visits_waypoints, vehicle: ugv1,\n"
      "     waypoints: [goal_a, {x: 0, y: 0}]}\n",
      "patrol.yaml", fs::path(FIELDPROOF_SOURCE_DIR) / "examples" / "worlds", o);
  ASSERT_TRUE(r.ok()) << r.format_errors();
  PlanContext ctx{*r.scenario, {{"goal_a", {10, -1, 0}}}};
  std::vector<PlannedAssertion> planned{
      set.types->find("example.visits_waypoints")->plan(r.scenario->assertions[0], ctx)};
  std::vector<AssertionResult> verdicts;
  Evaluator ev(planned, *set.types, [&](const AssertionResult& v) { verdicts.push_back(v); });
  for (auto [t, x, y] : {std::tuple{1.0, 0.1, 0.0}, {2.0, 5.0, 0.0}, {3.0, 10.0, -0.8}}) {
    Sample s;
    s.kind = Sample::Kind::kPose;
    s.vehicle = "ugv1";
    s.sim = SimTime::from_ns(static_cast<int64_t>(t * 1e9));
    s.pose = {x, y, 0};
    ev.on_sample(s, s.sim);
  }
  ASSERT_EQ(verdicts.size(), 1u);
  EXPECT_EQ(verdicts[0].status, Verdict::kPassed) << verdicts[0].reason;
  EXPECT_EQ(verdicts[0].type, "example.visits_waypoints");
  EXPECT_DOUBLE_EQ(to_seconds(verdicts[0].t), 3.0);
}

TEST(PluginLoading, AnUnknownTypeWithoutThePluginIsRefusedByTheValidator) {
  auto r = scenario::load_scenario_text(
      "name: patrol\nworld: depot.sdf\nvehicles:\n  - {name: ugv1, spawn: dock}\n"
      "assertions:\n  - {name: patrol, type: example.visits_waypoints, vehicle: ugv1,\n"
      "     waypoints: [goal_a]}\n",
      "patrol.yaml", fs::path(FIELDPROOF_SOURCE_DIR) / "examples" / "worlds");
  EXPECT_FALSE(r.ok());
}

TEST(PluginLoading, TheSameLibraryTwiceIsLoadedOnce) {
  const PluginSet set = load({kExample, kExample}, kExample.parent_path().string());
  EXPECT_TRUE(set.ok()) << set.problems[0].to_string();
  EXPECT_EQ(set.loaded.size(), 1u);
}

TEST(PluginLoading, AMissingLibraryIsReported) {
  EXPECT_THAT(refusal(kBadDir / "nothing_here.so"), HasSubstr("no such file"));
}

TEST(PluginLoading, AFileThatIsNotALibraryIsReported) {
  const fs::path junk = fs::path(FIELDPROOF_TEST_TMP) / "junk_plugin.so";
  std::ofstream(junk) << "not an ELF file\n";
  EXPECT_THAT(refusal(junk), HasSubstr("it is not an ELF shared library"));
}

TEST(PluginLoading, ALibraryWithoutTheEntryPointIsReported) {
  EXPECT_THAT(refusal(bad("no_entry")), HasSubstr("exports no fieldproof_assertions_plugin_v1"));
}

TEST(PluginLoading, AnEntryPointExportedAsDataIsRefusedWithoutCallingIt) {
  EXPECT_THAT(refusal(bad("data_entry")),
              HasSubstr("exports fieldproof_assertions_plugin_v1 as data, not as a function"));
}

TEST(PluginLoading, AStackPluginOnTheSharedSearchPathIsLeftAloneSilently) {
  const fs::path lib(FIELDPROOF_UGV_NAV_PLUGIN);
  const PluginSet set = load({}, lib.parent_path().string());
  for (const auto& p : set.problems) EXPECT_NE(p.library, lib.string()) << p.to_string();
  for (const auto& l : set.loaded) EXPECT_NE(l.library, lib.string());
}

TEST(PluginLoading, APluginThatRegistersNoTypeIsReported) {
  EXPECT_THAT(refusal(bad("no_type")), HasSubstr("registers no assertion type"));
}

TEST(PluginLoading, ABuiltinsTypeIsTaken) {
  EXPECT_THAT(refusal(bad("builtin_taken")),
              HasSubstr("type 'reach_pose' is already taken by a built-in type"));
}

TEST(PluginLoading, ATypeAnotherPluginTookIsReportedNamingThatPlugin) {
  const PluginSet set = load({kExample, kDuplicate});
  ASSERT_EQ(set.problems.size(), 1u);
  EXPECT_EQ(set.problems[0].library, kDuplicate.string());
  EXPECT_THAT(set.problems[0].message,
              HasSubstr("'example.visits_waypoints' is already taken by " + kExample.string()));
  ASSERT_EQ(set.loaded.size(), 1u);
  EXPECT_EQ(set.registry->assertion("example.visits_waypoints")->plugin, kExample.string());
}

TEST(PluginLoading, AMalformedSpecIsReported) {
  EXPECT_THAT(refusal(bad("malformed_spec")),
              HasSubstr("type 'bad.malformed': its spec does not validate: "
                        "bad.malformed.mode: an enum needs choices"));
}

TEST(PluginLoading, AnEntryPointThatThrowsIsReported) {
  EXPECT_THAT(refusal(bad("throws")), HasSubstr("threw: no licence for this host"));
}

TEST(PluginLoading, AnAbiKeyMismatchIsReported) {
  EXPECT_THAT(refusal(bad("abi_key")), HasSubstr("ABI mismatch"));
}

TEST(PluginLoading, AnotherApiVersionIsReported) {
  EXPECT_THAT(refusal(bad("api_v2")), HasSubstr("built for plugin API v2"));
}

// A plugin built before times became SimTime (API v1) exports the same entry point; its
// descriptor's version refuses it before any of its code that takes a time is called.
TEST(PluginLoading, APluginOfThePreviousApiVersionIsRefused) {
  static_assert(kPluginApiVersion == 2);
  const std::string why = refusal(fs::path(FIELDPROOF_OLD_PLUGIN));
  EXPECT_THAT(why, HasSubstr("built for plugin API v1, this fieldproof loads v2"));
  EXPECT_THAT(why, HasSubstr("rebuild the plugin"));
}

TEST(PluginLoading, ATypeWithoutANamespaceIsReported) {
  EXPECT_THAT(refusal(bad("not_namespaced")),
              HasSubstr("type 'visits': a plugin's type is namespaced"));
}

TEST(PluginLoading, ASpecAndATypeNamedDifferentlyAreReported) {
  EXPECT_THAT(refusal(bad("name_mismatch")), HasSubstr("its AssertionType is named 'bad.two'"));
}

TEST(PluginLoading, OneBadTypeKeepsTheLibrarysGoodTypesOut) {
  const PluginSet set = load({bad("partly_bad")});
  EXPECT_EQ(set.registry->assertion("bad.fine"), nullptr);
  EXPECT_EQ(set.types->find("bad.fine"), nullptr);
  ASSERT_EQ(set.problems.size(), 1u);
  EXPECT_THAT(set.problems[0].message, HasSubstr("bad.listless"));
}

TEST(PluginLoading, ASearchPathLoadsEveryLibraryOfItsDirectories) {
  const PluginSet set = load({}, kBadDir.string() + "::" + kExample.parent_path().string());
  ASSERT_EQ(set.loaded.size(), 1u);
  EXPECT_EQ(set.loaded[0].library, kExample.string());
  // Every bad library of the directory is reported, each naming its file.
  EXPECT_EQ(set.problems.size(), 11u);
  for (const auto& p : set.problems) EXPECT_EQ(fs::path(p.library).parent_path(), kBadDir);
}

TEST(PluginLoading, ASearchPathDirectoryThatDoesNotExistIsReported) {
  const PluginSet set = load({}, "/nonexistent/fieldproof/plugins");
  ASSERT_EQ(set.problems.size(), 1u);
  EXPECT_EQ(set.problems[0].library, "/nonexistent/fieldproof/plugins");
  EXPECT_THAT(set.problems[0].message, HasSubstr("does not exist"));
}

TEST(PluginLoading, TheScenariosPluginsAreResolvedAgainstItsDirectory) {
  const fs::path dir = fs::path(FIELDPROOF_TEST_TMP) / "plugin_paths";
  fs::create_directories(dir);
  std::ofstream(dir / "s.yaml") << "name: s\nplugins: [lib/a.so, /abs/b.so]\n";
  EXPECT_EQ(scenario::scenario_plugin_paths(dir / "s.yaml"),
            (std::vector<fs::path>{dir / "lib" / "a.so", "/abs/b.so"}));
  EXPECT_TRUE(scenario::scenario_plugin_paths(dir / "missing.yaml").empty());
}

}  // namespace
}  // namespace fieldproof::assertions
