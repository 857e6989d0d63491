// MCAP write and indexed-read throughput for 100 B ("small"), 1 KiB, 10 KiB ("medium") and
// 100 KiB messages with none / lz4 / zstd chunks, beside a baseline measured in the same run: the
// same payload bytes written with plain fwrite (one call per message) to the same kind of file, and
// read back with plain fread. Google Benchmark does the timing; the end of the output is one line
// per figure:
//
//   BENCH mcap_write_small_zstd_msgs_per_s <v> msgs/s ratio=<v/base> baseline=fwrite_same_bytes
//
// For zstd, a second figure compares with the ideal compressed recording: the same bytes batched
// into 1 MiB blocks, ZSTD_compress'ed at the same level and fwritten (baseline=
// zstd_compress_fwrite_same_bytes).
//
// The recorder's cost: the Recorder (zstd, side of the lock-step tap) fed a mixed bus stream of
// odometry and ground-truth Pose_V (which it also turns into foxglove.PoseInFrame), in ns per
// message, beside McapWriter writing the same payloads on the same topics directly:
//
//   BENCH recorder_ns_per_msg <v> ns/msg ratio=<v/base> baseline=mcap_writer_same_messages
//
// The recording's cost in a real run: the lock-step UGV example (a stack process, 0.1 s steps),
// unpaced, with outputs.record true and false, run alternately; the median wall time of each:
//
//   BENCH run_wall_s_with_recording <v> s ratio=<with/without> baseline=same_run_without_recording
//   BENCH run_cpu_s_with_recording <v> s ratio=<with/without> baseline=same_run_without_recording
//
// (CPU: user + system of the engine and its stack process; steadier than wall time on a loaded
// machine.)
//
// Kept short (a fraction of a second per case): the lead measures final figures on a quiet machine.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>
#include <zstd.h>

#include "fieldproof/engine/run.hpp"
#include "fieldproof/msgs/ign.hpp"
#include "fieldproof/record/mcap_reader.hpp"
#include "fieldproof/record/mcap_writer.hpp"
#include "fieldproof/record/recorder.hpp"

