#include "fieldproof/world/world.hpp"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <numbers>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>

#include <ignition/msgs/entity.pb.h>
#include <ignition/msgs/entity_factory.pb.h>

#include "collide.hpp"
#include "fieldproof/msgs/ign.hpp"
#include "fieldproof/time/random_source.hpp"
#include "fieldproof/util/example_defaults.hpp"
#include "fieldproof/util/mutex.hpp"
#include "fieldproof/world/robot_model.hpp"
#include "include_check.hpp"
#include "ray_span.hpp"
#include "sdf_loader.hpp"
#include "wire.hpp"

namespace fieldproof::world {

using detail::Aabb;
using detail::Circle;
using detail::Collider;
using detail::kInf;
using detail::Obb;
namespace wire = detail::wire;

namespace {

constexpr double kPi = std::numbers::pi;
constexpr double kGravity = 9.80665;

// The first time on the period grid strictly after `now`.
SimTime next_on_grid(SimTime now, Duration period) {
  const int64_t p = period.ns();
  int64_t k = now.ns() / p;
  if (now.ns() < 0 && now.ns() % p != 0) --k;
  return SimTime::from_ns((k + 1) * p);
}

// Whether a periodic output is due at `now`; advances `next` past now when it is.
bool due(SimTime now, SimTime* next, Duration period) {
  if (now < *next) return false;
  while (*next <= now) *next += period;
  return true;
}

bool finite(double v) { return std::isfinite(v); }
bool finite(const Pose2D& p) { return finite(p.x) && finite(p.y) && finite(p.yaw); }

Status check_name(const std::string& name) {
  if (name.empty()) return Status(StatusCode::kInvalidArgument, "a model name must not be empty");
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) {
      return Status(StatusCode::kInvalidArgument,
                    "model name '" + name +
                        "' may hold only letters, digits, '_', '-' and '.' (it is used in "
                        "topic names)");
    }
  }
  return Status();
}

Status check_params(const UgvParams& p) {
  const double values[] = {p.length,
                           p.width,
                           p.height,
                           p.max_linear,
                           p.max_angular,
                           p.lidar_range_min,
                           p.lidar_range_max,
                           p.lidar_noise_stddev,
                           p.odometry_linear_noise,
                           p.odometry_angular_noise,
                           p.odometry_linear_scale_stddev,
                           p.odometry_angular_scale_stddev,
                           p.imu_angular_velocity_stddev,
                           p.imu_linear_acceleration_stddev};
  for (double v : values) {
    if (!finite(v) || v < 0)
      return Status(StatusCode::kInvalidArgument, "UGV parameters must be finite and >= 0");
  }
  if (std::isnan(p.max_linear_accel) || std::isnan(p.max_angular_accel) ||
      p.max_linear_accel <= 0 || p.max_angular_accel <= 0) {
    return Status(StatusCode::kInvalidArgument,
                  "UGV acceleration limits must be > 0 (+inf for none)");
  }
  if (p.length <= 0 || p.width <= 0)
    return Status(StatusCode::kInvalidArgument, "UGV footprint must be > 0");
  if (p.lidar && (p.lidar_rays < 1 || p.lidar_rays > 100000 ||
                  p.lidar_range_max <= p.lidar_range_min || p.lidar_period.ns() <= 0)) {
    return Status(StatusCode::kInvalidArgument,
                  "UGV lidar: rays in [1, 100000], range_max > range_min, period > 0");
  }
  if (p.lidar && !p.lidar_full_turn &&
      !(finite(p.lidar_angle_min) && finite(p.lidar_angle_max) &&
        p.lidar_angle_min <= p.lidar_angle_max)) {
    return Status(StatusCode::kInvalidArgument,
                  "lidar angles must be finite with angle_min <= angle_max");
  }
  if (p.odometry_period.ns() <= 0 || p.imu_period.ns() <= 0) {
    return Status(StatusCode::kInvalidArgument, "UGV odometry and IMU periods must be > 0");
  }
  if (p.navsat && (p.navsat_period.ns() <= 0 || !finite(p.navsat_horizontal_stddev) ||
                   !finite(p.navsat_vertical_stddev) || !finite(p.navsat_velocity_stddev) ||
                   p.navsat_horizontal_stddev < 0 || p.navsat_vertical_stddev < 0 ||
                   p.navsat_velocity_stddev < 0)) {
    return Status(StatusCode::kInvalidArgument, "navsat: period > 0 and noise finite and >= 0");
  }
  return Status();
}

// The pose after driving an arc for dt, and its chassis. (c0, s0) are cos and sin of p.yaw: the
// current chassis box keeps them, and reusing them (and the new heading's, when it needs no
// wrapping) spares two of three sincos calls a step with exactly the same results.
Pose2D arc(const Pose2D& p, double c0, double s0, double v, double w, double dt, double* c1,
           double* s1) {
  const double dth = w * dt;
  Pose2D out;
  const double yaw = p.yaw + dth;
  out.yaw = detail::normalize_angle(yaw);
  if (std::abs(dth) < 1e-9) {
    const double mid = p.yaw + dth / 2;
    out.x = p.x + v * dt * std::cos(mid);
    out.y = p.y + v * dt * std::sin(mid);
    *c1 = std::cos(out.yaw);
    *s1 = std::sin(out.yaw);
  } else {
    const double r = v / w;
    const double cy = std::cos(yaw), sy = std::sin(yaw);
    out.x = p.x + r * (sy - s0);
    out.y = p.y - r * (cy - c0);
    if (out.yaw == yaw) {
      *c1 = cy;
      *s1 = sy;
    } else {
      *c1 = std::cos(out.yaw);
      *s1 = std::sin(out.yaw);
    }
  }
  return out;
}

double approach(double current, double target, double max_rate, double dt) {
  const double d = max_rate * dt;
  return current + std::clamp(target - current, -d, d);
}

// What a chassis touches. The other side's name is looked up only when a message is built.
struct ContactInfo {
  int64_t key = 0;  // >= 0: static shape index; < 0: -(vehicle id + 1)
  double x = 0, y = 0, depth = 0;
};

// Per-thread scratch of the sensor pass (reused across vehicles: no allocation per scan). The
// messages themselves are encoded directly (wire.hpp): nothing of one vehicle's message can
// linger in the next one's.
struct SensorScratch {
  std::vector<double> ray_dx, ray_dy;
  std::vector<double> noise;         // a scan's range noise, drawn in one batch
  // A scan's candidates, nearest first: (lower bound on their distance, collider or slot).
  std::vector<std::pair<double, const detail::Collider*>> statics;
  std::vector<std::pair<double, size_t>> others;
  detail::Grid::Stamps grid_stamps;  // the lidar's static-grid queries
};

// A fixed set of workers started once per world. run(fn) calls fn(0) on the calling thread and
// fn(1) .. fn(workers) on the workers, and returns when every call has returned.
class WorkerPool {
 public:
  explicit WorkerPool(int workers) {
    threads_.reserve(static_cast<size_t>(workers));
    for (int i = 1; i <= workers; ++i) threads_.emplace_back([this, i] { loop(i); });
  }
  ~WorkerPool() {
    {
      MutexLock lock(mu_);
      stop_ = true;
      cv_.notify_all();
    }
    threads_.clear();  // joins
  }
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  void run(const std::function<void(int)>& fn) FIELDPROOF_EXCLUDES(mu_) {
    {
      MutexLock lock(mu_);
      fn_ = &fn;
      remaining_ = static_cast<int>(threads_.size());
      ++generation_;
      cv_.notify_all();
    }
    fn(0);
    MutexLock lock(mu_);
    done_.wait(mu_, [&]() FIELDPROOF_REQUIRES(mu_) { return remaining_ == 0; });
    fn_ = nullptr;
  }

 private:
  void loop(int part) FIELDPROOF_EXCLUDES(mu_) {
    uint64_t seen = 0;
    for (;;) {
      const std::function<void(int)>* fn = nullptr;
      {
        MutexLock lock(mu_);
        cv_.wait(mu_, [&]() FIELDPROOF_REQUIRES(mu_) { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        fn = fn_;
      }
      (*fn)(part);
      MutexLock lock(mu_);
      if (--remaining_ == 0) done_.notify_one();
    }
  }

  Mutex mu_;
  CondVar cv_;    // new work or stop
  CondVar done_;  // remaining_ reached 0
  uint64_t generation_ FIELDPROOF_GUARDED_BY(mu_) = 0;
  int remaining_ FIELDPROOF_GUARDED_BY(mu_) = 0;
  bool stop_ FIELDPROOF_GUARDED_BY(mu_) = false;
  const std::function<void(int)>* fn_ FIELDPROOF_GUARDED_BY(mu_) = nullptr;
  std::vector<std::jthread> threads_;  // last: joined before the members above go
};

// Threads of the sensor pass: WorldOptions::threads when set, else FIELDPROOF_WORLD_THREADS
// (1..64), else min(hardware, 4).
Status world_threads(int option, int* out) {
  if (option != 0) {
    if (option < 1 || option > 64) {
      return Status(StatusCode::kInvalidArgument,
                    "WorldOptions::threads: expected 1..64 (or 0 for the default), got " +
                        std::to_string(option));
    }
    *out = option;
    return Status();
  }
  const char* env = std::getenv("FIELDPROOF_WORLD_THREADS");
  if (env == nullptr || *env == '\0') {
    *out = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 4u));
    return Status();
  }
  char* end = nullptr;
  errno = 0;
  const long n = std::strtol(env, &end, 10);
  if (errno != 0 || *end != '\0' || n < 1 || n > 64) {
    return Status(
        StatusCode::kInvalidArgument,
        std::string("FIELDPROOF_WORLD_THREADS: expected an integer 1..64, got '") + env + "'");
  }
  *out = static_cast<int>(n);
  return Status();
}

}  // namespace

