#include "fieldproof/time/duration.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace fieldproof {
namespace {

__extension__ typedef __int128 i128;

Result<Duration> refuse(std::string_view text, std::string_view why) {
  std::string m = "invalid duration \"";
  m.append(text);
  m += "\": ";
  m.append(why);
  m += " (expected a non-negative decimal number with an optional unit ns, us, ms, s, m or h, "
       "e.g. \"0.1\", \"250ms\", \"1.5s\", \"10m\"; a bare number is seconds)";
  return Status(StatusCode::kInvalidArgument, std::move(m));
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

Result<Duration> parse_duration(std::string_view text) {
  std::string_view s = text;
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  if (s.empty()) return refuse(text, "it is empty");
  if (s.front() == '-' || s.front() == '+') {
    return refuse(text, "a sign is not accepted (durations are never negative)");
  }

  size_t i = 0;
  i128 whole = 0;
  size_t whole_digits = 0;
  for (; i < s.size() && is_digit(s[i]); ++i, ++whole_digits) {
    whole = whole * 10 + (s[i] - '0');
    if (whole > detail::kMaxNs) return refuse(text, "the number is too large");
  }
  if (whole_digits == 0) return refuse(text, "it must start with a digit");

  std::string_view frac;
  if (i < s.size() && s[i] == '.') {
    ++i;
    const size_t start = i;
    while (i < s.size() && is_digit(s[i])) ++i;
    frac = s.substr(start, i - start);
    if (frac.empty()) return refuse(text, "a digit must follow the decimal point");
    if (i < s.size() && s[i] == '.') return refuse(text, "it has more than one decimal point");
  }
  while (frac.size() > 0 && frac.back() == '0') frac.remove_suffix(1);

  std::string_view unit = s.substr(i);
  while (!unit.empty() && is_space(unit.front())) unit.remove_prefix(1);
  if (!unit.empty() && (unit.front() == 'e' || unit.front() == 'E') && unit.size() > 1 &&
      (is_digit(unit[1]) || unit[1] == '-' || unit[1] == '+')) {
    return refuse(text, "exponents are not accepted");
  }
  if (!unit.empty() && unit.front() == '.')
    return refuse(text, "it has more than one decimal point");

  int64_t unit_ns = 0;
  if (unit.empty() || unit == "s") {
    unit_ns = 1'000'000'000;
  } else if (unit == "ms") {
    unit_ns = 1'000'000;
  } else if (unit == "us") {
    unit_ns = 1'000;
  } else if (unit == "ns") {
    unit_ns = 1;
  } else if (unit == "m") {
    unit_ns = 60LL * 1'000'000'000;
  } else if (unit == "h") {
    unit_ns = 3600LL * 1'000'000'000;
  } else {
    std::string why = "unknown unit \"";
    why.append(unit);
    why += "\"";
    return refuse(text, why);
  }

  i128 total = whole * unit_ns;
  if (total >= detail::kMaxNs) return refuse(text, "it overflows 64-bit nanoseconds");
  if (!frac.empty()) {
    // unit_ns <= 3.6e12, so a fraction with more than 13 significant digits cannot be whole ns.
    if (frac.size() > 13) return refuse(text, "it is finer than 1 ns");
    i128 digits = 0;
    i128 scale = 1;
    for (char c : frac) {
      digits = digits * 10 + (c - '0');
      scale *= 10;
    }
    const i128 num = digits * unit_ns;
    if (num % scale != 0) return refuse(text, "it is finer than 1 ns");
    total += num / scale;
    if (total >= detail::kMaxNs) return refuse(text, "it overflows 64-bit nanoseconds");
  }
  return Duration::from_ns(static_cast<int64_t>(total));
}

namespace {
std::string format_ns(int64_t ns) {
  if (ns == detail::kMaxNs) return "inf";
  if (ns == detail::kMinNs) return "-inf";
  std::string out;
  uint64_t mag = 0;
  if (ns < 0) {
    out = "-";
    mag = static_cast<uint64_t>(-(ns + 1)) + 1;
  } else {
    mag = static_cast<uint64_t>(ns);
  }
  out += std::to_string(mag / 1'000'000'000ULL);
  uint64_t frac = mag % 1'000'000'000ULL;
  if (frac != 0) {
    std::string f = std::to_string(frac);
    f.insert(0, 9 - f.size(), '0');
    while (f.back() == '0') f.pop_back();
    out += '.';
    out += f;
  }
  return out;
}
}  // namespace

std::string format_seconds(Duration d) { return format_ns(d.ns()); }
std::string format_seconds(SimTime t) { return format_ns(t.ns()); }

}  // namespace fieldproof
