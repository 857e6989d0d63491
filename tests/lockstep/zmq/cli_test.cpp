// `fieldproof coordinator` as a process: what it prints, how it stops, how it refuses bad input.
#include <gtest/gtest.h>

#include "fieldproof/lockstep/zmq_server.hpp"
#include "lockstep/zmq/test_support.hpp"

namespace fieldproof::lockstep {
namespace {

using namespace std::chrono_literals;
using testing::Process;
using testing::read_file;
using testing::TempDir;

constexpr const char* kCli = FIELDPROOF_CLI;

TEST(CoordinatorCli, PrintsTheBoundEndpointsServesAndExitsZeroOnSigterm) {
  TempDir dir;
  Process p({kCli, "coordinator", "--bind", "ipc://c.sock", "--ipc-dir", dir.path(), "--control",
             "ipc://ctl.sock", "--max-rtf", "2"},
            {}, dir.file("out"), dir.file("err"));
  ControlClient client("ipc://" + dir.file("ctl.sock"));
  ControlReply r = client.request(status_request(), seconds(20));  // waits for the bind
  ASSERT_TRUE(r.ok) << r.error << read_file(dir.file("err"));
  EXPECT_DOUBLE_EQ(r.status.max_rtf, 2.0);
  p.signal(SIGTERM);
  EXPECT_EQ(p.wait(10s), 0) << read_file(dir.file("err"));
  std::string out = read_file(dir.file("out"));
  EXPECT_NE(out.find("bound ipc://" + dir.file("c.sock") + "\n"), std::string::npos) << out;
  EXPECT_NE(out.find("control ipc://" + dir.file("ctl.sock") + "\n"), std::string::npos) << out;
  EXPECT_NE(out.find("ready\n"), std::string::npos) << out;
}

TEST(CoordinatorCli, SigintAlsoStopsItWithExitZero) {
  TempDir dir;
  Process p({kCli, "coordinator", "--bind", "ipc://c.sock", "--ipc-dir", dir.path()}, {},
            dir.file("out"), dir.file("err"));
  ControlClient client("ipc://" + dir.file("c.sock"));
  ASSERT_TRUE(client.request(status_request(), seconds(20)).ok);
  p.signal(SIGINT);
  EXPECT_EQ(p.wait(10s), 0);
}

TEST(CoordinatorCli, UnsupportedEndpointExitsTwoNamingIt) {
  TempDir dir;
  Process p({kCli, "coordinator", "--bind", "udp://x:1"}, {}, dir.file("out"), dir.file("err"));
  EXPECT_EQ(p.wait(10s), 2);
  EXPECT_NE(read_file(dir.file("err")).find("udp://x:1"), std::string::npos);
}

TEST(CoordinatorCli, NegativeMaxRtfExitsTwo) {
  TempDir dir;
  Process p({kCli, "coordinator", "--bind", "ipc://c.sock", "--ipc-dir", dir.path(), "--max-rtf",
             "-1"},
            {}, dir.file("out"), dir.file("err"));
  EXPECT_EQ(p.wait(10s), 2);
  EXPECT_NE(read_file(dir.file("err")).find("--max-rtf"), std::string::npos);
}

TEST(CoordinatorCli, BadDurationExitsTwoQuotingIt) {
  TempDir dir;
  Process p({kCli, "coordinator", "--bind", "ipc://c.sock", "--ipc-dir", dir.path(),
             "--ack-timeout", "soon"},
            {}, dir.file("out"), dir.file("err"));
  EXPECT_EQ(p.wait(10s), 2);
  EXPECT_NE(read_file(dir.file("err")).find("soon"), std::string::npos);
}

TEST(CoordinatorCli, MissingCurveKeyFileExitsTwo) {
  TempDir dir;
  Process p({kCli, "coordinator", "--bind", "tcp://127.0.0.1:*", "--curve-secret-key",
             dir.file("nope.key")},
            {}, dir.file("out"), dir.file("err"));
  EXPECT_EQ(p.wait(10s), 2);
  EXPECT_NE(read_file(dir.file("err")).find("nope.key"), std::string::npos);
}

TEST(CoordinatorCli, MissingBindExitsTwo) {
  TempDir dir;
  Process p({kCli, "coordinator"}, {}, dir.file("out"), dir.file("err"));
  EXPECT_EQ(p.wait(10s), 2);
}

TEST(CoordinatorCli, HelpExitsZeroAndDescribesTheOptions) {
  TempDir dir;
  Process p({kCli, "coordinator", "--help"}, {}, dir.file("out"), dir.file("err"));
  EXPECT_EQ(p.wait(10s), 0);
  std::string out = read_file(dir.file("out"));
  for (const char* opt : {"--bind", "--parent", "--max-rtf", "--control", "--curve-secret-key"}) {
    EXPECT_NE(out.find(opt), std::string::npos) << opt;
  }
}

TEST(CoordinatorCli, CurveKeyFilePrintsThePublicKey) {
  TempDir dir;
  CurveKeyPair keys = generate_curve_keypair();
  std::ofstream(dir.file("server.key")) << keys.secret_key << "\n";
  Process p({kCli, "coordinator", "--bind", "ipc://c.sock", "--ipc-dir", dir.path(), "--control",
             "ipc://ctl.sock", "--curve-secret-key", dir.file("server.key")},
            {}, dir.file("out"), dir.file("err"));
  ConnectOptions c;
  c.curve.server_public_key = keys.public_key;
  ControlClient client("ipc://" + dir.file("ctl.sock"), c);
  ASSERT_TRUE(client.request(status_request(), seconds(20)).ok) << read_file(dir.file("err"));
  p.signal(SIGTERM);
  EXPECT_EQ(p.wait(10s), 0);
  EXPECT_NE(read_file(dir.file("out")).find("curve-public-key " + keys.public_key),
            std::string::npos);
}

}  // namespace
}  // namespace fieldproof::lockstep
