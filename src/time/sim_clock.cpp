#include "fieldproof/time/sim_clock.hpp"

#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "fieldproof/time/bus.hpp"
#include "time/dary_heap.hpp"

namespace fieldproof {
namespace detail {

// The slot table, shared between a SimClock and its handles. Slots live in fixed-size chunks so a
// callback keeps its address while other callbacks are added (it may be running at the time).
struct SimClockCore {
  // Touched on every firing: kept small (48 bytes) so a firing reads one cache line of it.
  struct Slot {
    SimClock::Callback callback;
    int64_t period_ns = 0;    // 0: one-shot
    uint32_t generation = 0;  // bumped when the timer is cancelled or a one-shot fires
    bool live = false;
  };
  // Touched when scheduling and on a failure only.
  struct Info {
    uint64_t id = 0;
    std::string label;
  };
  static constexpr uint32_t kChunkBits = 8;
  static constexpr uint32_t kChunkSize = 1u << kChunkBits;
  static constexpr uint32_t kNone = 0xffffffffu;

  std::vector<std::unique_ptr<Slot[]>> chunks;
  std::vector<Info> info;  // by slot; may move while a callback runs (nothing refers into it)
  uint32_t slot_count = 0;
  std::vector<uint32_t> free_slots;  // capacity kept >= slot_count: push_back never allocates
  bool alive = true;
  uint32_t running = kNone;  // the periodic slot whose callback is running
  size_t stale = 0;          // heap entries of cancelled timers not yet removed
  size_t live = 0;
  uint64_t next_id = 1;

  Slot& at(uint32_t i) { return chunks[i >> kChunkBits][i & (kChunkSize - 1)]; }

  uint32_t allocate() {
    if (!free_slots.empty()) {
      const uint32_t i = free_slots.back();
      free_slots.pop_back();
      return i;
    }
    if ((slot_count & (kChunkSize - 1)) == 0) {
      chunks.push_back(std::make_unique<Slot[]>(kChunkSize));
      free_slots.reserve(static_cast<size_t>(chunks.size()) * kChunkSize);
      info.resize(static_cast<size_t>(chunks.size()) * kChunkSize);
    }
    return slot_count++;
  }

  void release(uint32_t i) noexcept {
    at(i).callback = nullptr;
    info[i].label.clear();    // clear() keeps the buffer: never throws, never allocates
    free_slots.push_back(i);  // never allocates (capacity reserved)
  }

  void cancel(uint32_t i, uint32_t generation) noexcept {
    if (!alive || i >= slot_count) return;
    Slot& s = at(i);
    if (!s.live || s.generation != generation) return;
    s.live = false;
    ++s.generation;
    --live;
    ++stale;                       // its entry stays in the heap until it reaches the top
    if (running != i) release(i);  // else released when its callback returns
  }
};

}  // namespace detail

namespace {

using Core = detail::SimClockCore;
__extension__ typedef __int128 i128;

std::string json_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size() + 2);
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          static const char* kHex = "0123456789abcdef";
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out;
}

// The timer heap compares (at_ns, sequence). As one 128-bit key the comparison is branch-free,
// which wins when the outcome is unpredictable and the heap sits in cache (measured: ~1.4x at
// 1 000 timers); for tiny heaps (predictable) and large ones (memory-bound, where speculation
// fetches ahead) the two-field comparison with branches is faster. Both give the same order.
constexpr size_t kBranchlessMin = 64;
constexpr size_t kBranchlessMax = 8192;

__extension__ typedef unsigned __int128 u128;
struct EntryKeyLess {
  template <typename E>
  static u128 key(const E& e) {
    return (static_cast<u128>(static_cast<uint64_t>(e.at_ns) ^ 0x8000000000000000ULL) << 64) |
           e.sequence;
  }
  template <typename E>
  bool operator()(const E& a, const E& b) const {
    return key(a) < key(b);
  }
};

std::string t_text(int64_t ns) { return format_seconds(SimTime::from_ns(ns)) + " s"; }

}  // namespace

// ---- TimerHandle ----

void TimerHandle::cancel() noexcept {
  if (core_) core_->cancel(slot_, generation_);
}

bool TimerHandle::active() const noexcept {
  if (!core_ || !core_->alive || slot_ >= core_->slot_count) return false;
  const Core::Slot& s = core_->at(slot_);
  return s.live && s.generation == generation_;
}

