// The lock-step wire format (see codec.hpp for the layout).
#include "fieldproof/lockstep/codec.hpp"

#include <bit>
#include <cstdio>
#include <cstring>
#include <type_traits>

namespace fieldproof::lockstep {
namespace {

// Every struct's fields, in wire order, for the three passes (size, write, read).
template <class V, class T>
requires std::is_same_v<std::remove_const_t<T>, Announce>
void fields(V& v, T& s) {
  v(s.participant);
  v(s.thread);
  v(s.role);
  v(s.safe_time);
}
template <class V, class T>
requires std::is_same_v<std::remove_const_t<T>, Subscribe> ||
    std::is_same_v<std::remove_const_t<T>, Unsubscribe>
void fields(V& v, T& s) {
  v(s.participant);
  v(s.thread);
  v(s.topic);
}
template <class V, class T>
requires std::is_same_v<std::remove_const_t<T>, Publish>
void fields(V& v, T& s) {
  v(s.participant);
  v(s.topic);
  v(s.stamp);
  v(s.seq);
  v(s.type);
  v(s.payload);
}
template <class V, class T>
requires std::is_same_v<std::remove_const_t<T>, Leave>
void fields(V& v, T& s) {
  v(s.participant);
  v(s.thread);
}
template <class V, class T>
requires std::is_same_v<std::remove_const_t<T>, Heartbeat>
void fields(V& v, T& s) { v(s.participant); }
template <class V, class T>
requires std::is_same_v<std::remove_const_t<T>, Hello>
void fields(V& v, T& s) {
  v(s.protocol_version);
  v(s.client);
}
template <class V, class T>
requires std::is_same_v<std::remove_const_t<T>, Welcome>
void fields(V& v, T& s) {
  v(s.protocol_version);
  v(s.coordinator);
  v(s.max_message_bytes);
}
template <class V, class T>
requires std::is_same_v<std::remove_const_t<T>, Grant>
void fields(V& v, T& s) {
  v(s.time);
  v(s.number);
}
template <class V, class T>
requires std::is_same_v<std::remove_const_t<T>, Deliver>
void fields(V& v, T& s) {
  v(s.thread);
  fields(v, s.message);
}
template <class V, class T>
requires std::is_same_v<std::remove_const_t<T>, Error>
void fields(V& v, T& s) {
  v(s.code);
  v(s.reason);
}
template <class V, class T>
requires std::is_same_v<std::remove_const_t<T>, Control>
void fields(V& v, T& s) {
  v(s.op);
  v(s.duration);
  v(s.until);
  v(s.max_rtf);
}
template <class V, class T>
requires std::is_same_v<std::remove_const_t<T>, ParticipantStatus>
void fields(V& v, T& s) {
  v(s.participant);
  v(s.thread);
  v(s.role);
  v(s.safe_time);
}
template <class V, class T>
requires std::is_same_v<std::remove_const_t<T>, CoordinatorStatus>
void fields(V& v, T& s) {
  v(s.paused);
  v(s.time);
  v(s.grants);
  v(s.measured_rtf);
  v(s.max_rtf);
  v(s.hold);
  v(s.participants);
}
template <class V, class T>
requires std::is_same_v<std::remove_const_t<T>, ControlReply>
void fields(V& v, T& s) {
  v(s.ok);
  v(s.error);
  fields(v, s.status);
}

template <class V, class T>
requires std::is_same_v<std::remove_const_t<T>, PlayerControl>
void fields(V& v, T& s) {
  v(s.op);
  v(s.offset);
  v(s.count);
  v(s.rate);
}
template <class V, class T>
requires std::is_same_v<std::remove_const_t<T>, PlayerReply>
void fields(V& v, T& s) {
  v(s.ok);
  v(s.error);
  v(s.paused);
  v(s.rate);
  v(s.now);
  v(s.offset);
  v(s.played);
  v(s.position);
  v(s.total);
  v(s.loops);
  v(s.to);
  v(s.clamped);
  v(s.message);
  v(s.burst_played);
}

// Wire width of each field type.
struct Sizer {
  size_t n = 0;
  void operator()(const std::string& s) { n += 4 + s.size(); }
  void operator()(bool) { n += 1; }
  void operator()(uint32_t) { n += 4; }
  void operator()(uint64_t) { n += 8; }
  void operator()(double) { n += 8; }
  void operator()(SimTime) { n += 8; }
  void operator()(Duration) { n += 8; }
  template <class E>
  requires std::is_enum_v<E>
  void operator()(E) { n += 1; }
  template <class T>
  void operator()(const std::vector<T>& v) {
    n += 4;
    for (const auto& e : v) fields(*this, e);
  }
};

struct Writer {
  char* p;
  void u8(uint8_t v) { *p++ = static_cast<char>(v); }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) *p++ = static_cast<char>((v >> (8 * i)) & 0xFF);
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) *p++ = static_cast<char>((v >> (8 * i)) & 0xFF);
  }
  void operator()(const std::string& s) {
    u32(static_cast<uint32_t>(s.size()));
    if (!s.empty()) std::memcpy(p, s.data(), s.size());
    p += s.size();
  }
  void operator()(bool b) { u8(b ? 1 : 0); }
  void operator()(uint32_t v) { u32(v); }
  void operator()(uint64_t v) { u64(v); }
  void operator()(double d) { u64(std::bit_cast<uint64_t>(d)); }
  void operator()(SimTime t) { u64(static_cast<uint64_t>(t.ns())); }
  void operator()(Duration d) { u64(static_cast<uint64_t>(d.ns())); }
  template <class E>
  requires std::is_enum_v<E>
  void operator()(E e) { u8(static_cast<uint8_t>(e)); }
  template <class T>
  void operator()(const std::vector<T>& v) {
    u32(static_cast<uint32_t>(v.size()));
    for (const auto& e : v) fields(*this, e);
  }
};

