// Files written by McapWriter, read by the official TypeScript reader (@mcap/core, run under
// Node by tests/js/mcap_check.mjs): what it sees must be what was written.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "fieldproof/record/mcap_writer.hpp"
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
  return testing::run_node_check(FIELDPROOF_JS_DIR, "mcap_check.mjs", file);
}

class IndependentReader : public ::testing::TestWithParam<Compression> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(fs::path(FIELDPROOF_JS_DIR) / "node_modules" / "@mcap" / "core"))
        << "the independent MCAP reader is not installed: run scripts/install-deps.sh (it runs "
           "`npm ci` in tests/js)";
    dir_ = testing::temp_dir(std::string("js_") + std::string(compression_name(GetParam())));
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // Writes the sample recording (2 topics, 40 messages in 4 chunks, metadata, an attachment).
  fs::path write_file(testing::Sample* sample) {
    fs::path path = dir_ / "sample.mcap";
    McapWriterOptions opt;
    opt.compression = GetParam();
    opt.profile = "x-fieldproof";
    McapWriter w(opt);
    EXPECT_TRUE(w.open(path.string()).ok());
    *sample = testing::write_sample(w);
    EXPECT_TRUE(w.close().ok());
    return path;
  }

  json check(const fs::path& file) {
    NodeRun run = run_check(file);
    EXPECT_EQ(run.exit_code, 0) << run.out;
    json j = json::parse(run.out, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(j.is_discarded()) << "mcap_check.mjs printed no JSON:\n" << run.out;
    return j;
  }

  fs::path dir_;
};

TEST_P(IndependentReader, IndexedReaderSeesEveryMessagePerTopicInOrder) {
  testing::Sample s;
  json j = check(write_file(&s));
  ASSERT_TRUE(j.contains("indexed")) << j.dump(2);
  const json& ix = j["indexed"];
  EXPECT_EQ(ix["message_count"], 40);
  EXPECT_EQ(ix["topics"]["/odom"]["count"], 26);
  EXPECT_EQ(ix["topics"]["/fieldproof/events"]["count"], 14);
  EXPECT_EQ(ix["first_log_time"], "1000000000");
  EXPECT_EQ(ix["last_log_time"], "1390000000");
  EXPECT_EQ(ix["in_log_time_order"], true);
  size_t payload = 0;
  for (const auto& m : s.messages) payload += m.data.size();
  EXPECT_EQ(ix["payload_bytes"], payload);
  EXPECT_EQ(ix["chunk_index_count"], 4);
}

TEST_P(IndependentReader, IndexedReaderSeesSchemasChannelsAndHeader) {
  testing::Sample s;
  json j = check(write_file(&s));
  ASSERT_TRUE(j.contains("indexed")) << j.dump(2);
  const json& ix = j["indexed"];
  EXPECT_EQ(ix["header"]["profile"], "x-fieldproof");
  ASSERT_EQ(ix["schemas"].size(), 1u);
  EXPECT_EQ(ix["schemas"][0]["name"], "fieldproof.Odometry");
  EXPECT_EQ(ix["schemas"][0]["encoding"], "jsonschema");
  EXPECT_EQ(ix["schemas"][0]["data"], R"({"type":"object"})");
  ASSERT_EQ(ix["channels"].size(), 2u);
  EXPECT_EQ(ix["channels"][0]["topic"], "/odom");
  EXPECT_EQ(ix["channels"][0]["schema_id"], 1);
  EXPECT_EQ(ix["channels"][0]["metadata"]["frame"], "base_link");
  EXPECT_EQ(ix["channels"][1]["topic"], "/fieldproof/events");
  EXPECT_EQ(ix["channels"][1]["message_encoding"], "json");
}

TEST_P(IndependentReader, IndexedReaderSeesStatisticsAndSummaryOffsets) {
  testing::Sample s;
  json j = check(write_file(&s));
  ASSERT_TRUE(j.contains("indexed")) << j.dump(2);
  const json& st = j["indexed"]["statistics"];
  EXPECT_EQ(st["message_count"], "40");
  EXPECT_EQ(st["schema_count"], 1);
  EXPECT_EQ(st["channel_count"], 2);
  EXPECT_EQ(st["chunk_count"], 4);
  EXPECT_EQ(st["metadata_count"], 1);
  EXPECT_EQ(st["attachment_count"], 1);
  EXPECT_EQ(st["message_start_time"], "1000000000");
  EXPECT_EQ(st["message_end_time"], "1390000000");
  EXPECT_EQ(st["channel_message_counts"]["0"], "26");
  EXPECT_EQ(st["channel_message_counts"]["1"], "14");
  // Schema, Channel, ChunkIndex, AttachmentIndex, Statistics, MetadataIndex groups.
  EXPECT_EQ(j["indexed"]["summary_offset_opcodes"], json::parse("[3,4,8,10,11,13]"));
}

TEST_P(IndependentReader, IndexedReaderSeesMetadataAndAttachment) {
  testing::Sample s;
  json j = check(write_file(&s));
  ASSERT_TRUE(j.contains("indexed")) << j.dump(2);
  const json& ix = j["indexed"];
  ASSERT_EQ(ix["metadata"].size(), 1u);
  EXPECT_EQ(ix["metadata"][0]["name"], "run");
  EXPECT_EQ(ix["metadata"][0]["metadata"]["run_id"], "r1");
  ASSERT_EQ(ix["attachments"].size(), 1u);
  EXPECT_EQ(ix["attachments"][0]["name"], "scenario.yaml");
  EXPECT_EQ(ix["attachments"][0]["media_type"], "text/yaml");
  EXPECT_EQ(ix["attachments"][0]["data"], "a: 1\n");
  EXPECT_EQ(ix["attachments"][0]["log_time"], "5");
}

TEST_P(IndependentReader, StreamReaderValidatesCrcsAndCountsTheSameMessages) {
  testing::Sample s;
  json j = check(write_file(&s));
  ASSERT_TRUE(j.contains("stream")) << j.dump(2);
  const json& st = j["stream"];
  EXPECT_EQ(st["message_count"], 40);
  EXPECT_EQ(st["topics"]["/odom"]["count"], 26);
  EXPECT_EQ(st["topics"]["/fieldproof/events"]["count"], 14);
  EXPECT_EQ(st["done"], true);
  EXPECT_FALSE(st["record_counts"].contains("Chunk"));  // chunks are opened, not returned
  EXPECT_EQ(st["record_counts"]["MessageIndex"], 8);
  EXPECT_EQ(st["record_counts"]["DataEnd"], 1);
  EXPECT_EQ(st["record_counts"]["Footer"], 1);
  EXPECT_EQ(st["data_section_crc_ok"], true);
}

INSTANTIATE_TEST_SUITE_P(Compressions, IndependentReader,
                         ::testing::Values(Compression::kNone, Compression::kLz4,
                                           Compression::kZstd),
                         [](const auto& info) { return ::testing::PrintToString(info.param); });

}  // namespace
}  // namespace fieldproof::record
