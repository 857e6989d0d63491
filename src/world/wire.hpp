// The world's frequent sensor messages (LaserScan, IMU, Odometry) written straight into their
// protobuf wire bytes, without building a protobuf message first: the sensor pass spent a tenth of
// its instructions filling messages and serialising them (RepeatedField growth, ByteSizeLong, then
// the copy), and a scan's 360 ranges were stored twice. The bytes are exactly those of
// SerializeToString of the equivalent ignition.msgs message (tests/world/wire_test.cpp compares
// them on random and edge-case messages), which the recorded message stream depends on:
//   * fields in field-number order; a proto3 scalar is left out when it is zero (a double when its
//     bits are all zero, so -0.0 is written, as protobuf does); an empty string is left out, but
//     an element of a repeated string is always written;
//   * a sub-message the world sets (header, stamp, pose, ...) is written even when empty;
//   * repeated doubles are packed (left out when empty); int32 negatives are 10-byte varints.
// Internal to fieldproof::world (no install).
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

namespace fieldproof::world::detail::wire {

inline size_t varint_size(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

static_assert(std::endian::native == std::endian::little, "wire.hpp copies doubles as they lie");

// Writes into a string sized beforehand to the message's exact length (the size_* functions), so
// nothing grows or is copied while encoding; every put_* of a sub-message follows its size_*.
class Writer {
 public:
  Writer(std::string* out, size_t size) : out_(out) {
    out->resize(size);
    p_ = out->data();
  }
  // Whether exactly the announced bytes were written.
  bool complete() const { return p_ == out_->data() + out_->size(); }

  void varint(uint64_t v) {
    while (v >= 0x80) {
      *p_++ = static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    *p_++ = static_cast<char>(v);
  }
  void tag(int field, int wire_type) { varint(static_cast<uint64_t>(field) << 3 | wire_type); }
  // A singular proto3 double (left out when its bits are zero).
  void f_double(int field, double v) {
    uint64_t raw = 0;
    std::memcpy(&raw, &v, sizeof raw);
    if (raw == 0) return;
    tag(field, 1);
    std::memcpy(p_, &raw, 8);
    p_ += 8;
  }
  void f_uint(int field, uint64_t v) {
    if (v == 0) return;
    tag(field, 0);
    varint(v);
  }
  // int32 and int64: negatives sign-extended to 64 bits (10 bytes), as protobuf writes them.
  void f_int(int field, int64_t v) { f_uint(field, static_cast<uint64_t>(v)); }
  void f_string(int field, std::string_view s) {
    if (s.empty()) return;
    f_bytes_always(field, s);
  }
  void f_bytes_always(int field, std::string_view s) {
    tag(field, 2);
    varint(s.size());
    std::memcpy(p_, s.data(), s.size());
    p_ += s.size();
  }
  // A length-delimited field's header (the caller writes `size` bytes after it).
  void f_len(int field, size_t size) {
    tag(field, 2);
    varint(size);
  }
  void f_packed_doubles(int field, std::span<const double> v) {
    if (v.empty()) return;
    f_len(field, v.size() * 8);
    std::memcpy(p_, v.data(), v.size() * 8);
    p_ += v.size() * 8;
  }

 private:
  std::string* out_;
  char* p_ = nullptr;
};

inline size_t double_size(double v) {
  uint64_t raw = 0;
  std::memcpy(&raw, &v, sizeof raw);
  return raw == 0 ? 0 : 9;  // tags of fields 1..15 are one byte
}
inline size_t uint_size(uint64_t v) { return v == 0 ? 0 : 1 + varint_size(v); }
inline size_t string_size(std::string_view s) {
  return s.empty() ? 0 : 1 + varint_size(s.size()) + s.size();
}
inline size_t len_size(size_t inner) { return 1 + varint_size(inner) + inner; }
inline size_t packed_size(std::span<const double> v) {
  return v.empty() ? 0 : len_size(8 * v.size());
}

// ignition.msgs.Header with its stamp (always present) and, when `frame_id` is given, one data
// entry {key: "frame_id", value: [frame_id]} (msgs::set_stamp(header, t, frame)).
struct Header {
  int64_t sec = 0;
  int32_t nsec = 0;
  bool has_frame = false;
  std::string_view frame_id;
};
inline size_t time_size(int64_t sec, int32_t nsec) {
  return uint_size(static_cast<uint64_t>(sec)) + uint_size(static_cast<uint64_t>(int64_t{nsec}));
}
inline size_t map_size(const Header& h) {
  return string_size("frame_id") + len_size(h.frame_id.size());
}
inline size_t header_size(const Header& h) {
  return len_size(time_size(h.sec, h.nsec)) + (h.has_frame ? len_size(map_size(h)) : 0);
}
inline void put_header(Writer& w, const Header& h) {
  w.f_len(1, time_size(h.sec, h.nsec));
  w.f_int(1, h.sec);
  w.f_int(2, h.nsec);
  if (h.has_frame) {
    w.f_len(2, map_size(h));
    w.f_string(1, "frame_id");
    w.f_bytes_always(2, h.frame_id);
  }
}

// Vector3d and Quaternion without their (never set) headers.
struct Vec3 {
  double x = 0, y = 0, z = 0;
};
struct Quat {
  double x = 0, y = 0, z = 0, w = 0;
};
inline size_t vec3_size(const Vec3& v) {
  return double_size(v.x) + double_size(v.y) + double_size(v.z);
}
inline void put_vec3(Writer& w, const Vec3& v) {
  w.f_double(2, v.x);
  w.f_double(3, v.y);
  w.f_double(4, v.z);
}
inline size_t quat_size(const Quat& q) { return vec3_size({q.x, q.y, q.z}) + double_size(q.w); }
inline void put_quat(Writer& w, const Quat& q) {
  put_vec3(w, {q.x, q.y, q.z});
  w.f_double(5, q.w);
}

// ignition.msgs.Pose with position and orientation present, no header, name or id.
struct Pose {
  Vec3 position;
  Quat orientation;
};
inline size_t pose_size(const Pose& p) {
  return len_size(vec3_size(p.position)) + len_size(quat_size(p.orientation));
}
inline void put_pose(Writer& w, const Pose& p) {
  w.f_len(4, vec3_size(p.position));
  put_vec3(w, p.position);
  w.f_len(5, quat_size(p.orientation));
  put_quat(w, p.orientation);
}

// ignition.msgs.LaserScan with header and world_pose present.
struct LaserScan {
  Header header;
  std::string_view frame;
  Pose world_pose;
  double angle_min = 0, angle_max = 0, angle_step = 0, range_min = 0, range_max = 0;
  uint32_t count = 0;
  double vertical_angle_min = 0, vertical_angle_max = 0, vertical_angle_step = 0;
  uint32_t vertical_count = 0;
  std::span<const double> ranges;
  std::span<const double> intensities;
};
inline size_t size(const LaserScan& m) {
  return len_size(header_size(m.header)) + string_size(m.frame) +
         len_size(pose_size(m.world_pose)) + double_size(m.angle_min) + double_size(m.angle_max) +
         double_size(m.angle_step) + double_size(m.range_min) + double_size(m.range_max) +
         uint_size(m.count) + double_size(m.vertical_angle_min) +
         double_size(m.vertical_angle_max) + double_size(m.vertical_angle_step) +
         uint_size(m.vertical_count) + packed_size(m.ranges) + packed_size(m.intensities);
}
// Replaces *out with the encoding; false only if the sizes and the writes disagree (a bug).
[[nodiscard]] inline bool encode(const LaserScan& m, std::string* out) {
  const size_t hs = header_size(m.header), ps = pose_size(m.world_pose);
  Writer w(out, size(m));
  w.f_len(1, hs);
  put_header(w, m.header);
  w.f_string(2, m.frame);
  w.f_len(3, ps);
  put_pose(w, m.world_pose);
  w.f_double(4, m.angle_min);
  w.f_double(5, m.angle_max);
  w.f_double(6, m.angle_step);
  w.f_double(7, m.range_min);
  w.f_double(8, m.range_max);
  w.f_uint(9, m.count);
  w.f_double(10, m.vertical_angle_min);
  w.f_double(11, m.vertical_angle_max);
  w.f_double(12, m.vertical_angle_step);
  w.f_uint(13, m.vertical_count);
  w.f_packed_doubles(14, m.ranges);
  w.f_packed_doubles(15, m.intensities);
  return w.complete();
}

// ignition.msgs.IMU with header, orientation, angular_velocity and linear_acceleration present.
struct Imu {
  Header header;
  std::string_view entity_name;
  Quat orientation;
  Vec3 angular_velocity, linear_acceleration;
};
inline size_t size(const Imu& m) {
  return len_size(header_size(m.header)) + string_size(m.entity_name) +
         len_size(quat_size(m.orientation)) + len_size(vec3_size(m.angular_velocity)) +
         len_size(vec3_size(m.linear_acceleration));
}
[[nodiscard]] inline bool encode(const Imu& m, std::string* out) {
  const size_t hs = header_size(m.header);
  Writer w(out, size(m));
  w.f_len(1, hs);
  put_header(w, m.header);
  w.f_string(2, m.entity_name);
  w.f_len(3, quat_size(m.orientation));
  put_quat(w, m.orientation);
  w.f_len(4, vec3_size(m.angular_velocity));
  put_vec3(w, m.angular_velocity);
  w.f_len(5, vec3_size(m.linear_acceleration));
  put_vec3(w, m.linear_acceleration);
  return w.complete();
}

// ignition.msgs.Odometry with header and pose present; the header may carry a second data entry
// {key: "child_frame_id", value: [child]} after frame_id; the twist (linear and angular present)
// only when has_twist.
struct Odometry {
  Header header;
  bool has_child = false;
  std::string_view child_frame_id;
  Pose pose;
  bool has_twist = false;
  Vec3 linear, angular;
};
inline size_t child_map_size(const Odometry& m) {
  return string_size("child_frame_id") + len_size(m.child_frame_id.size());
}
inline size_t twist_size(const Odometry& m) {
  return len_size(vec3_size(m.linear)) + len_size(vec3_size(m.angular));
}
inline size_t size(const Odometry& m) {
  const size_t hs = header_size(m.header) + (m.has_child ? len_size(child_map_size(m)) : 0);
  return len_size(hs) + len_size(pose_size(m.pose)) + (m.has_twist ? len_size(twist_size(m)) : 0);
}
[[nodiscard]] inline bool encode(const Odometry& m, std::string* out) {
  const size_t child_map = child_map_size(m);
  const size_t hs = header_size(m.header) + (m.has_child ? len_size(child_map) : 0);
  Writer w(out, size(m));
  w.f_len(1, hs);
  put_header(w, m.header);
  if (m.has_child) {
    w.f_len(2, child_map);
    w.f_string(1, "child_frame_id");
    w.f_bytes_always(2, m.child_frame_id);
  }
  w.f_len(2, pose_size(m.pose));
  put_pose(w, m.pose);
  if (m.has_twist) {
    w.f_len(3, twist_size(m));
    w.f_len(2, vec3_size(m.linear));
    put_vec3(w, m.linear);
    w.f_len(3, vec3_size(m.angular));
    put_vec3(w, m.angular);
  }
  return w.complete();
}

}  // namespace fieldproof::world::detail::wire
