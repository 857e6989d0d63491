// A C++ participant beside the Python one in tests/python/test_client.py:
//   fieldproof_python_cpp_peer ENDPOINT NAME TOPIC COUNT PERIOD_MS
// Connects as NAME, subscribes to TOPIC, publishes COUNT messages on TOPIC stamped k x PERIOD
// (k = 1..COUNT, payload "NAME-k"), then waits until (COUNT + 1) x PERIOD. Prints "ready" once
// registered, one line "recv <stamp_ns> <publisher> <seq> <payload>" per delivery, "done" at the
// end. Exit 1 when the participant failed.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fieldproof/lockstep/participant.hpp"
#include "fieldproof/lockstep/transport.hpp"

using namespace fieldproof;
using namespace fieldproof::lockstep;

int main(int argc, char** argv) {
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s ENDPOINT NAME TOPIC COUNT PERIOD_MS\n", argv[0]);
    return 2;
  }
  const std::string endpoint = argv[1];
  const std::string name = argv[2];
  const std::string topic = argv[3];
  const int count = std::atoi(argv[4]);
  const Duration period = milliseconds(std::atoi(argv[5]));
  auto p = connect_participant(endpoint, ParticipantOptions{.name = name});
  if (!p->ok()) {
    std::fprintf(stderr, "not registered: %s\n", p->last_error().c_str());
    return 1;
  }
  p->subscribe(topic, [](const Publish& m) {
    std::printf("recv %lld %s %llu %s\n", static_cast<long long>(m.stamp.ns()),
                m.participant.c_str(), static_cast<unsigned long long>(m.seq), m.payload.c_str());
    std::fflush(stdout);
  });
  std::printf("ready\n");
  std::fflush(stdout);
  const SimTime start = SimTime::zero();
  for (int k = 1; k <= count; ++k) {
    if (!p->sleep_until(start + period * k)) return 1;
    p->publish(topic, name + "-" + std::to_string(k), "text");
  }
  if (!p->sleep_until(start + period * (count + 1))) return 1;
  std::printf("done\n");
  std::fflush(stdout);
  p->leave();
  return 0;
}
