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
// Kept short (a fraction of a second per case): the lead measures final figures on a quiet machine.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <unistd.h>
#include <zstd.h>

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

// Payloads that compress like sensor data in text form: digits and separators, deterministic.
std::vector<std::string> make_payloads(const Workload& w) {
  std::vector<std::string> out;
  out.reserve(w.count);
  uint64_t s = 0x1234567u;
  for (size_t i = 0; i < w.count; ++i) {
    std::string p(w.message_size, ' ');
    for (size_t j = 0; j < p.size(); ++j) {
      s = s * 6364136223846793005ULL + 1442695040888963407ULL;
      const uint64_t r = s >> 59;  // 0..31
      p[j] = r < 10   ? static_cast<char>('0' + r)
             : r < 14 ? ','
             : r < 16 ? '.'
                      : "{}\":xyz-e "[r % 10];
    }
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

// Seconds per iteration of each benchmark, by its registered name.
class Collector : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.run_type == Run::RT_Iteration && r.iterations > 0 && !r.error_occurred) {
        seconds[r.run_name.function_name] =
            r.real_accumulated_time / static_cast<double>(r.iterations);
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  std::map<std::string, double> seconds;
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
  return 0;
}
