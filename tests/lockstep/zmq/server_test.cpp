// The ZeroMQ coordinator server in this process, participants over real ipc/tcp sockets:
// endpoints, the control endpoint, bad input over the socket, CURVE.
#include <gtest/gtest.h>
#include <zmq.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "fieldproof/lockstep/codec.hpp"
#include "fieldproof/lockstep/transport.hpp"
#include "fieldproof/lockstep/zmq_server.hpp"
#include "fieldproof/time/system_clock.hpp"
#include "lockstep/zmq/test_support.hpp"

namespace fieldproof::lockstep {
namespace {

using namespace std::chrono_literals;
using testing::Events;
using testing::TempDir;

ConnectOptions fast_heartbeat() {
  ConnectOptions o;
  o.heartbeat_interval = milliseconds(50);
  return o;
}

// A regulating participant stepping 1 ms at a time on its own thread until stopped.
class Ticker {
 public:
  Ticker(const std::string& endpoint, const std::string& name, ConnectOptions copts = fast_heartbeat())
      : Ticker(connect_participant(endpoint, {.name = name}, copts)) {}
  explicit Ticker(std::unique_ptr<Participant> p) : p_(std::move(p)) {
    thread_ = std::thread([this] {
      Rate rate(*p_, milliseconds(1));
      while (!stop_.load() && rate.sleep()) now_ns_.store(p_->now().ns());
    });
  }
  ~Ticker() {
    stop_.store(true);
    thread_.join();
  }
  Participant& participant() { return *p_; }
  SimTime now() const { return SimTime::from_ns(now_ns_.load()); }

 private:
  std::unique_ptr<Participant> p_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> now_ns_{0};
  std::thread thread_;
};

// Grants seen by the server's grant observer, awaited.
struct GrantLog {
  Events<SimTime> events;
  bool await_at_least(SimTime t, std::chrono::milliseconds timeout = 10s) {
    return events.await([&](const std::vector<SimTime>& g) { return !g.empty() && g.back() >= t; },
                        timeout);
  }
  // True when a grant above `t` arrives within `window` (used to show that none does).
  bool any_above_within(SimTime t, std::chrono::milliseconds window) {
    return events.await(
        [&](const std::vector<SimTime>& g) { return !g.empty() && g.back() > t; }, window);
  }
};

ServerOptions server_options(const TempDir& dir, GrantLog* grants = nullptr) {
  ServerOptions o;
  o.bind = {"ipc://coordinator.sock"};
  o.ipc_dir = dir.path();
  o.core.max_rtf = 5.0;  // keep the tickers from burning a shared CPU
  if (grants != nullptr) o.on_grant = [grants](SimTime t, uint64_t) { grants->events.push(t); };
  return o;
}

// ---- endpoints ---------------------------------------------------------------------------------

TEST(ServerEndpoints, RelativeIpcPathResolvesInTheIpcDirectory) {
  TempDir dir;
  CoordinatorServer server(server_options(dir));
  ASSERT_EQ(server.endpoints().size(), 1u);
  EXPECT_EQ(server.endpoints()[0], "ipc://" + dir.file("coordinator.sock"));
  EXPECT_TRUE(std::filesystem::exists(dir.file("coordinator.sock")));
}

TEST(ServerEndpoints, TcpWildcardPortIsReportedBack) {
  TempDir dir;
  ServerOptions o = server_options(dir);
  o.bind = {"tcp://127.0.0.1:*"};
  CoordinatorServer server(std::move(o));
  ASSERT_EQ(server.endpoints().size(), 1u);
  const std::string& ep = server.endpoints()[0];
  EXPECT_EQ(ep.rfind("tcp://127.0.0.1:", 0), 0u) << ep;
  EXPECT_EQ(ep.find('*'), std::string::npos) << ep;
  Participant p(connect(ep, fast_heartbeat()), {.name = "tcp-user"});
  EXPECT_TRUE(p.ok());
  EXPECT_TRUE(p.sleep_until(SimTime::from_ns(2'000'000)));
}

TEST(ServerEndpoints, UnsupportedEndpointIsRefusedNamingIt) {
  TempDir dir;
  ServerOptions o = server_options(dir);
  o.bind = {"udp://1.2.3.4:5"};
  try {
    CoordinatorServer server(std::move(o));
    FAIL() << "expected TransportError";
  } catch (const TransportError& e) {
    EXPECT_NE(std::string(e.what()).find("udp://1.2.3.4:5"), std::string::npos) << e.what();
  }
}

TEST(ServerEndpoints, IpcPathInAMissingDirectoryIsRefused) {
  TempDir dir;
  ServerOptions o = server_options(dir);
  o.bind = {"ipc://" + dir.file("no/such/dir/c.sock")};
  EXPECT_THROW(CoordinatorServer server(std::move(o)), TransportError);
}

TEST(ServerEndpoints, NoBindEndpointIsRefused) {
  ServerOptions o;
  EXPECT_THROW(CoordinatorServer server(std::move(o)), TransportError);
}

TEST(Transport, ParticipantFromEnvironmentWithoutTheVariableSaysWhatToSet) {
  ::unsetenv(kCoordinatorEnv);
  try {
    participant_from_environment({.name = "x"});
    FAIL() << "expected TransportError";
  } catch (const TransportError& e) {
    EXPECT_NE(std::string(e.what()).find("FIELDPROOF_COORDINATOR"), std::string::npos);
  }
}

TEST(Transport, ParticipantFromEnvironmentConnectsToTheNamedEndpoint) {
  TempDir dir;
  CoordinatorServer server(server_options(dir));
  ::setenv(kCoordinatorEnv, server.endpoints()[0].c_str(), 1);
  auto p = participant_from_environment({.name = "from-env"}, fast_heartbeat());
  ::unsetenv(kCoordinatorEnv);
  EXPECT_TRUE(p->ok());
  EXPECT_TRUE(p->sleep_until(SimTime::from_ns(3'000'000)));
  EXPECT_GE(p->now(), SimTime::from_ns(3'000'000));
}

TEST(Transport, LinkSendIsSafeFromManyThreadsWhileAnotherReceives) {
  TempDir dir;
  CoordinatorServer server(server_options(dir));
  auto link = connect(server.endpoints()[0], fast_heartbeat());
  std::vector<std::thread> senders;
  for (int t = 0; t < 4; ++t) {
    senders.emplace_back([&link] {
      for (int i = 0; i < 200; ++i) link->send(Frame{status_request()});
    });
  }
  int replies = 0;
  while (replies < 800) {
    auto f = link->receive(seconds(5));
    ASSERT_TRUE(f.has_value()) << "after " << replies << " replies";
    if (std::holds_alternative<ControlReply>(*f)) ++replies;
  }
  for (auto& t : senders) t.join();
  EXPECT_EQ(replies, 800);
}

TEST(Transport, CloseWakesABlockedReceive) {
  TempDir dir;
  CoordinatorServer server(server_options(dir));
  auto link = connect(server.endpoints()[0], fast_heartbeat());
  std::thread closer([&] { link->close(); });
  EXPECT_FALSE(link->receive(Duration::infinite()).has_value());
  closer.join();
}

// The ticking participant of the fixtures below over ipc ("ipc") or on the server's local link
// ("local": the engine's own participants in a run with stack processes).
std::unique_ptr<Ticker> make_ticker(CoordinatorServer& server, const std::string& link) {
  if (link == "local") {
    return std::make_unique<Ticker>(std::make_unique<Participant>(
        server.make_local_link(), ParticipantOptions{.name = "ticker"}));
  }
  return std::make_unique<Ticker>(server.endpoints()[0], "ticker");
}

// ---- control -----------------------------------------------------------------------------------

class ControlTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    ServerOptions o = server_options(dir_, &grants_);
    o.control = "ipc://control.sock";
    server_ = std::make_unique<CoordinatorServer>(std::move(o));
    client_ = std::make_unique<ControlClient>(server_->control_endpoint());
    ticker_ = make_ticker(*server_, GetParam());
    ASSERT_TRUE(grants_.await_at_least(SimTime::from_ns(5'000'000)));
  }
  void TearDown() override {
    client_->request(resume_request());
    client_->request(run_until_request(SimTime::infinite()));
    ticker_.reset();
  }
  ControlReply request(const Control& c) {
    ControlReply r = client_->request(c);
    EXPECT_TRUE(r.ok) << r.error;
    return r;
  }

