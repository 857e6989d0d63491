// Stack hosts: finding programs and plugins, the ELF check that runs no code, and the plugin host
// refusing what is not a stack plugin of this ABI.
#include "fieldproof/engine/stack_host.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "fieldproof/lockstep/inprocess.hpp"

namespace fieldproof::engine {
namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  const fs::path d = fs::path(::testing::TempDir()) / ("stack_host_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void write_file(const fs::path& p, const std::string& text, bool executable) {
  std::ofstream(p) << text;
  chmod(p.c_str(), executable ? 0755 : 0644);
}

std::string bad(const std::string& name) {
  return std::string(FIELDPROOF_BAD_STACKS) + "/libbad_stack_" + name + ".so";
}

TEST(FindProgram, APathIsResolvedAgainstTheScenariosFolder) {
  const fs::path d = scratch("path");
  fs::create_directories(d / "bin");
  write_file(d / "bin" / "my_nav", "#!/bin/sh\n", true);
  const Resolved r = find_program("bin/my_nav", d, {});
  ASSERT_TRUE(r) << r.error;
  EXPECT_EQ(r.path, (d / "bin" / "my_nav").string());
}

TEST(FindProgram, ABareNameIsLookedForInTheFolderThenOnPathThenInTheExtraFolders) {
  const fs::path d = scratch("bare");
  const fs::path extra = scratch("bare_extra");
  write_file(extra / "only_here", "#!/bin/sh\n", true);
  EXPECT_EQ(find_program("only_here", d, {extra}).path, (extra / "only_here").string());
  const Resolved sh = find_program("sh", d, {extra});  // on PATH
  ASSERT_TRUE(sh) << sh.error;
  EXPECT_EQ(fs::path(sh.path).filename(), "sh");
  write_file(d / "sh", "#!/bin/sh\n", true);  // the scenario's folder comes first
  EXPECT_EQ(find_program("sh", d, {extra}).path, (d / "sh").string());
}

TEST(FindProgram, AFileThatIsNotExecutableIsRefusedWithAHint) {
  const fs::path d = scratch("noexec");
  write_file(d / "my_nav.py", "print('hi')\n", false);
  const Resolved r = find_program("./my_nav.py", d, {});
  EXPECT_FALSE(r);
  EXPECT_NE(r.error.find("is not executable"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("[python3, my_nav.py]"), std::string::npos) << r.error;
}

TEST(FindProgram, AMissingProgramIsNamed) {
  const Resolved r = find_program("no_such_stack_program", scratch("missing"), {});
  EXPECT_FALSE(r);
  EXPECT_NE(r.error.find("'no_such_stack_program' was found neither"), std::string::npos)
      << r.error;
  EXPECT_FALSE(find_program("./nope", scratch("missing2"), {}));
}

TEST(FindStackPlugin, ABareNameIsFoundAsLibNameSoInTheSearchFolders) {
  const fs::path d = scratch("plugins");
  write_file(d / "libmy_stack.so", "x", false);
  const Resolved r = find_stack_plugin("my_stack", scratch("plugins_base"), {d});
  ASSERT_TRUE(r) << r.error;
  EXPECT_EQ(r.path, (d / "libmy_stack.so").string());
  const Resolved none = find_stack_plugin("other_stack", scratch("plugins_base"), {d});
  EXPECT_FALSE(none);
  EXPECT_NE(none.error.find("libother_stack.so"), std::string::npos) << none.error;
  EXPECT_NE(none.error.find(d.string()), std::string::npos) << none.error;
}

TEST(FindStackPlugin, TheSearchPathComesFromTheEnvironmentFirst) {
  const fs::path d = scratch("env_path");
  setenv("FIELDPROOF_PLUGIN_PATH", d.c_str(), 1);
  const std::vector<fs::path> dirs = stack_plugin_dirs("/opt/fp/bin");
  unsetenv("FIELDPROOF_PLUGIN_PATH");
  ASSERT_GE(dirs.size(), 3u);
  EXPECT_EQ(dirs.front(), d);
  EXPECT_NE(std::find(dirs.begin(), dirs.end(), fs::path("/opt/fp/lib/fieldproof/stacks")),
            dirs.end());
  EXPECT_NE(std::find(dirs.begin(), dirs.end(), fs::path("/opt/fp/lib")), dirs.end());
}

// A stack named on a command line: a command is split at spaces with its program resolved; a
// plugin is found and checked; each failure is a Status with the reason.
TEST(ResolveStack, ACommandBecomesAProcessWithItsProgramResolved) {
  const fs::path d = scratch("resolve_cmd");
  write_file(d / "my_stack", "#!/bin/sh\n", true);
  const Result<StackSpec> s = resolve_stack("ignored", "my_stack  --rate 10", d);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->kind, StackSpec::Kind::kProcess);
  EXPECT_EQ(s->argv, (std::vector<std::string>{(d / "my_stack").string(), "--rate", "10"}));

  const Result<StackSpec> blank = resolve_stack("", "   ", d);
  ASSERT_FALSE(blank.ok());
  EXPECT_EQ(blank.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(blank.status().message(), "the stack command is empty");

  const Result<StackSpec> missing = resolve_stack("", "no_such_stack_program", d);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("no_such_stack_program"), std::string::npos)
      << missing.status().message();
}

TEST(ResolveStack, APluginIsFoundAndCheckedByItsSymbols) {
  const fs::path d = scratch("resolve_plugin");
  const Result<StackSpec> ok = resolve_stack(FIELDPROOF_UGV_NAV_PLUGIN, "", d);
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok->kind, StackSpec::Kind::kPlugin);
  EXPECT_EQ(ok->plugin, fs::path(FIELDPROOF_UGV_NAV_PLUGIN).string());

