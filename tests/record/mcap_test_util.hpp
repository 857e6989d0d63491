// Helpers shared by the record tests: a small deterministic recording written to memory or a
// file, and a deterministic PRNG (splitmix64) for the garbage tests.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

#include "fieldproof/record/mcap_reader.hpp"
#include "fieldproof/record/mcap_writer.hpp"

namespace fieldproof::record {
// Test names and failure messages show "zstd", not a byte dump.
inline void PrintTo(Compression c, std::ostream* os) {
  *os << (c == Compression::kNone ? "none" : std::string(compression_name(c)));
}
}  // namespace fieldproof::record

namespace fieldproof::record::testing {

// What the sample recording holds, to compare with what comes back.
struct Sample {
  std::vector<Message> messages;       // in write order
  std::vector<uint64_t> chunk_starts;  // file offsets where each closed chunk record begins
};

// Two topics ("/odom" on a schema, "/fieldproof/events" json), messages every 10 ms from t=1 s,
// a chunk closed every `per_chunk` messages, a metadata record and an attachment.
inline Sample write_sample(McapWriter& w, int count = 40, int per_chunk = 10) {
  Sample s;
  auto schema = w.add_schema("fieldproof.Odometry", "jsonschema", R"({"type":"object"})");
  auto odom = w.add_channel("/odom", "json", *schema, {{"frame", "base_link"}});
  auto events = w.add_channel("/fieldproof/events", "json", 0);
  for (int i = 0; i < count; ++i) {
    const uint16_t ch = (i % 3 == 0) ? *events : *odom;
    const int64_t t = 1'000'000'000 + int64_t{i} * 10'000'000;
    Message m{ch, static_cast<uint32_t>(i), t, t + 1, "{\"i\":" + std::to_string(i) + "}"};
    if (i % per_chunk == 0) {
      if (w.buffered_bytes() > 0) static_cast<void>(w.close_chunk());
      s.chunk_starts.push_back(w.bytes_written());
    }
    static_cast<void>(w.write(m.channel_id, m.sequence, SimTime::from_ns(m.log_time_ns),
                              SimTime::from_ns(m.publish_time_ns), m.data));
    s.messages.push_back(std::move(m));
  }
  static_cast<void>(w.close_chunk());
  static_cast<void>(w.write_metadata("run", {{"run_id", "r1"}, {"seed", "7"}}));
  static_cast<void>(w.write_attachment(Attachment{5, 6, "scenario.yaml", "text/yaml", "a: 1\n"}));
  return s;
}

inline std::string write_sample_bytes(McapWriterOptions options, Sample* sample = nullptr,
                                      int count = 40, int per_chunk = 10) {
  std::ostringstream out;
  McapWriter w(std::move(options));
  if (!w.open(out).ok()) return {};
  Sample s = write_sample(w, count, per_chunk);
  if (!w.close().ok()) return {};
  if (sample != nullptr) *sample = std::move(s);
  return out.str();
}

inline uint64_t le64(const std::string& bytes, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{static_cast<uint8_t>(bytes[at + i])} << (8 * i);
  return v;
}

inline std::filesystem::path temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() /
             ("fieldproof_record_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// splitmix64: a tiny deterministic generator, the same on every platform.
class SplitMix {
 public:
  explicit SplitMix(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return n == 0 ? 0 : next() % n; }

 private:
  uint64_t s_;
};

// The output and exit code of a Node script of tests/js (the independent MCAP reader) run on a
// file.
struct NodeRun {
  int exit_code = -1;
  std::string out;  // stdout and stderr
};

inline NodeRun run_node_check(const std::string& js_dir, const std::string& script,
                              const std::filesystem::path& file) {
  NodeRun r;
  const std::string cmd = "node '" + js_dir + "/" + script + "' '" + file.string() + "' 2>&1";
  std::FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace fieldproof::record::testing