bool valid_enum(Role r) { return r == Role::kRegulating || r == Role::kFollowing; }
bool valid_enum(ErrorCode c) {
  auto v = static_cast<uint8_t>(c);
  return v >= 1 && v <= 11;
}
bool valid_enum(ControlOp op) {
  auto v = static_cast<uint8_t>(op);
  return v >= 1 && v <= 6;
}
bool valid_enum(PlayerOp op) {
  auto v = static_cast<uint8_t>(op);
  return v >= 1 && v <= 8;
}

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}

  bool failed() const { return !reason_.empty(); }
  const std::string& reason() const { return reason_; }
  size_t offset() const { return pos_; }
  bool at_end() const { return pos_ == in_.size(); }

  void operator()(std::string& s) {
    uint32_t n = 0;
    if (!u32(n, "string length")) return;
    if (n > in_.size() - pos_) {
      fail("string length " + std::to_string(n) + " runs past the end (" +
           std::to_string(in_.size() - pos_) + " bytes left)");
      return;
    }
    s.assign(in_.data() + pos_, n);
    pos_ += n;
  }
  void operator()(bool& b) {
    uint8_t v = 0;
    if (!u8(v, "bool")) return;
    if (v > 1) {
      fail("bool byte " + std::to_string(v) + " is neither 0 nor 1");
      return;
    }
    b = v == 1;
  }
  void operator()(uint32_t& v) { u32(v, "u32"); }
  void operator()(uint64_t& v) { u64(v, "u64"); }
  void operator()(double& d) {
    uint64_t v = 0;
    if (u64(v, "double")) d = std::bit_cast<double>(v);
  }
  void operator()(SimTime& t) {
    uint64_t v = 0;
    if (u64(v, "time")) t = SimTime::from_ns(static_cast<int64_t>(v));
  }
  void operator()(Duration& d) {
    uint64_t v = 0;
    if (u64(v, "duration")) d = Duration::from_ns(static_cast<int64_t>(v));
  }
  template <class E>
  requires std::is_enum_v<E>
  void operator()(E& e) {
    uint8_t v = 0;
    if (!u8(v, "enum")) return;
    e = static_cast<E>(v);
    if (!valid_enum(e)) fail("unknown enum value " + std::to_string(v));
  }
  template <class T>
  void operator()(std::vector<T>& v) {
    uint32_t n = 0;
    if (!u32(n, "vector count")) return;
    // Each element takes at least one byte: a count beyond the bytes left cannot be honest.
    if (n > in_.size() - pos_) {
      fail("vector count " + std::to_string(n) + " runs past the end");
      return;
    }
    v.clear();
    for (uint32_t i = 0; i < n && !failed(); ++i) {
      v.emplace_back();
      fields(*this, v.back());
    }
  }

  bool u8(uint8_t& v, const char* what) {
    if (failed()) return false;
    if (in_.size() - pos_ < 1) return fail_truncated(what);
    v = static_cast<uint8_t>(in_[pos_++]);
    return true;
  }

 private:
  bool u32(uint32_t& v, const char* what) {
    if (failed()) return false;
    if (in_.size() - pos_ < 4) return fail_truncated(what);
    v = 0;
    for (int i = 0; i < 4; ++i) {
      v |= static_cast<uint32_t>(static_cast<uint8_t>(in_[pos_ + i])) << (8 * i);
    }
    pos_ += 4;
    return true;
  }
  bool u64(uint64_t& v, const char* what) {
    if (failed()) return false;
    if (in_.size() - pos_ < 8) return fail_truncated(what);
    v = 0;
    for (int i = 0; i < 8; ++i) {
      v |= static_cast<uint64_t>(static_cast<uint8_t>(in_[pos_ + i])) << (8 * i);
    }
    pos_ += 8;
    return true;
  }
  bool fail_truncated(const char* what) {
    fail(std::string("truncated: ") + what + " needs more bytes than the " +
         std::to_string(in_.size()) + "-byte frame has");
    return false;
  }
  void fail(std::string reason) {
    if (reason_.empty()) reason_ = reason + " at offset " + std::to_string(pos_);
  }

  std::string_view in_;
  size_t pos_ = 0;
  std::string reason_;
};