namespace {

using fieldproof::SimTime;
using namespace fieldproof::record;
namespace fs = std::filesystem;

struct Workload {
  std::string label;  // "small", "medium"
  size_t message_size;
  size_t count;  // messages per iteration
};

const Workload kWorkloads[] = {{"small", 100, 100'000},
                               {"1kib", 1024, 10'000},
                               {"medium", 10 * 1024, 1'600},
                               {"100kib", 100 * 1024, 160}};
const std::pair<const char*, Compression> kCompressions[] = {
    {"none", Compression::kNone}, {"lz4", Compression::kLz4}, {"zstd", Compression::kZstd}};

// Payloads shaped like sensor data in text form: a JSON object of named fields whose digits are
// random (keys and separators repeat, numbers do not), deterministic. Not random characters: on
// those zstd finds no matches and skips ahead ever faster, which made the raw ZSTD_compress
// baseline about 2x faster than on any real payload, while the MCAP records' framing (a match
// every message) stopped the skipping: the comparison measured zstd's incompressible-data
// shortcut, not the writer.
std::vector<std::string> make_payloads(const Workload& w) {
  static const char* const kKeys[] = {
      "\"x\":", "\"y\":", "\"z\":", "\"vx\":", "\"vy\":", "\"yaw\":", "\"t\":", "\"cov\":"};
  std::vector<std::string> out;
  out.reserve(w.count);
  uint64_t s = 0x1234567u;
  for (size_t i = 0; i < w.count; ++i) {
    std::string p = "{";
    for (size_t k = 0; p.size() < w.message_size; ++k) {
      p += kKeys[k % 8];
      for (int d = 0; d < 9; ++d) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        p += static_cast<char>('0' + (s >> 33) % 10);
        if (d == 2) p += '.';
      }
      p += ',';
    }
    p.resize(w.message_size - 1);
    p += '}';
    out.push_back(std::move(p));
  }
  return out;
}

fs::path bench_file(const std::string& name) {
  return fs::temp_directory_path() /
         ("fieldproof_record_bench_" + std::to_string(::getpid()) + "_" + name);
}

void write_mcap(benchmark::State& state, const Workload& w, Compression c) {
  const auto payloads = make_payloads(w);
  const fs::path path = bench_file("w.mcap");
  for (auto _ : state) {
    McapWriterOptions opt;
    opt.compression = c;
    McapWriter writer(opt);
    if (!writer.open(path.string()).ok()) state.SkipWithError("open failed");
    auto ch = writer.add_channel("/bench", "raw", 0);
    for (size_t i = 0; i < payloads.size(); ++i) {
      const SimTime t = SimTime::from_ns(static_cast<int64_t>(i) * 1'000'000);
      if (!writer.write(*ch, static_cast<uint32_t>(i), t, t, payloads[i]).ok()) {
        state.SkipWithError("write failed");
      }
    }
    if (!writer.close().ok()) state.SkipWithError("close failed");
  }
  fs::remove(path);
}

void write_fwrite(benchmark::State& state, const Workload& w) {
  const auto payloads = make_payloads(w);
  const fs::path path = bench_file("w.raw");
  for (auto _ : state) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) state.SkipWithError("fopen failed");
    for (const auto& p : payloads) std::fwrite(p.data(), 1, p.size(), f);
    std::fclose(f);
  }
  fs::remove(path);
}

void write_zstd_raw(benchmark::State& state, const Workload& w) {
  const auto payloads = make_payloads(w);
  const fs::path path = bench_file("w.zst");
  const McapWriterOptions defaults;
  ZSTD_CCtx* ctx = ZSTD_createCCtx();
  std::vector<uint8_t> block;
  std::vector<uint8_t> out(ZSTD_compressBound(defaults.chunk_size + w.message_size));
  for (auto _ : state) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) state.SkipWithError("fopen failed");
    auto flush_block = [&] {
      const size_t n = ZSTD_compressCCtx(ctx, out.data(), out.size(), block.data(), block.size(),
                                         defaults.compression_level);
      if (ZSTD_isError(n)) state.SkipWithError("zstd failed");
      std::fwrite(out.data(), 1, n, f);
      block.clear();
    };
    for (const auto& p : payloads) {
      block.insert(block.end(), p.begin(), p.end());
      if (block.size() >= defaults.chunk_size) flush_block();
    }
    if (!block.empty()) flush_block();
    std::fclose(f);
  }
  ZSTD_freeCCtx(ctx);
  fs::remove(path);
}

void read_mcap(benchmark::State& state, const Workload& w, Compression c) {
  const auto payloads = make_payloads(w);
  const fs::path path =
      bench_file(std::string("r_") + w.label + "_" + std::string(compression_name(c)) + ".mcap");
  {
    McapWriterOptions opt;
    opt.compression = c;
    McapWriter writer(opt);
    if (!writer.open(path.string()).ok()) state.SkipWithError("open failed");
    auto ch = writer.add_channel("/bench", "raw", 0);
    for (size_t i = 0; i < payloads.size(); ++i) {
      const SimTime t = SimTime::from_ns(static_cast<int64_t>(i) * 1'000'000);
      static_cast<void>(writer.write(*ch, static_cast<uint32_t>(i), t, t, payloads[i]));
    }
    static_cast<void>(writer.close());
  }
  for (auto _ : state) {
    McapReader reader;
    if (!reader.open(path.string()).ok()) state.SkipWithError("open failed");
    size_t n = 0;
    uint64_t sum = 0;
    static_cast<void>(reader.read_messages({}, [&](const MessageView& m) {
      ++n;
      sum += m.data.size();
      return true;
    }));
    if (n != payloads.size()) state.SkipWithError("wrong message count");
    benchmark::DoNotOptimize(sum);
  }
  fs::remove(path);
}

void read_fread(benchmark::State& state, const Workload& w) {
  const auto payloads = make_payloads(w);
  const fs::path path = bench_file("r.raw");
  {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    for (const auto& p : payloads) std::fwrite(p.data(), 1, p.size(), f);
    std::fclose(f);
  }
  std::string buf(w.message_size, '\0');
  for (auto _ : state) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) state.SkipWithError("fopen failed");
    uint64_t sum = 0;
    for (size_t i = 0; i < payloads.size(); ++i) sum += std::fread(buf.data(), 1, buf.size(), f);
    std::fclose(f);
    benchmark::DoNotOptimize(sum);
  }
  fs::remove(path);
}