  const Result<StackSpec> not_one = resolve_stack(bad("no_entry"), "", d);
  ASSERT_FALSE(not_one.ok());
  EXPECT_EQ(not_one.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(not_one.status().message().find("does not export fieldproof_stack_create"),
            std::string::npos)
      << not_one.status().message();

  const Result<StackSpec> absent = resolve_stack("./no_such_plugin.so", "", d);
  ASSERT_FALSE(absent.ok());
  EXPECT_EQ(absent.status().code(), StatusCode::kNotFound);
}

TEST(CheckStackPlugin, TheReferencePluginIsAStackPluginOfThisAbi) {
  EXPECT_TRUE(check_stack_plugin(FIELDPROOF_UGV_NAV_PLUGIN).ok())
      << check_stack_plugin(FIELDPROOF_UGV_NAV_PLUGIN).message();
}

TEST(CheckStackPlugin, WhatIsNotAStackPluginIsRefusedWithTheReason) {
  const fs::path d = scratch("check");
  write_file(d / "text.so", "not an ELF file at all", false);
  EXPECT_NE(
      check_stack_plugin((d / "text.so").string()).message().find("not an ELF shared library"),
      std::string::npos);
  EXPECT_NE(check_stack_plugin(d.string()).message().find("not a regular file"), std::string::npos);
  EXPECT_NE(
      check_stack_plugin("/bin/sh").message().find("an executable program, not a shared library"),
      std::string::npos)
      << check_stack_plugin("/bin/sh").message();
  EXPECT_NE(
      check_stack_plugin(bad("no_entry")).message().find("does not export fieldproof_stack_create"),
      std::string::npos)
      << check_stack_plugin(bad("no_entry")).message();
  EXPECT_NE(check_stack_plugin(bad("data_entry")).message().find("as data, not as a function"),
            std::string::npos)
      << check_stack_plugin(bad("data_entry")).message();
  EXPECT_NE(check_stack_plugin(bad("no_abi")).message().find("fieldproof_stack_abi_version"),
            std::string::npos)
      << check_stack_plugin(bad("no_abi")).message();
  EXPECT_NE(check_stack_plugin(bad("other_abi"))
                .message()
                .find("built for stack ABI version 2; this engine loads version 1"),
            std::string::npos)
      << check_stack_plugin(bad("other_abi")).message();
  EXPECT_TRUE(check_stack_plugin(bad("refuses")).ok())
      << check_stack_plugin(bad("refuses")).message();
}

TEST(CheckStackPlugin, AFifoIsNotReadAndDoesNotHang) {
  const fs::path d = scratch("fifo");
  ASSERT_EQ(mkfifo((d / "pipe.so").c_str(), 0644), 0);
  EXPECT_NE(check_stack_plugin((d / "pipe.so").string()).message().find("not a regular file"),
            std::string::npos);
}

StackContext context_for(lockstep::InProcessCoordinator& core, const world::OccupancyGrid& map) {
  StackContext c;
  c.vehicle = "ugv1";
  c.map = &map;
  c.participant = [&core](const std::string& name, lockstep::Role role) {
    lockstep::ParticipantOptions o;
    o.name = name;
    o.role = role;
    return std::make_unique<lockstep::Participant>(core.make_link(), o);
  };
  return c;
}

world::OccupancyGrid small_map() {
  world::OccupancyGrid g;
  g.resolution = 0.5;
  g.width = 4;
  g.height = 4;
  g.cells.assign(16, 0);
  return g;
}

TEST(PluginHost, APluginThatRefusesToStartIsReportedNamingTheVehicleAndItsMessage) {
  lockstep::InProcessCoordinator core;
  const world::OccupancyGrid map = small_map();
  StackSpec spec;
  spec.kind = StackSpec::Kind::kPlugin;
  spec.plugin = bad("refuses");
  auto host = make_stack_host(spec);
  const Status started = host->start(context_for(core, map));
  EXPECT_FALSE(started.ok());
  const std::string& error = started.message();
  EXPECT_NE(error.find("the stack plugin of ugv1"), std::string::npos) << error;
  EXPECT_NE(error.find("refuses_plugin: no parameters fit ugv1"), std::string::npos) << error;
}

TEST(PluginHost, ADataEntryPointIsRefusedBeforeAnythingIsCalled) {
  lockstep::InProcessCoordinator core;
  const world::OccupancyGrid map = small_map();
  StackSpec spec;
  spec.kind = StackSpec::Kind::kPlugin;
  spec.plugin = bad("data_entry");
  const Status started = make_stack_host(spec)->start(context_for(core, map));
  EXPECT_FALSE(started.ok());
  const std::string& error = started.message();
  EXPECT_NE(error.find("as data, not as a function"), std::string::npos) << error;
}

TEST(PluginHost, TheReferencePluginRegistersAsTheVehiclesStackParticipantAndStops) {
  lockstep::InProcessCoordinator core;
  const world::OccupancyGrid map = small_map();
  StackSpec spec;
  spec.kind = StackSpec::Kind::kPlugin;
  spec.plugin = FIELDPROOF_UGV_NAV_PLUGIN;
  spec.params_json = R"({"pose_source":"odometry"})";
  auto host = make_stack_host(spec);
  const Status started = host->start(context_for(core, map));
  ASSERT_TRUE(started.ok()) << started.message();
  EXPECT_FALSE(host->is_process());
  EXPECT_EQ(host->pid(), 0);
  // Registered: the coordinator lists the participant (its thread announces from its own thread).
  bool listed = false;
  for (int i = 0; i < 2000 && !listed; ++i) {
    for (const auto& p : core.status().participants) listed |= p.participant == "ugv1_nav";
    if (!listed) std::this_thread::yield();
  }
  EXPECT_TRUE(listed);
  EXPECT_FALSE(host->exited().has_value());
  host->stop();
  host->stop();  // idempotent
}

}  // namespace
}  // namespace fieldproof::engine
