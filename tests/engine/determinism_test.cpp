// compare_recordings: the first bus message where two recordings differ, side channels left out.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fieldproof/engine/determinism.hpp"
#include "fieldproof/msgs/ign.hpp"
#include "fieldproof/record/mcap_writer.hpp"

namespace fieldproof::engine {
namespace {

namespace fs = std::filesystem;

std::string twist(double vx) {
  ignition::msgs::Twist t;
  t.mutable_linear()->set_x(vx);
  return msgs::serialize(t);
}

// Writes /cmd_vel Twists with these x velocities at 1 ms, 2 ms, ... and a side-channel event
// carrying `wall` (wall-clock fields differ between runs and must not count).
fs::path write(const std::string& name, const std::vector<double>& vx, int wall) {
  const fs::path p = fs::temp_directory_path() / ("fieldproof_determinism_" + name + ".mcap");
  record::McapWriter w;
  EXPECT_TRUE(w.open(p.string()).ok());
  const auto schema = w.add_schema("ignition.msgs.Twist", "protobuf", "");
  const auto ch = w.add_channel("/cmd_vel", "protobuf", *schema, {});
  const auto js = w.add_schema("fieldproof.Event", "jsonschema", "{}");
  const auto ev = w.add_channel("/fieldproof/events", "json", *js, {});
  for (size_t i = 0; i < vx.size(); ++i) {
    const SimTime t = SimTime::from_ns(static_cast<int64_t>(i + 1) * 1'000'000);
    EXPECT_TRUE(w.write(*ch, static_cast<uint32_t>(i), t, t, twist(vx[i])).ok());
    EXPECT_TRUE(
        w.write(*ev, static_cast<uint32_t>(i), t, t, "{\"wall_s\":" + std::to_string(wall) + "}")
            .ok());
  }
  EXPECT_TRUE(w.close().ok());
  return p;
}

TEST(CompareRecordings, IdenticalStreamsHaveNoDifferenceWhateverTheSideChannelsSay) {
  const auto c =
      compare_recordings(write("same_a", {0.1, 0.2, 0.3}, 1), write("same_b", {0.1, 0.2, 0.3}, 2));
  ASSERT_TRUE(c.ok) << c.error;
  EXPECT_FALSE(c.difference.has_value());
  EXPECT_EQ(c.compared, 3u);
}

TEST(CompareRecordings, AnInjectedDifferenceIsReportedWithItsIndexTopicAndBothValues) {
  const auto c =
      compare_recordings(write("diff_a", {0.1, 0.2, 0.3}, 1), write("diff_b", {0.1, 0.25, 0.3}, 1));
  ASSERT_TRUE(c.ok) << c.error;
  ASSERT_TRUE(c.difference.has_value());
  EXPECT_EQ(c.difference->index, 1u);
  EXPECT_EQ(c.difference->topic_a, "/cmd_vel");
  EXPECT_DOUBLE_EQ(c.difference->t_a, 0.002);
  EXPECT_NE(c.difference->value_a.find("0.2"), std::string::npos) << c.difference->value_a;
  EXPECT_NE(c.difference->value_b.find("0.25"), std::string::npos) << c.difference->value_b;
  EXPECT_EQ(c.difference->field, "linear.x");
}

TEST(CompareRecordings, AShorterStreamDiffersWhereItEnds) {
  const auto c = compare_recordings(write("short_a", {0.1, 0.2}, 1), write("short_b", {0.1}, 1));
  ASSERT_TRUE(c.ok) << c.error;
  ASSERT_TRUE(c.difference.has_value());
  EXPECT_EQ(c.difference->index, 1u);
  EXPECT_EQ(c.difference->value_b, "(end of stream)");
}

TEST(CompareRecordings, AFileThatIsNotMcapIsAnError) {
  const fs::path bad = fs::temp_directory_path() / "fieldproof_determinism_bad.mcap";
  std::ofstream(bad) << "not mcap";
  const auto c = compare_recordings(bad, bad);
  EXPECT_FALSE(c.ok);
  EXPECT_FALSE(c.error.empty());
}

}  // namespace
}  // namespace fieldproof::engine
