// The coordinator under a flood: a `fieldproof coordinator` process on tcp,
// one well-behaved regulating participant stepping 1 ms at a time (a grant round trip each), and
// three peers sending small garbage frames as fast as they can for --seconds S (default 30)
// without reading anything. Twice: on plain tcp, then with CURVE (the coordinator has a secret
// key and the flooders hold its public key, so their frames pass the handshake and are decrypted;
// --only plain|curve runs one). Prints, for each case (the CURVE one with the suffix _curve)
//   BENCH coordinator_flood_rss_mb <peak RSS during the flood> MB ratio=<peak/idle>
//   baseline=<idle>MB BENCH coordinator_flood_grants_ratio <grants/s during / before> ratio
//   ratio=<same> baseline=<before>grants/s
// targets: peak <= idle + 64 MB, ratio >= 0.5. The coordinator's log lines (refusals, drops) are
// counted and printed on stderr with the frames the flooders got sent.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "fieldproof/lockstep/transport.hpp"
#include "fieldproof/time/duration.hpp"

extern char** environ;

namespace {

using namespace fieldproof;
using namespace fieldproof::lockstep;
using Clock = std::chrono::steady_clock;

// VmRSS / VmHWM of a process in MB.
double proc_status_mb(pid_t pid, const char* field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  const size_t n = std::strlen(field);
  while (std::getline(in, line)) {
    if (line.compare(0, n, field) == 0) return std::stod(line.substr(n + 1)) / 1024.0;
  }
  return -1;
}

size_t count_lines(const std::string& path, size_t* bytes) {
  std::ifstream in(path);
  std::string line;
  size_t lines = 0;
  *bytes = 0;
  while (std::getline(in, line)) {
    ++lines;
    *bytes += line.size() + 1;
  }
  return lines;
}

// One flooding peer: its own context, a DEALER that never reads, random 8..64-byte frames sent
// as fast as ZeroMQ takes them (blocking when its own queue is full).
void flood(const std::string& endpoint, const std::string& server_key,
           const std::atomic<bool>& stop, std::atomic<uint64_t>& sent, unsigned seed) {
  void* ctx = zmq_ctx_new();
  void* s = zmq_socket(ctx, ZMQ_DEALER);
  int zero = 0;
  int timeout_ms = 100;
  zmq_setsockopt(s, ZMQ_LINGER, &zero, sizeof zero);
  zmq_setsockopt(s, ZMQ_SNDTIMEO, &timeout_ms, sizeof timeout_ms);
  if (!server_key.empty()) {
    char pub[41];
    char sec[41];
    zmq_curve_keypair(pub, sec);
    zmq_setsockopt(s, ZMQ_CURVE_SERVERKEY, server_key.data(), server_key.size());
    zmq_setsockopt(s, ZMQ_CURVE_PUBLICKEY, pub, 40);
    zmq_setsockopt(s, ZMQ_CURVE_SECRETKEY, sec, 40);
  }
  zmq_connect(s, endpoint.c_str());
  std::mt19937 rng(seed);
  std::string frame(64, '\0');
  uint64_t n = 0;
  while (!stop.load(std::memory_order_relaxed)) {
    const size_t len = 8 + rng() % 57;
    for (size_t i = 0; i < len; ++i) frame[i] = static_cast<char>(rng());
    if (zmq_send(s, frame.data(), len, 0) >= 0) ++n;
  }
  sent.fetch_add(n);
  zmq_close(s);
  zmq_ctx_term(ctx);
}

// Grant round trips per second of `p` over `d`.
double grants_per_s(Participant& p, Duration d) {
  const auto start = Clock::now();
  const auto end = start + std::chrono::nanoseconds(d.ns());
  uint64_t n = 0;
  while (Clock::now() < end) {
    if (!p.sleep_for(milliseconds(1))) return -1;
    ++n;
  }
  return static_cast<double>(n) /
         std::chrono::duration<double>(Clock::now() - start).count();
}

// One case: a coordinator process flooded for `flood_for`; `curve` gives it a secret key.
int run_case(Duration flood_for, bool curve) {
  const char* suffix = curve ? "_curve" : "";
  char tmpl[] = "/tmp/fpflood-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return 1;
  const std::string dir = tmpl;
  const std::string out_path = dir + "/out.txt";
  const std::string log_path = dir + "/coordinator.log";
  const std::string key_path = dir + "/server.key";
  std::string server_public;
  std::vector<std::string> args = {FIELDPROOF_CLI, "coordinator", "--bind", "tcp://127.0.0.1:*"};
  if (curve) {
    char pub[41];
    char sec[41];
    if (zmq_curve_keypair(pub, sec) != 0) return 1;
    server_public = pub;
    std::ofstream(key_path) << sec << "\n";
    args.push_back("--curve-secret-key");
    args.push_back(key_path);
  }

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> argv_c;
  for (auto& a : args) argv_c.push_back(a.data());
  argv_c.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, FIELDPROOF_CLI, &fa, nullptr, argv_c.data(), environ) != 0) {
    std::fprintf(stderr, "flood_bench: cannot start %s\n", FIELDPROOF_CLI);
    return 1;
  }
  posix_spawn_file_actions_destroy(&fa);
  // The coordinator prints "bound EP" then "ready"; a bench may poll its output file.
  std::string endpoint;
  for (int i = 0; i < 1000 && endpoint.empty(); ++i) {
    std::ifstream in(out_path);
    std::string line;
    std::string bound;
    while (std::getline(in, line)) {
      if (line.rfind("bound ", 0) == 0) bound = line.substr(6);
      if (line == "ready") endpoint = bound;
    }
    if (endpoint.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  int rc = 1;
  if (endpoint.empty()) {
    std::fprintf(stderr, "flood_bench: the coordinator did not start (see %s)\n", log_path.c_str());
  } else {
    try {
      ConnectOptions c;
      c.heartbeat_interval = milliseconds(100);
      c.curve.server_public_key = server_public;
      auto p = connect_participant(endpoint, {.name = "well-behaved"}, c);
      const double before = grants_per_s(*p, seconds(3));
      const double idle_mb = proc_status_mb(pid, "VmRSS:");
      std::atomic<bool> stop{false};
      std::atomic<uint64_t> sent{0};
      std::vector<std::thread> flooders;
      for (unsigned k = 0; k < 3; ++k) {
        flooders.emplace_back([&, k] { flood(endpoint, server_public, stop, sent, 17 + k); });
      }
      const double during = grants_per_s(*p, flood_for);
      const double peak_mb = proc_status_mb(pid, "VmHWM:");
      stop.store(true);
      for (auto& t : flooders) t.join();
      const double after = grants_per_s(*p, seconds(1));
      const double after_mb = proc_status_mb(pid, "VmRSS:");
      p.reset();
      size_t log_bytes = 0;
      const size_t log_lines = count_lines(log_path, &log_bytes);
      std::fprintf(stderr,
                   "flood_bench%s: %s s flood, %llu garbage frames sent; coordinator log %zu lines "
                   "(%zu bytes); grants/s before %.0f during %.0f after %.0f; RSS idle %.1f MB "
                   "peak %.1f MB after %.1f MB\n",
                   suffix, format_seconds(flood_for).c_str(),
                   static_cast<unsigned long long>(sent.load()), log_lines, log_bytes, before,
                   during, after, idle_mb, peak_mb, after_mb);
      std::printf("BENCH coordinator_flood_rss_mb%s %.1f MB ratio=%.3g baseline=%.1fMB_idle\n",
                  suffix, peak_mb, idle_mb > 0 ? peak_mb / idle_mb : 0.0, idle_mb);
      std::printf(
          "BENCH coordinator_flood_grants_ratio%s %.3g ratio ratio=%.3g baseline=%.0fgrants/s\n",
          suffix, before > 0 ? during / before : 0.0, before > 0 ? during / before : 0.0, before);
      std::fflush(stdout);
      rc = (during > 0 && before > 0) ? 0 : 1;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "flood_bench%s: %s\n", suffix, e.what());
    }
  }
  ::kill(pid, SIGTERM);
  int st = 0;
  ::waitpid(pid, &st, 0);
  if (!WIFEXITED(st)) {
    std::fprintf(stderr, "flood_bench%s: the coordinator ended by signal %d (log: %s)\n", suffix,
                 WTERMSIG(st), log_path.c_str());
    return 1;
  }
  std::remove(out_path.c_str());
  std::remove(log_path.c_str());
  std::remove(key_path.c_str());
  ::rmdir(dir.c_str());
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  Duration flood_for = seconds(30);
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
      auto d = parse_duration(argv[++i]);
      if (!d.ok() || *d <= Duration::zero()) {
        std::fprintf(stderr, "flood_bench: --seconds needs a positive duration\n");
        return 2;
      }
      flood_for = *d;
    } else if (std::strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      only = argv[++i];
      if (only != "plain" && only != "curve") {
        std::fprintf(stderr, "flood_bench: --only plain or --only curve\n");
        return 2;
      }
    } else {
      std::fprintf(stderr,
                   "usage: flood_bench [--seconds S] [--only plain|curve]   (the flood's length, "
                   "default 30; both cases by default)\n");
      return 2;
    }
  }
  int rc = 0;
  if (only != "curve") rc |= run_case(flood_for, false);
  if (only != "plain") rc |= run_case(flood_for, true);
  return rc;
}
