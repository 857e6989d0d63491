#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "fieldproof/time/duration.hpp"

namespace fieldproof {
namespace {

int64_t ns_of(std::string_view text) {
  auto p = parse_duration(text);
  EXPECT_TRUE(p.ok()) << text << ": " << (p.ok() ? "" : p.status().message());
  return p.ok() ? p.value().ns() : -1;
}

void expect_refused(std::string_view text, std::string_view reason) {
  auto p = parse_duration(text);
  ASSERT_FALSE(p.ok()) << "\"" << text << "\" was accepted as " << p.value().ns() << " ns";
  EXPECT_NE(p.status().message().find("\"" + std::string(text) + "\""), std::string::npos)
      << "the message must quote the text: " << p.status().message();
  EXPECT_NE(p.status().message().find(reason), std::string::npos) << p.status().message();
}

TEST(ParseDuration, BareNumberIsSeconds) {
  EXPECT_EQ(ns_of("2"), 2'000'000'000);
  EXPECT_EQ(ns_of("0"), 0);
}

TEST(ParseDuration, DecimalSecondsAreExact) {
  EXPECT_EQ(ns_of("0.1"), 100'000'000);  // 0.1 is not exact in binary floating point
  EXPECT_EQ(ns_of("1.5s"), 1'500'000'000);
  EXPECT_EQ(ns_of("0.000000001"), 1);
  EXPECT_EQ(ns_of("1.000000000000000000000"), 1'000'000'000);  // trailing zeros are exact
}

TEST(ParseDuration, AcceptsEveryUnit) {
  EXPECT_EQ(ns_of("15ns"), 15);
  EXPECT_EQ(ns_of("30us"), 30'000);
  EXPECT_EQ(ns_of("250ms"), 250'000'000);
  EXPECT_EQ(ns_of("3s"), 3'000'000'000);
  EXPECT_EQ(ns_of("10m"), 600'000'000'000);
  EXPECT_EQ(ns_of("2h"), 7'200'000'000'000);
  EXPECT_EQ(ns_of("0.5ms"), 500'000);
  EXPECT_EQ(ns_of("1.5us"), 1'500);
  EXPECT_EQ(ns_of("0.25h"), 900'000'000'000);
}

TEST(ParseDuration, AllowsSurroundingSpaces) {
  EXPECT_EQ(ns_of("  250ms  "), 250'000'000);
  EXPECT_EQ(ns_of("\t1.5 s\n"), 1'500'000'000);
}

TEST(ParseDuration, RefusesEmpty) {
  expect_refused("", "empty");
  expect_refused("   ", "empty");
}

TEST(ParseDuration, RefusesSigns) {
  expect_refused("-1s", "sign");
  expect_refused("+1s", "sign");
}

TEST(ParseDuration, RefusesExponents) {
  expect_refused("1e3", "exponent");
  expect_refused("1.5E-3s", "exponent");
}

TEST(ParseDuration, RefusesSeveralDecimalPoints) { expect_refused("1.2.3", "decimal point"); }

TEST(ParseDuration, RefusesMissingDigits) {
  expect_refused(".5", "digit");
  expect_refused("5.", "digit");
  expect_refused("ms", "digit");
}

TEST(ParseDuration, RefusesUnknownUnit) {
  expect_refused("10 parsecs", "unknown unit \"parsecs\"");
  expect_refused("1sec", "unknown unit");
  expect_refused("inf", "digit");
}

TEST(ParseDuration, RefusesFractionFinerThanOneNanosecond) {
  expect_refused("0.0000000001", "finer than 1 ns");
  expect_refused("1.5ns", "finer than 1 ns");
  expect_refused("0.0000000000001h", "finer than 1 ns");
}

TEST(ParseDuration, RefusesOverflow) {
  expect_refused("9223372037s", "overflow");
  expect_refused("99999999999999999999999", "too large");
  expect_refused("3000000h", "overflow");
}

TEST(FormatSeconds, DropsTrailingZeros) {
  EXPECT_EQ(format_seconds(milliseconds(1250)), "1.25");
  EXPECT_EQ(format_seconds(milliseconds(1)), "0.001");
  EXPECT_EQ(format_seconds(nanoseconds(1)), "0.000000001");
  EXPECT_EQ(format_seconds(Duration::zero()), "0");
  EXPECT_EQ(format_seconds(-milliseconds(1500)), "-1.5");
  EXPECT_EQ(format_seconds(Duration::infinite()), "inf");
  EXPECT_EQ(format_seconds(SimTime::from_ns(2'000'000'001)), "2.000000001");
}

TEST(FormatSeconds, RoundTripsThroughParse) {
  for (int64_t ns : {int64_t{0}, int64_t{1}, int64_t{999'999'999}, int64_t{123'456'789'012},
                     detail::kMaxNs - 1}) {
    auto p = parse_duration(format_seconds(Duration::from_ns(ns)));
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_EQ(p.value().ns(), ns);
  }
}

// abseil's contract for the arithmetic, one test per edge.
TEST(DurationArithmetic, InfinitiesAreSticky) {
  const Duration inf = Duration::infinite();
  EXPECT_EQ(inf + milliseconds(-1), inf);
  EXPECT_EQ(inf - milliseconds(1), inf);
  EXPECT_EQ(inf - inf, inf);  // the left operand's infinity wins, as in abseil
  EXPECT_EQ((-inf) + seconds(5), -inf);
  EXPECT_EQ((-inf) + inf, -inf);
  EXPECT_EQ(seconds(3) + inf, inf);
  EXPECT_EQ(seconds(3) - inf, -inf);
  EXPECT_EQ(seconds(3) - (-inf), inf);
  Duration d = inf;
  d -= hours(1'000'000);
  EXPECT_TRUE(d.is_infinite());
}

TEST(DurationArithmetic, NegationSwapsTheInfinities) {
  const Duration neg = -Duration::infinite();
  EXPECT_TRUE(neg.is_infinite());
  EXPECT_LT(neg, Duration::zero());
  EXPECT_EQ(neg.ns(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(-neg, Duration::infinite());
  EXPECT_EQ(format_seconds(neg), "-inf");
}

TEST(DurationArithmetic, OverflowSaturatesToTheInfinityOfItsSign) {
  const Duration big = Duration::from_ns(std::numeric_limits<int64_t>::max() - 10);
  EXPECT_EQ(big + nanoseconds(11), Duration::infinite());
  EXPECT_TRUE(((-big) - nanoseconds(11)).is_infinite());
  EXPECT_LT((-big) - nanoseconds(11), Duration::zero());
  EXPECT_EQ(seconds(1) * std::numeric_limits<int64_t>::max(), Duration::infinite());
  EXPECT_EQ(seconds(-1) * std::numeric_limits<int64_t>::max(), -Duration::infinite());
  EXPECT_EQ(hours(std::numeric_limits<int64_t>::max() / 1000), Duration::infinite());
  // Finite arithmetic well inside the range is exact.
  EXPECT_EQ((big - seconds(1)) + seconds(1), big);
}

TEST(DurationArithmetic, MultiplyingAnInfinityKeepsItInfinite) {
  EXPECT_EQ(Duration::infinite() * 0, Duration::infinite());
  EXPECT_EQ(Duration::infinite() * -2, -Duration::infinite());
  EXPECT_EQ((-Duration::infinite()) * -2, Duration::infinite());
  EXPECT_EQ(seconds(2) * 0, Duration::zero());
}

TEST(DurationArithmetic, DivisionByZeroIsInfinite) {
  EXPECT_EQ(seconds(1) / int64_t{0}, Duration::infinite());
  EXPECT_EQ(seconds(-1) / int64_t{0}, -Duration::infinite());
  EXPECT_EQ(Duration::zero() / int64_t{0}, Duration::infinite());
  EXPECT_EQ(Duration::infinite() / int64_t{-3}, -Duration::infinite());
  EXPECT_EQ(seconds(1) / Duration::zero(), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(seconds(-1) / Duration::zero(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(Duration::infinite() / seconds(1), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(Duration::infinite() / seconds(-1), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(seconds(5) / Duration::infinite(), 0);
  EXPECT_EQ(seconds(7) / seconds(2), 3);
  EXPECT_EQ(seconds(-7) / seconds(2), -3);
}

TEST(DurationArithmetic, RemainderFollowsTheQuotient) {
  EXPECT_EQ(seconds(7) % seconds(2), seconds(1));
  EXPECT_EQ(seconds(-7) % seconds(2), seconds(-1));
  EXPECT_EQ(seconds(7) % Duration::zero(), Duration::infinite());
  EXPECT_EQ(seconds(-7) % Duration::zero(), -Duration::infinite());
  EXPECT_EQ(Duration::infinite() % seconds(2), Duration::infinite());
  EXPECT_EQ(seconds(7) % Duration::infinite(), seconds(7));
}

TEST(SimTimeArithmetic, InfinitiesAreSticky) {
  const SimTime never = SimTime::infinite();
  EXPECT_EQ(never - milliseconds(1), never);
  EXPECT_EQ(never + milliseconds(-1), never);
  EXPECT_TRUE((never - seconds(1)).is_infinite());
  EXPECT_EQ(SimTime::from_ns(5) + Duration::infinite(), never);
  EXPECT_EQ(SimTime::from_ns(5) - Duration::infinite(), SimTime::infinite_past());
  EXPECT_TRUE(SimTime::infinite_past().is_infinite_past());
  EXPECT_FALSE(SimTime::infinite_past().is_infinite());
  EXPECT_EQ(SimTime::infinite_past() + hours(5), SimTime::infinite_past());
  EXPECT_EQ(never - SimTime::from_ns(123), Duration::infinite());
  EXPECT_EQ(SimTime::from_ns(123) - never, -Duration::infinite());
  EXPECT_EQ(SimTime::from_ns(5) + seconds(1), SimTime::from_ns(1'000'000'005));
}

}  // namespace
}  // namespace fieldproof
