#include "fieldproof/msgs/navigation.hpp"

#include "fieldproof/msgs/ign.hpp"
#include "fieldproof/msgs/lifecycle.pb.h"
#include "fieldproof/msgs/link.pb.h"
#include "fieldproof/msgs/navigation.pb.h"

namespace fieldproof::msgs {
namespace {

template <typename T>
std::optional<T> parse_pb(std::string_view payload) {
  T message;
  if (!message.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    return std::nullopt;
  }
  return message;
}

NavStatusCode from_pb(NavigateToPoseStatus::Status s) {
  switch (s) {
    case NavigateToPoseStatus::ACCEPTED:
      return NavStatusCode::kAccepted;
    case NavigateToPoseStatus::REJECTED:
      return NavStatusCode::kRejected;
    case NavigateToPoseStatus::SUCCEEDED:
      return NavStatusCode::kSucceeded;
    case NavigateToPoseStatus::ABORTED:
      return NavStatusCode::kAborted;
    case NavigateToPoseStatus::CANCELED:
      return NavStatusCode::kCanceled;
    default:
      return NavStatusCode::kUnknown;
  }
}

NavigateToPoseStatus::Status to_pb(NavStatusCode s) {
  switch (s) {
    case NavStatusCode::kAccepted:
      return NavigateToPoseStatus::ACCEPTED;
    case NavStatusCode::kRejected:
      return NavigateToPoseStatus::REJECTED;
    case NavStatusCode::kSucceeded:
      return NavigateToPoseStatus::SUCCEEDED;
    case NavStatusCode::kAborted:
      return NavigateToPoseStatus::ABORTED;
    case NavStatusCode::kCanceled:
      return NavigateToPoseStatus::CANCELED;
    case NavStatusCode::kUnknown:
      break;
  }
  return NavigateToPoseStatus::UNKNOWN;
}

LifecycleStateCode from_pb(LifecycleState::State s) {
  switch (s) {
    case LifecycleState::UNCONFIGURED:
      return LifecycleStateCode::kUnconfigured;
    case LifecycleState::INACTIVE:
      return LifecycleStateCode::kInactive;
    case LifecycleState::ACTIVE:
      return LifecycleStateCode::kActive;
    case LifecycleState::FINALIZED:
      return LifecycleStateCode::kFinalized;
    default:
      return LifecycleStateCode::kUnknown;
  }
}

LifecycleState::State to_pb(LifecycleStateCode s) {
  switch (s) {
    case LifecycleStateCode::kUnconfigured:
      return LifecycleState::UNCONFIGURED;
    case LifecycleStateCode::kInactive:
      return LifecycleState::INACTIVE;
    case LifecycleStateCode::kActive:
      return LifecycleState::ACTIVE;
    case LifecycleStateCode::kFinalized:
      return LifecycleState::FINALIZED;
    case LifecycleStateCode::kUnknown:
      break;
  }
  return LifecycleState::UNKNOWN;
}

}  // namespace

std::string encode(const NavGoal& goal) {
  NavigateToPoseGoal m;
  m.set_id(goal.id);
  set_planar_pose(m.mutable_pose(), goal.x, goal.y, goal.yaw);
  return serialize(m);
}

std::string encode(const NavStatus& status) {
  NavigateToPoseStatus m;
  m.set_id(status.id);
  m.set_status(to_pb(status.status));
  m.set_reason(status.reason);
  return serialize(m);
}

std::string encode(const NavFeedback& feedback) {
  NavigateToPoseFeedback m;
  m.set_id(feedback.id);
  m.set_distance_remaining(feedback.distance_remaining);
  return serialize(m);
}

std::string encode(const Lifecycle& state) {
  LifecycleState m;
  m.set_node(state.node);
  m.set_state(to_pb(state.state));
  return serialize(m);
}

std::string encode(const LinkStateMsg& state) {
  LinkState m;
  m.set_link(state.link);
  m.set_up(state.up);
  m.set_quality(state.quality);
  m.set_data(state.up);
  m.set_cause(state.cause);
  return serialize(m);
}

std::optional<LinkStateMsg> decode_link_state(std::string_view payload) {
  auto m = parse_pb<LinkState>(payload);
  if (!m) return std::nullopt;
  return LinkStateMsg{m->link(), m->up(), m->quality(), m->cause()};
}

std::optional<NavGoal> decode_nav_goal(std::string_view payload) {
  auto m = parse_pb<NavigateToPoseGoal>(payload);
  if (!m) return std::nullopt;
  return NavGoal{m->id(), m->pose().position().x(), m->pose().position().y(),
                 yaw_of(m->pose().orientation())};
}

std::optional<NavStatus> decode_nav_status(std::string_view payload) {
  auto m = parse_pb<NavigateToPoseStatus>(payload);
  if (!m) return std::nullopt;
  return NavStatus{m->id(), from_pb(m->status()), m->reason()};
}

std::optional<NavFeedback> decode_nav_feedback(std::string_view payload) {
  auto m = parse_pb<NavigateToPoseFeedback>(payload);
  if (!m) return std::nullopt;
  return NavFeedback{m->id(), m->distance_remaining()};
}

std::optional<Lifecycle> decode_lifecycle(std::string_view payload) {
  auto m = parse_pb<LifecycleState>(payload);
  if (!m) return std::nullopt;
  return Lifecycle{m->node(), from_pb(m->state())};
}

std::string_view to_string(NavStatusCode code) {
  switch (code) {
    case NavStatusCode::kAccepted:
      return "accepted";
    case NavStatusCode::kRejected:
      return "rejected";
    case NavStatusCode::kSucceeded:
      return "succeeded";
    case NavStatusCode::kAborted:
      return "aborted";
    case NavStatusCode::kCanceled:
      return "canceled";
    case NavStatusCode::kUnknown:
      break;
  }
  return "unknown";
}

std::string_view to_string(LifecycleStateCode code) {
  switch (code) {
    case LifecycleStateCode::kUnconfigured:
      return "unconfigured";
    case LifecycleStateCode::kInactive:
      return "inactive";
    case LifecycleStateCode::kActive:
      return "active";
    case LifecycleStateCode::kFinalized:
      return "finalized";
    case LifecycleStateCode::kUnknown:
      break;
  }
  return "unknown";
}

}  // namespace fieldproof::msgs
