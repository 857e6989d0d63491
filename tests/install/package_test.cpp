// The Debian package, built by the package.build fixture with CPack from this
// build tree and read back with dpkg-deb: its name, its declared dependencies, its contents, and
// that apt resolves it and its program runs from the unpacked tree.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

#include "shell_util.hpp"

namespace {

namespace fs = std::filesystem;

const fs::path kOut = fs::path(FIELDPROOF_TEST_TMP) / "deb";
const fs::path kDeb = kOut / ("fieldproof_" FIELDPROOF_VERSION "_amd64.deb");

using Result = fieldproof::shell::ShellResult;

Result sh(const std::string& command) { return fieldproof::shell::run_shell(command + " 2>&1"); }

std::string quote(const fs::path& p) { return "'" + p.string() + "'"; }

// The value of a control field ("Depends") in dpkg-deb --info output.
std::string field(const std::string& info, const std::string& name) {
  const std::string key = "\n " + name + ": ";
  const size_t at = info.find(key);
  if (at == std::string::npos) return {};
  const size_t start = at + key.size();
  return info.substr(start, info.find('\n', start) - start);
}

TEST(DebianPackage, IsNamedAfterTheVersionAndArchitecture) {
  EXPECT_TRUE(fs::exists(kDeb)) << kDeb << " was not built";
}

TEST(DebianPackage, InfoDeclaresTheRuntimeDependencies) {
  const Result r = sh("dpkg-deb --info " + quote(kDeb));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(field(r.out, "Package"), "fieldproof");
  EXPECT_EQ(field(r.out, "Version"), FIELDPROOF_VERSION);
  EXPECT_EQ(field(r.out, "Architecture"), "amd64");
  const std::string depends = field(r.out, "Depends");
  for (const char* dep : {"libzmq5", "libprotobuf32", "libignition-msgs8", "libsdformat12",
                          "libyaml-cpp0.7", "libzstd1", "liblz4-1", "libsodium23", "libc6",
                          "libstdc++6", "python3", "python3-zmq", "python3-protobuf"}) {
    EXPECT_NE((", " + depends + ",").find(std::string(", ") + dep), std::string::npos)
        << dep << " missing from Depends: " << depends;
  }
  // What building a stack against the SDK needs.
  const std::string recommends = field(r.out, "Recommends");
  for (const char* dep : {"libzmq3-dev", "libprotobuf-dev", "libignition-msgs-dev"}) {
    EXPECT_NE(recommends.find(dep), std::string::npos) << recommends;
  }
}

TEST(DebianPackage, ContentsHoldTheProgramsTheSdkAndTheExamples) {
  const Result r = sh("dpkg-deb --contents " + quote(kDeb));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  for (const char* path : {
           "./usr/bin/fieldproof",
           "./usr/bin/fieldproof-core",
           "./usr/bin/fieldproof-ugv-nav",
           "./usr/lib/fieldproof/stacks/libfieldproof_ugv_nav_plugin.so",
           "./usr/lib/libfieldproof_lockstep_zmq.a",
           "./usr/lib/libfieldproof_msgs.a",
           "./usr/include/fieldproof/lockstep/participant.hpp",
           "./usr/include/fieldproof/lockstep/transport.hpp",
           "./usr/include/fieldproof/msgs/navigation.pb.h",
           "./usr/include/fieldproof/stacks/plugin_api.hpp",
           "./usr/lib/cmake/fieldproof/fieldproof-config.cmake",
           "./usr/lib/cmake/fieldproof/fieldproof-config-version.cmake",
           "./usr/lib/cmake/fieldproof/fieldproof-targets.cmake",
           "./usr/lib/pkgconfig/fieldproof.pc",
           "./usr/share/fieldproof/examples/worlds/depot.sdf",
           "./usr/share/fieldproof/examples/scenarios/cpp_goal_follower_lockstep.yaml",
           "./usr/share/fieldproof/examples/stacks/cpp_goal_follower/CMakeLists.txt",
           "./usr/share/fieldproof/proto/fieldproof/msgs/navigation.proto",
           "./usr/share/fieldproof/models/fieldproof_ugv/model.sdf",
           "./usr/share/fieldproof/models/fieldproof_tug/model.config",
       }) {
    EXPECT_NE(r.out.find(std::string(path) + "\n"), std::string::npos) << path << " missing";
  }
  // Nothing outside /usr.
  EXPECT_EQ(r.out.find(" ./etc/"), std::string::npos);
  EXPECT_EQ(r.out.find(" ./opt/"), std::string::npos);
}

TEST(DebianPackage, ContentsHoldThePythonClient) {
  if (!FIELDPROOF_HAS_PYTHON) {
    GTEST_SKIP() << "python/ is absent from this tree (the Python client is written by another "
                    "part of issue 11 and installed by python/CMakeLists.txt)";
  }
  const Result r = sh("dpkg-deb --contents " + quote(kDeb));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("/fieldproof/__init__.py\n"), std::string::npos) << r.out;
}

TEST(DebianPackage, AptResolvesItsDependenciesOnThisDebian) {
  // A simulation: nothing is installed.
  const Result r = sh("apt-get install --simulate --no-install-recommends " + quote(kDeb));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("Inst fieldproof"), std::string::npos) << r.out;
}

TEST(DebianPackage, TheUnpackedProgramRuns) {
  const fs::path root = kOut / "unpacked";
  fs::remove_all(root);
  const Result x = sh("dpkg-deb -x " + quote(kDeb) + " " + quote(root));
  ASSERT_EQ(x.exit_code, 0) << x.out;
  const Result r = sh(quote(root / "usr/bin/fieldproof") + " schema");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("\"$schema\""), std::string::npos);
}

}  // namespace
