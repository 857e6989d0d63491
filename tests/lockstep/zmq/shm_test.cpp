// The same-host shared-memory transport: the rings on their own (order, chunks, a full ring, every
// kind of corruption, random bytes), the segment's checks, and the coordinator server with a
// participant that switched to shared memory, one that did not, and a hand-made client that
// writes garbage into its ring on purpose (the coordinator must refuse or drop it, never crash).
#include <gtest/gtest.h>
#include <zmq.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <thread>

#include "fieldproof/lockstep/codec.hpp"
#include "fieldproof/lockstep/transport.hpp"
#include "fieldproof/lockstep/zmq_server.hpp"
#include "fieldproof/time/system_clock.hpp"
#include "lockstep/zmq/shm_ring.hpp"
#include "lockstep/zmq/test_support.hpp"

namespace fieldproof::lockstep {
namespace {

using namespace std::chrono_literals;
using testing::Events;
using testing::TempDir;

// True unless this run is the ZeroMQ variant of the tests (FIELDPROOF_SHM=0, set by CTest).
bool shm_on() {
  const char* v = std::getenv("FIELDPROOF_SHM");
  return v == nullptr || std::string(v) != "0";
}

// One ring in ordinary memory.
struct LocalRing {
  explicit LocalRing(uint32_t cap) : data(cap), capacity(cap) {}
  std::unique_ptr<shm::RingControl> control = std::make_unique<shm::RingControl>();
  std::vector<char> data;
  uint32_t capacity;
  shm::Producer producer() { return shm::Producer(*control, data.data(), capacity); }
  shm::Consumer consumer(size_t max = 1 << 20) {
    return shm::Consumer(*control, data.data(), capacity, max);
  }
};

std::string frame_of(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((seed * 131 + i * 7) & 0xFF);
  return s;
}

TEST(ShmRing, FramesArriveWholeAndInOrderAcrossTheWrap) {
  LocalRing r(4096);
  auto p = r.producer();
  auto c = r.consumer();
  std::string got;
  uint32_t next_read = 0;
  for (uint32_t i = 0; i < 2000; ++i) {
    ASSERT_TRUE(p.push(frame_of(1 + (i * 37) % 300, i)).ok());
    if (i % 3 == 2) {
      while (c.next(got) == shm::Next::kFrame) {
        ASSERT_EQ(got, frame_of(1 + (next_read * 37) % 300, next_read)) << next_read;
        ++next_read;
      }
      ASSERT_TRUE(p.flush().ok());
    }
  }
  while (next_read < 2000) {
    const shm::Next n = c.next(got);
    ASSERT_NE(n, shm::Next::kCorrupt) << c.status().message();
    if (n == shm::Next::kEmpty) {
      ASSERT_TRUE(p.flush().ok());
      continue;
    }
    ASSERT_EQ(got, frame_of(1 + (next_read * 37) % 300, next_read));
    ++next_read;
  }
  EXPECT_EQ(p.pending(), 0u);
}

TEST(ShmRing, AFrameLargerThanTheRingArrivesInChunksAndTheSenderNeverBlocks) {
  LocalRing r(4096);
  auto p = r.producer();
  auto c = r.consumer();
  const std::string big = frame_of(50'000, 7);
  ASSERT_TRUE(p.push(big).ok());
  EXPECT_EQ(p.pending(), 1u);  // most of it waits in the producer: push returned at once
  ASSERT_TRUE(p.push("after").ok());
  std::string got;
  std::vector<std::string> frames;
  for (int i = 0; i < 1000 && frames.size() < 2; ++i) {
    const shm::Next n = c.next(got);
    ASSERT_NE(n, shm::Next::kCorrupt) << c.status().message();
    if (n == shm::Next::kFrame) frames.push_back(got);
    ASSERT_TRUE(p.flush().ok());
  }
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0], big);
  EXPECT_EQ(frames[1], "after");
}

TEST(ShmRing, AnImpossiblePublishedPositionIsCorruptWithAReason) {
  LocalRing r(4096);
  auto c = r.consumer();
  r.control->write_pos.store(5000);  // more than the ring holds
  std::string got;
  EXPECT_EQ(c.next(got), shm::Next::kCorrupt);
  EXPECT_NE(c.status().message().find("impossible"), std::string::npos) << c.status().message();
  EXPECT_EQ(c.next(got), shm::Next::kCorrupt);  // and stays so
}

TEST(ShmRing, ARecordLongerThanWhatWasPublishedIsCorrupt) {
  LocalRing r(4096);
  auto c = r.consumer();
  const uint32_t header = 100;  // 100 bytes announced, 10 published
  std::memcpy(r.data.data(), &header, 4);
  r.control->write_pos.store(14);
  std::string got;
  EXPECT_EQ(c.next(got), shm::Next::kCorrupt);
  EXPECT_NE(c.status().message().find("100 bytes"), std::string::npos) << c.status().message();
}

TEST(ShmRing, AZeroLengthRecordIsCorrupt) {
  LocalRing r(4096);
  auto c = r.consumer();
  const uint32_t header = 0x8000'0000u;  // "more follows", length 0
  std::memcpy(r.data.data(), &header, 4);
  r.control->write_pos.store(8);
  std::string got;
  EXPECT_EQ(c.next(got), shm::Next::kCorrupt);
}

TEST(ShmRing, ChunksAddingUpPastTheLimitAreCorrupt) {
  LocalRing r(4096);
  auto p = r.producer();
  auto c = r.consumer(/*max=*/3000);
  ASSERT_TRUE(p.push(frame_of(10'000, 1)).ok());
  std::string got;
  shm::Next n = shm::Next::kEmpty;
  for (int i = 0; i < 100 && n != shm::Next::kCorrupt; ++i) {
    n = c.next(got);
    ASSERT_NE(n, shm::Next::kFrame);
    static_cast<void>(p.flush());
  }
  EXPECT_EQ(n, shm::Next::kCorrupt);
  EXPECT_NE(c.status().message().find("3000"), std::string::npos) << c.status().message();
}

TEST(ShmRing, AConsumerPositionAheadOfTheProducerIsCorruptForTheProducer) {
  LocalRing r(4096);
  auto p = r.producer();
  r.control->read_pos.store(1'000'000);
  const Status pushed = p.push("x");
  EXPECT_FALSE(pushed.ok());
  EXPECT_EQ(pushed.code(), StatusCode::kCorrupt);
  EXPECT_NE(pushed.message().find("impossible"), std::string::npos) << pushed.message();
}

TEST(ShmRing, RandomBytesInTheRingNeverCrashTheConsumer) {
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 2000; ++trial) {
    LocalRing r(4096);
    for (char& b : r.data) b = static_cast<char>(rng());
    const uint64_t base = rng() % 100'000;
    r.control->write_pos.store(base + rng() % 6000);
    r.control->read_pos.store(base);
    // The consumer starts at its own position 0: whatever the words say, it must come back with
    // a bounded frame, nothing or a reason.
    auto c = r.consumer(/*max=*/2000);
    std::string got;
    for (int i = 0; i < 50; ++i) {
      const shm::Next n = c.next(got);
      if (n != shm::Next::kFrame) break;
      ASSERT_LE(got.size(), 2000u);
      ASSERT_GE(got.size(), 1u);
    }
  }
}

TEST(ShmRing, AWaitingConsumerIsWokenByThePush) {
  LocalRing r(4096);
  auto p = r.producer();
  auto c = r.consumer();
  Events<int> woke;
  std::thread waiter([&] {
    c.wait(seconds(30));  // returns early only when woken
    woke.push(1);
  });
  // Until the waiter sleeps, a push might come before its wait (then it returns at once, also
  // right); either way it must return well before its 30 s.
  ASSERT_TRUE(p.push("hello").ok());
  EXPECT_TRUE(woke.await([](const auto& v) { return !v.empty(); }, 10s));
  waiter.join();
}

TEST(ShmSegment, OpensWithItsTokenAndRefusesAnotherToken) {
  auto created = shm::Segment::create(4096);
  ASSERT_TRUE(created.ok()) << created.status().message();
  const auto& seg = *created;
  auto same = shm::Segment::open(seg->proc_path(), seg->token_hex());
  ASSERT_TRUE(same.ok()) << same.status().message();
  EXPECT_EQ((*same)->ring_bytes(), 4096u);
  std::string wrong = seg->token_hex();
  wrong[0] = wrong[0] == '0' ? '1' : '0';
  auto other = shm::Segment::open(seg->proc_path(), wrong);
  EXPECT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("token"), std::string::npos) << other.status().message();
}

TEST(ShmSegment, AnOrdinaryFileIsRefusedAsNotSealed) {
  TempDir dir;
  {
    std::ofstream f(dir.file("fake"), std::ios::binary);
    f << std::string(1 << 16, 'x');
  }
  auto opened = shm::Segment::open(dir.file("fake"), "00");
  EXPECT_FALSE(opened.ok());
  EXPECT_NE(opened.status().message().find("sealed"), std::string::npos)
      << opened.status().message();
}

TEST(ShmSegment, ABadRingSizeIsRefused) {
  auto created = shm::Segment::create(5000);
  EXPECT_FALSE(created.ok());
  EXPECT_NE(created.status().message().find("power of two"), std::string::npos)
      << created.status().message();
}

// ---- the coordinator server ----------------------------------------------------------------------

struct Server {
  explicit Server(const std::string& bind = "ipc://coordinator.sock") {
    ServerOptions o;
    o.bind = {bind};
    o.ipc_dir = dir.path();
    o.core.ack_timeout = seconds(30);
    o.log = [this](const std::string& l) { logs.push(l); };
    o.on_failure = [this](const std::string& p, const std::string&) { failures.push(p); };
    o.on_grant = [this](SimTime t, uint64_t) { grants.push(t); };
    o.on_shm_switch = [this] { switches.push(1); };
    server = std::make_unique<CoordinatorServer>(std::move(o));
  }
  bool logged(const std::string& part, std::chrono::milliseconds timeout = 5s) {
    return logs.await(
        [&](const std::vector<std::string>& v) {
          for (const auto& l : v) {
            if (l.find(part) != std::string::npos) return true;
          }
          return false;
        },
        timeout);
  }
  bool granted(SimTime t, std::chrono::milliseconds timeout = 10s) {
    return grants.await([&](const auto& g) { return !g.empty() && g.back() >= t; }, timeout);
  }
  TempDir dir;
  Events<std::string> logs;
  Events<std::string> failures;
  Events<SimTime> grants;
  Events<int> switches;
  std::unique_ptr<CoordinatorServer> server;
  bool switched(size_t n) {
    return switches.await([&](const std::vector<int>& v) { return v.size() >= n; }, 10s);
  }
};

// A participant stepping 1 ms at a time on its own thread until stopped.
class Stepper {
 public:
  Stepper(const std::string& endpoint, const std::string& name, ConnectOptions copts = {}) {
    copts.heartbeat_interval = milliseconds(50);
    p_ = connect_participant(endpoint, {.name = name}, copts);
    thread_ = std::thread([this] {
      Rate rate(*p_, milliseconds(1));
      while (!stop_.load() && rate.sleep()) {
      }
    });
  }
  ~Stepper() {
    stop_.store(true);
    thread_.join();
  }

 private:
  std::unique_ptr<Participant> p_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

TEST(ShmTransport, AnIpcParticipantSwitchesToSharedMemoryAndIsGranted) {
  if (!shm_on()) GTEST_SKIP() << "this is the ZeroMQ run of the tests (FIELDPROOF_SHM=0)";
  Server s;
  Stepper p(s.server->endpoints()[0], "ugv1");
  EXPECT_TRUE(s.switched(1));
  const SimTime after = s.grants.snapshot().empty() ? SimTime::zero() : s.grants.snapshot().back();
  EXPECT_TRUE(s.granted(after + milliseconds(200)));  // and time goes on over the rings
  EXPECT_EQ(s.server->shm_connections(), 1u);
}

TEST(ShmTransport, ALinkThatOptsOutStaysOnZeroMqAndIsGranted) {
  Server s;
  ConnectOptions c;
  c.shared_memory = false;
  Stepper p(s.server->endpoints()[0], "ugv1", c);
  EXPECT_TRUE(s.granted(SimTime::zero() + milliseconds(200)));
  EXPECT_EQ(s.server->shm_connections(), 0u);
}

TEST(ShmTransport, TcpStaysOnZeroMq) {
  Server s("tcp://127.0.0.1:*");
  Stepper p(s.server->endpoints()[0], "ugv1");
  EXPECT_TRUE(s.granted(SimTime::zero() + milliseconds(200)));
  EXPECT_EQ(s.server->shm_connections(), 0u);
}

TEST(ShmTransport, SharedMemoryBesideZeroMqGivesEachItsGrants) {
  Server s;
  ConnectOptions zmq_only;
  zmq_only.shared_memory = false;
  Stepper a(s.server->endpoints()[0], "on_shm");
  Stepper b(s.server->endpoints()[0], "on_zmq", zmq_only);
  if (shm_on()) {
    EXPECT_TRUE(s.switched(1));
  }
  EXPECT_TRUE(s.granted(SimTime::zero() + milliseconds(300)));
  EXPECT_EQ(s.server->shm_connections(), shm_on() ? 1u : 0u);
}

// A hand-made client: a DEALER that offers shared memory, maps the segment the Welcome names and
// then writes into the up ring whatever the test wants.
class RawShmClient {
 public:
  explicit RawShmClient(const std::string& endpoint) {
    ctx_ = zmq_ctx_new();
    sock_ = zmq_socket(ctx_, ZMQ_DEALER);
    int zero = 0;
    zmq_setsockopt(sock_, ZMQ_LINGER, &zero, sizeof zero);
    zmq_connect(sock_, endpoint.c_str());
    std::string hello = encode_frame(Hello{kProtocolVersion, "raw-test +shm"});
    zmq_send(sock_, hello.data(), hello.size(), 0);
    int timeout = 10'000;
    zmq_setsockopt(sock_, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
    char buf[4096];
    const int n = zmq_recv(sock_, buf, sizeof buf, 0);
    if (n <= 0) return;
    DecodeResult r = decode_frame(std::string_view(buf, static_cast<size_t>(n)));
    if (!r) return;
    const auto* w = std::get_if<Welcome>(&r.frame());
    if (w == nullptr) return;
    const size_t at = w->coordinator.rfind(" +shm=");
    if (at == std::string::npos) return;
    const std::string spec = w->coordinator.substr(at + 6);  // PATH:TOKEN;BELL_PATH:BELL_TOKEN
    const size_t semi = spec.find(';');
    if (semi == std::string::npos) return;
    const std::string mine = spec.substr(0, semi);
    const std::string bell = spec.substr(semi + 1);
    auto seg =
        shm::Segment::open(mine.substr(0, mine.rfind(':')), mine.substr(mine.rfind(':') + 1));
    auto bell_seg =
        shm::Segment::open(bell.substr(0, bell.rfind(':')), bell.substr(bell.rfind(':') + 1));
    if (seg.ok()) seg_ = std::move(seg).value();
    if (bell_seg.ok()) bell_ = std::move(bell_seg).value();
    if (!seg_ || !bell_) {
      seg_.reset();
      return;
    }
    // The switch: a second Hello, answered by the coordinator's last frame on the socket.
    std::string sw = encode_frame(Hello{kProtocolVersion, "raw-test +shm-ring"});
    zmq_send(sock_, sw.data(), sw.size(), 0);
    const int m = zmq_recv(sock_, buf, sizeof buf, 0);
    if (m <= 0) {
      seg_.reset();
      return;
    }
    DecodeResult second = decode_frame(std::string_view(buf, static_cast<size_t>(m)));
    if (!second || !std::holds_alternative<Welcome>(second.frame())) {
      seg_.reset();
      return;
    }
    up_ = std::make_unique<shm::Producer>(seg_->up(), seg_->up_data(), seg_->ring_bytes(),
                                          &bell_->up());
    down_ = std::make_unique<shm::Consumer>(seg_->down(), seg_->down_data(), seg_->ring_bytes(),
                                            1 << 20);
  }
  ~RawShmClient() {
    zmq_close(sock_);
    zmq_ctx_term(ctx_);
  }
  bool mapped() const { return seg_ != nullptr; }
  void send(const Frame& f) {
    static_cast<void>(up_->push(encode_frame(f)));  // a test client: the server side is checked
  }
  void send_bytes(std::string bytes) { static_cast<void>(up_->push(std::move(bytes))); }
  // The next frame from the coordinator within `timeout`.
  std::optional<Frame> receive(Duration timeout = seconds(5)) {
    const WallNow wall = SystemClock::wall_now();
    const SimTime until = wall() + timeout;
    std::string bytes;
    while (wall() < until) {
      const shm::Next n = down_->next(bytes);
      if (n == shm::Next::kCorrupt) return std::nullopt;
      if (n == shm::Next::kFrame) {
        DecodeResult r = decode_frame(bytes);
        if (r) return std::move(r).frame();
        return std::nullopt;
      }
      down_->wait(milliseconds(50));
    }
    return std::nullopt;
  }
  std::optional<Grant> await_grant(SimTime t) {
    while (auto f = receive()) {
      if (auto* g = std::get_if<Grant>(&*f); g != nullptr && g->time >= t) return *g;
    }
    return std::nullopt;
  }
  shm::Segment& segment() { return *seg_; }
  // Rings the coordinator's doorbell (after the test wrote into the up ring by hand).
  void ring() { shm::bell_ring(bell_->up()); }

 private:
  void* ctx_ = nullptr;
  void* sock_ = nullptr;
  std::unique_ptr<shm::Segment> seg_;
  std::unique_ptr<shm::Segment> bell_;
  std::unique_ptr<shm::Producer> up_;
  std::unique_ptr<shm::Consumer> down_;
};

TEST(ShmCorruption, GarbageInAWellFormedRecordIsRefusedAndTheParticipantCarriesOn) {
  if (!shm_on()) GTEST_SKIP() << "this is the ZeroMQ run of the tests (FIELDPROOF_SHM=0)";
  Server s;
  RawShmClient raw(s.server->endpoints()[0]);
  ASSERT_TRUE(raw.mapped());
  raw.send(Announce{"raw", "main", Role::kRegulating, SimTime::zero()});
  ASSERT_TRUE(raw.await_grant(SimTime::zero()));
  raw.send_bytes(std::string("\xF2\x63garbage", 9));  // the magic, then an unknown kind
  std::optional<Frame> f = raw.receive();
  ASSERT_TRUE(f);
  const auto* e = std::get_if<Error>(&*f);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->code, ErrorCode::kUnknownKind) << e->reason;
  raw.send(Announce{"raw", "main", Role::kRegulating, SimTime::zero() + milliseconds(5)});
  EXPECT_TRUE(raw.await_grant(SimTime::zero() + milliseconds(5)));
  EXPECT_TRUE(s.failures.snapshot().empty());
}

TEST(ShmCorruption, AnImpossibleRecordLengthDropsTheConnectionAndNamesTheParticipant) {
  if (!shm_on()) GTEST_SKIP() << "this is the ZeroMQ run of the tests (FIELDPROOF_SHM=0)";
  Server s;
  RawShmClient raw(s.server->endpoints()[0]);
  ASSERT_TRUE(raw.mapped());
  raw.send(Announce{"raw", "main", Role::kRegulating, SimTime::zero()});
  ASSERT_TRUE(raw.await_grant(SimTime::zero()));
  // A record header announcing almost 2 GiB, published as if it were there.
  shm::RingControl& up = raw.segment().up();
  const uint64_t at = up.write_pos.load();
  const uint32_t header = 0x7FFF'FFF0u;
  std::memcpy(raw.segment().up_data() + (at & (raw.segment().ring_bytes() - 1)), &header, 4);
  up.write_pos.store(at + 16);
  raw.ring();
  EXPECT_TRUE(s.logged("shared-memory ring is corrupt"));
  EXPECT_TRUE(s.failures.await(
      [](const std::vector<std::string>& v) { return !v.empty() && v.front() == "raw"; }, 2s));
  // The coordinator is alive and answers (the run failed, which the status says).
  ControlReply r = s.server->control(Control{});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("raw"), std::string::npos) << r.error;
}

TEST(ShmCorruption, RandomBytesOverAFollowersRingLeaveTheOthersRunning) {
  if (!shm_on()) GTEST_SKIP() << "this is the ZeroMQ run of the tests (FIELDPROOF_SHM=0)";
  Server s;
  RawShmClient raw(s.server->endpoints()[0]);
  ASSERT_TRUE(raw.mapped());
  raw.send(Announce{"raw", "main", Role::kFollowing, SimTime::zero()});
  ASSERT_TRUE(raw.receive());
  Stepper ticker(s.server->endpoints()[0], "ticker");
  ASSERT_TRUE(s.granted(SimTime::zero() + milliseconds(20)));
  std::mt19937_64 rng(7);
  shm::Segment& seg = raw.segment();
  for (uint32_t i = 0; i < seg.ring_bytes(); ++i) seg.up_data()[i] = static_cast<char>(rng());
  seg.up().write_pos.store(seg.up().write_pos.load() + 1 + rng() % seg.ring_bytes());
  raw.ring();
  // Refused frame by frame or dropped as corrupt; either way logged, and time goes on.
  EXPECT_TRUE(s.logs.await(
      [](const std::vector<std::string>& v) {
        for (const auto& l : v) {
          if (l.find("refused a frame from connection") != std::string::npos ||
              l.find("corrupt") != std::string::npos) {
            return true;
          }
        }
        return false;
      },
      5s));
  const SimTime later = s.grants.snapshot().back() + milliseconds(50);
  EXPECT_TRUE(s.granted(later));
  EXPECT_TRUE(s.failures.snapshot().empty());
}

}  // namespace
}  // namespace fieldproof::lockstep