// ---- SimClock ----

SimClock::SimClock(SimClockOptions options)
    : now_ns_(options.start.ns()),
      step_(options.step),
      core_(std::make_shared<Core>()),
      bus_(options.bus),
      drive_bus_(options.drive_bus && options.bus != nullptr),
      random_(options.seed) {
  if (step_.ns() <= 0) {
    throw TimeError("SimClock: step " + format_seconds(step_) + " s must be > 0");
  }
}

SimClock::~SimClock() {
  core_->alive = false;
  core_->chunks.clear();  // callbacks (and what they captured) go now, even if handles remain
  core_->slot_count = 0;
}

TimerHandle SimClock::add(int64_t at_ns, int64_t period_ns, Callback callback, std::string label) {
  Core& core = *core_;
  if (core.stale > 1024 && core.stale * 2 > heap_.size()) {
    // Mostly cancelled entries: drop them all at once rather than one by one at the top.
    std::erase_if(heap_,
                  [&](const Entry& e) { return core.at(e.slot).generation != e.generation; });
    detail::heap_rebuild(heap_, EntryLess{});
    core.stale = 0;
  }
  const uint32_t i = core.allocate();
  Core::Slot& s = core.at(i);
  s.callback = std::move(callback);
  s.period_ns = period_ns;
  s.live = true;
  Core::Info& info = core.info[i];
  info.id = core.next_id++;
  info.label = std::move(label);
  ++core.live;
  detail::heap_push(heap_, Entry{at_ns, next_sequence_++, i, s.generation}, EntryLess{});
  return TimerHandle(core_, i, s.generation, info.id);
}

TimerHandle SimClock::schedule(SimTime at, Callback callback, std::string label) {
  if (!callback) throw TimeError("SimClock::schedule: the callback is empty");
  if (at.ns() < now_ns_) {
    throw TimeError("SimClock::schedule: at " + t_text(at.ns()) + " is before now " +
                    t_text(now_ns_) + " (time never goes backwards)");
  }
  return add(at.ns(), 0, std::move(callback), std::move(label));
}

TimerHandle SimClock::schedule_periodic(Duration period, Callback callback, SimTime phase,
                                        std::string label) {
  if (!callback) throw TimeError("SimClock::schedule_periodic: the callback is empty");
  if (period.ns() <= 0 || period.is_infinite()) {
    throw TimeError("SimClock::schedule_periodic: period " + format_seconds(period) +
                    " s must be > 0 and finite");
  }
  int64_t first = phase.ns();
  if (first < now_ns_) {
    // The first point of the grid phase + k*period at or after now (integer ceil division).
    const i128 gap = static_cast<i128>(now_ns_) - first;
    const i128 k = (gap + period.ns() - 1) / period.ns();
    first = static_cast<int64_t>(first + k * period.ns());
  }
  return add(first, period.ns(), std::move(callback), std::move(label));
}

size_t SimClock::advance(Duration dt) {
  if (dt.ns() < 0) {
    throw TimeError("SimClock::advance: dt " + format_seconds(dt) +
                    " s is negative (time never goes backwards)");
  }
  return run_until(detail::sat_add(now_ns_, dt.ns()), "advance");
}

size_t SimClock::advance_to(SimTime t) {
  if (t.ns() < now_ns_) {
    throw TimeError("SimClock::advance_to: " + t_text(t.ns()) + " is before now " +
                    t_text(now_ns_) + " (time never goes backwards)");
  }
  return run_until(t.ns(), "advance_to");
}

size_t SimClock::advance_and_deliver(Duration dt) {
  size_t n = advance(dt);
  if (bus_ != nullptr) n += bus_->deliver_until(now());
  return n;
}

void SimClock::prune_stale_top() const {
  Core& core = *core_;
  while (!heap_.empty()) {
    const Entry& e = heap_.front();
    if (core.at(e.slot).generation == e.generation) return;
    detail::heap_pop(heap_, EntryLess{});
    --core.stale;
  }
}

std::optional<SimTime> SimClock::next_wakeup() const {
  prune_stale_top();
  if (heap_.empty()) return std::nullopt;
  return SimTime::from_ns(heap_.front().at_ns);
}

size_t SimClock::pending() const { return core_->live; }

