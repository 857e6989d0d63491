// The stack on the bus: UgvNavStack plus the vehicle's topics and the payload codec
// (ignition.msgs Odometry / Pose_V / LaserScan / Twist, fieldproof.msgs navigation and
// lifecycle). Both hosts — the in-process plugin and the process fieldproof-ugv-nav — are this
// class and a transport. Protobuf stays in the .cpp.
//
// Topics for vehicle v (world w):
//   in   /model/v/odometry (ignition.msgs.Odometry) — or /world/w/pose/info (Pose_V, the entry
//        named v) with pose_source ground_truth
//        /model/v/scan (ignition.msgs.LaserScan)
//        /model/v/navigate_to_pose/goal (fieldproof.msgs.NavigateToPoseGoal)
//        /model/v/link_state (fieldproof.msgs.LinkState: stands still while the link is down)
//   out  /model/v/cmd_vel (ignition.msgs.Twist)
//        /model/v/navigate_to_pose/status (fieldproof.msgs.NavigateToPoseStatus)
//        /model/v/navigate_to_pose/feedback (fieldproof.msgs.NavigateToPoseFeedback)
//        /model/v/lifecycle (fieldproof.msgs.LifecycleState, one per node per transition)
//
//   auto node = UgvNavNode::create(options, grid, wall_now).value();  // or its status()
//   for (auto& t : node->subscriptions()) bus.subscribe(t, ...);
//   node->deliver({topic, stamp, type, payload});      // "" or why it was refused
//   node->tick(now);
//   for (BusMessage& m : node->take_messages()) bus.publish(m);
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "fieldproof/stacks/ugv_nav_stack.hpp"
#include "fieldproof/time/duration.hpp"
#include "fieldproof/world/occupancy_grid.hpp"

namespace fieldproof::stacks {

struct BusMessage {
  std::string topic;
  SimTime stamp;
  std::string type;     // full protobuf type name
  std::string payload;  // protobuf encoding
};

struct UgvNavTopics {
  std::string pose;
  std::string scan;
  std::string goal;
  std::string cmd_vel;
  std::string status;
  std::string feedback;
  std::string lifecycle;
  std::string link_state;
};

UgvNavTopics ugv_nav_topics(const UgvNavOptions& options);

class UgvNavNode {
 public:
  // The node over a new UgvNavStack; its Status when the stack cannot be built.
  static Result<std::unique_ptr<UgvNavNode>> create(UgvNavOptions options,
                                                    const world::OccupancyGrid& static_map,
                                                    WallNow wall_now);

  // Topics to subscribe to, in a fixed order: pose, scan, goal, link_state.
  std::vector<std::string> subscriptions() const;
  const UgvNavTopics& topics() const { return topics_; }

  // Decodes and hands a message to the stack. Ok when taken (a Pose_V without this vehicle is
  // silently skipped), kInvalidArgument naming the topic when the topic is not subscribed or the
  // payload does not parse.
  [[nodiscard]] Status deliver(const BusMessage& message);

  void tick(SimTime now) { stack_->tick(now); }
  SimTime next_tick() const { return stack_->next_tick(); }
  void check_wall() { stack_->check_wall(); }

  // The stack's outbox, encoded, in production order.
  std::vector<BusMessage> take_messages();

  UgvNavStack& stack() { return *stack_; }

 private:
  UgvNavNode(std::unique_ptr<UgvNavStack> stack, UgvNavTopics topics);
  std::unique_ptr<UgvNavStack> stack_;
  UgvNavTopics topics_;
};

}  // namespace fieldproof::stacks
