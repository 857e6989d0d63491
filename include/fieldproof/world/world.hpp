// The embedded world: an SDF world file's static geometry and physics step, reference UGVs
// (differential drive, chassis contact sensor, wheel odometry, 2-D lidar, IMU) and world control
// mirroring Gazebo's WorldControl. Planar (x, y, yaw) kinematics stepped at the physics step in
// integer nanoseconds; single-threaded and deterministic: same file, same seed, same calls ⇒ the
// same message stream, bit for bit. Transport-free: outputs go to an outbox of WorldMessages, and
// inputs arrive by calls (or handle_message for bus payloads), so a lock-step glue is thin.
//
//   WorldOptions options;
//   options.seed = 7;
//   auto loaded = World::load("examples/worlds/depot.sdf", options);
//   if (!loaded.world) { for (auto& e : loaded.errors) std::puts(e.c_str()); return 2; }
//   World& w = *loaded.world;
//   if (auto s = w.spawn_vehicle("ugv1", "dock"); !s.ok()) std::puts(s.message().c_str());
//   (void)w.set_cmd_vel("ugv1", {0.5, 0.2});
//   w.step_n(1000);                                      // one simulated second at 1 ms
//   for (const WorldMessage& m : w.take_messages()) ...; // topic, stamp, type, payload
//
// Sensor rates (simulation time, phase 0 on the world's time grid, first output one period after
// spawn at the earliest): /clock 100 Hz, /world/<w>/stats 5 Hz (and at once on every control
// change), /world/<w>/pose/info 10 Hz (every vehicle then every static model, each by name),
// and each vehicle's sensors at its model's rates (VehicleParams; the reference UGV's:
// /model/<n>/odometry 50 Hz, /model/<n>/imu 100 Hz, /model/<n>/scan 10 Hz, no navsat);
// /model/<n>/contacts whenever the set of touching collisions changes (an empty message when
// contact ends) and every 100 ms while touching. Within one step the order is: clock, stats,
// poses, then each vehicle by name with odometry, imu, scan, contacts, navsat.
//
// Lidar convention (REP 117, as Gazebo): a ray that hits nothing within range_max reports +inf;
// a hit closer than range_min reports -inf; a hit's range gets Gaussian noise and is clamped into
// [range_min, range_max]. Rays see static shapes whose vertical extent overlaps the vehicles'
// plane (see WorldOptions::plane_z_*), and the chassis of other vehicles, never their own.
//
// Contacts: the chassis (a box) against static shapes and other chassis. A move that would deepen
// a penetration is refused and the vehicle stopped (velocity zero): no penetration growth. A
// vehicle is "touching" when a move was refused this step or its chassis, grown by
// contact_margin, overlaps something.
//
// Thread safety: none; one thread drives a World.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fieldproof/time/duration.hpp"
#include "fieldproof/util/status.hpp"
#include "fieldproof/world/geometry.hpp"
#include "fieldproof/world/occupancy_grid.hpp"

