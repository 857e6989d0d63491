// Thin helpers over the ignition-msgs protobufs that travel on the bus: stamps from SimTime,
// serialize to and parse from std::string payloads. This header pulls in protobuf; include it
// only where messages are built or read (types.hpp and stamp.hpp are protobuf-free).
//
//   ignition::msgs::Twist cmd;
//   cmd.mutable_linear()->set_x(0.5);
//   fieldproof::msgs::set_stamp(cmd.mutable_header(), now);
//   std::string payload = fieldproof::msgs::serialize(cmd);
//   auto back = fieldproof::msgs::parse<ignition::msgs::Twist>(payload);   // nullopt if garbage
#pragma once

#include <ignition/msgs/clock.pb.h>
#include <ignition/msgs/contacts.pb.h>
#include <ignition/msgs/header.pb.h>
#include <ignition/msgs/imu.pb.h>
#include <ignition/msgs/laserscan.pb.h>
#include <ignition/msgs/navsat.pb.h>
#include <ignition/msgs/odometry.pb.h>
#include <ignition/msgs/pose_v.pb.h>
#include <ignition/msgs/time.pb.h>
#include <ignition/msgs/twist.pb.h>
#include <ignition/msgs/world_control.pb.h>
#include <ignition/msgs/world_stats.pb.h>

#include <optional>
#include <string>
#include <string_view>

#include "fieldproof/msgs/stamp.hpp"
#include "fieldproof/msgs/types.hpp"
#include "fieldproof/time/duration.hpp"

namespace fieldproof::msgs {

ignition::msgs::Time to_time(SimTime t);
SimTime from_time(const ignition::msgs::Time& t);

void set_stamp(ignition::msgs::Header* header, SimTime t);
// Sets the stamp and the header's "frame_id" entry (Gazebo's convention).
void set_stamp(ignition::msgs::Header* header, SimTime t, std::string_view frame_id);
SimTime stamp_of(const ignition::msgs::Header& header);
// The value of a header data key ("frame_id"), empty when absent.
std::string header_value(const ignition::msgs::Header& header, std::string_view key);

// Planar pose helpers: yaw about z only.
void set_planar_pose(ignition::msgs::Pose* pose, double x, double y, double yaw);
double yaw_of(const ignition::msgs::Quaternion& q);

std::string serialize(const google::protobuf::MessageLite& message);

// nullopt when the payload is not a valid encoding of T.
template <typename T>
std::optional<T> parse(std::string_view payload) {
  T message;
  if (!message.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
    return std::nullopt;
  }
  return message;
}

// The full type name of T ("ignition.msgs.LaserScan").
template <typename T>
std::string type_name() {
  return T::descriptor()->full_name();
}

}  // namespace fieldproof::msgs
