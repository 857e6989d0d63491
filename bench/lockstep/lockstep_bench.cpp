// Lock-step grant cycles: how many grant cycles per second, and the grant round trip (announce
// sent -> grant received by every participant), for 1, 8 and 64 participants over the in-process
// transport, ipc and tcp; a cascade level (a child coordinator between the participant and the
// root) against the direct connection. Each figure is printed beside its floor, a raw ZeroMQ
// REQ/REP ping-pong over the same transport measured in the same run:
//
//   BENCH lockstep_grants_per_s_ipc_p1 <v> grants/s ratio=<v/raw rate> baseline=zmq_reqrep_ipc
//   BENCH lockstep_grant_rtt_ipc_p1_mean <v> us ratio=<v/raw mean> baseline=zmq_reqrep_ipc
//
// A grant cycle: every participant announces now + 1 ms, the coordinator grants it, every
// participant receives the grant. The participants are raw Links driven from one thread, so the
// figure is the coordinator's and the transport's cost, not the scheduler's.
//
// Same host: a bare futex ping-pong between two processes (the floor of any same-host transport:
// two wake-ups per round trip, nothing else) beside raw ZeroMQ ipc and the lock-step grant round
// trip over ipc, in one run; and the server's local links (participants in the server's process,
// no socket) beside the in-process transport:
//
//   BENCH futex_pingpong_rtt_mean <v> us ratio=1 baseline=futex_pingpong
//   BENCH zmq_reqrep_ipc_vs_futex_rtt_mean <v> us ratio=<v/futex> baseline=futex_pingpong
//   BENCH lockstep_grant_rtt_ipc_p1_vs_futex_mean <v> us ratio=<v/futex> baseline=futex_pingpong
//   BENCH lockstep_grant_rtt_shm_p1_vs_futex_mean <v> us ratio=<v/futex> baseline=futex_pingpong
//   BENCH lockstep_grants_per_s_shm_p8 / _p64 <v> grants/s ratio=<v/ipc> baseline=lockstep_ipc_pN
//   BENCH lockstep_grants_per_s_local_p64 <v> grants/s ratio=<v/in-process> baseline=lockstep_inproc_p64
//
// Usage: lockstep_bench [--seconds S] [--only inproc|ipc|tcp|cascade|samehost|local]
//   --seconds: time per measurement (default 1 s); --only: one group, for quick looks.
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "fieldproof/lockstep/inprocess.hpp"
#include "fieldproof/lockstep/transport.hpp"
#include "fieldproof/lockstep/zmq_server.hpp"
#include "fieldproof/time/system_clock.hpp"

