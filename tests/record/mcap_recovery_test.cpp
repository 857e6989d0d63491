// Files cut short, corrupted and garbage: what the reader recovers and what it reports.
#include <gtest/gtest.h>

#include <sstream>

#include "fieldproof/record/mcap_reader.hpp"
#include "fieldproof/record/mcap_writer.hpp"
#include "record/mcap_test_util.hpp"

namespace fieldproof::record {
namespace {

using testing::le64;
using testing::Sample;
using testing::SplitMix;
using testing::write_sample_bytes;

// Messages the cut file must give back: those of every chunk whose record ends by `cut`.
size_t complete_chunk_messages(const std::string& bytes, const Sample& s, uint64_t cut,
                               int per_chunk) {
  size_t n = 0;
  for (size_t k = 0; k < s.chunk_starts.size(); ++k) {
    const uint64_t start = s.chunk_starts[k];
    const uint64_t end = start + 9 + le64(bytes, start + 1);
    if (end <= cut) {
      n += std::min<size_t>(per_chunk, s.messages.size() - k * per_chunk);
    }
  }
  return n;
}

struct Opened {
  Status status;
  std::vector<Message> messages;
  std::vector<McapProblem> problems;
  bool used_summary = false;
};

Opened open_and_read(std::string bytes, McapReaderOptions opt = {}) {
  Opened o;
  McapReader r;
  o.status = r.open_bytes(std::move(bytes), std::move(opt));
  if (!o.status.ok()) return o;
  auto all = r.read_all();
  if (all.ok()) o.messages = *all;
  o.problems = r.problems();
  o.used_summary = r.used_summary();
  return o;
}

bool mentions(const std::vector<McapProblem>& problems, const std::string& text) {
  for (const auto& p : problems) {
    if (p.message.find(text) != std::string::npos) return true;
  }
  std::string all;
  for (const auto& p : problems) all += "\n  " + p.message;
  ADD_FAILURE() << "no problem mentions '" << text << "'; problems:" << all;
  return false;
}

TEST(McapRecovery, CutInsideAChunkKeepsTheEarlierChunksAndReportsTheCut) {
  Sample s;
  std::string bytes = write_sample_bytes({.compression = Compression::kZstd}, &s);
  const uint64_t cut = s.chunk_starts[2] + 20;  // inside the third chunk record
  Opened o = open_and_read(bytes.substr(0, cut));
  ASSERT_TRUE(o.status.ok());
  EXPECT_FALSE(o.used_summary);
  ASSERT_EQ(o.messages.size(), 20u);
  EXPECT_EQ(o.messages.back(), s.messages[19]);
  EXPECT_TRUE(mentions(o.problems, "cut short"));
  EXPECT_TRUE(mentions(o.problems, "offset " + std::to_string(s.chunk_starts[2])));
}

TEST(McapRecovery, CutRightAfterAChunkKeepsThatChunk) {
  Sample s;
  std::string bytes = write_sample_bytes({.compression = Compression::kLz4}, &s);
  const uint64_t end_of_second = s.chunk_starts[1] + 9 + le64(bytes, s.chunk_starts[1] + 1);
  Opened o = open_and_read(bytes.substr(0, end_of_second));
  ASSERT_TRUE(o.status.ok());
  EXPECT_EQ(o.messages.size(), 20u);
  EXPECT_TRUE(mentions(o.problems, "without a Data End"));
}

TEST(McapRecovery, CutInTheSummaryRecoversEveryMessageByScanning) {
  Sample s;
  std::string bytes = write_sample_bytes({}, &s);
  Opened o = open_and_read(bytes.substr(0, bytes.size() - 60));  // footer and part of summary
  ASSERT_TRUE(o.status.ok());
  EXPECT_FALSE(o.used_summary);
  EXPECT_EQ(o.messages, s.messages);
}

TEST(McapRecovery, CutAtEveryOffsetGivesBackExactlyTheCompleteChunks) {
  for (Compression c : {Compression::kNone, Compression::kLz4, Compression::kZstd}) {
    Sample s;
    const int per_chunk = 5;
    std::string bytes = write_sample_bytes({.compression = c}, &s, 20, per_chunk);
    ASSERT_FALSE(bytes.empty());
    for (uint64_t cut = 8; cut < bytes.size(); ++cut) {
      Opened o = open_and_read(bytes.substr(0, cut));
      ASSERT_TRUE(o.status.ok()) << "cut " << cut << ": " << o.status.to_string();
      const size_t want = complete_chunk_messages(bytes, s, cut, per_chunk);
      ASSERT_EQ(o.messages.size(), want) << "cut at " << cut << " of " << bytes.size();
      for (size_t i = 0; i < want; ++i) ASSERT_EQ(o.messages[i], s.messages[i]);
      ASSERT_FALSE(o.problems.empty()) << "a cut file must be reported, cut " << cut;
    }
  }
}

TEST(McapRecovery, FileShorterThanTheMagicIsNotMcap) {
  Opened o = open_and_read(std::string("\x89MCA", 4));
  EXPECT_EQ(o.status.code(), StatusCode::kNotMcap);
}

TEST(McapRecovery, WrongMagicIsNotMcap) {
  Opened o = open_and_read("this is a text file, not a recording\n");
  EXPECT_EQ(o.status.code(), StatusCode::kNotMcap);
  EXPECT_NE(o.status.message().find("magic"), std::string::npos);
}

TEST(McapRecovery, MissingFileIsAnIoError) {
  McapReader r;
  Status s = r.open("/nonexistent-fieldproof/none.mcap");
  EXPECT_EQ(s.code(), StatusCode::kIoError);
}

// Offset of the first occurrence of `needle` at or after `from`.
size_t find(const std::string& bytes, const std::string& needle, size_t from = 0) {
  size_t at = bytes.find(needle, from);
  EXPECT_NE(at, std::string::npos) << needle;
  return at;
}

TEST(McapCorruption, ChunkCrcMismatchIsReportedAndOnlyThatChunkSkipped) {
  Sample s;
  std::string bytes = write_sample_bytes({.compression = Compression::kNone}, &s);
  // Change one message's payload inside the second chunk (uncompressed, so the text is there).
  size_t at = find(bytes, "{\"i\":12}", s.chunk_starts[1]);
  bytes[at + 5] = '9';
  for (bool use_summary : {true, false}) {
    Opened o = open_and_read(bytes, {.use_summary = use_summary});
    ASSERT_TRUE(o.status.ok());
    EXPECT_EQ(o.messages.size(), 30u) << "use_summary " << use_summary;
    EXPECT_TRUE(mentions(o.problems, "CRC mismatch")) << "use_summary " << use_summary;
    EXPECT_TRUE(mentions(o.problems, "offset " + std::to_string(s.chunk_starts[1])));
  }
}

TEST(McapCorruption, DataSectionCrcMismatchIsReportedByTheScan) {
  Sample s;
  std::string bytes = write_sample_bytes({}, &s);
  size_t at = find(bytes, "fieldproof.Odometry");  // the schema record in the data section
  bytes[at] = 'F';
  Opened o = open_and_read(bytes, {.use_summary = false});
  ASSERT_TRUE(o.status.ok());
  EXPECT_EQ(o.messages.size(), 40u);
  EXPECT_TRUE(mentions(o.problems, "data section CRC mismatch"));
}

TEST(McapCorruption, SummaryCrcMismatchFallsBackToTheScan) {
  Sample s;
  std::string bytes = write_sample_bytes({}, &s);
  size_t at = bytes.rfind("/fieldproof/events");  // the channel copy in the summary
  bytes[at + 1] = 'F';
  Opened o = open_and_read(bytes);
  ASSERT_TRUE(o.status.ok());
  EXPECT_FALSE(o.used_summary);
  EXPECT_TRUE(mentions(o.problems, "summary CRC mismatch"));
  EXPECT_EQ(o.messages, s.messages);
}

TEST(McapCorruption, AttachmentCrcMismatchIsReported) {
  std::string bytes = write_sample_bytes({});
  size_t at = find(bytes, "a: 1\n");
  bytes[at] = 'b';
  McapReader r;
  ASSERT_TRUE(r.open_bytes(bytes).ok());
  ASSERT_EQ(r.attachments().size(), 1u);
  auto a = r.read_attachment(r.attachments()[0]);
  EXPECT_EQ(a.status().code(), StatusCode::kCorrupt);
  EXPECT_NE(a.status().message().find("CRC mismatch"), std::string::npos);
}

TEST(McapCorruption, UnsupportedCompressionIsReportedNamingTheOffset) {
  Sample s;
  std::string bytes = write_sample_bytes({.compression = Compression::kZstd}, &s);
  size_t at = find(bytes, "zstd", s.chunk_starts[0]);
  bytes[at + 3] = 'x';  // "zstx" in the first chunk record
  for (bool use_summary : {true, false}) {
    Opened o = open_and_read(bytes, {.use_summary = use_summary});
    ASSERT_TRUE(o.status.ok());
    EXPECT_EQ(o.messages.size(), 30u);
    EXPECT_TRUE(mentions(o.problems, "unsupported compression 'zstx'"));
    EXPECT_TRUE(mentions(o.problems, "offset " + std::to_string(s.chunk_starts[0])));
  }
}

TEST(McapCorruption, UnknownOpcodeIsSkippedSilently) {
  Sample s;
  std::string bytes = write_sample_bytes({.enable_crcs = false}, &s);
  // An application record (opcode 0x80, 3 bytes) before the first chunk.
  std::string extra("\x80\x03\0\0\0\0\0\0\0abc", 12);
  bytes.insert(s.chunk_starts[0], extra);
  Opened o = open_and_read(bytes, {.use_summary = false});
  ASSERT_TRUE(o.status.ok());
  EXPECT_EQ(o.messages, s.messages);
  // Only the end of the file is off (the summary's offsets moved); nothing about the new record.
  for (const auto& p : o.problems) EXPECT_EQ(p.message.find("0x80"), std::string::npos);
}

TEST(McapCorruption, GarbageNeverCrashesTheReader) {
  std::string clean = write_sample_bytes({.compression = Compression::kZstd}, nullptr, 30, 7);
  std::string clean_lz4 = write_sample_bytes({.compression = Compression::kLz4}, nullptr, 30, 7);
  std::string clean_none = write_sample_bytes({.compression = Compression::kNone}, nullptr, 30, 7);
  SplitMix rng(20261130);
  int opened = 0;
  for (int iter = 0; iter < 1500; ++iter) {
    const std::string& base = iter % 3 == 0 ? clean : iter % 3 == 1 ? clean_lz4 : clean_none;
    std::string bytes = base;
    const int flips = 1 + static_cast<int>(rng.below(8));
    for (int f = 0; f < flips; ++f) {
      // Mostly after the magic, so the reader gets past it and meets the damage.
      size_t at = 8 + rng.below(bytes.size() - 8);
      bytes[at] = static_cast<char>(rng.next());
    }
    if (rng.below(2) == 0) bytes.resize(8 + rng.below(bytes.size() - 8));
    McapReaderOptions opt;
    opt.use_summary = rng.below(4) != 0;
    McapReader r;
    Status s = r.open_bytes(bytes, opt);
    if (!s.ok()) {
      EXPECT_EQ(s.code(), StatusCode::kNotMcap);
      continue;
    }
    ++opened;
    auto all = r.read_all();
    EXPECT_TRUE(all.ok());
    auto some = r.read_all({.start_ns = 1'050'000'000, .topics = {"/odom"}});
    EXPECT_TRUE(some.ok());
    for (const auto& info : r.attachments()) static_cast<void>(r.read_attachment(info));
  }
  EXPECT_GT(opened, 1000);
}

TEST(McapCorruption, GarbageLengthsDoNotAllocateWhatTheyClaim) {
  // A chunk claiming a terabyte of uncompressed data is refused by the size limit, not allocated.
  Sample s;
  std::string bytes = write_sample_bytes({.compression = Compression::kZstd}, &s);
  const size_t uncompressed_size_at = s.chunk_starts[0] + 9 + 16;
  for (int i = 0; i < 8; ++i) bytes[uncompressed_size_at + i] = i == 5 ? '\x01' : '\0';
  Opened o = open_and_read(bytes, {.use_summary = false});
  ASSERT_TRUE(o.status.ok());
  EXPECT_EQ(o.messages.size(), 30u);
  EXPECT_TRUE(mentions(o.problems, "above the reader's limit"));
}

}  // namespace
}  // namespace fieldproof::record
