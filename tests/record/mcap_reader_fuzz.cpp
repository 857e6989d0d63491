// libFuzzer target for McapReader (the entry point is mcap_reader_fuzz_entry.hpp, which CTest also
// runs over a corpus: record_mcap_fuzz_driver_test). Built only with clang and
// -DFIELDPROOF_FUZZ=ON; run by hand for a few minutes, not in CI:
//
//   cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang \
//         -DFIELDPROOF_FUZZ=ON -DFIELDPROOF_SANITIZE=ON
//   cmake --build build-fuzz --target record_mcap_reader_fuzz
//   mkdir -p /tmp/mcap-corpus && build-fuzz/tests/record/record_mcap_reader_fuzz \
//       -max_total_time=180 -rss_limit_mb=1024 /tmp/mcap-corpus tests/record/fuzz_corpus
//
// A crash it finds goes into tests/record/fuzz_corpus/ (the driver test replays every file there).
#include <cstddef>
#include <cstdint>

#include "record/mcap_reader_fuzz_entry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static_cast<void>(fieldproof::record::testing::fuzz_mcap_reader(data, size));
  return 0;
}