namespace {

using namespace fieldproof;
using namespace fieldproof::lockstep;

WallNow g_wall = SystemClock::wall_now();
Duration g_budget = seconds(1);
std::string g_only;

struct Stats {
  double per_s = 0;    // cycles (round trips) per second
  double mean_us = 0;  // mean round trip
  double p99_us = 0;   // 99th percentile round trip
  uint64_t cycles = 0;
};

Stats summarise(uint64_t cycles, Duration elapsed, std::vector<int64_t>& rtt_ns) {
  Stats s;
  s.cycles = cycles;
  s.per_s = static_cast<double>(cycles) / elapsed.seconds_f();
  if (!rtt_ns.empty()) {
    double sum = 0;
    for (int64_t v : rtt_ns) sum += static_cast<double>(v);
    s.mean_us = sum / static_cast<double>(rtt_ns.size()) / 1e3;
    size_t k = std::min(rtt_ns.size() - 1, rtt_ns.size() * 99 / 100);
    std::nth_element(rtt_ns.begin(), rtt_ns.begin() + static_cast<std::ptrdiff_t>(k), rtt_ns.end());
    s.p99_us = static_cast<double>(rtt_ns[k]) / 1e3;
  }
  return s;
}

// ---- the floor: raw ZeroMQ REQ/REP ping-pong ----------------------------------------------------

Stats raw_pingpong(const std::string& transport, const std::string& dir) {
  void* ctx = zmq_ctx_new();
  void* rep = zmq_socket(ctx, ZMQ_REP);
  std::string ep = transport == "inproc" ? "inproc://bench-pingpong"
                   : transport == "ipc"  ? "ipc://" + dir + "/pingpong.sock"
                                         : "tcp://127.0.0.1:*";
  zmq_bind(rep, ep.c_str());
  char last[256] = {};
  size_t len = sizeof last;
  zmq_getsockopt(rep, ZMQ_LAST_ENDPOINT, last, &len);
  ep = last;
  std::thread echo([rep] {
    char buf[64];
    while (true) {
      int n = zmq_recv(rep, buf, sizeof buf, 0);
      if (n < 0) break;
      zmq_send(rep, buf, static_cast<size_t>(std::min(n, 64)), 0);
      if (n == 1) break;  // the stop message
    }
  });
  void* req = zmq_socket(ctx, ZMQ_REQ);
  zmq_connect(req, ep.c_str());
  char msg[18] = {};  // the size of an encoded Grant
  char buf[64];
  for (int i = 0; i < 100; ++i) {  // warm up: connect, first allocations
    zmq_send(req, msg, sizeof msg, 0);
    zmq_recv(req, buf, sizeof buf, 0);
  }
  std::vector<int64_t> rtt;
  rtt.reserve(1 << 20);
  const SimTime start = g_wall();
  const SimTime end = start + g_budget;
  uint64_t n = 0;
  SimTime now = start;
  while (now < end) {
    SimTime t0 = now;
    zmq_send(req, msg, sizeof msg, 0);
    zmq_recv(req, buf, sizeof buf, 0);
    now = g_wall();
    rtt.push_back((now - t0).ns());
    ++n;
  }
  Stats s = summarise(n, now - start, rtt);
  zmq_send(req, msg, 1, 0);
  zmq_recv(req, buf, sizeof buf, 0);
  echo.join();
  int linger = 0;
  zmq_setsockopt(req, ZMQ_LINGER, &linger, sizeof linger);
  zmq_close(req);
  zmq_close(rep);
  zmq_ctx_term(ctx);
  return s;
}

// ---- the same-host floor: a futex ping-pong between two processes ------------------------------

struct PingPong {
  std::atomic<uint32_t> turn{0};  // 1: the echo process's turn, 0: the measuring process's
  std::atomic<uint32_t> stop{0};
};

void futex_wait(std::atomic<uint32_t>* a, uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(a), FUTEX_WAIT, expected, nullptr, nullptr, 0);
}
void futex_wake(std::atomic<uint32_t>* a) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(a), FUTEX_WAKE, 1, nullptr, nullptr, 0);
}

// A round trip: set the other process's turn, wake it, sleep until it hands the turn back. The
// waits are futex waits (no spinning), as a blocking same-host transport's would be.
Stats futex_pingpong() {
  void* mem = mmap(nullptr, sizeof(PingPong), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                   -1, 0);
  if (mem == MAP_FAILED) return {};
  auto* pp = new (mem) PingPong;
  const pid_t child = fork();
  if (child == 0) {
    while (true) {
      while (pp->turn.load(std::memory_order_acquire) != 1) futex_wait(&pp->turn, 0);
      if (pp->stop.load(std::memory_order_relaxed)) _exit(0);
      pp->turn.store(0, std::memory_order_release);
      futex_wake(&pp->turn);
    }
  }
  auto round_trip = [pp] {
    pp->turn.store(1, std::memory_order_release);
    futex_wake(&pp->turn);
    while (pp->turn.load(std::memory_order_acquire) != 0) futex_wait(&pp->turn, 1);
  };
  for (int i = 0; i < 1000; ++i) round_trip();  // warm up
  std::vector<int64_t> rtt;
  rtt.reserve(1 << 20);
  const SimTime start = g_wall();
  const SimTime end = start + g_budget;
  uint64_t n = 0;
  SimTime now = start;
  while (now < end) {
    const SimTime t0 = now;
    round_trip();
    now = g_wall();
    rtt.push_back((now - t0).ns());
    ++n;
  }
  Stats s = summarise(n, now - start, rtt);
  pp->stop.store(1);
  pp->turn.store(1, std::memory_order_release);
  futex_wake(&pp->turn);
  int st = 0;
  waitpid(child, &st, 0);
  munmap(mem, sizeof(PingPong));
  return s;
}