namespace fieldproof::world {

// The result of a call a user can get wrong: the project's one Status (util/status.hpp), ok or
// a code and a message saying what and why.
using ::fieldproof::Status;
using ::fieldproof::StatusCode;

// One output of the world: a bus message. Payload is the protobuf encoding of `type`
// (fieldproof/msgs/types.hpp names, e.g. "ignition.msgs.LaserScan").
struct WorldMessage {
  std::string topic;
  SimTime stamp;
  std::string_view type;
  std::string payload;
};

struct Twist2D {
  double linear_x = 0.0;   // m/s, forward
  double angular_z = 0.0;  // rad/s, counter-clockwise
};

// What the world simulates of a vehicle: its chassis footprint, differential drive and sensors.
// A run reads them from the vehicle's SDF model file (robot_model.hpp); the defaults here are
// the reference UGV's (examples/models/fieldproof_ugv, a test holds the two equal), for tests and
// tools that spawn one without a file. All numbers must be finite and non-negative.
struct VehicleParams {
  double length = 0.6;             // chassis footprint along x (m)
  double width = 0.4;              // chassis footprint along y (m)
  double height = 0.3;             // chassis height (m), for information
  double max_linear = 1.0;         // |v| limit (m/s)
  double max_angular = 1.5;        // |w| limit (rad/s)
  double max_linear_accel = 1.0;   // |dv/dt| limit (m/s²); +inf for none
  double max_angular_accel = 3.0;  // |dw/dt| limit (rad/s²); +inf for none
  // Lidar (at the chassis centre). A full turn: angle_min = -pi, step = 2 pi / rays. Otherwise
  // (lidar_full_turn false) rays from lidar_angle_min to lidar_angle_max inclusive, step
  // (max - min) / (rays - 1), as Gazebo's.
  bool lidar = true;
  int lidar_rays = 360;
  bool lidar_full_turn = true;
  double lidar_angle_min = -3.141592653589793;
  double lidar_angle_max = 3.141592653589793;
  double lidar_range_min = 0.12;
  double lidar_range_max = 12.0;
  double lidar_noise_stddev = 0.01;
  Duration lidar_period = milliseconds(100);
  // Wheel odometry, in the world frame from the spawn pose (the stack starts well localised and
  // drifts from there): noise proportional to the distance travelled since the last output, plus
  // scale errors drawn once at spawn (the drift). Twist is in the body frame.
  Duration odometry_period = milliseconds(20);
  double odometry_linear_noise = 0.02;          // stddev as a fraction of the distance travelled
  double odometry_angular_noise = 0.02;         // stddev as a fraction of the angle turned
  double odometry_linear_scale_stddev = 0.01;   // drift: wheel radius error
  double odometry_angular_scale_stddev = 0.02;  // drift: track width error
  std::string odometry_frame;        // header frame_id; empty: "<vehicle>/odom"
  std::string odometry_child_frame;  // header child_frame_id; empty: none
  // IMU.
  bool imu = true;
  Duration imu_period = milliseconds(10);
  double imu_angular_velocity_stddev = 0.002;    // rad/s
  double imu_linear_acceleration_stddev = 0.02;  // m/s²
  // Contacts of the chassis (the physics refuses penetration either way).
  bool contact = true;
  // Satellite navigation (/model/<v>/navsat), from the world's <spherical_coordinates>.
  bool navsat = false;
  Duration navsat_period = seconds(1);
  double navsat_horizontal_stddev = 0.0;  // m
  double navsat_vertical_stddev = 0.0;    // m
  double navsat_velocity_stddev = 0.0;    // m/s
  // Names in messages: contacts "<v>::<chassis_link>::<chassis_collision>", the IMU entity
  // "<v>::<chassis_link>::<imu_sensor>", the scan's frame "<v>::<chassis_link>::<lidar_sensor>".
  std::string chassis_link = "chassis";
  std::string chassis_collision = "collision";
  std::string lidar_sensor = "lidar";
  std::string imu_sensor = "imu";
};
using UgvParams = VehicleParams;  // the name before robot models

// Where the world is on the Earth (SDF <spherical_coordinates>): navsat's reference.
struct SphericalCoordinates {
  double latitude_deg = 0.0;
  double longitude_deg = 0.0;
  double elevation = 0.0;    // m
  double heading_rad = 0.0;  // the world's x axis, counter-clockwise from east
};

// A region where satellite navigation has no fix (under a roof, in a tunnel, between tall racks):
// an axis-aligned rectangle of the world frame. A scenario's `gps_denied:` list gives them
// (docs/scenarios.md). While a vehicle's chassis centre (its antenna) is inside one, edges
// included, each /model/<v>/navsat output reports no fix: latitude, longitude, altitude and the
// three velocities are NaN (ignition.msgs.NavSat has no status field), still at the sensor's rate
// and with its noise drawn as always, so the readings after the region do not depend on it.
struct GpsDeniedRegion {
  std::string name;  // for messages; may be empty
  MapBounds bounds;  // finite, min_x < max_x and min_y < max_y
};

struct WorldOptions {
  uint64_t seed = 0;  // root of every sensor's noise (/vehicles/<name>/<sensor>/noise)
  // Wall clock for the measured real-time factor (a fieldproof::WallNow, e.g.
  // SystemClock::wall_now()). Unset: the factor reads 0.
  std::function<SimTime()> wall_now;
  // Warnings met while running (a refused command, ...). Unset: they are only counted.
  std::function<void(const std::string&)> on_warning;
  // Messages as they are produced. Unset: they wait in the outbox for take_messages().
  std::function<void(WorldMessage&&)> sink;
  // false: no sensor messages at all (physics only; benchmarks' baseline).
  bool sensors = true;
  Duration clock_period = milliseconds(10);
  Duration stats_period = milliseconds(200);
  Duration pose_period = milliseconds(100);
  Duration contact_repeat_period = milliseconds(100);
  double contact_margin = 0.001;  // m: closer than this counts as touching
  // Static shapes whose vertical extent overlaps [plane_z_min, plane_z_max] are obstacles;
  // others (ground slabs, overhead beams) are left out with a warning.
  double plane_z_min = 0.02;
  double plane_z_max = 0.5;
  // Uniform broad-phase grid cell over static shapes (m); 2 m measured fastest for the depot.
  double grid_cell = 2.0;
  // Large worlds: libsdformat 12 spends about 30 ms and 2.3 MB on each <model> it reads. A world
  // with at least this many plain top-level models (static box/cylinder/sphere/plane collisions,
  // poses without relative_to, nothing referring to them) has those read directly instead, the
  // rest by sdformat as always; the result is the same (world_bench measures the load). 0: never.
  // Errors in such a world name the file and line as usual; a relative <include> URI in it is
  // resolved against the working directory, not the file's.
  size_t direct_read_threshold = 64;
  // Where navsat has no fix (above); checked by load and empty (a bad region is refused).
  std::vector<GpsDeniedRegion> gps_denied;
  // Threads of the sensor pass (1 to 64; anything else is refused by load and empty). 0: the
  // environment's FIELDPROOF_WORLD_THREADS (1 to 64), else min(hardware threads, 4). The message
  // stream is the same whatever the count (docs/world.md "Threads").
  int threads = 0;
};

// What World::occupancy_grid covers and how finely. The world's extent is the union of its
// ground planes of stated size (<plane><size>), every static collision shape, every world
// <frame> and every vehicle's chassis; the map is that extent plus `margin` on each side, or, in
// a world whose ground is not bounded (no plane with a <size>: an infinite plane or none), plus
// `open_margin` (free space assumed around what stands in it). A world with nothing at all is
// open_margin around the origin. Such a map's cells are aligned to the world's origin (the grid's
// origin is a multiple of the resolution), so two maps of one world at one resolution share cell
// edges; a map of explicit bounds starts exactly at their lower corner (min_x, min_y) and covers
// them with whole cells (its last row and column may reach past max_x, max_y).
struct MapOptions {
  double resolution = 0.05;   // metres per cell (> 0, finite)
  double margin = 0.5;        // metres added around a bounded world's extent (>= 0, finite)
  double open_margin = 10.0;  // metres added around an unbounded world's extent (>= 0, finite)
  // Explicit bounds (a scenario's map section): the map covers exactly these, whatever the
  // world's extent (margins unused). Unset: the world's extent.
  std::optional<MapBounds> bounds;
  // At most this many cells (>= 1): a larger map is coarsened (the resolution grown until it
  // fits) and WorldOptions::on_warning says so, never an error. 16 M cells is a 200 m square at
  // 5 cm; the reference stack's planner keeps about 17 bytes per cell.
  int64_t max_cells = 16'000'000;

