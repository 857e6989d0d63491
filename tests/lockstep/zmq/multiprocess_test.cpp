// Real processes: four participants (participant_aux) with different periods exchanging messages
// give a byte-identical ordered trace over five runs, and the same trace in-process, over ipc,
// over tcp, through a child coordinator process, and across two network namespaces; a participant
// killed with SIGKILL is detected and named; the pace regulator holds max_rtf over 5 s.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <map>
#include <thread>

#include "fieldproof/lockstep/inprocess.hpp"
#include "fieldproof/lockstep/transport.hpp"
#include "fieldproof/lockstep/zmq_server.hpp"
#include "fieldproof/time/system_clock.hpp"
#include "lockstep/zmq/test_support.hpp"
#include "lockstep/zmq/trace_participant.hpp"

namespace fieldproof::lockstep {
namespace {

using namespace std::chrono_literals;
using testing::Events;
using testing::Process;
using testing::TempDir;
using testing::TraceSpec;

constexpr const char* kAux = FIELDPROOF_PARTICIPANT_AUX;
constexpr const char* kCli = FIELDPROOF_CLI;

// What one run produced: the coordinator's total order (when it ran in this process) and each
// participant's own deliveries.
struct TraceRun {
  std::string tap;
  std::map<std::string, std::string> traces;
  std::string all() const {
    std::string s = "== tap\n" + tap;
    for (const auto& [name, t] : traces) s += "== " + name + "\n" + t;
    return s;
  }
};

std::string tap_line(const Publish& m) {
  return std::to_string(m.stamp.ns()) + ' ' + m.participant + ' ' + std::to_string(m.seq) + ' ' +
         m.topic + ' ' + m.payload + '\n';
}

std::vector<std::string> aux_args(const TraceSpec& s, const std::string& endpoint,
                                  const std::string& trace_file) {
  std::vector<std::string> a = {kAux,
                                "--endpoint",
                                endpoint,
                                "--name",
                                s.name,
                                "--period-ms",
                                std::to_string(s.period.ns() / 1'000'000),
                                "--until-ms",
                                std::to_string(s.until.ns() / 1'000'000),
                                "--trace",
                                trace_file};
  for (const auto& t : s.subscribe) {
    a.push_back("--subscribe");
    a.push_back(t);
  }
  return a;
}

std::vector<std::string> names(const std::vector<TraceSpec>& specs) {
  std::vector<std::string> n;
  for (const auto& s : specs) n.push_back(s.name);
  return n;
}

// The reference: the same participant code on threads over the in-process transport.
TraceRun run_in_process() {
  TraceRun run;
  CoordinatorOptions o;
  o.start_paused = true;
  InProcessCoordinator coord(o);
  coord.set_tap([&run](const Publish& m) { run.tap += tap_line(m); });
  auto specs = testing::four_participants();
  std::vector<std::unique_ptr<Participant>> ps;
  for (const auto& s : specs) {
    ps.push_back(std::make_unique<Participant>(coord.make_link(), ParticipantOptions{.name = s.name}));
  }
  std::vector<std::string> traces(specs.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < specs.size(); ++i) {
    threads.emplace_back(
        [&, i] { traces[i] = testing::run_trace_participant(*ps[i], specs[i]); });
  }
  coord.control(resume_request());
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < specs.size(); ++i) run.traces[specs[i].name] = traces[i];
  return run;
}

// The four participants as processes under a server in this process (bind = ipc or tcp), or
// under a child coordinator process when `cascade`.
TraceRun run_processes(const std::string& bind, bool cascade) {
  TempDir dir;
  TraceRun run;
  Events<std::string> announced;
  ServerOptions o;
  o.bind = {bind};
  o.ipc_dir = dir.path();
  o.core.start_paused = true;
  o.core.ack_timeout = seconds(20);
  o.tap = [&run](const Publish& m) { run.tap += tap_line(m); };
  o.on_announce = [&announced](const Announce& a) { announced.push(a.participant); };
  CoordinatorServer server(std::move(o));

  std::unique_ptr<Process> child;
  std::string endpoint = server.endpoints()[0];
  if (cascade) {
    child = std::make_unique<Process>(
        std::vector<std::string>{kCli, "coordinator", "--bind", "ipc://child.sock", "--ipc-dir",
                                 dir.path(), "--parent", endpoint, "--name", "child",
                                 "--heartbeat", "50ms"},
        std::vector<std::string>{}, dir.file("child.out"), dir.file("child.err"));
    endpoint = "ipc://" + dir.file("child.sock");
  }
  auto specs = testing::four_participants();
  std::vector<std::unique_ptr<Process>> procs;
  for (const auto& s : specs) {
    procs.push_back(std::make_unique<Process>(aux_args(s, endpoint, dir.file(s.name + ".trace")),
                                              std::vector<std::string>{},
                                              dir.file(s.name + ".out"),
                                              dir.file(s.name + ".err")));
  }
  const auto want = names(specs);
  EXPECT_TRUE(announced.await([&](const auto& seen) { return testing::contains_all(seen, want); },
                              20s))
      << "not every participant registered";
  server.control(resume_request());
  for (size_t i = 0; i < procs.size(); ++i) {
    int rc = procs[i]->wait(60s);
    EXPECT_EQ(rc, 0) << specs[i].name << " stderr: " << testing::read_file(dir.file(specs[i].name + ".err"));
    run.traces[specs[i].name] = testing::read_file(dir.file(specs[i].name + ".trace"));
  }
  if (child) {
    child->signal(SIGTERM);
    EXPECT_EQ(child->wait(10s), 0) << testing::read_file(dir.file("child.err"));
  }
  server.stop();
  return run;
}

// The engine's arrangement: the first `local` participants on threads of this process through the
// server's local links (no socket), the others as processes over ipc, on one server.
TraceRun run_mixed(size_t local) {
  TempDir dir;
  TraceRun run;
  Events<std::string> announced;
  ServerOptions o;
  o.bind = {"ipc://coordinator.sock"};
  o.ipc_dir = dir.path();
  o.core.start_paused = true;
  o.core.ack_timeout = seconds(20);
  o.tap = [&run](const Publish& m) { run.tap += tap_line(m); };
  o.on_announce = [&announced](const Announce& a) { announced.push(a.participant); };
  CoordinatorServer server(std::move(o));
  auto specs = testing::four_participants();
  std::vector<std::unique_ptr<Participant>> ps;
  std::vector<std::string> traces(specs.size());
  std::vector<std::thread> threads;
  std::vector<std::unique_ptr<Process>> procs;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (i < local) {
      ps.push_back(std::make_unique<Participant>(server.make_local_link(),
                                                 ParticipantOptions{.name = specs[i].name}));
    } else {
      procs.push_back(std::make_unique<Process>(
          aux_args(specs[i], server.endpoints()[0], dir.file(specs[i].name + ".trace")),
          std::vector<std::string>{}, dir.file(specs[i].name + ".out"),
          dir.file(specs[i].name + ".err")));
    }
  }
  for (size_t i = 0; i < ps.size(); ++i) {
    threads.emplace_back([&, i] { traces[i] = testing::run_trace_participant(*ps[i], specs[i]); });
  }
  const auto want = names(specs);
  EXPECT_TRUE(announced.await([&](const auto& seen) { return testing::contains_all(seen, want); },
                              20s))
      << "not every participant registered";
  server.control(resume_request());
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < ps.size(); ++i) run.traces[specs[i].name] = traces[i];
  for (size_t i = 0; i < procs.size(); ++i) {
    const auto& spec = specs[local + i];
    EXPECT_EQ(procs[i]->wait(60s), 0)
        << spec.name << " stderr: " << testing::read_file(dir.file(spec.name + ".err"));
    run.traces[spec.name] = testing::read_file(dir.file(spec.name + ".trace"));
  }
  ps.clear();
  server.stop();
  return run;
}

