#include "fieldproof/record/recorder.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <system_error>
#include <utility>

#include "fieldproof/msgs/ign.hpp"
#include "fieldproof/msgs/schema.hpp"
#include "fieldproof/record/mcap_writer.hpp"
#include "fieldproof/util/mutex.hpp"
#include "foxglove/FrameTransform.pb.h"
#include "foxglove/LaserScan.pb.h"
#include "foxglove/PoseInFrame.pb.h"
#include "foxglove/SceneUpdate.pb.h"

namespace fieldproof::record {
namespace {

constexpr std::string_view kPoseFrame = "world";
constexpr std::string_view kTransformTopic = "/fieldproof/tf";
constexpr std::string_view kSceneTopic = "/fieldproof/scene";

// "/fieldproof/vehicles/<vehicle>/<rest>".
std::string vehicle_topic(const std::string& vehicle, const std::string& rest) {
  return "/fieldproof/vehicles/" + vehicle + "/" + rest;
}

// A name segment starting with '_' hides a topic (ROS 2's convention, e.g. _action/status).
bool is_hidden(std::string_view topic) {
  size_t at = 0;
  while (at < topic.size()) {
    if (topic[at] == '/') {
      ++at;
      continue;
    }
    if (topic[at] == '_') return true;
    const size_t slash = topic.find('/', at);
    if (slash == std::string_view::npos) break;
    at = slash;
  }
  return false;
}

// A vehicle's lidar: an ignition.msgs.LaserScan on /model/<vehicle>/<rest>; sets *vehicle and
// *rest.
bool is_vehicle_scan(const lockstep::Publish& m, std::string* vehicle, std::string* rest) {
  constexpr std::string_view kPrefix = "/model/";
  const std::string_view t = m.topic;
  if (m.type != msgs::kLaserScan || !t.starts_with(kPrefix)) return false;
  const size_t slash = t.find('/', kPrefix.size());
  if (slash == std::string_view::npos || slash == kPrefix.size() || slash + 1 >= t.size()) {
    return false;
  }
  *vehicle = std::string(t.substr(kPrefix.size(), slash - kPrefix.size()));
  *rest = std::string(t.substr(slash + 1));
  return true;
}

void set_stamp(google::protobuf::Timestamp* ts, SimTime t) {
  ts->set_seconds(t.ns() / 1'000'000'000);
  ts->set_nanos(static_cast<int32_t>(t.ns() % 1'000'000'000));
}

bool is_pose_info(const lockstep::Publish& m) {
  constexpr std::string_view kPrefix = "/world/";
  constexpr std::string_view kSuffix = "/pose/info";
  const std::string_view t = m.topic;
  return m.type == msgs::kPoseV && t.size() > kPrefix.size() + kSuffix.size() &&
         t.starts_with(kPrefix) && t.ends_with(kSuffix);
}

}  // namespace

struct Recorder::Impl {
  explicit Impl(RecorderOptions o) : options(std::move(o)) {
    if (!options.wall_now) options.wall_now = SystemClock::wall_now();
    for (const auto& t : options.topics) allowed.insert(t);
    for (const auto& v : options.vehicles) vehicles.insert(v);
  }

  RecorderOptions options;
  std::set<std::string> allowed;
  std::set<std::string> vehicles;

  mutable Mutex mu;
  std::unique_ptr<McapWriter> writer FIELDPROOF_GUARDED_BY(mu);
  bool opened FIELDPROOF_GUARDED_BY(mu) = false;
  bool closed FIELDPROOF_GUARDED_BY(mu) = false;
  Status first_error FIELDPROOF_GUARDED_BY(mu);
  Status close_status FIELDPROOF_GUARDED_BY(mu);
  uint64_t messages FIELDPROOF_GUARDED_BY(mu) = 0;
  uint64_t chunks FIELDPROOF_GUARDED_BY(mu) = 0;
  uint64_t bytes FIELDPROOF_GUARDED_BY(mu) = 0;  // the file's size once closed
  // Wall time when the open chunk got its first message; nullopt while the chunk is empty.
  std::optional<SimTime> chunk_opened_wall FIELDPROOF_GUARDED_BY(mu);

  std::map<SideChannel, uint16_t> side_channel_ids FIELDPROOF_GUARDED_BY(mu);
  std::map<std::string, uint16_t, std::less<>> schema_ids
      FIELDPROOF_GUARDED_BY(mu);  // type name -> schema id (0: none)
  // topic -> type -> channel id; transparent comparators keep lookups allocation-free.
  std::map<std::string, std::map<std::string, uint16_t, std::less<>>, std::less<>> channel_ids
      FIELDPROOF_GUARDED_BY(mu);
  std::map<std::string, bool, std::less<>> topic_allowed
      FIELDPROOF_GUARDED_BY(mu);  // cache per topic
  std::map<std::string, uint16_t, std::less<>> pose_channel_ids
      FIELDPROOF_GUARDED_BY(mu);  // vehicle -> channel
  std::map<std::string, uint32_t, std::less<>> pose_seq FIELDPROOF_GUARDED_BY(mu);
  std::map<std::string, uint16_t, std::less<>> foxglove_channel_ids
      FIELDPROOF_GUARDED_BY(mu);  // topic -> channel
  std::map<std::string, uint32_t, std::less<>> foxglove_seq FIELDPROOF_GUARDED_BY(mu);
  std::map<SideChannel, uint32_t> side_seq FIELDPROOF_GUARDED_BY(mu);

  Status remember(Status s) FIELDPROOF_REQUIRES(mu) {
    if (!s.ok() && first_error.ok()) first_error = s;
    return s;
  }

  Status check_writable() const FIELDPROOF_REQUIRES(mu) {
    if (!opened) return {StatusCode::kFailedPrecondition, "recorder: not open"};
    if (closed) return {StatusCode::kFailedPrecondition, "recorder: already closed"};
    return {};
  }

  bool allowed_topic(const std::string& topic) FIELDPROOF_REQUIRES(mu) {
    auto it = topic_allowed.find(topic);
    if (it != topic_allowed.end()) return it->second;
    const bool ok = allowed.empty() ? !is_hidden(topic) : allowed.contains(topic);
    topic_allowed.emplace(topic, ok);
    return ok;
  }

  Result<uint16_t> schema_for(const std::string& type) FIELDPROOF_REQUIRES(mu) {
    if (auto it = schema_ids.find(type); it != schema_ids.end()) return it->second;
    uint16_t id = 0;
    if (auto fds = msgs::file_descriptor_set(type)) {
      auto r = writer->add_schema(type, "protobuf", *fds);
      if (!r.ok()) return r.status();
      id = *r;
    }
    schema_ids.emplace(type, id);
    return id;
  }

  Result<uint16_t> channel_for(const lockstep::Publish& m) FIELDPROOF_REQUIRES(mu) {
    auto& by_type = channel_ids[m.topic];
    if (auto it = by_type.find(m.type); it != by_type.end()) return it->second;
    auto schema = schema_for(m.type);
    if (!schema.ok()) return schema.status();
    const std::string encoding = *schema != 0 ? std::string("protobuf") : m.type;
    auto ch = writer->add_channel(m.topic, encoding, *schema, {{"type", m.type}});
    if (!ch.ok()) return ch.status();
    by_type.emplace(m.type, *ch);
    return *ch;
  }

  Result<uint16_t> pose_channel_for(const std::string& vehicle) FIELDPROOF_REQUIRES(mu) {
    if (auto it = pose_channel_ids.find(vehicle); it != pose_channel_ids.end()) return it->second;
    const std::string type = foxglove::PoseInFrame::descriptor()->full_name();
    auto schema = schema_for(type);
    if (!schema.ok()) return schema.status();
    auto ch = writer->add_channel(vehicle_pose_topic(vehicle), "protobuf", *schema,
                                  {{"vehicle", vehicle}});
    if (!ch.ok()) return ch.status();
    pose_channel_ids.emplace(vehicle, *ch);
    return *ch;
  }

  // A channel of a Foxglove schema (protobuf), made on first use.
  Result<uint16_t> foxglove_channel(const std::string& topic, const std::string& type,
                                    const KeyValueMap& metadata) FIELDPROOF_REQUIRES(mu) {
    if (auto it = foxglove_channel_ids.find(topic); it != foxglove_channel_ids.end()) {
      return it->second;
    }
    auto schema = schema_for(type);
    if (!schema.ok()) return schema.status();
    auto ch = writer->add_channel(topic, "protobuf", *schema, metadata);
    if (!ch.ok()) return ch.status();
    foxglove_channel_ids.emplace(topic, *ch);
    return *ch;
  }

  Status write_proto(const std::string& topic, const std::string& type, const KeyValueMap& metadata,
                     SimTime t, const google::protobuf::Message& message) FIELDPROOF_REQUIRES(mu) {
    auto ch = foxglove_channel(topic, type, metadata);
    if (!ch.ok()) return remember(ch.status());
    std::string bytes;
    message.SerializeToString(&bytes);
    return write(*ch, foxglove_seq[topic]++, t, bytes);
  }

  // A vehicle's ground-truth pose as the transform world -> <vehicle> on /fieldproof/tf.
  Status record_transform(const std::string& vehicle, SimTime stamp, SimTime t,
                          const foxglove::Pose& pose) FIELDPROOF_REQUIRES(mu) {
    foxglove::FrameTransform tf;
    set_stamp(tf.mutable_timestamp(), stamp);
    tf.set_parent_frame_id(std::string(kPoseFrame));
    tf.set_child_frame_id(vehicle);
    *tf.mutable_translation() = pose.position();
    *tf.mutable_rotation() = pose.orientation();
    return write_proto(std::string(kTransformTopic), tf.GetDescriptor()->full_name(), {}, t, tf);
  }

  Status record_scan(const lockstep::Publish& m, const std::string& vehicle,
                     const std::string& rest) FIELDPROOF_REQUIRES(mu) {
    if (!vehicles.empty() && !vehicles.contains(vehicle)) return {};
    auto in = msgs::parse<ignition::msgs::LaserScan>(m.payload);
    if (!in) {
      return remember({StatusCode::kInvalidArgument,
                       "recorder: " + m.topic + " seq " + std::to_string(m.seq) +
                           " is not a valid ignition.msgs.LaserScan"});
    }
    foxglove::LaserScan out;
    set_stamp(out.mutable_timestamp(), in->has_header() ? msgs::stamp_of(in->header()) : m.stamp);
    // In the world frame at the sensor's world pose: drawn where the vehicle is, with no
    // transform needed.
    out.set_frame_id(std::string(kPoseFrame));
    const auto& wp = in->world_pose();
    out.mutable_pose()->mutable_position()->set_x(wp.position().x());
    out.mutable_pose()->mutable_position()->set_y(wp.position().y());
    out.mutable_pose()->mutable_position()->set_z(wp.position().z());
    const bool has_q = wp.has_orientation();
    out.mutable_pose()->mutable_orientation()->set_x(has_q ? wp.orientation().x() : 0.0);
    out.mutable_pose()->mutable_orientation()->set_y(has_q ? wp.orientation().y() : 0.0);
    out.mutable_pose()->mutable_orientation()->set_z(has_q ? wp.orientation().z() : 0.0);
    out.mutable_pose()->mutable_orientation()->set_w(has_q ? wp.orientation().w() : 1.0);
    out.set_start_angle(in->angle_min());
    out.set_end_angle(in->angle_max());
    out.mutable_ranges()->Reserve(in->ranges_size());
    for (const double r : in->ranges()) out.add_ranges(r);
    for (const double i : in->intensities()) out.add_intensities(i);
    return write_proto(vehicle_topic(vehicle, rest), out.GetDescriptor()->full_name(),
                       {{"vehicle", vehicle}, {"source", m.topic}}, m.stamp, out);
  }

  // Every write goes through here: the wall-age rule is checked after it.
  Status write(uint16_t channel, uint32_t sequence, SimTime t, std::string_view data)
      FIELDPROOF_REQUIRES(mu) {
    if (t.ns() < 0) {
      return remember({StatusCode::kInvalidArgument,
                       "recorder: negative time " + std::to_string(t.ns()) + " ns"});
    }
    const SimTime wall = options.wall_now();
    if (writer->buffered_bytes() == 0) chunk_opened_wall = wall;
    Status s = writer->write(channel, sequence, t, t, data);
    if (!s.ok()) return remember(s);
    ++messages;
    // The writer closes a chunk by size right after the message that fills it.
    if (writer->buffered_bytes() == 0) {
      chunk_opened_wall.reset();
      return {};
    }
    return age_check(wall);
  }

  Status age_check(SimTime wall) FIELDPROOF_REQUIRES(mu) {
    if (writer->buffered_bytes() == 0 || !chunk_opened_wall) return {};
    if (wall - *chunk_opened_wall < options.max_chunk_wall_age) return {};
    Status s = writer->close_chunk();
    chunk_opened_wall.reset();
    return remember(s);
  }

  Status record_poses(const lockstep::Publish& m) FIELDPROOF_REQUIRES(mu) {
    auto poses = msgs::parse<ignition::msgs::Pose_V>(m.payload);
    if (!poses) {
      return remember({StatusCode::kInvalidArgument, "recorder: " + m.topic + " seq " +
                                                         std::to_string(m.seq) +
                                                         " is not a valid ignition.msgs.Pose_V"});
    }
    const SimTime stamp = poses->has_header() ? msgs::stamp_of(poses->header()) : m.stamp;
    foxglove::PoseInFrame out;
    out.mutable_timestamp()->set_seconds(stamp.ns() / 1'000'000'000);
    out.mutable_timestamp()->set_nanos(static_cast<int32_t>(stamp.ns() % 1'000'000'000));
    out.set_frame_id(std::string(kPoseFrame));
    std::string bytes;
    for (const auto& p : poses->pose()) {
      if (p.name().empty()) continue;
      if (!vehicles.empty() && !vehicles.contains(p.name())) continue;
      auto ch = pose_channel_for(p.name());
      if (!ch.ok()) return remember(ch.status());
      auto* pose = out.mutable_pose();
      pose->mutable_position()->set_x(p.position().x());
      pose->mutable_position()->set_y(p.position().y());
      pose->mutable_position()->set_z(p.position().z());
      // An unset orientation is the identity (ignition's default w is 1, protobuf's is 0).
      const bool has_q = p.has_orientation();
      pose->mutable_orientation()->set_x(has_q ? p.orientation().x() : 0.0);
      pose->mutable_orientation()->set_y(has_q ? p.orientation().y() : 0.0);
      pose->mutable_orientation()->set_z(has_q ? p.orientation().z() : 0.0);
      pose->mutable_orientation()->set_w(has_q ? p.orientation().w() : 1.0);
      bytes.clear();
      out.SerializeToString(&bytes);
      Status s = write(*ch, pose_seq[p.name()]++, m.stamp, bytes);
      if (!s.ok()) return s;
      s = record_transform(p.name(), stamp, m.stamp, *pose);
      if (!s.ok()) return s;
    }
    return {};
  }

  Status finalize(std::string_view status, const KeyValueMap& extra) FIELDPROOF_REQUIRES(mu) {
    KeyValueMap md = options.run;
    for (const auto& [k, v] : extra) md[k] = v;
    md["status"] = std::string(status);
    Status s = writer->write_metadata("fieldproof.run", md);
    static_cast<void>(remember(s));
    Status c = writer->close();
    chunks = writer->statistics().chunk_count;
    bytes = writer->bytes_written();
    static_cast<void>(remember(c));
    closed = true;
    close_status = !s.ok() ? s : c;
    return close_status;
  }
};

Recorder::Recorder(RecorderOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

Recorder::~Recorder() {
  MutexLock lock(impl_->mu);
  if (impl_->opened && !impl_->closed) static_cast<void>(impl_->finalize("unknown", {}));
}

Status Recorder::open(const std::filesystem::path& path) {
  Impl& d = *impl_;
  MutexLock lock(d.mu);
  if (d.opened) return {StatusCode::kFailedPrecondition, "recorder: already opened"};
  if (d.options.max_chunk_wall_age <= Duration::zero()) {
    return {StatusCode::kInvalidArgument, "recorder: max_chunk_wall_age must be positive"};
  }
  McapWriterOptions wo;
  wo.profile = "";
  wo.library = "fieldproof-recorder/0.1";
  wo.compression = d.options.compression;
  wo.chunk_size = d.options.chunk_size;
  if (Status s = wo.validate(); !s.ok()) return s;
  if (path.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec) {
      return {StatusCode::kIoError, "recorder: cannot create directory " +
                                        path.parent_path().string() + ": " + ec.message()};
    }
  }
  auto writer = std::make_unique<McapWriter>(wo);
  if (Status s = writer->open(path.string()); !s.ok()) return s;
  d.writer = std::move(writer);
  for (SideChannel c : side_channels()) {
    const std::string topic(side_channel_topic(c));
    // "/fieldproof/events" -> "fieldproof.events"
    const std::string name = "fieldproof." + topic.substr(topic.rfind('/') + 1);
    auto schema = d.writer->add_schema(name, "jsonschema", side_channel_schema(c));
    if (!schema.ok()) return d.remember(schema.status());
    auto ch = d.writer->add_channel(topic, "json", *schema);
    if (!ch.ok()) return d.remember(ch.status());
    d.side_channel_ids[c] = *ch;
  }
  if (Status s = d.writer->write_metadata("fieldproof.run_start", d.options.run); !s.ok()) {
    return d.remember(s);
  }
  d.opened = true;
  return {};
}

Status Recorder::on_message(const lockstep::Publish& message) {
  Impl& d = *impl_;
  MutexLock lock(d.mu);
  if (Status s = d.check_writable(); !s.ok()) return s;
  // A ground truth the pose channels cannot use is still recorded as published.
  Status poses = is_pose_info(message) ? d.record_poses(message) : Status();
  if (std::string vehicle, rest; poses.ok() && is_vehicle_scan(message, &vehicle, &rest)) {
    poses = d.record_scan(message, vehicle, rest);
  }
  if (!d.allowed_topic(message.topic)) return poses;
  auto ch = d.channel_for(message);
  if (!ch.ok()) return d.remember(ch.status());
  Status s = d.write(*ch, static_cast<uint32_t>(message.seq), message.stamp, message.payload);
  return poses.ok() ? s : poses;
}

Status Recorder::write_side(SideChannel channel, SimTime t, const nlohmann::json& value) {
  Impl& d = *impl_;
  MutexLock lock(d.mu);
  if (Status s = d.check_writable(); !s.ok()) return s;
  return d.write(d.side_channel_ids.at(channel), d.side_seq[channel]++, t, dump_json(value));
}

Status Recorder::write_scene(SimTime t, const std::vector<SceneShape>& shapes) {
  Impl& d = *impl_;
  MutexLock lock(d.mu);
  if (Status s = d.check_writable(); !s.ok()) return s;
  foxglove::SceneUpdate update;
  for (const SceneShape& sh : shapes) {
    foxglove::SceneEntity* e = update.add_entities();
    set_stamp(e->mutable_timestamp(), t);
    e->set_frame_id(std::string(kPoseFrame));
    e->set_id(sh.id);
    e->set_frame_locked(false);
    const double height = std::max(sh.z_max - sh.z_min, 0.01);
    foxglove::Pose pose;
    pose.mutable_position()->set_x(sh.x);
    pose.mutable_position()->set_y(sh.y);
    pose.mutable_position()->set_z(sh.z_min + height / 2);
    pose.mutable_orientation()->set_z(std::sin(sh.yaw / 2));
    pose.mutable_orientation()->set_w(std::cos(sh.yaw / 2));
    foxglove::Color color;
    color.set_r(0.55);
    color.set_g(0.57);
    color.set_b(0.6);
    color.set_a(1.0);
    if (sh.cylinder) {
      foxglove::CylinderPrimitive* c = e->add_cylinders();
      *c->mutable_pose() = pose;
      c->mutable_size()->set_x(2 * sh.radius);
      c->mutable_size()->set_y(2 * sh.radius);
      c->mutable_size()->set_z(height);
      c->set_bottom_scale(1.0);
      c->set_top_scale(1.0);
      *c->mutable_color() = color;
    } else {
      foxglove::CubePrimitive* c = e->add_cubes();
      *c->mutable_pose() = pose;
      c->mutable_size()->set_x(sh.size_x);
      c->mutable_size()->set_y(sh.size_y);
      c->mutable_size()->set_z(height);
      *c->mutable_color() = color;
    }
  }
  return d.write_proto(std::string(kSceneTopic), update.GetDescriptor()->full_name(), {}, t,
                       update);
}

Status Recorder::poll() {
  Impl& d = *impl_;
  MutexLock lock(d.mu);
  if (Status s = d.check_writable(); !s.ok()) return s;
  return d.age_check(d.options.wall_now());
}

Status Recorder::close(std::string_view status, const KeyValueMap& extra) {
  Impl& d = *impl_;
  MutexLock lock(d.mu);
  if (!d.opened) return {StatusCode::kFailedPrecondition, "recorder: not open"};
  if (d.closed) return d.close_status;
  return d.finalize(status, extra);
}

bool Recorder::is_open() const {
  MutexLock lock(impl_->mu);
  return impl_->opened && !impl_->closed;
}

Status Recorder::status() const {
  MutexLock lock(impl_->mu);
  return impl_->first_error;
}

uint64_t Recorder::message_count() const {
  MutexLock lock(impl_->mu);
  return impl_->messages;
}

uint64_t Recorder::bytes_written() const {
  MutexLock lock(impl_->mu);
  if (impl_->writer && !impl_->closed) return impl_->writer->bytes_written();
  return impl_->bytes;
}

uint64_t Recorder::chunk_count() const {
  MutexLock lock(impl_->mu);
  if (impl_->writer && !impl_->closed) return impl_->writer->statistics().chunk_count;
  return impl_->chunks;
}

}  // namespace fieldproof::record