  TempDir dir_;
  GrantLog grants_;
  std::unique_ptr<CoordinatorServer> server_;
  std::unique_ptr<ControlClient> client_;
  std::unique_ptr<Ticker> ticker_;
};

TEST_P(ControlTest, PauseStopsGrants) {
  request(pause_request());
  CoordinatorStatus s = request(status_request()).status;
  EXPECT_TRUE(s.paused);
  EXPECT_FALSE(grants_.any_above_within(s.time, 300ms));
  EXPECT_EQ(request(status_request()).status.time, s.time);
}

TEST_P(ControlTest, ResumeRestartsGrants) {
  request(pause_request());
  SimTime t = request(status_request()).status.time;
  request(resume_request());
  EXPECT_FALSE(request(status_request()).status.paused);
  EXPECT_TRUE(grants_.await_at_least(t + milliseconds(10)));
}

TEST_P(ControlTest, StepAdvancesExactlyTheDurationThenPauses) {
  request(pause_request());
  SimTime t = request(status_request()).status.time;
  request(step_request(milliseconds(7)));
  ASSERT_TRUE(grants_.await_at_least(t + milliseconds(7)));
  EXPECT_FALSE(grants_.any_above_within(t + milliseconds(7), 300ms));
  CoordinatorStatus s = request(status_request()).status;
  EXPECT_TRUE(s.paused);
  EXPECT_EQ(s.time, t + milliseconds(7));
}

TEST_P(ControlTest, RunUntilHoldsTheClockThere) {
  SimTime now = request(status_request()).status.time;
  // Far enough ahead (100 ms of wall time at max_rtf 5) that the request arrives before the
  // clock passes it on a loaded machine (30 ms, 6 ms of wall time, did not always).
  SimTime hold = now + milliseconds(500);
  request(run_until_request(hold));
  ASSERT_TRUE(grants_.await_at_least(hold));
  EXPECT_FALSE(grants_.any_above_within(hold, 300ms));
  CoordinatorStatus s = request(status_request()).status;
  EXPECT_EQ(s.time, hold);
  EXPECT_EQ(s.hold, hold);
  EXPECT_FALSE(s.paused);
  request(run_until_request(SimTime::infinite()));
  EXPECT_TRUE(grants_.await_at_least(hold + milliseconds(5)));
}

