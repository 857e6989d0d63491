// The world's hand-written encoders (src/world/wire.hpp) give exactly SerializeToString's bytes
// of the equivalent ignition.msgs message: random messages and edge values (zero, -0.0, NaN,
// infinities, denormals, empty and large repeated fields, negative and large times, empty and
// long strings).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "fieldproof/msgs/ign.hpp"
#include "wire.hpp"

namespace fieldproof::world::detail::wire {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Gen {
  std::mt19937_64 rng;
  explicit Gen(uint64_t seed) : rng(seed) {}
  uint64_t u() { return rng(); }
  bool coin(int one_in = 2) { return u() % static_cast<uint64_t>(one_in) == 0; }
  double d() {
    static const double edge[] = {0.0,
                                  -0.0,
                                  kInf,
                                  -kInf,
                                  kNaN,
                                  1.0,
                                  -1.0,
                                  1e-310,
                                  -1e300,
                                  std::numeric_limits<double>::max(),
                                  std::numeric_limits<double>::min(),
                                  0.12,
                                  12.0};
    if (coin(3)) return edge[u() % std::size(edge)];
    return std::uniform_real_distribution<double>(-100.0, 100.0)(rng);
  }
  int64_t sec() {
    static const int64_t edge[] = {0,
                                   1,
                                   -1,
                                   127,
                                   128,
                                   std::numeric_limits<int64_t>::max(),
                                   std::numeric_limits<int64_t>::min()};
    if (coin(2)) return edge[u() % std::size(edge)];
    return static_cast<int64_t>(u()) >> (u() % 64);
  }
  int32_t nsec() {
    static const int32_t edge[] = {0, 1, -1, 999'999'999, std::numeric_limits<int32_t>::min()};
    if (coin(2)) return edge[u() % std::size(edge)];
    return static_cast<int32_t>(u() % 1'000'000'000);
  }
  std::string str() {
    const size_t n = coin(3) ? 0 : (coin(4) ? 200 + u() % 300 : u() % 20);
    std::string s(n, 'a');
    for (char& c : s) c = static_cast<char>('a' + u() % 26);
    return s;
  }
  std::vector<double> doubles() {
    const size_t n = coin(4) ? 0 : (coin(3) ? 5000 + u() % 20000 : u() % 400);
    std::vector<double> v(n);
    for (double& x : v) x = d();
    return v;
  }
};

// What the world does to a protobuf header (msgs::set_stamp with a frame).
void fill_header(ignition::msgs::Header* pb, Header* h, Gen& g, const std::string& frame) {
  h->sec = g.sec();
  h->nsec = g.nsec();
  pb->mutable_stamp()->set_sec(h->sec);
  pb->mutable_stamp()->set_nsec(h->nsec);
  h->has_frame = !g.coin(4);
  h->frame_id = frame;
  if (h->has_frame) {
    auto* e = pb->add_data();
    e->set_key("frame_id");
    e->add_value(frame);
  }
}

void fill_vec3(ignition::msgs::Vector3d* pb, Vec3* v, Gen& g) {
  *v = {g.d(), g.d(), g.d()};
  pb->set_x(v->x);
  pb->set_y(v->y);
  pb->set_z(v->z);
}

void fill_quat(ignition::msgs::Quaternion* pb, Quat* q, Gen& g) {
  *q = {g.d(), g.d(), g.d(), g.d()};
  pb->set_x(q->x);
  pb->set_y(q->y);
  pb->set_z(q->z);
  pb->set_w(q->w);
}

void fill_pose(ignition::msgs::Pose* pb, Pose* p, Gen& g) {
  fill_vec3(pb->mutable_position(), &p->position, g);
  fill_quat(pb->mutable_orientation(), &p->orientation, g);
}

std::string hex(const std::string& s) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s.substr(0, 200)) {
    out += d[c >> 4];
    out += d[c & 15];
  }
  return out;
}

