// Liveness and access control with real processes (lockstep_liveness_aux) and a server in this
// process: a participant killed with SIGKILL is named within 1 s whether or not it holds time
// (ack_timeout is 30 s there, so only the socket's close can tell); one stopped with SIGSTOP or
// hung in a callback (its heartbeat thread still running) is named at ack_timeout (+0.5 s); a
// participant with no coordinator fails within the connect timeout, naming the endpoint; only
// authorized CURVE keys reach the coordinator, and refusals are logged once per peer per interval.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "fieldproof/lockstep/transport.hpp"
#include "fieldproof/lockstep/zmq_server.hpp"
#include "fieldproof/time/system_clock.hpp"
#include "lockstep/zmq/refusal_log.hpp"
#include "lockstep/zmq/test_support.hpp"

namespace fieldproof::lockstep {
namespace {

using namespace std::chrono_literals;
using testing::Events;
using testing::Process;
using testing::TempDir;

constexpr const char* kAux = FIELDPROOF_LIVENESS_AUX;

SimTime wall() { return SystemClock::wall_now()(); }

struct Failure {
  std::string participant;
  std::string reason;
  SimTime at;
};

// A server on ipc in a fresh directory that records announcements, grants and failures with the
// wall time they happened.
class LivenessServer {
 public:
  explicit LivenessServer(Duration ack_timeout, double max_rtf = 0.0) {
    ServerOptions o;
    o.bind = {"ipc://coordinator.sock"};
    o.ipc_dir = dir_.path();
    o.core.max_rtf = max_rtf;
    o.core.ack_timeout = ack_timeout;
    // Paused until the participant registered: with a pace and nobody registered, time would
    // advance on its own, and a grant awaited by the test could come before the participant.
    o.core.start_paused = true;
    o.on_announce = [this](const Announce& a) { announced_.push(a); };
    o.on_failure = [this](const std::string& p, const std::string& r) {
      failures_.push({p, r, wall()});
    };
    o.on_grant = [this](SimTime t, uint64_t) { grants_.push({t, wall()}); };
    o.on_shm_switch = [this] { switched_.push(1); };
    server_ = std::make_unique<CoordinatorServer>(std::move(o));
  }
  const std::string& endpoint() const { return server_->endpoints()[0]; }
  std::unique_ptr<Process> start(const std::string& name, const std::string& mode,
                                 std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {kAux, "--endpoint", endpoint(), "--name",
                                     name, "--mode",     mode};
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto p =
        std::make_unique<Process>(argv, std::vector<std::string>{}, "", dir_.file(name + ".err"));
    if (await_announce(name, SimTime::zero())) server_->control(resume_request());
    // The transport under test: the participant process switches to shared memory (right after
    // its first Welcome), unless this is the ZeroMQ run of the tests (FIELDPROOF_SHM=0, inherited
    // by the process).
    const char* shm = std::getenv("FIELDPROOF_SHM");
    if (shm == nullptr || std::string(shm) != "0") {
      EXPECT_TRUE(switched_.await([](const std::vector<int>& v) { return !v.empty(); }, 10s))
          << name << " did not switch to shared memory";
    } else {
      EXPECT_EQ(server_->shm_connections(), 0u) << name;
    }
    return p;
  }
  bool await_announce(const std::string& name, SimTime safe) {
    return announced_.await(
        [&](const std::vector<Announce>& v) {
          return std::any_of(v.begin(), v.end(), [&](const Announce& a) {
            return a.participant == name && a.safe_time >= safe;
          });
        },
        20s);
  }
  // The wall time at which the grant first reached `t`, awaited.
  std::optional<SimTime> await_grant(SimTime t) {
    std::optional<SimTime> at;
    grants_.await(
        [&](const std::vector<std::pair<SimTime, SimTime>>& g) {
          for (const auto& [time, w] : g) {
            if (time >= t) {
              at = w;
              return true;
            }
          }
          return false;
        },
        20s);
    return at;
  }
  std::optional<Failure> await_failure(std::chrono::milliseconds timeout) {
    if (!failures_.await([](const auto& f) { return !f.empty(); }, timeout)) return std::nullopt;
    return failures_.snapshot().front();
  }
  CoordinatorServer& server() { return *server_; }

