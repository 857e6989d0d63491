// docs/protocol.md cannot drift from the codec: every ```hex block of the page decodes with the
// C++ codec and re-encodes to the same bytes, its size matches the "(N bytes)" the page states
// above it, and the page shows at least one example of each frame kind it promises to.
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "fieldproof/lockstep/codec.hpp"

namespace fieldproof::lockstep {
namespace {

struct HexExample {
  int line = 0;        // of the opening fence, 1-based
  std::string stated;  // the nearest non-empty line above the fence
  std::string bytes;
  std::string problem;  // a token that is not a hex byte
};

std::vector<HexExample> hex_examples(const std::string& path) {
  std::ifstream in(path);
  std::vector<HexExample> out;
  std::string line;
  std::string last_text;
  int n = 0;
  HexExample* open = nullptr;
  while (std::getline(in, line)) {
    ++n;
    if (open == nullptr) {
      if (line == "```hex") {
        out.push_back(HexExample{n, last_text, {}, {}});
        open = &out.back();
      } else if (!line.empty()) {
        last_text = line;
      }
      continue;
    }
    if (line.rfind("```", 0) == 0) {
      open = nullptr;
      continue;
    }
    std::istringstream tokens(line.substr(0, line.find('#')));
    std::string tok;
    while (tokens >> tok) {
      if (tok.size() != 2 || !std::isxdigit(static_cast<unsigned char>(tok[0])) ||
          !std::isxdigit(static_cast<unsigned char>(tok[1]))) {
        if (open->problem.empty()) open->problem = "line " + std::to_string(n) + ": '" + tok + "'";
        continue;
      }
      open->bytes.push_back(static_cast<char>(std::stoi(tok, nullptr, 16)));
    }
  }
  return out;
}

const std::string kPage = std::string(FIELDPROOF_SOURCE_DIR) + "/docs/protocol.md";

TEST(ProtocolDoc, EveryHexExampleDecodesAndReencodesToTheSameBytes) {
  std::vector<HexExample> examples = hex_examples(kPage);
  ASSERT_GE(examples.size(), 8u) << kPage << " lost its examples";
  for (const HexExample& ex : examples) {
    SCOPED_TRACE(kPage + ":" + std::to_string(ex.line));
    EXPECT_TRUE(ex.problem.empty()) << "not a hex byte: " << ex.problem;
    DecodeResult r = decode_frame(ex.bytes);
    ASSERT_TRUE(r) << r.error().reason;
    EXPECT_EQ(encode_frame(r.frame()), ex.bytes);
  }
}

TEST(ProtocolDoc, EveryHexExampleIsAsLongAsThePageSays) {
  for (const HexExample& ex : hex_examples(kPage)) {
    SCOPED_TRACE(kPage + ":" + std::to_string(ex.line));
    size_t open = ex.stated.find('(');
    ASSERT_NE(open, std::string::npos) << "no \"(N bytes\" above the example: " << ex.stated;
    size_t stated = std::stoul(ex.stated.substr(open + 1));
    EXPECT_EQ(stated, ex.bytes.size()) << ex.stated;
  }
}

TEST(ProtocolDoc, ThePageShowsEveryFrameKindItPromises) {
  std::set<FrameKind> shown;
  for (const HexExample& ex : hex_examples(kPage)) {
    DecodeResult r = decode_frame(ex.bytes);
    if (r) shown.insert(frame_kind(r.frame()));
  }
  for (FrameKind k :
       {FrameKind::kHello, FrameKind::kWelcome, FrameKind::kAnnounce, FrameKind::kSubscribe,
        FrameKind::kPublish, FrameKind::kGrant, FrameKind::kDeliver, FrameKind::kError,
        FrameKind::kHeartbeat, FrameKind::kLeave, FrameKind::kControl, FrameKind::kControlReply,
        FrameKind::kPlayerControl, FrameKind::kPlayerReply}) {
    EXPECT_EQ(shown.count(k), 1u) << "no example of " << frame_kind_name(k);
  }
}

TEST(ProtocolDoc, TheVersionRefusalExampleIsTheCoordinatorsExactText) {
  bool found = false;
  for (const HexExample& ex : hex_examples(kPage)) {
    DecodeResult r = decode_frame(ex.bytes);
    if (!r) continue;
    if (const auto* e = std::get_if<Error>(&r.frame()); e && e->code == ErrorCode::kVersion) {
      found = true;
      EXPECT_EQ(e->reason, "protocol version 1 is not supported: this coordinator speaks version " +
                               std::to_string(kProtocolVersion));
    }
  }
  EXPECT_TRUE(found) << "no Error{Version} example";
}

}  // namespace
}  // namespace fieldproof::lockstep
