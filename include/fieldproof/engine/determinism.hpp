// The determinism self-check (`fieldproof run SCENARIO --check-determinism`): the scenario runs
// twice with the same seed (run ids <id>-a and <id>-b) and the two ordered streams are compared
// message by message: the recordings' bus messages in the coordinator's total order (topic,
// stamp, publisher's sequence, payload bytes; the /fieldproof/* side channels carry wall-clock
// fields and are left out, as are the wall-clock fields of WorldStatistics: real_time,
// real_time_factor, pause_time), or samples.jsonl without its wall-clock fields when a run has no
// recording. The outcome names the first message that differs (its index, topic, stamp and both
// values, with the first field that differs) or says the streams are identical.
//
//   DeterminismOptions d;
//   d.run.scenario_file = "examples/scenarios/ugv_lockstep.yaml";
//   d.run.runs_dir = "runs";
//   DeterminismOutcome r = check_determinism(d);   // r.exit_code: 0 identical, 1 a difference
//   puts(r.report.c_str());                        // (or a run that did not complete), 2 invalid
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fieldproof/engine/run.hpp"

namespace fieldproof::engine {

// The first difference between two ordered streams.
struct StreamDifference {
  uint64_t index = 0;  // 0-based position in the compared stream
  std::string topic_a, topic_b;
  double t_a = 0, t_b = 0;       // stamps, simulated seconds
  std::string value_a, value_b;  // JSON text (truncated), "(end of stream)" when one ran out
  std::string field;             // the first field path that differs ("pose[0].position.x"), or ""
};

struct StreamComparison {
  bool ok = true;  // false: a stream could not be read (error says why)
  std::string error;
  std::string source;     // "recording" or "samples"
  uint64_t compared = 0;  // messages compared (the shorter stream, or up to the difference)
  uint64_t count_a = 0, count_b = 0;
  std::optional<StreamDifference> difference;
};

// Compares two runs' ordered streams (run directories).
StreamComparison compare_streams(const std::filesystem::path& run_a,
                                 const std::filesystem::path& run_b);
// Compares two MCAP files' bus messages (side channels /fieldproof/* left out).
StreamComparison compare_recordings(const std::filesystem::path& mcap_a,
                                    const std::filesystem::path& mcap_b);

struct DeterminismOptions {
  RunOptions run;  // run_id: the prefix of the two runs (empty: <scenario name>-determinism-<n>)
  // Test-only: the second run's seed instead of the first's (to check a difference is found).
  std::optional<int64_t> second_seed;
};

struct DeterminismOutcome {
  int exit_code = 0;  // 0 identical, 1 different or a run did not complete, 2 invalid input
  bool identical = false;
  RunOutcome a, b;
  StreamComparison comparison;
  std::vector<std::string> errors;  // invalid input (exit 2)
  std::string report;               // what to print, newline-terminated lines
};

DeterminismOutcome check_determinism(const DeterminismOptions& options);

}  // namespace fieldproof::engine