TEST_P(ControlTest, SetMaxRtfIsReportedInStatus) {
  request(set_max_rtf_request(3.0));
  EXPECT_DOUBLE_EQ(request(status_request()).status.max_rtf, 3.0);
}

TEST_P(ControlTest, StatusListsTheParticipantWithItsRole) {
  CoordinatorStatus s = request(status_request()).status;
  ASSERT_FALSE(s.participants.empty());
  EXPECT_EQ(s.participants[0].participant, "ticker");
  EXPECT_EQ(s.participants[0].role, Role::kRegulating);
}

TEST_P(ControlTest, ControlFramesAreAlsoAnsweredOnTheMainEndpoint) {
  ControlClient main_client(server_->endpoints()[0]);
  ControlReply r = main_client.request(status_request());
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_FALSE(r.status.participants.empty());
}

TEST_P(ControlTest, ControlEndpointRefusesParticipantFrames) {
  auto link = connect(server_->control_endpoint(), fast_heartbeat());
  link->send(Frame{Announce{"intruder", "main", Role::kRegulating, SimTime::zero()}});
  auto f = link->receive(seconds(5));
  ASSERT_TRUE(f.has_value());
  ASSERT_TRUE(std::holds_alternative<Error>(*f));
  EXPECT_NE(std::get<Error>(*f).reason.find("control"), std::string::npos);
}

// ---- bad input over the socket ----------------------------------------------------------------

// A raw DEALER socket, to send bytes no Link would.
class RawPeer {
 public:
  explicit RawPeer(const std::string& endpoint) {
    ctx_ = zmq_ctx_new();
    sock_ = zmq_socket(ctx_, ZMQ_DEALER);
    int linger = 0;
    zmq_setsockopt(sock_, ZMQ_LINGER, &linger, sizeof linger);
    int timeout_ms = 5000;
    zmq_setsockopt(sock_, ZMQ_RCVTIMEO, &timeout_ms, sizeof timeout_ms);
    zmq_connect(sock_, endpoint.c_str());
  }
  ~RawPeer() {
    zmq_close(sock_);
    zmq_ctx_term(ctx_);
  }
  void send_bytes(const std::string& b) { zmq_send(sock_, b.data(), b.size(), 0); }
  void send(const Frame& f) { send_bytes(encode_frame(f)); }
  // The handshake a participant starts with (docs/protocol.md, 5.1); its Welcome is skipped by
  // next_non_grant().
  void hello() { send(Frame{Hello{kProtocolVersion, "server_test raw peer"}}); }
  // The next frame the server sent; nullopt after 5 s of nothing.
  std::optional<Frame> next() {
    zmq_msg_t m;
    zmq_msg_init(&m);
    if (zmq_msg_recv(&m, sock_, 0) < 0) {
      zmq_msg_close(&m);
      return std::nullopt;
    }
    std::string bytes(static_cast<const char*>(zmq_msg_data(&m)), zmq_msg_size(&m));
    zmq_msg_close(&m);
    EXPECT_EQ(static_cast<uint8_t>(bytes.at(0)), kWireMagicVersion) << "replies are version 2";
    DecodeResult r = decode_frame(bytes);
    if (!r) return Frame{Error{ErrorCode::kMalformed, "test: undecodable reply"}};
    return std::move(r).frame();
  }
  // The next frame the server sent, skipping grants and the Welcome.
  std::optional<Frame> next_non_grant() {
    while (true) {
      std::optional<Frame> f = next();
      if (!f) return f;
      if (!std::holds_alternative<Grant>(*f) && !std::holds_alternative<Welcome>(*f)) return f;
    }
  }

 private:
  void* ctx_;
  void* sock_;
};

INSTANTIATE_TEST_SUITE_P(Links, ControlTest, ::testing::Values("ipc", "local"));

class BadInputTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    ServerOptions o = server_options(dir_, &grants_);
    o.core.max_message_bytes = 4096;
    o.log = [this](const std::string& line) { log_.push(line); };
    server_ = std::make_unique<CoordinatorServer>(std::move(o));
    ticker_ = make_ticker(*server_, GetParam());
    ASSERT_TRUE(grants_.await_at_least(SimTime::from_ns(5'000'000)));
  }
  // Sends what `send` sends from a raw peer, expects an Error with `code`, then shows that the
  // ticker keeps receiving grants and that the refusal was logged.
  void expect_refused(const std::function<void(RawPeer&)>& send, ErrorCode code) {
    RawPeer peer(server_->endpoints()[0]);
    send(peer);
    std::optional<Frame> f = peer.next_non_grant();
    ASSERT_TRUE(f.has_value()) << "no reply";
    ASSERT_TRUE(std::holds_alternative<Error>(*f)) << "reply index " << f->index();
    const Error& e = std::get<Error>(*f);
    EXPECT_EQ(e.code, code) << e.reason;
    EXPECT_FALSE(e.reason.empty());
    SimTime t = ticker_->now();
    EXPECT_TRUE(grants_.await_at_least(t + milliseconds(20))) << "the ticker stalled";
    EXPECT_TRUE(ticker_->participant().ok());
    EXPECT_EQ(ticker_->participant().errors(), 0u);
    EXPECT_TRUE(log_.await([](const auto& l) { return !l.empty(); }, 5s)) << "nothing logged";
  }
  SimTime grant() { return server_->status().time; }

  TempDir dir_;
  GrantLog grants_;
  Events<std::string> log_;
  std::unique_ptr<CoordinatorServer> server_;
  std::unique_ptr<Ticker> ticker_;
};