 private:
  TempDir dir_;
  Events<Announce> announced_;
  Events<Failure> failures_;
  Events<std::pair<SimTime, SimTime>> grants_;
  Events<int> switched_;
  std::unique_ptr<CoordinatorServer> server_;
};

// ---- killed
// --------------------------------------------------------------------------------------

TEST(Liveness, KilledWhileHoldingTimeIsNamedWithinOneSecond) {
  LivenessServer s(seconds(30));  // unpaced: the victim's 1 ms steps are the clock
  auto victim = s.start("victim", "step");
  ASSERT_TRUE(s.await_grant(SimTime::zero() + milliseconds(50)).has_value());
  const SimTime killed = wall();
  victim->signal(SIGKILL);
  auto f = s.await_failure(5s);
  ASSERT_TRUE(f.has_value()) << "not detected within 5 s";
  EXPECT_EQ(f->participant, "victim");
  EXPECT_NE(f->reason.find("victim"), std::string::npos) << f->reason;
  EXPECT_LT(f->at - killed, seconds(1)) << format_seconds(f->at - killed) << " s";
}

TEST(Liveness, KilledWhileIdleIsNamedWithinOneSecond) {
  LivenessServer s(seconds(30));
  auto victim = s.start("sleeper", "idle");
  ASSERT_TRUE(s.await_announce("sleeper", SimTime::infinite()));
  const SimTime killed = wall();
  victim->signal(SIGKILL);
  auto f = s.await_failure(5s);
  ASSERT_TRUE(f.has_value()) << "not detected within 5 s";
  EXPECT_EQ(f->participant, "sleeper");
  EXPECT_LT(f->at - killed, seconds(1)) << format_seconds(f->at - killed) << " s";
}

TEST(Liveness, OrderlyExitIsNoFailure) {
  LivenessServer s(seconds(30));
  s.server().control(resume_request());
  // A participant that leaves and closes (its process then exits) is not mistaken for a crash.
  {
    auto p = connect_participant(s.endpoint(), {.name = "polite"});
    ASSERT_TRUE(p->sleep_until(SimTime::zero() + milliseconds(5)));
  }
  auto other = connect_participant(s.endpoint(), {.name = "other"});
  EXPECT_TRUE(other->sleep_until(SimTime::zero() + milliseconds(10)));
  EXPECT_FALSE(s.await_failure(300ms).has_value());
}

// ---- hung
// ----------------------------------------------------------------------------------------

TEST(Liveness, StoppedWithSigstopIsNamedAtAckTimeout) {
  LivenessServer s(seconds(1), 1.0);
  auto victim = s.start("frozen", "step");
  ASSERT_TRUE(s.await_grant(SimTime::zero() + milliseconds(50)).has_value());
  const SimTime stopped = wall();
  victim->signal(SIGSTOP);
  auto f = s.await_failure(10s);
  ASSERT_TRUE(f.has_value()) << "not detected within 10 s; grant now "
                             << format_seconds(s.server().status().time) << " s";
  EXPECT_EQ(f->participant, "frozen");
  EXPECT_NE(f->reason.find("not acknowledged by frozen within ack_timeout_s"), std::string::npos)
      << f->reason;
  EXPECT_GE(f->at - stopped, milliseconds(900)) << format_seconds(f->at - stopped) << " s";
  EXPECT_LE(f->at - stopped, milliseconds(1500)) << format_seconds(f->at - stopped) << " s";
  victim->signal(SIGCONT);
}

TEST(Liveness, CallbackThatNeverReturnsIsNamedAtAckTimeoutDespiteItsHeartbeats) {
  LivenessServer s(seconds(1), 1.0);
  auto victim = s.start("stuck", "hang", {"--hang-at-ms", "100"});
  auto held = s.await_grant(SimTime::zero() + milliseconds(100));
  ASSERT_TRUE(held.has_value());
  auto f = s.await_failure(10s);
  ASSERT_TRUE(f.has_value()) << "not detected within 10 s";
  EXPECT_EQ(f->participant, "stuck");
  // The step message, not "sent nothing": its heartbeats kept coming, the step did not.
  EXPECT_EQ(f->reason.rfind("lockstep: step ", 0), 0u) << f->reason;
  EXPECT_NE(f->reason.find("(t = 0.1 s) not acknowledged by stuck within ack_timeout_s"),
            std::string::npos)
      << f->reason;
  EXPECT_GE(f->at - *held, seconds(1)) << format_seconds(f->at - *held) << " s";
  EXPECT_LE(f->at - *held, milliseconds(1500)) << format_seconds(f->at - *held) << " s";
}

// ---- no coordinator
// ------------------------------------------------------------------------------

TEST(ConnectTimeout, NoCoordinatorFailsWithinTheConnectTimeoutNamingTheEndpoint) {
  TempDir dir;
  const std::string ep = "ipc://" + dir.file("nobody.sock");
  ConnectOptions c;
  c.connect_timeout = milliseconds(500);
  const SimTime t0 = wall();
  try {
    connect_participant(ep, {.name = "lonely"}, c);
    FAIL() << "connected to nobody";
  } catch (const TransportError& e) {
    const Duration took = wall() - t0;
    EXPECT_GE(took, milliseconds(500));
    EXPECT_LT(took, milliseconds(1500)) << format_seconds(took) << " s";
    EXPECT_NE(std::string(e.what()).find(ep), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no coordinator answered"), std::string::npos) << e.what();
  }
}

TEST(ConnectTimeout, TheEnvironmentSetsTheDefault) {
  TempDir dir;
  ::setenv(kConnectTimeoutEnv, "300ms", 1);
  EXPECT_EQ(effective_connect_timeout({}), milliseconds(300));
  ConnectOptions explicit_one;
  explicit_one.connect_timeout = seconds(2);
  EXPECT_EQ(effective_connect_timeout(explicit_one), seconds(2));
  const SimTime t0 = wall();
  EXPECT_THROW(connect_participant("ipc://" + dir.file("none.sock"), {.name = "x"}),
               TransportError);
  EXPECT_LT(wall() - t0, seconds(2));
  ::setenv(kConnectTimeoutEnv, "soon", 1);
  try {
    effective_connect_timeout({});
    FAIL() << "a bad value was taken";
  } catch (const TransportError& e) {
    EXPECT_NE(std::string(e.what()).find(kConnectTimeoutEnv), std::string::npos) << e.what();
  }
  ::unsetenv(kConnectTimeoutEnv);
  EXPECT_EQ(effective_connect_timeout({}), seconds(10));
}

// ---- access control
// ------------------------------------------------------------------------------

class AccessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_keys_ = generate_curve_keypair();
    legit_keys_ = generate_curve_keypair();
    ServerOptions o;
    o.bind = {"tcp://127.0.0.1:*"};
    o.ipc_dir = dir_.path();
    o.core.max_rtf = 5.0;
    o.curve_secret_key = server_keys_.secret_key;
    o.authorized_keys = std::vector<std::string>{legit_keys_.public_key};
    o.log = [this](const std::string& line) { log_.push(line); };
    o.on_refused = [this](const std::string& r) { refused_.push(r); };
    o.on_announce = [this](const Announce& a) { announced_.push(a.participant); };
    server_ = std::make_unique<CoordinatorServer>(std::move(o));
    ConnectOptions c;
    c.heartbeat_interval = milliseconds(50);
    c.curve = {server_keys_.public_key, legit_keys_.public_key, legit_keys_.secret_key};
    legit_ = connect_participant(server_->endpoints()[0], {.name = "legit"}, c);
    legit_->subscribe("/cmd", [this](const Publish& m) { delivered_.push(m.payload); });
    ASSERT_TRUE(legit_->sleep_until(SimTime::zero() + milliseconds(5)));
  }

