#include "stacks/nav_wire.hpp"

#include <ignition/msgs/pose.pb.h>

#include <cstdint>
#include <cstring>

#include "fieldproof/msgs/ign.hpp"

namespace fieldproof::stacks::wire {
namespace {

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

void put_varint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void put_tag(std::string* out, uint32_t field, WireType type) {
  put_varint(out, (static_cast<uint64_t>(field) << 3) | type);
}

void put_string(std::string* out, uint32_t field, const std::string& s) {
  if (s.empty()) return;
  put_tag(out, field, kLengthDelimited);
  put_varint(out, s.size());
  out->append(s);
}

void put_enum(std::string* out, uint32_t field, int v) {
  if (v == 0) return;
  put_tag(out, field, kVarint);
  put_varint(out, static_cast<uint64_t>(static_cast<int64_t>(v)));
}

void put_double(std::string* out, uint32_t field, double v) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  if (bits == 0) return;
  put_tag(out, field, kFixed64);
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}

struct Reader {
  std::string_view in;
  size_t pos = 0;
  bool varint(uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos >= in.size()) return false;
      const auto b = static_cast<uint8_t>(in[pos++]);
      *v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  }
  bool bytes(std::string_view* out) {
    uint64_t n = 0;
    if (!varint(&n) || n > in.size() - pos) return false;
    *out = in.substr(pos, n);
    pos += n;
    return true;
  }
  bool skip(uint32_t type) {
    uint64_t v = 0;
    std::string_view b;
    switch (type) {
      case kVarint:
        return varint(&v);
      case kFixed64:
        if (in.size() - pos < 8) return false;
        pos += 8;
        return true;
      case kLengthDelimited:
        return bytes(&b);
      case kFixed32:
        if (in.size() - pos < 4) return false;
        pos += 4;
        return true;
      default:
        return false;
    }
  }
};

// The enum values of the .proto files (0 is UNKNOWN in both).
int status_value(GoalStatus s) {
  switch (s) {
    case GoalStatus::kAccepted:
      return 1;
    case GoalStatus::kRejected:
      return 2;
    case GoalStatus::kSucceeded:
      return 3;
    case GoalStatus::kAborted:
      return 4;
    case GoalStatus::kCanceled:
      return 5;
  }
  return 0;
}

int lifecycle_value(LifecycleState s) {
  switch (s) {
    case LifecycleState::kUnconfigured:
      return 1;
    case LifecycleState::kInactive:
      return 2;
    case LifecycleState::kActive:
      return 3;
    case LifecycleState::kFinalized:
      return 4;
  }
  return 0;
}

}  // namespace

std::string encode_status(const NavStatus& status) {
  std::string out;
  put_string(&out, 1, status.id);
  put_enum(&out, 2, status_value(status.status));
  put_string(&out, 3, status.reason);
  return out;
}

std::string encode_feedback(const NavFeedback& feedback) {
  std::string out;
  put_string(&out, 1, feedback.id);
  put_double(&out, 2, feedback.distance_remaining);
  return out;
}

std::string encode_lifecycle(const LifecycleTransition& transition) {
  std::string out;
  put_string(&out, 1, transition.node);
  put_enum(&out, 2, lifecycle_value(transition.state));
  return out;
}

std::optional<NavGoal> decode_goal(std::string_view payload) {
  Reader r{payload};
  NavGoal goal;
  while (r.pos < payload.size()) {
    uint64_t key = 0;
    if (!r.varint(&key)) return std::nullopt;
    const auto field = static_cast<uint32_t>(key >> 3);
    const auto type = static_cast<uint32_t>(key & 7);
    if ((field == 1 || field == 2) && type == kLengthDelimited) {
      std::string_view b;
      if (!r.bytes(&b)) return std::nullopt;
      if (field == 1) {
        goal.id.assign(b);
      } else {
        ignition::msgs::Pose pose;
        if (!pose.ParseFromArray(b.data(), static_cast<int>(b.size()))) return std::nullopt;
        goal.pose = {pose.position().x(), pose.position().y(), msgs::yaw_of(pose.orientation())};
      }
    } else if (field == 0 || !r.skip(type)) {
      return std::nullopt;
    }
  }
  return goal;
}

std::optional<bool> decode_link_up(std::string_view payload) {
  Reader r{payload};
  bool up = false;
  while (r.pos < payload.size()) {
    uint64_t key = 0;
    if (!r.varint(&key)) return std::nullopt;
    const auto field = static_cast<uint32_t>(key >> 3);
    const auto type = static_cast<uint32_t>(key & 7);
    if (field == 2 && type == 0) {
      uint64_t v = 0;
      if (!r.varint(&v)) return std::nullopt;
      up = v != 0;
    } else if (field == 0 || !r.skip(type)) {
      return std::nullopt;
    }
  }
  return up;
}

}  // namespace fieldproof::stacks::wire