struct Vehicle {
  std::string name;
  int64_t id = 0;
  UgvParams params;
  VehicleState state;
  std::string chassis_name;
  std::string topic_odom, topic_imu, topic_scan, topic_contacts, topic_cmd_vel, topic_navsat;
  std::string frame_odom, frame_imu, entity_imu, frame_lidar_link, frame_lidar, frame_navsat;
  RandomSource lidar_rng, odom_rng, imu_rng, navsat_rng;
  double odom_scale_linear = 1.0, odom_scale_angular = 1.0;
  double odom_ds = 0.0, odom_dth = 0.0;
  SimTime last_odom, last_imu;
  double imu_last_v = 0.0;
  SimTime next_odom, next_imu, next_scan, next_contact_repeat, next_navsat;
  double depth = 0.0;  // current penetration (0 unless something was spawned onto it)
  std::vector<ContactInfo> contacts;
  std::vector<int64_t> published_keys;
  std::vector<double> ray_c, ray_s;  // body-frame ray directions
  std::vector<double> ranges;
  // This step's sensor messages while the sensor pass runs on several threads (published by the
  // stepping thread afterwards, vehicle by vehicle in name order, as a serial pass would).
  std::vector<WorldMessage> pending;

  size_t slot = SIZE_MAX;  // index in World::Impl::order (name order); SIZE_MAX before spawn
  Obb box;                 // the chassis at the current pose (kept in step with state.pose)
  // Static colliders near (near_cx, near_cy) within near_r + slack, ascending (World::Impl::
  // gather_near); near_epoch 0: none gathered yet.
  std::vector<int> near;
  double near_cx = 0.0, near_cy = 0.0, near_r = 0.0;
  uint64_t near_epoch = 0;
  double radius = 0.0;  // bounding radius of the chassis

  Obb chassis(const Pose2D& p) const { return Obb::make(p, params.length, params.width); }
};

struct World::Impl {
  WorldOptions opts;
  std::string name;
  Duration step;
  double target_rtf = 1.0;
  std::vector<StaticShape> shapes;
  std::vector<Collider> colliders;
  detail::Grid grid;
  std::map<std::string, Pose2D> frames;
  SphericalCoordinates spherical;
  std::vector<detail::GroundPatch> grounds;  // the map's extent
  bool unbounded_ground = true;
  std::map<std::string, Pose2D> static_models;  // name → pose (reported in pose/info)
  std::map<std::string, Vehicle> vehicles;
  // The vehicles in name order, and their chassis centres and bounding radii by slot: the
  // vehicle-vehicle broad phase runs over these compact arrays.
  std::vector<Vehicle*> order;
  std::vector<double> vx, vy, vr;
  // The vehicles' broad phase (by chassis centre) and the largest chassis bounding radius.
  uint64_t static_epoch = 0;  // bumped when the static geometry changes
  detail::VehicleGrid vgrid;
  double vmax_r = 0.0;
  bool vgrid_stale = false;
  // Neighbour lists of the vehicle-vehicle contact test (Verlet lists): by slot, the other slots
  // whose centres were within the two reaches plus kSkin when the lists were built (vnear_x0,
  // vnear_y0), ascending. While no centre has moved kSkin / 2 from there, no pair left out can
  // touch, so a step tests its short list instead of querying the grid and sorting.
  static constexpr double kSkin = 0.5;
  std::vector<std::vector<int>> vnear;
  std::vector<double> vnear_x0, vnear_y0;
  bool vnear_stale = true;
  // Scratch, kept to spare an allocation per step or scan.
  std::vector<int> candidates;
  std::vector<int64_t> ranks;
  std::vector<ContactInfo> touching_scratch;
  // Scratch of the sensor pass, one per thread of it (0: the stepping thread's).
  std::vector<SensorScratch> scratch = std::vector<SensorScratch>(1);
  // Threads of the sensor pass (WorldOptions::threads resolved); the workers are started when
  // first needed. collecting: the pass is running on several threads (vehicles' messages go to
  // Vehicle::pending; nothing shared is written).
  int threads = 1;
  std::unique_ptr<WorkerPool> pool;
  bool collecting = false;
  int64_t next_vehicle_id = 0;

  SimTime now;
  uint64_t iterations = 0;
  bool paused = false;
  uint64_t pending_steps = 0;
  std::optional<SimTime> run_to;

  SimTime next_clock, next_stats, next_pose;
  SimTime stats_sim;
  int64_t stats_wall = 0;
  int64_t start_wall = 0;
  double measured_rtf = 0.0;

  std::vector<WorldMessage> outbox;
  uint64_t warnings = 0;
  int64_t raycast_ns = 0;
  std::string topic_clock = "/clock", topic_stats, topic_pose, topic_control, topic_create,
              topic_remove;

  void init_topics() {
    topic_stats = "/world/" + name + "/stats";
    topic_pose = "/world/" + name + "/pose/info";
    topic_control = "/world/" + name + "/control";
    topic_create = "/world/" + name + "/create";
    topic_remove = "/world/" + name + "/remove";
    next_clock = next_on_grid(now, opts.clock_period);
    next_stats = next_on_grid(now, opts.stats_period);
    next_pose = next_on_grid(now, opts.pose_period);
    if (opts.wall_now) start_wall = stats_wall = opts.wall_now().ns();
  }

  void warn(const std::string& m) {
    ++warnings;
    if (opts.on_warning) opts.on_warning(m);
  }

  void emit(std::string topic, std::string_view type, std::string payload) {
    WorldMessage m{std::move(topic), now, type, std::move(payload)};
    if (opts.sink) {
      opts.sink(std::move(m));
    } else {
      outbox.push_back(std::move(m));
    }
  }

  void vemit(Vehicle& v, const std::string& topic, std::string_view type, std::string payload) {
    if (collecting) {
      v.pending.push_back(WorldMessage{topic, now, type, std::move(payload)});
    } else {
      emit(topic, type, std::move(payload));
    }
  }

  void rebuild_order() {
    order.clear();
    vx.clear();
    vy.clear();
    vr.clear();
    for (auto& [n, v] : vehicles) {
      v.slot = order.size();
      order.push_back(&v);
      vx.push_back(v.box.cx);
      vy.push_back(v.box.cy);
      vr.push_back(v.radius);
    }
    rebuild_vgrid();
    vnear_stale = true;
  }

  // The grown chassis's bounding radius probe() reaches with (the candidate box has self's size).
  double grown_radius(size_t slot) const {
    const Vehicle& v = *order[slot];
    return Obb{0, 0, 1, 0, v.params.length / 2, v.params.width / 2}
        .grown(opts.contact_margin)
        .bounding_radius();
  }

  void rebuild_vnear() {
    const size_t n = order.size();
    vnear.resize(n);
    vnear_x0 = vx;
    vnear_y0 = vy;
    for (size_t i = 0; i < n; ++i) {
      std::vector<int>& list = vnear[i];
      list.clear();
      const double rg = grown_radius(i);
      const double h = rg + vmax_r + kSkin;
      vgrid.query(vx[i] - h, vy[i] - h, vx[i] + h, vy[i] + h, [&](int j) {
        const size_t js = static_cast<size_t>(j);
        if (js == i) return;
        const double dx = vx[js] - vx[i], dy = vy[js] - vy[i];
        const double reach = rg + vr[js] + kSkin;
        if (dx * dx + dy * dy <= reach * reach) list.push_back(j);
      });
      std::sort(list.begin(), list.end());
    }
    vnear_stale = false;
  }

  // Whether slot's neighbour list holds every vehicle a chassis of it centred at (cx, cy) can
  // touch (rebuilding the lists when they are stale or (cx, cy) is too far from where they were
  // built); false when even fresh lists cannot tell (a move of more than kSkin / 2 in one step).
  bool vnear_covers(size_t slot, double cx, double cy) {
    const auto within = [&] {
      const double dx = cx - vnear_x0[slot], dy = cy - vnear_y0[slot];
      return dx * dx + dy * dy <= 0.25 * kSkin * kSkin;
    };
    if (!vnear_stale && within()) return true;
    rebuild_vnear();
    return within();
  }

  void rebuild_vgrid() {
    vmax_r = 0.0;
    for (double r : vr) vmax_r = std::max(vmax_r, r);
    // Cells about two chassis wide: a chassis query meets at most 2 x 2 of them.
    vgrid.rebuild(vx, vy, std::max(1.0, 4.0 * vmax_r), 4.0 * vmax_r + 1.0);
    vgrid_stale = false;
  }

  void rebuild_static() {
    ++static_epoch;
    colliders.clear();
    colliders.reserve(shapes.size());
    for (size_t i = 0; i < shapes.size(); ++i) {
      colliders.push_back(detail::make_collider(shapes[i], static_cast<int>(i)));
    }
    grid.build(colliders, opts.grid_cell);
  }

  // The deepest overlap of a chassis at `pose` with anything but `self`, and what it touches
  // (chassis grown by the contact margin).
  // The static colliders near (cx, cy) within reach r, kept per vehicle while it stays within
  // kNearSlack of where they were gathered: most steps test a short list, not the grid.
  static constexpr double kNearSlack = 0.5;
  // The check inline (most steps keep the list), the gathering out of line.
  void gather_near(Vehicle& self, double cx, double cy, double r) {
    if (self.near_epoch == static_epoch && r <= self.near_r &&
        std::abs(cx - self.near_cx) <= kNearSlack && std::abs(cy - self.near_cy) <= kNearSlack) {
      return;
    }
    regather_near(self, cx, cy, r);
  }
  [[gnu::noinline]] void regather_near(Vehicle& self, double cx, double cy, double r) {
    self.near.clear();
    self.near_cx = cx;
    self.near_cy = cy;
    self.near_r = r;
    self.near_epoch = static_epoch;
    const double h = r + kNearSlack;
    grid.query(Aabb{cx - h, cy - h, cx + h, cy + h},
               [&self](const Collider& c) { self.near.push_back(c.shape); });
    std::sort(self.near.begin(), self.near.end());
  }