  // An intruder with these CURVE settings tries to join, publish, subscribe and pause; nothing
  // of it reaches the core, the legitimate participant keeps running and receives nothing, and
  // the refusals are logged once for the peer however often it retries.
  void expect_refused(const CurveClientKeys& keys, const std::string& logged_key) {
    // ZeroMQ does not retry a refused handshake: the peer retries with a new link, three times.
    for (size_t attempt = 1; attempt <= 3; ++attempt) {
      ConnectOptions c;
      c.heartbeat_interval = milliseconds(50);
      c.curve = keys;
      auto link = connect(server_->endpoints()[0], c);
      link->send(Frame{Announce{"intruder", "main", Role::kRegulating, SimTime::zero()}});
      link->send(Frame{Subscribe{"intruder", "main", "/cmd"}});
      link->send(Frame{Publish{"intruder", "/cmd", SimTime::infinite(), 1, "text", "evil"}});
      link->send(Frame{pause_request()});
      auto f = link->receive(seconds(10));
      ASSERT_TRUE(f.has_value()) << "the intruder's link reported nothing";
      ASSERT_TRUE(std::holds_alternative<Error>(*f)) << "index " << f->index();
      EXPECT_EQ(std::get<Error>(*f).code, ErrorCode::kShutdown);
      ASSERT_TRUE(refused_.await([&](const auto& r) { return r.size() >= attempt; }, 10s))
          << "refused " << refused_.snapshot().size() << " times";
    }
    std::vector<std::string> lines;
    for (const auto& l : log_.snapshot()) {
      if (l.find("refused a peer") != std::string::npos) lines.push_back(l);
    }
    ASSERT_EQ(lines.size(), 1u) << "refusal lines: " << lines.size() << "\n"
                                << (lines.empty() ? "" : lines.front()) << "\n"
                                << (lines.size() < 2 ? "" : lines[1]);
    if (logged_key != "none") {  // a keyless peer may be gone before its address is read
      EXPECT_NE(lines[0].find("refused a peer 127.0.0.1"), std::string::npos) << lines[0];
    }
    EXPECT_NE(lines[0].find("(key " + logged_key + ")"), std::string::npos) << lines[0];
    const SimTime t = legit_->now();
    EXPECT_TRUE(legit_->sleep_until(t + milliseconds(20))) << "the legitimate participant stalled";
    const CoordinatorStatus st = server_->status();
    EXPECT_FALSE(st.paused);
    ASSERT_EQ(st.participants.size(), 1u);
    EXPECT_EQ(st.participants[0].participant, "legit");
    const auto names = announced_.snapshot();
    EXPECT_EQ(std::count(names.begin(), names.end(), "intruder"), 0);
    EXPECT_TRUE(delivered_.snapshot().empty());
    EXPECT_EQ(legit_->errors(), 0u);
  }

