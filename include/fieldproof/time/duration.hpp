// Time values of fieldproof: int64 nanoseconds, never floating point.
//
// Duration is a span of time, SimTime a point on a simulated (or steady) time line counted from
// its origin. Arithmetic saturates at the infinities instead of wrapping, and an infinity stays
// infinite whatever is added to it (abseil's contract): +inf means "never" (a participant waiting
// for work announces SimTime::infinite()).
//
//   Duration d = milliseconds(250) + seconds(1);          // 1.25 s
//   SimTime t = SimTime::from_ns(0) + d;                  // t.ns() == 1'250'000'000
//   auto p = parse_duration("1.5s");                      // exact: 1'500'000'000 ns
//   if (!p.ok()) std::puts(p.status().message().c_str());
#pragma once

#include <compare>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "fieldproof/util/status.hpp"

namespace fieldproof {

namespace detail {
constexpr int64_t kMaxNs = std::numeric_limits<int64_t>::max();
constexpr int64_t kMinNs = std::numeric_limits<int64_t>::min();

constexpr bool is_inf(int64_t ns) { return ns == kMaxNs || ns == kMinNs; }
constexpr int64_t inf_of_sign(bool negative) { return negative ? kMinNs : kMaxNs; }

// The arithmetic of both types, on the representation. kMaxNs is +infinity and kMinNs is
// -infinity; everything between is finite. As in abseil's absl::Duration:
//   - an infinite operand is sticky: inf + x == inf and inf - x == inf for every x (also -inf);
//   - x + inf == inf, x - inf == -inf for finite x;
//   - a finite result out of range saturates to the infinity of its sign.
constexpr int64_t sat_add(int64_t a, int64_t b) {
  if (is_inf(a)) return a;
  if (is_inf(b)) return b;
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return inf_of_sign(b < 0);
  return r;
}
constexpr int64_t sat_sub(int64_t a, int64_t b) {
  if (is_inf(a)) return a;
  if (is_inf(b)) return b == kMaxNs ? kMinNs : kMaxNs;
  int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r)) return inf_of_sign(b > 0);
  return r;
}
// Multiplication by a count: an infinite factor stays infinite with the product's sign (an
// infinite duration times 0 stays infinite, as in abseil).
constexpr int64_t sat_mul(int64_t a, int64_t k) {
  const bool negative = (a < 0) != (k < 0);
  if (is_inf(a)) return inf_of_sign(negative);
  int64_t r = 0;
  if (__builtin_mul_overflow(a, k, &r)) return inf_of_sign(negative);
  return r;
}
}  // namespace detail

// A span of time in integer nanoseconds, with abseil's contract: the infinities are sticky
// (Duration::infinite() - milliseconds(1) is still infinite), results out of range saturate to
// the infinity of their sign, and dividing by zero gives an infinity, never a crash or 0.
//
//   Duration::infinite() + seconds(-1)   == Duration::infinite()
//   -Duration::infinite()                 is infinite (negative)
//   seconds(1) / 0                       == Duration::infinite()
//   seconds(1) / Duration::zero()        == INT64_MAX            (a count: saturated)
//   seconds(1) % Duration::zero()        == Duration::infinite()
//   seconds(5) / Duration::infinite()    == 0, seconds(5) % Duration::infinite() == seconds(5)
class Duration {
 public:
  constexpr Duration() = default;
  // kMaxNs and kMinNs are the two infinities.
  static constexpr Duration from_ns(int64_t ns) { return Duration(ns); }
  static constexpr Duration infinite() { return Duration(detail::kMaxNs); }
  static constexpr Duration zero() { return Duration(0); }

  constexpr int64_t ns() const { return ns_; }
  // True for both infinities; compare with zero() for the sign.
  constexpr bool is_infinite() const { return detail::is_inf(ns_); }
  // Seconds as a double: for printing only, never for arithmetic.
  constexpr double seconds_f() const { return static_cast<double>(ns_) / 1e9; }

  constexpr Duration operator+(Duration o) const { return Duration(detail::sat_add(ns_, o.ns_)); }
  constexpr Duration operator-(Duration o) const { return Duration(detail::sat_sub(ns_, o.ns_)); }
  constexpr Duration operator*(int64_t k) const { return Duration(detail::sat_mul(ns_, k)); }
  // Integer division, truncating toward zero. An infinite duration, or a division by zero,
  // gives the infinity of the quotient's sign (0 / 0 is +infinity).
  constexpr Duration operator/(int64_t k) const {
    if (is_infinite() || k == 0) return Duration(detail::inf_of_sign((ns_ < 0) != (k < 0)));
    return Duration(ns_ / k);
  }
  // How many whole `o` fit in this duration (truncating toward zero). An infinite dividend or a
  // zero divisor saturates to INT64_MAX / INT64_MIN by the quotient's sign; an infinite divisor
  // of a finite dividend gives 0.
  constexpr int64_t operator/(Duration o) const {
    const bool negative = (ns_ < 0) != (o.ns_ < 0);
    if (is_infinite() || o.ns_ == 0) return negative ? detail::kMinNs : detail::kMaxNs;
    if (o.is_infinite()) return 0;
    return ns_ / o.ns_;
  }
  // The remainder of operator/(Duration): it has the dividend's sign. An infinite dividend or a
  // zero divisor gives the dividend's infinity; an infinite divisor leaves the dividend.
  constexpr Duration operator%(Duration o) const {
    if (is_infinite() || o.ns_ == 0) return Duration(detail::inf_of_sign(ns_ < 0));
    if (o.is_infinite()) return *this;
    return Duration(ns_ % o.ns_);
  }
  // Negation swaps the infinities.
  constexpr Duration operator-() const {
    if (ns_ == detail::kMaxNs) return Duration(detail::kMinNs);
    if (ns_ == detail::kMinNs) return Duration(detail::kMaxNs);
    return Duration(-ns_);
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
// clock's epoch for SystemClock). SimTime::infinite() is the infinite future, "never" / "no
// limit"; SimTime::infinite_past() is its opposite. Both are sticky under arithmetic, with the
// same rules as Duration: infinite() - seconds(1) is still infinite(), a finite time plus an
// infinite duration is the infinity of the duration's sign, and the difference of a time and an
// infinity is an infinite Duration.
class SimTime {
 public:
  constexpr SimTime() = default;
  static constexpr SimTime from_ns(int64_t ns) { return SimTime(ns); }
  static constexpr SimTime zero() { return SimTime(0); }
  static constexpr SimTime infinite() { return SimTime(detail::kMaxNs); }
  static constexpr SimTime infinite_past() { return SimTime(detail::kMinNs); }

  constexpr int64_t ns() const { return ns_; }
  // The infinite future only ("never"); see is_infinite_past().
  constexpr bool is_infinite() const { return ns_ == detail::kMaxNs; }
  constexpr bool is_infinite_past() const { return ns_ == detail::kMinNs; }
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

// Parses a duration written as decimal text to exact nanoseconds: "0.1", "250ms", "1.5s", "10m",
// "2h", "30us", "15ns"; a bare number is seconds. Surrounding spaces are allowed; a sign, an
// exponent, more than nine fractional digits below 1 ns, or an unknown unit are refused with a
// message that quotes the text (kInvalidArgument). Negative durations are refused.
Result<Duration> parse_duration(std::string_view text);

// Formats as seconds with up to nine decimals, trailing zeros dropped: "1.25", "0.001", "inf".
std::string format_seconds(Duration d);
std::string format_seconds(SimTime t);

}  // namespace fieldproof
