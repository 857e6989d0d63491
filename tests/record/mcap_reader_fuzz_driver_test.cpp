// The libFuzzer entry point (mcap_reader_fuzz_entry.hpp) run over a corpus in CTest, with any
// compiler: valid recordings of each compression, each cut at many points, with bytes flipped,
// with length fields overwritten by extreme values, and every file of tests/record/fuzz_corpus/
// (the inputs the fuzzer found problems with). Under -DFIELDPROOF_SANITIZE=ON it is a sanitizer
// check too.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "record/mcap_reader_fuzz_entry.hpp"
#include "record/mcap_test_util.hpp"

namespace fieldproof::record::testing {
namespace {

namespace fs = std::filesystem;

FuzzOutcome feed(const std::string& bytes) {
  return fuzz_mcap_reader(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}

std::vector<std::string> seeds() {
  std::vector<std::string> out;
  for (Compression c : {Compression::kNone, Compression::kZstd, Compression::kLz4}) {
    McapWriterOptions o;
    o.compression = c;
    out.push_back(write_sample_bytes(o));
  }
  McapWriterOptions bare;
  bare.compression = Compression::kNone;
  bare.write_message_indexes = false;
  bare.write_chunk_indexes = false;
  bare.write_statistics = false;
  bare.write_summary_offsets = false;
  bare.enable_crcs = false;
  out.push_back(write_sample_bytes(bare));
  return out;
}

class FuzzDriver : public ::testing::TestWithParam<size_t> {
 protected:
  std::string seed() const { return seeds()[GetParam()]; }
};

TEST_P(FuzzDriver, TheSeedReadsBackWhole) {
  const std::string s = seed();
  ASSERT_FALSE(s.empty());
  const FuzzOutcome even = feed(s);
  EXPECT_TRUE(even.opened);
  EXPECT_EQ(even.messages, 40u);
  const FuzzOutcome odd =
      feed(s + std::string(1, '\0'));  // the scan (an odd size), junk at the end
  EXPECT_TRUE(odd.opened);
  EXPECT_EQ(odd.messages, 40u);
}

TEST_P(FuzzDriver, EveryCutOfTheSeedReadsWithoutACrash) {
  const std::string s = seed();
  size_t opened = 0;
  for (size_t n = 0; n <= s.size(); ++n) opened += feed(s.substr(0, n)).opened;
  EXPECT_GT(opened, 0u);
}

TEST_P(FuzzDriver, FlippedBytesReadWithoutACrash) {
  const std::string s = seed();
  SplitMix rng(0xF1 + GetParam());
  for (int i = 0; i < 3000; ++i) {
    std::string m = s;
    const int flips = 1 + static_cast<int>(rng.below(4));
    for (int k = 0; k < flips; ++k) {
      m[rng.below(m.size())] ^= static_cast<char>(1 + rng.below(255));
    }
    if (rng.below(4) == 0) m.resize(rng.below(m.size()));
    feed(m);
  }
}

TEST_P(FuzzDriver, ExtremeLengthFieldsReadWithoutACrash) {
  const std::string s = seed();
  const uint64_t extremes[] = {0, 0xFFFFFFFFull, 0x7FFFFFFFFFFFFFFFull, 0xFFFFFFFFFFFFFFFFull,
                               s.size() - 8};
  for (size_t at = 0; at + 8 <= s.size(); ++at) {
    for (int width : {4, 8}) {
      for (uint64_t v : extremes) {
        std::string m = s;
        for (int i = 0; i < width; ++i) m[at + i] = static_cast<char>(v >> (8 * i));
        feed(m);
      }
    }
  }
}

std::string seed_name(const ::testing::TestParamInfo<size_t>& info) {
  static const char* const kNames[] = {"none", "zstd", "lz4", "bare"};
  return kNames[info.param];
}

INSTANTIATE_TEST_SUITE_P(Seeds, FuzzDriver, ::testing::Values(0u, 1u, 2u, 3u), seed_name);

TEST(FuzzCorpus, EveryCorpusFileReadsWithoutACrash) {
  const fs::path dir = FIELDPROOF_FUZZ_CORPUS;
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.is_regular_file() || e.path().filename() == "README.md") continue;
    SCOPED_TRACE(e.path().string());
    feed(read_file(e.path()));
    ++files;
  }
  EXPECT_GT(files, 0u);
}

}  // namespace
}  // namespace fieldproof::record::testing
