#include "fieldproof/world/world_participant.hpp"

#include <exception>
#include <utility>

#include "fieldproof/msgs/types.hpp"
#include "fieldproof/util/mutex.hpp"

namespace fieldproof::world {

WorldParticipant::WorldParticipant(World& world, lockstep::Participant& participant)
    : world_(world), participant_(participant) {
  if (world_.paused()) world_.pause(false);
  for (const std::string_view expected : {msgs::kEntityFactory, msgs::kEntity}) {
    const std::string what = expected == msgs::kEntity ? "remove" : "create";
    participant_.subscribe(
        "/world/" + world_.name() + "/" + what, [this, expected](const lockstep::Publish& m) {
          // An untyped publish is taken as the type the topic carries.
          const Status s =
              world_.handle_message(m.topic, m.type.empty() ? expected : m.type, m.payload);
          if (!s.ok()) {
            rejected(s.message());
            return;
          }
          refresh_subscriptions();
        });
  }
  refresh_subscriptions();
}

void WorldParticipant::rejected(const std::string& why) {
  ++rejected_;
  last_rejection_ = why;
}

void WorldParticipant::refresh_subscriptions() {
  std::set<std::string> wanted;
  for (const std::string& name : world_.vehicles()) wanted.insert("/model/" + name + "/cmd_vel");
  for (auto it = subscribed_.begin(); it != subscribed_.end();) {
    if (wanted.count(*it) == 0) {
      participant_.unsubscribe(*it);
      it = subscribed_.erase(it);
    } else {
      ++it;
    }
  }
  for (const std::string& topic : wanted) {
    if (!subscribed_.insert(topic).second) continue;
    participant_.subscribe(topic, [this](const lockstep::Publish& m) {
      // An untyped publish on a cmd_vel topic is taken as the Twist it must be.
      const std::string_view type = m.type.empty() ? msgs::kTwist : std::string_view(m.type);
      const Status s = world_.handle_message(m.topic, type, m.payload);
      if (!s.ok()) rejected(s.message());
    });
  }
}

void WorldParticipant::post(std::function<void(World&)> fn) {
  MutexLock lk(posted_mu_);
  posted_.push_back(std::move(fn));
}

void WorldParticipant::run_posted() {
  std::vector<std::function<void(World&)>> batch;
  {
    MutexLock lk(posted_mu_);
    batch.swap(posted_);
  }
  if (batch.empty()) return;
  for (auto& fn : batch) {
    try {
      fn(world_);
    } catch (const std::exception& e) {
      rejected(std::string("a posted function threw: ") + e.what());
    } catch (...) {
      rejected("a posted function threw a non-standard exception");
    }
  }
  refresh_subscriptions();
}

void WorldParticipant::publish_outbox() {
  for (WorldMessage& m : world_.take_messages()) {
    // Messages from before the participant's time (a world that joined late) cannot be
    // published any more: the coordinator would refuse them.
    if (m.stamp < participant_.now()) continue;
    if (!diverted_.empty()) {
      if (const auto d = diverted_.find(m.topic); d != diverted_.end()) {
        participant_.publish_at(m.stamp, d->second, std::move(m.payload), std::string(m.type));
        continue;
      }
    }
    participant_.publish_at(m.stamp, m.topic, std::move(m.payload), std::string(m.type));
  }
}

bool WorldParticipant::run_until(SimTime until) {
  refresh_subscriptions();
  while (world_.sim_time() < until) {
    if (!participant_.ok()) return false;
    const SimTime next = world_.sim_time() + world_.step_size();
    if (!participant_.sleep_until(next)) return false;
    run_posted();
    world_.step();
    publish_outbox();
  }
  return participant_.ok();
}

}  // namespace fieldproof::world