  // Ok, or which field is wrong and why.
  Status validate() const;
};

struct WorldStatistics {
  bool paused = false;
  SimTime sim_time;
  uint64_t iterations = 0;
  double real_time_factor = 0.0;  // measured since the previous stats message (wall clock)
  double target_real_time_factor = 1.0;
  Duration step_size;
  int model_count = 0;  // static models + vehicles
};

struct VehicleState {
  Pose2D pose;       // ground truth
  Twist2D velocity;  // ground truth, after limits
  Twist2D command;   // last accepted command
  Pose2D odometry;   // integrated from noisy wheel odometry
  bool touching = false;
};

class World;

struct LoadResult {
  std::unique_ptr<World> world;       // null when errors is non-empty
  std::vector<std::string> errors;    // "file:line: message" where sdformat knows the line
  std::vector<std::string> warnings;  // unsupported geometry etc., each naming what and where
};

class World {
 public:
  // Reads an SDF world file (libsdformat). The first <world> is used.
  static LoadResult load(const std::string& path, WorldOptions options = {});
  // The same from SDF text; `name_for_errors` stands for the file name in messages.
  static LoadResult load_string(const std::string& sdf, WorldOptions options = {},
                                const std::string& name_for_errors = "<string>");
  // An empty world (no static geometry): for tests and tools.
  static std::unique_ptr<World> empty(std::string name, Duration step, WorldOptions options = {});

  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  const std::string& name() const;
  Duration step_size() const;
  double target_real_time_factor() const;
  SimTime sim_time() const;
  uint64_t iterations() const;
  bool paused() const;

