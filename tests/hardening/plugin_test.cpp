// validate runs no code of an assertion plugin. The marker plugin's
// constructor writes a file and, on request, aborts: `fieldproof validate` and `schema` must do
// neither and still check the plugin's assertions against its types' tables (read from the
// library's .fieldproof.assertions section); `run` loads it. A library that is not a plugin one
// can use is a warning naming it, and its type then stays unknown (exit 2), never a crash.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "shell_util.hpp"

namespace fieldproof::hardening {
namespace {

namespace fs = std::filesystem;

const std::string kBin = std::string(FIELDPROOF_BIN_DIR) + "/fieldproof";
const std::string kDepot = std::string(FIELDPROOF_SOURCE_DIR) + "/examples/worlds/depot.sdf";

struct Result {
  int exit_code = -1;
  std::string out;
};

std::string q(const fs::path& p) { return "'" + p.string() + "'"; }

// `env` as shell assignments before the command; stdout and stderr together; cut at 60 s.
Result cli(const std::string& env, const std::string& args) {
  const shell::ShellResult r = shell::run_shell("env -u FIELDPROOF_PLUGIN_PATH " + env +
                                                " timeout -s KILL 60 " + kBin + " " + args +
                                                " </dev/null 2>&1");
  return {r.exit_code, r.out};
}

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::path(FIELDPROOF_TEST_TMP) / ("plugin_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A scenario naming `plugin` with one hardening.marker assertion of the given level.
fs::path scenario(const fs::path& dir, const std::string& plugin, const std::string& level) {
  const fs::path f = dir / "s.yaml";
  write(f, "name: marker\nworld: " + kDepot +
               "\ntime: {mode: sim, timeout_s: 5m}\n"
               "vehicles:\n  - name: ugv1\n    spawn: dock\n"
               "plugins: [" + plugin + "]\n"
               "assertions:\n"
               "  - name: marked\n"
               "    type: hardening.marker\n"
               "    level: " + level + "\n");
  return f;
}

// The marker and abort switches of the plugin's constructor.
std::string armed(const fs::path& marker, bool abort) {
  return "FIELDPROOF_TEST_MARKER=" + q(marker) + (abort ? " FIELDPROOF_TEST_ABORT=1" : "");
}

TEST(ValidatePlugins, ValidateRunsNothingOfAnAssertionPluginAndStillChecksItsType) {
  const fs::path d = fresh_dir("validate");
  const fs::path marker = d / "marker";
  const fs::path s = scenario(d, FIELDPROOF_MARKER_PLUGIN, "1.5");
  const Result r = cli(armed(marker, true), "validate " + q(s));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find(s.string() + ": valid"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("checked against the plugin's tables"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(marker)) << "validate ran the plugin's constructor";
}

TEST(ValidatePlugins, APluginTypesParametersAreCheckedFromItsTablesLocated) {
  const fs::path d = fresh_dir("bad_level");
  const fs::path marker = d / "marker";
  const fs::path s = scenario(d, FIELDPROOF_MARKER_PLUGIN, "-2");
  const Result r = cli(armed(marker, true), "validate " + q(s));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find(s.string() + ":11:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("assertions[0].level"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(marker));

  write(s, read(s) + "    colour: red\n");  // a key the tables do not have
  const Result unknown = cli(armed(marker, true), "validate " + q(s));
  EXPECT_EQ(unknown.exit_code, 2) << unknown.out;
  EXPECT_NE(unknown.out.find("colour"), std::string::npos) << unknown.out;
}

TEST(ValidatePlugins, RunLoadsThePlugin) {
  const fs::path d = fresh_dir("run");
  const fs::path marker = d / "marker";
  const fs::path s = scenario(d, FIELDPROOF_MARKER_PLUGIN, "1");
  const Result r = cli(armed(marker, false), "run --dry-run " + q(s));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("planned_by"), std::string::npos) << "the plugin planned it:\n" << r.out;
  EXPECT_TRUE(fs::exists(marker)) << "run did not load the plugin";
}

TEST(ValidatePlugins, SchemaReadsThePluginPathsTablesWithoutLoading) {
  const fs::path d = fresh_dir("schema");
  const fs::path marker = d / "marker";
  const std::string dir = fs::path(FIELDPROOF_MARKER_PLUGIN).parent_path().string();
  const Result r = cli(armed(marker, true) + " FIELDPROOF_PLUGIN_PATH=" + q(dir), "schema");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("hardening.marker"), std::string::npos);
  EXPECT_FALSE(fs::exists(marker));
}

TEST(ValidatePlugins, APluginWithoutTablesIsNotLoadedAndItsTypeIsUnknown) {
  const fs::path d = fresh_dir("untabled");
  const fs::path marker = d / "marker";
  const fs::path s = scenario(d, FIELDPROOF_UNTABLED_PLUGIN, "1");
  const Result r = cli(armed(marker, true), "validate " + q(s));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find(std::string("warning: assertion plugin ") + FIELDPROOF_UNTABLED_PLUGIN +
                       ": carries no type tables"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("hardening.marker"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(marker));
}

// Tables that say other than what the library registers: run refuses the plugin's types.
TEST(ValidatePlugins, StaleTablesAreRefusedWhenRunLoadsThePlugin) {
  const fs::path d = fresh_dir("stale");
  const fs::path lib = d / "stale.so";
  fs::copy_file(FIELDPROOF_MARKER_PLUGIN, lib);
  const fs::path tables = d / "tables.json";
  const shell::ShellResult dump = shell::run_shell(
      std::string(FIELDPROOF_OBJCOPY) + " --dump-section .fieldproof.assertions=" + q(tables) +
      " " + q(lib) + " 2>&1");
  ASSERT_EQ(dump.exit_code, 0) << dump.out;
  std::string text = read(tables);
  const size_t at = text.find("any number >= 0");
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, 15, "any number >= 1");
  write(tables, text);
  const shell::ShellResult update = shell::run_shell(
      std::string(FIELDPROOF_OBJCOPY) + " --update-section .fieldproof.assertions=" + q(tables) +
      " " + q(lib) + " 2>&1");
  ASSERT_EQ(update.exit_code, 0) << update.out;
  const fs::path s = scenario(d, lib.string(), "1");
  EXPECT_EQ(cli("", "validate " + q(s)).exit_code, 0);  // the tables alone are consistent
  const Result r = cli("", "run --dry-run " + q(s));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("differ from its .fieldproof.assertions tables"), std::string::npos)
      << r.out;
}

TEST(ValidatePlugins, DamagedTablesAreAWarningNamingTheField) {
  const fs::path d = fresh_dir("damaged");
  const fs::path lib = d / "damaged.so";
  fs::copy_file(FIELDPROOF_MARKER_PLUGIN, lib);
  const fs::path tables = d / "tables.json";
  write(tables, R"({"fieldproof_type_specs": 1, "types": [{"type": "hardening.marker",
      "summary": "s", "params": [{"name": "level", "kind": "colour"}]}]})");
  const shell::ShellResult update = shell::run_shell(
      std::string(FIELDPROOF_OBJCOPY) + " --update-section .fieldproof.assertions=" + q(tables) +
      " " + q(lib) + " 2>&1");
  ASSERT_EQ(update.exit_code, 0) << update.out;
  const fs::path marker = d / "marker";
  const Result r = cli(armed(marker, true), "validate " + q(scenario(d, lib.string(), "1")));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("metadata.types[0].params[0].kind: 'colour' is not one of"),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(marker));
}

