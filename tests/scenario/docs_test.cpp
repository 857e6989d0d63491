// docs/scenarios.md documents every table of the validator, and its error example is real.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "fieldproof/scenario/scenario.hpp"

namespace fieldproof::scenario {
namespace {

const std::filesystem::path kRoot(FIELDPROOF_SOURCE_DIR);

std::string doc() {
  std::ifstream in(kRoot / "docs" / "scenarios.md");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The text of the section that starts with `heading` (up to the next heading of any level).
std::string section(const std::string& text, const std::string& heading) {
  size_t start = text.find("\n" + heading + "\n");
  if (start == std::string::npos) return {};
  size_t end = text.find("\n#", start + heading.size() + 2);
  return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// Looks for each type's section after `anchor` (mission_time is both an assertion and a KPI).
void expect_documented(const std::vector<TypeSpec>& types, const std::string& anchor) {
  const std::string all = doc();
  size_t from = all.find("\n" + anchor + "\n");
  ASSERT_NE(from, std::string::npos) << anchor;
  const std::string text = all.substr(from);
  for (const auto& t : types) {
    std::string s = section(text, "#### `" + t.type + "`");
    ASSERT_FALSE(s.empty()) << "docs/scenarios.md has no section #### `" << t.type << "`";
    for (const auto& p : t.params) {
      EXPECT_NE(s.find("| `" + p.name + "` |"), std::string::npos)
          << t.type << "." << p.name << " is not in its table in docs/scenarios.md";
    }
  }
}

TEST(ScenarioDocs, EveryAssertionTypeAndParameterIsDocumented) {
  expect_documented(SpecRegistry::builtin().assertions(), "### Assertion types");
}

TEST(ScenarioDocs, EveryKpiCollectorAndParameterIsDocumented) {
  expect_documented(SpecRegistry::builtin().kpis(), "## `kpis`");
}

TEST(ScenarioDocs, EveryActionAndParameterIsDocumented) {
  expect_documented(SpecRegistry::builtin().actions(), "### Actions");
}

TEST(ScenarioDocs, EveryTopLevelAndTimeKeyIsDocumented) {
  const std::string text = doc();
  for (const auto& f : SpecRegistry::builtin().root().fields) {
    EXPECT_NE(text.find("| `" + f.name + "` |"), std::string::npos) << f.name;
    if (f.name == "time") {
      for (const auto& t : f.fields) {
        EXPECT_NE(text.find("| `" + t.name + "` |"), std::string::npos) << t.name;
      }
    }
  }
}

TEST(ScenarioDocs, ErrorExampleIsWhatTheValidatorSays) {
  const std::string text = doc();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m,
                                std::regex("```yaml\n(name: depot\n[^`]*)```\n\n```\n([^`]*)```")));
  auto r = load_scenario_text(m[1].str(), "depot.yaml", kRoot / "tests" / "scenario" / "data");
  EXPECT_EQ(r.format_errors(), m[2].str());
}

TEST(ScenarioDocs, CompleteExampleValidates) {
  const std::string text = doc();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, std::regex("```yaml\n(name: depot_patrol[^`]*)```")));
  auto r = load_scenario_text(m[1].str(), "example.yaml", kRoot / "examples" / "scenarios");
  EXPECT_TRUE(r.ok()) << r.format_errors();
}

}  // namespace
}  // namespace fieldproof::scenario
