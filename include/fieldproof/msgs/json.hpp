// Bus messages as JSON, decoded by reflection over the protobuf descriptor pool (every type the
// msgs part links in: ignition.msgs.* and fieldproof.msgs.*), for the observer's value samples
// and the condition language's field paths (twist.linear.x, ranges[0], header.stamp.sec).
//
//   msgs::Decoder d;
//   msgs::Decoded m = d.decode("ignition.msgs.Twist", payload);
//   if (!m.ok) log(m.error);                       // unknown type, or not a valid encoding
//   double vx = m.json["linear"]["x"];             // proto field names
//   if (m.stamp) age = now - *m.stamp;             // header.stamp, when the message has one
//
// The JSON keeps the proto field names and prints every field: scalars at their defaults,
// unset sub-messages as their defaults (so a path that the type has always resolves), repeated
// fields as arrays, map fields as objects, enums by name, 64-bit integers as numbers, floats
// rounded to their 7 significant digits, bytes as base64. Not thread-safe (one per thread).
#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "fieldproof/time/duration.hpp"

namespace fieldproof::msgs {

struct Decoded {
  bool ok = false;
  std::string error;  // why not ok: "unknown message type X", "not a valid X"
  nlohmann::json json;
  // header.stamp when the message has a header whose stamp is set; nullopt otherwise.
  std::optional<SimTime> stamp;
};

class Decoder {
 public:
  Decoder();
  ~Decoder();
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  // want_json false: only the stamp is read (cheaper: no JSON is built).
  Decoded decode(std::string_view type, std::string_view payload, bool want_json = true);
  // Whether the type is known to the descriptor pool.
  bool knows(std::string_view type);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace fieldproof::msgs