// A run's bus stream in miniature: odometry at 50 Hz and ground truth (two vehicles and three
// static models) at 10 Hz, i.e. one Pose_V per five odometry messages.
std::vector<fieldproof::lockstep::Publish> make_stream(size_t count) {
  namespace msgs = fieldproof::msgs;
  std::vector<fieldproof::lockstep::Publish> out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    fieldproof::lockstep::Publish p;
    p.participant = "world";
    p.stamp = SimTime::from_ns(static_cast<int64_t>(i) * 20'000'000);
    p.seq = i;
    const double x = 0.01 * static_cast<double>(i);
    if (i % 6 == 5) {
      ignition::msgs::Pose_V m;
      msgs::set_stamp(m.mutable_header(), p.stamp);
      for (const char* name : {"ugv1", "ugv2", "crate", "wall_a", "wall_b"}) {
        auto* pose = m.add_pose();
        pose->set_name(name);
        msgs::set_planar_pose(pose, x, 1.0, 0.1);
      }
      p.topic = "/world/depot/pose/info";
      p.type = std::string(msgs::kPoseV);
      p.payload = msgs::serialize(m);
    } else {
      ignition::msgs::Odometry m;
      msgs::set_stamp(m.mutable_header(), p.stamp, "odom");
      msgs::set_planar_pose(m.mutable_pose(), x, 0.5, 0.2);
      m.mutable_twist()->mutable_linear()->set_x(0.5);
      p.topic = "/model/ugv1/odometry";
      p.type = std::string(msgs::kOdometry);
      p.payload = msgs::serialize(m);
    }
    out.push_back(std::move(p));
  }
  return out;
}

constexpr size_t kStreamCount = 60'000;

void record_stream(benchmark::State& state) {
  const auto stream = make_stream(kStreamCount);
  const fs::path path = bench_file("rec.mcap");
  for (auto _ : state) {
    RecorderOptions opt;
    opt.vehicles = {"ugv1", "ugv2"};
    opt.wall_now = fieldproof::SystemClock::wall_now();
    Recorder rec(opt);
    if (!rec.open(path).ok()) state.SkipWithError("open failed");
    for (const auto& p : stream) {
      if (!rec.on_message(p).ok()) state.SkipWithError("record failed");
    }
    if (!rec.close("passed").ok()) state.SkipWithError("close failed");
  }
  fs::remove(path);
}

void write_stream_mcap(benchmark::State& state) {
  const auto stream = make_stream(kStreamCount);
  const fs::path path = bench_file("rec_base.mcap");
  for (auto _ : state) {
    McapWriter writer;
    if (!writer.open(path.string()).ok()) state.SkipWithError("open failed");
    std::map<std::string, uint16_t> channels;
    for (const auto& p : stream) {
      auto it = channels.find(p.topic);
      if (it == channels.end()) {
        it = channels.emplace(p.topic, *writer.add_channel(p.topic, "protobuf", 0)).first;
      }
      if (!writer.write(it->second, static_cast<uint32_t>(p.seq), p.stamp, p.stamp, p.payload)
               .ok()) {
        state.SkipWithError("write failed");
      }
    }
    if (!writer.close().ok()) state.SkipWithError("close failed");
  }
  fs::remove(path);
}

// The lock-step example with outputs.record set to `record`, its world path made absolute, in
// `dir`; returns the scenario file.
fs::path lockstep_scenario(const fs::path& dir, bool record) {
  const fs::path src = fs::path(FIELDPROOF_SOURCE_DIR) / "examples/scenarios/ugv_lockstep.yaml";
  std::ifstream in(src);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  const std::string world = "world: ../worlds/depot.sdf";
  const auto w = text.find(world);
  if (w != std::string::npos) {
    text.replace(
        w, world.size(),
        "world: " + (fs::path(FIELDPROOF_SOURCE_DIR) / "examples/worlds/depot.sdf").string());
  }
  const auto r = text.find("record: true");
  if (r != std::string::npos && !record) text.replace(r, 12, "record: false");
  const fs::path out = dir / (record ? "with.yaml" : "without.yaml");
  std::ofstream(out) << text;
  return out;
}