  // --- Static geometry and frames ---
  const std::vector<StaticShape>& static_shapes() const;
  // World-level <frame>s resolved to the world frame, by name.
  const std::map<std::string, Pose2D>& frames() const;
  // The world's <spherical_coordinates> (navsat's reference; the origin of the Earth if none).
  const SphericalCoordinates& spherical_coordinates() const;
  std::optional<Pose2D> frame(std::string_view name) const;
  // Names of the static models, sorted.
  std::vector<std::string> static_models() const;
  // The map a stack plans on: the static shapes rasterised over the world's extent (see
  // MapOptions), free where nothing stands. Never empty. Throws std::invalid_argument (with
  // validate()'s message) for bad options only; a world too large is coarsened, not refused.
  OccupancyGrid occupancy_grid(const MapOptions& options) const;
  // The same with MapOptions{resolution, margin = padding}.
  OccupancyGrid occupancy_grid(double resolution, double padding = 0.5) const;
  // The extent occupancy_grid covers by default: the world's, grown by the margin that applies.
  MapBounds map_bounds(const MapOptions& options = {}) const;

  // --- Models at run time ---
  // A reference UGV at `pose` or at a world frame. Refused (nothing changes) when the name is
  // taken or invalid (empty, '/', whitespace), the pose is not finite, the frame is unknown, or
  // the chassis would overlap a static shape or another vehicle.
  Status spawn_vehicle(const std::string& name, Pose2D pose, const UgvParams& params = {});
  Status spawn_vehicle(const std::string& name, std::string_view frame,
                       const UgvParams& params = {});
  // A static model of shapes (their model field is replaced by `name`). Refused when the name is
  // taken, a shape is degenerate or not finite, or it would overlap a vehicle.
  Status spawn_static(const std::string& name, std::vector<StaticShape> shapes);
  // Removes a vehicle or a static model. Unknown names are an error.
  Status remove(const std::string& name);
  std::vector<std::string> vehicles() const;  // sorted
  std::optional<VehicleState> vehicle(std::string_view name) const;

  // cmd_vel. NaN or infinite values are refused (warning, state unchanged); finite values beyond
  // the limits are accepted and clamped by the drive.
  Status set_cmd_vel(const std::string& vehicle, Twist2D cmd);

