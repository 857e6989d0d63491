// Chunk compression for MCAP: zstd (libzstd) and lz4 in the lz4 *frame* format (liblz4's
// lz4frame), as the specification's well-known compression formats require.
#pragma once

#include <cstdint>
#include <vector>

#include "fieldproof/record/mcap_types.hpp"

namespace fieldproof::record::detail {

// Reusable compression state (zstd context); one per writer, not thread-safe.
class Compressor {
 public:
  Compressor() = default;
  ~Compressor();
  Compressor(const Compressor&) = delete;
  Compressor& operator=(const Compressor&) = delete;

  // Replaces out with the compressed form of [data, data + size).
  Status compress(Compression c, int level, const uint8_t* data, size_t size,
                  std::vector<uint8_t>& out);

 private:
  void* zstd_ = nullptr;  // ZSTD_CCtx*
};

// Decompresses into out, which ends up exactly expected_size bytes long, or returns kCorrupt /
// kUnsupported. Never allocates more than expected_size (plus a small margin) and stops at the
// first error, so garbage input costs little.
Status decompress(Compression c, const uint8_t* data, size_t size, uint64_t expected_size,
                  std::vector<uint8_t>& out);

}  // namespace fieldproof::record::detail
