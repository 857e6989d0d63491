// Little-endian encoding of MCAP's primitive types (specification, "Serialization"), private to
// the record part: an appender for the writer and a bounds-checked cursor for the reader.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "fieldproof/record/mcap_types.hpp"

namespace fieldproof::record::wire {

inline constexpr uint8_t kMagic[8] = {0x89, 'M', 'C', 'A', 'P', 0x30, '\r', '\n'};
inline constexpr size_t kMagicSize = sizeof(kMagic);
inline constexpr size_t kRecordPrefix = 1 + 8;  // opcode + content length
inline constexpr size_t kFooterContent = 8 + 8 + 4;
inline constexpr size_t kFooterRecord = kRecordPrefix + kFooterContent;

uint32_t crc32_update(uint32_t crc, const uint8_t* data, size_t size);
inline uint32_t crc32(const uint8_t* data, size_t size) { return crc32_update(0, data, size); }

// Writes the low n bytes of v at p, little-endian.
inline void store_le(uint8_t* p, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

// Stored uint64 timestamps as int64, saturating at INT64_MAX.
inline int64_t to_ns(uint64_t t) {
  return t > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
             ? std::numeric_limits<int64_t>::max()
             : static_cast<int64_t>(t);
}

// Appends encoded values to a byte vector.
class Appender {
 public:
  explicit Appender(std::vector<uint8_t>& out) : out_(out) {}
  void u8(uint8_t v) { out_.push_back(v); }
  void u16(uint16_t v) { le(v, 2); }
  void u32(uint32_t v) { le(v, 4); }
  void u64(uint64_t v) { le(v, 8); }
  void bytes(const void* data, size_t size) {
    const auto* p = static_cast<const uint8_t*>(data);
    out_.insert(out_.end(), p, p + size);
  }
  void str(std::string_view s) {
    u32(static_cast<uint32_t>(s.size()));
    bytes(s.data(), s.size());
  }
  void string_map(const KeyValueMap& m) {
    size_t len_at = begin_length32();
    for (const auto& [k, v] : m) {
      str(k);
      str(v);
    }
    end_length32(len_at);
  }
  // Starts a record: opcode and a placeholder length; returns where the length goes.
  size_t begin_record(Opcode op) {
    u8(static_cast<uint8_t>(op));
    size_t at = out_.size();
    u64(0);
    return at;
  }
  void end_record(size_t length_at) { patch64(length_at, out_.size() - length_at - 8); }
  size_t begin_length32() {
    size_t at = out_.size();
    u32(0);
    return at;
  }
  void end_length32(size_t at) { patch32(at, static_cast<uint32_t>(out_.size() - at - 4)); }
  void patch32(size_t at, uint32_t v) {
    for (int i = 0; i < 4; ++i) out_[at + i] = static_cast<uint8_t>(v >> (8 * i));
  }
  void patch64(size_t at, uint64_t v) {
    for (int i = 0; i < 8; ++i) out_[at + i] = static_cast<uint8_t>(v >> (8 * i));
  }
  size_t size() const { return out_.size(); }

 private:
  void le(uint64_t v, int n) {
    uint8_t b[8];
    for (int i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(v >> (8 * i));
    out_.insert(out_.end(), b, b + n);
  }
  std::vector<uint8_t>& out_;
};

// Reads encoded values from a byte range; every read is bounds-checked. After the first failure
// ok() is false and every later read returns zero / empty, so a parser checks once at the end.
class Cursor {
 public:
  Cursor(const uint8_t* data, size_t size) : p_(data), end_(data + size) {}
  bool ok() const { return ok_; }
  size_t remaining() const { return static_cast<size_t>(end_ - p_); }
  const uint8_t* pos() const { return p_; }

  uint8_t u8() { return static_cast<uint8_t>(le(1)); }
  uint16_t u16() { return static_cast<uint16_t>(le(2)); }
  uint32_t u32() { return static_cast<uint32_t>(le(4)); }
  uint64_t u64() { return le(8); }
  // A view of the next n bytes (empty and not ok when fewer remain).
  std::string_view take(uint64_t n) {
    if (!ok_ || n > remaining()) {
      ok_ = false;
      return {};
    }
    std::string_view v(reinterpret_cast<const char*>(p_), static_cast<size_t>(n));
    p_ += n;
    return v;
  }
  std::string str() { return std::string(take(u32())); }
  KeyValueMap string_map() {
    KeyValueMap m;
    Cursor inner = sub32();
    while (inner.ok() && inner.remaining() > 0) {
      std::string k = inner.str();
      std::string v = inner.str();
      if (!inner.ok()) break;
      m[std::move(k)] = std::move(v);
    }
    if (!inner.ok()) ok_ = false;
    return m;
  }
  // A cursor over a uint32-length-prefixed region, advancing past it.
  Cursor sub32() {
    std::string_view v = take(u32());
    return ok_ ? Cursor(reinterpret_cast<const uint8_t*>(v.data()), v.size()) : failed();
  }
  static Cursor failed() {
    Cursor c(nullptr, 0);
    c.ok_ = false;
    return c;
  }

 private:
  uint64_t le(int n) {
    if (!ok_ || remaining() < static_cast<size_t>(n)) {
      ok_ = false;
      p_ = end_;
      return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(p_[i]) << (8 * i);
    p_ += n;
    return v;
  }
  const uint8_t* p_;
  const uint8_t* end_;
  bool ok_ = true;
};

}  // namespace fieldproof::record::wire
