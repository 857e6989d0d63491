// libzmq 4.3.4 aborts (`Assertion failed: !_io_error (src/stream_engine_base.cpp:331)`) when an
// engine whose input was stopped at the receive high-water mark restarts its input after its
// connection failed. The coordinator bounds its receive queues (flood protection), so: flood it
// while it is stopped (SIGSTOP) until a flooder's send queue is full, continue it, kill -9 the
// flooders (their unread replies make the kernel reset the connections), and the coordinator
// must go on serving, round after round, and exit cleanly on SIGTERM. Plain tcp and CURVE.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "fieldproof/lockstep/transport.hpp"
#include "lockstep/zmq/test_support.hpp"

extern char** environ;

namespace fieldproof::lockstep {
namespace {

using testing::TempDir;

// A child process with its stdout on a pipe; killed (by pid) when the object goes.
class Child {
 public:
  Child(std::vector<std::string> args, const std::string& stderr_file = "/dev/null") {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int rc = posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(fds[1]);
    out_ = fds[0];
    if (rc != 0) throw std::runtime_error("cannot start " + args[0]);
  }
  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    ::close(out_);
  }
  // The next line of its stdout, or "" when none came within timeout_ms (or it closed).
  std::string line(int timeout_ms) {
    for (;;) {
      const size_t nl = buf_.find('\n');
      if (nl != std::string::npos) {
        std::string l = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return l;
      }
      pollfd p{out_, POLLIN, 0};
      if (::poll(&p, 1, timeout_ms) <= 0) return "";
      char b[512];
      const ssize_t n = ::read(out_, b, sizeof b);
      if (n <= 0) return "";
      buf_.append(b, static_cast<size_t>(n));
    }
  }
  // Sends `sig` and waits for the end; the wait status.
  int end(int sig) {
    ::kill(pid_, sig);
    int st = 0;
    ::waitpid(pid_, &st, 0);
    pid_ = -1;
    return st;
  }
  void signal(int sig) { ::kill(pid_, sig); }
  bool running() const {
    int st = 0;
    return ::waitpid(pid_, &st, WNOHANG) == 0;
  }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  std::string buf_;
};

struct Keys {
  std::string pub;
  std::string sec;
};

Keys keypair() {
  char pub[41];
  char sec[41];
  if (zmq_curve_keypair(pub, sec) != 0) throw std::runtime_error("zmq_curve_keypair");
  return {pub, sec};
}

// Floods, kills, checks; `rounds` times. `curve`: the coordinator requires CURVE and the flooders
// hold its public key.
void flood_and_kill(const std::string& kind, bool curve, int rounds) {
  TempDir dir;
  std::vector<std::string> args = {FIELDPROOF_CLI,      "coordinator", "--bind",
                                   "tcp://127.0.0.1:*", "--max-rtf",   "20"};
  Keys keys;
  if (curve) {
    keys = keypair();
    std::ofstream(dir.file("server.key")) << keys.sec << "\n";
    args.push_back("--curve-secret-key");
    args.push_back(dir.file("server.key"));
  }
  const std::string log = dir.file("coordinator.log");
  Child coordinator(args, log);
  std::string endpoint;
  for (std::string l = coordinator.line(20000); !l.empty(); l = coordinator.line(20000)) {
    if (l.rfind("bound ", 0) == 0) endpoint = l.substr(6);
    if (l == "ready") break;
  }
  ASSERT_FALSE(endpoint.empty()) << testing::read_file(log);

  int throttled = 0;
  for (int round = 0; round < rounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    {
      // The coordinator stopped (SIGSTOP) while the flooders start: their frames pile up in its
      // sockets' kernel buffers and their own send queues fill, whatever the coordinator's speed
      // (valid Heartbeats are served about as fast as a flooder sends them, so without the stop a
      // quiet machine rarely throttles). Continued, its I/O thread reads the backlog until the
      // receive queue is at the high-water mark and stops reading: the state the flooders are
      // then killed in.
      coordinator.signal(SIGSTOP);
      std::vector<std::unique_ptr<Child>> flooders;
      for (int k = 0; k < 3; ++k) {
        std::vector<std::string> f = {FIELDPROOF_FLOODER, kind, endpoint};
        if (curve) f.push_back(keys.pub);
        flooders.push_back(std::make_unique<Child>(f));
      }
      // Until one flooder finds the coordinator's queue full (it is then throttled), or 10 s.
      const auto t0 = std::chrono::steady_clock::now();
      bool any = false;
      while (!any && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10)) {
        for (auto& f : flooders) any = any || f->line(100) == "throttled";
      }
      throttled += any ? 1 : 0;
      std::fprintf(stderr, "round %d: %s after %.2f s\n", round,
                   any ? "throttled" : "not throttled",
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      coordinator.signal(SIGCONT);
      for (auto& f : flooders) f->end(SIGKILL);
    }
    // The coordinator serves a participant (a handful of grants) after the flooders died.
    ConnectOptions c;
    c.curve.server_public_key = keys.pub;
    auto p = connect_participant(endpoint, {.name = "after-" + std::to_string(round)}, c);
    for (int i = 0; i < 20; ++i) {
      ASSERT_TRUE(p->sleep_for(milliseconds(1))) << "grant " << i << ": " << p->last_error();
    }
    p.reset();
    ASSERT_TRUE(coordinator.running()) << testing::read_file(log);
  }
  // Without a single throttled connection the test would prove nothing.
  EXPECT_GT(throttled, 0) << "no flooder ever found the coordinator's queue full";
  const int st = coordinator.end(SIGTERM);
  const std::string text = testing::read_file(log);
  EXPECT_TRUE(WIFEXITED(st)) << "the coordinator ended by signal " << WTERMSIG(st) << ":\n"
                             << text.substr(text.size() > 4000 ? text.size() - 4000 : 0);
  EXPECT_EQ(text.find("Assertion failed"), std::string::npos) << text.substr(0, 4000);
}

TEST(ReceiveHighWaterMark, GarbageFloodersKilledWhileTheCoordinatorIsThrottledDoNotAbortIt) {
  flood_and_kill("garbage", false, 3);
}

// Valid frames are served, never refused: the peer is never dropped, only throttled.
TEST(ReceiveHighWaterMark, FastValidPeersKilledWhileTheCoordinatorIsThrottledDoNotAbortIt) {
  flood_and_kill("valid", false, 4);
}

TEST(ReceiveHighWaterMark, CurvePeersKilledWhileTheCoordinatorIsThrottledDoNotAbortIt) {
  flood_and_kill("garbage", true, 2);
  flood_and_kill("valid", true, 2);
}

}  // namespace
}  // namespace fieldproof::lockstep
