// Value types shared by the MCAP writer and reader: Status / Result (util/status.hpp), the
// records as plain structs, and the compression choice.
//
//   Status s = writer.write(channel, seq, SimTime::from_ns(5), SimTime::from_ns(5), bytes);
//   if (!s.ok()) log(s.to_string());          // "io_error: write failed at offset 123: ..."
//
// Times are int64 nanoseconds (MCAP stores uint64; values above INT64_MAX read back saturated).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "fieldproof/util/status.hpp"

namespace fieldproof::record {

// Status, StatusCode and Result are the library's one error style (util/status.hpp).
using ::fieldproof::Result;
using ::fieldproof::Status;
using ::fieldproof::StatusCode;
using ::fieldproof::to_string;

enum class Compression : uint8_t { kNone = 0, kLz4, kZstd };

// The name MCAP stores in a chunk: "", "lz4" or "zstd".
std::string_view compression_name(Compression c);
// Parses "", "none", "lz4", "zstd" (as in a scenario or CLI option).
std::optional<Compression> parse_compression(std::string_view name);

using KeyValueMap = std::map<std::string, std::string>;

struct Schema {
  uint16_t id = 0;  // never 0 in a file (0 means "no schema")
  std::string name;
  std::string encoding;  // e.g. "protobuf", "jsonschema"; "" when there is no schema
  std::string data;      // bytes (a FileDescriptorSet, a JSON schema text...)
  bool operator==(const Schema&) const = default;
};

struct Channel {
  uint16_t id = 0;
  uint16_t schema_id = 0;  // 0: no schema
  std::string topic;
  std::string message_encoding;  // e.g. "protobuf", "json"
  KeyValueMap metadata;
  bool operator==(const Channel&) const = default;
};

struct Statistics {
  uint64_t message_count = 0;
  uint16_t schema_count = 0;
  uint32_t channel_count = 0;
  uint32_t attachment_count = 0;
  uint32_t metadata_count = 0;
  uint32_t chunk_count = 0;
  int64_t message_start_time_ns = 0;  // 0 when there are no messages
  int64_t message_end_time_ns = 0;
  std::map<uint16_t, uint64_t> channel_message_counts;
  bool operator==(const Statistics&) const = default;
};

struct Metadata {
  std::string name;
  KeyValueMap metadata;
  bool operator==(const Metadata&) const = default;
};

struct Attachment {
  int64_t log_time_ns = 0;
  int64_t create_time_ns = 0;
  std::string name;
  std::string content_type;
  std::string data;
  bool operator==(const Attachment&) const = default;
};

// Where an attachment is in the file, without its data (the reader's attachment list).
struct AttachmentInfo {
  uint64_t offset = 0;  // of the attachment record, from the start of the file
  uint64_t length = 0;  // of the whole record
  int64_t log_time_ns = 0;
  int64_t create_time_ns = 0;
  uint64_t data_size = 0;
  std::string name;
  std::string content_type;
};

// The MCAP record opcodes (specification, "Records").
enum class Opcode : uint8_t {
  kHeader = 0x01,
  kFooter = 0x02,
  kSchema = 0x03,
  kChannel = 0x04,
  kMessage = 0x05,
  kChunk = 0x06,
  kMessageIndex = 0x07,
  kChunkIndex = 0x08,
  kAttachment = 0x09,
  kAttachmentIndex = 0x0A,
  kStatistics = 0x0B,
  kMetadata = 0x0C,
  kMetadataIndex = 0x0D,
  kSummaryOffset = 0x0E,
  kDataEnd = 0x0F,
};

}  // namespace fieldproof::record
