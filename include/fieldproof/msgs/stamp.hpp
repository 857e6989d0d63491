// Exact conversion between SimTime (int64 ns) and the sec/nsec pair of ignition.msgs.Time.
//
//   auto t = fieldproof::msgs::to_sec_nsec(SimTime::from_ns(-1));  // {-1, 999'999'999}
//   SimTime back = fieldproof::msgs::from_sec_nsec(t.sec, t.nsec); // -1 ns again
#pragma once

#include <cstdint>

#include "fieldproof/time/duration.hpp"

namespace fieldproof::msgs {

struct SecNsec {
  int64_t sec = 0;
  int32_t nsec = 0;  // always in [0, 1e9): negative times borrow from sec
};

constexpr SecNsec to_sec_nsec(SimTime t) {
  int64_t sec = t.ns() / 1'000'000'000;
  int64_t rem = t.ns() % 1'000'000'000;
  if (rem < 0) {
    rem += 1'000'000'000;
    sec -= 1;
  }
  return SecNsec{sec, static_cast<int32_t>(rem)};
}

// nsec outside [0, 1e9) is accepted and carried; the result saturates instead of wrapping.
constexpr SimTime from_sec_nsec(int64_t sec, int32_t nsec) {
  return SimTime::from_ns(detail::sat_add(detail::sat_mul(sec, 1'000'000'000), nsec));
}

}  // namespace fieldproof::msgs