  double probe(Vehicle& self, const Obb& box, std::vector<ContactInfo>* touching) {
    const Pose2D pose{box.cx, box.cy, 0.0};
    const Obb grown = box.grown(opts.contact_margin);
    const Aabb reach_box = grown.aabb();
    double deepest = 0.0;
    const double r_self = grown.bounding_radius();
    // Exactly the colliders a grid query of reach_box reports (the near list holds every one
    // whose bounds can meet it), put back in the grid's visiting order below.
    gather_near(self, box.cx, box.cy, r_self);
    const size_t first_static = touching ? touching->size() : 0;
    for (const int ni : self.near) {
      const Collider& c = colliders[static_cast<size_t>(ni)];
      if (!c.bounds.overlaps(reach_box)) continue;
      if (detail::overlap(grown, c) <= 0) continue;
      const double ov = detail::overlap(box, c);
      deepest = std::max(deepest, ov);
      if (touching) {
        ContactInfo ci;
        ci.key = c.shape;
        ci.depth = std::max(ov, 0.0);
        if (c.is_box) {
          detail::closest_point(c.box, pose.x, pose.y, &ci.x, &ci.y);
        } else {
          const double dx = pose.x - c.circle.cx, dy = pose.y - c.circle.cy;
          const double d = std::sqrt(dx * dx + dy * dy);
          ci.x = c.circle.cx + (d > 0 ? dx / d * c.circle.r : c.circle.r);
          ci.y = c.circle.cy + (d > 0 ? dy / d * c.circle.r : 0.0);
        }
        touching->push_back(std::move(ci));
      }
    }
    if (touching && touching->size() - first_static > 1) {
      // Insertion sort by visit rank, stable (a handful of contacts).
      ContactInfo* t = touching->data() + first_static;
      const size_t k = touching->size() - first_static;
      ranks.resize(k);
      for (size_t i = 0; i < k; ++i)
        ranks[i] = grid.visit_rank(reach_box, colliders[t[i].key].bounds);
      for (size_t i = 1; i < k; ++i) {
        for (size_t j = i; j > 0 && ranks[j] < ranks[j - 1]; --j) {
          std::swap(ranks[j], ranks[j - 1]);
          std::swap(t[j], t[j - 1]);
        }
      }
    }
    // The broad phase finds the candidates; visiting them in slot order keeps the contacts in
    // the order a scan over every vehicle gives.
    const std::vector<int>* near_vehicles = &candidates;
    if (self.slot < order.size() && vnear_covers(self.slot, box.cx, box.cy)) {
      near_vehicles = &vnear[self.slot];
    } else {
      const double reach_all = r_self + vmax_r;
      candidates.clear();
      vgrid.query(box.cx - reach_all, box.cy - reach_all, box.cx + reach_all, box.cy + reach_all,
                  [this](int i) { candidates.push_back(i); });
      std::sort(candidates.begin(), candidates.end());
    }
    for (const int ci : *near_vehicles) {
      const size_t i = static_cast<size_t>(ci);
      const double dx = vx[i] - box.cx, dy = vy[i] - box.cy;
      const double reach = r_self + vr[i];
      if (dx * dx + dy * dy > reach * reach || i == self.slot) continue;
      const Vehicle& other = *order[i];
      const Obb& ob = other.box;
      if (detail::overlap(grown, ob) <= 0) continue;
      const double ov = detail::overlap(box, ob);
      deepest = std::max(deepest, ov);
      if (touching) {
        ContactInfo ci;
        ci.key = -(other.id + 1);
        ci.depth = std::max(ov, 0.0);
        detail::closest_point(ob, pose.x, pose.y, &ci.x, &ci.y);
        touching->push_back(std::move(ci));
      }
    }
    return deepest;
  }

  void physics(Vehicle& v, double dt) {
    VehicleState& s = v.state;
    const UgvParams& p = v.params;
    double lin =
        std::clamp(approach(s.velocity.linear_x, s.command.linear_x, p.max_linear_accel, dt),
                   -p.max_linear, p.max_linear);
    double ang =
        std::clamp(approach(s.velocity.angular_z, s.command.angular_z, p.max_angular_accel, dt),
                   -p.max_angular, p.max_angular);
    double c1 = 1.0, s1 = 0.0;
    const Pose2D candidate = arc(s.pose, v.box.c, v.box.s, lin, ang, dt, &c1, &s1);
    const Obb candidate_box{candidate.x, candidate.y, c1, s1, p.length / 2, p.width / 2};
    std::vector<ContactInfo>& touching = touching_scratch;
    touching.clear();
    const double depth = probe(v, candidate_box, &touching);
    if (depth > v.depth + 1e-9) {
      // Refused: the move would push into something. Stop where we are.
      lin = ang = 0.0;
    } else {
      s.pose = candidate;
      v.box = candidate_box;
      vx[v.slot] = candidate_box.cx;
      vy[v.slot] = candidate_box.cy;
      if (!vgrid.move(static_cast<int>(v.slot), candidate_box.cx, candidate_box.cy)) {
        vgrid_stale = true;
      }
      if (!vnear_stale) {
        const double dx = candidate_box.cx - vnear_x0[v.slot];
        const double dy = candidate_box.cy - vnear_y0[v.slot];
        if (dx * dx + dy * dy > 0.25 * kSkin * kSkin) vnear_stale = true;
      }
      v.depth = depth;
      v.odom_ds += lin * dt;
      v.odom_dth += ang * dt;
    }
    std::swap(v.contacts, touching);  // both keep their capacity
    s.velocity = Twist2D{lin, ang};
    s.touching = !v.contacts.empty();
  }

  void advance() {
    now += step;
    ++iterations;
    const double dt = static_cast<double>(step.ns()) * 1e-9;
    for (Vehicle* v : order) physics(*v, dt);
    if (vgrid_stale) rebuild_vgrid();
    if (!opts.sensors) return;
    if (due(now, &next_clock, opts.clock_period)) emit_clock();
    if (due(now, &next_stats, opts.stats_period)) emit_stats();
    if (due(now, &next_pose, opts.pose_period)) emit_poses();
    // Each vehicle's readings depend only on the stepped world (read-only here) and its own
    // noise sources, so the vehicles can be split over threads; their messages are then
    // published in the serial order. Only steps with enough scans due are worth the hand-off.
    size_t scans_due = 0;
    if (threads > 1) {
      for (const Vehicle* v : order) scans_due += v->params.lidar && now >= v->next_scan ? 1 : 0;
    }
    if (scans_due < kMinParallelScans) {
      for (Vehicle* vp : order) sense(*vp, scratch[0]);
      return;
    }
    if (!pool) {
      scratch.resize(static_cast<size_t>(threads));
      pool = std::make_unique<WorkerPool>(threads - 1);
    }
    collecting = true;
    const size_t nv = order.size(), parts = static_cast<size_t>(threads);
    pool->run([&](int part) {
      const size_t k = static_cast<size_t>(part);
      for (size_t i = k * nv / parts; i < (k + 1) * nv / parts; ++i) sense(*order[i], scratch[k]);
    });
    collecting = false;
    for (Vehicle* vp : order) {
      for (WorldMessage& m : vp->pending) {
        if (opts.sink) {
          opts.sink(std::move(m));
        } else {
          outbox.push_back(std::move(m));
        }
      }
      vp->pending.clear();
    }
  }

  static constexpr size_t kMinParallelScans = 8;

  void sense(Vehicle& v, SensorScratch& sc) {
    if (due(now, &v.next_odom, v.params.odometry_period)) emit_odometry(v);
    if (v.params.imu && due(now, &v.next_imu, v.params.imu_period)) emit_imu(v);
    if (v.params.lidar && due(now, &v.next_scan, v.params.lidar_period)) emit_scan(v, sc);
    if (v.params.contact) emit_contacts_if_due(v);
    if (v.params.navsat && due(now, &v.next_navsat, v.params.navsat_period)) emit_navsat(v);
  }

  // The header msgs::set_stamp(header, now, frame) gives, and msgs::set_planar_pose's pose, for
  // the hand-written encoders.
  wire::Header wire_header(std::string_view frame) const {
    const msgs::SecNsec t = msgs::to_sec_nsec(now);
    return wire::Header{t.sec, t.nsec, true, frame};
  }
  static wire::Pose wire_planar_pose(double x, double y, double yaw) {
    return wire::Pose{{x, y, 0.0}, {0.0, 0.0, std::sin(yaw / 2), std::cos(yaw / 2)}};
  }

  void emit_clock() {
    ignition::msgs::Clock m;
    msgs::set_stamp(m.mutable_header(), now);
    *m.mutable_sim() = msgs::to_time(now);
    emit(topic_clock, msgs::kClock, msgs::serialize(m));
  }

  WorldStatistics stats() {
    WorldStatistics st;
    st.paused = paused && !run_to;
    st.sim_time = now;
    st.iterations = iterations;
    st.real_time_factor = measured_rtf;
    st.target_real_time_factor = target_rtf;
    st.step_size = step;
    st.model_count = static_cast<int>(static_models.size() + vehicles.size());
    return st;
  }

