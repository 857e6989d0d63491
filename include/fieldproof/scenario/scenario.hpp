// A scenario: the YAML file a user writes, loaded and validated into plain structs.
//
//   ValidationResult r = load_scenario_file("examples/scenarios/depot_patrol.yaml");
//   if (!r.ok()) { std::fputs(r.format_errors().c_str(), stderr); return 2; }
//   const Scenario& s = *r.scenario;
//   for (const auto& e : validate_against_world(s, world_physics_step)) ...   // step_s etc.
//
// Every error names file:line:column (1-based), the field path (`timeline[2].at`) and what is
// accepted; all errors of a file are collected, not only the first. Loading never throws for bad
// input (a missing file, a YAML syntax error, a wrong type are errors in the result).
// Durations are exact int64 nanoseconds (parse_duration). Parameter tables: registry.hpp.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fieldproof/scenario/registry.hpp"
#include "fieldproof/time/duration.hpp"
#include "fieldproof/util/example_defaults.hpp"

namespace fieldproof::scenario {

// A position in the scenario file, 1-based; 0 when unknown (a default).
struct SourcePos {
  int line = 0;
  int column = 0;
};

// One problem found in a scenario.
struct Diagnostic {
  std::string file;  // as given to the loader
  SourcePos pos;
  std::string path;     // the field path: "time.step_s", "timeline[2].at", "" for the document
  std::string message;  // what is wrong and what is accepted
  // "file:line:column: path: message" (parts that are unknown are left out).
  std::string to_string() const;
};

// A place in the world: a named frame of the world file, or x, y and an optional z and yaw.
struct Placement {
  std::string frame;  // non-empty: a frame (resolved by the world)
  double x = 0;
  double y = 0;
  std::optional<double> z;    // metres: a spawned shape's centre height; vehicles drive on z = 0
  std::optional<double> yaw;  // radians
  SourcePos pos;
  bool is_frame() const { return !frame.empty(); }
};

// A validated parameter value, keeping where it was written. Maps keep the file's key order.
struct ParamValue {
  enum class Kind { kNull, kBool, kInteger, kNumber, kString, kDuration, kPlacement, kList, kMap };
  Kind kind = Kind::kNull;
  bool boolean = false;
  int64_t integer = 0;
  double number = 0;   // kNumber; also set for kInteger
  std::string string;  // kString, kName, kEnum, kCondition values
  Duration duration;
  Placement placement;
  std::vector<ParamValue> items;  // kList items, kMap values
  std::vector<std::string> keys;  // kMap keys, parallel to items
  SourcePos pos;
  bool defaulted = false;  // filled in from the table's default, not written in the file

  // kMap: the value of `key`, or nullptr.
  const ParamValue* get(std::string_view key) const;
  bool has(std::string_view key) const { return get(key) != nullptr; }
};

enum class TimeMode { kSim, kRealtime, kLockstep };
enum class OnDrift { kFail, kWarn };

std::string_view to_string(TimeMode m);
std::string_view to_string(OnDrift d);

// The `time` section (docs/scenarios.md), with its defaults.
struct TimeSection {
  TimeMode mode = TimeMode::kSim;
  std::optional<double> rtf;  // as written; nullopt when absent or null
  double tolerance = 0.1;
  Duration max_drift = seconds(1);
  OnDrift on_drift = OnDrift::kFail;
  Duration step = milliseconds(100);
  Duration ack_timeout = seconds(30);
  Duration timeout = minutes(10);
  SourcePos pos;       // the section (or the document when absent)
  SourcePos step_pos;  // time.step_s (for validate_against_world)

