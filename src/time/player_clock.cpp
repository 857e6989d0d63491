// PlayerClock implementations: TimeControllerClock (one reference snapshot, re-taken at every
// control action) and ExternalClock (follows samples, optional extrapolation, watchdog).
#include "fieldproof/time/player_clock.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>
#include <utility>

#include "fieldproof/time/system_clock.hpp"
#include "fieldproof/time/time_error.hpp"
#include "fieldproof/util/mutex.hpp"

namespace fieldproof {
namespace {

// 2^63, exactly representable in a long double (and in a double). A long double has a 64-bit
// mantissa, so every integer of magnitude below 2^63 is exact in it: a value v with |v| < 2^63
// rounds to an int64 without saturating. (A bound such as 9.2e18 would saturate the last
// 0.25 % of the range; now() promises exactness below 2^63.)
constexpr long double kTwo63 = 9223372036854775808.0L;

int64_t saturate_ld(long double v) {
  if (v >= kTwo63) return detail::kMaxNs;
  if (v <= -kTwo63) return detail::kMinNs;
  return static_cast<int64_t>(v);
}

// round(rate x d), to nearest, ties away from zero, saturating only outside the int64 range.
int64_t scaled(double rate, int64_t d) {
  const long double p = static_cast<long double>(d) * static_cast<long double>(rate);
  // Rounding p to nearest may reach 2^63 only when p >= 2^63 - 0.5; near 2^63 the long double
  // step is 1, so p < 2^63 means p <= 2^63 - 1 (an integer) and llroundl is exact.
  if (p >= kTwo63) return detail::kMaxNs;
  if (p <= -kTwo63) return detail::kMinNs;
  return std::llroundl(p);
}

std::string describe_rate(double rate) {
  std::ostringstream out;
  out << rate;
  return out.str();
}

}  // namespace

// ---- steady time ----

SimTime SystemSteadyTime::now() const {
  static const WallNow wall = SystemClock::wall_now();
  return wall();
}

void SystemSteadyTime::wait_until(Mutex& mu, CondVar& cv, SimTime until) {
  const Duration d = until - now();
  if (d.ns() <= 0) return;
  // Long waits are cut in slices of an hour: the caller loops and re-checks anyway.
  const int64_t ns = std::min<int64_t>(d.ns(), int64_t{3600} * 1'000'000'000);
  (void)cv.wait_for(mu, std::chrono::nanoseconds(ns));
}

SystemSteadyTime& SystemSteadyTime::instance() {
  static SystemSteadyTime steady;
  return steady;
}

void FakeSteadyTime::wait_until(Mutex& mu, CondVar& cv, SimTime until) {
  if (now_.load() >= until.ns()) return;
  {
    MutexLock g(blocked_mutex_);
    ++blocked_;
  }
  blocked_cv_.notify_all();
  // advance() stores the new time before taking the caller's mutex, and the caller checked the
  // time under that mutex: either it saw the new time, or it is waiting when notified.
  cv.wait(mu);
  MutexLock g(blocked_mutex_);
  --blocked_;
}

size_t FakeSteadyTime::blocked_waits() const {
  MutexLock g(blocked_mutex_);
  return blocked_;
}

void FakeSteadyTime::wait_for_blocked(size_t n) const {
  MutexLock g(blocked_mutex_);
  blocked_cv_.wait(blocked_mutex_,
                   [&]() FIELDPROOF_REQUIRES(blocked_mutex_) { return blocked_ >= n; });
}

void FakeSteadyTime::register_waiter(Mutex* mutex, CondVar* cv) {
  MutexLock g(registry_mutex_);
  waiters_.emplace_back(mutex, cv);
}

void FakeSteadyTime::unregister_waiter(Mutex* mutex, CondVar* cv) {
  MutexLock g(registry_mutex_);
  std::erase(waiters_, std::make_pair(mutex, cv));
}

void FakeSteadyTime::advance(Duration d) {
  if (d.ns() < 0) return;
  set(now() + d);
}

void FakeSteadyTime::set(SimTime t) {
  // Lock order: registry_mutex_, then a clock's mutex (a clock never takes the registry while
  // holding its own mutex).
  MutexLock g(registry_mutex_);
  if (t.ns() < now_.load()) return;
  now_.store(t.ns());
  for (auto& [mutex, cv] : waiters_) {
    { MutexLock clock_lock(*mutex); }
    cv->notify_all();
  }
}

// ---- jump handlers ----

uint64_t JumpHandlers::add(JumpCallback pre, JumpCallback post) {
  RecursiveMutexLock g(call_mutex_);
  const uint64_t id = next_id_++;
  entries_.emplace(id, Entry{std::move(pre), std::move(post)});
  return id;
}

bool JumpHandlers::remove(uint64_t id) {
  RecursiveMutexLock g(call_mutex_);
  return entries_.erase(id) > 0;
}

void JumpHandlers::call_pre(const ClockJump& jump) {
  RecursiveMutexLock g(call_mutex_);
  std::vector<uint64_t> ids;
  for (const auto& [id, e] : entries_) ids.push_back(id);
  for (uint64_t id : ids) {
    auto it = entries_.find(id);  // a handler may remove another one
    if (it == entries_.end() || !it->second.pre) continue;
    JumpCallback cb = it->second.pre;
    cb(jump);
  }
}

void JumpHandlers::call_post(const ClockJump& jump) {
  RecursiveMutexLock g(call_mutex_);
  std::vector<uint64_t> ids;
  for (const auto& [id, e] : entries_) ids.push_back(id);
  for (uint64_t id : ids) {
    auto it = entries_.find(id);
    if (it == entries_.end() || !it->second.post) continue;
    JumpCallback cb = it->second.post;
    cb(jump);
  }
}

// ---- TimeControllerClock ----

SimTime TimeControllerClock::steady_to_log(const Snapshot& ref, double rate, SimTime steady) {
  const Duration d = steady - ref.steady;
  return ref.log + Duration::from_ns(scaled(rate, d.ns()));
}

SimTime TimeControllerClock::log_to_steady(const Snapshot& ref, double rate, SimTime log) {
  if (log.is_infinite()) return SimTime::infinite();
  const int64_t want = (log - ref.log).ns();
  // round(rate x d) >= want  <=>  rate x d >= want - 0.5 (want > 0: ties round up to want)
  //                          <=>  rate x d >  want - 0.5 (want <= 0: ties round away, down)
  // Solve in long double, then correct by exact checks for the last-bit error.
  const long double x = (static_cast<long double>(want) - 0.5L) / static_cast<long double>(rate);
  int64_t d = saturate_ld(std::ceil(x));
  if (d == detail::kMaxNs) return SimTime::infinite();
  auto reaches = [&](int64_t dd) { return scaled(rate, dd) >= want; };
  for (int i = 0; i < 4 && d > detail::kMinNs && reaches(d - 1); ++i) --d;
  for (int i = 0; i < 4 && !reaches(d); ++i) {
    if (d == detail::kMaxNs) return SimTime::infinite();
    ++d;
  }
  return ref.steady + Duration::from_ns(d);
}

TimeControllerClock::TimeControllerClock(TimeControllerClockOptions options, SteadyTime& steady)
    : steady_(steady) {
  if (!(options.rate > 0.0) || !std::isfinite(options.rate)) {
    throw TimeError("TimeControllerClock: rate " + describe_rate(options.rate) +
                    " refused: must be a finite number > 0");
  }
  {
    MutexLock g(mutex_);
    ref_ = Snapshot{steady_.now(), options.start};
    rate_ = options.rate;
    paused_ = options.start_paused;
  }
  // Outside mutex_: the lock order is the time line's registry, then a clock's mutex.
  steady_.register_waiter(&mutex_, &cv_);
}

TimeControllerClock::~TimeControllerClock() {
  stop_publisher();
  steady_.unregister_waiter(&mutex_, &cv_);
}

SimTime TimeControllerClock::now_locked() const {
  if (paused_) return ref_.log;
  return steady_to_log(ref_, rate_, steady_.now());
}

void TimeControllerClock::reanchor_locked() {
  const SimTime steady = steady_.now();
  const SimTime log = paused_ ? ref_.log : steady_to_log(ref_, rate_, steady);
  ref_ = Snapshot{steady, log};
  ++controls_;
}

SimTime TimeControllerClock::now() const {
  MutexLock g(mutex_);
  return now_locked();
}

uint64_t TimeControllerClock::jump_count() const {
  MutexLock g(mutex_);
  return jumps_;
}

bool TimeControllerClock::sleep_until(SimTime until, Duration real_time_timeout) {
  return sleep_until(until, real_time_timeout, jump_count());
}

bool TimeControllerClock::sleep_until(SimTime until, Duration real_time_timeout,
                                      uint64_t jumps_seen) {
  MutexLock lock(mutex_);
  const SimTime start = steady_.now();
  const SimTime deadline =
      real_time_timeout.is_infinite() ? SimTime::infinite() : start + real_time_timeout;
  const uint64_t jumps = jumps_seen;
  const uint64_t pauses = pauses_;
  const uint64_t wakeups = wakeups_;
  const bool called_paused = paused_;
  for (;;) {
    if (jumps_ != jumps || wakeups_ != wakeups) return false;
    // A pause made during the wait ends it at once: the caller re-checks its queue (and waits
    // again, paused, if it wants to).
    if (pauses_ != pauses) return false;
    const SimTime steady = steady_.now();
    if (called_paused && !paused_) return false;  // called while paused, resumed since
    if (!paused_ && steady_to_log(ref_, rate_, steady) >= until) return true;
    if (steady >= deadline) return false;
    SimTime wake = deadline;
    if (!paused_) wake = std::min(wake, log_to_steady(ref_, rate_, until));
    steady_.wait_until(mutex_, cv_, wake);
  }
}

void TimeControllerClock::wakeup() {
  {
    MutexLock g(mutex_);
    ++wakeups_;
  }
  cv_.notify_all();
}

Status TimeControllerClock::set_paused(bool paused) {
  {
    MutexLock g(mutex_);
    if (paused == paused_) return Status();
    reanchor_locked();
    paused_ = paused;
    if (paused) ++pauses_;
  }
  cv_.notify_all();
  return Status();
}

bool TimeControllerClock::is_paused() const {
  MutexLock g(mutex_);
  return paused_;
}

Status TimeControllerClock::set_rate(double rate) {
  if (!(rate > 0.0) || !std::isfinite(rate)) {
    return Status(StatusCode::kFailedPrecondition,
                  "set_rate: rate " + describe_rate(rate) +
                      " refused: must be a finite number > 0 (to stop time, pause)");
  }
  {
    MutexLock g(mutex_);
    reanchor_locked();
    rate_ = rate;
  }
  cv_.notify_all();
  return Status();
}

double TimeControllerClock::rate() const {
  MutexLock g(mutex_);
  return rate_;
}

Status TimeControllerClock::jump(SimTime to) {
  MutexLock serial(jump_mutex_);
  ClockJump info;
  {
    MutexLock g(mutex_);
    info.from = now_locked();
    info.to = to;
  }
  handlers_.call_pre(info);
  {
    MutexLock g(mutex_);
    ref_ = Snapshot{steady_.now(), to};
    ++controls_;
    ++jumps_;
  }
  cv_.notify_all();
  handlers_.call_post(info);
  return Status();
}

Status TimeControllerClock::play_next(SimTime next_message_time) {
  MutexLock g(mutex_);
  if (!paused_)
    return Status(StatusCode::kFailedPrecondition,
                  "play_next: refused while playing (only when paused)");
  if (next_message_time < ref_.log) {
    return Status(StatusCode::kFailedPrecondition,
                  "play_next: " + format_seconds(next_message_time) + " s is before now " +
                      format_seconds(ref_.log) +
                      " s (play_next only moves forward; use jump to go back)");
  }
  ref_ = Snapshot{steady_.now(), next_message_time};
  ++controls_;
  return Status();
}

uint64_t TimeControllerClock::add_jump_handler(JumpCallback pre, JumpCallback post) {
  return handlers_.add(std::move(pre), std::move(post));
}

bool TimeControllerClock::remove_jump_handler(uint64_t id) { return handlers_.remove(id); }

void TimeControllerClock::stop_publisher() {
  MutexLock serial(publisher_mutex_);
  {
    MutexLock g(mutex_);
    ++publisher_generation_;
  }
  cv_.notify_all();
  if (publisher_thread_.joinable()) publisher_thread_.join();
}

Status TimeControllerClock::set_clock_publisher(double hz, ClockPublisher publisher) {
  if (!(hz >= 0.0) || !std::isfinite(hz)) {
    return Status(StatusCode::kFailedPrecondition,
                  "set_clock_publisher: frequency " + describe_rate(hz) +
                      " Hz refused: must be a finite number >= 0 (0 turns it off)");
  }
  if (hz > 0.0 && !publisher) {
    return Status(StatusCode::kFailedPrecondition,
                  "set_clock_publisher: an empty publisher callback");
  }
  const int64_t period_ns = std::max<int64_t>(1, std::llround(1e9 / hz));
  if (hz > 0.0 && 1e9 / hz >= 9.2e18) {
    return Status(StatusCode::kFailedPrecondition,
                  "set_clock_publisher: frequency " + describe_rate(hz) +
                      " Hz is too low (period beyond the int64 ns range)");
  }
  stop_publisher();
  if (hz == 0.0) return Status();
  MutexLock serial(publisher_mutex_);
  uint64_t generation = 0;
  {
    MutexLock g(mutex_);
    generation = publisher_generation_;
  }
  publisher_thread_ = std::thread([this, generation, period_ns, p = std::move(publisher)] {
    publish_loop(generation, Duration::from_ns(period_ns), p);
  });
  return Status();
}

void TimeControllerClock::publish_loop(uint64_t generation, Duration period,
                                       ClockPublisher publisher) {
  MutexLock lock(mutex_);
  const SimTime start = steady_.now();
  int64_t k = 0;
  while (publisher_generation_ == generation) {
    const SimTime due = start + period * k;
    const SimTime steady = steady_.now();
    if (steady < due) {
      steady_.wait_until(mutex_, cv_, due);
      continue;
    }
    const SimTime t = now_locked();
    lock.unlock();
    try {
      publisher(t);
    } catch (...) {
      // A failing publisher must not end the clock; the next period tries again.
    }
    publications_.fetch_add(1);
    lock.lock();
    // Deadlines missed while the callback ran (or while the steady clock jumped ahead) are
    // skipped: the next one is the first on the grid after `steady`.
    k = (steady - start) / period + 1;
  }
}

// ---- ExternalClock ----

ExternalClock::ExternalClock(ExternalClockOptions options, SteadyTime& steady)
    : options_(std::move(options)), steady_(steady) {
  if (options_.window < 2) options_.window = 2;
  {
    MutexLock g(mutex_);
    floor_ = options_.initial;
  }
  steady_.register_waiter(&mutex_, &cv_);
}

ExternalClock::~ExternalClock() { steady_.unregister_waiter(&mutex_, &cv_); }

void ExternalClock::refit_locked() {
  fitted_rate_ = 0.0;
  period_ = Duration::zero();
  const size_t n = window_.size();
  if (n < 2) return;
  const Sample& last = window_.back();
  period_ = (last.log - window_.front().log) / static_cast<int64_t>(n - 1);
  long double mx = 0, my = 0;
  for (const Sample& s : window_) {
    mx += static_cast<long double>((s.steady - last.steady).ns());
    my += static_cast<long double>((s.log - last.log).ns());
  }
  mx /= static_cast<long double>(n);
  my /= static_cast<long double>(n);
  long double sxy = 0, sxx = 0;
  for (const Sample& s : window_) {
    const long double dx = static_cast<long double>((s.steady - last.steady).ns()) - mx;
    const long double dy = static_cast<long double>((s.log - last.log).ns()) - my;
    sxy += dx * dy;
    sxx += dx * dx;
  }
  if (sxx <= 0) return;
  const long double r = sxy / sxx;
  if (r > 0 && std::isfinite(static_cast<double>(r))) fitted_rate_ = static_cast<double>(r);
}

SimTime ExternalClock::now_locked(SimTime steady, bool* fire_silent) const {
  if (window_.empty()) return floor_;
  const Sample& last = window_.back();
  SimTime eval = steady;
  if (!options_.watchdog.is_infinite() && steady - last.steady >= options_.watchdog) {
    eval = last.steady + options_.watchdog;
    if (!silent_) {
      silent_ = true;
      *fire_silent = true;
    }
  }
  SimTime v = last.log;
  if (options_.extrapolate && fitted_rate_ > 0.0 && period_.ns() > 0 && eval > last.steady) {
    const int64_t ahead = std::min(scaled(fitted_rate_, (eval - last.steady).ns()), period_.ns());
    v = last.log + Duration::from_ns(ahead);
  }
  if (v < floor_) v = floor_;
  floor_ = v;
  return v;
}

void ExternalClock::feed(SimTime sample) { feed(sample, steady_.now()); }

void ExternalClock::feed(SimTime sample, SimTime received) {
  MutexLock serial(feed_mutex_);
  ClockJump jump;
  bool backwards = false;
  {
    MutexLock g(mutex_);
    if (!window_.empty() && sample < window_.back().log) {
      backwards = true;
      jump.from = floor_;
      jump.to = sample;
    }
  }
  if (backwards) {
    if (options_.logger) {
      options_.logger("ExternalClock: the followed clock went backwards from " +
                      format_seconds(jump.from) + " s to " + format_seconds(sample) +
                      " s; treated as a jump");
    }
    handlers_.call_pre(jump);
  }
  {
    MutexLock g(mutex_);
    if (backwards) {
      window_.clear();
      floor_ = sample;
      ++jumps_;
    }
    if (!window_.empty() && received < window_.back().steady) received = window_.back().steady;
    window_.push_back(Sample{received, sample});
    while (window_.size() > options_.window) window_.pop_front();
    silent_ = false;
    ++samples_;
    refit_locked();
  }
  cv_.notify_all();
  if (backwards) handlers_.call_post(jump);
}

SimTime ExternalClock::now() const {
  bool fire = false;
  SimTime v;
  SimTime last;
  {
    MutexLock g(mutex_);
    v = now_locked(steady_.now(), &fire);
    if (!window_.empty()) last = window_.back().log;
  }
  if (fire && options_.on_silent) options_.on_silent(last);
  return v;
}

bool ExternalClock::is_silent() const {
  static_cast<void>(now());
  MutexLock g(mutex_);
  return silent_;
}

uint64_t ExternalClock::samples() const {
  MutexLock g(mutex_);
  return samples_;
}

bool ExternalClock::sleep_until(SimTime until, Duration real_time_timeout) {
  MutexLock lock(mutex_);
  const SimTime start = steady_.now();
  const SimTime deadline =
      real_time_timeout.is_infinite() ? SimTime::infinite() : start + real_time_timeout;
  const uint64_t jumps = jumps_;
  const uint64_t wakeups = wakeups_;
  for (;;) {
    if (jumps_ != jumps || wakeups_ != wakeups) return false;
    const SimTime steady = steady_.now();
    bool fire = false;
    const SimTime v = now_locked(steady, &fire);
    if (fire && options_.on_silent) {
      const SimTime last = window_.back().log;
      lock.unlock();
      options_.on_silent(last);
      lock.lock();
      continue;
    }
    if (v >= until) return true;
    if (steady >= deadline) return false;
    SimTime wake = deadline;
    if (!window_.empty()) {
      const Sample& last = window_.back();
      if (!options_.watchdog.is_infinite() && !silent_) {
        wake = std::min(wake, last.steady + options_.watchdog);
      }
      const Duration need = until - last.log;
      if (options_.extrapolate && fitted_rate_ > 0.0 && need <= period_ && !silent_) {
        TimeControllerClock::Snapshot ref{last.steady, last.log};
        wake = std::min(wake, TimeControllerClock::log_to_steady(ref, fitted_rate_, until));
      }
    }
    steady_.wait_until(mutex_, cv_, wake);
  }
}

void ExternalClock::wakeup() {
  {
    MutexLock g(mutex_);
    ++wakeups_;
  }
  cv_.notify_all();
}

double ExternalClock::rate() const {
  MutexLock g(mutex_);
  return fitted_rate_ > 0.0 ? fitted_rate_ : 1.0;
}

Status ExternalClock::refuse(const char* what) const {
  std::string message = std::string("ExternalClock: ") + what +
                        " refused: this clock follows an external time source and does not "
                        "control time";
  if (options_.logger) options_.logger(message);
  return Status(StatusCode::kFailedPrecondition, std::move(message));
}

Status ExternalClock::set_paused(bool /*paused*/) { return refuse("set_paused"); }
Status ExternalClock::set_rate(double /*rate*/) { return refuse("set_rate"); }
Status ExternalClock::jump(SimTime /*to*/) { return refuse("jump"); }
Status ExternalClock::play_next(SimTime /*t*/) { return refuse("play_next"); }
Status ExternalClock::set_clock_publisher(double /*hz*/, ClockPublisher /*p*/) {
  return refuse("set_clock_publisher");
}

uint64_t ExternalClock::add_jump_handler(JumpCallback pre, JumpCallback post) {
  return handlers_.add(std::move(pre), std::move(post));
}

bool ExternalClock::remove_jump_handler(uint64_t id) { return handlers_.remove(id); }

}  // namespace fieldproof
