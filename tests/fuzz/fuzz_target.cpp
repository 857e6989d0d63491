// A libFuzzer target for one entry of fuzz_entries.hpp (FIELDPROOF_FUZZ_TARGET, an index of
// fuzz::Target), built with clang by `make fuzz` (-DFIELDPROOF_FUZZ=ON):
//
//   build-fuzz/tests/fuzz/fuzz_scenario_loader -max_total_time=180 -rss_limit_mb=2048 \
//       -timeout=10 /tmp/scenario-corpus tests/fuzz/fuzz_corpus/scenario_loader
//
// A crash it finds is minimised (-minimize_crash=1) and, once fixed, added to
// tests/fuzz/fuzz_corpus/<target>/ (fuzz_driver_test replays every file there in every build).
#include <cstddef>
#include <cstdint>

#include "fuzz/fuzz_entries.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fieldproof::fuzz::run(fieldproof::fuzz::kTargets[FIELDPROOF_FUZZ_TARGET], data, size);
  return 0;
}
