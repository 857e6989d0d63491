#include "fieldproof/stacks/participant_host.hpp"

#include <algorithm>

#include "fieldproof/time/system_clock.hpp"
#include "fieldproof/util/mutex.hpp"

namespace fieldproof::stacks {

UgvNavParticipantHost::UgvNavParticipantHost(lockstep::Participant& participant, UgvNavNode& node,
                                             ParticipantHostOptions options)
    : participant_(participant), options_(std::move(options)), node_(&node) {}

UgvNavParticipantHost::~UgvNavParticipantHost() = default;

void UgvNavParticipantHost::problem(const std::string& what) {
  ++problems_;
  if (options_.on_problem) options_.on_problem(what);
}

void UgvNavParticipantHost::publish_locked(SimTime floor) {
  for (BusMessage& m : node_->take_messages()) {
    if (options_.on_published) options_.on_published(m);
    participant_.publish_at(std::max(m.stamp, floor), m.topic, std::move(m.payload),
                            std::move(m.type));
  }
}

void UgvNavParticipantHost::stop() {
  stop_ = true;
  participant_.main_thread().stop();
}

bool UgvNavParticipantHost::run(SimTime until) {
  std::vector<std::string> topics;
  {
    MutexLock lock(mutex_);
    topics = node_->subscriptions();
  }
  for (const std::string& topic : topics) {
    participant_.subscribe(topic, [this](const lockstep::Publish& m) {
      MutexLock lock(mutex_);
      const Status delivered = node_->deliver({m.topic, m.stamp, m.type, m.payload});
      if (!delivered.ok()) problem(delivered.message());
      publish_locked(participant_.now());
    });
  }

  PeriodicThread watchdog(
      PeriodicThreadOptions{.spin = Duration::zero(), .now = options_.wall_now, .sleep_until = {}});
  if (options_.wall_check_period > Duration::zero()) {
    watchdog.start(options_.wall_check_period, [this](const PeriodicTick&) {
      MutexLock lock(mutex_);
      node_->check_wall();
      // The main thread announced its next tick: nothing may be published before it.
      publish_locked(node_->next_tick());
    });
  }

  bool ok = true;
  while (!stop_) {
    SimTime next;
    {
      MutexLock lock(mutex_);
      next = node_->next_tick();
    }
    if (next > until) {
      ok = participant_.sleep_until(until);
      break;
    }
    if (!participant_.sleep_until(next)) {
      ok = false;
      break;
    }
    MutexLock lock(mutex_);
    node_->tick(participant_.now());
    publish_locked(participant_.now());
  }
  watchdog.stop();
  const bool failed = !participant_.ok();
  if (!failed) {
    MutexLock lock(mutex_);
    node_->stack().shutdown(participant_.now(), stop_ ? "stopped" : "the run ended");
    publish_locked(participant_.now());
  }
  return !failed && (ok || stop_);
}

}  // namespace fieldproof::stacks
