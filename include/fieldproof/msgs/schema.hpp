// Schemas for recorders: the serialized google.protobuf.FileDescriptorSet of a message type, with
// every file it depends on (dependencies first, each file once), as MCAP's `protobuf` encoding and
// Foxglove expect. No protobuf in this header.
//
//   auto fds = fieldproof::msgs::file_descriptor_set(fieldproof::msgs::kLaserScan);
//   if (!fds) ...;   // unknown type name
//   writer.add_schema(std::string(kLaserScan), "protobuf", *fds);
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fieldproof::msgs {

// nullopt when the type is not one the program knows (not linked in).
std::optional<std::string> file_descriptor_set(std::string_view full_type_name);

// The types this library guarantees to know (types.hpp), in a fixed order.
std::vector<std::string> known_types();

}  // namespace fieldproof::msgs