  TempDir dir_;
  CurveKeyPair server_keys_;
  CurveKeyPair legit_keys_;
  Events<std::string> log_;
  Events<std::string> refused_;
  Events<std::string> announced_;
  Events<std::string> delivered_;
  std::unique_ptr<CoordinatorServer> server_;
  std::unique_ptr<Participant> legit_;
};

TEST_F(AccessTest, AListedKeyJoinsAndIsDeliveredTo) {
  ConnectOptions c;
  c.curve = {server_keys_.public_key, legit_keys_.public_key, legit_keys_.secret_key};
  ControlClient control(server_->endpoints()[0], c);
  EXPECT_TRUE(control.request(status_request()).ok);
  legit_->publish_at(legit_->now() + milliseconds(1), "/cmd", "go", "text");
  EXPECT_TRUE(legit_->sleep_until(legit_->now() + milliseconds(3)));
  EXPECT_TRUE(delivered_.await([](const auto& d) { return d.size() == 1; }, 5s));
}

TEST_F(AccessTest, AnUnlistedKeyIsRefused) {
  const CurveKeyPair k = generate_curve_keypair();
  expect_refused({server_keys_.public_key, k.public_key, k.secret_key}, k.public_key);
}

TEST_F(AccessTest, NoKeyIsRefused) { expect_refused({}, "none"); }

TEST_F(AccessTest, TheServersOwnKeyIsRefused) {
  expect_refused({server_keys_.public_key, server_keys_.public_key, server_keys_.secret_key},
                 server_keys_.public_key);
}

TEST_F(AccessTest, AnUnlistedControlClientCannotPause) {
  const CurveKeyPair k = generate_curve_keypair();
  ConnectOptions c;
  c.curve = {server_keys_.public_key, k.public_key, k.secret_key};
  ControlClient control(server_->endpoints()[0], c);
  ControlReply r = control.request(pause_request(), seconds(5));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("refused"), std::string::npos) << r.error;
  EXPECT_FALSE(server_->status().paused);
}