TEST_P(BadInputTest, MalformedFrameGetsAnErrorAndOthersKeepGoing) {
  expect_refused([](RawPeer& p) { p.send_bytes("hello, coordinator"); }, ErrorCode::kMalformed);
  EXPECT_GE(server_->bad_frames(), 1u);
}

TEST_P(BadInputTest, TruncatedFrameGetsAnErrorAndOthersKeepGoing) {
  std::string b = encode_frame(Announce{"cut", "main", Role::kRegulating, SimTime::zero()});
  expect_refused([&](RawPeer& p) { p.send_bytes(b.substr(0, b.size() - 3)); },
                 ErrorCode::kMalformed);
}

TEST_P(BadInputTest, UnknownKindGetsAnErrorAndOthersKeepGoing) {
  expect_refused([](RawPeer& p) { p.send_bytes(std::string("\xF2\x63", 2)); },
                 ErrorCode::kUnknownKind);
}

TEST_P(BadInputTest, StampInThePastGetsAnErrorAndOthersKeepGoing) {
  expect_refused(
      [](RawPeer& p) {
        p.hello();
        p.send(Frame{Announce{"late", "main", Role::kRegulating, SimTime::infinite()}});
        p.send(Frame{Publish{"late", "/t", SimTime::zero(), 1, "text", "old news"}});
      },
      ErrorCode::kStampInPast);
}

TEST_P(BadInputTest, BackwardsAnnounceGetsAnErrorAndOthersKeepGoing) {
  expect_refused(
      [](RawPeer& p) {
        p.hello();
        p.send(Frame{Announce{"back", "main", Role::kRegulating, SimTime::infinite()}});
        p.send(Frame{Announce{"back", "main", Role::kRegulating, SimTime::zero()}});
      },
      ErrorCode::kAnnounceBackwards);
}

TEST_P(BadInputTest, DuplicateNameGetsAnErrorAndOthersKeepGoing) {
  expect_refused(
      [](RawPeer& p) {
        p.hello();
        p.send(Frame{Announce{"ticker", "main", Role::kRegulating, SimTime::infinite()}});
      },
      ErrorCode::kDuplicateName);
}

TEST_P(BadInputTest, OversizedFrameGetsAnErrorAndOthersKeepGoing) {
  expect_refused(
      [](RawPeer& p) {
        p.hello();
        p.send(Frame{Publish{"big", "/t", SimTime::infinite(), 1, "bytes", std::string(8000, 'x')}});
      },
      ErrorCode::kOversized);
}

TEST_P(BadInputTest, CoordinatorToParticipantFrameIsRefused) {
  expect_refused([](RawPeer& p) { p.send(Frame{Grant{SimTime::infinite(), 1}}); },
                 ErrorCode::kUnknownKind);
}

// ---- the handshake (docs/protocol.md, 5.1) -----------------------------------------------------

TEST_P(BadInputTest, HelloIsAnsweredWithWelcomeAndOpensTheConnection) {
  RawPeer peer(server_->endpoints()[0]);
  peer.hello();
  std::optional<Frame> f = peer.next();
  ASSERT_TRUE(f.has_value()) << "no Welcome";
  ASSERT_TRUE(std::holds_alternative<Welcome>(*f)) << "reply index " << f->index();
  const Welcome& w = std::get<Welcome>(*f);
  EXPECT_EQ(w.protocol_version, kProtocolVersion);
  EXPECT_NE(w.coordinator.find("fieldproof-coordinator"), std::string::npos) << w.coordinator;
  EXPECT_EQ(w.max_message_bytes, 4096u);  // the fixture's limit
  peer.send(Frame{Announce{"greeted", "main", Role::kFollowing, SimTime::infinite()}});
  f = peer.next();
  ASSERT_TRUE(f.has_value());
  EXPECT_TRUE(std::holds_alternative<Grant>(*f)) << "registration answered by index " << f->index();
}

TEST_P(BadInputTest, ParticipantFramesBeforeHelloAreRefusedAndNotRegistered) {
  expect_refused(
      [](RawPeer& p) {
        p.send(Frame{Announce{"rude", "main", Role::kRegulating, SimTime::zero()}});
      },
      ErrorCode::kNoHello);
  for (const Frame& f : {Frame{Subscribe{"rude", "main", "/t"}},
                         Frame{Publish{"rude", "/t", SimTime::infinite(), 1, "text", "x"}},
                         Frame{Heartbeat{"rude"}}, Frame{Leave{"rude", ""}}}) {
    RawPeer peer(server_->endpoints()[0]);
    peer.send(f);
    std::optional<Frame> reply = peer.next();
    ASSERT_TRUE(reply.has_value()) << frame_kind_name(frame_kind(f));
    ASSERT_TRUE(std::holds_alternative<Error>(*reply)) << frame_kind_name(frame_kind(f));
    EXPECT_EQ(std::get<Error>(*reply).code, ErrorCode::kNoHello);
    EXPECT_NE(std::get<Error>(*reply).reason.find("Hello"), std::string::npos);
  }
  for (const ParticipantStatus& p : server_->status().participants) {
    EXPECT_NE(p.participant, "rude") << "an announce without Hello registered";
  }
}

