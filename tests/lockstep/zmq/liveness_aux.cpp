// A participant in a process of its own for the liveness tests and bench:
//   lockstep_liveness_aux --endpoint EP --name N --mode step|idle|hang [--hang-at-ms T]
//                         [--server-key KEY --client-secret KEY]
// step: announces every 1 ms of simulated time forever (it holds the clock between its grant
// and its next announcement); idle: announces +inf and waits (holds nothing); hang: steps like
// `step` until T, where a timer callback never returns (its link's heartbeat thread goes on).
// Exit 1 when the run failed, 2 on a bad argument.
#include <condition_variable>
#include <iostream>
#include <mutex>
#include <string>

#include "fieldproof/lockstep/transport.hpp"

using fieldproof::milliseconds;
using fieldproof::SimTime;
namespace ls = fieldproof::lockstep;

int main(int argc, char** argv) {
  std::string endpoint;
  std::string name;
  std::string mode = "step";
  int64_t hang_at_ms = 100;
  ls::ConnectOptions copts;
  copts.heartbeat_interval = milliseconds(100);
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) {
      std::cerr << "liveness_aux: " << a << " needs a value\n";
      return 2;
    }
    std::string v = argv[++i];
    if (a == "--endpoint")
      endpoint = v;
    else if (a == "--name")
      name = v;
    else if (a == "--mode")
      mode = v;
    else if (a == "--hang-at-ms")
      hang_at_ms = std::stoll(v);
    else if (a == "--server-key")
      copts.curve.server_public_key = v;
    else if (a == "--client-secret") {
      copts.curve.client_secret_key = v;
      copts.curve.client_public_key = ls::curve_public_key(v);
    } else {
      std::cerr << "liveness_aux: unknown argument " << a << "\n";
      return 2;
    }
  }
  if (endpoint.empty() || name.empty() || (mode != "step" && mode != "idle" && mode != "hang")) {
    std::cerr << "liveness_aux: --endpoint, --name and --mode step|idle|hang are required\n";
    return 2;
  }
  try {
    auto p = ls::connect_participant(endpoint, {.name = name}, copts);
    if (mode == "idle") return p->sleep_until(SimTime::infinite()) ? 0 : 1;
    if (mode == "hang") {
      p->main_thread().create_timer_at(SimTime::zero() + milliseconds(hang_at_ms), [] {
        std::mutex m;
        std::condition_variable cv;
        std::unique_lock lock(m);
        cv.wait(lock, [] { return false; });  // a callback that never returns
      });
    }
    while (p->sleep_for(milliseconds(1))) {
    }
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "liveness_aux: " << e.what() << "\n";
    return 1;
  }
}