class Determinism : public ::testing::Test {
 protected:
  static const TraceRun& reference() {
    static const TraceRun r = run_in_process();
    return r;
  }
};

TEST_F(Determinism, InProcessReferenceExchangesMessages) {
  const TraceRun& r = reference();
  EXPECT_FALSE(r.tap.empty());
  for (const auto& [name, trace] : r.traces) EXPECT_FALSE(trace.empty()) << name;
}

TEST_F(Determinism, FourProcessesOverIpcGiveTheSameTraceInFiveRuns) {
  TraceRun first = run_processes("ipc://coordinator.sock", false);
  ASSERT_FALSE(first.tap.empty());
  for (int i = 1; i < 5; ++i) {
    TraceRun again = run_processes("ipc://coordinator.sock", false);
    ASSERT_EQ(again.all(), first.all()) << "run " << i + 1 << " differs";
  }
}

TEST_F(Determinism, ProcessesOverIpcGiveTheInProcessTrace) {
  EXPECT_EQ(run_processes("ipc://coordinator.sock", false).all(), reference().all());
}

TEST_F(Determinism, ProcessesOverTcpGiveTheInProcessTrace) {
  EXPECT_EQ(run_processes("tcp://127.0.0.1:*", false).all(), reference().all());
}

TEST_F(Determinism, LocalLinksBesideProcessesOverIpcGiveTheInProcessTrace) {
  EXPECT_EQ(run_mixed(2).all(), reference().all());
}

TEST_F(Determinism, FourLocalLinksOnAServerGiveTheInProcessTrace) {
  EXPECT_EQ(run_mixed(4).all(), reference().all());
}

