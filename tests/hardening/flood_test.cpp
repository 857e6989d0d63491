// Floods of the coordinator: a peer that sends garbage as fast as it can is
// dropped and the refusal lines stay few; a peer that does not read is dropped when its send
// queue is full; a frame header announcing a huge length ends that connection without an
// allocation; the others keep their grants; `coordinator --max-message-bytes` refuses 0, negative,
// fractional and NaN values with exit 2.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <zmq.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "fieldproof/lockstep/codec.hpp"
#include "fieldproof/lockstep/transport.hpp"
#include "fieldproof/lockstep/zmq_server.hpp"
#include "lockstep/zmq/test_support.hpp"
#include "shell_util.hpp"

namespace fieldproof::lockstep {
namespace {

using namespace std::chrono_literals;
using testing::Events;
using testing::TempDir;

// A regulating participant stepping 1 ms at a time on its own thread.
class Ticker {
 public:
  explicit Ticker(const std::string& endpoint)
      : p_(connect_participant(endpoint, {.name = "ticker"}, [] {
          ConnectOptions o;
          o.heartbeat_interval = milliseconds(50);
          return o;
        }())) {
    thread_ = std::thread([this] {
      Rate rate(*p_, milliseconds(1));
      while (!stop_.load() && rate.sleep()) now_ns_.store(p_->now().ns());
    });
  }
  ~Ticker() {
    stop_.store(true);
    thread_.join();
  }
  SimTime now() const { return SimTime::from_ns(now_ns_.load()); }
  Participant& participant() { return *p_; }

 private:
  std::unique_ptr<Participant> p_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> now_ns_{0};
  std::thread thread_;
};

// A raw DEALER with a monitor of its own connection's close.
class RawPeer {
 public:
  explicit RawPeer(const std::string& endpoint, int rcvhwm = 1000) {
    ctx_ = zmq_ctx_new();
    sock_ = zmq_socket(ctx_, ZMQ_DEALER);
    int zero = 0;
    zmq_setsockopt(sock_, ZMQ_LINGER, &zero, sizeof zero);
    zmq_setsockopt(sock_, ZMQ_RCVHWM, &rcvhwm, sizeof rcvhwm);
    zmq_socket_monitor(sock_, "inproc://raw-peer-monitor", ZMQ_EVENT_DISCONNECTED);
    mon_ = zmq_socket(ctx_, ZMQ_PAIR);
    zmq_setsockopt(mon_, ZMQ_LINGER, &zero, sizeof zero);
    zmq_connect(mon_, "inproc://raw-peer-monitor");
    zmq_connect(sock_, endpoint.c_str());
  }
  ~RawPeer() {
    zmq_socket_monitor(sock_, nullptr, 0);
    zmq_close(mon_);
    zmq_close(sock_);
    zmq_ctx_term(ctx_);
  }
  // Sends without blocking; false when the peer's own queue is full.
  bool send_bytes(const std::string& b) {
    return zmq_send(sock_, b.data(), b.size(), ZMQ_DONTWAIT) >= 0;
  }
  // True when the coordinator closed this peer's connection within `timeout`.
  bool await_disconnect(std::chrono::milliseconds timeout) {
    zmq_pollitem_t item{mon_, 0, ZMQ_POLLIN, 0};
    if (zmq_poll(&item, 1, static_cast<long>(timeout.count())) <= 0) return false;
    zmq_msg_t m;
    zmq_msg_init(&m);
    zmq_msg_recv(&m, mon_, 0);
    zmq_msg_close(&m);
    return true;
  }

