// The participant the determinism tests run, in a thread (in-process) or in a process
// (participant_aux): it publishes "<name>#<k>" on /<name> every period until `until`, receives
// the topics it subscribes to, and returns what it saw, one line per delivery, in order.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "fieldproof/lockstep/participant.hpp"

namespace fieldproof::lockstep::testing {

struct TraceSpec {
  std::string name;
  Duration period = milliseconds(5);
  std::vector<std::string> subscribe;  // topics
  SimTime until = SimTime::from_ns(200'000'000);
};

// One line per delivery: "<now_ns> <topic> <publisher> <seq> <stamp_ns> <payload>".
inline std::string run_trace_participant(Participant& p, const TraceSpec& spec) {
  std::ostringstream trace;
  for (const auto& topic : spec.subscribe) {
    p.subscribe(topic, [&](const Publish& m) {
      trace << p.now().ns() << ' ' << m.topic << ' ' << m.participant << ' ' << m.seq << ' '
            << m.stamp.ns() << ' ' << m.payload << '\n';
    });
  }
  Rate rate(p, spec.period);
  const std::string topic = "/" + spec.name;
  for (int k = 1; rate.next() < spec.until; ++k) {
    if (!rate.sleep()) break;
    p.publish(topic, spec.name + "#" + std::to_string(k), "text");
  }
  p.sleep_until(spec.until);
  p.leave();
  return trace.str();
}

// The four participants of the determinism tests: different periods, each subscribing to the
// other three.
inline std::vector<TraceSpec> four_participants() {
  std::vector<TraceSpec> specs = {{"alpha", milliseconds(3), {}, SimTime::from_ns(120'000'000)},
                                  {"bravo", milliseconds(5), {}, SimTime::from_ns(120'000'000)},
                                  {"charlie", milliseconds(7), {}, SimTime::from_ns(120'000'000)},
                                  {"delta", milliseconds(11), {}, SimTime::from_ns(120'000'000)}};
  for (auto& s : specs) {
    for (const auto& o : specs) {
      if (o.name != s.name) s.subscribe.push_back("/" + o.name);
    }
  }
  return specs;
}

}  // namespace fieldproof::lockstep::testing