bool SimClock::fire_top() {
  Core& core = *core_;
  const Entry e = heap_.front();
  Core::Slot& s = core.at(e.slot);
  if (s.generation != e.generation) {
    detail::heap_pop(heap_, EntryLess{});
    --core.stale;
    return false;
  }
  now_ns_ = e.at_ns;
  if (s.period_ns > 0 && e.at_ns > detail::kMaxNs - s.period_ns) {
    // The next occurrence is past the end of the time line: this firing is the last one, so the
    // timer is treated as a one-shot below (and advance_to(infinite) cannot loop forever).
    s.period_ns = 0;
  }
  if (s.period_ns > 0) {
    // Re-inserted before the callback runs, with the next sequence number (header: FIFO rule).
    const Entry next{detail::sat_add(e.at_ns, s.period_ns), next_sequence_++, e.slot, e.generation};
    // Same order either way; the comparison differs only in speed (see EntryKeyLess).
    if (heap_.size() - kBranchlessMin <= kBranchlessMax - kBranchlessMin) {
      detail::heap_replace_top(heap_, next, EntryKeyLess{});
    } else {
      detail::heap_replace_top(heap_, next, EntryLess{});
    }
    core.running = e.slot;
    try {
      s.callback();
    } catch (const std::exception& ex) {
      core.running = Core::kNone;
      const Core::Info info = core.info[e.slot];
      report_failure(info.id, info.label, ex.what());
    } catch (...) {
      core.running = Core::kNone;
      const Core::Info info = core.info[e.slot];
      report_failure(info.id, info.label, "unknown exception (not derived from std::exception)");
    }
    core.running = Core::kNone;
    if (!s.live) core.release(e.slot);  // cancelled from inside its own callback
    return true;
  }
  detail::heap_pop(heap_, EntryLess{});
  s.live = false;
  ++s.generation;  // fired: a later cancel() is a no-op
  --core.live;
  Callback callback = std::move(s.callback);
  const uint64_t id = core.info[e.slot].id;
  std::string label = std::move(core.info[e.slot].label);
  core.release(e.slot);
  try {
    callback();
  } catch (const std::exception& ex) {
    report_failure(id, label, ex.what());
  } catch (...) {
    report_failure(id, label, "unknown exception (not derived from std::exception)");
  }
  return true;
}

size_t SimClock::run_until(int64_t target_ns, const char* what) {
  if (in_advance_) {
    throw TimeError(std::string("SimClock::") + what +
                    ": called from inside a timer callback of the same clock");
  }
  in_advance_ = true;
  struct Reset {
    bool& flag;
    ~Reset() { flag = false; }
  } reset{in_advance_};

  size_t ran = 0;
  if (!drive_bus_) {
    while (!heap_.empty() && heap_.front().at_ns <= target_ns) {
      if (fire_top()) ++ran;
    }
  } else {
    for (;;) {
      prune_stale_top();
      const int64_t t_timer = heap_.empty() ? detail::kMaxNs : heap_.front().at_ns;
      const std::optional<SimTime> next_msg = bus_->next_stamp();
      const int64_t t_bus = next_msg ? next_msg->ns() : detail::kMaxNs;
      // Timers due at t run before the messages stamped t are delivered.
      if (t_bus < t_timer && t_bus <= target_ns) {
        if (t_bus > now_ns_) now_ns_ = t_bus;
        bus_->deliver_until(SimTime::from_ns(now_ns_));
        continue;
      }
      if (t_timer > target_ns) break;
      if (fire_top()) ++ran;
    }
  }
  now_ns_ = target_ns;
  return ran;
}

void SimClock::report_failure(uint64_t id, const std::string& label, const std::string& message) {
  ++callback_failures_;
  last_failure_ = "timer " + std::to_string(id) + (label.empty() ? "" : " (" + label + ")") +
                  " threw at " + t_text(now_ns_) + ": " + message;
  if (bus_ == nullptr) return;
  std::string payload =
      "{\"event\":\"SCHEDULER_CALLBACK_FAILED\",\"timer_id\":" + std::to_string(id) +
      ",\"label\":\"" + json_escape(label) + "\",\"message\":\"" + json_escape(message) +
      "\",\"at_ns\":" + std::to_string(now_ns_) + "}";
  try {
    bus_->publish(kEventsTopic, now(), std::move(payload), kEventType);
  } catch (const std::exception& ex) {
    last_failure_ += std::string(" (not published on the bus: ") + ex.what() + ")";
  }
}

}  // namespace fieldproof
