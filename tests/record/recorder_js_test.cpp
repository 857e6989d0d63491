// A recording read by the official TypeScript reader (@mcap/core) and decoded the way Foxglove
// decodes it (tests/js/recorder_check.mjs: JSON.parse for json channels, protobufjs built from the
// recorded FileDescriptorSet for protobuf channels): topics, counts and decoded values match.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fieldproof/msgs/ign.hpp"
#include "fieldproof/record/recorder.hpp"
#include "record/mcap_test_util.hpp"

#ifndef FIELDPROOF_JS_DIR
#error "FIELDPROOF_JS_DIR must name tests/js"
#endif

namespace fieldproof::record {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using testing::NodeRun;

NodeRun run_check(const fs::path& file) {
  return testing::run_node_check(FIELDPROOF_JS_DIR, "recorder_check.mjs", file);
}

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

class RecorderIndependentReader : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(fs::path(FIELDPROOF_JS_DIR) / "node_modules" / "@mcap" / "core"))
        << "the independent MCAP reader is not installed: run scripts/install-deps.sh (it runs "
           "`npm ci` in tests/js)";
    dir_ = testing::temp_dir("recorder_js");
    file_ = dir_ / "recording.mcap";
    record();
    NodeRun run = run_check(file_);
    ASSERT_EQ(run.exit_code, 0) << run.out;
    out_ = json::parse(run.out, nullptr, false);
    ASSERT_FALSE(out_.is_discarded()) << "recorder_check.mjs printed no JSON:\n" << run.out;
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A small run: odometry and ground truth for one vehicle over 2 s, an unknown type, and every
  // side channel, with small chunks so several are written.
  void record() {
    RecorderOptions o;
    o.chunk_size = 4096;
    o.vehicles = {"ugv1"};
    o.run = {{"run_id", "js1"}, {"seed", "3"}, {"scenario", "ugv_nav_to_goal"}};
    SimTime wall = SimTime::zero();
    o.wall_now = [&wall] { return wall; };
    Recorder rec(o);
    ASSERT_TRUE(rec.open(file_).ok());
    for (int i = 0; i < kSteps; ++i) {
      const int64_t t = int64_t{i} * 100'000'000;
      ignition::msgs::Odometry odom;
      msgs::set_stamp(odom.mutable_header(), SimTime::from_ns(t), "odom");
      odom.mutable_pose()->mutable_position()->set_x(0.1 * i);
      ASSERT_TRUE(rec.on_message(publish("/model/ugv1/odometry", msgs::kOdometry, t, i + 1,
                                         msgs::serialize(odom)))
                      .ok());
      ignition::msgs::Pose_V truth;
      msgs::set_stamp(truth.mutable_header(), SimTime::from_ns(t));
      auto* pose = truth.add_pose();
      pose->set_name("ugv1");
      msgs::set_planar_pose(pose, 0.2 * i, 1.0, 0.0);
      ASSERT_TRUE(rec.on_message(publish("/world/depot/pose/info", msgs::kPoseV, t, i + 1,
                                         msgs::serialize(truth)))
                      .ok());
      if (i % 5 == 0) {  // a lidar at 2 Hz: three rays
        ignition::msgs::LaserScan scan;
        msgs::set_stamp(scan.mutable_header(), SimTime::from_ns(t), "ugv1::lidar");
        msgs::set_planar_pose(scan.mutable_world_pose(), 0.2 * i, 1.0, 0.5);
        scan.set_angle_min(-1.0);
        scan.set_angle_max(1.0);
        scan.set_count(3);
        for (const double r : {1.5, 2.5, 3.5}) scan.add_ranges(r);
        ASSERT_TRUE(rec.on_message(publish("/model/ugv1/scan", msgs::kLaserScan, t, i + 1,
                                           msgs::serialize(scan)))
                        .ok());
      }
      wall = wall + milliseconds(100);
    }
    std::vector<SceneShape> scene(2);
    scene[0].id = "wall::link::c";
    scene[0].x = 3;
    scene[0].y = 4;
    scene[0].size_x = 10;
    scene[0].size_y = 0.2;
    scene[0].z_max = 2;
    scene[1].id = "pillar::link::c";
    scene[1].cylinder = true;
    scene[1].x = -2;
    scene[1].y = 1;
    scene[1].radius = 0.25;
    scene[1].z_max = 1;
    ASSERT_TRUE(rec.write_scene(SimTime::zero(), scene).ok());
    ASSERT_TRUE(rec.on_message(publish("/custom", "acme.Thing", 5, 1, "opaque")).ok());
    events_ = {{{"event", "phase"}, {"phase", "timeline"}},
               {{"event", "action.start"}, {"action", "send_goal"}, {"vehicle", "ugv1"}}};
    for (size_t i = 0; i < events_.size(); ++i) {
      ASSERT_TRUE(rec.event(SimTime::from_ns(static_cast<int64_t>(i)), events_[i]).ok());
    }
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    ASSERT_TRUE(rec.write_side(SideChannel::kMetrics, SimTime::from_ns(1'000'000'000),
                               {{"sim", 1.0}, {"rtf", nan}, {"drift_s", inf}})
                    .ok());
    ASSERT_TRUE(rec.write_side(SideChannel::kAssertions, SimTime::from_ns(1'500'000'000),
                               {{"name", "reached_goal"}, {"status", "passed"}, {"t_s", 1.5}})
                    .ok());
    ASSERT_TRUE(rec.write_side(SideChannel::kResources, SimTime::from_ns(1'000'000'000),
                               {{"container", "stack"}, {"cpu_pct", 12.5}, {"pids", 4}})
                    .ok());
    ASSERT_TRUE(rec.write_side(SideChannel::kKpis, SimTime::from_ns(2'000'000'000),
                               {{"kind", "kpis"}, {"kpis", {{"path_length_m", -inf}}}})
                    .ok());
    ASSERT_TRUE(rec.close("passed").ok());
  }

  const json& channel(const std::string& topic) {
    for (const json& c : out_["channels"]) {
      if (c["topic"] == topic) return c;
    }
    static const json kNone;
    return kNone;
  }

  static constexpr int kSteps = 20;
  fs::path dir_;
  fs::path file_;
  json out_;
  std::vector<json> events_;
};

TEST_F(RecorderIndependentReader, SeesEveryTopicWithItsCount) {
  const json& t = out_["topics"];
  EXPECT_EQ(t["/model/ugv1/odometry"]["count"], kSteps);
  EXPECT_EQ(t["/world/depot/pose/info"]["count"], kSteps);
  EXPECT_EQ(t["/fieldproof/vehicles/ugv1/pose"]["count"], kSteps);
  EXPECT_EQ(t["/custom"]["count"], 1);
  EXPECT_EQ(t["/fieldproof/events"]["count"], 2);
  EXPECT_EQ(t["/fieldproof/metrics"]["count"], 1);
  EXPECT_EQ(t["/fieldproof/assertions"]["count"], 1);
  EXPECT_EQ(t["/fieldproof/resources"]["count"], 1);
  EXPECT_EQ(t["/fieldproof/kpis"]["count"], 1);
}

TEST_F(RecorderIndependentReader, SideChannelsAreJsonWithParseableJsonSchemas) {
  for (SideChannel s : side_channels()) {
    const json& c = channel(std::string(side_channel_topic(s)));
    EXPECT_EQ(c["message_encoding"], "json") << side_channel_topic(s);
    EXPECT_EQ(c["schema_encoding"], "jsonschema") << side_channel_topic(s);
    EXPECT_EQ(c["schema_is_json"], true) << side_channel_topic(s);
  }
}

TEST_F(RecorderIndependentReader, DecodedSideChannelJsonMatchesWhatWasWrittenWithNullForNonFinite) {
  const json& t = out_["topics"];
  EXPECT_EQ(t["/fieldproof/events"]["messages"], json(events_));
  EXPECT_EQ(t["/fieldproof/metrics"]["messages"][0],
            (json{{"sim", 1.0}, {"rtf", nullptr}, {"drift_s", nullptr}}));
  EXPECT_EQ(t["/fieldproof/assertions"]["messages"][0],
            (json{{"name", "reached_goal"}, {"status", "passed"}, {"t_s", 1.5}}));
  EXPECT_EQ(t["/fieldproof/kpis"]["messages"][0]["kpis"]["path_length_m"], nullptr);
}

TEST_F(RecorderIndependentReader, ProtobufBusTopicDecodesWithTheRecordedSchema) {
  const json& c = channel("/model/ugv1/odometry");
  EXPECT_EQ(c["message_encoding"], "protobuf");
  EXPECT_EQ(c["schema_name"], "ignition.msgs.Odometry");
  const json& msgs = out_["topics"]["/model/ugv1/odometry"]["messages"];
  ASSERT_EQ(msgs.size(), static_cast<size_t>(kSteps));
  for (int i = 0; i < kSteps; ++i) {
    EXPECT_DOUBLE_EQ(msgs[i]["pose"]["position"]["x"].get<double>(), 0.1 * i) << i;
  }
}

TEST_F(RecorderIndependentReader, PoseChannelDecodesAsFoxglovePoseInFrame) {
  const json& c = channel("/fieldproof/vehicles/ugv1/pose");
  EXPECT_EQ(c["schema_name"], "foxglove.PoseInFrame");
  EXPECT_EQ(c["schema_encoding"], "protobuf");
  const json& msgs = out_["topics"]["/fieldproof/vehicles/ugv1/pose"]["messages"];
  ASSERT_EQ(msgs.size(), static_cast<size_t>(kSteps));
  const json& last = msgs[kSteps - 1];
  EXPECT_DOUBLE_EQ(last["pose"]["position"]["x"].get<double>(), 0.2 * (kSteps - 1));
  EXPECT_DOUBLE_EQ(last["pose"]["orientation"]["w"].get<double>(), 1.0);
  EXPECT_EQ(last["timestamp"]["seconds"], "1");
  EXPECT_EQ(last["timestamp"]["nanos"], 900'000'000);
}

// What Foxglove's 3D panel draws: the transform tree, the lidar, the world.
TEST_F(RecorderIndependentReader, VehiclesAreFrameTransformsFromTheWorld) {
  const json& c = channel("/fieldproof/tf");
  EXPECT_EQ(c["schema_name"], "foxglove.FrameTransform");
  EXPECT_EQ(c["schema_encoding"], "protobuf");
  EXPECT_EQ(c["message_encoding"], "protobuf");
  const json& msgs = out_["topics"]["/fieldproof/tf"]["messages"];
  ASSERT_EQ(msgs.size(), static_cast<size_t>(kSteps));
  const json& last = msgs[kSteps - 1];
  EXPECT_EQ(last["parent_frame_id"], "world");
  EXPECT_EQ(last["child_frame_id"], "ugv1");
  EXPECT_DOUBLE_EQ(last["translation"]["x"].get<double>(), 0.2 * (kSteps - 1));
  EXPECT_DOUBLE_EQ(last["translation"]["y"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(last["rotation"]["w"].get<double>(), 1.0);
  EXPECT_EQ(last["timestamp"]["seconds"], "1");
}

TEST_F(RecorderIndependentReader, EachLidarIsAFoxgloveLaserScanAtItsWorldPose) {
  const json& c = channel("/fieldproof/vehicles/ugv1/scan");
  EXPECT_EQ(c["schema_name"], "foxglove.LaserScan");
  EXPECT_EQ(c["schema_encoding"], "protobuf");
  const json& msgs = out_["topics"]["/fieldproof/vehicles/ugv1/scan"]["messages"];
  ASSERT_EQ(msgs.size(), static_cast<size_t>(kSteps / 5));
  const json& m = msgs[1];  // i = 5
  EXPECT_EQ(m["frame_id"], "world");
  EXPECT_DOUBLE_EQ(m["pose"]["position"]["x"].get<double>(), 1.0);
  EXPECT_NEAR(m["pose"]["orientation"]["z"].get<double>(), std::sin(0.25), 1e-12);
  EXPECT_DOUBLE_EQ(m["start_angle"].get<double>(), -1.0);
  EXPECT_DOUBLE_EQ(m["end_angle"].get<double>(), 1.0);
  EXPECT_EQ(m["ranges"], json::array({1.5, 2.5, 3.5}));
  EXPECT_EQ(m["timestamp"]["nanos"], 500'000'000);
  // The raw ignition message is still recorded on its own topic.
  EXPECT_EQ(out_["topics"]["/model/ugv1/scan"]["count"], kSteps / 5);
}

TEST_F(RecorderIndependentReader, WorldGeometryIsAFoxgloveSceneUpdate) {
  const json& c = channel("/fieldproof/scene");
  EXPECT_EQ(c["schema_name"], "foxglove.SceneUpdate");
  EXPECT_EQ(c["schema_encoding"], "protobuf");
  const json& msgs = out_["topics"]["/fieldproof/scene"]["messages"];
  ASSERT_EQ(msgs.size(), 1u);
  const json& e = msgs[0]["entities"];
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0]["id"], "wall::link::c");
  EXPECT_EQ(e[0]["frame_id"], "world");
  ASSERT_EQ(e[0]["cubes"].size(), 1u);
  EXPECT_DOUBLE_EQ(e[0]["cubes"][0]["size"]["x"].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(e[0]["cubes"][0]["size"]["z"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(e[0]["cubes"][0]["pose"]["position"]["z"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(e[0]["cubes"][0]["color"]["a"].get<double>(), 1.0);
  ASSERT_EQ(e[1]["cylinders"].size(), 1u);
  EXPECT_DOUBLE_EQ(e[1]["cylinders"][0]["size"]["x"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(e[1]["cylinders"][0]["top_scale"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(e[1]["cylinders"][0]["pose"]["position"]["x"].get<double>(), -2.0);
}

TEST_F(RecorderIndependentReader, RunMetadataCarriesTheStatus) {
  bool found = false;
  for (const json& m : out_["metadata"]) {
    if (m["name"] == "fieldproof.run") {
      found = true;
      EXPECT_EQ(m["metadata"]["status"], "passed");
      EXPECT_EQ(m["metadata"]["run_id"], "js1");
      EXPECT_EQ(m["metadata"]["scenario"], "ugv_nav_to_goal");
    }
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace fieldproof::record
