#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <sstream>
#include <string>

#include "fieldproof/record/mcap_reader.hpp"
#include "fieldproof/record/mcap_writer.hpp"
#include "record/mcap_test_util.hpp"
#include "record/mcap_wire.hpp"

namespace fieldproof::record {
namespace {

using testing::Sample;
using testing::write_sample_bytes;

McapReader open_ok(const std::string& bytes, McapReaderOptions opt = {}) {
  McapReader r;
  Status s = r.open_bytes(bytes, std::move(opt));
  EXPECT_TRUE(s.ok()) << s.to_string();
  return r;
}

class RoundTrip : public ::testing::TestWithParam<Compression> {};

TEST_P(RoundTrip, EveryMessageReadsBackIdentical) {
  Sample sample;
  std::string bytes = write_sample_bytes({.compression = GetParam()}, &sample);
  McapReader r;
  ASSERT_TRUE(r.open_bytes(bytes).ok());
  EXPECT_TRUE(r.used_summary());
  EXPECT_TRUE(r.problems().empty()) << r.problems().front().message;
  auto all = r.read_all();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, sample.messages);
}

TEST_P(RoundTrip, ScanWithoutSummaryReadsTheSameMessages) {
  Sample sample;
  std::string bytes = write_sample_bytes({.compression = GetParam()}, &sample);
  McapReader r;
  ASSERT_TRUE(r.open_bytes(bytes, {.use_summary = false}).ok());
  EXPECT_FALSE(r.used_summary());
  EXPECT_TRUE(r.problems().empty()) << r.problems().front().message;
  auto all = r.read_all();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, sample.messages);
}

INSTANTIATE_TEST_SUITE_P(Compressions, RoundTrip,
                         ::testing::Values(Compression::kNone, Compression::kLz4,
                                           Compression::kZstd),
                         [](const auto& info) { return ::testing::PrintToString(info.param); });

TEST(McapRoundTrip, SchemasAndChannelsReadBackWithMetadata) {
  McapReader r = open_ok(write_sample_bytes({}));
  ASSERT_EQ(r.schemas().size(), 1u);
  const Schema& s = r.schemas().at(1);
  EXPECT_EQ(s.name, "fieldproof.Odometry");
  EXPECT_EQ(s.encoding, "jsonschema");
  EXPECT_EQ(s.data, R"({"type":"object"})");
  ASSERT_EQ(r.channels().size(), 2u);
  EXPECT_EQ(r.channels().at(0).topic, "/odom");
  EXPECT_EQ(r.channels().at(0).schema_id, 1);
  EXPECT_EQ(r.channels().at(0).metadata, (KeyValueMap{{"frame", "base_link"}}));
  EXPECT_EQ(r.channels().at(1).topic, "/fieldproof/events");
  EXPECT_EQ(r.channels().at(1).schema_id, 0);
}

