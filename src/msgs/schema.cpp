#include "fieldproof/msgs/schema.hpp"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>

#include <set>
#include <utility>

#include "fieldproof/msgs/ign.hpp"
#include "fieldproof/msgs/lifecycle.pb.h"
#include "fieldproof/msgs/navigation.pb.h"

namespace fieldproof::msgs {
namespace {

using DescriptorFn = const google::protobuf::Descriptor* (*)();

// Naming each descriptor keeps its generated code linked in (a static library drops object files
// nothing references, and with them their registration in the generated pool).
const std::vector<std::pair<std::string_view, DescriptorFn>>& table() {
  static const std::vector<std::pair<std::string_view, DescriptorFn>> kTable = {
      {kClock, &ignition::msgs::Clock::descriptor},
      {kPoseV, &ignition::msgs::Pose_V::descriptor},
      {kOdometry, &ignition::msgs::Odometry::descriptor},
      {kLaserScan, &ignition::msgs::LaserScan::descriptor},
      {kContacts, &ignition::msgs::Contacts::descriptor},
      {kTwist, &ignition::msgs::Twist::descriptor},
      {kImu, &ignition::msgs::IMU::descriptor},
      {kNavSat, &ignition::msgs::NavSat::descriptor},
      {kWorldStatistics, &ignition::msgs::WorldStatistics::descriptor},
      {kWorldControl, &ignition::msgs::WorldControl::descriptor},
      {kNavigateToPoseGoal, &fieldproof::msgs::NavigateToPoseGoal::descriptor},
      {kNavigateToPoseStatus, &fieldproof::msgs::NavigateToPoseStatus::descriptor},
      {kNavigateToPoseFeedback, &fieldproof::msgs::NavigateToPoseFeedback::descriptor},
      {kLifecycleState, &fieldproof::msgs::LifecycleState::descriptor},
  };
  return kTable;
}

// Depth-first, dependencies before dependents, each file once: a reader can build its pool by
// adding the files in order.
void add_file(const google::protobuf::FileDescriptor* file, std::set<std::string>* seen,
              google::protobuf::FileDescriptorSet* out) {
  if (!seen->insert(file->name()).second) return;
  for (int i = 0; i < file->dependency_count(); ++i) add_file(file->dependency(i), seen, out);
  file->CopyTo(out->add_file());
}

}  // namespace

std::optional<std::string> file_descriptor_set(std::string_view full_type_name) {
  const google::protobuf::Descriptor* descriptor = nullptr;
  for (const auto& [name, fn] : table()) {
    if (name == full_type_name) descriptor = fn();
  }
  if (descriptor == nullptr) {
    descriptor = google::protobuf::DescriptorPool::generated_pool()->FindMessageTypeByName(
        std::string(full_type_name));
  }
  if (descriptor == nullptr) return std::nullopt;
  google::protobuf::FileDescriptorSet set;
  std::set<std::string> seen;
  add_file(descriptor->file(), &seen, &set);
  std::string out;
  set.SerializeToString(&out);
  return out;
}

std::vector<std::string> known_types() {
  std::vector<std::string> out;
  for (const auto& entry : table()) out.emplace_back(entry.first);
  return out;
}

}  // namespace fieldproof::msgs