// ---- lock-step grant cycles over Links ---------------------------------------------------------

// Waits on `link` for a Grant at or past t. In-process links are polled (single-threaded use).
bool await_grant(Link& link, SimTime t, bool in_process) {
  while (true) {
    auto f = link.receive(in_process ? Duration::zero() : seconds(10));
    if (!f) return false;
    if (auto* g = std::get_if<Grant>(&*f); g != nullptr && g->time >= t) return true;
  }
}

Stats grant_cycles(std::vector<std::unique_ptr<Link>>& links, bool in_process) {
  const size_t n = links.size();
  std::vector<std::string> names;
  for (size_t i = 0; i < n; ++i) names.push_back("p" + std::to_string(i));
  SimTime t = SimTime::zero();
  // Register every participant at 0 and take the first grant.
  for (size_t i = 0; i < n; ++i) links[i]->send(Announce{names[i], "main", Role::kRegulating, t});
  for (auto& l : links) {
    if (!await_grant(*l, t, in_process)) return {};
  }
  auto cycle = [&] {
    t += milliseconds(1);
    for (size_t i = 0; i < n; ++i) links[i]->send(Announce{names[i], "main", Role::kRegulating, t});
    for (auto& l : links) {
      if (!await_grant(*l, t, in_process)) return false;
    }
    return true;
  };
  for (int i = 0; i < 50; ++i) cycle();  // warm up
  std::vector<int64_t> rtt;
  rtt.reserve(1 << 20);
  // In-process cycles take well under a microsecond: read the clock on every 64th only.
  const uint64_t sample_every = in_process ? 64 : 1;
  const SimTime start = g_wall();
  const SimTime end = start + g_budget;
  uint64_t cycles = 0;
  SimTime now = start;
  while (now < end) {
    if (cycles % sample_every == 0) {
      SimTime t0 = g_wall();
      if (!cycle()) break;
      now = g_wall();
      rtt.push_back((now - t0).ns());
    } else if (!cycle()) {
      break;
    }
    ++cycles;
  }
  now = g_wall();
  for (size_t i = 0; i < n; ++i) links[i]->send(Leave{names[i], ""});
  return summarise(cycles, now - start, rtt);
}

CoordinatorOptions core_options() {
  CoordinatorOptions o;
  o.wall_now = g_wall;
  o.ack_timeout = Duration::infinite();
  o.follower_timeout = Duration::infinite();
  return o;
}

ConnectOptions quiet_link(bool shm = false) {
  ConnectOptions c;
  c.heartbeat_interval = Duration::zero();  // silence is not checked in the benchmark
  c.shared_memory = shm;                    // ipc: the same-host transport, or ZeroMQ
  return c;
}

Stats lockstep_inprocess(size_t participants) {
  InProcessCoordinator coord(core_options());
  std::vector<std::unique_ptr<Link>> links;
  for (size_t i = 0; i < participants; ++i) links.push_back(coord.make_link());
  return grant_cycles(links, true);
}