  void emit_stats() {
    if (opts.wall_now) {
      const int64_t wall = opts.wall_now().ns();
      const int64_t dw = wall - stats_wall;
      if (dw > 0) measured_rtf = static_cast<double>((now - stats_sim).ns()) / dw;
      stats_wall = wall;
      stats_sim = now;
    }
    const WorldStatistics st = stats();
    ignition::msgs::WorldStatistics m;
    msgs::set_stamp(m.mutable_header(), now);
    *m.mutable_sim_time() = msgs::to_time(now);
    if (opts.wall_now) {
      *m.mutable_real_time() = msgs::to_time(SimTime::from_ns(stats_wall - start_wall));
    }
    m.set_paused(st.paused);
    m.set_iterations(st.iterations);
    m.set_model_count(st.model_count);
    m.set_real_time_factor(st.real_time_factor);
    *m.mutable_step_size() = msgs::to_time(SimTime::zero() + step);
    emit(topic_stats, msgs::kWorldStatistics, msgs::serialize(m));
  }

  void emit_poses() {
    ignition::msgs::Pose_V m;
    msgs::set_stamp(m.mutable_header(), now);
    for (const auto& [n, v] : vehicles) {
      auto* pose = m.add_pose();
      pose->set_name(n);
      pose->set_id(static_cast<uint32_t>(v.id));
      msgs::set_planar_pose(pose, v.state.pose.x, v.state.pose.y, v.state.pose.yaw);
    }
    for (const auto& [n, p] : static_models) {
      auto* pose = m.add_pose();
      pose->set_name(n);
      msgs::set_planar_pose(pose, p.x, p.y, p.yaw);
    }
    emit(topic_pose, msgs::kPoseV, msgs::serialize(m));
  }

  void emit_odometry(Vehicle& v) {
    const UgvParams& p = v.params;
    const double elapsed = static_cast<double>((now - v.last_odom).ns()) * 1e-9;
    v.last_odom = now;
    const double ds = v.odom_ds * v.odom_scale_linear +
                      v.odom_rng.normal(0.0, p.odometry_linear_noise * std::abs(v.odom_ds));
    const double dth = v.odom_dth * v.odom_scale_angular +
                       v.odom_rng.normal(0.0, p.odometry_angular_noise * std::abs(v.odom_dth));
    v.odom_ds = v.odom_dth = 0.0;
    Pose2D& o = v.state.odometry;
    o.x += ds * std::cos(o.yaw + dth / 2);
    o.y += ds * std::sin(o.yaw + dth / 2);
    o.yaw = detail::normalize_angle(o.yaw + dth);
    wire::Odometry m;
    m.header = wire_header(v.frame_odom);
    m.has_child = !p.odometry_child_frame.empty();
    m.child_frame_id = p.odometry_child_frame;
    m.pose = wire_planar_pose(o.x, o.y, o.yaw);
    if (elapsed > 0) {
      m.has_twist = true;
      m.linear.x = ds / elapsed;
      m.angular.z = dth / elapsed;
    }
    std::string payload;
    [[maybe_unused]] const bool whole = wire::encode(m, &payload);
    assert(whole);  // the sizes and the writes agree (tests/world/wire_test.cpp)
    vemit(v, v.topic_odom, msgs::kOdometry, std::move(payload));
  }

  void emit_imu(Vehicle& v) {
    const UgvParams& p = v.params;
    const double elapsed = static_cast<double>((now - v.last_imu).ns()) * 1e-9;
    const double lin = v.state.velocity.linear_x;
    const double ang = v.state.velocity.angular_z;
    const double ax = elapsed > 0 ? (lin - v.imu_last_v) / elapsed : 0.0;
    v.last_imu = now;
    v.imu_last_v = lin;
    wire::Imu m;
    m.header = wire_header(v.frame_imu);
    m.entity_name = v.entity_imu;
    const double yaw = v.state.pose.yaw;
    m.orientation.w = std::cos(yaw / 2);
    m.orientation.z = std::sin(yaw / 2);
    const double sg = p.imu_angular_velocity_stddev, sa = p.imu_linear_acceleration_stddev;
    // The draws in this order (the recorded noise): three of the gyro's, three of the
    // accelerometer's, each batch the same draws as three normal() calls.
    double g[3], a[3];
    v.imu_rng.normals(g, 3, 0.0, sg);
    v.imu_rng.normals(a, 3, 0.0, sa);
    m.angular_velocity.x = g[0];
    m.angular_velocity.y = g[1];
    m.angular_velocity.z = ang + g[2];
    m.linear_acceleration.x = ax + a[0];
    m.linear_acceleration.y = lin * ang + a[1];
    m.linear_acceleration.z = kGravity + a[2];
    std::string payload;
    [[maybe_unused]] const bool whole = wire::encode(m, &payload);
    assert(whole);  // the sizes and the writes agree (tests/world/wire_test.cpp)
    vemit(v, v.topic_imu, msgs::kImu, std::move(payload));
  }

  // Every ray against the static colliders within range (each tested only on the rays that can
  // meet it), then against the chassis of the vehicles within range: the nearest hit per ray,
  // +inf beyond range_max.
  void cast_scan(const Vehicle& v, SensorScratch& sc, std::vector<double>* out) {
    std::vector<double>& ray_dx = sc.ray_dx;
    std::vector<double>& ray_dy = sc.ray_dy;
    const UgvParams& p = v.params;
    const int n = p.lidar_rays;
    const double range = p.lidar_range_max;
    out->assign(static_cast<size_t>(n), kInf);
    const double ox = v.state.pose.x, oy = v.state.pose.y, yaw = v.state.pose.yaw;
    const double c = std::cos(yaw), s = std::sin(yaw);
    ray_dx.resize(static_cast<size_t>(n));
    ray_dy.resize(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      ray_dx[i] = c * v.ray_c[i] - s * v.ray_s[i];
      ray_dy[i] = s * v.ray_c[i] + c * v.ray_s[i];
    }
    double* r = out->data();
    const double* rdx = ray_dx.data();
    const double* rdy = ray_dy.data();
    // Rays [first, first + count) modulo n, as at most two contiguous runs. A ray whose nearest
    // hit so far is within `near` of the origin cannot get a nearer one from a shape no nearer
    // than that: it is skipped (the nearest hit per ray is a minimum, so neither the skip nor
    // the nearest-first order below changes a range).
    const auto trace = [&](int first, int count, double near, auto&& hit) {
      first %= n;
      if (first < 0) first += n;
      const int end1 = std::min(n, first + count);
      for (int i = first; i < end1; ++i) {
        if (r[i] <= near) continue;
        const double t = hit(i);
        if (t < r[i]) r[i] = t;
      }
      for (int i = 0; i < first + count - n; ++i) {
        if (r[i] <= near) continue;
        const double t = hit(i);
        if (t < r[i]) r[i] = t;
      }
    };
    sc.statics.clear();
    grid.query(Aabb{ox - range, oy - range, ox + range, oy + range}, [&](const Collider& col) {
      const double ex = std::max({col.bounds.min_x - ox, 0.0, ox - col.bounds.max_x});
      const double ey = std::max({col.bounds.min_y - oy, 0.0, oy - col.bounds.max_y});
      if (ex * ex + ey * ey > range * range) return;
      sc.statics.emplace_back(std::sqrt(ex * ex + ey * ey), &col);
    }, sc.grid_stamps);
    std::sort(sc.statics.begin(), sc.statics.end());
    for (const auto& [dist, colp] : sc.statics) {
      const Collider& col = *colp;
      const double near = skip_bound(dist);
      int first = 0, count = n;
      if (p.lidar_full_turn) detail::ray_span(col, ox, oy, yaw, n, &first, &count);
      if (col.is_box) {
        const Obb& b = col.box;
        const double rx = ox - b.cx, ry = oy - b.cy;
        const double lox = rx * b.c + ry * b.s, loy = -rx * b.s + ry * b.c;
        trace(first, count, near, [&](int i) {
          const double dx = rdx[i], dy = rdy[i];
          return detail::ray_hit_local(b, lox, loy, dx * b.c + dy * b.s, -dx * b.s + dy * b.c);
        });
      } else {
        trace(first, count, near,
              [&](int i) { return detail::ray_hit(col.circle, ox, oy, rdx[i], rdy[i]); });
      }
    }
    for (int i = 0; i < n; ++i) {
      if (!(r[i] <= range)) r[i] = kInf;
    }
    cast_at_vehicles(v, sc, r);
  }

  // A ray whose nearest hit so far is below this bound of a shape's distance cannot hit the shape
  // nearer: the bound lies below the exact distance by far more than a hit's rounding error.
  static double skip_bound(double dist) { return dist - 1e-6 * (1.0 + dist); }