TEST_P(BadInputTest, HelloOfAnotherVersionIsRefusedNamingBothVersionsAndOthersKeepGoing) {
  expect_refused(
      [](RawPeer& p) {
        p.send(Frame{Hello{1, "fieldproof-cpp 0.1.0"}});
      },
      ErrorCode::kVersion);
  RawPeer peer(server_->endpoints()[0]);
  peer.send(Frame{Hello{1, "fieldproof-cpp 0.1.0"}});
  std::optional<Frame> f = peer.next();
  ASSERT_TRUE(f.has_value());
  ASSERT_TRUE(std::holds_alternative<Error>(*f));
  EXPECT_EQ(std::get<Error>(*f).reason,
            "protocol version 1 is not supported: this coordinator speaks version 2");
  EXPECT_TRUE(log_.await(
      [](const auto& l) {
        for (const auto& line : l) {
          if (line.find("protocol version 1 is not supported") != std::string::npos) return true;
        }
        return false;
      },
      5s))
      << "the refusal was not logged";
  // The peer stays refused: its participant frames get the same answer, nothing registers.
  peer.send(Frame{Announce{"future", "main", Role::kRegulating, SimTime::zero()}});
  f = peer.next();
  ASSERT_TRUE(f.has_value());
  ASSERT_TRUE(std::holds_alternative<Error>(*f)) << "reply index " << f->index();
  EXPECT_EQ(std::get<Error>(*f).code, ErrorCode::kVersion);
  for (const ParticipantStatus& p : server_->status().participants) {
    EXPECT_NE(p.participant, "future");
  }
  // ... until it says a version the coordinator speaks.
  peer.hello();
  f = peer.next();
  ASSERT_TRUE(f.has_value());
  EXPECT_TRUE(std::holds_alternative<Welcome>(*f)) << "reply index " << f->index();
}

TEST_P(BadInputTest, FrameOfAnotherVersionNibbleIsRefusedNamingBothVersions) {
  std::string bytes = encode_frame(Announce{"v3", "main", Role::kRegulating, SimTime::zero()});
  bytes[0] = static_cast<char>(0xF3);
  expect_refused([&](RawPeer& p) { p.send_bytes(bytes); }, ErrorCode::kVersion);
  RawPeer peer(server_->endpoints()[0]);
  peer.send_bytes(bytes);
  std::optional<Frame> f = peer.next();
  ASSERT_TRUE(f.has_value());
  ASSERT_TRUE(std::holds_alternative<Error>(*f));
  EXPECT_EQ(std::get<Error>(*f).reason,
            "protocol version 3 is not supported: this coordinator speaks version 2");
}

TEST_P(BadInputTest, ControlFramesNeedNoHello) {
  RawPeer peer(server_->endpoints()[0]);
  peer.send(Frame{status_request()});
  std::optional<Frame> f = peer.next();
  ASSERT_TRUE(f.has_value());
  ASSERT_TRUE(std::holds_alternative<ControlReply>(*f)) << "reply index " << f->index();
  EXPECT_TRUE(std::get<ControlReply>(*f).ok);
}

TEST_P(BadInputTest, PlayerControlNeedsNoHelloAndIsAnsweredNotAPlayerUnlogged) {
  RawPeer peer(server_->endpoints()[0]);
  peer.send(Frame{PlayerControl{PlayerOp::kStatus, {}, 0, 0.0}});
  std::optional<Frame> f = peer.next();
  ASSERT_TRUE(f.has_value());
  ASSERT_TRUE(std::holds_alternative<Error>(*f)) << "reply index " << f->index();
  EXPECT_EQ(std::get<Error>(*f).code, ErrorCode::kUnknownKind);
  EXPECT_NE(std::get<Error>(*f).reason.find("this is a coordinator"), std::string::npos)
      << std::get<Error>(*f).reason;
  EXPECT_EQ(server_->bad_frames(), 0u);
  // The connection is not refused for it: a Control on it is answered as ever.
  peer.send(Frame{status_request()});
  f = peer.next();
  ASSERT_TRUE(f.has_value());
  EXPECT_TRUE(std::holds_alternative<ControlReply>(*f)) << "reply index " << f->index();
}

TEST_P(BadInputTest, PlayerReplySentToTheCoordinatorIsRefused) {
  expect_refused([](RawPeer& p) { p.send(Frame{PlayerReply{}}); }, ErrorCode::kUnknownKind);
}

TEST_P(BadInputTest, WelcomeSentToTheCoordinatorIsRefused) {
  expect_refused([](RawPeer& p) { p.send(Frame{Welcome{1, "me", 1}}); }, ErrorCode::kUnknownKind);
}

INSTANTIATE_TEST_SUITE_P(Links, BadInputTest, ::testing::Values("ipc", "local"));

// ---- local links (participants of the server's own process) ------------------------------------

