// Full protobuf type names of the bus messages (what a recorder writes as the schema name and
// what a subscriber checks). No protobuf here.
#pragma once

#include <string_view>

namespace fieldproof::msgs {

inline constexpr std::string_view kClock = "ignition.msgs.Clock";
inline constexpr std::string_view kPoseV = "ignition.msgs.Pose_V";
inline constexpr std::string_view kOdometry = "ignition.msgs.Odometry";
inline constexpr std::string_view kLaserScan = "ignition.msgs.LaserScan";
inline constexpr std::string_view kContacts = "ignition.msgs.Contacts";
inline constexpr std::string_view kTwist = "ignition.msgs.Twist";
inline constexpr std::string_view kImu = "ignition.msgs.IMU";
inline constexpr std::string_view kNavSat = "ignition.msgs.NavSat";
inline constexpr std::string_view kWorldStatistics = "ignition.msgs.WorldStatistics";
inline constexpr std::string_view kWorldControl = "ignition.msgs.WorldControl";
inline constexpr std::string_view kEntityFactory = "ignition.msgs.EntityFactory";
inline constexpr std::string_view kEntity = "ignition.msgs.Entity";
inline constexpr std::string_view kNavigateToPoseGoal = "fieldproof.msgs.NavigateToPoseGoal";
inline constexpr std::string_view kNavigateToPoseStatus = "fieldproof.msgs.NavigateToPoseStatus";
inline constexpr std::string_view kNavigateToPoseFeedback =
    "fieldproof.msgs.NavigateToPoseFeedback";
inline constexpr std::string_view kLifecycleState = "fieldproof.msgs.LifecycleState";
inline constexpr std::string_view kLinkState = "fieldproof.msgs.LinkState";

}  // namespace fieldproof::msgs
