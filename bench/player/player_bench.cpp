// player_bench: the Player's costs against the floor under them.
//   BENCH play_lateness_p99 <v> us ratio=<v/base> baseline=bare_sleep_until_p99
//     1 000 msgs/s for ~2 s at rate 1.0: actual minus due steady time of each publication (p50
//     printed too), beside a loop that only waits (SystemSteadyTime) for the same due times.
//   BENCH play_unthrottled_msgs_per_s <v> msgs/s ratio=<v/base> baseline=mcap_reader_read_all
//     100 B messages played as fast as they go (rate 1e9; open + run) beside McapReader opening
//     the same file and reading every message (read_all).
// Short by design (a few seconds): the lead measures the figures on a quiet machine.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "fieldproof/record/mcap_reader.hpp"
#include "fieldproof/record/mcap_writer.hpp"
#include "fieldproof/record/player.hpp"
#include "fieldproof/util/mutex.hpp"

namespace fr = fieldproof::record;
using fieldproof::Duration;
using fieldproof::SimTime;
using fieldproof::SystemSteadyTime;

namespace {

void write_file(const std::string& path, int count, int64_t spacing_ns, size_t size) {
  fr::McapWriterOptions o;
  o.compression = fr::Compression::kNone;
  fr::McapWriter w(o);
  if (!w.open(path).ok()) {
    std::fprintf(stderr, "player_bench: cannot write %s\n", path.c_str());
    std::exit(1);
  }
  const auto ch = w.add_channel("/bench", "raw", 0);
  const std::string payload(size, 'x');
  for (int i = 0; i < count; ++i) {
    const SimTime t = SimTime::from_ns(1'000'000'000 + i * spacing_ns);
    (void)w.write(*ch, static_cast<uint32_t>(i), t, t, payload);
  }
  (void)w.close();
}

double percentile(std::vector<int64_t> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())));
  return static_cast<double>(v[i]);
}

void bench_line(const char* name, double value, const char* unit, double base, const char* b) {
  std::printf("BENCH %s %.6g %s ratio=%.4f baseline=%s\n", name, value, unit,
              base > 0 ? value / base : 0.0, b);
}

}  // namespace

int main() {
  SystemSteadyTime& steady = SystemSteadyTime::instance();
  const auto dir = std::filesystem::temp_directory_path() / "fieldproof_player_bench";
  std::filesystem::create_directories(dir);

  // ---- Lateness at rate 1.0: 2 000 messages 1 ms apart.
  constexpr int kPaced = 2'000;
  constexpr int64_t kSpacing = 1'000'000;
  const std::string paced = (dir / "paced.mcap").string();
  write_file(paced, kPaced, kSpacing, 100);
  std::vector<int64_t> late;
  late.reserve(kPaced);
  {
    fr::PlayerOptions po;
    po.start_paused = true;
    auto opened = fr::Player::open(paced, po);
    if (!opened.ok()) return 1;
    auto player = std::move(opened).value();
    const SimTime first = SimTime::from_ns(1'000'000'000);
    // The clock's anchor is taken at resume, just after t0.
    const SimTime t0 = steady.now();
    (void)player->resume();
    player->run([&](const fr::PlayedMessage& m) {
      const SimTime due = t0 + (SimTime::from_ns(m.log_time_ns) - first);
      late.push_back((steady.now() - due).ns());
    });
  }
  std::vector<int64_t> bare;
  bare.reserve(kPaced);
  {
    fieldproof::Mutex mutex;
    fieldproof::CondVar cv;
    fieldproof::MutexLock lock(mutex);
    const SimTime t0 = steady.now();
    for (int i = 0; i < kPaced; ++i) {
      const SimTime due = t0 + Duration::from_ns(i * kSpacing);
      while (steady.now() < due) steady.wait_until(mutex, cv, due);
      bare.push_back((steady.now() - due).ns());
    }
  }
  std::printf("# play_lateness_p50 %.3f us (bare sleep_until p50 %.3f us)\n",
              percentile(late, 0.5) / 1e3, percentile(bare, 0.5) / 1e3);
  bench_line("play_lateness_p99", percentile(late, 0.99) / 1e3, "us", percentile(bare, 0.99) / 1e3,
             "bare_sleep_until_p99");

  // ---- Unthrottled throughput: 200 000 messages of 100 B.
  constexpr int kFast = 200'000;
  const std::string fast = (dir / "fast.mcap").string();
  write_file(fast, kFast, 1'000, 100);
  SimTime a = steady.now();
  uint64_t played = 0;
  {
    fr::PlayerOptions po;
    po.rate = 1e9;
    auto opened = fr::Player::open(fast, po);
    if (!opened.ok()) return 1;
    played = (*opened)->run([](const fr::PlayedMessage&) {});
  }
  const double player_s = static_cast<double>((steady.now() - a).ns()) / 1e9;
  a = steady.now();
  size_t read = 0;
  {
    fr::McapReader reader;
    if (!reader.open(fast).ok()) return 1;
    auto all = reader.read_all();
    if (!all.ok()) return 1;
    read = all->size();
  }
  const double reader_s = static_cast<double>((steady.now() - a).ns()) / 1e9;
  if (played != kFast || read != static_cast<size_t>(kFast)) {
    std::fprintf(stderr, "player_bench: played %llu, read %zu of %d\n",
                 static_cast<unsigned long long>(played), read, kFast);
    return 1;
  }
  bench_line("play_unthrottled_msgs_per_s", kFast / player_s, "msgs/s", kFast / reader_s,
             "mcap_reader_read_all");
  std::filesystem::remove_all(dir);
  return 0;
}