TEST_F(Determinism, ProcessesUnderAChildCoordinatorGiveTheInProcessTrace) {
  EXPECT_EQ(run_processes("ipc://root.sock", true).all(), reference().all());
}

// ---- failure detection -------------------------------------------------------------------------

TEST(Liveness, ParticipantKilledWithSigkillIsDetectedAndNamed) {
  TempDir dir;
  Events<std::string> announced;
  Events<std::pair<std::string, std::string>> failures;
  Events<SimTime> grants;
  ServerOptions o;
  o.bind = {"ipc://coordinator.sock"};
  o.ipc_dir = dir.path();
  o.core.max_rtf = 1.0;
  o.core.ack_timeout = milliseconds(400);
  o.on_announce = [&](const Announce& a) { announced.push(a.participant); };
  o.on_failure = [&](const std::string& p, const std::string& r) { failures.push({p, r}); };
  o.on_grant = [&](SimTime t, uint64_t) { grants.push(t); };
  CoordinatorServer server(std::move(o));
  TraceSpec spec{"victim", milliseconds(1), {}, SimTime::from_ns(3'600'000'000'000)};
  Process victim(aux_args(spec, server.endpoints()[0], dir.file("victim.trace")));
  ASSERT_TRUE(announced.await([](const auto& s) { return testing::contains_all(s, {"victim"}); }, 20s));
  ASSERT_TRUE(grants.await([](const auto& g) { return !g.empty() && g.back() > SimTime::from_ns(5'000'000); }, 20s));
  victim.signal(SIGKILL);
  EXPECT_EQ(victim.wait(10s), 128 + SIGKILL);
  ASSERT_TRUE(failures.await([](const auto& f) { return !f.empty(); }, 10s))
      << "no failure reported after the kill";
  auto f = failures.snapshot().front();
  EXPECT_EQ(f.first, "victim");
  EXPECT_NE(f.second.find("victim"), std::string::npos) << f.second;
  EXPECT_NE(server.status().participants.size(), 99u);  // status still answers
}

// A killed process is named as fast while a local participant (the engine's arrangement) waits on
// the same server.
TEST(Liveness, ProcessKilledBesideALocalParticipantIsDetectedAndNamed) {
  TempDir dir;
  Events<std::string> announced;
  Events<std::pair<std::string, std::string>> failures;
  Events<SimTime> grants;
  ServerOptions o;
  o.bind = {"ipc://coordinator.sock"};
  o.ipc_dir = dir.path();
  o.core.ack_timeout = seconds(30);
  o.core.start_paused = true;  // resumed once the victim is there: the local one alone would run
  o.on_announce = [&](const Announce& a) { announced.push(a.participant); };
  o.on_failure = [&](const std::string& p, const std::string& r) { failures.push({p, r}); };
  o.on_grant = [&](SimTime t, uint64_t) { grants.push(t); };
  CoordinatorServer server(std::move(o));
  Participant local(server.make_local_link(), ParticipantOptions{.name = "engine"});
  bool slept = true;
  std::thread waiter([&] { slept = local.sleep_until(SimTime::from_ns(3'600'000'000'000)); });
  TraceSpec spec{"victim", milliseconds(1), {}, SimTime::from_ns(3'600'000'000'000)};
  Process victim(aux_args(spec, server.endpoints()[0], dir.file("victim.trace")));
  ASSERT_TRUE(announced.await([](const auto& s) { return testing::contains_all(s, {"victim"}); }, 20s));
  server.control(resume_request());
  ASSERT_TRUE(grants.await([](const auto& g) { return !g.empty() && g.back() > SimTime::from_ns(5'000'000); }, 20s));
  victim.signal(SIGKILL);
  const SimTime killed = SystemClock::wall_now()();
  EXPECT_EQ(victim.wait(10s), 128 + SIGKILL);
  ASSERT_TRUE(failures.await([](const auto& f) { return !f.empty(); }, 10s))
      << "no failure reported after the kill";
  EXPECT_LT((SystemClock::wall_now()() - killed).seconds_f(), 1.0);
  EXPECT_EQ(failures.snapshot().front().first, "victim");
  waiter.join();  // the failure ends the local participant's sleep
  EXPECT_FALSE(slept) << "now " << local.now().ns();
  EXPECT_FALSE(local.ok()) << local.last_error();
}

// ---- two network namespaces --------------------------------------------------------------------

int sh(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()); }