  // The real-time factor the run targets: rtf when given; otherwise the world's own factor in sim
  // mode and 1.0 in realtime and lockstep.
  double target_rtf(double world_rtf) const;
};

struct Stack {
  enum class Kind { kNone, kPlugin, kCommand };
  Kind kind = Kind::kNone;
  std::string plugin;                  // kPlugin
  std::vector<std::string> command;    // kCommand: argv
  std::vector<std::string> arguments;  // appended to argv
  std::string cwd;                     // kCommand: as written ("" = the run directory)
  std::vector<std::pair<std::string, std::string>> env;  // kCommand: added, in the file's order
  SourcePos pos;                                         // the stack section
  SourcePos program_pos;                                 // plugin or command[0]
};

struct Vehicle {
  std::string name;
  std::string model{util::kDefaultRobotModel};  // the table's default
  SourcePos model_pos;  // of `model` (the vehicle's when absent)
  Placement spawn;
  Stack stack;
  ParamValue parameters;  // kMap of scalars (empty map when absent)
  SourcePos pos;
};

// A signal: a topic field or a metric of the run (sim_time, rtf, x, y, z, yaw, distance_to).
struct Signal {
  std::string topic;
  std::string field;
  std::string message_type;
  std::string metric;
  std::optional<Placement> target;
  std::string vehicle;
};

struct WhenTrigger {
  Signal signal;
  std::string condition;  // over `value`; compiled by the validator
  SourcePos pos;
};

struct TimelineEntry {
  std::string action;  // navigate_to_pose, cmd_vel, sim.pause, sim.resume, sim.step, ...
  std::string name;    // as written; may be empty
  std::string label;   // name, or <action>@<at>s
  std::string vehicle;
  Duration at;  // 0 when no trigger is written
  bool at_given = false;
  std::optional<Duration> every;
  std::optional<std::string> after;
  std::optional<WhenTrigger> when;
  std::optional<Duration> until;
  ParamValue params;  // kMap: the action's own keys, with defaults filled in
  SourcePos pos;
  std::string path;  // "timeline[2]"
};

enum class OnFail { kContinue, kAbort };

struct AssertionSpec {
  std::string name;
  std::string type;
  OnFail on_fail = OnFail::kContinue;
  std::string vehicle;  // empty when the type has none or it was not given
  std::optional<Duration> after;
  std::optional<Duration> within;
  ParamValue params;  // kMap: every key of the type (defaults filled in), not name/type/on_fail
  SourcePos pos;
  std::string path;  // "assertions[3]"
};

struct KpiSpec {
  std::string name;
  std::string type;
  ParamValue params;
  SourcePos pos;
  std::string path;
};

struct Outputs {
  bool record = false;
  std::string record_file = "recording.mcap";  // under recording/ of the run directory
  std::vector<std::string> topics;             // empty: everything
};

// Where the run's seed came from, for the record.
enum class SeedSource { kDefault, kScenario, kCommandLine };
std::string_view to_string(SeedSource s);

constexpr int64_t kMaxSeed = 2147483647;  // 2^31 - 1: the simulator's launcher takes a C int

// The `map:` section: what the map a stack plans on covers and how finely. Absent: the world's
// extent at 5 cm (coarsened with a warning when that would exceed 16 M cells).
struct MapSection {
  bool given = false;
  struct Bounds {
    double x_min = 0, x_max = 0, y_min = 0, y_max = 0;
  };
  std::optional<Bounds> bounds;  // absent: the world's extent
  double resolution = 0.05;      // metres per cell, > 0
  SourcePos pos;                 // the section
  SourcePos resolution_pos;
};

// The most cells a scenario's map may have (1e8: about 1.7 GB for the reference stack's planner).
constexpr double kMaxMapCells = 1e8;

// One region of the `gps_denied:` list: where the navsat sensor reports no fix.
struct GpsDeniedRegion {
  std::string name;                                   // may be empty
  double x_min = 0, x_max = 0, y_min = 0, y_max = 0;  // x_min < x_max, y_min < y_max
  SourcePos pos;
};

// The `network` section (docs/network.md): a ground station and radio links in simulated time.
struct NetworkLink {
  std::string name;     // as written, or <ground>_<vehicle> / <vehicle>_<peer>
  std::string vehicle;  // one end
  std::string peer;     // the other: a vehicle, or "" for the ground station
  Duration latency = milliseconds(20);
  Duration jitter = Duration::zero();
  double loss = 0.0;
  std::optional<double> bandwidth_kbps;
  std::optional<double> range_m;
  std::optional<double> degrade_from_m;
  // A vehicle-to-vehicle link's topics, relative to /model/<vehicle>/: each end's crosses to the
  // other, arriving as /model/<receiver>/peers/<sender>/<topic> (docs/network.md).
  std::vector<std::string> topics;
  SourcePos pos;
};

struct NetworkRegion {
  enum class Kind { kBox, kCircle, kPolygon };
  Kind kind = Kind::kBox;
  double x_min = 0, x_max = 0, y_min = 0, y_max = 0;
  double x = 0, y = 0, radius = 0;
  std::vector<std::pair<double, double>> polygon;
};

struct NetworkOutage {
  std::string name;
  NetworkRegion region;
  std::vector<std::string> vehicles;  // empty: every vehicle
  SourcePos pos;
};

struct NetworkSection {
  bool given = false;
  std::string ground = "ground";
  double ground_x = 0, ground_y = 0;
  std::vector<NetworkLink> links;
  std::vector<std::string> telemetry;  // relative to /model/<vehicle>/
  std::vector<NetworkOutage> outages;
  SourcePos pos;
};

struct Scenario {
  std::string file;  // as given to the loader
  std::string name;
  std::string description;
  std::filesystem::path world;  // resolved against the scenario file's directory
  std::string world_as_written;
  int64_t seed = 0;
  bool seed_given = false;  // false: the seed defaulted to 0 (the record says so)
  SeedSource seed_source = SeedSource::kDefault;
  TimeSection time;
  MapSection map;
  std::vector<GpsDeniedRegion> gps_denied;
  NetworkSection network;
  std::vector<Vehicle> vehicles;
  std::vector<TimelineEntry> timeline;
  std::vector<AssertionSpec> assertions;
  std::vector<KpiSpec> kpis;
  Outputs outputs;
  std::vector<std::filesystem::path> plugins;  // resolved against the scenario's directory

