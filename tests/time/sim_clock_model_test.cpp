// Differential test: SimClock against an independent reference model (a std::set ordered by
// (time, sequence)) under random schedules, cancellations and timers added from callbacks, at
// heap sizes that exercise every comparison path of the timer heap (tiny, mid-size, large).
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "fieldproof/time/random_source.hpp"
#include "fieldproof/time/sim_clock.hpp"

namespace fieldproof {
namespace {

constexpr int64_t kMs = 1'000'000;

// What a callback does, decided from (now, timer) only, so both implementations decide alike.
struct Action {
  int kind;  // 0: nothing, 1: cancel timer `target`, 2: schedule a one-shot `delay` from now
  uint64_t target;
  int64_t delay;
};
Action decide(int64_t now, uint64_t id, uint64_t timers) {
  const uint64_t h = splitmix64_mix(static_cast<uint64_t>(now) * 31 + id);
  const int kind = static_cast<int>(h % 10);
  if (kind == 0) return Action{1, (h >> 8) % timers, 0};
  if (kind == 1) return Action{2, 0, static_cast<int64_t>((h >> 8) % 4) * kMs};  // ties likely
  return Action{0, 0, 0};
}

using Log = std::vector<std::pair<int64_t, uint64_t>>;  // (time, timer index) per callback

struct Setup {
  std::vector<int64_t> period;  // 0 = one-shot
  std::vector<int64_t> at;
};

Setup make_setup(size_t n, uint64_t seed) {
  RandomSource rng(seed, "/model");
  const int64_t periods[] = {2 * kMs, 3 * kMs, 4 * kMs, 6 * kMs, 8 * kMs, 12 * kMs};
  Setup s;
  for (size_t i = 0; i < n; ++i) {
    const bool periodic = rng.integers(0, 3) != 0;
    s.period.push_back(periodic ? periods[rng.integers(0, 5)] : 0);
    s.at.push_back(rng.integers(0, 5) * kMs);
  }
  return s;
}

Log run_clock(const Setup& setup, int64_t horizon) {
  SimClock clock;
  Log log;
  std::vector<TimerHandle> handles(setup.period.size());
  std::function<void(uint64_t)> fire = [&](uint64_t index) {
    log.emplace_back(clock.now_ns(), index);
    const Action a = decide(clock.now_ns(), index, handles.size());
    if (a.kind == 1) handles[a.target].cancel();
    if (a.kind == 2) {
      const uint64_t k = handles.size();
      handles.emplace_back();
      handles[k] =
          clock.schedule(clock.now() + Duration::from_ns(a.delay), [&fire, k] { fire(k); });
    }
  };
  for (size_t i = 0; i < setup.period.size(); ++i) {
    if (setup.period[i] > 0) {
      handles[i] = clock.schedule_periodic(
          Duration::from_ns(setup.period[i]), [&fire, i] { fire(i); },
          SimTime::from_ns(setup.at[i]));
    } else {
      handles[i] = clock.schedule(SimTime::from_ns(setup.at[i]), [&fire, i] { fire(i); });
    }
  }
  for (int64_t t = 0; t < horizon; t += kMs) clock.advance(milliseconds(1));
  return log;
}

Log run_model(const Setup& setup, int64_t horizon) {
  using Key = std::tuple<int64_t, uint64_t, uint64_t>;  // time, sequence, timer index
  std::set<Key> queue;
  std::map<uint64_t, Key> pending;  // timer index -> its key in the queue
  std::vector<int64_t> period = setup.period;
  uint64_t seq = 0;
  auto insert = [&](uint64_t index, int64_t at) {
    const Key k{at, seq++, index};
    queue.insert(k);
    pending[index] = k;
  };
  for (size_t i = 0; i < setup.period.size(); ++i) insert(i, setup.at[i]);
  Log log;
  while (!queue.empty()) {
    const Key k = *queue.begin();
    const auto [at, s, index] = k;
    if (at > horizon) break;
    queue.erase(queue.begin());
    pending.erase(index);
    if (period[index] > 0) insert(index, at + period[index]);  // re-inserted before running
    log.emplace_back(at, index);
    const Action a = decide(at, index, period.size());
    if (a.kind == 1) {
      auto it = pending.find(a.target);
      if (it != pending.end()) {
        queue.erase(it->second);
        pending.erase(it);
      }
    }
    if (a.kind == 2) {
      period.push_back(0);
      insert(period.size() - 1, at + a.delay);
    }
  }
  return log;
}

void expect_same(size_t n, uint64_t seed, int64_t horizon) {
  const Setup setup = make_setup(n, seed);
  const Log expected = run_model(setup, horizon);
  const Log got = run_clock(setup, horizon);
  ASSERT_GT(expected.size(), n / 2);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i], expected[i]) << "callback " << i << " of " << got.size();
  }
}

TEST(SimClockModel, SmallHeapMatchesReferenceModel) { expect_same(20, 1, 200 * kMs); }
TEST(SimClockModel, MidSizeHeapMatchesReferenceModel) { expect_same(1000, 2, 60 * kMs); }
TEST(SimClockModel, LargeHeapMatchesReferenceModel) { expect_same(20'000, 3, 12 * kMs); }

}  // namespace
}  // namespace fieldproof
