// The fuzz entry points (fuzz_entries.hpp) in every build, under -fsanitize=address,undefined
// (gcc or clang; the entries and the sources they reach are compiled with the sanitizers here,
// tests/fuzz/CMakeLists.txt): every file of tests/fuzz/fuzz_corpus/<target>/ replayed (the
// examples the corpora started from, and each input a fuzzer found a problem with), then a
// bounded, seeded mutation loop over them (byte flips, insertions of the target's tokens, cuts,
// duplications and splices), FIELDPROOF_FUZZ_ITERATIONS inputs per target (default 1500).
// A crash, a sanitizer report or an abort from a property ends the test binary: CTest reports it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz/fuzz_entries.hpp"

namespace fieldproof::fuzz {
namespace {

namespace fs = std::filesystem;

class SplitMix {
 public:
  explicit SplitMix(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  size_t below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(next() % n); }

 private:
  uint64_t s_;
};

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<std::string> corpus(Target t) {
  std::vector<std::string> out;
  const fs::path dir = fs::path(FIELDPROOF_FUZZ_CORPUS) / target_name(t);
  if (!fs::is_directory(dir)) return out;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file()) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) out.push_back(read_file(f));
  return out;
}

// Tokens a mutation inserts: what the target's grammar is made of.
std::vector<std::string> tokens(Target t) {
  switch (t) {
    case Target::kScenarioLoader:
      return {":", "\n", "\n  - ", "{", "}", "[", "]", "&a ", "*a", "!!binary ", "'", "\"",
              "\xff", "\xc3\x28", "1e999", "-1", ".nan", ".inf", "9223372036854775807",
              "250ms", "10m", "when: ", "condition: ", "type: ", "steps: ", "<<: *a"};
    case Target::kCondition:
      return {"(", ")", "[", "]", "**", "*", "+", "-", "and ", "or ", "not ", " if ", " else ",
              "value", "value.x", "a", "b", "'x'", "1e308", "abs(", "len(", ",", ".", "==",
              "<", "9" "9999999999", "[1]*", "\"", "\\", "in "};
    case Target::kSdfFront:
      return {"<include>", "</include>", "<uri>", "</uri>", "world.sdf", "included.sdf",
              "model://box", "file://", "/dev/zero", "..", "<", ">", "</", "<!--", "&amp;",
              "<![CDATA[", "<?xml version=\"1.0\"?>", "\"", "\xff"};
    case Target::kFrameDecoder:
      return {std::string("\xf2", 1),
              std::string("\x00\x00\x00\x00", 4),
              std::string("\xff\xff\xff\xff", 4),
              std::string("\x01", 1),
              std::string("\x7f", 1),
              std::string("\x00\x00\x00\x80", 4)};
  }
  return {};
}

std::string mutate(std::string s, const std::vector<std::string>& seeds,
                   const std::vector<std::string>& toks, SplitMix& rng) {
  const int edits = 1 + static_cast<int>(rng.below(4));
  for (int i = 0; i < edits; ++i) {
    const size_t at = rng.below(s.size() + 1);
    switch (rng.below(7)) {
      case 0:  // flip a byte
        if (!s.empty()) s[rng.below(s.size())] ^= static_cast<char>(1 + rng.below(255));
        break;
      case 1:  // a token
        s.insert(at, toks[rng.below(toks.size())]);
        break;
      case 2:  // a random byte
        s.insert(at, 1, static_cast<char>(rng.below(256)));
        break;
      case 3:  // cut
        s.resize(at);
        break;
      case 4: {  // erase a range
        const size_t n = rng.below(s.size() - at + 1);
        s.erase(at, n);
        break;
      }
      case 5: {  // duplicate a range
        const size_t n = std::min<size_t>(rng.below(s.size() - at + 1), 4096);
        s.insert(at, s.substr(at, n));
        break;
      }
      default: {  // splice another seed's tail
        const std::string& o = seeds[rng.below(seeds.size())];
        s = s.substr(0, at) + o.substr(rng.below(o.size() + 1));
        break;
      }
    }
    if (s.size() > (size_t{256} << 10)) s.resize(size_t{256} << 10);
  }
  return s;
}

size_t iterations() {
  const char* e = std::getenv("FIELDPROOF_FUZZ_ITERATIONS");
  return e ? static_cast<size_t>(std::strtoull(e, nullptr, 10)) : 1500;
}

void feed(Target t, const std::string& s) {
  run(t, reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

class FuzzDriver : public ::testing::TestWithParam<Target> {};

TEST_P(FuzzDriver, EveryCorpusFileRunsClean) {
  const std::vector<std::string> files = corpus(GetParam());
  ASSERT_GE(files.size(), 3u) << "tests/fuzz/fuzz_corpus/" << target_name(GetParam())
                              << " holds the target's seeds";
  for (const std::string& f : files) feed(GetParam(), f);
}

TEST_P(FuzzDriver, ABoundedMutationLoopRunsClean) {
  std::vector<std::string> seeds = corpus(GetParam());
  if (GetParam() == Target::kFrameDecoder) {
    for (auto& s : frame_seeds()) seeds.push_back(s);
  }
  ASSERT_FALSE(seeds.empty());
  const std::vector<std::string> toks = tokens(GetParam());
  SplitMix rng(0x19F00D + static_cast<uint64_t>(GetParam()));
  const size_t n = iterations();
  for (size_t i = 0; i < n; ++i) {
    feed(GetParam(), mutate(seeds[rng.below(seeds.size())], seeds, toks, rng));
  }
}

// The seeds are what the targets are meant to see: the examples validate, the frames decode.
TEST(FuzzSeeds, TheExampleSeedsAreAcceptedSoMutationsStartFromValidInput) {
  // FIELDPROOF_FUZZ_WRITE_FRAME_SEEDS=DIR writes the frame seeds as corpus files (how
  // fuzz_corpus/frame_decoder/ was made).
  if (const char* out = std::getenv("FIELDPROOF_FUZZ_WRITE_FRAME_SEEDS")) {
    int i = 0;
    for (const std::string& f : frame_seeds()) {
      std::ofstream(fs::path(out) / ("kind_" + std::to_string(++i)), std::ios::binary) << f;
    }
  }
  for (const std::string& f : frame_seeds()) {
    EXPECT_TRUE(lockstep::decode_frame(f).ok());
  }
  const std::vector<std::string> frames = corpus(Target::kFrameDecoder);
  size_t decoded = 0;
  for (const std::string& f : frames) decoded += lockstep::decode_frame(f).ok() ? 1 : 0;
  EXPECT_GE(decoded, std::variant_size_v<lockstep::Frame>)
      << "the corpus holds one frame of each kind";
  size_t compiled = 0;
  const std::vector<std::string> conditions = corpus(Target::kCondition);
  for (const std::string& c : conditions) {
    compiled += scenario::Condition::compile(c, {"value", "a", "b"}).ok() ? 1 : 0;
  }
  EXPECT_GE(compiled, conditions.size() / 2) << "most condition seeds compile";
}

std::string name(const ::testing::TestParamInfo<Target>& info) {
  return target_name(info.param);
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzDriver, ::testing::ValuesIn(kTargets), name);

}  // namespace
}  // namespace fieldproof::fuzz
