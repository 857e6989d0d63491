// The Python client's cost, each figure beside its C++ baseline measured in the same run.
//
//   python_grant_rtt_ipc: one participant alone on an ipc coordinator (served by this process)
//   loops sleep_until(now + 1 ms); the mean wall time per grant of the Python client
//   (bench/python/grant_rtt.py, a child process) against the C++ Participant's on the same
//   coordinator. Each side runs chunks of 300 grants in three interleaved rounds; the fastest
//   chunk of each side counts (on a shared machine, the least disturbed one).
//
//   python_stack_lockstep_rtf: `fieldproof run` of the Python example stack's lockstep depot drive
//   with the pace cap lifted (--max-rtf 0), simulated seconds per wall second; baseline the C++
//   example stack's (examples/scenarios/cpp_goal_follower_lockstep.yaml) when it is in the tree,
//   else the reference stack's process scenario (ugv_lockstep.yaml). Skipped, saying why, when the
//   engine cannot run the Python stack.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "fieldproof/lockstep/participant.hpp"
#include "fieldproof/lockstep/transport.hpp"
#include "fieldproof/lockstep/zmq_server.hpp"

namespace fs = std::filesystem;
using namespace fieldproof;
using namespace fieldproof::lockstep;

namespace {

constexpr int kGrants = 3000;
constexpr int kWarmup = 300;
constexpr int kChunk = 300;  // as grant_rtt.py

double cpp_rtt_us(const std::string& endpoint, const std::string& name) {
  auto p = connect_participant(endpoint, ParticipantOptions{.name = name});
  for (int i = 0; i < kWarmup; ++i) p->sleep_until(p->now() + milliseconds(1));
  double best = 1e300;
  for (int c = 0; c < kGrants / kChunk; ++c) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kChunk; ++i) p->sleep_until(p->now() + milliseconds(1));
    const auto dt = std::chrono::steady_clock::now() - t0;
    best = std::min(best, std::chrono::duration<double, std::micro>(dt).count() / kChunk);
  }
  p->leave();
  return best;
}

// Runs a command, returns its stdout (empty on failure).
std::string capture(const std::string& cmd, int* status) {
  std::string out;
  FILE* f = ::popen(cmd.c_str(), "r");
  if (f == nullptr) return out;
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  *status = ::pclose(f);
  return out;
}

double python_rtt_us(const std::string& endpoint, const std::string& name) {
  const std::string cmd = "PYTHONPATH=" FIELDPROOF_PYTHON_BUILD_DIR " " FIELDPROOF_PYTHON3 " " +
                          std::string(FIELDPROOF_BENCH_DIR) + "/grant_rtt.py " + endpoint + " " +
                          std::to_string(kGrants) + " " + std::to_string(kWarmup) + " " + name;
  int status = 0;
  const std::string out = capture(cmd, &status);
  const auto pos = out.find("rtt_us ");
  if (status != 0 || pos == std::string::npos) {
    std::fprintf(stderr, "python_bench: the Python client failed (%s): %s\n", cmd.c_str(),
                 out.c_str());
    return -1;
  }
  return std::stod(out.substr(pos + 7));
}

// sim seconds per wall second of one `fieldproof run`, or < 0 when it did not pass.
double run_rtf(const fs::path& scenario, const fs::path& runs, const std::string& id,
               std::string* why) {
  const std::string cmd =
      "cd " FIELDPROOF_SOURCE_DIR " && PATH=" FIELDPROOF_PYTHON3_DIR
      ":$PATH PYTHONPATH=" FIELDPROOF_PYTHON_BUILD_DIR " " FIELDPROOF_BIN " run " +
      scenario.string() + " --max-rtf 0 --runs-dir " + runs.string() + " --run-id " + id + " 2>&1";
  int status = 0;
  const auto t0 = std::chrono::steady_clock::now();
  const std::string out = capture(cmd, &status);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::ifstream in(runs / id / "run.json");
  if (status != 0 || !in) {
    *why = out.substr(0, 400);
    return -1;
  }
  const auto run = nlohmann::json::parse(in, nullptr, false);
  if (run.is_discarded()) return -1;
  const double sim = run["clock"].value("sim_elapsed_s", 0.0);
  double run_wall = run["clock"].value("wall_elapsed_s", 0.0);
  if (run_wall <= 0) run_wall = wall;
  return sim / run_wall;
}

}  // namespace

int main() {
  const fs::path dir =
      fs::temp_directory_path() / ("fieldproof-python-bench-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    ServerOptions so;
    so.bind = {"ipc://" + (dir / "c.sock").string()};
    CoordinatorServer server(so);
    const std::string ep = server.endpoints().at(0);
    double best_cpp = 1e300;
    double best_py = 1e300;
    for (int round = 0; round < 3; ++round) {
      best_cpp = std::min(best_cpp, cpp_rtt_us(ep, "cpp_rtt_" + std::to_string(round)));
      const double py = python_rtt_us(ep, "py_rtt_" + std::to_string(round));
      if (py < 0) return 1;
      best_py = std::min(best_py, py);
    }
    std::printf("cpp_grant_rtt_ipc %.1f us (baseline)\n", best_cpp);
    std::printf("BENCH python_grant_rtt_ipc %.1f us ratio=%.2f baseline=cpp_grant_rtt_ipc\n",
                best_py, best_py / best_cpp);
  }

  const fs::path scenarios = fs::path(FIELDPROOF_SOURCE_DIR) / "examples" / "scenarios";
  std::string why;
  const double py_rtf =
      run_rtf(scenarios / "python_goal_follower_lockstep.yaml", dir / "runs", "py", &why);
  if (py_rtf < 0) {
    std::printf("python_stack_lockstep_rtf: skipped: the run did not pass: %s\n", why.c_str());
  } else {
    // The C++ example stack when it runs here (its program must be on PATH or beside fieldproof),
    // else the reference stack's process.
    std::string base_name = "cpp_goal_follower_lockstep_rtf";
    double base_rtf = -1;
    if (fs::exists(scenarios / "cpp_goal_follower_lockstep.yaml")) {
      base_rtf = run_rtf(scenarios / "cpp_goal_follower_lockstep.yaml", dir / "runs", "cpp", &why);
      if (base_rtf < 0) std::printf("cpp_goal_follower_lockstep did not run: %s\n", why.c_str());
    }
    if (base_rtf < 0) {
      base_name = "ugv_nav_process_lockstep_rtf";
      base_rtf = run_rtf(scenarios / "ugv_lockstep.yaml", dir / "runs", "ref", &why);
    }
    if (base_rtf < 0) {
      std::printf("python_stack_lockstep_rtf: no baseline ran: %s\n", why.c_str());
    } else {
      std::printf("python_stack_lockstep_rtf %.1f x\n", py_rtf);
      std::printf("%s %.1f x (baseline)\n", base_name.c_str(), base_rtf);
      std::printf("BENCH python_stack_lockstep_rtf %.1f x ratio=%.2f baseline=%s\n", py_rtf,
                  py_rtf / base_rtf, base_name.c_str());
    }
  }
  fs::remove_all(dir);
  return 0;
}
