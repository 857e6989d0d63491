// The wire format: every frame kind round-trips; bad bytes are refused with a reason, never a
// crash (random bytes, every truncation, every single-byte corruption of valid frames).
#include "fieldproof/lockstep/codec.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace fieldproof::lockstep {
namespace {

std::vector<Frame> one_of_each_kind() {
  Publish pub{.participant = "ugv1",
              .topic = "/ugv1/odom",
              .stamp = SimTime::from_ns(123'456'789),
              .seq = 42,
              .type = "ignition.msgs.Odometry",
              .payload = std::string("\0\x01\xFFpayload", 10)};
  CoordinatorStatus st{.paused = true,
                       .time = SimTime::from_ns(5'000'000),
                       .grants = 17,
                       .measured_rtf = 1.25,
                       .max_rtf = 2.0,
                       .hold = SimTime::infinite(),
                       .participants = {{"ugv1", "main", Role::kRegulating, SimTime::from_ns(7)},
                                        {"viewer", "ui", Role::kFollowing, SimTime::infinite()}}};
  return {
      Announce{"ugv1", "main", Role::kFollowing, SimTime::infinite()},
      Subscribe{"ugv1", "main", "/cmd_vel"},
      Unsubscribe{"ugv1", "worker-1", "/cmd_vel"},
      pub,
      Leave{"ugv1", ""},
      Heartbeat{"ugv1"},
      Grant{SimTime::from_ns(1'000'000), 99},
      Deliver{"main", pub},
      Error{ErrorCode::kStampInPast, "publish stamped 1 before grant 2"},
      Control{ControlOp::kStep, milliseconds(250), SimTime::from_ns(-5), 0.5},
      ControlReply{false, "not paused", st},
      Hello{kProtocolVersion, "fieldproof-cpp 0.2.0"},
      Welcome{kProtocolVersion, "fieldproof-coordinator 0.2.0", uint64_t{64} << 20},
      PlayerControl{PlayerOp::kSeek, seconds(2), 3, 1.5},
      PlayerReply{.ok = false,
                  .error = "play_next: only while paused",
                  .paused = true,
                  .rate = 2.5,
                  .now = SimTime::from_ns(3'000'000'000),
                  .offset = seconds(2),
                  .played = 3,
                  .position = 4,
                  .total = 5,
                  .loops = 1,
                  .to = SimTime::from_ns(5'000'000'000),
                  .clamped = true,
                  .message = "seek: 99 s is past the end, clamped to 5 s",
                  .burst_played = 2},
  };
}

TEST(Codec, EveryFrameKindRoundTripsToIdenticalBytes) {
  auto frames = one_of_each_kind();
  ASSERT_EQ(frames.size(), std::variant_size_v<Frame>);
  for (const Frame& f : frames) {
    std::string bytes = encode_frame(f);
    DecodeResult r = decode_frame(bytes);
    ASSERT_TRUE(r) << frame_kind_name(frame_kind(f)) << ": " << r.error().reason;
    EXPECT_EQ(r.frame().index(), f.index());
    EXPECT_EQ(encode_frame(r.frame()), bytes) << frame_kind_name(frame_kind(f));
  }
}

TEST(Codec, PublishFieldsSurviveTheRoundTrip) {
  Publish p{"a", "/t", SimTime::from_ns(-3), UINT64_MAX, "T", std::string(1000, '\0')};
  DecodeResult r = decode_frame(encode_frame(p));
  ASSERT_TRUE(r);
  const auto& q = std::get<Publish>(r.frame());
  EXPECT_EQ(q.participant, "a");
  EXPECT_EQ(q.topic, "/t");
  EXPECT_EQ(q.stamp, SimTime::from_ns(-3));
  EXPECT_EQ(q.seq, UINT64_MAX);
  EXPECT_EQ(q.type, "T");
  EXPECT_EQ(q.payload, std::string(1000, '\0'));
}

TEST(Codec, ControlReplyStatusSurvivesTheRoundTrip) {
  auto frames = one_of_each_kind();
  DecodeResult r =
      decode_frame(encode_frame(frames[static_cast<size_t>(FrameKind::kControlReply) - 1]));
  ASSERT_TRUE(r);
  const auto& reply = std::get<ControlReply>(r.frame());
  EXPECT_FALSE(reply.ok);
  EXPECT_EQ(reply.error, "not paused");
  EXPECT_TRUE(reply.status.paused);
  EXPECT_EQ(reply.status.grants, 17u);
  EXPECT_DOUBLE_EQ(reply.status.measured_rtf, 1.25);
  EXPECT_TRUE(reply.status.hold.is_infinite());
  ASSERT_EQ(reply.status.participants.size(), 2u);
  EXPECT_EQ(reply.status.participants[1].participant, "viewer");
  EXPECT_EQ(reply.status.participants[1].role, Role::kFollowing);
}

TEST(Codec, PlayerControlFieldsSurviveTheRoundTrip) {
  const PlayerControl c{PlayerOp::kBurst, nanoseconds(-7), UINT64_MAX, 0.25};
  const std::string bytes = encode_frame(c);
  EXPECT_EQ(bytes.size(), 2u + 1 + 8 + 8 + 8);
  EXPECT_EQ(static_cast<uint8_t>(bytes[1]), 14);
  DecodeResult r = decode_frame(bytes);
  ASSERT_TRUE(r) << r.error().reason;
  const auto& d = std::get<PlayerControl>(r.frame());
  EXPECT_EQ(d.op, PlayerOp::kBurst);
  EXPECT_EQ(d.offset, nanoseconds(-7));
  EXPECT_EQ(d.count, UINT64_MAX);
  EXPECT_DOUBLE_EQ(d.rate, 0.25);
  EXPECT_STREQ(frame_kind_name(FrameKind::kPlayerControl), "player-control");
}

TEST(Codec, PlayerReplyFieldsSurviveTheRoundTrip) {
  auto frames = one_of_each_kind();
  const Frame& sent = frames[static_cast<size_t>(FrameKind::kPlayerReply) - 1];
  EXPECT_EQ(static_cast<uint8_t>(encode_frame(sent)[1]), 15);
  DecodeResult r = decode_frame(encode_frame(sent));
  ASSERT_TRUE(r) << r.error().reason;
  const auto& d = std::get<PlayerReply>(r.frame());
  EXPECT_FALSE(d.ok);
  EXPECT_EQ(d.error, "play_next: only while paused");
  EXPECT_TRUE(d.paused);
  EXPECT_DOUBLE_EQ(d.rate, 2.5);
  EXPECT_EQ(d.now, SimTime::from_ns(3'000'000'000));
  EXPECT_EQ(d.offset, seconds(2));
  EXPECT_EQ(d.played, 3u);
  EXPECT_EQ(d.position, 4u);
  EXPECT_EQ(d.total, 5u);
  EXPECT_EQ(d.loops, 1u);
  EXPECT_EQ(d.to, SimTime::from_ns(5'000'000'000));
  EXPECT_TRUE(d.clamped);
  EXPECT_EQ(d.message, "seek: 99 s is past the end, clamped to 5 s");
  EXPECT_EQ(d.burst_played, 2u);
  EXPECT_STREQ(frame_kind_name(FrameKind::kPlayerReply), "player-reply");
}

TEST(Codec, UnknownPlayerOpIsRefused) {
  for (uint8_t op : {0, 9, 255}) {
    std::string bytes = encode_frame(PlayerControl{});
    bytes[2] = static_cast<char>(op);  // magic, kind, then the op byte
    DecodeResult r = decode_frame(bytes);
    ASSERT_FALSE(r) << int{op};
    EXPECT_EQ(r.error().code, ErrorCode::kMalformed);
    EXPECT_EQ(r.error().reason, "malformed player-control frame: unknown enum value " +
                                    std::to_string(op) + " at offset 1");
  }
}

TEST(Codec, TruncatedPlayerFramesAreRefusedNamingTheKind) {
  const std::string control = encode_frame(PlayerControl{PlayerOp::kSetRate, {}, 0, 2.0});
  DecodeResult r = decode_frame(std::string_view(control).substr(0, control.size() - 1));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kMalformed);
  EXPECT_EQ(r.error().reason.rfind("malformed player-control frame: truncated: double", 0), 0u)
      << r.error().reason;
  const std::string reply = encode_frame(PlayerReply{});
  r = decode_frame(std::string_view(reply).substr(0, 20));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().reason.rfind("malformed player-reply frame: truncated", 0), 0u)
      << r.error().reason;
}

TEST(Codec, EncodeIntoReusesTheBuffer) {
  std::string buf = "leftover bytes that must go";
  encode_frame_into(Grant{SimTime::from_ns(1), 1}, buf);
  EXPECT_EQ(buf, encode_frame(Grant{SimTime::from_ns(1), 1}));
  EXPECT_EQ(buf.size(), 2u + 8u + 8u);
}

TEST(Codec, EveryTruncationOfEveryValidFrameIsRefused) {
  for (const Frame& f : one_of_each_kind()) {
    std::string bytes = encode_frame(f);
    for (size_t n = 0; n < bytes.size(); ++n) {
      DecodeResult r = decode_frame(std::string_view(bytes).substr(0, n));
      ASSERT_FALSE(r) << frame_kind_name(frame_kind(f)) << " cut to " << n << " bytes";
      EXPECT_EQ(r.error().code, ErrorCode::kMalformed);
      EXPECT_FALSE(r.error().reason.empty());
    }
  }
}

TEST(Codec, TrailingGarbageIsRefused) {
  std::string bytes = encode_frame(Heartbeat{"ugv1"}) + "x";
  DecodeResult r = decode_frame(bytes);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kMalformed);
  EXPECT_NE(r.error().reason.find("trailing"), std::string::npos) << r.error().reason;
}

TEST(Codec, UnknownKindIsRefusedAsUnknownKind) {
  std::string bytes = encode_frame(Heartbeat{"ugv1"});
  bytes[1] = static_cast<char>(200);
  DecodeResult r = decode_frame(bytes);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kUnknownKind);
  EXPECT_NE(r.error().reason.find("200"), std::string::npos) << r.error().reason;
}

TEST(Codec, WrongMagicIsRefused) {
  std::string bytes = encode_frame(Heartbeat{"ugv1"});
  bytes[0] = 0x02;
  DecodeResult r = decode_frame(bytes);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kMalformed);
  EXPECT_NE(r.error().reason.find("magic"), std::string::npos) << r.error().reason;
}

TEST(Codec, AnotherVersionNibbleIsRefusedAsVersionNamingIt) {
  std::string bytes = encode_frame(Heartbeat{"ugv1"});
  bytes[0] = static_cast<char>(0xF1);  // version 1: kinds 1-13, before the player's
  DecodeResult r = decode_frame(bytes);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kVersion);
  EXPECT_EQ(r.error().reason,
            "a frame of protocol version 1 (byte 0 is 0xF1); this side speaks version 2");
  EXPECT_EQ(wire_version(bytes), 1u);
  EXPECT_EQ(wire_version(encode_frame(Heartbeat{"ugv1"})), kProtocolVersion);
  EXPECT_EQ(wire_version(std::string("\x02\x06", 2)), std::nullopt);
  EXPECT_EQ(wire_version(""), std::nullopt);
}

TEST(Codec, HelloAndWelcomeFieldsSurviveTheRoundTrip) {
  DecodeResult h = decode_frame(encode_frame(Hello{7, "fieldproof-python 0.2.0"}));
  ASSERT_TRUE(h) << h.error().reason;
  EXPECT_EQ(std::get<Hello>(h.frame()).protocol_version, 7u);
  EXPECT_EQ(std::get<Hello>(h.frame()).client, "fieldproof-python 0.2.0");
  DecodeResult w = decode_frame(encode_frame(Welcome{1, "coord", UINT64_MAX}));
  ASSERT_TRUE(w) << w.error().reason;
  EXPECT_EQ(std::get<Welcome>(w.frame()).protocol_version, 1u);
  EXPECT_EQ(std::get<Welcome>(w.frame()).coordinator, "coord");
  EXPECT_EQ(std::get<Welcome>(w.frame()).max_message_bytes, UINT64_MAX);
  EXPECT_EQ(frame_kind(Frame{Hello{}}), FrameKind::kHello);
  EXPECT_EQ(frame_kind(Frame{Welcome{}}), FrameKind::kWelcome);
  EXPECT_STREQ(frame_kind_name(FrameKind::kHello), "hello");
  EXPECT_STREQ(frame_kind_name(FrameKind::kWelcome), "welcome");
}

TEST(Codec, LengthPastTheEndIsRefused) {
  std::string bytes = encode_frame(Heartbeat{"ab"});
  bytes[2] = static_cast<char>(0xFF);  // the string length's low byte: 255 > 2 bytes left
  DecodeResult r = decode_frame(bytes);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().reason.find("past the end"), std::string::npos) << r.error().reason;
}

