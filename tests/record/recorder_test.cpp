// The recorder: channels and schemas of bus topics, the allow-list, the JSON side channels, the
// pose channels, the wall-age chunk rule (fake wall clock) and finalisation.
#include "fieldproof/record/recorder.hpp"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/dynamic_message.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "fieldproof/msgs/ign.hpp"
#include "fieldproof/msgs/schema.hpp"
#include "fieldproof/record/mcap_reader.hpp"
#include "record/mcap_test_util.hpp"

namespace fieldproof::record {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

lockstep::Publish publish(std::string topic, std::string_view type, int64_t stamp_ns, uint64_t seq,
                          std::string payload) {
  lockstep::Publish p;
  p.participant = "world";
  p.topic = std::move(topic);
  p.type = std::string(type);
  p.stamp = SimTime::from_ns(stamp_ns);
  p.seq = seq;
  p.payload = std::move(payload);
  return p;
}

std::string odometry(double x, int64_t stamp_ns) {
  ignition::msgs::Odometry m;
  msgs::set_stamp(m.mutable_header(), SimTime::from_ns(stamp_ns), "odom");
  m.mutable_pose()->mutable_position()->set_x(x);
  m.mutable_twist()->mutable_linear()->set_x(0.5);
  return msgs::serialize(m);
}

std::string pose_v(int64_t stamp_ns, const std::map<std::string, std::pair<double, double>>& xy) {
  ignition::msgs::Pose_V m;
  msgs::set_stamp(m.mutable_header(), SimTime::from_ns(stamp_ns));
  for (const auto& [name, p] : xy) {
    auto* pose = m.add_pose();
    pose->set_name(name);
    msgs::set_planar_pose(pose, p.first, p.second, 0.5);
  }
  return msgs::serialize(m);
}

// A protobuf message decoded with nothing but the schema the file carries.
class SchemaDecoder {
 public:
  SchemaDecoder(const Schema& schema) {  // NOLINT(google-explicit-constructor)
    google::protobuf::FileDescriptorSet set;
    ok_ = set.ParseFromString(schema.data);
    for (const auto& file : set.file()) ok_ = ok_ && pool_.BuildFile(file) != nullptr;
    descriptor_ = pool_.FindMessageTypeByName(schema.name);
    ok_ = ok_ && descriptor_ != nullptr;
  }
  bool ok() const { return ok_; }
  std::unique_ptr<google::protobuf::Message> decode(std::string_view bytes) {
    std::unique_ptr<google::protobuf::Message> m(factory_.GetPrototype(descriptor_)->New());
    if (!m->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return nullptr;
    return m;
  }
  // The double at a dotted field path ("pose.position.x").
  static double number(const google::protobuf::Message& m, const std::string& path) {
    const google::protobuf::Message* at = &m;
    size_t from = 0;
    while (true) {
      const size_t dot = path.find('.', from);
      const std::string name = path.substr(from, dot == std::string::npos ? dot : dot - from);
      const auto* field = at->GetDescriptor()->FindFieldByName(name);
      if (field == nullptr) return std::nan("");
      if (dot == std::string::npos) return at->GetReflection()->GetDouble(*at, field);
      at = &at->GetReflection()->GetMessage(*at, field);
      from = dot + 1;
    }
  }

 private:
  bool ok_ = false;
  google::protobuf::DescriptorPool pool_;
  google::protobuf::DynamicMessageFactory factory_;
  const google::protobuf::Descriptor* descriptor_ = nullptr;
};

class RecorderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::temp_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    path_ = dir_ / "recording" / "recording.mcap";
  }
  void TearDown() override { fs::remove_all(dir_); }

  RecorderOptions options() {
    RecorderOptions o;
    o.wall_now = [this] { return wall_; };
    o.run = {{"run_id", "r1"}, {"seed", "7"}, {"scenario", "demo"}};
    return o;
  }

  // Opens the recorded file; fails the test when it does not open cleanly.
  McapReader read() {
    McapReader r;
    EXPECT_TRUE(r.open(path_.string()).ok());
    EXPECT_TRUE(r.problems().empty()) << r.problems().front().message;
    return r;
  }