template <class T>
DecodeResult read_body(Reader& r, const char* kind_name) {
  T value{};
  fields(r, value);
  if (r.failed()) {
    return Error{ErrorCode::kMalformed,
                 std::string("malformed ") + kind_name + " frame: " + r.reason()};
  }
  if (!r.at_end()) {
    return Error{ErrorCode::kMalformed, std::string("malformed ") + kind_name +
                                            " frame: trailing bytes after offset " +
                                            std::to_string(r.offset())};
  }
  return Frame{std::move(value)};
}

}  // namespace

FrameKind frame_kind(const Frame& frame) { return static_cast<FrameKind>(frame.index() + 1); }

const char* frame_kind_name(FrameKind kind) {
  switch (kind) {
    case FrameKind::kAnnounce:
      return "announce";
    case FrameKind::kSubscribe:
      return "subscribe";
    case FrameKind::kUnsubscribe:
      return "unsubscribe";
    case FrameKind::kPublish:
      return "publish";
    case FrameKind::kLeave:
      return "leave";
    case FrameKind::kHeartbeat:
      return "heartbeat";
    case FrameKind::kGrant:
      return "grant";
    case FrameKind::kDeliver:
      return "deliver";
    case FrameKind::kError:
      return "error";
    case FrameKind::kControl:
      return "control";
    case FrameKind::kControlReply:
      return "control-reply";
    case FrameKind::kHello:
      return "hello";
    case FrameKind::kWelcome:
      return "welcome";
    case FrameKind::kPlayerControl:
      return "player-control";
    case FrameKind::kPlayerReply:
      return "player-reply";
  }
  return "unknown";
}

void encode_frame_into(const Frame& frame, std::string& out) {
  std::visit(
      [&out, &frame](const auto& value) {
        Sizer sizer;
        fields(sizer, value);
        out.resize(2 + sizer.n);
        Writer w{out.data()};
        w.u8(kWireMagicVersion);
        w.u8(static_cast<uint8_t>(frame_kind(frame)));
        fields(w, value);
      },
      frame);
}

std::string encode_frame(const Frame& frame) {
  std::string out;
  encode_frame_into(frame, out);
  return out;
}

DecodeResult decode_frame(std::string_view bytes, size_t max_bytes) {
  if (bytes.size() > max_bytes) {
    return Error{ErrorCode::kOversized, "frame of " + std::to_string(bytes.size()) +
                                            " bytes exceeds the limit of " +
                                            std::to_string(max_bytes) + " bytes"};
  }
  if (bytes.size() < 2) {
    return Error{ErrorCode::kMalformed,
                 "truncated: a frame needs at least 2 bytes, got " + std::to_string(bytes.size())};
  }
  auto magic = static_cast<uint8_t>(bytes[0]);
  if (magic != kWireMagicVersion) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "0x%02X", magic);
    if (std::optional<uint32_t> v = wire_version(bytes)) {
      return Error{ErrorCode::kVersion, "a frame of protocol version " + std::to_string(*v) +
                                            " (byte 0 is " + buf + "); this side speaks version " +
                                            std::to_string(kProtocolVersion)};
    }
    char expected[8];
    std::snprintf(expected, sizeof expected, "0x%02X", kWireMagicVersion);
    return Error{ErrorCode::kMalformed,
                 std::string("bad magic/version byte ") + buf + " (expected " + expected + ")"};
  }
  Reader r(bytes.substr(2));
  auto kind = static_cast<FrameKind>(static_cast<uint8_t>(bytes[1]));
  switch (kind) {
    case FrameKind::kAnnounce:
      return read_body<Announce>(r, "announce");
    case FrameKind::kSubscribe:
      return read_body<Subscribe>(r, "subscribe");
    case FrameKind::kUnsubscribe:
      return read_body<Unsubscribe>(r, "unsubscribe");
    case FrameKind::kPublish:
      return read_body<Publish>(r, "publish");
    case FrameKind::kLeave:
      return read_body<Leave>(r, "leave");
    case FrameKind::kHeartbeat:
      return read_body<Heartbeat>(r, "heartbeat");
    case FrameKind::kGrant:
      return read_body<Grant>(r, "grant");
    case FrameKind::kDeliver:
      return read_body<Deliver>(r, "deliver");
    case FrameKind::kError:
      return read_body<Error>(r, "error");
    case FrameKind::kControl:
      return read_body<Control>(r, "control");
    case FrameKind::kControlReply:
      return read_body<ControlReply>(r, "control-reply");
    case FrameKind::kHello:
      return read_body<Hello>(r, "hello");
    case FrameKind::kWelcome:
      return read_body<Welcome>(r, "welcome");
    case FrameKind::kPlayerControl:
      return read_body<PlayerControl>(r, "player-control");
    case FrameKind::kPlayerReply:
      return read_body<PlayerReply>(r, "player-reply");
  }
  return Error{ErrorCode::kUnknownKind,
               "unknown frame kind " + std::to_string(static_cast<uint8_t>(bytes[1]))};
}

std::optional<uint32_t> wire_version(std::string_view bytes) {
  if (bytes.empty()) return std::nullopt;
  auto b = static_cast<uint8_t>(bytes[0]);
  if ((b & 0xF0) != kWireMagic) return std::nullopt;
  return b & 0x0F;
}

}  // namespace fieldproof::lockstep