TEST(McapRoundTrip, StatisticsCountWhatWasWritten) {
  McapReader r = open_ok(write_sample_bytes({}));
  const Statistics& st = r.statistics();
  EXPECT_EQ(st.message_count, 40u);
  EXPECT_EQ(st.schema_count, 1);
  EXPECT_EQ(st.channel_count, 2u);
  EXPECT_EQ(st.chunk_count, 4u);
  EXPECT_EQ(st.metadata_count, 1u);
  EXPECT_EQ(st.attachment_count, 1u);
  EXPECT_EQ(st.message_start_time_ns, 1'000'000'000);
  EXPECT_EQ(st.message_end_time_ns, 1'390'000'000);
  EXPECT_EQ(st.channel_message_counts.at(1), 14u);  // i % 3 == 0 for i in 0..39
  EXPECT_EQ(st.channel_message_counts.at(0), 26u);
}

TEST(McapRoundTrip, ScanCountsTheSameStatisticsAsTheSummary) {
  std::string bytes = write_sample_bytes({});
  McapReader indexed = open_ok(bytes);
  McapReader scanned = open_ok(bytes, {.use_summary = false});
  EXPECT_EQ(scanned.statistics(), indexed.statistics());
}

TEST(McapRoundTrip, MetadataReadsBack) {
  McapReader r = open_ok(write_sample_bytes({}));
  ASSERT_EQ(r.metadata().size(), 1u);
  EXPECT_EQ(r.metadata()[0].name, "run");
  EXPECT_EQ(r.metadata()[0].metadata, (KeyValueMap{{"run_id", "r1"}, {"seed", "7"}}));
}

TEST(McapRoundTrip, AttachmentReadsBackWithItsData) {
  McapReader r = open_ok(write_sample_bytes({}));
  ASSERT_EQ(r.attachments().size(), 1u);
  EXPECT_EQ(r.attachments()[0].name, "scenario.yaml");
  EXPECT_EQ(r.attachments()[0].data_size, 5u);
  auto a = r.read_attachment(r.attachments()[0]);
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  EXPECT_EQ(*a, (Attachment{5, 6, "scenario.yaml", "text/yaml", "a: 1\n"}));
}

TEST(McapRoundTrip, HeaderCarriesProfileAndLibrary) {
  McapReader r = open_ok(write_sample_bytes({.profile = "x-fieldproof", .library = "lib 1"}));
  EXPECT_EQ(r.profile(), "x-fieldproof");
  EXPECT_EQ(r.library(), "lib 1");
}

TEST(McapRoundTrip, EmptyFileOpensWithNothingInIt) {
  std::ostringstream out;
  McapWriter w;
  ASSERT_TRUE(w.open(out).ok());
  ASSERT_TRUE(w.close().ok());
  McapReader r = open_ok(out.str());
  EXPECT_TRUE(r.has_footer());
  EXPECT_TRUE(r.problems().empty());
  EXPECT_EQ(r.statistics().message_count, 0u);
  EXPECT_EQ(r.chunk_count(), 0u);
  auto all = r.read_all();
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(all->empty());
}

TEST(McapRoundTrip, MessageLargerThanChunkSizeGetsItsOwnChunk) {
  std::ostringstream out;
  McapWriter w({.compression = Compression::kZstd, .chunk_size = 1024});
  ASSERT_TRUE(w.open(out).ok());
  auto ch = w.add_channel("/big", "raw", 0);
  std::string big(100'000, 'x');
  ASSERT_TRUE(w.write(*ch, 1, SimTime::from_ns(5), SimTime::from_ns(5), "small").ok());
  ASSERT_TRUE(w.write(*ch, 2, SimTime::from_ns(6), SimTime::from_ns(6), big).ok());
  EXPECT_EQ(w.buffered_bytes(), 0u);
  ASSERT_TRUE(w.close().ok());
  McapReader r = open_ok(out.str());
  auto all = r.read_all();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[1].data, big);
}

TEST(McapRoundTrip, WithoutMessageIndexesIndexedReadsStillWork) {
  Sample sample;
  std::string bytes = write_sample_bytes({.write_message_indexes = false}, &sample);
  McapReader r = open_ok(bytes);
  EXPECT_TRUE(r.used_summary());
  auto all = r.read_all({.topics = {"/odom"}});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 26u);
}

TEST(McapRoundTrip, WithoutCrcsFileStillReads) {
  Sample sample;
  McapReader r = open_ok(write_sample_bytes({.enable_crcs = false}, &sample));
  EXPECT_TRUE(r.problems().empty());
  EXPECT_EQ(*r.read_all(), sample.messages);
}

TEST(McapRoundTrip, WithoutChunkIndexesTheReaderScansAndFindsEverything) {
  Sample sample;
  McapReader r = open_ok(write_sample_bytes({.write_chunk_indexes = false}, &sample));
  EXPECT_FALSE(r.used_summary());
  EXPECT_TRUE(r.problems().empty());
  EXPECT_EQ(*r.read_all(), sample.messages);
}

TEST(McapRoundTrip, WithoutStatisticsRecordTheSummaryStillServesReads) {
  Sample sample;
  McapReader r = open_ok(write_sample_bytes({.write_statistics = false}, &sample));
  EXPECT_TRUE(r.used_summary());
  EXPECT_EQ(r.statistics().chunk_count, 4u);
  EXPECT_EQ(r.statistics().message_start_time_ns, 1'000'000'000);
  EXPECT_EQ(*r.read_all(), sample.messages);
}

TEST(McapRoundTrip, MessagesOutsideChunksFromAnotherWriterAreRead) {
  // The specification's "Single Message" file, unchunked and without a summary, built by hand.
  std::vector<uint8_t> b;
  wire::Appender a(b);
  a.bytes(wire::kMagic, wire::kMagicSize);
  size_t r = a.begin_record(Opcode::kHeader);
  a.str("");
  a.str("hand-made");
  a.end_record(r);
  r = a.begin_record(Opcode::kSchema);
  a.u16(1);
  a.str("S");
  a.str("jsonschema");
  a.str("{}");
  a.end_record(r);
  r = a.begin_record(Opcode::kChannel);
  a.u16(7);
  a.u16(1);
  a.str("/loose");
  a.str("json");
  a.string_map({});
  a.end_record(r);
  for (uint64_t t : {30u, 10u, 20u}) {
    r = a.begin_record(Opcode::kMessage);
    a.u16(7);
    a.u32(static_cast<uint32_t>(t));
    a.u64(t);
    a.u64(t);
    a.bytes("{}", 2);
    a.end_record(r);
  }
  r = a.begin_record(Opcode::kDataEnd);
  a.u32(0);
  a.end_record(r);
  r = a.begin_record(Opcode::kFooter);
  a.u64(0);
  a.u64(0);
  a.u32(0);
  a.end_record(r);
  a.bytes(wire::kMagic, wire::kMagicSize);

  McapReader reader = open_ok(std::string(b.begin(), b.end()));
  EXPECT_TRUE(reader.has_footer());
  EXPECT_TRUE(reader.problems().empty()) << reader.problems().front().message;
  EXPECT_EQ(reader.library(), "hand-made");
  auto all = reader.read_all();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].log_time_ns, 10);
  EXPECT_EQ((*all)[2].log_time_ns, 30);
  EXPECT_EQ((*all)[0].channel_id, 7);
  EXPECT_EQ(reader.statistics().message_count, 3u);
}