 private:
  void* ctx_;
  void* sock_;
  void* mon_;
};

size_t count_lines(const std::vector<std::string>& log, const std::string& text) {
  return static_cast<size_t>(std::count_if(log.begin(), log.end(), [&](const std::string& l) {
    return l.find(text) != std::string::npos;
  }));
}

class FloodTest : public ::testing::Test {
 protected:
  void start(ServerOptions o) {
    o.ipc_dir = dir_.path();
    o.core.max_rtf = 5.0;  // keeps the ticker from burning a shared CPU
    o.core.max_message_bytes = 4096;
    o.log = [this](const std::string& line) { log_.push(line); };
    server_ = std::make_unique<CoordinatorServer>(std::move(o));
    ticker_ = std::make_unique<Ticker>(server_->endpoints()[0]);
  }
  ServerOptions options() {
    ServerOptions o;
    o.bind = {"ipc://coordinator.sock"};
    return o;
  }
  // The ticker's simulated time goes on for 20 ms more.
  void expect_ticker_goes_on() {
    const SimTime t = ticker_->now();
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (ticker_->now() < t + milliseconds(20) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
    EXPECT_GE(ticker_->now(), t + milliseconds(20)) << "the ticker stalled";
    EXPECT_TRUE(ticker_->participant().ok());
  }
  bool await_line(const std::string& text, std::chrono::milliseconds timeout = 10s) {
    return log_.await([&](const auto& l) { return count_lines(l, text) > 0; }, timeout);
  }

  TempDir dir_;
  Events<std::string> log_;
  std::unique_ptr<CoordinatorServer> server_;
  std::unique_ptr<Ticker> ticker_;
};

TEST_F(FloodTest, APeerSendingGarbageIsDroppedAndLoggedOnce) {
  ServerOptions o = options();
  o.max_refusals_in_row = 100;
  start(std::move(o));
  RawPeer flood(server_->endpoints()[0]);
  int sent = 0;
  for (int i = 0; i < 20000 && server_->dropped_peers() == 0; ++i) {
    if (flood.send_bytes("garbage " + std::to_string(i))) ++sent;
  }
  ASSERT_TRUE(await_line("dropped connection")) << sent << " frames sent";
  EXPECT_TRUE(flood.await_disconnect(5s)) << "the flooder's connection stayed open";
  EXPECT_GE(server_->dropped_peers(), 1u);
  std::vector<std::string> log = log_.snapshot();
  EXPECT_EQ(count_lines(log, "dropped connection"), 1u);
  EXPECT_NE(log.back().find("100 frames in a row were refused"), std::string::npos) << log.back();
  // Refusal lines: one per host per 10 s, however many frames.
  EXPECT_EQ(count_lines(log, "refused a frame"), 1u) << server_->bad_frames() << " refused";
  expect_ticker_goes_on();
}

TEST_F(FloodTest, SuppressedRefusalsAreCountedOncePerInterval) {
  ServerOptions o = options();
  o.refusal_log_interval = milliseconds(200);
  start(std::move(o));
  RawPeer flood(server_->endpoints()[0]);
  for (int i = 0; i < 300; ++i) flood.send_bytes("garbage");
  ASSERT_TRUE(await_line("more refused in the last")) << "no count of the suppressed refusals";
  std::vector<std::string> log = log_.snapshot();
  for (const std::string& l : log) {
    if (l.find("more refused in the last") == std::string::npos) continue;
    EXPECT_NE(l.find("frames from ipc pid " + std::to_string(::getpid())), std::string::npos) << l;
  }
  EXPECT_LE(count_lines(log, "refused a frame"), 2u);
  EXPECT_EQ(server_->dropped_peers(), 0u) << "300 refusals are under the default 1000 in a row";
  expect_ticker_goes_on();
}

TEST_F(FloodTest, APeerThatDoesNotReadIsDroppedWhenItsSendQueueIsFull) {
  ServerOptions o = options();
  o.send_hwm = 20;
  start(std::move(o));
  RawPeer lazy(server_->endpoints()[0], /*rcvhwm=*/1);
  const std::string status = encode_frame(Frame{status_request()});
  // Each status request is answered (about 100 bytes); the kernel's socket buffers take some
  // hundreds of kilobytes before the server's queue of 20 fills.
  for (int i = 0; i < 200000 && server_->dropped_peers() == 0; ++i) {
    if (!lazy.send_bytes(status)) std::this_thread::yield();
  }
  ASSERT_TRUE(await_line("its send queue is full (20 frames it has not read)"));
  // The peer does not read, so its own ZeroMQ would not notice the close: the server's line says
  // the connection was shut down.
  std::vector<std::string> log = log_.snapshot();
  EXPECT_EQ(count_lines(log, "dropped connection"), 1u);
  EXPECT_EQ(count_lines(log, "it is disconnected"), 1u);
  expect_ticker_goes_on();
}

// ZMTP 3.0 by hand: a NULL-mechanism greeting, READY as a DEALER, then a message header that
// announces 2^40 bytes. Without ZMQ_MAXMSGSIZE ZeroMQ would try to allocate them (or wait for
// them forever); with it the connection ends at once.
TEST_F(FloodTest, AHugeLengthOnTheWireEndsTheConnectionWithoutAllocating) {
  ServerOptions o = options();
  o.bind = {"tcp://127.0.0.1:*"};
  start(std::move(o));
  const std::string ep = server_->endpoints()[0];
  const int port = std::stoi(ep.substr(ep.rfind(':') + 1));
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string out;
  out += std::string("\xFF\0\0\0\0\0\0\0\0\x7F", 10);  // signature
  out += std::string("\x03\x00", 2);                   // version 3.0
  std::string mech = "NULL";
  mech.resize(20, '\0');
  out += mech;
  out += std::string(1, '\0');   // as-server
  out += std::string(31, '\0');  // filler
  std::string ready = std::string("\x05READY", 6) + std::string("\x0BSocket-Type", 12) +
                      std::string("\0\0\0\x06", 4) + "DEALER";
  out += std::string(1, '\x04') + std::string(1, static_cast<char>(ready.size())) + ready;
  out += std::string("\x02\x00\x00\x01\x00\x00\x00\x00\x00", 9);  // long frame, 2^40 bytes
  out += std::string(1024, 'x');
  ASSERT_EQ(::send(fd, out.data(), out.size(), MSG_NOSIGNAL), static_cast<ssize_t>(out.size()));
  // Read the server's greeting and READY, then expect the end of the connection (0 or reset).
  char buf[4096];
  ssize_t n = 0;
  do {
    n = ::recv(fd, buf, sizeof buf, 0);
  } while (n > 0);
  const int err = errno;
  ::close(fd);
  EXPECT_TRUE(n == 0 || err == ECONNRESET) << "the connection stayed open: " << std::strerror(err);
  expect_ticker_goes_on();
  EXPECT_TRUE(server_->status().participants.size() == 1);
}

TEST_F(FloodTest, AFrameJustOverTheLimitIsStillRefusedWithAReason) {
  start(options());
  RawPeer peer(server_->endpoints()[0]);
  // 8000 bytes over a 4096 limit: under the 64 KiB slack, so read and refused (not cut off).
  peer.send_bytes(std::string(8000, 'x'));
  ASSERT_TRUE(await_line("exceeds max_message_bytes 4096"));
  EXPECT_EQ(server_->dropped_peers(), 0u);
}

TEST(CoordinatorMaxMessageBytes, ZeroNegativeFractionalAndNanAreRefusedWithExit2) {
  TempDir dir;
  for (const std::string v : {"0", "-1", "nan", "NaN", "1.5", "1e6", "4294967296", ""}) {
    const shell::ShellResult r = shell::run_shell(
        std::string(FIELDPROOF_CLI) + " coordinator --bind ipc://" + dir.file("c.sock") +
        " --max-message-bytes '" + v + "' </dev/null 2>&1");
    EXPECT_EQ(r.exit_code, 2) << "'" << v << "': " << r.out;
    EXPECT_NE(r.out.find("--max-message-bytes"), std::string::npos) << r.out;
  }
}

}  // namespace
}  // namespace fieldproof::lockstep