TEST(LocalLink, GrantsWithoutASocketAndReportsShutdownOnceWhenTheServerStops) {
  TempDir dir;
  auto server = std::make_unique<CoordinatorServer>(server_options(dir));
  auto link = server->make_local_link();
  link->send(Frame{Announce{"lonely", "main", Role::kRegulating, SimTime::infinite()}});
  auto first = link->receive(seconds(5));
  ASSERT_TRUE(first.has_value());
  EXPECT_TRUE(std::holds_alternative<Grant>(*first));
  EXPECT_EQ(server->status().participants.size(), 1u);
  server.reset();
  int shutdowns = 0;
  while (auto f = link->receive(milliseconds(200))) {
    if (auto* e = std::get_if<Error>(&*f); e != nullptr && e->code == ErrorCode::kShutdown) {
      ++shutdowns;
    }
  }
  EXPECT_EQ(shutdowns, 1);
  link->send(Frame{Announce{"lonely", "main", Role::kRegulating, SimTime::zero()}});  // a no-op
  EXPECT_FALSE(link->receive(milliseconds(50)).has_value());
}

TEST(LocalLink, ACoordinatorToParticipantFrameIsRefusedToItsSenderOnly) {
  TempDir dir;
  GrantLog grants;
  CoordinatorServer server(server_options(dir, &grants));
  Ticker ticker(server.endpoints()[0], "ticker");
  ASSERT_TRUE(grants.await_at_least(SimTime::from_ns(5'000'000)));
  auto link = server.make_local_link();
  link->send(Frame{Grant{SimTime::from_ns(1), 1}});
  std::optional<Frame> f = link->receive(seconds(5));
  ASSERT_TRUE(f.has_value());
  ASSERT_TRUE(std::holds_alternative<Error>(*f)) << "reply index " << f->index();
  EXPECT_EQ(std::get<Error>(*f).code, ErrorCode::kUnknownKind);
  const SimTime t = ticker.now();
  EXPECT_TRUE(grants.await_at_least(t + milliseconds(20))) << "the ticker stalled";
  EXPECT_EQ(ticker.participant().errors(), 0u);
}

TEST(LocalLink, ALocalAndASocketParticipantExchangeMessagesAtTheirStamps) {
  TempDir dir;
  ServerOptions o = server_options(dir);
  o.core.max_rtf = 0;
  CoordinatorServer server(std::move(o));
  Participant local(server.make_local_link(), ParticipantOptions{.name = "local"});
  auto remote = connect_participant(server.endpoints()[0], {.name = "remote"}, fast_heartbeat());
  std::vector<std::string> at_remote, at_local;
  remote->subscribe("/ping", [&](const Publish& m) {
    at_remote.push_back(std::to_string(remote->now().ns()) + " " + m.payload);
    remote->publish("/pong", "re:" + m.payload);
  });
  local.subscribe("/pong", [&](const Publish& m) {
    at_local.push_back(std::to_string(local.now().ns()) + " " + m.payload);
  });
  std::thread rt([&] { remote->sleep_until(SimTime::from_ns(30'000'000)); });
  for (int k = 1; k <= 3; ++k) {
    ASSERT_TRUE(local.sleep_until(SimTime::from_ns(k * 5'000'000)));
    local.publish("/ping", std::to_string(k));
  }
  ASSERT_TRUE(local.sleep_until(SimTime::from_ns(30'000'000)));
  rt.join();
  EXPECT_EQ(at_remote, (std::vector<std::string>{"5000000 1", "10000000 2", "15000000 3"}));
  EXPECT_EQ(at_local, (std::vector<std::string>{"5000000 re:1", "10000000 re:2", "15000000 re:3"}));
}

TEST(LocalLink, AChildCoordinatorRefusesLocalLinks) {
  TempDir dir;
  CoordinatorServer root(server_options(dir));
  ServerOptions o;
  o.bind = {"ipc://child.sock"};
  o.ipc_dir = dir.path();
  o.parent = root.endpoints()[0];
  CoordinatorServer child(std::move(o));
  try {
    child.make_local_link();
    FAIL() << "a child made a local link";
  } catch (const TransportError& e) {
    EXPECT_NE(std::string(e.what()).find("child coordinator"), std::string::npos) << e.what();
  }
}