  static const Channel* channel(const McapReader& r, const std::string& topic) {
    for (const auto& [id, c] : r.channels()) {
      if (c.topic == topic) return &c;
    }
    return nullptr;
  }

  static std::vector<Message> messages(McapReader& r, const std::string& topic) {
    auto all = r.read_all(
        {.start_ns = 0, .end_ns = std::numeric_limits<int64_t>::max(), .topics = {topic}});
    EXPECT_TRUE(all.ok());
    return all.ok() ? *all : std::vector<Message>{};
  }

  fs::path dir_;
  fs::path path_;
  SimTime wall_ = SimTime::from_ns(1'000'000'000);
};

TEST_F(RecorderTest, KnownBusTypeGetsProtobufChannelWithItsFileDescriptorSet) {
  Recorder rec(options());
  ASSERT_TRUE(rec.open(path_).ok());
  ASSERT_TRUE(
      rec.on_message(publish("/model/ugv1/odometry", msgs::kOdometry, 10, 1, odometry(1.5, 10)))
          .ok());
  ASSERT_TRUE(rec.close("passed").ok());

  McapReader r = read();
  const Channel* c = channel(r, "/model/ugv1/odometry");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->message_encoding, "protobuf");
  const Schema& s = r.schemas().at(c->schema_id);
  EXPECT_EQ(s.name, "ignition.msgs.Odometry");
  EXPECT_EQ(s.encoding, "protobuf");
  EXPECT_EQ(s.data, *msgs::file_descriptor_set(msgs::kOdometry));
}

TEST_F(RecorderTest, ProtobufPayloadDecodesWithTheRecordedSchemaAlone) {
  Recorder rec(options());
  ASSERT_TRUE(rec.open(path_).ok());
  ASSERT_TRUE(rec.on_message(publish("/odom", msgs::kOdometry, 10, 1, odometry(2.25, 10))).ok());
  ASSERT_TRUE(rec.close("passed").ok());

  McapReader r = read();
  SchemaDecoder decoder(r.schemas().at(channel(r, "/odom")->schema_id));
  ASSERT_TRUE(decoder.ok());
  auto msgs = messages(r, "/odom");
  ASSERT_EQ(msgs.size(), 1u);
  auto decoded = decoder.decode(msgs[0].data);
  ASSERT_NE(decoded, nullptr);
  EXPECT_DOUBLE_EQ(SchemaDecoder::number(*decoded, "pose.position.x"), 2.25);
  EXPECT_DOUBLE_EQ(SchemaDecoder::number(*decoded, "twist.linear.x"), 0.5);
}

TEST_F(RecorderTest, MessageKeepsPublisherSequenceAndStampAsLogAndPublishTime) {
  Recorder rec(options());
  ASSERT_TRUE(rec.open(path_).ok());
  ASSERT_TRUE(
      rec.on_message(publish("/odom", msgs::kOdometry, 1'234'567, 42, odometry(0, 0))).ok());
  ASSERT_TRUE(rec.close("passed").ok());

  McapReader r = read();
  auto msgs = messages(r, "/odom");
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_EQ(msgs[0].sequence, 42u);
  EXPECT_EQ(msgs[0].log_time_ns, 1'234'567);
  EXPECT_EQ(msgs[0].publish_time_ns, 1'234'567);
}

