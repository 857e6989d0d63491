// The project's own messages (package fieldproof.msgs: navigation, lifecycle, link state) as plain structs
// with encode/decode to protobuf payloads, so a stack can use them without including protobuf.
// The generated classes are there too, for those who want them:
// #include "fieldproof/msgs/navigation.pb.h" / "fieldproof/msgs/lifecycle.pb.h".
//
//   NavGoal g{"g1", 10.0, -1.0, 0.0};
//   std::string payload = encode(g);                 // type kNavigateToPoseGoal
//   std::optional<NavGoal> back = decode_nav_goal(payload);
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace fieldproof::msgs {

struct NavGoal {
  std::string id;
  double x = 0.0;
  double y = 0.0;
  double yaw = 0.0;  // radians about z; the pose travels as ignition.msgs.Pose
};

enum class NavStatusCode { kUnknown, kAccepted, kRejected, kSucceeded, kAborted, kCanceled };

struct NavStatus {
  std::string id;
  NavStatusCode status = NavStatusCode::kUnknown;
  std::string reason;
};

struct NavFeedback {
  std::string id;
  double distance_remaining = 0.0;
};

enum class LifecycleStateCode { kUnknown, kUnconfigured, kInactive, kActive, kFinalized };

struct Lifecycle {
  std::string node;
  LifecycleStateCode state = LifecycleStateCode::kUnknown;
};

// A vehicle's radio link (docs/network.md): fieldproof.msgs.LinkState on /model/<v>/link_state.
struct LinkStateMsg {
  std::string link;
  bool up = true;
  double quality = 1.0;  // 0 .. 1
  std::string cause;     // why it is down; empty while up
};

std::string encode(const NavGoal& goal);
std::string encode(const NavStatus& status);
std::string encode(const NavFeedback& feedback);
std::string encode(const Lifecycle& state);
std::string encode(const LinkStateMsg& state);  // data is set equal to up

// nullopt when the payload does not parse.
std::optional<NavGoal> decode_nav_goal(std::string_view payload);
std::optional<NavStatus> decode_nav_status(std::string_view payload);
std::optional<NavFeedback> decode_nav_feedback(std::string_view payload);
std::optional<Lifecycle> decode_lifecycle(std::string_view payload);
std::optional<LinkStateMsg> decode_link_state(std::string_view payload);

// "accepted", "succeeded", ... / "active", ...: the lower-case names used in logs and reports.
std::string_view to_string(NavStatusCode code);
std::string_view to_string(LifecycleStateCode code);

}  // namespace fieldproof::msgs