// Two namespaces joined by a veth pair (169.254.77.1 / .2, link-local, only inside them); removed
// at the end whatever happens.
class Namespaces {
 public:
  Namespaces() {
    std::string id = std::to_string(::getpid() % 100000);
    a_ = "fpzA" + id;
    b_ = "fpzB" + id;
    va_ = "fpva" + id;
    vb_ = "fpvb" + id;
  }
  ~Namespaces() {
    sh("ip netns del " + a_);
    sh("ip netns del " + b_);
  }
  // Empty on success, else why not.
  std::string create() {
    if (::geteuid() != 0) return "not root: creating network namespaces needs root";
    if (sh("ip netns help") != 0 && sh("ip netns list") != 0) return "`ip netns` is unavailable";
    if (sh("ip netns add " + a_) != 0) return "`ip netns add` failed (no CAP_SYS_ADMIN?)";
    if (sh("ip netns add " + b_) != 0) return "`ip netns add` failed for the second namespace";
    const std::vector<std::string> steps = {
        "ip link add " + va_ + " type veth peer name " + vb_,
        "ip link set " + va_ + " netns " + a_,
        "ip link set " + vb_ + " netns " + b_,
        "ip -n " + a_ + " addr add 169.254.77.1/30 dev " + va_,
        "ip -n " + b_ + " addr add 169.254.77.2/30 dev " + vb_,
        "ip -n " + a_ + " link set " + va_ + " up",
        "ip -n " + b_ + " link set " + vb_ + " up",
        "ip -n " + a_ + " link set lo up",
        "ip -n " + b_ + " link set lo up",
    };
    for (const auto& s : steps) {
      if (sh(s) != 0) return "setting up the veth pair failed at: " + s;
    }
    if (sh("ip netns exec " + b_ + " true") != 0) return "`ip netns exec` does not work here";
    return "";
  }
  std::vector<std::string> exec_in(bool in_a, std::vector<std::string> argv) const {
    std::vector<std::string> v = {"/usr/sbin/ip", "netns", "exec", in_a ? a_ : b_};
    v.insert(v.end(), argv.begin(), argv.end());
    return v;
  }

 private:
  std::string a_, b_, va_, vb_;
};

TEST(Netns, CascadeAcrossTwoNetworkNamespacesGivesTheInProcessTrace) {
  Namespaces ns;
  if (std::string why = ns.create(); !why.empty()) GTEST_SKIP() << why;
  TempDir dir;
  Process root(ns.exec_in(true, {kCli, "coordinator", "--bind", "tcp://169.254.77.1:5545",
                                 "--control", "ipc://" + dir.file("root-control.sock"),
                                 "--start-paused", "--ack-timeout", "20s"}),
               {}, dir.file("root.out"), dir.file("root.err"));
  Process child(ns.exec_in(false, {kCli, "coordinator", "--bind",
                                   "ipc://" + dir.file("child.sock"), "--parent",
                                   "tcp://169.254.77.1:5545", "--name", "child", "--heartbeat",
                                   "50ms"}),
                {}, dir.file("child.out"), dir.file("child.err"));
  auto specs = testing::four_participants();
  std::vector<std::unique_ptr<Process>> procs;
  for (const auto& s : specs) {
    procs.push_back(std::make_unique<Process>(
        ns.exec_in(false, aux_args(s, "ipc://" + dir.file("child.sock"),
                                   dir.file(s.name + ".trace"))),
        std::vector<std::string>{}, dir.file(s.name + ".out"), dir.file(s.name + ".err")));
  }
  // The root is in the other namespace: only its control socket (a path, reachable from every
  // namespace) tells when the four are registered there.
  ControlClient control("ipc://" + dir.file("root-control.sock"));
  const auto want = names(specs);
  bool registered = false;
  WallNow wall = SystemClock::wall_now();
  const SimTime deadline = wall() + seconds(30);
  while (!registered && wall() < deadline) {
    ControlReply r = control.request(status_request(), seconds(1));
    std::vector<std::string> seen;
    for (const auto& p : r.status.participants) seen.push_back(p.participant);
    registered = r.ok && testing::contains_all(seen, want);
    if (!registered) std::this_thread::sleep_for(20ms);  // a status poll: no event to await
  }
  ASSERT_TRUE(registered) << "root stderr: " << testing::read_file(dir.file("root.err"))
                          << "\nchild stderr: " << testing::read_file(dir.file("child.err"));
  ASSERT_TRUE(control.request(resume_request()).ok);
  TraceRun run;
  for (size_t i = 0; i < procs.size(); ++i) {
    EXPECT_EQ(procs[i]->wait(60s), 0) << testing::read_file(dir.file(specs[i].name + ".err"));
    run.traces[specs[i].name] = testing::read_file(dir.file(specs[i].name + ".trace"));
  }
  TraceRun ref = run_in_process();
  ref.tap.clear();  // the root ran in another namespace: compare what the participants received
  EXPECT_EQ(run.all(), ref.all());
  child.signal(SIGTERM);
  root.signal(SIGTERM);
  EXPECT_EQ(child.wait(10s), 0);
  EXPECT_EQ(root.wait(10s), 0);
}

}  // namespace
}  // namespace fieldproof::lockstep
