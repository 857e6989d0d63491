#include <cmath>

#include "fieldproof/msgs/ign.hpp"

namespace fieldproof::msgs {

ignition::msgs::Time to_time(SimTime t) {
  const SecNsec s = to_sec_nsec(t);
  ignition::msgs::Time out;
  out.set_sec(s.sec);
  out.set_nsec(s.nsec);
  return out;
}

SimTime from_time(const ignition::msgs::Time& t) { return from_sec_nsec(t.sec(), t.nsec()); }

void set_stamp(ignition::msgs::Header* header, SimTime t) {
  const SecNsec s = to_sec_nsec(t);
  header->mutable_stamp()->set_sec(s.sec);
  header->mutable_stamp()->set_nsec(s.nsec);
}

void set_stamp(ignition::msgs::Header* header, SimTime t, std::string_view frame_id) {
  set_stamp(header, t);
  for (auto& entry : *header->mutable_data()) {
    if (entry.key() == "frame_id") {
      entry.clear_value();
      entry.add_value(std::string(frame_id));
      return;
    }
  }
  auto* entry = header->add_data();
  entry->set_key("frame_id");
  entry->add_value(std::string(frame_id));
}

SimTime stamp_of(const ignition::msgs::Header& header) { return from_time(header.stamp()); }

std::string header_value(const ignition::msgs::Header& header, std::string_view key) {
  for (const auto& entry : header.data()) {
    if (entry.key() == key && entry.value_size() > 0) return entry.value(0);
  }
  return {};
}

void set_planar_pose(ignition::msgs::Pose* pose, double x, double y, double yaw) {
  pose->mutable_position()->set_x(x);
  pose->mutable_position()->set_y(y);
  pose->mutable_position()->set_z(0.0);
  auto* q = pose->mutable_orientation();
  q->set_w(std::cos(yaw / 2));
  q->set_x(0.0);
  q->set_y(0.0);
  q->set_z(std::sin(yaw / 2));
}

double yaw_of(const ignition::msgs::Quaternion& q) {
  return std::atan2(2.0 * (q.w() * q.z() + q.x() * q.y()),
                    1.0 - 2.0 * (q.y() * q.y() + q.z() * q.z()));
}

std::string serialize(const google::protobuf::MessageLite& message) {
  std::string out;
  message.SerializeToString(&out);
  return out;
}

}  // namespace fieldproof::msgs
