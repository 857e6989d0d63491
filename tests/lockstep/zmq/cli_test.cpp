// `fieldproof coordinator` as a process: what it prints, how it stops, how it refuses bad input.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <thread>

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

// ---- clock on a bare coordinator, keygen, authorized keys -------------------------------------

// Runs `fieldproof ARGS...`, returns the exit code; stdout and stderr go to files in `dir`.
int run_cli(const TempDir& dir, std::vector<std::string> args, const std::string& tag) {
  args.insert(args.begin(), kCli);
  Process p(args, {}, dir.file(tag + ".out"), dir.file(tag + ".err"));
  return p.wait(30s);
}

TEST(ClockEndpointCli, ResumeStartsAStartPausedCoordinatorAndStatusShowsItRunning) {
  TempDir dir;
  Process c(
      {kCli, "coordinator", "--bind", "ipc://c.sock", "--ipc-dir", dir.path(), "--start-paused"},
      {}, dir.file("out"), dir.file("err"));
  const std::string ep = "ipc://" + dir.file("c.sock");
  ControlClient client(ep);
  ControlReply r = client.request(status_request(), seconds(20));  // waits for the bind
  ASSERT_TRUE(r.ok) << r.error << read_file(dir.file("err"));
  ASSERT_TRUE(r.status.paused);
  ASSERT_EQ(run_cli(dir, {"clock", ep, "status"}, "s1"), 0) << read_file(dir.file("s1.err"));
  EXPECT_NE(read_file(dir.file("s1.out")).find("state: paused\n"), std::string::npos);
  ASSERT_EQ(run_cli(dir, {"clock", ep, "resume"}, "r"), 0) << read_file(dir.file("r.err"));
  ASSERT_EQ(run_cli(dir, {"clock", ep, "status"}, "s2"), 0) << read_file(dir.file("s2.err"));
  EXPECT_NE(read_file(dir.file("s2.out")).find("state: running\n"), std::string::npos)
      << read_file(dir.file("s2.out"));
  EXPECT_FALSE(client.request(status_request()).status.paused);
  ASSERT_EQ(run_cli(dir, {"clock", ep, "rate", "2.5"}, "rate"), 0)
      << read_file(dir.file("rate.err"));
  EXPECT_DOUBLE_EQ(client.request(status_request()).status.max_rtf, 2.5);
  ASSERT_EQ(run_cli(dir, {"clock", ep, "pause"}, "p"), 0);
  EXPECT_TRUE(client.request(status_request()).status.paused);
  EXPECT_EQ(run_cli(dir, {"clock", ep, "rate", "fast"}, "bad"), 2);
  EXPECT_EQ(run_cli(dir, {"clock", ep, "step"}, "nostep"), 2);
  c.signal(SIGTERM);
  EXPECT_EQ(c.wait(10s), 0);
}

TEST(ClockEndpointCli, NoCoordinatorAtTheEndpointExitsTwoNamingIt) {
  TempDir dir;
  const std::string ep = "ipc://" + dir.file("none.sock");
  EXPECT_EQ(run_cli(dir, {"clock", ep, "status", "--timeout", "300ms"}, "n"), 2);
  EXPECT_NE(read_file(dir.file("n.err")).find(ep), std::string::npos)
      << read_file(dir.file("n.err"));
}

TEST(KeygenCli, WritesASecretAndAPublicKeyWithTheirModesAndPrintsThePublicOne) {
  TempDir dir;
  ASSERT_EQ(run_cli(dir, {"keygen", "--out", dir.file("k")}, "kg"), 0)
      << read_file(dir.file("kg.err"));
  struct stat sec {
  }, pub{};
  ASSERT_EQ(::stat(dir.file("k.key").c_str(), &sec), 0);
  ASSERT_EQ(::stat(dir.file("k.pub").c_str(), &pub), 0);
  EXPECT_EQ(sec.st_mode & 0777, 0600u);
  EXPECT_EQ(pub.st_mode & 0777, 0644u);
  std::string secret = read_file(dir.file("k.key"));
  std::string pubkey = read_file(dir.file("k.pub"));
  ASSERT_EQ(secret.size(), 41u);
  ASSERT_EQ(pubkey.size(), 41u);
  EXPECT_EQ(curve_public_key(secret.substr(0, 40)), pubkey.substr(0, 40));
  EXPECT_EQ(read_file(dir.file("kg.out")), pubkey);
  EXPECT_EQ(run_cli(dir, {"keygen", "--out", dir.file("k")}, "again"), 2) << "overwrote a key";
}