// Indexed reads.

TEST(McapIndexedRead, TimeRangeIsHalfOpen) {
  McapReader r = open_ok(write_sample_bytes({}));
  auto msgs = r.read_all({.start_ns = 1'100'000'000, .end_ns = 1'200'000'000});
  ASSERT_TRUE(msgs.ok());
  ASSERT_EQ(msgs->size(), 10u);
  EXPECT_EQ(msgs->front().log_time_ns, 1'100'000'000);
  EXPECT_EQ(msgs->back().log_time_ns, 1'190'000'000);
}

TEST(McapIndexedRead, TopicListSelectsOnlyThoseTopics) {
  McapReader r = open_ok(write_sample_bytes({}));
  auto msgs = r.read_all({.topics = {"/fieldproof/events"}});
  ASSERT_TRUE(msgs.ok());
  EXPECT_EQ(msgs->size(), 14u);
  EXPECT_TRUE(
      std::all_of(msgs->begin(), msgs->end(), [](const Message& m) { return m.channel_id == 1; }));
}

TEST(McapIndexedRead, ChunksWithoutTheWantedTopicAreNotEvenDecompressed) {
  // Chunk 1 holds only /a, chunk 2 only /b; chunk 1 is then damaged. Reading /b goes through the
  // message indexes and never touches chunk 1; reading /a meets the damage.
  std::ostringstream out;
  McapWriterOptions opt;
  opt.compression = Compression::kNone;
  McapWriter w(opt);
  ASSERT_TRUE(w.open(out).ok());
  auto a = w.add_channel("/a", "raw", 0);
  auto b = w.add_channel("/b", "raw", 0);
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(w.write(*a, i, SimTime::from_ns(i), SimTime::from_ns(i), "payload-a").ok());
  }
  ASSERT_TRUE(w.close_chunk().ok());
  for (int i = 5; i < 10; ++i) {
    ASSERT_TRUE(w.write(*b, i, SimTime::from_ns(i), SimTime::from_ns(i), "payload-b").ok());
  }
  ASSERT_TRUE(w.close().ok());
  std::string bytes = out.str();
  bytes[bytes.find("payload-a")] = 'P';

  McapReader r = open_ok(bytes);
  ASSERT_TRUE(r.used_summary());
  auto only_b = r.read_all({.topics = {"/b"}});
  ASSERT_TRUE(only_b.ok());
  EXPECT_EQ(only_b->size(), 5u);
  EXPECT_TRUE(r.problems().empty());
  auto only_a = r.read_all({.topics = {"/a"}});
  ASSERT_TRUE(only_a.ok());
  EXPECT_TRUE(only_a->empty());
  ASSERT_EQ(r.problems().size(), 1u);
  EXPECT_NE(r.problems()[0].message.find("CRC mismatch"), std::string::npos);
}

TEST(McapIndexedRead, TimeRangeOutsideEveryChunkReadsNothing) {
  McapReader r = open_ok(write_sample_bytes({}));
  auto msgs = r.read_all({.start_ns = 5'000'000'000});
  ASSERT_TRUE(msgs.ok());
  EXPECT_TRUE(msgs->empty());
}

TEST(McapIndexedRead, UnknownTopicGivesNothing) {
  McapReader r = open_ok(write_sample_bytes({}));
  auto msgs = r.read_all({.topics = {"/nope"}});
  ASSERT_TRUE(msgs.ok());
  EXPECT_TRUE(msgs->empty());
}

TEST(McapIndexedRead, MessagesComeInLogTimeOrderTiesInFileOrder) {
  std::ostringstream out;
  McapWriter w({.chunk_size = 64});  // many small chunks whose time ranges overlap
  ASSERT_TRUE(w.open(out).ok());
  auto ch = w.add_channel("/t", "raw", 0);
  const int64_t times[] = {50, 10, 30, 10, 40, 20, 30, 10};
  for (uint32_t i = 0; i < 8; ++i) {
    ASSERT_TRUE(w.write(*ch, i, SimTime::from_ns(times[i]), SimTime::from_ns(0), "m").ok());
  }
  ASSERT_TRUE(w.close().ok());
  McapReader r = open_ok(out.str());
  std::vector<std::pair<int64_t, uint32_t>> got;
  ASSERT_TRUE(r.read_messages({}, [&](const MessageView& m) {
                 got.emplace_back(m.log_time_ns, m.sequence);
                 return true;
               }).ok());
  const std::vector<std::pair<int64_t, uint32_t>> want = {{10, 1}, {10, 3}, {10, 7}, {20, 5},
                                                          {30, 2}, {30, 6}, {40, 4}, {50, 0}};
  EXPECT_EQ(got, want);
}

TEST(McapIndexedRead, CallbackReturningFalseStopsTheRead) {
  McapReader r = open_ok(write_sample_bytes({}));
  int seen = 0;
  ASSERT_TRUE(r.read_messages({}, [&](const MessageView&) { return ++seen < 3; }).ok());
  EXPECT_EQ(seen, 3);
}

TEST(McapIndexedRead, MessageViewCarriesChannelAndSchema) {
  McapReader r = open_ok(write_sample_bytes({}));
  bool checked = false;
  ASSERT_TRUE(r.read_messages({.topics = {"/odom"}}, [&](const MessageView& m) {
                 EXPECT_EQ(m.channel->topic, "/odom");
                 EXPECT_NE(m.schema, nullptr);
                 if (m.schema != nullptr) {
                   EXPECT_EQ(m.schema->name, "fieldproof.Odometry");
                 }
                 EXPECT_EQ(m.publish_time_ns, m.log_time_ns + 1);
                 checked = true;
                 return false;
               }).ok());
  EXPECT_TRUE(checked);
}

// Writer contracts.

TEST(McapWriterContract, BufferNeverExceedsChunkSizePlusOneMessage) {
  std::ostringstream out;
  const uint64_t chunk = 4096;
  McapWriter w({.compression = Compression::kLz4, .chunk_size = chunk});
  ASSERT_TRUE(w.open(out).ok());
  auto ch = w.add_channel("/x", "raw", 0);
  testing::SplitMix rng(1);
  uint64_t max_seen = 0;
  for (int i = 0; i < 5000; ++i) {
    std::string payload(rng.below(700), 'p');
    ASSERT_TRUE(w.write(*ch, i, SimTime::from_ns(i), SimTime::from_ns(i), payload).ok());
    const uint64_t message_record = 9 + 22 + payload.size();
    ASSERT_LE(w.buffered_bytes(), chunk + message_record);
    max_seen = std::max(max_seen, w.buffered_bytes());
  }
  EXPECT_GT(max_seen, chunk / 2);  // the bound was really approached
  EXPECT_GT(w.statistics().chunk_count, 100u);
  ASSERT_TRUE(w.close().ok());
}

TEST(McapWriterContract, CloseChunkPutsEverythingSoFarOnDisk) {
  auto dir = testing::temp_dir("durable");
  auto path = dir / "live.mcap";
  McapWriter w({.compression = Compression::kZstd});
  ASSERT_TRUE(w.open(path.string()).ok());
  auto ch = w.add_channel("/x", "raw", 0);
  for (int i = 0; i < 7; ++i) {
    ASSERT_TRUE(w.write(*ch, i, SimTime::from_ns(i), SimTime::from_ns(i), "abc").ok());
  }
  ASSERT_TRUE(w.close_chunk().ok());
  // The writer is still open (as if the process were killed now): read what is on disk.
  McapReader r;
  ASSERT_TRUE(r.open(path.string()).ok());
  EXPECT_FALSE(r.has_footer());
  EXPECT_EQ(r.read_all()->size(), 7u);
  ASSERT_FALSE(r.problems().empty());  // says the file was not closed
  ASSERT_TRUE(w.close().ok());
  std::filesystem::remove_all(dir);
}

// A sink that counts flushes and fails every write once `fail_after` bytes have gone through.
class TestSink : public McapSink {
 public:
  TestSink(int* flushes, uint64_t fail_after) : flushes_(flushes), fail_after_(fail_after) {}
  Status write(const uint8_t*, size_t size) override {
    if (written_ + size > fail_after_) return {StatusCode::kIoError, "disk full"};
    written_ += size;
    return {};
  }
  Status flush() override {
    ++*flushes_;
    return {};
  }

 private:
  int* flushes_;
  uint64_t fail_after_;
  uint64_t written_ = 0;
};

TEST(McapWriterContract, EveryClosedChunkIsFlushed) {
  int flushes = 0;
  McapWriterOptions opt;
  opt.chunk_size = 100;
  McapWriter w(opt);
  ASSERT_TRUE(w.open(std::make_unique<TestSink>(&flushes, UINT64_MAX)).ok());
  auto ch = w.add_channel("/x", "raw", 0);
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(
        w.write(*ch, i, SimTime::from_ns(i), SimTime::from_ns(i), std::string(80, 'x')).ok());
  }
  EXPECT_EQ(w.statistics().chunk_count, 10u);
  EXPECT_EQ(flushes, 10);
}

TEST(McapWriterContract, SinkFailureIsReturnedAndSticks) {
  int flushes = 0;
  McapWriterOptions opt;
  opt.chunk_size = 100;
  McapWriter w(opt);
  ASSERT_TRUE(w.open(std::make_unique<TestSink>(&flushes, 300)).ok());
  auto ch = w.add_channel("/x", "raw", 0);
  Status first;
  for (int i = 0; i < 10 && first.ok(); ++i) {
    first = w.write(*ch, i, SimTime::from_ns(i), SimTime::from_ns(i), std::string(80, 'x'));
  }
  ASSERT_EQ(first.code(), StatusCode::kIoError);
  EXPECT_NE(first.message().find("disk full"), std::string::npos);
  EXPECT_NE(first.message().find("offset"), std::string::npos);
  // Later calls report the same error instead of writing a damaged file further.
  EXPECT_EQ(w.write(*ch, 99, SimTime::from_ns(99), SimTime::from_ns(99), "x").code(),
            StatusCode::kIoError);
  EXPECT_EQ(w.close().code(), StatusCode::kIoError);
}

TEST(McapWriterContract, WriteOnUndeclaredChannelIsRefused) {
  std::ostringstream out;
  McapWriter w;
  ASSERT_TRUE(w.open(out).ok());
  Status s = w.write(3, 0, SimTime::from_ns(1), SimTime::from_ns(1), "x");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("undeclared channel 3"), std::string::npos);
}

TEST(McapWriterContract, ChannelOnUnknownSchemaIsRefused) {
  std::ostringstream out;
  McapWriter w;
  ASSERT_TRUE(w.open(out).ok());
  auto ch = w.add_channel("/x", "json", 9);
  EXPECT_EQ(ch.status().code(), StatusCode::kInvalidArgument);
}

TEST(McapWriterContract, NegativeTimeIsRefused) {
  std::ostringstream out;
  McapWriter w;
  ASSERT_TRUE(w.open(out).ok());
  auto ch = w.add_channel("/x", "json", 0);
  EXPECT_EQ(w.write(*ch, 0, SimTime::from_ns(-1), SimTime::from_ns(0), "x").code(),
            StatusCode::kInvalidArgument);
}

TEST(McapWriterContract, WriteBeforeOpenIsAFailedPrecondition) {
  McapWriter w;
  EXPECT_EQ(w.write(0, 0, SimTime::from_ns(1), SimTime::from_ns(1), "x").code(),
            StatusCode::kFailedPrecondition);
}

TEST(McapWriterContract, WriteAfterCloseIsAFailedPrecondition) {
  std::ostringstream out;
  McapWriter w;
  ASSERT_TRUE(w.open(out).ok());
  auto ch = w.add_channel("/x", "json", 0);
  ASSERT_TRUE(w.close().ok());
  EXPECT_EQ(w.write(*ch, 0, SimTime::from_ns(1), SimTime::from_ns(1), "x").code(),
            StatusCode::kFailedPrecondition);
}

TEST(McapWriterContract, OpenInMissingDirectoryIsAnIoError) {
  McapWriter w;
  Status s = w.open("/nonexistent-dir-fieldproof/x.mcap");
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_NE(s.message().find("/nonexistent-dir-fieldproof/x.mcap"), std::string::npos);
}

TEST(McapWriterContract, OptionsValidateRefusesZeroChunkSize) {
  McapWriterOptions o;
  o.chunk_size = 0;
  Status s = o.validate();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("chunk_size"), std::string::npos);
  McapWriter w(o);
  std::ostringstream out;
  EXPECT_EQ(w.open(out).code(), StatusCode::kInvalidArgument);
}

