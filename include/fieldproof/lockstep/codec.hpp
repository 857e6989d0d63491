// The wire format of lock-step Frames (protocol.hpp), used by the ZeroMQ transports: one Frame per
// ZeroMQ message, compact, versioned, little-endian, every length bounds-checked.
//
//   std::string bytes = encode_frame(Frame{Grant{SimTime::from_ns(5), 1}});
//   DecodeResult r = decode_frame(bytes, 1 << 20);
//   if (!r) log(r.error().reason);  else handle(std::move(r).frame());
//
// The specification, byte for byte, is docs/protocol.md (a test decodes its examples).
// Layout: byte 0 is kWireMagicVersion (0xF2: magic nibble 0xF, version 2), byte 1 the kind (the
// FrameKind below), then the fields of that frame in declaration order:
//   u8 / u32 / u64 / i64 little-endian fixed width; double as the u64 of its IEEE-754 bits;
//   bool as u8 0/1; enums as u8 (unknown values refused); strings as u32 length + bytes;
//   vectors as u32 count + elements; SimTime / Duration as i64 nanoseconds.
// A frame must be consumed exactly: trailing bytes are refused.
//
// Thread safety: the functions are pure and reentrant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "fieldproof/lockstep/protocol.hpp"

namespace fieldproof::lockstep {

// The protocol version this code speaks: Hello / Welcome carry it, and it is the low nibble of
// every frame's byte 0.
// Version 2 added PlayerControl and PlayerReply (kinds 14 and 15); version 1 had kinds 1-13.
inline constexpr uint32_t kProtocolVersion = 2;
inline constexpr uint8_t kWireMagic = 0xF0;  // the high nibble of byte 0
inline constexpr uint8_t kWireMagicVersion = kWireMagic | kProtocolVersion;
static_assert(kProtocolVersion < 16, "the version must fit the low nibble of byte 0");
// The default limit of decode_frame: frames larger than this are refused as kOversized.
inline constexpr size_t kDefaultMaxFrameBytes = size_t{64} << 20;

// The kind byte on the wire. Values are fixed forever; new kinds get new numbers.
enum class FrameKind : uint8_t {
  kAnnounce = 1,
  kSubscribe = 2,
  kUnsubscribe = 3,
  kPublish = 4,
  kLeave = 5,
  kHeartbeat = 6,
  kGrant = 7,
  kDeliver = 8,
  kError = 9,
  kControl = 10,
  kControlReply = 11,
  kHello = 12,
  kWelcome = 13,
  kPlayerControl = 14,
  kPlayerReply = 15,
};

FrameKind frame_kind(const Frame& frame);
// "announce", "publish", ... for log lines.
const char* frame_kind_name(FrameKind kind);

// Encodes `frame`. The result is sized exactly (one allocation).
std::string encode_frame(const Frame& frame);
// Same, into `out` (cleared first), so a caller can reuse its buffer.
void encode_frame_into(const Frame& frame, std::string& out);

// The outcome of decode_frame: a Frame, or an Error whose code says why (kMalformed, kUnknownKind,
// kOversized) and whose reason names the field and the offset.
class DecodeResult {
 public:
  DecodeResult(Frame frame) : frame_(std::move(frame)) {}  // NOLINT(google-explicit-constructor)
  DecodeResult(Error error) : error_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  explicit operator bool() const { return frame_.has_value(); }
  bool ok() const { return frame_.has_value(); }
  const Frame& frame() const& { return *frame_; }
  Frame&& frame() && { return std::move(*frame_); }
  // Valid only when !ok().
  const Error& error() const { return error_; }

 private:
  std::optional<Frame> frame_;
  Error error_;
};

// Decodes one frame. Never throws on bad input and never reads outside `bytes`: truncated
// frames, trailing bytes, an unknown magic, an unknown kind, an unknown enum value, a length past
// the end, or more than `max_bytes` in total are each refused with a reason. A byte 0 with the
// magic nibble and another version (wire_version() below) is refused with kVersion.
DecodeResult decode_frame(std::string_view bytes, size_t max_bytes = kDefaultMaxFrameBytes);

// The protocol version of a frame from its byte 0 (the low nibble), or nullopt when the frame is
// empty or byte 0 lacks the magic nibble 0xF.
std::optional<uint32_t> wire_version(std::string_view bytes);

}  // namespace fieldproof::lockstep