// Not ELF, another machine's ELF, an entry point exported as data: refused unread, exit 2.
TEST(ValidatePlugins, LibrariesThatAreNotUsablePluginsAreRefusedUnread) {
  const fs::path d = fresh_dir("unusable");
  const fs::path text = d / "text.so";
  write(text, "#!/bin/sh\necho not a library\n");
  const fs::path arm = d / "arm.so";
  fs::copy_file(FIELDPROOF_MARKER_PLUGIN, arm);
  {
    std::fstream f(arm, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(18);  // e_machine
    const char em_arm[2] = {40, 0};
    f.write(em_arm, 2);
  }
  struct Case {
    fs::path lib;
    std::string why;
  };
  const Case cases[] = {
      {text, "it is not an ELF shared library"},
      {arm, "it is built for another machine (e_machine 40)"},
      {FIELDPROOF_DATA_ENTRY_PLUGIN, "exports fieldproof_assertions_plugin_v1 as data"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.lib.string());
    const fs::path marker = d / "marker";
    for (const std::string cmd : {"validate ", "run --dry-run "}) {
      const Result r = cli(armed(marker, true), cmd + q(scenario(d, c.lib.string(), "1")));
      EXPECT_EQ(r.exit_code, 2) << r.out;
      EXPECT_NE(r.out.find("warning: assertion plugin " + c.lib.string() + ": " + c.why),
                std::string::npos)
          << r.out;
    }
    EXPECT_FALSE(fs::exists(marker));
  }
}

}  // namespace
}  // namespace fieldproof::hardening