TEST(WorldWire, LaserScanBytesEqualProtobuf) {
  Gen g(14);
  for (int iter = 0; iter < 3000; ++iter) {
    ignition::msgs::LaserScan pb;
    LaserScan m;
    const std::string frame_id = g.str(), frame = g.str();
    fill_header(pb.mutable_header(), &m.header, g, frame_id);
    m.frame = frame;
    pb.set_frame(frame);
    fill_pose(pb.mutable_world_pose(), &m.world_pose, g);
    double* fields[] = {&m.angle_min,          &m.angle_max,          &m.angle_step,
                        &m.range_min,          &m.range_max,          &m.vertical_angle_min,
                        &m.vertical_angle_max, &m.vertical_angle_step};
    for (double* f : fields) *f = g.d();
    pb.set_angle_min(m.angle_min);
    pb.set_angle_max(m.angle_max);
    pb.set_angle_step(m.angle_step);
    pb.set_range_min(m.range_min);
    pb.set_range_max(m.range_max);
    pb.set_vertical_angle_min(m.vertical_angle_min);
    pb.set_vertical_angle_max(m.vertical_angle_max);
    pb.set_vertical_angle_step(m.vertical_angle_step);
    m.count = g.coin(3) ? 0 : static_cast<uint32_t>(g.u());
    m.vertical_count = g.coin(3) ? 0 : static_cast<uint32_t>(g.u() % 300);
    pb.set_count(m.count);
    pb.set_vertical_count(m.vertical_count);
    const std::vector<double> ranges = g.doubles(), intensities = g.doubles();
    for (double r : ranges) pb.add_ranges(r);
    for (double r : intensities) pb.add_intensities(r);
    m.ranges = ranges;
    m.intensities = intensities;
    std::string ours = "stale bytes";  // encode replaces what the buffer held
    ASSERT_TRUE(encode(m, &ours));
    const std::string theirs = msgs::serialize(pb);
    ASSERT_EQ(ours.size(), theirs.size()) << iter;
    ASSERT_EQ(ours, theirs) << iter << "\n" << hex(ours) << "\n" << hex(theirs);
  }
}

TEST(WorldWire, ImuBytesEqualProtobuf) {
  Gen g(7);
  for (int iter = 0; iter < 3000; ++iter) {
    ignition::msgs::IMU pb;
    Imu m;
    const std::string frame_id = g.str(), entity = g.str();
    fill_header(pb.mutable_header(), &m.header, g, frame_id);
    m.entity_name = entity;
    pb.set_entity_name(entity);
    fill_quat(pb.mutable_orientation(), &m.orientation, g);
    fill_vec3(pb.mutable_angular_velocity(), &m.angular_velocity, g);
    fill_vec3(pb.mutable_linear_acceleration(), &m.linear_acceleration, g);
    std::string ours;
    ASSERT_TRUE(encode(m, &ours));
    ASSERT_EQ(ours, msgs::serialize(pb)) << iter;
  }
}

TEST(WorldWire, OdometryBytesEqualProtobuf) {
  Gen g(3);
  for (int iter = 0; iter < 3000; ++iter) {
    ignition::msgs::Odometry pb;
    Odometry m;
    const std::string frame_id = g.str(), child = g.str();
    fill_header(pb.mutable_header(), &m.header, g, frame_id);
    m.has_child = g.coin();
    m.child_frame_id = child;
    if (m.has_child) {
      auto* e = pb.mutable_header()->add_data();
      e->set_key("child_frame_id");
      e->add_value(child);
    }
    fill_pose(pb.mutable_pose(), &m.pose, g);
    m.has_twist = g.coin();
    if (m.has_twist) {
      fill_vec3(pb.mutable_twist()->mutable_linear(), &m.linear, g);
      fill_vec3(pb.mutable_twist()->mutable_angular(), &m.angular, g);
    }
    std::string ours;
    ASSERT_TRUE(encode(m, &ours));
    ASSERT_EQ(ours, msgs::serialize(pb)) << iter;
  }
}

// The all-zero message: only the always-present sub-messages, each empty.
TEST(WorldWire, ZeroScanIsItsEmptySubMessages) {
  LaserScan m;
  std::string ours;
  ASSERT_TRUE(encode(m, &ours));
  ignition::msgs::LaserScan pb;
  pb.mutable_header()->mutable_stamp();
  pb.mutable_world_pose()->mutable_position();
  pb.mutable_world_pose()->mutable_orientation();
  EXPECT_EQ(ours, msgs::serialize(pb));
  EXPECT_EQ(ours, std::string("\x0a\x02\x0a\x00\x1a\x04\x22\x00\x2a\x00", 10));
}

}  // namespace
}  // namespace fieldproof::world::detail::wire
