// Topic faults in simulated time (docs/network.md, faults): what the timeline's fault.drop_topic,
// fault.delay_topic and fault.freeze_sensor do to the messages the world publishes for a vehicle,
// on their way to its stack. The world publishes a relayed topic elsewhere (the engine's
// Session::raw_topic); the relay republishes each message on the topic, changed by the faults in
// effect at its stamp.
//
//   FaultRelay relay(seed, [&](SimTime at, const std::string& topic, std::string payload,
//                              const std::string& type) { engine.publish_at(at, ...); });
//   relay.start({.kind = TopicFault::Kind::kDrop, .label = "drops", .topic = "/model/ugv1/scan",
//                .probability = 0.5}, now);
//   relay.on_message("/model/ugv1/scan", stamp, payload, type);   // each raw message, in order
//   FaultCounts c = relay.stop("drops", now);
//
// Per message, in the order the faults started: a freeze replaces the payload by the last one
// the world published before the freeze began (the first of the window when none was), a drop draws
// one number from its own RandomSource(seed).child("faults/<label>") (every message of the window,
// dropped or not, so the draws depend only on the sequence of messages), a delay adds its delay_s
// to the delivery time. A message is never delivered before its stamp, nor before an earlier
// message of its topic (FIFO per topic): one stamped after a delay's window is not delayed itself
// but waits behind the window's last ones, delivered at the same time after them.
//
// Not thread-safe: one owner (the engine's thread, its delivery callbacks included).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fieldproof/time/duration.hpp"
#include "fieldproof/time/random_source.hpp"

namespace fieldproof::network {

struct TopicFault {
  enum class Kind : uint8_t { kDrop, kDelay, kFreeze };
  Kind kind = Kind::kDrop;
  std::string label;         // the timeline entry's label (unique); names its random source
  std::string topic;         // the absolute topic it acts on: /model/<vehicle>/<topic>
  double probability = 1.0;  // kDrop: the chance a message is dropped, (0, 1]
  Duration delay;            // kDelay: added to each message's delivery
};

// What one fault did during its window.
struct FaultCounts {
  uint64_t messages = 0;  // messages on its topic while it was in effect
  uint64_t dropped = 0;   // kDrop
  uint64_t delayed = 0;   // kDelay
  uint64_t frozen = 0;    // kFreeze: delivered with the frozen payload
};

class FaultRelay {
 public:
  using PublishAt = std::function<void(SimTime at, const std::string& topic, std::string payload,
                                       const std::string& type)>;
  FaultRelay(uint64_t seed, PublishAt publish_at);

  // The fault takes effect for messages stamped at or after `now`. A label already in effect is
  // replaced.
  void start(const TopicFault& fault, SimTime now);
  // It ends (messages stamped from `now` on are not affected); its counts. Unknown: zeros.
  FaultCounts stop(const std::string& label, SimTime now);
  // A message the world published for `topic` (the relayed topic's own name) at `stamp`, in the
  // order of the bus: republished now or later on `topic`, changed, or dropped.
  void on_message(const std::string& topic, SimTime stamp, std::string payload,
                  const std::string& type);
  // The counts of a fault in effect or ended (zeros when unknown).
  FaultCounts counts(const std::string& label) const;

 private:
  struct Active {
    TopicFault fault;
    RandomSource rng;
    std::optional<std::string> frozen;  // kFreeze: the payload it repeats
  };
  uint64_t seed_;
  PublishAt publish_at_;
  std::vector<Active> active_;                  // in the order they started
  std::map<std::string, std::string> last_;     // per topic: the world's last payload
  std::map<std::string, FaultCounts> counts_;   // per label
  std::map<std::string, SimTime> last_at_;      // per topic: the last delivery time (FIFO)
};

}  // namespace fieldproof::network
