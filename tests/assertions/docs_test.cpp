// docs/assertions.md documents every assertion type and KPI collector of the registry (each
// parameter in its table, each metric, the pass / fail rule, the evidence) and every YAML example
// in it validates against the depot world.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "fieldproof/scenario/scenario.hpp"

namespace fieldproof::scenario {
namespace {

namespace fs = std::filesystem;
const fs::path kRoot(FIELDPROOF_SOURCE_DIR);

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::string& doc() {
  static const std::string d = read(kRoot / "docs" / "assertions.md");
  return d;
}

// The text from `heading` (a whole line) to the next heading of level 1 to 3.
std::string section(const std::string& heading) {
  const std::string& text = doc();
  const size_t start = text.find("\n" + heading + "\n");
  if (start == std::string::npos) return {};
  size_t end = start + heading.size() + 2;
  while ((end = text.find("\n#", end)) != std::string::npos) {
    if (text.compare(end, 5, "\n### ") == 0 || text.compare(end, 4, "\n## ") == 0 ||
        text.compare(end, 3, "\n# ") == 0) {
      break;
    }
    ++end;
  }
  return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

std::vector<std::string> yaml_blocks(const std::string& text) {
  std::vector<std::string> out;
  const std::regex block("```yaml\\n([\\s\\S]*?)```");
  for (std::sregex_iterator it(text.begin(), text.end(), block), end; it != end; ++it) {
    out.push_back((*it)[1]);
  }
  return out;
}

std::string indent(const std::string& text) {
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out += "  " + line + "\n";
  return out;
}

// The depot world's frames and models, read from the file itself.
WorldFacts depot_facts() {
  WorldFacts f;
  f.physics_step = milliseconds(1);
  const std::string sdf = read(kRoot / "examples" / "worlds" / "depot.sdf");
  const std::regex frame("<frame name=\"([a-z_0-9]+)\"");
  const std::regex model("<model name=\"([a-z_0-9]+)\"");
  for (std::sregex_iterator it(sdf.begin(), sdf.end(), frame), end; it != end; ++it) {
    f.frames.push_back((*it)[1]);
  }
  for (std::sregex_iterator it(sdf.begin(), sdf.end(), model), end; it != end; ++it) {
    f.models.push_back((*it)[1]);
  }
  return f;
}

// Errors of a scenario on the depot world whose sections are `assertions` / `kpis` (YAML lists).
std::string problems(const std::string& assertions, const std::string& kpis = "") {
  std::string yaml =
      "name: docs\nworld: depot.sdf\nvehicles:\n  - {name: ugv1, spawn: dock}\n"
      "  - {name: ugv2, spawn: goal_b}\ntimeline:\n"
      "  - {action: navigate_to_pose, name: drive_ahead, vehicle: ugv1, at: 2s, goal: goal_a}\n"
      "assertions:\n" +
      indent(assertions);
  if (assertions.find("name: reached_goal\n") == std::string::npos) {
    yaml += "  - {name: reached_goal, type: reach_pose, vehicle: ugv1, target: goal_a}\n";
  }
  if (!kpis.empty()) yaml += "kpis:\n" + indent(kpis);
  const ValidationResult r = load_scenario_text(yaml, "docs.yaml", kRoot / "examples" / "worlds");
  if (!r.ok()) return r.format_errors() + "---\n" + yaml;
  std::string out;
  for (const auto& d : validate_against_world(*r.scenario, depot_facts())) {
    out += d.to_string() + "\n";
  }
  return out;
}

TEST(AssertionsDoc, EveryAssertionTypeHasItsSectionTableRuleEvidenceAndMetrics) {
  for (const TypeSpec& t : SpecRegistry::builtin().assertions()) {
    const std::string s = section("### `" + t.type + "`");
    ASSERT_FALSE(s.empty()) << "docs/assertions.md has no section ### `" << t.type << "`";
    for (const auto& p : t.params) {
      EXPECT_NE(s.find("| `" + p.name + "` |"), std::string::npos) << t.type << "." << p.name;
    }
    for (const auto& m : t.metrics) {
      EXPECT_NE(s.find("`" + m.name + "`"), std::string::npos) << t.type << " metric " << m.name;
    }
    EXPECT_NE(s.find("**Pass / fail.**"), std::string::npos) << t.type;
    EXPECT_NE(s.find("**Evidence.**"), std::string::npos) << t.type;
  }
}

TEST(AssertionsDoc, EveryAssertionTypesExampleValidatesOnTheDepotWorld) {
  for (const TypeSpec& t : SpecRegistry::builtin().assertions()) {
    const auto blocks = yaml_blocks(section("### `" + t.type + "`"));
    ASSERT_EQ(blocks.size(), 1u) << t.type << " needs one YAML example";
    EXPECT_NE(blocks[0].find("type: " + t.type + "\n"), std::string::npos) << t.type;
    EXPECT_EQ(problems(blocks[0]), "") << t.type;
  }
}

TEST(AssertionsDoc, EveryKpiCollectorHasItsSectionAndTable) {
  for (const TypeSpec& t : SpecRegistry::builtin().kpis()) {
    const std::string s = section("### `" + t.type + "` (collector)");
    ASSERT_FALSE(s.empty()) << "docs/assertions.md has no section ### `" << t.type
                            << "` (collector)";
    for (const auto& p : t.params) {
      EXPECT_NE(s.find("| `" + p.name + "` |"), std::string::npos) << t.type << "." << p.name;
    }
    for (const auto& m : t.metrics) {
      EXPECT_NE(s.find("`" + m.name + "`"), std::string::npos) << t.type << " metric " << m.name;
    }
  }
}

TEST(AssertionsDoc, TheKpiExampleValidates) {
  const auto blocks = yaml_blocks(section("## KPI collectors"));
  ASSERT_EQ(blocks.size(), 1u);
  const std::string kpis = blocks[0].substr(blocks[0].find('\n') + 1);  // after "kpis:"
  std::string unindented;
  std::istringstream in(kpis);
  for (std::string line; std::getline(in, line);) unindented += line.substr(2) + "\n";
  EXPECT_EQ(problems("", unindented), "");
}

TEST(AssertionsDoc, HasTheSectionsTheIssueAsksFor) {
  for (const char* h :
       {"## Every assertion", "## The assertion types", "## Conditions", "## KPI collectors",
        "## Verdicts, status and exit codes", "## Writing a plugin"}) {
    EXPECT_FALSE(section(h).empty()) << h;
  }
}

}  // namespace
}  // namespace fieldproof::scenario
