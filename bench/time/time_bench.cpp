// Benchmarks of the time kernel, each beside a baseline measured in the same run:
//   scheduler: N periodic timers driven by SimClock::advance(), vs a bare std::priority_queue
//              pop+push loop over the same N timers (same periods, same event count);
//   bus:       publish + deliver_until of small messages, vs a plain std::vector push + callback
//              loop over the same messages.
// Ends with one line per figure: BENCH <name> <value> <unit> ratio=<value/baseline> baseline=<..>
// Each figure takes well under 2 s. Timed with steady_clock (bench/ is on the lint allow-list).
#include <algorithm>
#include <chrono>
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

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Runs fn (which returns the number of operations it did) `reps` times; the best rate wins (the
// least disturbed by the other processes on the machine).
template <typename F>
double best_rate(int reps, F&& fn) {
  double best = 0.0;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    const uint64_t ops = fn();
    const double s = seconds_since(t0);
    if (s > 0) best = std::max(best, static_cast<double>(ops) / s);
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

  const double rate = best_rate(reps, [&]() -> uint64_t {
    fp::SimClock clock;
    uint64_t count = 0;
    for (size_t i = 0; i < n; ++i) {
      clock.schedule_periodic(fp::nanoseconds(timers.period[i]), [&count] { ++count; },
                              fp::SimTime::from_ns(timers.phase[i]));
    }
    const auto step = fp::milliseconds(10);
    uint64_t ran = 0;
    // Setup above is timed too but is small beside the events (N <= 1e5 against 2e6 events).
    while (ran < events) ran += clock.advance(step);
    g_sink = g_sink + count;
    return ran;
  });

  const double baseline = best_rate(reps, [&]() -> uint64_t {
    std::priority_queue<PqEntry, std::vector<PqEntry>, PqLater> pq;
    uint64_t seq = 0;
    for (size_t i = 0; i < n; ++i) {
      pq.push(PqEntry{timers.phase[i], seq++, static_cast<uint32_t>(i)});
    }
    for (uint64_t k = 0; k < events; ++k) {
      const PqEntry e = pq.top();
      pq.pop();
      pq.push(PqEntry{e.at + timers.period[e.id], seq++, e.id});
    }
    g_sink = g_sink + pq.top().seq;
    return events;
  });

  const char* label = n == 10 ? "n10" : n == 1000 ? "n1000" : "n100000";
  std::printf("scheduler N=%zu: %.3g events/s, std::priority_queue pop+push %.3g/s\n", n, rate,
              baseline);
  std::printf("BENCH scheduler_events_per_s_%s %.0f events/s ratio=%.2f "
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

  const double rate = best_rate(reps, [&]() -> uint64_t {
    fp::Bus bus;
    uint64_t bytes = 0;
    std::vector<fp::Subscription> subs;
    for (const char* t : topics) {
      subs.push_back(bus.subscribe(t, [&bytes](const fp::BusMessage& m) {
        bytes += m.payload.size();
      }));
    }
    uint64_t delivered = 0;
    int64_t stamp = 0;
    for (uint64_t k = 0; k < kMessages; k += kBatch) {
      for (int i = 0; i < kBatch; ++i) {
        bus.publish(topics[i & 3], fp::SimTime::from_ns(stamp + i / 2), payload);
      }
      stamp += kBatch;
      delivered += bus.deliver_until(fp::SimTime::from_ns(stamp));
    }
    g_sink = g_sink + bytes;
    return delivered;
  });

  struct Plain {
    std::string_view topic;
    int64_t stamp;
    uint64_t seq;
    std::string payload;
  };
  const double baseline = best_rate(reps, [&]() -> uint64_t {
    uint64_t bytes = 0;
    std::function<void(const Plain&)> callback = [&bytes](const Plain& m) {
      bytes += m.payload.size();
    };
    std::vector<Plain> queue;
    queue.reserve(kBatch);
    uint64_t delivered = 0;
    uint64_t seq = 0;
    int64_t stamp = 0;
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
    g_sink = g_sink + bytes;
    return delivered;
  });

  std::printf("bus: %.3g deliveries/s, vector push + callback %.3g/s\n", rate, baseline);
  std::printf("BENCH bus_deliveries_per_s %.0f deliveries/s ratio=%.2f "
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