TEST_F(RecorderTest, OneChannelPerTopicAndTypeAndOneSchemaPerType) {
  Recorder rec(options());
  ASSERT_TRUE(rec.open(path_).ok());
  ASSERT_TRUE(rec.on_message(publish("/a", msgs::kOdometry, 1, 1, odometry(0, 1))).ok());
  ASSERT_TRUE(rec.on_message(publish("/a", msgs::kOdometry, 2, 2, odometry(0, 2))).ok());
  ASSERT_TRUE(rec.on_message(publish("/a", msgs::kTwist, 3, 1, "")).ok());
  ASSERT_TRUE(rec.on_message(publish("/b", msgs::kOdometry, 4, 1, odometry(0, 4))).ok());
  ASSERT_TRUE(rec.close("passed").ok());

  McapReader r = read();
  std::map<std::string, int> channels_per_topic;
  std::map<std::string, int> schemas_per_name;
  for (const auto& [id, c] : r.channels()) ++channels_per_topic[c.topic];
  for (const auto& [id, s] : r.schemas()) ++schemas_per_name[s.name];
  EXPECT_EQ(channels_per_topic["/a"], 2);
  EXPECT_EQ(channels_per_topic["/b"], 1);
  EXPECT_EQ(schemas_per_name["ignition.msgs.Odometry"], 1);
  EXPECT_EQ(messages(r, "/a").size(), 3u);
}

TEST_F(RecorderTest, UnknownTypeHasNoSchemaAndTheTypeAsMessageEncoding) {
  Recorder rec(options());
  ASSERT_TRUE(rec.open(path_).ok());
  ASSERT_TRUE(rec.on_message(publish("/custom", "acme.Thing", 5, 1, "raw bytes")).ok());
  ASSERT_TRUE(rec.close("passed").ok());

  McapReader r = read();
  const Channel* c = channel(r, "/custom");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->schema_id, 0);
  EXPECT_EQ(c->message_encoding, "acme.Thing");
  EXPECT_EQ(c->metadata.at("type"), "acme.Thing");
  auto msgs = messages(r, "/custom");
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_EQ(msgs[0].data, "raw bytes");
}

TEST_F(RecorderTest, AllowListRecordsOnlyListedBusTopics) {
  RecorderOptions o = options();
  o.topics = {"/keep"};
  Recorder rec(o);
  ASSERT_TRUE(rec.open(path_).ok());
  ASSERT_TRUE(rec.on_message(publish("/keep", msgs::kTwist, 1, 1, "")).ok());
  ASSERT_TRUE(rec.on_message(publish("/drop", msgs::kTwist, 2, 1, "")).ok());
  ASSERT_TRUE(rec.event(SimTime::from_ns(3), {{"event", "phase"}}).ok());
  ASSERT_TRUE(rec.close("passed").ok());

  McapReader r = read();
  EXPECT_NE(channel(r, "/keep"), nullptr);
  EXPECT_EQ(channel(r, "/drop"), nullptr);
  EXPECT_EQ(messages(r, "/keep").size(), 1u);
  EXPECT_EQ(messages(r, "/fieldproof/events").size(), 1u);
}

TEST_F(RecorderTest, AllowListKeepsEverySideChannelDeclared) {
  RecorderOptions o = options();
  o.topics = {"/keep"};
  Recorder rec(o);
  ASSERT_TRUE(rec.open(path_).ok());
  ASSERT_TRUE(rec.close("passed").ok());

  McapReader r = read();
  for (SideChannel s : side_channels()) {
    EXPECT_NE(channel(r, std::string(side_channel_topic(s))), nullptr) << side_channel_topic(s);
  }
}

TEST_F(RecorderTest, EmptyAllowListSkipsHiddenTopics) {
  Recorder rec(options());
  ASSERT_TRUE(rec.open(path_).ok());
  ASSERT_TRUE(rec.on_message(publish("/nav/_action/status", msgs::kTwist, 1, 1, "")).ok());
  ASSERT_TRUE(rec.on_message(publish("/nav/cmd_vel", msgs::kTwist, 2, 1, "")).ok());
  ASSERT_TRUE(rec.close("passed").ok());

  McapReader r = read();
  EXPECT_EQ(channel(r, "/nav/_action/status"), nullptr);
  EXPECT_NE(channel(r, "/nav/cmd_vel"), nullptr);
}

TEST_F(RecorderTest, ListedHiddenTopicIsRecorded) {
  RecorderOptions o = options();
  o.topics = {"/nav/_action/status"};
  Recorder rec(o);
  ASSERT_TRUE(rec.open(path_).ok());
  ASSERT_TRUE(rec.on_message(publish("/nav/_action/status", msgs::kTwist, 1, 1, "")).ok());
  ASSERT_TRUE(rec.close("passed").ok());

  McapReader r = read();
  EXPECT_EQ(messages(r, "/nav/_action/status").size(), 1u);
}

