// Recorder: a run's ordered message stream and its side channels into one MCAP file that
// Foxglove opens (docs/recording.md).
//
//   RecorderOptions options;
//   options.topics = plan.record_topics;            // allow-list; empty: every visible topic
//   options.vehicles = {"ugv1"};                    // a pose channel each
//   options.run = {{"run_id", id}, {"seed", "7"}, {"scenario", name}};
//   Recorder rec(options);
//   if (Status s = rec.open(run_dir / "recording/recording.mcap"); !s.ok()) fail(s);
//   coordinator.set_tap([&](const lockstep::Publish& p) { (void)rec.on_message(p); });
//   (void)rec.write_side(SideChannel::kEvents, now, {{"event", "phase"}, {"phase", "timeline"}});
//   every second: (void)rec.poll();                 // closes a chunk after a quiet second
//   (void)rec.close("passed");                      // on every ending; the destructor too
//
// What goes where:
// * bus topics: one channel per (topic, type). A type the msgs library knows (any protobuf type
//   linked into the program) is recorded with message_encoding "protobuf" and a schema named after
//   the type, encoding "protobuf", data its FileDescriptorSet. Any other type: no schema (id 0),
//   message_encoding = the type text as published, channel metadata "type" = the type.
//   sequence = the publisher's seq (low 32 bits); log_time = publish_time = the stamp (simulated).
// * side channels /fieldproof/{events,assertions,metrics,resources,kpis}: message_encoding "json",
//   schema encoding "jsonschema" (side_channel_schema()), declared at open, always recorded.
// * /fieldproof/vehicles/<name>/pose: foxglove.PoseInFrame (protobuf, frame "world"), one message
//   per ground-truth pose of that vehicle in an ignition.msgs.Pose_V on /world/<w>/pose/info.
//   Always recorded, like the side channels.
// * /fieldproof/tf: foxglove.FrameTransform world -> <vehicle>, one per ground-truth pose of a
//   vehicle (the 3D panel's transform tree: each vehicle is a frame).
// * /fieldproof/vehicles/<name>/<rest>: foxglove.LaserScan (frame "world", at the sensor's world
//   pose) for each ignition.msgs.LaserScan on /model/<name>/<rest> (each lidar of a vehicle).
// * /fieldproof/scene: foxglove.SceneUpdate, the world's static geometry (write_scene()), one
//   entity per collision shape (cubes and cylinders in frame "world").
//   Always recorded too; the Foxglove schemas are in src/record/proto/foxglove.
// * the allow-list (outputs.topics): exact topic names. Empty records every topic except hidden
//   ones (a name segment starting with '_', e.g. /nav/_action/status); a listed hidden topic is
//   recorded.
//
// Crash safety: the open chunk is closed (written and flushed) on the first write or poll() at
// least max_chunk_wall_age of wall time after it received its first message, so a SIGKILL loses
// at most about that much; McapReader's scan gives back everything up to the last closed chunk.
//
// Thread-safe: every public function takes an internal lock (the tap, the engine's side channels
// and a poll timer may be on different threads). Errors are values: the first failure (an I/O
// error, a negative time) is kept and returned by status(); recording continues for the rest.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fieldproof/lockstep/protocol.hpp"
#include "fieldproof/record/mcap_types.hpp"
#include "fieldproof/time/duration.hpp"
#include "fieldproof/time/system_clock.hpp"

namespace fieldproof::record {

// kNetwork: the ground station's link measurements, one window a second per link; declared in
// every recording, written only when the run has radio links (docs/network.md).
enum class SideChannel : uint8_t { kEvents, kAssertions, kMetrics, kResources, kKpis, kNetwork };

// "/fieldproof/events", ... .
std::string_view side_channel_topic(SideChannel channel);
// The JSON Schema (draft 2020-12 text) recorded for a side channel.
std::string_view side_channel_schema(SideChannel channel);
// Every side channel, in declaration order.
std::vector<SideChannel> side_channels();

// The pose channel of a vehicle: "/fieldproof/vehicles/<name>/pose".
std::string vehicle_pose_topic(std::string_view vehicle);

// JSON text of value with every NaN and ±infinity written as null (JSON has neither) and invalid
// UTF-8 in strings replaced by U+FFFD; never throws for any json value.
std::string dump_json(const nlohmann::json& value);

// A static collision shape of the world, for the scene channel (a box, or a cylinder of radius).
struct SceneShape {
  std::string id;  // "model::link::collision"
  bool cylinder = false;
  double x = 0.0, y = 0.0, yaw = 0.0;  // centre in the world frame
  double size_x = 0.0, size_y = 0.0;   // box
  double radius = 0.0;                 // cylinder
  double z_min = 0.0, z_max = 0.0;     // vertical extent
};

struct RecorderOptions {
  // Chunk compression.
  Compression compression = Compression::kZstd;
  // A chunk is also closed when its uncompressed records reach this many bytes.
  uint64_t chunk_size = 1024 * 1024;
  // outputs.topics: exact bus topic names to record; empty records every visible topic. Side
  // channels and pose channels are always recorded.
  std::vector<std::string> topics;
  // Vehicles that get a pose channel; empty: every pose named in the Pose_V ground truth (which
  // includes static models).
  std::vector<std::string> vehicles;
  // Wall time (monotonic) for the chunk age rule; empty uses SystemClock::wall_now().
  WallNow wall_now;
  // A chunk holding messages is closed once it is this old in wall time (checked on every write
  // and in poll()). Must be positive.
  Duration max_chunk_wall_age = seconds(1);
  // Written as the "fieldproof.run_start" metadata record at open and, with "status" added, as
  // "fieldproof.run" at close (run_id, seed, scenario, ...).
  KeyValueMap run;
};

class Recorder {
 public:
  explicit Recorder(RecorderOptions options = {});
  // Finalises the file if still open, with status "unknown" (call close() to name it).
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // Creates the parent directory and the file, declares the side channels and writes the
  // run_start metadata. kInvalidArgument for bad options, kIoError when the file cannot be made,
  // kFailedPrecondition when already opened.
  Status open(const std::filesystem::path& path);

  // Records one message of the ordered stream (ignored when its topic is not allowed). Ok also
  // when ignored; kFailedPrecondition when not open or closed.
  Status on_message(const lockstep::Publish& message);

  // Records a side-channel message at simulated time t.
  Status write_side(SideChannel channel, SimTime t, const nlohmann::json& value);
  // The world's static geometry on /fieldproof/scene (foxglove.SceneUpdate) at simulated time t.
  Status write_scene(SimTime t, const std::vector<SceneShape>& shapes);
  Status event(SimTime t, const nlohmann::json& value) {
    return write_side(SideChannel::kEvents, t, value);
  }

  // Closes the open chunk when it is older than max_chunk_wall_age; call it about once a second
  // so a quiet recording is still flushed.
  Status poll();

  // Writes the "fieldproof.run" metadata (options.run, "status" and extra), the summary and the
  // footer. Idempotent: later calls return the first close's status.
  Status close(std::string_view status, const KeyValueMap& extra = {});

  bool is_open() const;
  // Ok, or the first error met.
  Status status() const;
  // Messages written (bus, side and pose channels) and chunks closed so far.
  uint64_t message_count() const;
  uint64_t chunk_count() const;
  // Bytes written to the file so far (closed chunks; the open chunk is in memory), the file's
  // size once closed.
  uint64_t bytes_written() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fieldproof::record