TEST(Codec, UnknownEnumValueIsRefused) {
  std::string bytes = encode_frame(Announce{"a", "b", Role::kRegulating, SimTime::zero()});
  // magic, kind, 4+1 "a", 4+1 "b", then the role byte.
  bytes[2 + 5 + 5] = 7;
  DecodeResult r = decode_frame(bytes);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().reason.find("enum"), std::string::npos) << r.error().reason;
}

TEST(Codec, OversizedFrameIsRefusedAsOversized) {
  Publish p{"a", "/t", SimTime::zero(), 1, "T", std::string(2000, 'x')};
  std::string bytes = encode_frame(p);
  DecodeResult r = decode_frame(bytes, 1024);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::kOversized);
  EXPECT_TRUE(decode_frame(bytes, bytes.size()));
}

// SplitMix64: a tiny deterministic generator (no <random>, the lint forbids its distributions).
struct SplitMix {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};

TEST(Codec, RandomBytesNeverCrashAndFailWithAReason) {
  SplitMix rng{12345};
  int decoded = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string bytes(rng.next() % 64, '\0');
    for (char& c : bytes) c = static_cast<char>(rng.next() & 0xFF);
    if (!bytes.empty() && rng.next() % 2) bytes[0] = static_cast<char>(kWireMagicVersion);
    if (bytes.size() > 1 && rng.next() % 2) {
      bytes[1] = static_cast<char>(1 + rng.next() % std::variant_size_v<Frame>);
    }
    DecodeResult r = decode_frame(bytes);
    if (r) {
      ++decoded;
      EXPECT_EQ(encode_frame(r.frame()), bytes);  // whatever decodes is canonical
    } else {
      EXPECT_FALSE(r.error().reason.empty());
    }
  }
  SUCCEED() << decoded << " random inputs happened to decode";
}

TEST(Codec, EverySingleByteCorruptionNeverCrashes) {
  for (const Frame& f : one_of_each_kind()) {
    std::string bytes = encode_frame(f);
    for (size_t i = 0; i < bytes.size(); ++i) {
      for (int v : {0x00, 0x7F, 0x80, 0xFF}) {
        std::string copy = bytes;
        copy[i] = static_cast<char>(v);
        DecodeResult r = decode_frame(copy);
        if (r) {
          EXPECT_EQ(encode_frame(r.frame()), copy);
        } else {
          EXPECT_FALSE(r.error().reason.empty());
        }
      }
    }
  }
}

}  // namespace
}  // namespace fieldproof::lockstep