TEST(AccessOptions, AuthorizedKeysWithoutCurveAreRefused) {
  TempDir dir;
  ServerOptions o;
  o.bind = {"ipc://c.sock"};
  o.ipc_dir = dir.path();
  o.authorized_keys = std::vector<std::string>{generate_curve_keypair().public_key};
  EXPECT_THROW(CoordinatorServer s(std::move(o)), TransportError);
}

TEST(AccessOptions, AMalformedAuthorizedKeyIsRefusedNamingIt) {
  TempDir dir;
  ServerOptions o;
  o.bind = {"ipc://c.sock"};
  o.ipc_dir = dir.path();
  o.curve_secret_key = generate_curve_keypair().secret_key;
  o.authorized_keys = std::vector<std::string>{"not-a-key"};
  try {
    CoordinatorServer s(std::move(o));
    FAIL() << "accepted";
  } catch (const TransportError& e) {
    EXPECT_NE(std::string(e.what()).find("not-a-key"), std::string::npos) << e.what();
  }
}

TEST(AccessOptions, AuthorizedKeysFileSkipsCommentsAndNamesTheBadLine) {
  TempDir dir;
  const std::string k = generate_curve_keypair().public_key;
  {
    std::ofstream f(dir.file("keys"));
    f << "# team A\n\n" << k << "   # laptop\n  \nshort-key\n";
  }
  const Result<std::vector<std::string>> bad = read_authorized_keys(dir.file("keys"));
  ASSERT_FALSE(bad.ok()) << "accepted a bad line";
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find(dir.file("keys") + ":5:"), std::string::npos)
      << bad.status().message();
  {
    std::ofstream f(dir.file("good"));
    f << "# team A\n\n" << k << "   # laptop\n";
  }
  EXPECT_EQ(read_authorized_keys(dir.file("good")).value(), std::vector<std::string>{k});
  EXPECT_FALSE(read_authorized_keys(dir.file("missing")).ok());
}

TEST(RefusalLog, OneLinePerPeerPerIntervalThenTheCountOfTheSuppressed) {
  zmqd::RateLimitedLog log(seconds(10));
  const SimTime t0 = SimTime::zero() + seconds(100);
  EXPECT_TRUE(log.admit("a", t0, "refused a").has_value());
  EXPECT_FALSE(log.admit("a", t0 + milliseconds(150), "refused a").has_value());
  EXPECT_FALSE(log.admit("a", t0 + milliseconds(300), "refused a").has_value());
  EXPECT_TRUE(log.admit("b", t0 + milliseconds(300), "refused b").has_value()) << "another peer";
  auto next = log.admit("a", t0 + seconds(10), "refused a");
  ASSERT_TRUE(next.has_value());
  EXPECT_NE(next->find("2 more from this peer suppressed"), std::string::npos) << *next;
  auto quiet = log.admit("a", t0 + seconds(30), "refused a");
  ASSERT_TRUE(quiet.has_value());
  EXPECT_EQ(*quiet, "refused a");
}

}  // namespace
}  // namespace fieldproof::lockstep