// CPU seconds (user + system) of this process and its waited-for children (the stack process).
double cpu_seconds() {
  double total = 0;
  for (int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    rusage u{};
    ::getrusage(who, &u);
    total += static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
             static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
  }
  return total;
}

struct RunCost {
  double wall_s = -1;  // -1 when the run did not pass
  double cpu_s = -1;
};

RunCost timed_run(const fs::path& scenario, const fs::path& runs, const std::string& id) {
  fieldproof::engine::RunOptions o;
  o.scenario_file = scenario;
  o.runs_dir = runs;
  o.run_id = id;
  o.max_rtf = 0.0;
  o.tool_dir = FIELDPROOF_BIN_DIR;
  const fieldproof::WallNow wall = fieldproof::SystemClock::wall_now();
  const double cpu0 = cpu_seconds();
  const SimTime t0 = wall();
  const auto r = fieldproof::engine::run_scenario(o);
  RunCost c;
  if (r.exit_code != 0) return c;
  c.wall_s = static_cast<double>((wall() - t0).ns()) * 1e-9;
  c.cpu_s = cpu_seconds() - cpu0;
  return c;
}

struct RecordingCost {
  RunCost with, without;  // medians
  uint64_t recording_bytes = 0;
};

// Alternating runs so load changes hit both sides alike; medians.
RecordingCost measure_recording_cost(int pairs) {
  const fs::path dir = bench_file("runs");
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path with = lockstep_scenario(dir, true);
  const fs::path without = lockstep_scenario(dir, false);
  std::vector<RunCost> a, b;
  RecordingCost c;
  for (int i = 0; i < pairs; ++i) {
    const std::string n = std::to_string(i);
    a.push_back(timed_run(with, dir / "runs", "with-" + n));
    b.push_back(timed_run(without, dir / "runs", "without-" + n));
    std::error_code ec;
    c.recording_bytes =
        fs::file_size(dir / "runs" / ("with-" + n) / "recording/recording.mcap", ec);
  }
  fs::remove_all(dir);
  const auto median = [](const std::vector<RunCost>& v, double RunCost::*field) {
    std::vector<double> x;
    for (const auto& r : v) x.push_back(r.*field);
    if (std::any_of(x.begin(), x.end(), [](double y) { return y < 0; })) return -1.0;
    std::sort(x.begin(), x.end());
    return x[x.size() / 2];
  };
  c.with = {median(a, &RunCost::wall_s), median(a, &RunCost::cpu_s)};
  c.without = {median(b, &RunCost::wall_s), median(b, &RunCost::cpu_s)};
  return c;
}

// Seconds per iteration of each benchmark, by its registered name.
class Collector : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.run_type == Run::RT_Iteration && r.iterations > 0 && !r.error_occurred) {
        seconds[r.run_name.function_name] =
            r.real_accumulated_time / static_cast<double>(r.iterations);
        cpu_seconds[r.run_name.function_name] =
            r.cpu_accumulated_time / static_cast<double>(r.iterations);
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  std::map<std::string, double> seconds;
  std::map<std::string, double> cpu_seconds;  // user + system: steadier on a loaded machine
};

void print_figure(const std::string& name, double value, const char* unit, double base,
                  const char* baseline) {
  std::printf("BENCH %s %.6g %s ratio=%.4f baseline=%s\n", name.c_str(), value, unit,
              base > 0 ? value / base : 0.0, baseline);
}

}  // namespace

