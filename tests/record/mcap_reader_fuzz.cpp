// libFuzzer target for McapReader: any bytes must open (or be refused as not MCAP) and read
// without a crash, a sanitizer report or unbounded memory. Built only with clang and
// -DFIELDPROOF_FUZZ=ON; run by hand for a few minutes, not in CI:
//
//   cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang \
//         -DFIELDPROOF_FUZZ=ON -DFIELDPROOF_SANITIZE=ON
//   cmake --build build-fuzz --target record_mcap_reader_fuzz
//   build-fuzz/tests/record/record_mcap_reader_fuzz -max_total_time=180 CORPUS_DIR
#include <cstddef>
#include <cstdint>
#include <string>

#include "fieldproof/record/mcap_reader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fieldproof::record;
  McapReaderOptions opt;
  opt.max_chunk_uncompressed_size = size_t{16} << 20;
  opt.use_summary = size % 2 == 0;  // exercise both the summary and the scan
  McapReader reader;
  if (!reader.open_bytes(std::string(reinterpret_cast<const char*>(data), size), opt).ok()) {
    return 0;
  }
  static_cast<void>(reader.read_all());
  ReadMessageOptions q;
  q.start_ns = 1'000;
  q.topics = {"/odom"};
  static_cast<void>(reader.read_all(q));
  for (const auto& info : reader.attachments()) static_cast<void>(reader.read_attachment(info));
  return 0;
}
