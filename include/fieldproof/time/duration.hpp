// Time values of fieldproof: int64 nanoseconds, never floating point.
//
// Duration is a span of time, SimTime a point on a simulated (or steady) time line counted from
// its origin. Arithmetic saturates at the infinities instead of wrapping: +inf means "never" (a
// participant waiting for work announces SimTime::infinite()).
//
//   Duration d = milliseconds(250) + seconds(1);          // 1.25 s
//   SimTime t = SimTime::from_ns(0) + d;                  // t.ns() == 1'250'000'000
//   auto p = parse_duration("1.5s");                      // exact: 1'500'000'000 ns
//   if (!p) std::puts(p.error().c_str());
#pragma once

#include <compare>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <variant>

namespace fieldproof {

namespace detail {
constexpr int64_t kMaxNs = std::numeric_limits<int64_t>::max();
constexpr int64_t kMinNs = std::numeric_limits<int64_t>::min();

// Saturating add: the result sticks at kMaxNs / kMinNs instead of wrapping.
constexpr int64_t sat_add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? kMaxNs : kMinNs;
  return r;
}
constexpr int64_t sat_sub(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r)) return b < 0 ? kMaxNs : kMinNs;
  return r;
}
constexpr int64_t sat_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return ((a < 0) != (b < 0)) ? kMinNs : kMaxNs;
  return r;
}
}  // namespace detail

// A span of time in integer nanoseconds. Saturating arithmetic: adding to an infinite duration
// keeps it infinite; overflow clamps to +/- infinity.
class Duration {
 public:
  constexpr Duration() = default;
  static constexpr Duration from_ns(int64_t ns) { return Duration(ns); }
  static constexpr Duration infinite() { return Duration(detail::kMaxNs); }
  static constexpr Duration zero() { return Duration(0); }

  constexpr int64_t ns() const { return ns_; }
  constexpr bool is_infinite() const { return ns_ == detail::kMaxNs || ns_ == detail::kMinNs; }
  // Seconds as a double: for printing only, never for arithmetic.
  constexpr double seconds_f() const { return static_cast<double>(ns_) / 1e9; }

  constexpr Duration operator+(Duration o) const { return Duration(detail::sat_add(ns_, o.ns_)); }
  constexpr Duration operator-(Duration o) const { return Duration(detail::sat_sub(ns_, o.ns_)); }
  constexpr Duration operator*(int64_t k) const { return Duration(detail::sat_mul(ns_, k)); }
  // Integer division (truncates toward zero). Division by zero yields +/- infinity.
  constexpr Duration operator/(int64_t k) const {
    if (k == 0) return Duration(ns_ >= 0 ? detail::kMaxNs : detail::kMinNs);
    if (ns_ == detail::kMinNs && k == -1) return Duration(detail::kMaxNs);
    return Duration(ns_ / k);
  }
  // How many whole `o` fit in this duration (truncating). o must be non-zero.
  constexpr int64_t operator/(Duration o) const { return o.ns_ == 0 ? 0 : ns_ / o.ns_; }
  constexpr Duration operator%(Duration o) const { return Duration(o.ns_ == 0 ? 0 : ns_ % o.ns_); }
  constexpr Duration operator-() const {
    return Duration(ns_ == detail::kMinNs ? detail::kMaxNs : -ns_);
  }
  constexpr Duration& operator+=(Duration o) { return *this = *this + o; }
  constexpr Duration& operator-=(Duration o) { return *this = *this - o; }
  constexpr auto operator<=>(const Duration&) const = default;

 private:
  constexpr explicit Duration(int64_t ns) : ns_(ns) {}
  int64_t ns_ = 0;
};

constexpr Duration nanoseconds(int64_t n) { return Duration::from_ns(n); }
constexpr Duration microseconds(int64_t n) { return Duration::from_ns(detail::sat_mul(n, 1'000)); }
constexpr Duration milliseconds(int64_t n) {
  return Duration::from_ns(detail::sat_mul(n, 1'000'000));
}
constexpr Duration seconds(int64_t n) {
  return Duration::from_ns(detail::sat_mul(n, 1'000'000'000));
}
constexpr Duration minutes(int64_t n) { return seconds(detail::sat_mul(n, 60)); }
constexpr Duration hours(int64_t n) { return seconds(detail::sat_mul(n, 3600)); }

// A point in time: nanoseconds since the time line's origin (simulation start, or the steady
// clock's epoch for SystemClock). SimTime::infinite() is "never" / "no limit".
class SimTime {
 public:
  constexpr SimTime() = default;
  static constexpr SimTime from_ns(int64_t ns) { return SimTime(ns); }
  static constexpr SimTime zero() { return SimTime(0); }
  static constexpr SimTime infinite() { return SimTime(detail::kMaxNs); }

  constexpr int64_t ns() const { return ns_; }
  constexpr bool is_infinite() const { return ns_ == detail::kMaxNs; }
  constexpr double seconds_f() const { return static_cast<double>(ns_) / 1e9; }

  constexpr SimTime operator+(Duration d) const { return SimTime(detail::sat_add(ns_, d.ns())); }
  constexpr SimTime operator-(Duration d) const { return SimTime(detail::sat_sub(ns_, d.ns())); }
  constexpr Duration operator-(SimTime o) const {
    return Duration::from_ns(detail::sat_sub(ns_, o.ns_));
  }
  constexpr SimTime& operator+=(Duration d) { return *this = *this + d; }
  constexpr auto operator<=>(const SimTime&) const = default;

 private:
  constexpr explicit SimTime(int64_t ns) : ns_(ns) {}
  int64_t ns_ = 0;
};

// Result of parsing: the value, or a message that quotes the offending text.
template <typename T>
class Parsed {
 public:
  Parsed(T v) : v_(std::move(v)) {}  // NOLINT(google-explicit-constructor)
  static Parsed failure(std::string message) { return Parsed(Error{std::move(message)}); }
  explicit operator bool() const { return v_.index() == 0; }
  const T& value() const { return std::get<0>(v_); }
  const T& operator*() const { return value(); }
  const std::string& error() const { return std::get<1>(v_).message; }

 private:
  struct Error {
    std::string message;
  };
  explicit Parsed(Error e) : v_(std::move(e)) {}
  std::variant<T, Error> v_;
};

// Parses a duration written as decimal text to exact nanoseconds: "0.1", "250ms", "1.5s", "10m",
// "2h", "30us", "15ns"; a bare number is seconds. Surrounding spaces are allowed; a sign, an
// exponent, more than nine fractional digits below 1 ns, or an unknown unit are refused with a
// message that quotes the text. Negative durations are refused.
Parsed<Duration> parse_duration(std::string_view text);

// Formats as seconds with up to nine decimals, trailing zeros dropped: "1.25", "0.001", "inf".
std::string format_seconds(Duration d);
std::string format_seconds(SimTime t);

}  // namespace fieldproof