int main(int argc, char** argv) {
  for (const Workload& w : kWorkloads) {
    benchmark::RegisterBenchmark(("write/" + w.label + "/fwrite").c_str(), write_fwrite, w)
        ->Iterations(w.label == "small" ? 5 : 10)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("write/" + w.label + "/zstd_raw").c_str(), write_zstd_raw, w)
        ->Iterations(3)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("read/" + w.label + "/fread").c_str(), read_fread, w)
        ->Iterations(w.label == "small" ? 5 : 10)
        ->Unit(benchmark::kMillisecond);
    for (const auto& [cname, c] : kCompressions) {
      benchmark::RegisterBenchmark(("write/" + w.label + "/" + cname).c_str(), write_mcap, w, c)
          ->Iterations(3)
          ->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("read/" + w.label + "/" + cname).c_str(), read_mcap, w, c)
          ->Iterations(3)
          ->Unit(benchmark::kMillisecond);
    }
  }
  benchmark::RegisterBenchmark("recorder/stream", record_stream)
      ->Iterations(3)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("recorder/mcap_writer", write_stream_mcap)
      ->Iterations(3)
      ->Unit(benchmark::kMillisecond);
  benchmark::Initialize(&argc, argv);
  Collector collector;
  benchmark::RunSpecifiedBenchmarks(&collector);
  benchmark::Shutdown();

  std::printf("\n");
  for (const Workload& w : kWorkloads) {
    const double mb = static_cast<double>(w.count * w.message_size) / 1e6;
    const double n = static_cast<double>(w.count);
    for (const char* op : {"write", "read"}) {
      const bool write = std::string(op) == "write";
      const std::string base_name =
          std::string(op) + "/" + w.label + (write ? "/fwrite" : "/fread");
      const char* baseline = write ? "fwrite_same_bytes" : "fread_same_bytes";
      if (!collector.seconds.contains(base_name)) continue;
      const double base_s = collector.seconds[base_name];
      for (const auto& [cname, c] : kCompressions) {
        const std::string key = std::string(op) + "/" + w.label + "/" + cname;
        if (!collector.seconds.contains(key)) continue;
        const double s = collector.seconds[key];
        const std::string prefix = "mcap_" + std::string(op) + "_" + w.label + "_" + cname;
        print_figure(prefix + "_msgs_per_s", n / s, "msgs/s", n / base_s, baseline);
        print_figure(prefix + "_mb_per_s", mb / s, "MB/s", mb / base_s, baseline);
        const std::string raw = "write/" + w.label + "/zstd_raw";
        if (write && c == Compression::kZstd && collector.seconds.contains(raw)) {
          print_figure(prefix + "_vs_raw_zstd_mb_per_s", mb / s, "MB/s",
                       mb / collector.seconds[raw], "zstd_compress_fwrite_same_bytes");
          std::printf("  (CPU time: %.4f of raw ZSTD_compress, %.4f of fwrite)\n",
                      collector.cpu_seconds[raw] / collector.cpu_seconds[key],
                      collector.cpu_seconds[base_name] / collector.cpu_seconds[key]);
        } else if (write && c == Compression::kNone) {
          std::printf("  (CPU time: %.4f of fwrite)\n",
                      collector.cpu_seconds[base_name] / collector.cpu_seconds[key]);
        }
      }
    }
  }
  if (collector.seconds.contains("recorder/stream") &&
      collector.seconds.contains("recorder/mcap_writer")) {
    const double n = static_cast<double>(kStreamCount);
    print_figure("recorder_ns_per_msg", collector.seconds["recorder/stream"] * 1e9 / n, "ns/msg",
                 collector.seconds["recorder/mcap_writer"] * 1e9 / n, "mcap_writer_same_messages");
  }
  // --recording-cost-pairs=N (default 3; 0 skips the runs).
  int pairs = 3;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--recording-cost-pairs=", 0) == 0) pairs = std::stoi(a.substr(23));
  }
  if (pairs > 0) {
    const RecordingCost c = measure_recording_cost(pairs);
    if (c.with.wall_s < 0 || c.without.wall_s < 0) {
      std::printf("recording cost: a run of ugv_lockstep did not pass; no figure\n");
    } else {
      std::printf(
          "recording cost: ugv_lockstep unpaced, median of %d runs each: %.3f s wall, "
          "%.3f s CPU with recording (%llu bytes); %.3f s wall, %.3f s CPU without\n",
          pairs, c.with.wall_s, c.with.cpu_s, static_cast<unsigned long long>(c.recording_bytes),
          c.without.wall_s, c.without.cpu_s);
      print_figure("run_wall_s_with_recording", c.with.wall_s, "s", c.without.wall_s,
                   "same_run_without_recording");
      print_figure("run_cpu_s_with_recording", c.with.cpu_s, "s", c.without.cpu_s,
                   "same_run_without_recording");
    }
  }
  return 0;
}
