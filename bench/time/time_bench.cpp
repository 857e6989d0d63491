// Benchmarks of the time kernel, each beside a baseline measured in the same run:
//   scheduler: N periodic timers driven by SimClock::advance(), vs a bare std::priority_queue
//              pop+push loop over the same N timers (same periods, same event count);
//   bus:       publish + deliver_until of small messages, vs a plain std::vector push + callback
//              loop over the same messages.
// Ends with one line per figure: BENCH <name> <value> <unit> ratio=<value/baseline> baseline=<..>
// Each figure takes well under 2 s. Timed with the thread's CPU clock (clock_gettime
// CLOCK_THREAD_CPUTIME_ID; bench/ is on the lint allow-list): on a quiet machine it equals wall
// time, on a busy one it leaves out the time the thread was not running.
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <queue>
#include <string>
#include <vector>

#include "fieldproof/time/bus.hpp"
#include "fieldproof/time/random_source.hpp"
#include "fieldproof/time/sim_clock.hpp"

namespace fp = fieldproof;

namespace {

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// What one timed run did: operations and the CPU seconds of its timed part (set-up excluded).
struct Timed {
  uint64_t ops = 0;
  double seconds = 0.0;
};

// A stopwatch over the thread's CPU time.
class Stopwatch {
 public:
  void start() { t0_ = cpu_seconds(); }
  Timed stop(uint64_t ops) const { return Timed{ops, cpu_seconds() - t0_}; }

 private:
  double t0_ = 0.0;
};

// Runs fn (which returns a Timed) `reps` times; the best rate wins (the least disturbed by the
// other processes on the machine).
template <typename F>
double best_rate(int reps, F&& fn) {
  double best = 0.0;
  for (int r = 0; r < reps; ++r) {
    const Timed t = fn();
    if (t.seconds > 0) best = std::max(best, static_cast<double>(t.ops) / t.seconds);
  }
  return best;
}

volatile uint64_t g_sink = 0;

// Periods between 1 and 8 ms, phases in [0, period): a reproducible mix.
struct TimerSet {
  std::vector<int64_t> period;
  std::vector<int64_t> phase;
  explicit TimerSet(size_t n) {
    fp::RandomSource rng(2024, "/bench/timers");
    for (size_t i = 0; i < n; ++i) {
      const int64_t p = rng.integers(1'000'000, 8'000'000);
      period.push_back(p);
      phase.push_back(rng.integers(0, p - 1));
    }
  }
};

struct PqEntry {
  int64_t at;
  uint64_t seq;
  uint32_t id;
};
struct PqLater {
  bool operator()(const PqEntry& a, const PqEntry& b) const {
    return a.at > b.at || (a.at == b.at && a.seq > b.seq);
  }
};

void bench_scheduler(size_t n, uint64_t events) {
  const TimerSet timers(n);
  const int reps = 3;

  const double rate = best_rate(reps, [&]() -> Timed {
    fp::SimClock clock;
    uint64_t count = 0;
    for (size_t i = 0; i < n; ++i) {
      clock.schedule_periodic(
          fp::nanoseconds(timers.period[i]), [&count] { ++count; },
          fp::SimTime::from_ns(timers.phase[i]));
    }
    const auto step = fp::milliseconds(10);
    uint64_t ran = 0;
    Stopwatch watch;
    watch.start();
    while (ran < events) ran += clock.advance(step);
    const Timed t = watch.stop(ran);
    g_sink = g_sink + count;
    return t;
  });

  const double baseline = best_rate(reps, [&]() -> Timed {
    std::priority_queue<PqEntry, std::vector<PqEntry>, PqLater> pq;
    uint64_t seq = 0;
    for (size_t i = 0; i < n; ++i) {
      pq.push(PqEntry{timers.phase[i], seq++, static_cast<uint32_t>(i)});
    }
    Stopwatch watch;
    watch.start();
    for (uint64_t k = 0; k < events; ++k) {
      const PqEntry e = pq.top();
      pq.pop();
      pq.push(PqEntry{e.at + timers.period[e.id], seq++, e.id});
    }
    const Timed t = watch.stop(events);
    g_sink = g_sink + pq.top().seq;
    return t;
  });

  const char* label = n == 10 ? "n10" : n == 1000 ? "n1000" : "n100000";
  std::printf("scheduler N=%zu: %.3g events/s, std::priority_queue pop+push %.3g/s\n", n, rate,
              baseline);
  std::printf(
      "BENCH scheduler_events_per_s_%s %.0f events/s ratio=%.2f "
      "baseline=std_priority_queue\n",
      label, rate, rate / baseline);
  std::fflush(stdout);
}

void bench_bus() {
  constexpr uint64_t kMessages = 1'000'000;
  constexpr int kBatch = 1000;  // publish a batch, then deliver it
  const char* topics[4] = {"/a", "/b", "/c", "/d"};
  const std::string payload = "12345678";  // small: fits the string's inline buffer
  const int reps = 3;

  const double rate = best_rate(reps, [&]() -> Timed {
    fp::Bus bus;
    uint64_t bytes = 0;
    std::vector<fp::Subscription> subs;
    for (const char* t : topics) {
      subs.push_back(
          bus.subscribe(t, [&bytes](const fp::BusMessage& m) { bytes += m.payload.size(); }));
    }
    uint64_t delivered = 0;
    int64_t stamp = 0;
    Stopwatch watch;
    watch.start();
    for (uint64_t k = 0; k < kMessages; k += kBatch) {
      for (int i = 0; i < kBatch; ++i) {
        bus.publish(topics[i & 3], fp::SimTime::from_ns(stamp + i / 2), payload);
      }
      stamp += kBatch;
      delivered += bus.deliver_until(fp::SimTime::from_ns(stamp));
    }
    const Timed t = watch.stop(delivered);
    g_sink = g_sink + bytes;
    return t;
  });

  struct Plain {
    std::string_view topic;
    int64_t stamp;
    uint64_t seq;
    std::string payload;
  };
  const double baseline = best_rate(reps, [&]() -> Timed {
    uint64_t bytes = 0;
    std::function<void(const Plain&)> callback = [&bytes](const Plain& m) {
      bytes += m.payload.size();
    };
    std::vector<Plain> queue;
    queue.reserve(kBatch);
    uint64_t delivered = 0;
    uint64_t seq = 0;
    int64_t stamp = 0;
    Stopwatch watch;
    watch.start();
    for (uint64_t k = 0; k < kMessages; k += kBatch) {
      for (int i = 0; i < kBatch; ++i) {
        queue.push_back(Plain{topics[i & 3], stamp + i / 2, seq++, payload});
      }
      stamp += kBatch;
      for (const Plain& m : queue) {
        callback(m);
        ++delivered;
      }
      queue.clear();
    }
    const Timed t = watch.stop(delivered);
    g_sink = g_sink + bytes;
    return t;
  });

  std::printf("bus: %.3g deliveries/s, vector push + callback %.3g/s\n", rate, baseline);
  std::printf(
      "BENCH bus_deliveries_per_s %.0f deliveries/s ratio=%.2f "
      "baseline=std_vector_push_callback\n",
      rate, rate / baseline);
  std::fflush(stdout);
}

}  // namespace

int main() {
  bench_scheduler(10, 2'000'000);
  bench_scheduler(1000, 2'000'000);
  bench_scheduler(100'000, 2'000'000);
  bench_bus();
  return 0;
}
