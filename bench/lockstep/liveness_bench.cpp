// Liveness figures: how long the coordinator takes to name a participant process that was killed
// with SIGKILL while it held time (detect_killed_holding_s), while it was idle at +inf
// (detect_killed_idle_s), and one whose callback never returns while its heartbeat thread goes
// on (detect_hung_s, ack_timeout 1 s). Median over 20 trials each, the max beside it:
//   BENCH detect_killed_holding_s <median> s ratio=<median/1> baseline=target_1s max=<max>
//   BENCH detect_hung_s <median> s ratio=<median/1.5> baseline=target_ack_timeout_1s_plus_0.5s ...
// Each trial: a fresh server in this process, the participant in a child process (this program
// re-executed with --participant MODE), wall time from the kill (killed) or from the grant that
// reached the hung callback's time (hung) to the failure handler.
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "fieldproof/lockstep/transport.hpp"
#include "fieldproof/lockstep/zmq_server.hpp"
#include "fieldproof/time/system_clock.hpp"

extern char** environ;

namespace {

using namespace fieldproof;
using namespace fieldproof::lockstep;

constexpr int kTrials = 20;
const SimTime kHangAt = SimTime::zero() + milliseconds(20);

int participant(const std::string& endpoint, const std::string& mode) {
  ConnectOptions c;
  c.heartbeat_interval = milliseconds(100);
  try {
    auto p = connect_participant(endpoint, {.name = "victim"}, c);
    if (mode == "idle") return p->sleep_until(SimTime::infinite()) ? 0 : 1;
    if (mode == "hang") {
      p->main_thread().create_timer_at(kHangAt, [] {
        std::mutex m;
        std::condition_variable cv;
        std::unique_lock lock(m);
        cv.wait(lock, [] { return false; });
      });
    }
    while (p->sleep_for(milliseconds(1))) {
    }
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "liveness_bench participant: %s\n", e.what());
    return 1;
  }
}

struct Trial {
  std::mutex m;
  std::condition_variable cv;
  bool idle_announced = false;
  std::optional<SimTime> grant_at;  // wall time the grant reached kHangAt
  std::optional<SimTime> failed_at;
  template <typename Pred>
  bool await(Pred pred, Duration timeout) {
    std::unique_lock lock(m);
    return cv.wait_for(lock, std::chrono::nanoseconds(timeout.ns()), pred);
  }
};

// One detection time in seconds, or a negative value when the trial did not work.
double run_trial(const char* self, const std::string& mode, const std::string& dir) {
  WallNow wall = SystemClock::wall_now();
  Trial t;
  ServerOptions o;
  o.bind = {"ipc://" + dir + "/c.sock"};
  o.core.ack_timeout = mode == "hang" ? seconds(1) : seconds(30);
  o.on_announce = [&](const Announce& a) {
    std::lock_guard lock(t.m);
    if (a.safe_time.is_infinite()) t.idle_announced = true;
    t.cv.notify_all();
  };
  o.on_grant = [&](SimTime g, uint64_t) {
    std::lock_guard lock(t.m);
    if (!t.grant_at && g >= kHangAt) t.grant_at = wall();
    t.cv.notify_all();
  };
  o.on_failure = [&](const std::string&, const std::string&) {
    std::lock_guard lock(t.m);
    if (!t.failed_at) t.failed_at = wall();
    t.cv.notify_all();
  };
  CoordinatorServer server(std::move(o));
  std::vector<std::string> args = {self, "--participant", mode, server.endpoints()[0]};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, self, nullptr, nullptr, argv.data(), environ) != 0) return -1;
  double result = -1;
  const bool ready = mode == "idle" ? t.await([&] { return t.idle_announced; }, seconds(20))
                                    : t.await([&] { return t.grant_at.has_value(); }, seconds(20));
  if (ready) {
    SimTime from;
    if (mode == "hang") {
      std::lock_guard lock(t.m);
      from = *t.grant_at;
    } else {
      from = wall();
      ::kill(pid, SIGKILL);
    }
    if (t.await([&] { return t.failed_at.has_value(); }, seconds(10))) {
      std::lock_guard lock(t.m);
      result = static_cast<double>((*t.failed_at - from).ns()) / 1e9;
    }
  }
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return result;
}

void figure(const char* self, const std::string& mode, const char* name, double target,
            const char* baseline, const std::string& dir) {
  std::vector<double> v;
  for (int i = 0; i < kTrials; ++i) {
    const double d = run_trial(self, mode, dir);
    if (d < 0) {
      std::fprintf(stderr, "liveness_bench: %s trial %d did not detect the failure\n", name, i);
      continue;
    }
    v.push_back(d);
  }
  if (v.empty()) {
    std::printf("BENCH %s nan s ratio=nan baseline=%s max=nan trials=0\n", name, baseline);
    return;
  }
  std::sort(v.begin(), v.end());
  const double median =
      v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  std::printf("BENCH %s %.4g s ratio=%.4g baseline=%s max=%.4g trials=%zu\n", name, median,
              median / target, baseline, v.back(), v.size());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--participant") return participant(argv[3], argv[2]);
  char tmpl[] = "/tmp/fplive-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return 1;
  const std::string dir = tmpl;
  const char* self = "/proc/self/exe";
  char path[4096] = {};
  const ssize_t n = ::readlink(self, path, sizeof path - 1);
  const std::string exe = n > 0 ? std::string(path, static_cast<size_t>(n)) : argv[0];
  figure(exe.c_str(), "step", "detect_killed_holding_s", 1.0, "target_1s", dir);
  figure(exe.c_str(), "idle", "detect_killed_idle_s", 1.0, "target_1s", dir);
  figure(exe.c_str(), "hang", "detect_hung_s", 1.5, "target_ack_timeout_1s_plus_0.5s", dir);
  ::unlink((dir + "/c.sock").c_str());
  ::rmdir(dir.c_str());
  return 0;
}
