// Helpers shared by the world tests.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "fieldproof/world/world.hpp"

namespace fieldproof::world::testing {

inline std::string depot_path() { return "examples/worlds/depot.sdf"; }

// A temporary file holding `text`, removed with the object.
class TempFile {
 public:
  TempFile(const std::string& name, const std::string& text)
      : path_(std::string(::testing::TempDir()) + name) {
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// FNV-1a over the whole stream: topic, stamp and payload of each message in order.
inline uint64_t hash_messages(const std::vector<WorldMessage>& ms, std::string_view only = "") {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](const void* p, size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  };
  for (const auto& m : ms) {
    if (!only.empty() && m.topic.find(only) == std::string::npos) continue;
    mix(m.topic.data(), m.topic.size());
    const int64_t s = m.stamp.ns();
    mix(&s, sizeof s);
    mix(m.payload.data(), m.payload.size());
  }
  return h;
}

inline std::vector<WorldMessage> on_topic(const std::vector<WorldMessage>& ms,
                                          const std::string& topic) {
  std::vector<WorldMessage> out;
  for (const auto& m : ms)
    if (m.topic == topic) out.push_back(m);
  return out;
}

inline WorldOptions seeded(uint64_t seed) {
  WorldOptions o;
  o.seed = seed;
  return o;
}

// A UGV without noise or acceleration limits: for closed-form checks.
inline UgvParams ideal_ugv() {
  UgvParams p;
  p.max_linear_accel = std::numeric_limits<double>::infinity();
  p.max_angular_accel = std::numeric_limits<double>::infinity();
  p.lidar_noise_stddev = 0.0;
  p.odometry_linear_noise = p.odometry_angular_noise = 0.0;
  p.odometry_linear_scale_stddev = p.odometry_angular_scale_stddev = 0.0;
  p.imu_angular_velocity_stddev = p.imu_linear_acceleration_stddev = 0.0;
  return p;
}

inline StaticShape box_shape(double x, double y, double sx, double sy, double yaw = 0.0) {
  StaticShape s;
  s.type = ShapeType::kBox;
  s.pose = Pose2D{x, y, yaw};
  s.size_x = sx;
  s.size_y = sy;
  s.z_max = 1.0;
  return s;
}

inline StaticShape disc_shape(double x, double y, double r) {
  StaticShape s;
  s.type = ShapeType::kCylinder;
  s.pose = Pose2D{x, y, 0};
  s.radius = r;
  s.z_max = 1.0;
  return s;
}

}  // namespace fieldproof::world::testing
