#include "fieldproof/network/faults.hpp"

#include <algorithm>
#include <utility>

namespace fieldproof::network {

FaultRelay::FaultRelay(uint64_t seed, PublishAt publish_at)
    : seed_(seed), publish_at_(std::move(publish_at)) {}

void FaultRelay::start(const TopicFault& fault, SimTime now) {
  (void)now;  // messages are judged by their stamp, which is never before the engine's now
  (void)stop(fault.label, now);
  Active a{fault, RandomSource(seed_).child("faults/" + fault.label), std::nullopt};
  if (fault.kind == TopicFault::Kind::kFreeze) {
    if (const auto it = last_.find(fault.topic); it != last_.end()) a.frozen = it->second;
  }
  active_.push_back(std::move(a));
  counts_[fault.label];  // known from its start, with zeros
}

FaultCounts FaultRelay::stop(const std::string& label, SimTime now) {
  (void)now;
  active_.erase(std::remove_if(active_.begin(), active_.end(),
                               [&](const Active& a) { return a.fault.label == label; }),
                active_.end());
  return counts(label);
}

FaultCounts FaultRelay::counts(const std::string& label) const {
  const auto it = counts_.find(label);
  return it == counts_.end() ? FaultCounts{} : it->second;
}

void FaultRelay::on_message(const std::string& topic, SimTime stamp, std::string payload,
                            const std::string& type) {
  SimTime at = stamp;
  bool dropped = false;
  std::optional<std::string> original;  // the world's own payload, when a freeze replaced it
  for (Active& a : active_) {
    if (a.fault.topic != topic) continue;
    FaultCounts& c = counts_[a.fault.label];
    ++c.messages;
    switch (a.fault.kind) {
      case TopicFault::Kind::kFreeze:
        if (!a.frozen) a.frozen = payload;  // nothing before the window: its first message
        if (!original) original = payload;
        payload = *a.frozen;
        ++c.frozen;
        break;
      case TopicFault::Kind::kDrop:
        // One draw per message of the window, dropped or not (and even when an earlier fault
        // dropped it), so the draws depend only on the messages.
        if (a.rng.uniform01() < a.fault.probability && !dropped) {
          dropped = true;
          ++c.dropped;
        }
        break;
      case TopicFault::Kind::kDelay:
        if (!dropped) {
          at = at + a.fault.delay;
          ++c.delayed;
        }
        break;
    }
  }
  // A later freeze repeats what the sensor last measured, whatever became of it.
  last_[topic] = original ? std::move(*original) : payload;
  if (dropped) return;
  // FIFO per topic: never before an earlier message of the topic (one sent just after a delay's
  // window waits behind the window's last ones; equal stamps keep the order of publication).
  SimTime& last = last_at_[topic];
  at = std::max(at, last);
  last = at;
  publish_at_(at, topic, std::move(payload), type);
}

}  // namespace fieldproof::network