// A fake coordinator: a ROUTER that reads the client's first frame and answers with `reply`.
class FakeCoordinator {
 public:
  FakeCoordinator(const TempDir& dir, std::string reply) : reply_(std::move(reply)) {
    ctx_ = zmq_ctx_new();
    sock_ = zmq_socket(ctx_, ZMQ_ROUTER);
    int linger = 0;
    zmq_setsockopt(sock_, ZMQ_LINGER, &linger, sizeof linger);
    int timeout_ms = 10000;
    zmq_setsockopt(sock_, ZMQ_RCVTIMEO, &timeout_ms, sizeof timeout_ms);
    endpoint_ = "ipc://" + dir.file("fake.sock");
    EXPECT_EQ(zmq_bind(sock_, endpoint_.c_str()), 0);
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeCoordinator() {
    join();
    zmq_close(sock_);
    zmq_ctx_term(ctx_);
  }
  const std::string& endpoint() const { return endpoint_; }
  // The first frame the client sent; read after join().
  std::string first_frame() const { return first_; }
  void join() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  void serve() {
    std::string id = recv();
    first_ = recv();
    if (id.empty()) return;
    zmq_send(sock_, id.data(), id.size(), ZMQ_SNDMORE);
    zmq_send(sock_, reply_.data(), reply_.size(), 0);
  }
  std::string recv() {
    zmq_msg_t m;
    zmq_msg_init(&m);
    std::string out;
    if (zmq_msg_recv(&m, sock_, 0) >= 0) {
      out.assign(static_cast<const char*>(zmq_msg_data(&m)), zmq_msg_size(&m));
    }
    zmq_msg_close(&m);
    return out;
  }

  std::string reply_;
  void* ctx_;
  void* sock_;
  std::string endpoint_;
  std::string first_;
  std::thread thread_;
};

// Connects a participant to `fake`, which answers its first frame; the participant must fail
// with `expected` in its error, and its first frame must have been Hello v1.
void expect_client_fails(FakeCoordinator& fake, const std::string& expected) {
  std::vector<Error> errors;
  ParticipantOptions opt{.name = "ugv1"};
  opt.on_error = [&errors](const Error& e) { errors.push_back(e); };
  ConnectOptions copts = fast_heartbeat();
  copts.linger = Duration::zero();
  // The Participant itself (connect_participant would throw TransportError with the same text).
  auto p = std::make_unique<Participant>(connect(fake.endpoint(), copts), opt);
  fake.join();
  DecodeResult first = decode_frame(fake.first_frame());
  ASSERT_TRUE(first) << first.error().reason;
  ASSERT_TRUE(std::holds_alternative<Hello>(first.frame())) << "the client's first frame";
  EXPECT_EQ(std::get<Hello>(first.frame()).protocol_version, kProtocolVersion);
  EXPECT_NE(std::get<Hello>(first.frame()).client.find("fieldproof-cpp"), std::string::npos);
  EXPECT_FALSE(p->ok());
  EXPECT_NE(p->last_error().find(expected), std::string::npos) << p->last_error();
  EXPECT_FALSE(p->sleep_until(SimTime::from_ns(1'000'000)));
  ASSERT_FALSE(errors.empty()) << "on_error was not called";
  EXPECT_EQ(errors.front().code, ErrorCode::kVersion);
}

TEST(Handshake, WelcomeOfAnotherVersionMakesTheParticipantFailNamingBothVersions) {
  TempDir dir;
  FakeCoordinator fake(dir, encode_frame(Welcome{3, "fieldproof-coordinator 9.0", 1 << 20}));
  expect_client_fails(fake,
                      "the coordinator speaks protocol version 3; this client speaks "
                      "version 2");
}

TEST(Handshake, AFrameOfAnotherVersionNibbleMakesTheParticipantFailNamingBothVersions) {
  TempDir dir;
  std::string welcome = encode_frame(Welcome{3, "fieldproof-coordinator 9.0", 1 << 20});
  welcome[0] = static_cast<char>(0xF3);
  FakeCoordinator fake(dir, welcome);
  expect_client_fails(fake,
                      "the coordinator speaks protocol version 3; this client speaks "
                      "version 2");
}

TEST(Handshake, VersionErrorMakesTheParticipantFailNamingBothVersions) {
  TempDir dir;
  FakeCoordinator fake(dir, encode_frame(Error{ErrorCode::kVersion,
                                               "protocol version 2 is not supported: this "
                                               "coordinator speaks version 3"}));
  expect_client_fails(fake,
                      "the coordinator speaks protocol version 3; this client speaks "
                      "version 2");
}

// ---- CURVE -------------------------------------------------------------------------------------

class CurveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    keys_ = generate_curve_keypair();
    ServerOptions o = server_options(dir_);
    o.bind = {"tcp://127.0.0.1:*"};
    o.curve_secret_key = keys_.secret_key;
    o.on_refused = [this](const std::string& r) { refused_.push(r); };
    o.on_announce = [this](const Announce& a) { announced_.push(a.participant); };
    server_ = std::make_unique<CoordinatorServer>(std::move(o));
  }
  TempDir dir_;
  CurveKeyPair keys_;
  Events<std::string> refused_;
  Events<std::string> announced_;
  std::unique_ptr<CoordinatorServer> server_;
};

TEST_F(CurveTest, ServerReportsItsPublicKey) {
  EXPECT_EQ(server_->curve_public_key(), keys_.public_key);
  EXPECT_EQ(curve_public_key(keys_.secret_key), keys_.public_key);
}

TEST_F(CurveTest, PeerWithTheServerKeyJoins) {
  ConnectOptions c = fast_heartbeat();
  c.curve.server_public_key = keys_.public_key;
  Participant p(connect(server_->endpoints()[0], c), {.name = "trusted"});
  EXPECT_TRUE(p.ok());
  EXPECT_TRUE(p.sleep_until(SimTime::from_ns(1'000'000)));
}

TEST_F(CurveTest, PeerWithoutTheKeyIsRefused) {
  auto link = connect(server_->endpoints()[0], fast_heartbeat());  // plain, no CURVE
  link->send(Frame{Announce{"stranger", "main", Role::kRegulating, SimTime::zero()}});
  ASSERT_TRUE(refused_.await([](const auto& r) { return !r.empty(); }, 10s));
  EXPECT_GE(server_->refused_peers(), 1u);
  auto f = link->receive(seconds(5));  // the link reports the refusal as the end of the run
  ASSERT_TRUE(f.has_value());
  ASSERT_TRUE(std::holds_alternative<Error>(*f));
  EXPECT_EQ(std::get<Error>(*f).code, ErrorCode::kShutdown);
  EXPECT_NE(std::get<Error>(*f).reason.find("refused"), std::string::npos)
      << std::get<Error>(*f).reason;
  EXPECT_TRUE(announced_.snapshot().empty());
  EXPECT_TRUE(server_->status().participants.empty());
}