// transport: "ipc" (ZeroMQ over a Unix socket), "tcp", or "shm" (an ipc endpoint whose links
// switch to the same-host shared-memory transport).
Stats lockstep_zmq(const std::string& transport, size_t participants, const std::string& dir) {
  ServerOptions o;
  o.bind = {transport != "tcp" ? "ipc://" + dir + "/coordinator.sock" : "tcp://127.0.0.1:*"};
  o.core = core_options();
  CoordinatorServer server(std::move(o));
  std::vector<std::unique_ptr<Link>> links;
  for (size_t i = 0; i < participants; ++i) {
    links.push_back(connect(server.endpoints()[0], quiet_link(transport == "shm")));
  }
  Stats s = grant_cycles(links, false);
  if (transport == "shm" && server.shm_connections() != participants) {
    std::fprintf(stderr, "lockstep_bench: only %llu of %zu links switched to shared memory\n",
                 static_cast<unsigned long long>(server.shm_connections()), participants);
    std::exit(1);
  }
  return s;
}

// Participants in the server's own process on its local links (the engine and the world in a run
// with stack processes), driven from one thread: the core runs on the sender's thread.
Stats lockstep_local(size_t participants, const std::string& dir) {
  ServerOptions o;
  o.bind = {"ipc://" + dir + "/local.sock"};
  o.core = core_options();
  CoordinatorServer server(std::move(o));
  std::vector<std::unique_ptr<Link>> links;
  for (size_t i = 0; i < participants; ++i) links.push_back(server.make_local_link());
  return grant_cycles(links, true);
}

Stats lockstep_cascade(const std::string& dir) {
  ServerOptions root_o;
  root_o.bind = {"ipc://" + dir + "/root.sock"};
  root_o.core = core_options();
  CoordinatorServer root(std::move(root_o));
  ServerOptions child_o;
  child_o.bind = {"ipc://" + dir + "/child.sock"};
  child_o.core = core_options();
  child_o.parent = root.endpoints()[0];
  child_o.child_name = "child";
  child_o.parent_connect = quiet_link();
  CoordinatorServer child(std::move(child_o));
  std::vector<std::unique_ptr<Link>> links;
  links.push_back(connect(child.endpoints()[0], quiet_link()));
  return grant_cycles(links, false);
}

void bench_line(const std::string& name, double v, const char* unit, double base,
                const std::string& baseline) {
  std::printf("BENCH %s %.6g %s ratio=%.4g baseline=%s\n", name.c_str(), v, unit,
              base > 0 ? v / base : 0.0, baseline.c_str());
  std::fflush(stdout);
}

