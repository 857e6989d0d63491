#include "fieldproof/world/world_participant.hpp"

#include "fieldproof/msgs/types.hpp"

namespace fieldproof::world {

WorldParticipant::WorldParticipant(World& world, lockstep::Participant& participant)
    : world_(world), participant_(participant) {
  if (world_.paused()) world_.pause(false);
  refresh_subscriptions();
}

void WorldParticipant::refresh_subscriptions() {
  for (const std::string& name : world_.vehicles()) {
    const std::string topic = "/model/" + name + "/cmd_vel";
    if (!subscribed_.insert(topic).second) continue;
    participant_.subscribe(topic, [this](const lockstep::Publish& m) {
      // An untyped publish on a cmd_vel topic is taken as the Twist it must be.
      const std::string_view type = m.type.empty() ? msgs::kTwist : std::string_view(m.type);
      const Status s = world_.handle_message(m.topic, type, m.payload);
      if (!s) {
        ++rejected_;
        last_rejection_ = s.message;
      }
    });
  }
}

void WorldParticipant::publish_outbox() {
  for (WorldMessage& m : world_.take_messages()) {
    // Messages from before the participant's time (a world that joined late) cannot be
    // published any more: the coordinator would refuse them.
    if (m.stamp < participant_.now()) continue;
    participant_.publish_at(m.stamp, m.topic, std::move(m.payload), std::string(m.type));
  }
}

bool WorldParticipant::run_until(SimTime until) {
  refresh_subscriptions();
  while (world_.sim_time() < until) {
    if (!participant_.ok()) return false;
    const SimTime next = world_.sim_time() + world_.step_size();
    if (!participant_.sleep_until(next)) return false;
    world_.step();
    publish_outbox();
  }
  return participant_.ok();
}

}  // namespace fieldproof::world
