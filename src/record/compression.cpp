#include "record/compression.hpp"

#include <lz4frame.h>
#include <zstd.h>

#include <algorithm>
#include <string>

namespace fieldproof::record::detail {

namespace {
// Output grows in steps of at most this much, so a chunk that lies about its size costs only
// what really decompresses.
constexpr size_t kGrowStep = size_t{16} << 20;

Status corrupt(const std::string& what) { return {StatusCode::kCorrupt, what}; }
}  // namespace

Compressor::~Compressor() {
  if (zstd_ != nullptr) ZSTD_freeCCtx(static_cast<ZSTD_CCtx*>(zstd_));
}

Status Compressor::compress(Compression c, int level, const uint8_t* data, size_t size,
                            std::vector<uint8_t>& out) {
  switch (c) {
    case Compression::kNone:
      out.assign(data, data + size);
      return {};
    case Compression::kZstd: {
      if (zstd_ == nullptr) zstd_ = ZSTD_createCCtx();
      if (zstd_ == nullptr) return {StatusCode::kIoError, "zstd: cannot create a context"};
      out.resize(ZSTD_compressBound(size));
      size_t n = ZSTD_compressCCtx(static_cast<ZSTD_CCtx*>(zstd_), out.data(), out.size(), data,
                                   size, level);
      if (ZSTD_isError(n)) {
        return {StatusCode::kIoError,
                std::string("zstd compression failed: ") + ZSTD_getErrorName(n)};
      }
      out.resize(n);
      return {};
    }
    case Compression::kLz4: {
      LZ4F_preferences_t prefs{};
      prefs.compressionLevel = level;
      prefs.frameInfo.contentSize = size;
      prefs.frameInfo.blockSizeID = LZ4F_max4MB;
      out.resize(LZ4F_compressFrameBound(size, &prefs));
      size_t n = LZ4F_compressFrame(out.data(), out.size(), data, size, &prefs);
      if (LZ4F_isError(n)) {
        return {StatusCode::kIoError,
                std::string("lz4 compression failed: ") + LZ4F_getErrorName(n)};
      }
      out.resize(n);
      return {};
    }
  }
  return {StatusCode::kUnsupported, "unknown compression"};
}

namespace {

// One decompression context per thread, reset per chunk: creating one costs more than
// decompressing a small chunk (it was 60% of reading many small chunks).
struct DctxHolder {
  ZSTD_DCtx* ctx = nullptr;
  ~DctxHolder() {
    if (ctx != nullptr) ZSTD_freeDCtx(ctx);
  }
};

ZSTD_DCtx* thread_dctx() {
  thread_local DctxHolder holder;
  if (holder.ctx == nullptr) holder.ctx = ZSTD_createDCtx();
  if (holder.ctx != nullptr) ZSTD_DCtx_reset(holder.ctx, ZSTD_reset_session_only);
  return holder.ctx;
}

Status decompress_zstd(const uint8_t* data, size_t size, uint64_t expected,
                       std::vector<uint8_t>& out) {
  ZSTD_DCtx* ctx = thread_dctx();
  if (ctx == nullptr) return {StatusCode::kIoError, "zstd: cannot create a context"};
  out.clear();
  ZSTD_inBuffer in{data, size, 0};
  size_t produced = 0;
  size_t last = 1;  // 0 once a frame is complete
  Status st;
  while (produced < expected) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(expected - produced, kGrowStep));
    out.resize(produced + want);
    ZSTD_outBuffer ob{out.data() + produced, want, 0};
    last = ZSTD_decompressStream(ctx, &ob, &in);
    if (ZSTD_isError(last)) {
      st = corrupt(std::string("zstd: ") + ZSTD_getErrorName(last));
      break;
    }
    produced += ob.pos;
    if (produced < expected && ob.pos < want && in.pos == in.size) {
      st = corrupt("zstd: input ended after " + std::to_string(produced) + " of " +
                   std::to_string(expected) + " bytes");
      break;
    }
  }
  if (st.ok() && (last != 0 || in.pos < in.size)) {
    // Everything expected is out: the frame must end here, with nothing more in it.
    uint8_t probe[1];
    ZSTD_outBuffer po{probe, sizeof(probe), 0};
    last = ZSTD_decompressStream(ctx, &po, &in);
    if (ZSTD_isError(last)) {
      st = corrupt(std::string("zstd: ") + ZSTD_getErrorName(last));
    } else if (po.pos != 0) {
      st =
          corrupt("zstd: more data than the chunk's uncompressed_size " + std::to_string(expected));
    } else if (last != 0) {
      st = corrupt("zstd: frame incomplete after " + std::to_string(produced) + " bytes");
    }
  }
  out.resize(produced);
  return st;
}

Status decompress_lz4(const uint8_t* data, size_t size, uint64_t expected,
                      std::vector<uint8_t>& out) {
  LZ4F_dctx* ctx = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&ctx, LZ4F_VERSION))) {
    return {StatusCode::kIoError, "lz4: cannot create a context"};
  }
  out.clear();
  size_t consumed = 0;
  size_t produced = 0;
  size_t hint = 1;
  Status st;
  while (hint != 0) {
    if (consumed == size) {
      st = corrupt("lz4: input ended after " + std::to_string(produced) + " of " +
                   std::to_string(expected) + " bytes");
      break;
    }
    size_t want = static_cast<size_t>(std::min<uint64_t>(expected - produced, kGrowStep));
    // One spare byte lets a frame holding more than promised show itself.
    out.resize(produced + want + 1);
    size_t dst_size = want + 1;
    size_t src_size = size - consumed;
    hint =
        LZ4F_decompress(ctx, out.data() + produced, &dst_size, data + consumed, &src_size, nullptr);
    if (LZ4F_isError(hint)) {
      st = corrupt(std::string("lz4: ") + LZ4F_getErrorName(hint));
      break;
    }
    consumed += src_size;
    produced += dst_size;
    if (produced > expected) {
      st = corrupt("lz4: more data than the chunk's uncompressed_size " + std::to_string(expected));
      break;
    }
    if (dst_size == 0 && src_size == 0) {
      st = corrupt("lz4: no progress after " + std::to_string(produced) + " bytes");
      break;
    }
  }
  LZ4F_freeDecompressionContext(ctx);
  if (st.ok() && produced != expected) {
    st = corrupt("lz4: frame holds " + std::to_string(produced) + " bytes, the chunk says " +
                 std::to_string(expected));
  }
  out.resize(std::min<size_t>(produced, expected));
  return st;
}

}  // namespace

Status decompress(Compression c, const uint8_t* data, size_t size, uint64_t expected_size,
                  std::vector<uint8_t>& out) {
  switch (c) {
    case Compression::kNone:
      if (size != expected_size) {
        return corrupt("uncompressed chunk holds " + std::to_string(size) +
                       " bytes, its uncompressed_size says " + std::to_string(expected_size));
      }
      out.assign(data, data + size);
      return {};
    case Compression::kZstd:
      return decompress_zstd(data, size, expected_size, out);
    case Compression::kLz4:
      return decompress_lz4(data, size, expected_size, out);
  }
  return {StatusCode::kUnsupported, "unknown compression"};
}

}  // namespace fieldproof::record::detail
