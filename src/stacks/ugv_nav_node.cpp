#include "fieldproof/stacks/ugv_nav_node.hpp"

#include <cmath>

#include "fieldproof/msgs/ign.hpp"
#include "fieldproof/msgs/types.hpp"
#include "stacks/nav_wire.hpp"

namespace fieldproof::stacks {

UgvNavTopics ugv_nav_topics(const UgvNavOptions& o) {
  const std::string m = "/model/" + o.vehicle;
  UgvNavTopics t;
  t.pose = o.pose_source == PoseSource::kGroundTruth ? "/world/" + o.world + "/pose/info"
                                                     : m + "/odometry";
  t.scan = m + "/scan";
  t.goal = m + "/navigate_to_pose/goal";
  t.cmd_vel = m + "/cmd_vel";
  t.status = m + "/navigate_to_pose/status";
  t.feedback = m + "/navigate_to_pose/feedback";
  t.lifecycle = m + "/lifecycle";
  t.link_state = m + "/link_state";
  return t;
}

Result<std::unique_ptr<UgvNavNode>> UgvNavNode::create(UgvNavOptions options,
                                                       const world::OccupancyGrid& static_map,
                                                       WallNow wall_now) {
  UgvNavTopics topics = ugv_nav_topics(options);
  auto stack = UgvNavStack::create(std::move(options), static_map, std::move(wall_now));
  if (!stack.ok()) return stack.status();
  return std::unique_ptr<UgvNavNode>(new UgvNavNode(std::move(stack).value(), std::move(topics)));
}

UgvNavNode::UgvNavNode(std::unique_ptr<UgvNavStack> stack, UgvNavTopics topics)
    : stack_(std::move(stack)), topics_(std::move(topics)) {}

std::vector<std::string> UgvNavNode::subscriptions() const {
  return {topics_.pose, topics_.scan, topics_.goal, topics_.link_state};
}

Status UgvNavNode::deliver(const BusMessage& m) {
  const auto bad = [&](std::string_view what) {
    return Status(StatusCode::kInvalidArgument,
                  "ugv_nav: " + m.topic + ": the payload is not a valid " + std::string(what));
  };
  if (m.topic == topics_.pose) {
    if (stack_->options().pose_source == PoseSource::kGroundTruth) {
      const auto poses = msgs::parse<ignition::msgs::Pose_V>(m.payload);
      if (!poses) return bad(msgs::kPoseV);
      for (const auto& p : poses->pose()) {
        if (p.name() != stack_->options().vehicle) continue;
        stack_->on_pose(m.stamp,
                        {p.position().x(), p.position().y(), msgs::yaw_of(p.orientation())});
        break;
      }
      return Status();
    }
    const auto odom = msgs::parse<ignition::msgs::Odometry>(m.payload);
    if (!odom) return bad(msgs::kOdometry);
    const auto& p = odom->pose();
    stack_->on_pose(m.stamp, {p.position().x(), p.position().y(), msgs::yaw_of(p.orientation())});
    return Status();
  }
  if (m.topic == topics_.scan) {
    const auto scan = msgs::parse<ignition::msgs::LaserScan>(m.payload);
    if (!scan) return bad(msgs::kLaserScan);
    LaserScan s;
    s.angle_min = scan->angle_min();
    s.angle_increment = scan->angle_step();
    s.range_min = scan->range_min();
    s.range_max = scan->range_max();
    s.ranges.assign(scan->ranges().begin(), scan->ranges().end());
    stack_->on_scan(m.stamp, s);
    return Status();
  }
  if (m.topic == topics_.goal) {
    const auto g = wire::decode_goal(m.payload);
    if (!g) return bad(msgs::kNavigateToPoseGoal);
    stack_->on_goal(m.stamp, *g);
    return Status();
  }
  if (m.topic == topics_.link_state) {
    const auto up = wire::decode_link_up(m.payload);
    if (!up) return bad(msgs::kLinkState);
    stack_->on_link(m.stamp, *up);
    return Status();
  }
  return Status(StatusCode::kInvalidArgument, "ugv_nav: no subscription to topic " + m.topic);
}

std::vector<BusMessage> UgvNavNode::take_messages() {
  std::vector<BusMessage> out;
  for (StackOutput& o : stack_->take_outbox()) {
    BusMessage b;
    b.stamp = o.stamp;
    if (const CmdVel* c = std::get_if<CmdVel>(&o.message)) {
      ignition::msgs::Twist t;
      msgs::set_stamp(t.mutable_header(), o.stamp);
      t.mutable_linear()->set_x(c->linear);
      t.mutable_angular()->set_z(c->angular);
      b = {topics_.cmd_vel, o.stamp, std::string(msgs::kTwist), msgs::serialize(t)};
    } else if (const NavStatus* s = std::get_if<NavStatus>(&o.message)) {
      b = {topics_.status, o.stamp, std::string(msgs::kNavigateToPoseStatus),
           wire::encode_status(*s)};
    } else if (const NavFeedback* f = std::get_if<NavFeedback>(&o.message)) {
      b = {topics_.feedback, o.stamp, std::string(msgs::kNavigateToPoseFeedback),
           wire::encode_feedback(*f)};
    } else if (const LifecycleTransition* l = std::get_if<LifecycleTransition>(&o.message)) {
      b = {topics_.lifecycle, o.stamp, std::string(msgs::kLifecycleState),
           wire::encode_lifecycle(*l)};
    }
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace fieldproof::stacks