  // cast_scan's second half: the chassis of the other vehicles within range, each tested only on
  // the rays within the angle its bounding circle subtends, nearest first. `r` holds the ranges
  // the static colliders left (sc.ray_dx/ray_dy the rays in the world frame).
  void cast_at_vehicles(const Vehicle& v, SensorScratch& sc, double* r) {
    const std::vector<double>& ray_dx = sc.ray_dx;
    const std::vector<double>& ray_dy = sc.ray_dy;
    const UgvParams& p = v.params;
    const int n = p.lidar_rays;
    const double range = p.lidar_range_max;
    const double ox = v.state.pose.x, oy = v.state.pose.y, yaw = v.state.pose.yaw;
    const double step = 2 * kPi / n;
    const double reach = range + vmax_r;
    sc.others.clear();
    vgrid.query(ox - reach, oy - reach, ox + reach, oy + reach, [&](int ji) {
      const size_t j = static_cast<size_t>(ji);
      const double rx = vx[j] - ox, ry = vy[j] - oy;
      const double rb = vr[j];
      if (std::abs(rx) - rb > range || std::abs(ry) - rb > range || j == v.slot) return;
      const double d = std::sqrt(rx * rx + ry * ry);
      if (d - rb > range) return;
      sc.others.emplace_back(d - rb, j);
    });
    std::sort(sc.others.begin(), sc.others.end());
    for (const auto& [gap, j] : sc.others) {
      const double rx = vx[j] - ox, ry = vy[j] - oy;
      const double rb = vr[j];
      const Obb& ob = order[j]->box;
      const double d = std::sqrt(rx * rx + ry * ry);
      // The chassis lies within its bounding circle: no hit nearer than d - rb.
      const double near = skip_bound(std::max(gap, 0.0));
      int first = 0, count = n;
      if (d > rb && p.lidar_full_turn) {
        // The bounding circle's angles by the fast atan2, widened by ray_span.hpp's margin (a
        // superset of the rays the exact angles give; the others miss the chassis), or exact
        // where asin is steep.
        double half = 0, bearing = 0;
        if (rb < 0.9 * d) {
          half = detail::atan2_approx(rb, std::sqrt(d * d - rb * rb)) + detail::kSpanMargin;
          bearing = detail::atan2_approx(ry, rx) - yaw;
        } else {
          half = std::asin(rb / d);
          bearing = std::atan2(ry, rx) - yaw;
        }
        // Ray i points at angle_min + i * step = -pi + i * step (body frame).
        first = static_cast<int>(std::floor((bearing - half + kPi) / step));
        count = static_cast<int>(std::ceil((bearing + half + kPi) / step)) - first + 1;
        count = std::min(count, n);
      }
      // The origin in the box's frame once (ray_hit's first step, the same operations), and the
      // ray index wrapped by a compare, not two divisions a ray.
      const double bx = ox - ob.cx, by = oy - ob.cy;
      const double lox = bx * ob.c + by * ob.s, loy = -bx * ob.s + by * ob.c;
      int i = ((first % n) + n) % n;
      for (int k = 0; k < count; ++k, ++i) {
        if (i == n) i = 0;
        if (r[i] <= near) continue;
        const double dx = ray_dx[i], dy = ray_dy[i];
        const double t =
            detail::ray_hit_local(ob, lox, loy, dx * ob.c + dy * ob.s, -dx * ob.s + dy * ob.c);
        if (t < r[i] && t <= range) r[i] = t;
      }
    }
  }

  void emit_scan(Vehicle& v, SensorScratch& sc) {
    const UgvParams& p = v.params;
    // Timed only on a serial pass: the wall clock is the caller's and need not be thread-safe.
    const bool timed = opts.wall_now && !collecting;
    const int64_t t0 = timed ? opts.wall_now().ns() : 0;
    cast_scan(v, sc, &v.ranges);
    if (timed) raycast_ns += opts.wall_now().ns() - t0;
    wire::LaserScan m;
    m.header = wire_header(v.frame_lidar_link);
    m.frame = v.frame_lidar;
    m.world_pose = wire_planar_pose(v.state.pose.x, v.state.pose.y, v.state.pose.yaw);
    if (p.lidar_full_turn) {
      const double step = 2 * kPi / p.lidar_rays;
      m.angle_min = -kPi;
      m.angle_max = -kPi + step * (p.lidar_rays - 1);
      m.angle_step = step;
    } else {
      m.angle_min = p.lidar_angle_min;
      m.angle_max = p.lidar_angle_max;
      m.angle_step = p.lidar_rays > 1
                         ? (p.lidar_angle_max - p.lidar_angle_min) / (p.lidar_rays - 1)
                         : 0.0;
    }
    m.range_min = p.lidar_range_min;
    m.range_max = p.lidar_range_max;
    m.count = static_cast<uint32_t>(p.lidar_rays);
    m.vertical_count = 1;
    // The readings replace the true ranges in place (cast_scan refills them for the next scan).
    // One draw per ray within [range_min, range_max], in ray order: drawn in one batch first
    // (the same draws as one normal() a ray), then added.
    size_t draws = 0;
    for (const double t : v.ranges) draws += (t <= p.lidar_range_max && !(t < p.lidar_range_min));
    sc.noise.resize(draws);
    v.lidar_rng.normals(sc.noise.data(), draws, 0.0, p.lidar_noise_stddev);
    const double* z = sc.noise.data();
    for (double& t : v.ranges) {
      if (!(t <= p.lidar_range_max)) {
        t = kInf;
      } else if (t < p.lidar_range_min) {
        t = -kInf;
      } else {
        t = std::clamp(t + *z++, p.lidar_range_min, p.lidar_range_max);
      }
    }
    m.ranges = v.ranges;
    std::string payload;
    [[maybe_unused]] const bool whole = wire::encode(m, &payload);
    assert(whole);  // the sizes and the writes agree (tests/world/wire_test.cpp)
    vemit(v, v.topic_scan, msgs::kLaserScan, std::move(payload));
  }

  std::string contact_name(int64_t key) const {
    if (key >= 0) return scoped_name(shapes[static_cast<size_t>(key)]);
    for (const auto& [n, v] : vehicles) {
      if (-(v.id + 1) == key) return v.chassis_name;
    }
    return "removed";
  }

  void emit_contacts_if_due(Vehicle& v) {
    if (v.contacts.empty() && v.published_keys.empty()) return;
    std::vector<int64_t> keys;
    keys.reserve(v.contacts.size());
    for (const auto& c : v.contacts) keys.push_back(c.key);
    std::sort(keys.begin(), keys.end());
    const bool changed = keys != v.published_keys;
    const bool repeat = !v.contacts.empty() && now >= v.next_contact_repeat;
    if (!changed && !repeat) return;
    v.published_keys = std::move(keys);
    v.next_contact_repeat = now + opts.contact_repeat_period;
    ignition::msgs::Contacts m;
    msgs::set_stamp(m.mutable_header(), now);
    for (const auto& c : v.contacts) {
      auto* ct = m.add_contact();
      ct->mutable_collision1()->set_name(v.chassis_name);
      ct->mutable_collision1()->set_type(ignition::msgs::Entity::COLLISION);
      ct->mutable_collision2()->set_name(contact_name(c.key));
      ct->mutable_collision2()->set_type(ignition::msgs::Entity::COLLISION);
      auto* pos = ct->add_position();
      pos->set_x(c.x);
      pos->set_y(c.y);
      pos->set_z(v.params.height / 2);
      ct->add_depth(c.depth);
    }
    vemit(v, v.topic_contacts, msgs::kContacts, msgs::serialize(m));
  }

  // WGS84 around the world's origin (small distances: the local tangent plane).
  void emit_navsat(Vehicle& v) {
    const VehicleParams& p = v.params;
    const SphericalCoordinates& sc = spherical;
    const double x = v.state.pose.x + v.navsat_rng.normal(0.0, p.navsat_horizontal_stddev);
    const double y = v.state.pose.y + v.navsat_rng.normal(0.0, p.navsat_horizontal_stddev);
    const double up = v.navsat_rng.normal(0.0, p.navsat_vertical_stddev);
    bool fix = true;
    for (const GpsDeniedRegion& g : opts.gps_denied) {
      const MapBounds& b = g.bounds;
      const double px = v.state.pose.x, py = v.state.pose.y;
      if (px >= b.min_x && px <= b.max_x && py >= b.min_y && py <= b.max_y) fix = false;
    }
    const double ch = std::cos(sc.heading_rad), sh = std::sin(sc.heading_rad);
    const double east = ch * x - sh * y, north = sh * x + ch * y;
    constexpr double kA = 6378137.0, kE2 = 6.69437999014e-3;
    const double lat0 = sc.latitude_deg * kPi / 180;
    const double sl = std::sin(lat0);
    const double w = 1 - kE2 * sl * sl;
    const double rn = kA / std::sqrt(w), rm = kA * (1 - kE2) / (w * std::sqrt(w));
    const double h = sc.elevation;
    ignition::msgs::NavSat m;
    msgs::set_stamp(m.mutable_header(), now, v.frame_navsat);
    m.set_latitude_deg(sc.latitude_deg + north / (rm + h) * 180 / kPi);
    m.set_longitude_deg(sc.longitude_deg + east / ((rn + h) * std::cos(lat0)) * 180 / kPi);
    m.set_altitude(h + up);
    const double yaw = v.state.pose.yaw, lin = v.state.velocity.linear_x;
    const double vx_w = lin * std::cos(yaw), vy_w = lin * std::sin(yaw);
    m.set_velocity_east(ch * vx_w - sh * vy_w + v.navsat_rng.normal(0.0, p.navsat_velocity_stddev));
    m.set_velocity_north(sh * vx_w + ch * vy_w +
                         v.navsat_rng.normal(0.0, p.navsat_velocity_stddev));
    m.set_velocity_up(v.navsat_rng.normal(0.0, p.navsat_velocity_stddev));
    if (!fix) {
      constexpr double kNoFix = std::numeric_limits<double>::quiet_NaN();
      m.set_latitude_deg(kNoFix);
      m.set_longitude_deg(kNoFix);
      m.set_altitude(kNoFix);
      m.set_velocity_east(kNoFix);
      m.set_velocity_north(kNoFix);
      m.set_velocity_up(kNoFix);
    }
    m.set_frame_id(v.frame_navsat);
    vemit(v, v.topic_navsat, msgs::kNavSat, msgs::serialize(m));
  }

  bool name_taken(const std::string& n) const {
    return vehicles.count(n) > 0 || static_models.count(n) > 0;
  }
};