TEST_F(RecorderTest, SideChannelsAreJsonWithAJsonSchemaEach) {
  Recorder rec(options());
  ASSERT_TRUE(rec.open(path_).ok());
  ASSERT_TRUE(rec.close("passed").ok());

  McapReader r = read();
  for (SideChannel s : side_channels()) {
    const Channel* c = channel(r, std::string(side_channel_topic(s)));
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->message_encoding, "json");
    const Schema& schema = r.schemas().at(c->schema_id);
    EXPECT_EQ(schema.encoding, "jsonschema");
    json parsed = json::parse(schema.data, nullptr, false);
    ASSERT_FALSE(parsed.is_discarded()) << schema.name;
    EXPECT_EQ(parsed["type"], "object") << schema.name;
  }
}

TEST_F(RecorderTest, SideChannelMessageIsTheJsonAtTheGivenSimTime) {
  Recorder rec(options());
  ASSERT_TRUE(rec.open(path_).ok());
  const json verdict = {{"name", "reached_goal"}, {"status", "passed"}, {"t_s", 12.5}};
  ASSERT_TRUE(rec.write_side(SideChannel::kAssertions, SimTime::from_ns(7'000), verdict).ok());
  ASSERT_TRUE(rec.close("passed").ok());

  McapReader r = read();
  auto msgs = messages(r, "/fieldproof/assertions");
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_EQ(msgs[0].log_time_ns, 7'000);
  EXPECT_EQ(json::parse(msgs[0].data), verdict);
}

TEST_F(RecorderTest, SideChannelWritesNanAndInfinityAsNull) {
  Recorder rec(options());
  ASSERT_TRUE(rec.open(path_).ok());
  json metrics = {{"rtf", std::numeric_limits<double>::quiet_NaN()},
                  {"drift_s", std::numeric_limits<double>::infinity()},
                  {"gz_rtf", -std::numeric_limits<double>::infinity()},
                  {"sim", 1.5}};
  ASSERT_TRUE(rec.write_side(SideChannel::kMetrics, SimTime::from_ns(1), metrics).ok());
  ASSERT_TRUE(rec.close("passed").ok());

  McapReader r = read();
  auto msgs = messages(r, "/fieldproof/metrics");
  ASSERT_EQ(msgs.size(), 1u);
  json back = json::parse(msgs[0].data);
  EXPECT_TRUE(back["rtf"].is_null());
  EXPECT_TRUE(back["drift_s"].is_null());
  EXPECT_TRUE(back["gz_rtf"].is_null());
  EXPECT_EQ(back["sim"], 1.5);
}

TEST(DumpJson, WritesNonFiniteNumbersAsNullAtAnyDepth) {
  json v = {{"a", std::nan("")},
            {"list", {1.0, std::numeric_limits<double>::infinity(), 2}},
            {"deep", {{"x", -std::numeric_limits<double>::infinity()}}}};
  EXPECT_EQ(dump_json(v), R"({"a":null,"deep":{"x":null},"list":[1.0,null,2]})");
}

TEST(DumpJson, ReplacesInvalidUtf8InsteadOfThrowing) {
  json v = {{"line", std::string("ok \xff\xfe end")}};
  std::string out;
  EXPECT_NO_THROW(out = dump_json(v));
  EXPECT_FALSE(json::parse(out, nullptr, false).is_discarded()) << out;
}

TEST_F(RecorderTest, PoseChannelPerListedVehicleFromGroundTruth) {
  RecorderOptions o = options();
  o.vehicles = {"ugv1", "ugv2"};
  o.topics = {"/none"};  // the pose channels do not depend on the allow-list
  Recorder rec(o);
  ASSERT_TRUE(rec.open(path_).ok());
  const std::string truth =
      pose_v(100, {{"ugv1", {1.0, 2.0}}, {"ugv2", {3.0, 4.0}}, {"crate", {9, 9}}});
  ASSERT_TRUE(rec.on_message(publish("/world/depot/pose/info", msgs::kPoseV, 100, 1, truth)).ok());
  ASSERT_TRUE(rec.close("passed").ok());

  McapReader r = read();
  EXPECT_EQ(channel(r, vehicle_pose_topic("crate")), nullptr);
  EXPECT_EQ(channel(r, "/world/depot/pose/info"), nullptr);
  for (const auto& [name, x] : std::map<std::string, double>{{"ugv1", 1.0}, {"ugv2", 3.0}}) {
    const Channel* c = channel(r, vehicle_pose_topic(name));
    ASSERT_NE(c, nullptr) << name;
    EXPECT_EQ(c->message_encoding, "protobuf");
    const Schema& schema = r.schemas().at(c->schema_id);
    EXPECT_EQ(schema.name, "foxglove.PoseInFrame");
    SchemaDecoder decoder(schema);
    ASSERT_TRUE(decoder.ok());
    auto msgs = messages(r, vehicle_pose_topic(name));
    ASSERT_EQ(msgs.size(), 1u);
    EXPECT_EQ(msgs[0].log_time_ns, 100);
    auto decoded = decoder.decode(msgs[0].data);
    ASSERT_NE(decoded, nullptr);
    EXPECT_DOUBLE_EQ(SchemaDecoder::number(*decoded, "pose.position.x"), x);
    EXPECT_NEAR(SchemaDecoder::number(*decoded, "pose.orientation.z"), std::sin(0.25), 1e-12);
    const auto* frame = decoded->GetDescriptor()->FindFieldByName("frame_id");
    EXPECT_EQ(decoded->GetReflection()->GetString(*decoded, frame), "world");
  }
}

TEST_F(RecorderTest, EveryNamedPoseGetsAChannelWhenNoVehiclesAreListed) {
  Recorder rec(options());
  ASSERT_TRUE(rec.open(path_).ok());
  const std::string truth = pose_v(100, {{"ugv1", {1.0, 2.0}}, {"crate", {9, 9}}});
  ASSERT_TRUE(rec.on_message(publish("/world/depot/pose/info", msgs::kPoseV, 100, 1, truth)).ok());
  ASSERT_TRUE(rec.close("passed").ok());

  McapReader r = read();
  EXPECT_NE(channel(r, vehicle_pose_topic("ugv1")), nullptr);
  EXPECT_NE(channel(r, vehicle_pose_topic("crate")), nullptr);
  EXPECT_EQ(messages(r, "/world/depot/pose/info").size(), 1u);
}

TEST_F(RecorderTest, GarbageGroundTruthIsAnErrorNotACrash) {
  Recorder rec(options());
  ASSERT_TRUE(rec.open(path_).ok());
  Status s = rec.on_message(publish("/world/w/pose/info", msgs::kPoseV, 1, 1, "\xff\xff\xff"));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("/world/w/pose/info"), std::string::npos) << s.message();
  EXPECT_EQ(rec.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(RecorderTest, GarbageGroundTruthIsStillRecordedAsPublished) {
  Recorder rec(options());
  ASSERT_TRUE(rec.open(path_).ok());
  EXPECT_FALSE(rec.on_message(publish("/world/w/pose/info", msgs::kPoseV, 1, 1, "\xff\xff")).ok());
  ASSERT_TRUE(rec.close("passed").ok());
  McapReader r = read();
  auto msgs = messages(r, "/world/w/pose/info");
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_EQ(msgs[0].data, "\xff\xff");
}

TEST_F(RecorderTest, ConcurrentTapSideChannelsAndPollLoseNothing) {
  constexpr int kEach = 2000;
  Recorder rec([] {
    RecorderOptions o;
    o.chunk_size = 8 * 1024;  // many size-closed chunks while three threads write
    return o;
  }());
  ASSERT_TRUE(rec.open(path_).ok());
  std::thread tap([&] {
    for (int i = 0; i < kEach; ++i) {
      EXPECT_TRUE(rec.on_message(publish("/a", msgs::kTwist, i, i, "payload")).ok());
    }
  });
  std::thread side([&] {
    for (int i = 0; i < kEach; ++i) {
      EXPECT_TRUE(rec.event(SimTime::from_ns(i), {{"i", i}}).ok());
    }
  });
  std::thread poller([&] {
    for (int i = 0; i < kEach; ++i) EXPECT_TRUE(rec.poll().ok());
  });
  tap.join();
  side.join();
  poller.join();
  ASSERT_TRUE(rec.close("passed").ok());

  McapReader r = read();
  EXPECT_EQ(messages(r, "/a").size(), static_cast<size_t>(kEach));
  EXPECT_EQ(messages(r, "/fieldproof/events").size(), static_cast<size_t>(kEach));
  EXPECT_EQ(rec.message_count(), 2u * kEach);
}

TEST_F(RecorderTest, ChunkStaysOpenWhileYoungerThanMaxWallAge) {
  Recorder rec(options());
  ASSERT_TRUE(rec.open(path_).ok());
  ASSERT_TRUE(rec.on_message(publish("/a", msgs::kTwist, 1, 1, "")).ok());
  wall_ = wall_ + milliseconds(999);
  ASSERT_TRUE(rec.on_message(publish("/a", msgs::kTwist, 2, 2, "")).ok());
  EXPECT_EQ(rec.chunk_count(), 0u);
}

TEST_F(RecorderTest, WriteClosesTheChunkOnceItIsMaxWallAgeOld) {
  Recorder rec(options());
  ASSERT_TRUE(rec.open(path_).ok());
  ASSERT_TRUE(rec.on_message(publish("/a", msgs::kTwist, 1, 1, "")).ok());
  wall_ = wall_ + seconds(1);
  ASSERT_TRUE(rec.on_message(publish("/a", msgs::kTwist, 2, 2, "")).ok());
  EXPECT_EQ(rec.chunk_count(), 1u);
  // The next chunk's age counts from its own first message.
  wall_ = wall_ + milliseconds(500);
  ASSERT_TRUE(rec.on_message(publish("/a", msgs::kTwist, 3, 3, "")).ok());
  EXPECT_EQ(rec.chunk_count(), 1u);
}

TEST_F(RecorderTest, PollClosesAQuietChunkOnceItIsMaxWallAgeOld) {
  Recorder rec(options());
  ASSERT_TRUE(rec.open(path_).ok());
  ASSERT_TRUE(rec.on_message(publish("/a", msgs::kTwist, 1, 1, "")).ok());
  wall_ = wall_ + milliseconds(400);
  ASSERT_TRUE(rec.poll().ok());
  EXPECT_EQ(rec.chunk_count(), 0u);
  wall_ = wall_ + milliseconds(600);
  ASSERT_TRUE(rec.poll().ok());
  EXPECT_EQ(rec.chunk_count(), 1u);
}

TEST_F(RecorderTest, PollWithAnEmptyChunkWritesNoChunk) {
  Recorder rec(options());
  ASSERT_TRUE(rec.open(path_).ok());
  wall_ = wall_ + seconds(5);
  ASSERT_TRUE(rec.poll().ok());
  EXPECT_EQ(rec.chunk_count(), 0u);
}

TEST_F(RecorderTest, ClosedChunkIsReadableBeforeTheFileIsClosed) {
  Recorder rec(options());
  ASSERT_TRUE(rec.open(path_).ok());
  ASSERT_TRUE(rec.on_message(publish("/a", msgs::kTwist, 1, 1, "")).ok());
  wall_ = wall_ + seconds(2);
  ASSERT_TRUE(rec.poll().ok());

  McapReader r;
  ASSERT_TRUE(r.open(path_.string()).ok());
  EXPECT_FALSE(r.has_footer());
  auto all = r.read_all();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 1u);
}

TEST_F(RecorderTest, CloseWritesRunMetadataWithTheStatus) {
  Recorder rec(options());
  ASSERT_TRUE(rec.open(path_).ok());
  ASSERT_TRUE(rec.close("failed", {{"exit_code", "1"}}).ok());
  EXPECT_FALSE(rec.is_open());

  McapReader r = read();
  EXPECT_TRUE(r.has_footer());
  std::map<std::string, KeyValueMap> md;
  for (const Metadata& m : r.metadata()) md[m.name] = m.metadata;
  ASSERT_TRUE(md.contains("fieldproof.run"));
  EXPECT_EQ(md["fieldproof.run"]["status"], "failed");
  EXPECT_EQ(md["fieldproof.run"]["run_id"], "r1");
  EXPECT_EQ(md["fieldproof.run"]["seed"], "7");
  EXPECT_EQ(md["fieldproof.run"]["scenario"], "demo");
  EXPECT_EQ(md["fieldproof.run"]["exit_code"], "1");
  EXPECT_EQ(md["fieldproof.run_start"]["run_id"], "r1");
}

TEST_F(RecorderTest, DestructorFinalisesTheFileWithStatusUnknown) {
  {
    Recorder rec(options());
    ASSERT_TRUE(rec.open(path_).ok());
    ASSERT_TRUE(rec.on_message(publish("/a", msgs::kTwist, 1, 1, "")).ok());
  }
  McapReader r = read();
  EXPECT_TRUE(r.has_footer());
  EXPECT_TRUE(r.used_summary());
  bool found = false;
  for (const Metadata& m : r.metadata()) {
    if (m.name == "fieldproof.run") found = m.metadata.at("status") == "unknown";
  }
  EXPECT_TRUE(found);
}

TEST_F(RecorderTest, SecondCloseKeepsTheFirstStatus) {
  Recorder rec(options());
  ASSERT_TRUE(rec.open(path_).ok());
  ASSERT_TRUE(rec.close("passed").ok());
  ASSERT_TRUE(rec.close("interrupted").ok());
  McapReader r = read();
  int runs = 0;
  for (const Metadata& m : r.metadata()) runs += m.name == "fieldproof.run" ? 1 : 0;
  EXPECT_EQ(runs, 1);
}

TEST_F(RecorderTest, WriteAfterCloseIsRefused) {
  Recorder rec(options());
  ASSERT_TRUE(rec.open(path_).ok());
  ASSERT_TRUE(rec.close("passed").ok());
  EXPECT_EQ(rec.on_message(publish("/a", msgs::kTwist, 1, 1, "")).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(rec.event(SimTime::from_ns(1), json::object()).code(), StatusCode::kFailedPrecondition);
}

TEST_F(RecorderTest, WriteBeforeOpenIsRefused) {
  Recorder rec(options());
  EXPECT_EQ(rec.on_message(publish("/a", msgs::kTwist, 1, 1, "")).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(rec.close("passed").code(), StatusCode::kFailedPrecondition);
}

TEST_F(RecorderTest, NegativeStampIsAnErrorKeptInStatus) {
  Recorder rec(options());
  ASSERT_TRUE(rec.open(path_).ok());
  EXPECT_EQ(rec.on_message(publish("/a", msgs::kTwist, -5, 1, "")).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(rec.status().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(rec.on_message(publish("/a", msgs::kTwist, 5, 2, "")).ok());
}

TEST_F(RecorderTest, NonPositiveMaxWallAgeIsRefusedAtOpen) {
  RecorderOptions o = options();
  o.max_chunk_wall_age = Duration::zero();
  Recorder rec(o);
  Status s = rec.open(path_);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("max_chunk_wall_age"), std::string::npos);
}

TEST_F(RecorderTest, UnwritablePathIsAnIoError) {
  fs::create_directories(dir_);
  { std::ofstream(dir_ / "file") << "x"; }
  Recorder rec(options());
  EXPECT_EQ(rec.open(dir_ / "file" / "recording.mcap").code(), StatusCode::kIoError);
}

}  // namespace
}  // namespace fieldproof::record