  // --- Stepping and control (Gazebo's WorldControl) ---
  // One server iteration: advances one physics step when running, or when steps were asked for
  // by multi_step / run_to_sim_time while paused. Returns whether it advanced.
  bool step();
  // Up to n iterations of step(); returns how many advanced (fewer when the world pauses).
  int64_t step_n(int64_t n);
  // True when step() would advance.
  bool can_step() const;
  void pause(bool paused);
  // Pauses the world (a running one first) and lets the next n step() calls advance; it is
  // paused again after them (Gazebo's multi_step; the scenario's sim.step).
  void multi_step(uint64_t n);
  // Runs (even from paused) until sim time >= t, then pauses. A time not ahead pauses at once.
  void run_to_sim_time(SimTime t);
  // Target real-time factor, for the pace regulator that drives step(); > 0 and finite, or
  // +inf meaning unpaced.
  Status set_physics(double real_time_factor);

  WorldStatistics statistics() const;

  // --- Bus side ---
  // Handles an incoming message: /model/<n>/cmd_vel (ignition.msgs.Twist),
  // /world/<w>/control (ignition.msgs.WorldControl: multi_step or step, else run_to_sim_time,
  // else pause; reset and seed are refused), /world/<w>/create and /world/<w>/remove (below).
  // Anything else, or a payload that does not parse, is an error.
  //
  // /world/<w>/create takes an ignition.msgs.EntityFactory, as Gazebo's create service:
  //  * a vehicle from a robot model (robot_model.hpp) when `sdf_filename` names one (`ugv`,
  //    model://NAME, a path against the working directory), when `sdf` is just an
  //    <include><uri>...</uri></include> of one (with or without an <sdf> root; its <name> and
  //    <pose> are used when the factory's are unset), or the default model
  //    (util::kDefaultRobotModel) when `sdf` and `sdf_filename` are both empty; a model that does
  //    not load is refused;
  //  * otherwise a static model given as SDF text in `sdf` (one <model>; box, cylinder and sphere
  //    collisions, read like the world file's models). Any collision the world cannot simulate
  //    refuses the whole model.
  //  The name is the factory's `name`, else the include's or the <model>'s (a UGV needs one).
  //  The pose is the factory's `pose` (overriding the SDF's), else the SDF's, else the origin;
  //  `relative_to` may name a world <frame> (the pose, or the frame itself, is then taken in
  //  it). `model`, `light`, `clone_name` and `allow_renaming` are not supported: a
  //  taken name is refused.
  // /world/<w>/remove takes an ignition.msgs.Entity and removes the model of that `name`.
  // Refusals (a name taken or unknown, a spawn inside an obstacle, unsupported geometry, SDF that
  // does not parse, a pose not finite) change nothing; they are counted in warning_count() and
  // passed to WorldOptions::on_warning, and the returned Status says why.
  // A model spawned this way is in the next step's physics and outputs; a vehicle's sensors
  // publish on their period grid from then on, and a removed one's stop at once.
  Status handle_message(std::string_view topic, std::string_view type, std::string_view payload);
  // Topics the world takes input on (for subscriptions): control, create, remove (in that order),
  // then every vehicle's cmd_vel by name.
  std::vector<std::string> input_topics() const;
  // Messages produced since the last call (when no sink is set), in production order.
  std::vector<WorldMessage> take_messages();

  uint64_t warning_count() const;
  // Threads of the sensor pass (WorldOptions::threads resolved at load).
  int sensor_threads() const;
  // Wall time spent ray casting (ns, via WorldOptions::wall_now; 0 without it): the benchmark's
  // share.
  int64_t raycast_wall_ns() const;

  struct Impl;

 private:
  explicit World(std::unique_ptr<Impl> impl);
  Status create_from_bus(std::string_view payload);
  Status remove_from_bus(std::string_view payload);
  std::unique_ptr<Impl> impl_;
};

}  // namespace fieldproof::world
