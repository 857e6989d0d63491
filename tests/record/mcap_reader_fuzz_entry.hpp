// The fuzz entry point for McapReader, shared by the libFuzzer target (mcap_reader_fuzz.cpp,
// clang only) and the always-built driver that runs it over a corpus in CTest
// (mcap_reader_fuzz_driver_test.cpp): any bytes must open (or be refused as not MCAP) and read
// without a crash, a sanitizer report or unbounded memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "fieldproof/record/mcap_reader.hpp"

namespace fieldproof::record::testing {

// How far one input got, for the driver's coverage check.
struct FuzzOutcome {
  bool opened = false;
  size_t messages = 0;
};

inline FuzzOutcome fuzz_mcap_reader(const uint8_t* data, size_t size) {
  FuzzOutcome out;
  McapReaderOptions opt;
  opt.max_chunk_uncompressed_size = size_t{16} << 20;
  opt.use_summary = size % 2 == 0;  // exercise both the summary and the scan
  McapReader reader;
  if (!reader.open_bytes(std::string(reinterpret_cast<const char*>(data), size), opt).ok()) {
    return out;
  }
  out.opened = true;
  if (auto all = reader.read_all(); all.ok()) out.messages = all.value().size();
  ReadMessageOptions q;
  q.start_ns = 1'000;
  q.topics = {"/odom"};
  static_cast<void>(reader.read_all(q));
  for (const auto& info : reader.attachments()) static_cast<void>(reader.read_attachment(info));
  return out;
}

}  // namespace fieldproof::record::testing
