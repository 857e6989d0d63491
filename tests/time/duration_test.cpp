#include <gtest/gtest.h>

#include <string>

#include "fieldproof/time/duration.hpp"

namespace fieldproof {
namespace {

int64_t ns_of(std::string_view text) {
  auto p = parse_duration(text);
  EXPECT_TRUE(p) << text << ": " << (p ? "" : p.error());
  return p ? p.value().ns() : -1;
}

void expect_refused(std::string_view text, std::string_view reason) {
  auto p = parse_duration(text);
  ASSERT_FALSE(p) << "\"" << text << "\" was accepted as " << p.value().ns() << " ns";
  EXPECT_NE(p.error().find("\"" + std::string(text) + "\""), std::string::npos)
      << "the message must quote the text: " << p.error();
  EXPECT_NE(p.error().find(reason), std::string::npos) << p.error();
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
    ASSERT_TRUE(p) << p.error();
    EXPECT_EQ(p.value().ns(), ns);
  }
}

}  // namespace
}  // namespace fieldproof