TEST(AuthorizedKeysCli, ABadLineExitsTwoWithFileAndLine) {
  TempDir dir;
  ASSERT_EQ(run_cli(dir, {"keygen", "--out", dir.file("srv")}, "kg"), 0);
  {
    std::ofstream f(dir.file("keys"));
    f << "# clients\n\nnot-a-key\n";
  }
  EXPECT_EQ(
      run_cli(dir,
              {"coordinator", "--bind", "ipc://c.sock", "--ipc-dir", dir.path(),
               "--curve-secret-key", dir.file("srv.key"), "--authorized-keys", dir.file("keys")},
              "c"),
      2);
  EXPECT_NE(read_file(dir.file("c.err")).find(dir.file("keys") + ":3:"), std::string::npos)
      << read_file(dir.file("c.err"));
}

TEST(AuthorizedKeysCli, OnlyAListedClientKeyControlsTheCoordinator) {
  TempDir dir;
  ASSERT_EQ(run_cli(dir, {"keygen", "--out", dir.file("srv")}, "k1"), 0);
  ASSERT_EQ(run_cli(dir, {"keygen", "--out", dir.file("ok")}, "k2"), 0);
  ASSERT_EQ(run_cli(dir, {"keygen", "--out", dir.file("no")}, "k3"), 0);
  {
    std::ofstream f(dir.file("keys"));
    f << "# the operator\n" << read_file(dir.file("ok.pub"));
  }
  Process c({kCli, "coordinator", "--bind", "tcp://127.0.0.1:*", "--curve-secret-key",
             dir.file("srv.key"), "--authorized-keys", dir.file("keys"), "--start-paused"},
            {}, dir.file("out"), dir.file("err"));
  // The bound endpoint is printed before "ready".
  std::string ep;
  for (int i = 0; i < 200 && ep.empty(); ++i) {
    std::string out = read_file(dir.file("out"));
    auto at = out.find("bound ");
    auto ready = out.find("ready\n");
    if (at != std::string::npos && ready != std::string::npos) {
      ep = out.substr(at + 6, out.find('\n', at) - at - 6);
    } else {
      std::this_thread::sleep_for(50ms);  // a file, not an event: polled with a deadline
    }
  }
  ASSERT_FALSE(ep.empty()) << read_file(dir.file("err"));
  EXPECT_EQ(run_cli(dir,
                    {"clock", ep, "resume", "--server-key", dir.file("srv.pub"), "--client-key",
                     dir.file("no.key")},
                    "no"),
            2);
  EXPECT_NE(read_file(dir.file("no.err")).find("refused"), std::string::npos)
      << read_file(dir.file("no.err"));
  ASSERT_EQ(run_cli(dir,
                    {"clock", ep, "status", "--server-key", dir.file("srv.pub"), "--client-key",
                     dir.file("ok.key")},
                    "ok"),
            0)
      << read_file(dir.file("ok.err"));
  EXPECT_NE(read_file(dir.file("ok.out")).find("state: paused\n"), std::string::npos)
      << "the refused client resumed it";
  c.signal(SIGTERM);
  EXPECT_EQ(c.wait(10s), 0);
  EXPECT_NE(read_file(dir.file("err")).find("refused a peer 127.0.0.1"), std::string::npos)
      << read_file(dir.file("err"));
}

}  // namespace
}  // namespace fieldproof::lockstep