World::World(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
World::~World() = default;

namespace {
LoadResult finish_load(detail::SdfOutcome outcome, WorldOptions options,
                       std::unique_ptr<World> (*make)(std::unique_ptr<World::Impl>)) {
  LoadResult result;
  result.errors = std::move(outcome.errors);
  result.warnings = std::move(outcome.warnings);
  if (!result.errors.empty()) return result;
  auto impl = std::make_unique<World::Impl>();
  impl->opts = std::move(options);
  (void)world_threads(impl->opts.threads, &impl->threads);  // checked by check_options
  impl->name = outcome.world.name;
  impl->step = outcome.world.step;
  impl->target_rtf = outcome.world.real_time_factor;
  impl->shapes = std::move(outcome.world.shapes);
  impl->frames = std::move(outcome.world.frames);
  impl->spherical = outcome.world.spherical;
  impl->grounds = std::move(outcome.world.grounds);
  impl->unbounded_ground = outcome.world.unbounded_ground || impl->grounds.empty();
  impl->static_models = std::move(outcome.world.model_poses);
  impl->rebuild_static();
  impl->init_topics();
  result.world = make(std::move(impl));
  return result;
}

Status check_options(const WorldOptions& o) {
  int threads = 0;
  if (Status s = world_threads(o.threads, &threads); !s.ok()) return s;
  if (o.clock_period.ns() <= 0 || o.stats_period.ns() <= 0 || o.pose_period.ns() <= 0 ||
      o.contact_repeat_period.ns() <= 0) {
    return Status(StatusCode::kInvalidArgument, "world output periods must be > 0");
  }
  if (!(o.grid_cell > 0) || !std::isfinite(o.grid_cell) || !(o.contact_margin >= 0)) {
    return Status(StatusCode::kInvalidArgument, "grid_cell must be > 0 and contact_margin >= 0");
  }
  for (size_t i = 0; i < o.gps_denied.size(); ++i) {
    const MapBounds& b = o.gps_denied[i].bounds;
    const bool finite_bounds = std::isfinite(b.min_x) && std::isfinite(b.min_y) &&
                               std::isfinite(b.max_x) && std::isfinite(b.max_y);
    if (!finite_bounds || !(b.min_x < b.max_x) || !(b.min_y < b.max_y)) {
      return Status(StatusCode::kInvalidArgument,
                    "gps_denied[" + std::to_string(i) + "] '" + o.gps_denied[i].name +
                        "': the bounds must be finite with min_x < max_x and min_y < max_y");
    }
  }
  return Status();
}
}  // namespace

LoadResult World::load(const std::string& path, WorldOptions options) {
  if (Status s = check_options(options); !s.ok()) return LoadResult{nullptr, {s.message()}, {}};
  // A FIFO, a device or a huge file (the world or one it includes) would hang or exhaust the SDF
  // parser, and an include cycle would make it recurse until it aborts: refused unread.
  if (Status s = detail::check_sdf_includes(path); !s.ok()) {
    return LoadResult{nullptr, {s.message()}, {}};
  }
  auto outcome = detail::load_sdf(path, nullptr, options.plane_z_min, options.plane_z_max,
                                  options.direct_read_threshold);
  return finish_load(std::move(outcome), std::move(options), [](std::unique_ptr<Impl> impl) {
    return std::unique_ptr<World>(new World(std::move(impl)));
  });
}

LoadResult World::load_string(const std::string& sdf, WorldOptions options,
                              const std::string& name_for_errors) {
  if (Status s = check_options(options); !s.ok()) return LoadResult{nullptr, {s.message()}, {}};
  auto outcome = detail::load_sdf(name_for_errors, &sdf, options.plane_z_min, options.plane_z_max,
                                  options.direct_read_threshold);
  return finish_load(std::move(outcome), std::move(options), [](std::unique_ptr<Impl> impl) {
    return std::unique_ptr<World>(new World(std::move(impl)));
  });
}

std::unique_ptr<World> World::empty(std::string name, Duration step, WorldOptions options) {
  if (step.ns() <= 0) throw std::invalid_argument("World::empty: the step must be > 0");
  if (Status s = check_options(options); !s.ok()) throw std::invalid_argument(s.message());
  auto impl = std::make_unique<Impl>();
  impl->opts = std::move(options);
  (void)world_threads(impl->opts.threads, &impl->threads);  // checked by check_options
  impl->name = std::move(name);
  impl->step = step;
  impl->rebuild_static();
  impl->init_topics();
  return std::unique_ptr<World>(new World(std::move(impl)));
}

const std::string& World::name() const { return impl_->name; }
int World::sensor_threads() const { return impl_->threads; }
Duration World::step_size() const { return impl_->step; }
double World::target_real_time_factor() const { return impl_->target_rtf; }
SimTime World::sim_time() const { return impl_->now; }
uint64_t World::iterations() const { return impl_->iterations; }
bool World::paused() const { return impl_->paused && !impl_->run_to; }
const std::vector<StaticShape>& World::static_shapes() const { return impl_->shapes; }
const std::map<std::string, Pose2D>& World::frames() const { return impl_->frames; }
const SphericalCoordinates& World::spherical_coordinates() const { return impl_->spherical; }

std::optional<Pose2D> World::frame(std::string_view name) const {
  auto it = impl_->frames.find(std::string(name));
  if (it == impl_->frames.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> World::static_models() const {
  std::vector<std::string> out;
  for (const auto& [n, p] : impl_->static_models) out.push_back(n);
  return out;
}

Status MapOptions::validate() const {
  if (!(resolution > 0) || !std::isfinite(resolution)) {
    return Status(StatusCode::kInvalidArgument,
                  "map resolution must be a finite number > 0 (metres per cell), got " +
                      std::to_string(resolution));
  }
  if (!(margin >= 0) || !std::isfinite(margin) || !(open_margin >= 0) ||
      !std::isfinite(open_margin)) {
    return Status(StatusCode::kInvalidArgument,
                  "map margin and open_margin must be finite numbers >= 0 (metres)");
  }
  if (max_cells < 1) return Status(StatusCode::kInvalidArgument, "map max_cells must be >= 1");
  if (bounds) {
    const MapBounds& b = *bounds;
    const bool finite_bounds = std::isfinite(b.min_x) && std::isfinite(b.min_y) &&
                               std::isfinite(b.max_x) && std::isfinite(b.max_y);
    if (!finite_bounds || !(b.min_x < b.max_x) || !(b.min_y < b.max_y)) {
      return Status(StatusCode::kInvalidArgument,
                    "map bounds must be finite with min_x < max_x and min_y < max_y (metres)");
    }
  }
  return Status();
}

MapBounds World::map_bounds(const MapOptions& options) const {
  if (options.bounds) return *options.bounds;
  const Impl& w = *impl_;
  Aabb ext;
  for (const auto& g : w.grounds) ext.add(Obb::make(g.pose, g.size_x, g.size_y).aabb());
  for (const auto& c : w.colliders) ext.add(c.bounds);
  for (const auto& [n, f] : w.frames) ext.add(Aabb{f.x, f.y, f.x, f.y});
  for (const auto& [n, v] : w.vehicles) ext.add(v.box.aabb());
  if (ext.empty()) ext = Aabb{0.0, 0.0, 0.0, 0.0};
  const bool bounded = !w.grounds.empty() && !w.unbounded_ground;
  const double m = bounded ? options.margin : std::max(options.margin, options.open_margin);
  return MapBounds{ext.min_x - m, ext.min_y - m, ext.max_x + m, ext.max_y + m};
}

OccupancyGrid World::occupancy_grid(double resolution, double padding) const {
  MapOptions o;
  o.resolution = resolution;
  o.margin = padding;
  return occupancy_grid(o);
}

OccupancyGrid World::occupancy_grid(const MapOptions& options) const {
  if (Status s = options.validate(); !s.ok())
    throw std::invalid_argument("occupancy_grid: " + s.message());
  const MapBounds b = map_bounds(options);
  OccupancyGrid g;
  double res = options.resolution;
  double w = 0, h = 0;
  // Coarsened until the cell count fits.
  while (true) {
    // Explicit bounds are the map's corner exactly; the world's extent snaps to the origin's
    // cell edges.
    g.origin_x = options.bounds ? b.min_x : std::floor(b.min_x / res) * res;
    g.origin_y = options.bounds ? b.min_y : std::floor(b.min_y / res) * res;
    w = std::max(1.0, std::ceil((b.max_x - g.origin_x) / res));
    h = std::max(1.0, std::ceil((b.max_y - g.origin_y) / res));
    const double cells = w * h;
    if (cells <= static_cast<double>(options.max_cells)) break;
    res *= std::max(1.01, std::sqrt(cells / static_cast<double>(options.max_cells)));
  }
  if (res != options.resolution) {
    impl_->warn("map of world '" + impl_->name + "': " + std::to_string(b.max_x - b.min_x) + " x " +
                std::to_string(b.max_y - b.min_y) + " m at " + std::to_string(options.resolution) +
                " m per cell would exceed " + std::to_string(options.max_cells) +
                " cells; coarsened to " + std::to_string(res) + " m per cell (" +
                std::to_string(static_cast<int64_t>(w)) + " x " +
                std::to_string(static_cast<int64_t>(h)) + ")");
  }
  g.resolution = res;
  g.width = static_cast<int>(w);
  g.height = static_cast<int>(h);
  g.cells.assign(static_cast<size_t>(g.width) * g.height, OccupancyGrid::kFree);
  const double gx1 = g.origin_x + g.width * res, gy1 = g.origin_y + g.height * res;
  for (const auto& c : impl_->colliders) {
    if (c.bounds.max_x < g.origin_x || c.bounds.min_x > gx1 || c.bounds.max_y < g.origin_y ||
        c.bounds.min_y > gy1) {
      continue;  // outside explicit bounds
    }
    const auto cell = [res](double v, double origin, int n) {
      return std::clamp(static_cast<int>(std::floor((v - origin) / res)), 0, n - 1);
    };
    const int x0 = cell(c.bounds.min_x, g.origin_x, g.width);
    const int x1 = cell(c.bounds.max_x, g.origin_x, g.width);
    const int y0 = cell(c.bounds.min_y, g.origin_y, g.height);
    const int y1 = cell(c.bounds.max_y, g.origin_y, g.height);
    for (int iy = y0; iy <= y1; ++iy) {
      for (int ix = x0; ix <= x1; ++ix) {
        const Obb cell_box{g.center_x(ix), g.center_y(iy), 1.0, 0.0, res / 2, res / 2};
        if (detail::overlap(cell_box, c) > 0) {
          g.cells[static_cast<size_t>(iy) * g.width + ix] = OccupancyGrid::kOccupied;
        }
      }
    }
  }
  return g;
}

Status World::spawn_vehicle(const std::string& name, Pose2D pose, const UgvParams& params) {
  Impl& w = *impl_;
  if (Status s = check_name(name); !s.ok()) return s;
  if (w.name_taken(name))
    return Status(StatusCode::kInvalidArgument, "spawn '" + name + "': the name is taken");
  if (!finite(pose))
    return Status(StatusCode::kInvalidArgument, "spawn '" + name + "': the pose is not finite");
  if (Status s = check_params(params); !s.ok())
    return Status(s.code(), "spawn '" + name + "': " + s.message());
  Vehicle v;
  v.name = name;
  v.id = w.next_vehicle_id;
  v.params = params;
  pose.yaw = detail::normalize_angle(pose.yaw);
  v.state.pose = pose;
  v.state.odometry = pose;
  v.chassis_name = name + "::" + params.chassis_link + "::" + params.chassis_collision;
  v.box = v.chassis(pose);
  v.radius = v.box.bounding_radius();
  std::vector<ContactInfo> touching;
  const double depth = w.probe(v, v.box, &touching);
  if (depth > 0) {
    std::string what;
    for (const auto& c : touching) {
      if (c.depth > 0) what += (what.empty() ? "" : ", ") + w.contact_name(c.key);
    }
    return Status(StatusCode::kInvalidArgument,
                  "spawn '" + name + "' at (" + std::to_string(pose.x) + ", " +
                      std::to_string(pose.y) + "): the chassis would overlap " + what);
  }
  ++w.next_vehicle_id;
  v.topic_odom = "/model/" + name + "/odometry";
  v.topic_imu = "/model/" + name + "/imu";
  v.topic_scan = "/model/" + name + "/scan";
  v.topic_contacts = "/model/" + name + "/contacts";
  v.topic_cmd_vel = "/model/" + name + "/cmd_vel";
  v.topic_navsat = "/model/" + name + "/navsat";
  v.frame_odom = params.odometry_frame.empty() ? name + "/odom" : params.odometry_frame;
  v.frame_imu = name + "/imu_link";
  v.entity_imu = name + "::" + params.chassis_link + "::" + params.imu_sensor;
  v.frame_lidar_link = name + "/lidar_link";
  v.frame_lidar = name + "::" + params.chassis_link + "::" + params.lidar_sensor;
  v.frame_navsat = name + "/navsat_link";
  const RandomSource root(w.opts.seed);
  v.lidar_rng = root.child("/vehicles/" + name + "/lidar/noise");
  v.odom_rng = root.child("/vehicles/" + name + "/odometry/noise");
  v.imu_rng = root.child("/vehicles/" + name + "/imu/noise");
  v.navsat_rng = root.child("/vehicles/" + name + "/navsat/noise");
  v.odom_scale_linear = 1.0 + v.odom_rng.normal(0.0, params.odometry_linear_scale_stddev);
  v.odom_scale_angular = 1.0 + v.odom_rng.normal(0.0, params.odometry_angular_scale_stddev);
  v.last_odom = v.last_imu = w.now;
  v.next_odom = next_on_grid(w.now, params.odometry_period);
  v.next_imu = next_on_grid(w.now, params.imu_period);
  v.next_scan = next_on_grid(w.now, params.lidar_period);
  v.next_navsat = next_on_grid(w.now, params.navsat_period);
  v.contacts = std::move(touching);
  v.state.touching = !v.contacts.empty();
  if (params.lidar && params.lidar_full_turn) {
    const double step = 2 * kPi / params.lidar_rays;
    for (int i = 0; i < params.lidar_rays; ++i) {
      v.ray_c.push_back(std::cos(-kPi + i * step));
      v.ray_s.push_back(std::sin(-kPi + i * step));
    }
  } else if (params.lidar) {
    const int n = params.lidar_rays;
    const double step = n > 1 ? (params.lidar_angle_max - params.lidar_angle_min) / (n - 1) : 0.0;
    for (int i = 0; i < n; ++i) {
      v.ray_c.push_back(std::cos(params.lidar_angle_min + i * step));
      v.ray_s.push_back(std::sin(params.lidar_angle_min + i * step));
    }
  }
  w.vehicles.emplace(name, std::move(v));
  w.rebuild_order();
  return Status();
}

Status World::spawn_vehicle(const std::string& name, std::string_view frame_name,
                            const UgvParams& params) {
  auto f = frame(frame_name);
  if (!f) {
    std::string known;
    for (const auto& [n, p] : impl_->frames) known += (known.empty() ? "" : ", ") + n;
    return Status(StatusCode::kNotFound,
                  "spawn '" + name + "': no frame '" + std::string(frame_name) + "' in world '" +
                      impl_->name + "' (frames: " + (known.empty() ? "none" : known) + ")");
  }
  return spawn_vehicle(name, *f, params);
}

Status World::spawn_static(const std::string& name, std::vector<StaticShape> shapes) {
  Impl& w = *impl_;
  if (Status s = check_name(name); !s.ok()) return s;
  if (w.name_taken(name))
    return Status(StatusCode::kInvalidArgument, "spawn '" + name + "': the name is taken");
  if (shapes.empty())
    return Status(StatusCode::kInvalidArgument, "spawn '" + name + "': no shapes");
  for (auto& s : shapes) {
    const bool ok = finite(s.pose) &&
                    (s.type == ShapeType::kBox
                         ? (finite(s.size_x) && finite(s.size_y) && s.size_x > 0 && s.size_y > 0)
                         : (finite(s.radius) && s.radius > 0));
    if (!ok) {
      return Status(StatusCode::kInvalidArgument, "spawn '" + name + "': shape '" + s.collision +
                                                      "' has a non-finite pose or a size not > 0");
    }
    s.model = name;
    if (s.link.empty()) s.link = "link";
    if (s.collision.empty()) s.collision = "collision";
    s.pose.yaw = detail::normalize_angle(s.pose.yaw);
    const Collider c = detail::make_collider(s, 0);
    for (const auto& [vn, v] : w.vehicles) {
      if (detail::overlap(v.box, c) > 0) {
        return Status(StatusCode::kInvalidArgument, "spawn '" + name + "': shape '" + s.collision +
                                                        "' would overlap vehicle '" + vn + "'");
      }
    }
  }
  w.static_models[name] = shapes.front().pose;
  for (auto& s : shapes) w.shapes.push_back(std::move(s));
  w.rebuild_static();
  return Status();
}

Status World::remove(const std::string& name) {
  Impl& w = *impl_;
  if (w.vehicles.erase(name) > 0) {
    w.rebuild_order();
    return Status();
  }
  if (w.static_models.erase(name) > 0) {
    const std::string nested = name + "::";
    std::erase_if(w.shapes, [&](const StaticShape& s) {
      return s.model == name || s.model.compare(0, nested.size(), nested) == 0;
    });
    w.rebuild_static();
    return Status();
  }
  return Status(StatusCode::kNotFound, "remove '" + name + "': no such model");
}

std::vector<std::string> World::vehicles() const {
  std::vector<std::string> out;
  for (const auto& [n, v] : impl_->vehicles) out.push_back(n);
  return out;
}

std::optional<VehicleState> World::vehicle(std::string_view name) const {
  auto it = impl_->vehicles.find(std::string(name));
  if (it == impl_->vehicles.end()) return std::nullopt;
  return it->second.state;
}

Status World::set_cmd_vel(const std::string& vehicle, Twist2D cmd) {
  auto it = impl_->vehicles.find(vehicle);
  if (it == impl_->vehicles.end()) {
    return Status(StatusCode::kNotFound, "cmd_vel for '" + vehicle + "': no such vehicle");
  }
  if (!finite(cmd.linear_x) || !finite(cmd.angular_z)) {
    const std::string m = "cmd_vel for '" + vehicle +
                          "' refused: linear.x=" + std::to_string(cmd.linear_x) +
                          " angular.z=" + std::to_string(cmd.angular_z) + " (NaN or infinite)";
    impl_->warn(m);
    return Status(StatusCode::kInvalidArgument, m);
  }
  it->second.state.command = cmd;
  return Status();
}

bool World::can_step() const {
  const Impl& w = *impl_;
  if (w.run_to) return true;
  return !w.paused || w.pending_steps > 0;
}

bool World::step() {
  Impl& w = *impl_;
  if (w.run_to) {
    if (w.now >= *w.run_to) {
      w.run_to.reset();
      w.paused = true;
      if (w.opts.sensors) w.emit_stats();
      return false;
    }
    w.advance();
    if (w.now >= *w.run_to) {
      w.run_to.reset();
      w.paused = true;
      if (w.opts.sensors) w.emit_stats();
    }
    return true;
  }
  if (!w.paused) {
    w.advance();
    return true;
  }
  if (w.pending_steps > 0) {
    --w.pending_steps;
    w.advance();
    return true;
  }
  return false;
}

int64_t World::step_n(int64_t n) {
  int64_t done = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!step()) break;
    ++done;
  }
  return done;
}

void World::pause(bool paused) {
  Impl& w = *impl_;
  w.paused = paused;
  w.run_to.reset();
  if (!paused) w.pending_steps = 0;
  if (w.opts.sensors) w.emit_stats();
}

void World::multi_step(uint64_t n) {
  Impl& w = *impl_;
  w.paused = true;
  w.run_to.reset();
  w.pending_steps += n;
  if (w.opts.sensors) w.emit_stats();
}

void World::run_to_sim_time(SimTime t) {
  Impl& w = *impl_;
  w.pending_steps = 0;
  if (t <= w.now) {
    w.run_to.reset();
    w.paused = true;
  } else {
    w.run_to = t;
  }
  if (w.opts.sensors) w.emit_stats();
}

Status World::set_physics(double real_time_factor) {
  if (std::isnan(real_time_factor) || real_time_factor <= 0) {
    return Status(StatusCode::kInvalidArgument,
                  "set_physics: the real-time factor must be > 0 (+inf for unpaced), got " +
                      std::to_string(real_time_factor));
  }
  impl_->target_rtf = real_time_factor;
  if (impl_->opts.sensors) impl_->emit_stats();
  return Status();
}

WorldStatistics World::statistics() const { return impl_->stats(); }

Status World::handle_message(std::string_view topic, std::string_view type,
                             std::string_view payload) {
  Impl& w = *impl_;
  if (topic == w.topic_control) {
    if (type != msgs::kWorldControl) {
      return Status(StatusCode::kInvalidArgument, std::string(topic) + ": expects " +
                                                      std::string(msgs::kWorldControl) + ", got " +
                                                      std::string(type));
    }
    auto m = msgs::parse<ignition::msgs::WorldControl>(payload);
    if (!m)
      return Status(StatusCode::kInvalidArgument, std::string(topic) + ": payload does not parse");
    if (m->has_reset() || m->seed() != 0) {
      return Status(StatusCode::kInvalidArgument,
                    std::string(topic) +
                        ": reset and seed are not supported (the seed is fixed when the world "
                        "is loaded); nothing was changed");
    }
    if (m->multi_step() > 0 || m->step()) {
      multi_step(m->multi_step() > 0 ? m->multi_step() : 1);
    } else if (m->has_run_to_sim_time()) {
      run_to_sim_time(msgs::from_time(m->run_to_sim_time()));
    } else {
      pause(m->pause());
    }
    return Status();
  }
  if (topic == w.topic_create || topic == w.topic_remove) {
    const bool create = topic == w.topic_create;
    const std::string_view expected = create ? msgs::kEntityFactory : msgs::kEntity;
    Status s;
    if (type != expected) {
      s = Status(StatusCode::kInvalidArgument, std::string(topic) + ": expects " +
                                                   std::string(expected) + ", got " +
                                                   std::string(type) + "; nothing was changed");
    } else {
      s = create ? create_from_bus(payload) : remove_from_bus(payload);
    }
    if (!s.ok()) w.warn(s.message());
    return s;
  }
  constexpr std::string_view kPrefix = "/model/";
  constexpr std::string_view kSuffix = "/cmd_vel";
  if (topic.size() > kPrefix.size() + kSuffix.size() && topic.starts_with(kPrefix) &&
      topic.ends_with(kSuffix)) {
    const std::string vehicle(
        topic.substr(kPrefix.size(), topic.size() - kPrefix.size() - kSuffix.size()));
    if (type != msgs::kTwist) {
      return Status(StatusCode::kInvalidArgument, std::string(topic) + ": expects " +
                                                      std::string(msgs::kTwist) + ", got " +
                                                      std::string(type));
    }
    auto m = msgs::parse<ignition::msgs::Twist>(payload);
    if (!m)
      return Status(StatusCode::kInvalidArgument, std::string(topic) + ": payload does not parse");
    return set_cmd_vel(vehicle, Twist2D{m->linear().x(), m->angular().z()});
  }
  return Status(StatusCode::kInvalidArgument,
                "world '" + w.name + "' takes no input on " + std::string(topic));
}

Status World::create_from_bus(std::string_view payload) {
  const Impl& w = *impl_;
  const std::string where = w.topic_create + ": ";
  auto m = msgs::parse<ignition::msgs::EntityFactory>(payload);
  if (!m)
    return Status(StatusCode::kInvalidArgument, where + "the EntityFactory payload does not parse");
  if (m->has_model() || m->has_light() || !m->clone_name().empty()) {
    return Status(StatusCode::kInvalidArgument,
                  where +
                      "only `sdf` (SDF text or an <include> of a robot model) or `sdf_filename` "
                      "(a robot model) are supported, not `model`, `light` or `clone_name`; "
                      "nothing was spawned");
  }
  const std::string& file = m->sdf_filename();
  const std::string& text = m->sdf();
  // A vehicle: a robot model file (sdf_filename, or an <include> of one in `sdf`), resolved on
  // the resource path; nothing at all is the scenario table's default model.
  std::optional<std::string> vehicle_uri;
  std::string include_name;
  std::optional<Pose2D> include_pose;
  if (!file.empty()) {
    vehicle_uri = file;
  } else if (text.empty()) {
    vehicle_uri = std::string(util::kDefaultRobotModel);
  } else if (std::string uri; detail::model_include(text, &uri, &include_name, &include_pose)) {
    vehicle_uri = uri;
  }
  std::optional<VehicleParams> vehicle_params;
  if (vehicle_uri) {
    RobotModel model = load_robot_model(*vehicle_uri, std::filesystem::current_path(),
                                        model_search_path());
    if (!model.ok()) {
      std::string all;
      for (const auto& e : model.errors) all += (all.empty() ? "" : "; ") + e;
      return Status(StatusCode::kInvalidArgument,
                    where + "model '" + *vehicle_uri + "': " + all + "; nothing was spawned");
    }
    for (const auto& warning : model.warnings) impl_->warn(where + warning);
    vehicle_params = model.params;
  }
  const bool ugv = vehicle_params.has_value();
  // The pose asked for, in the world frame (nullopt: the SDF's own).
  std::optional<Pose2D> pose;
  if (m->has_pose()) {
    const auto& p = m->pose();
    const double q[] = {p.orientation().x(), p.orientation().y(), p.orientation().z(),
                        p.orientation().w()};
    bool ok = finite(p.position().x()) && finite(p.position().y()) && finite(p.position().z());
    for (double v : q) ok = ok && finite(v);
    if (!ok)
      return Status(StatusCode::kInvalidArgument,
                    where + "the pose is not finite; nothing was spawned");
    pose = Pose2D{p.position().x(), p.position().y(), msgs::yaw_of(p.orientation())};
  } else if (include_pose) {
    if (!finite(*include_pose)) {
      return Status(StatusCode::kInvalidArgument,
                    where + "the include's <pose> is not 3 or 6 finite numbers");
    }
    pose = include_pose;
  }
  if (!pose && ugv) pose = Pose2D{};
  if (const std::string& rel = m->relative_to(); !rel.empty() && rel != "world") {
    const auto f = frame(rel);
    if (!f) {
      return Status(StatusCode::kNotFound,
                    where + "relative_to '" + rel + "': no such frame in world '" + w.name + "'");
    }
    const Pose2D local = pose.value_or(Pose2D{});
    const double c = std::cos(f->yaw), sn = std::sin(f->yaw);
    pose = Pose2D{f->x + c * local.x - sn * local.y, f->y + sn * local.x + c * local.y,
                  f->yaw + local.yaw};
  }
  if (ugv) {
    const std::string name = !m->name().empty() ? m->name() : include_name;
    if (name.empty())
      return Status(StatusCode::kInvalidArgument,
                    where + "a UGV needs a `name`; nothing was spawned");
    Status s = spawn_vehicle(name, *pose, *vehicle_params);
    if (!s.ok()) s = Status(s.code(), where + s.message());
    return s;
  }
  const std::string source = w.topic_create + " sdf";
  Pose2D given = pose.value_or(Pose2D{});
  detail::ModelOutcome model = detail::load_model_sdf(text, source, pose ? &given : nullptr,
                                                      w.opts.plane_z_min, w.opts.plane_z_max);
  if (!model.errors.empty()) {
    std::string all;
    for (const auto& e : model.errors) all += (all.empty() ? "" : "; ") + e;
    return Status(StatusCode::kInvalidArgument, where + "refused: " + all);
  }
  const std::string name = !m->name().empty() ? m->name() : model.name;
  if (model.shapes.empty()) {
    return Status(StatusCode::kInvalidArgument,
                  where + "model '" + name +
                      "' has no box, cylinder or sphere collision to simulate; nothing was "
                      "spawned");
  }
  Status s = spawn_static(name, std::move(model.shapes));
  if (!s.ok()) return Status(s.code(), where + s.message());
  impl_->static_models[name] = model.pose;
  for (const auto& warning : model.warnings) impl_->warn(where + warning);
  return s;
}

Status World::remove_from_bus(std::string_view payload) {
  const std::string where = impl_->topic_remove + ": ";
  auto m = msgs::parse<ignition::msgs::Entity>(payload);
  if (!m) return Status(StatusCode::kInvalidArgument, where + "the Entity payload does not parse");
  if (m->name().empty()) {
    return Status(StatusCode::kInvalidArgument,
                  where + "the Entity has no `name` (models are removed by name)");
  }
  Status s = remove(m->name());
  if (!s.ok()) s = Status(s.code(), where + s.message());
  return s;
}

std::vector<std::string> World::input_topics() const {
  std::vector<std::string> out{impl_->topic_control, impl_->topic_create, impl_->topic_remove};
  for (const auto& [n, v] : impl_->vehicles) out.push_back(v.topic_cmd_vel);
  return out;
}

std::vector<WorldMessage> World::take_messages() {
  std::vector<WorldMessage> out;
  out.swap(impl_->outbox);
  return out;
}

uint64_t World::warning_count() const { return impl_->warnings; }
int64_t World::raycast_wall_ns() const { return impl_->raycast_ns; }

}  // namespace fieldproof::world
