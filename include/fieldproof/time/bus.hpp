// Bus: an in-process, time-ordered message bus.
//
// publish() stamps a message with the bus's global sequence number (an atomic counter) and queues
// it; deliver_until(t) hands every queued message with stamp <= t to its subscribers in the total
// order (stamp, sequence) — never in subscription or arrival order. Within one message, the
// subscribers are called in subscription order.
//
//   Bus bus;
//   Subscription s = bus.subscribe("/odom", [](const BusMessage& m) { use(m.payload); });
//   bus.publish("/odom", SimTime::from_ns(5'000'000), payload, "fieldproof.Odometry");
//   bus.deliver_until(SimTime::from_ns(5'000'000));   // s's callback runs here
//
// Contracts (each tested):
//   * Publishing from inside a delivery: a message with stamp <= t is delivered in the same
//     deliver_until(t) call, after the message being delivered (its stamp cannot be
//     earlier than the current one, the last delivered stamp, and its sequence is larger).
//   * Unsubscribing during a delivery (from any callback, including the subscriber's own): that
//     subscriber is not called again, not even for the rest of the current message's fan-out.
//     Subscribing during a delivery: the new subscriber receives the next messages, not the
//     current one.
//   * Time goes forward: publish() with a stamp before the last delivered stamp throws TimeError.
//     Equal to it is allowed (a callback at time t may publish at t).
//   * Topic "*" or "" subscribes to every topic (recorders); such subscribers are called in
//     subscription order together with the topic's own subscribers.
//
// Threads: publish() may be called from any thread (a mutex guards the queue). subscribe(),
// Subscription::unsubscribe() and deliver_until() must be called from the delivering thread (or
// with external synchronisation); callbacks run on the thread calling deliver_until().
// A callback that throws propagates out of deliver_until(): that message counts as delivered (its
// remaining subscribers are skipped), later messages stay queued for the next call.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fieldproof/time/duration.hpp"
#include "fieldproof/time/time_error.hpp"

namespace fieldproof {

// The topic on which the time kernel reports events (SCHEDULER_CALLBACK_FAILED, ...), as JSON.
inline constexpr std::string_view kEventsTopic = "/fieldproof/events";
// The `type` of those messages.
inline constexpr std::string_view kEventType = "fieldproof.Event";

struct BusMessage {
  std::string_view topic;  // interned by the Bus: valid as long as the Bus exists
  SimTime stamp;
  uint64_t sequence = 0;  // the bus's global sequence number, taken at publish()
  std::string payload;    // opaque bytes (serialized protobuf, JSON, ...)
  std::string_view type;  // optional type name, e.g. "ignition.msgs.Odometry"; may be empty;
                          // interned like topic
};

using BusCallback = std::function<void(const BusMessage&)>;

class Bus;

// A subscription; unsubscribes when destroyed (RAII) or on unsubscribe(). Movable, not copyable.
// Safe to destroy or unsubscribe after the Bus is gone (it then does nothing).
class Subscription {
 public:
  Subscription() = default;
  Subscription(Subscription&& other) noexcept;
  Subscription& operator=(Subscription&& other) noexcept;
  Subscription(const Subscription&) = delete;
  Subscription& operator=(const Subscription&) = delete;
  ~Subscription();

  // Idempotent. See the delivery contract above.
  void unsubscribe();
  bool active() const;
  // Keeps the subscription for the Bus's lifetime: the Subscription object no longer controls it.
  void release();

 private:
  friend class Bus;
  struct Link;
  Subscription(std::shared_ptr<Link> link, uint64_t id) : link_(std::move(link)), id_(id) {}
  std::shared_ptr<Link> link_;
  uint64_t id_ = 0;
};

class Bus {
 public:
  Bus();
  ~Bus();
  Bus(const Bus&) = delete;
  Bus& operator=(const Bus&) = delete;

  // Queues a message and returns its sequence number. Throws TimeError if `stamp` is before the
  // last delivered stamp, or if the stamp is infinite.
  uint64_t publish(std::string_view topic, SimTime stamp, std::string payload,
                   std::string_view type = {});

  // Subscribes to `topic` ("*" or "" for all topics). The callback must not be empty.
  [[nodiscard]] Subscription subscribe(std::string_view topic, BusCallback callback);

  // Delivers every queued message with stamp <= t (including those published meanwhile) in the
  // order (stamp, sequence). Returns the number of callback invocations (deliveries). Re-entrant
  // calls (deliver_until from inside a callback) throw TimeError.
  size_t deliver_until(SimTime t);

  // The smallest queued stamp, if any.
  std::optional<SimTime> next_stamp() const;
  size_t pending() const;
  // The stamp of the last delivered message (SimTime::zero() before the first, unless a larger
  // floor was given by advance_floor()).
  SimTime last_delivered() const;
  // Raises the "time went forward" floor without delivering (e.g. a clock that advanced past t):
  // publishing before `t` is refused afterwards. Never lowers it.
  void advance_floor(SimTime t);
  // Messages published so far (the next sequence number).
  uint64_t published() const { return next_sequence_.load(std::memory_order_relaxed); }

 private:
  friend class Subscription;
  struct Impl;
  std::atomic<uint64_t> next_sequence_{0};
  std::unique_ptr<Impl> impl_;
};

}  // namespace fieldproof