  const Vehicle* vehicle(std::string_view name) const;
  const TimelineEntry* entry(std::string_view label) const;
};

struct ValidationResult {
  std::optional<Scenario> scenario;  // set when there is no error
  // With errors: what could be read all the same (the entries and fields that were valid), so the
  // checks against the world (frames, models, the physics step) report in the same round.
  std::optional<Scenario> partial;
  std::vector<Diagnostic> errors;
  std::vector<Diagnostic> warnings;  // accepted, but probably not what was meant
  std::vector<std::string> notes;    // what the time mode means for the run, etc.
  bool ok() const { return errors.empty() && scenario.has_value(); }
  // One line per error, in file order.
  std::string format_errors() const;
};

struct LoadOptions {
  // The tables to validate against (a registry with plugins' types added); builtin when null.
  const SpecRegistry* registry = nullptr;
};

// Reads and validates a scenario file. A missing or unreadable file is an error in the result.
ValidationResult load_scenario_file(const std::filesystem::path& path,
                                    const LoadOptions& opts = {});

// Validates YAML text. `file` names it in errors; relative paths (world, plugins) resolve against
// `base_dir`.
ValidationResult load_scenario_text(std::string_view yaml, std::string file,
                                    const std::filesystem::path& base_dir,
                                    const LoadOptions& opts = {});

// The `plugins:` list of a scenario file, resolved against its directory, read before the file
// is validated (the plugins' types are needed to validate it). Empty when there is none or the
// file does not read as YAML (load_scenario_file then says why).
std::vector<std::filesystem::path> scenario_plugin_paths(const std::filesystem::path& file);

// `fieldproof run --seed N`: replaces the scenario's seed (seed_source kCommandLine). Returns an
// error message, and changes nothing, when N is outside 0 .. 2^31 - 1.
std::optional<std::string> override_seed(Scenario& scenario, int64_t seed);

// Facts of the loaded world that some checks need.
struct WorldFacts {
  Duration physics_step;            // <max_step_size>
  std::vector<std::string> frames;  // world-level frames (empty: not checked)
  std::vector<std::string> models;  // models of the world (empty: not checked)
};

// The checks that need the world: time.step_s and each sim.step duration_s must be whole numbers
// of the physics step; with WorldFacts, every frame a placement names must exist and every
// remove_model / min_distance model must be a model of the world or a vehicle.
std::vector<Diagnostic> validate_against_world(const Scenario& scenario, Duration physics_step);
std::vector<Diagnostic> validate_against_world(const Scenario& scenario, const WorldFacts& world);

// The JSON Schema (draft 2020-12) of a scenario, generated from `registry`'s tables, as text
// (two-space indentation, a final newline). scenario.schema.json at the repository root is this.
std::string scenario_json_schema(const SpecRegistry& registry = SpecRegistry::builtin());

}  // namespace fieldproof::scenario