TEST(McapWriterContract, OptionsValidateRefusesOutOfRangeLevel) {
  McapWriterOptions o;
  o.compression = Compression::kLz4;
  o.compression_level = 40;
  EXPECT_EQ(o.validate().code(), StatusCode::kInvalidArgument);
}

TEST(McapWriterContract, DefaultOptionsValidate) {
  EXPECT_TRUE(McapWriterOptions{}.validate().ok());
}

TEST(McapWriterContract, DestructorFinalisesAnOpenFile) {
  std::ostringstream out;
  {
    McapWriter w;
    ASSERT_TRUE(w.open(out).ok());
    auto ch = w.add_channel("/x", "json", 0);
    ASSERT_TRUE(w.write(*ch, 0, SimTime::from_ns(1), SimTime::from_ns(1), "{}").ok());
  }
  McapReader r = open_ok(out.str());
  EXPECT_TRUE(r.used_summary());
  EXPECT_EQ(r.read_all()->size(), 1u);
}

TEST(McapCompressionName, ParsesTheNamesScenariosUse) {
  EXPECT_EQ(parse_compression("zstd"), Compression::kZstd);
  EXPECT_EQ(parse_compression("lz4"), Compression::kLz4);
  EXPECT_EQ(parse_compression("none"), Compression::kNone);
  EXPECT_EQ(parse_compression(""), Compression::kNone);
  EXPECT_FALSE(parse_compression("bz2").has_value());
}

}  // namespace
}  // namespace fieldproof::record
