#include "fieldproof/record/mcap_types.hpp"

#include <zlib.h>

#include <algorithm>

#include "record/mcap_wire.hpp"

namespace fieldproof::record {

std::string_view compression_name(Compression c) {
  switch (c) {
    case Compression::kNone:
      return "";
    case Compression::kLz4:
      return "lz4";
    case Compression::kZstd:
      return "zstd";
  }
  return "";
}

std::optional<Compression> parse_compression(std::string_view name) {
  if (name.empty() || name == "none") return Compression::kNone;
  if (name == "lz4") return Compression::kLz4;
  if (name == "zstd") return Compression::kZstd;
  return std::nullopt;
}

namespace wire {
uint32_t crc32_update(uint32_t crc, const uint8_t* data, size_t size) {
  // zlib takes uInt lengths: feed very large ranges in pieces.
  constexpr size_t kStep = size_t{1} << 30;
  while (size > 0) {
    size_t n = std::min(size, kStep);
    crc = static_cast<uint32_t>(::crc32(crc, data, static_cast<uInt>(n)));
    data += n;
    size -= n;
  }
  return crc;
}
}  // namespace wire

}  // namespace fieldproof::record