void report(const std::string& tag, const Stats& s, const Stats& raw, const std::string& base) {
  bench_line("lockstep_grants_per_s_" + tag, s.per_s, "grants/s", raw.per_s, base);
  bench_line("lockstep_grant_rtt_" + tag + "_mean", s.mean_us, "us", raw.mean_us, base);
  bench_line("lockstep_grant_rtt_" + tag + "_p99", s.p99_us, "us", raw.p99_us, base + "_p99");
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
      auto d = parse_duration(argv[++i]);
      if (!d.ok() || *d <= Duration::zero()) {
        std::fprintf(stderr, "lockstep_bench: --seconds needs a positive duration\n");
        return 2;
      }
      g_budget = *d;
    } else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      g_only = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: lockstep_bench [--seconds S] "
                   "[--only inproc|ipc|tcp|cascade|samehost|local]\n");
      return 2;
    }
  }
  char tmpl[] = "/tmp/fpbench-XXXXXX";
  const char* dir_c = mkdtemp(tmpl);
  if (dir_c == nullptr) return 1;
  const std::string dir = dir_c;

  const size_t counts[] = {1, 8, 64};
  for (const std::string transport : {"inproc", "ipc", "tcp"}) {
    if (!g_only.empty() && g_only != transport) continue;
    Stats raw = raw_pingpong(transport, dir);
    const std::string base = "zmq_reqrep_" + transport;
    bench_line(base + "_per_s", raw.per_s, "roundtrips/s", raw.per_s, base);
    bench_line(base + "_rtt_mean", raw.mean_us, "us", raw.mean_us, base);
    for (size_t n : counts) {
      Stats s = transport == "inproc" ? lockstep_inprocess(n) : lockstep_zmq(transport, n, dir);
      report(transport + "_p" + std::to_string(n), s, raw, base);
    }
  }
  // Same host: the futex floor beside raw ZeroMQ ipc and the grant round trip over ipc, one after
  // the other in this run.
  if (g_only.empty() || g_only == "samehost") {
    Stats futex = futex_pingpong();
    Stats raw = raw_pingpong("ipc", dir);
    Stats grant = lockstep_zmq("ipc", 1, dir);
    bench_line("futex_pingpong_per_s", futex.per_s, "roundtrips/s", futex.per_s, "futex_pingpong");
    bench_line("futex_pingpong_rtt_mean", futex.mean_us, "us", futex.mean_us, "futex_pingpong");
    bench_line("futex_pingpong_rtt_p99", futex.p99_us, "us", futex.p99_us, "futex_pingpong_p99");
    bench_line("zmq_reqrep_ipc_vs_futex_rtt_mean", raw.mean_us, "us", futex.mean_us,
               "futex_pingpong");
    bench_line("lockstep_grant_rtt_ipc_p1_vs_futex_mean", grant.mean_us, "us", futex.mean_us,
               "futex_pingpong");
    // The same-host transport: the grant round trip beside the floor and beside raw ZeroMQ ipc;
    // 8 and 64 participants beside ZeroMQ ipc with as many, all in this run.
    Stats shm1 = lockstep_zmq("shm", 1, dir);
    bench_line("lockstep_grant_rtt_shm_p1_vs_futex_mean", shm1.mean_us, "us", futex.mean_us,
               "futex_pingpong");
    bench_line("lockstep_grant_rtt_shm_p1_vs_zmq_mean", shm1.mean_us, "us", raw.mean_us,
               "zmq_reqrep_ipc");
    bench_line("lockstep_grant_rtt_shm_p1_p99", shm1.p99_us, "us", futex.p99_us,
               "futex_pingpong_p99");
    bench_line("lockstep_grants_per_s_shm_p1", shm1.per_s, "grants/s", grant.per_s,
               "lockstep_ipc_p1");
    for (size_t n : {size_t{8}, size_t{64}}) {
      Stats ipc = lockstep_zmq("ipc", n, dir);
      Stats shm = lockstep_zmq("shm", n, dir);
      const std::string tag = "p" + std::to_string(n);
      bench_line("lockstep_grants_per_s_shm_" + tag, shm.per_s, "grants/s", ipc.per_s,
                 "lockstep_ipc_" + tag);
      bench_line("lockstep_grant_rtt_shm_" + tag + "_mean", shm.mean_us, "us", ipc.mean_us,
                 "lockstep_ipc_" + tag);
    }
  }
  // Local links beside the in-process transport.
  if (g_only.empty() || g_only == "local") {
    for (size_t n : counts) {
      Stats in = lockstep_inprocess(n);
      Stats local = lockstep_local(n, dir);
      const std::string base = "lockstep_inproc_p" + std::to_string(n);
      bench_line("lockstep_grants_per_s_local_p" + std::to_string(n), local.per_s, "grants/s",
                 in.per_s, base);
    }
  }
  // A cascade level: one child between the participant and the root, against the direct ipc p1
  // measured again now (same conditions).
  if (!g_only.empty() && g_only != "cascade") return std::system(("rm -rf " + dir).c_str()) == 0 ? 0 : 1;
  Stats direct = lockstep_zmq("ipc", 1, dir);
  Stats cascade = lockstep_cascade(dir);
  bench_line("lockstep_grants_per_s_cascade_p1", cascade.per_s, "grants/s", direct.per_s,
             "lockstep_ipc_p1_direct");
  bench_line("lockstep_grant_rtt_cascade_p1_mean", cascade.mean_us, "us", direct.mean_us,
             "lockstep_ipc_p1_direct");
  bench_line("lockstep_grant_rtt_cascade_p1_p99", cascade.p99_us, "us", direct.p99_us,
             "lockstep_ipc_p1_direct_p99");
  std::string cmd = "rm -rf " + dir;
  return std::system(cmd.c_str()) == 0 ? 0 : 1;
}