TEST_F(CurveTest, PeerWithAWrongServerKeyIsRefused) {
  ConnectOptions c = fast_heartbeat();
  c.curve.server_public_key = generate_curve_keypair().public_key;
  auto link = connect(server_->endpoints()[0], c);
  link->send(Frame{Announce{"impostor", "main", Role::kRegulating, SimTime::zero()}});
  auto f = link->receive(seconds(5));
  ASSERT_TRUE(f.has_value());
  ASSERT_TRUE(std::holds_alternative<Error>(*f)) << "index " << f->index();
  EXPECT_EQ(std::get<Error>(*f).code, ErrorCode::kShutdown);
  EXPECT_TRUE(announced_.snapshot().empty());
  EXPECT_TRUE(server_->status().participants.empty());
}

}  // namespace
}  // namespace fieldproof::lockstep

namespace fieldproof::lockstep {
namespace {

TEST(Transport, LinkReportsShutdownOnceWhenTheServerStops) {
  TempDir dir;
  auto server = std::make_unique<CoordinatorServer>(server_options(dir));
  auto link = connect(server->endpoints()[0], fast_heartbeat());
  link->send(Frame{Announce{"lonely", "main", Role::kRegulating, SimTime::infinite()}});
  auto first = link->receive(seconds(5));
  ASSERT_TRUE(first.has_value());
  EXPECT_TRUE(std::holds_alternative<Grant>(*first));
  server.reset();
  int shutdowns = 0;
  while (auto f = link->receive(milliseconds(500))) {
    if (auto* e = std::get_if<Error>(&*f); e != nullptr && e->code == ErrorCode::kShutdown) {
      ++shutdowns;
    }
  }
  EXPECT_EQ(shutdowns, 1);
}

TEST(Transport, LinkReportsShutdownWhenTheCoordinatorProcessIsKilled) {
  TempDir dir;
  testing::Process coordinator({FIELDPROOF_CLI, "coordinator", "--bind", "ipc://c.sock",
                                "--ipc-dir", dir.path()},
                               {}, dir.file("out"), dir.file("err"));
  auto link = connect("ipc://" + dir.file("c.sock"), fast_heartbeat());
  link->send(Frame{Announce{"orphan", "main", Role::kRegulating, SimTime::infinite()}});
  auto first = link->receive(seconds(20));
  ASSERT_TRUE(first.has_value()) << testing::read_file(dir.file("err"));
  EXPECT_TRUE(std::holds_alternative<Grant>(*first));
  coordinator.signal(SIGKILL);
  EXPECT_EQ(coordinator.wait(10s), 128 + SIGKILL);
  std::optional<Frame> f;
  do {
    f = link->receive(seconds(10));
  } while (f && !std::holds_alternative<Error>(*f));
  ASSERT_TRUE(f.has_value()) << "the link never noticed";
  EXPECT_EQ(std::get<Error>(*f).code, ErrorCode::kShutdown);
  EXPECT_NE(std::get<Error>(*f).reason.find("lost the connection"), std::string::npos);
}

}  // namespace
}  // namespace fieldproof::lockstep

namespace fieldproof::lockstep {
namespace {

// A participant that sends nothing for longer than ack_timeout while it holds no step (idle at
// +inf) is kept alive by its link's heartbeats; without them it fails the run, named. (Holding a
// step past ack_timeout fails whatever the heartbeats: liveness_test.cpp.)
class HeartbeatTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions o = server_options(dir_);
    o.core.ack_timeout = milliseconds(300);
    o.on_failure = [this](const std::string& p, const std::string&) { failures_.push(p); };
    server_ = std::make_unique<CoordinatorServer>(std::move(o));
  }
  TempDir dir_;
  Events<std::string> failures_;
  std::unique_ptr<CoordinatorServer> server_;
};

TEST_F(HeartbeatTest, LinkHeartbeatsKeepASilentParticipantAlive) {
  auto link = connect(server_->endpoints()[0], fast_heartbeat());
  link->send(Frame{Announce{"thinker", "main", Role::kRegulating, SimTime::infinite()}});
  EXPECT_FALSE(failures_.await([](const auto& f) { return !f.empty(); }, 1500ms))
      << "failed despite heartbeats";
  CoordinatorStatus s = server_->status();
  ASSERT_EQ(s.participants.size(), 1u);
  EXPECT_EQ(s.participants[0].participant, "thinker");
}

TEST_F(HeartbeatTest, WithoutHeartbeatsASilentRegulatingParticipantFailsTheRunNamed) {
  ConnectOptions quiet;
  quiet.heartbeat_interval = Duration::zero();
  auto link = connect(server_->endpoints()[0], quiet);
  link->send(Frame{Announce{"mute", "main", Role::kRegulating, SimTime::from_ns(1'000'000)}});
  ASSERT_TRUE(failures_.await([](const auto& f) { return !f.empty(); }, 10s));
  EXPECT_EQ(failures_.snapshot().front(), "mute");
}

}  // namespace
}  // namespace fieldproof::lockstep
