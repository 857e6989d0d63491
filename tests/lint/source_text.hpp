// What the lints see of a C++ source: the text with comments and string, character and raw
// string literals blanked out (spaces), line breaks kept so that line numbers hold.
#pragma once

#include <cctype>
#include <string>

namespace fieldproof::lint {

// R"( starts a raw string when the R is not the end of a longer identifier (u8R, uR, UR and LR
// are the encoding prefixes).
inline bool raw_string_prefix_ok(const std::string& src, size_t i) {
  if (i == 0) return true;
  const char p = src[i - 1];
  if (p == 'u' || p == 'U' || p == 'L' || p == '8') return true;
  return !(std::isalnum(static_cast<unsigned char>(p)) || p == '_');
}

inline std::string strip_comments_and_literals(const std::string& src) {
  std::string out = src;
  enum class S { kCode, kLine, kBlock, kStr, kChr, kRaw } s = S::kCode;
  std::string raw_end;  // )delim" of the raw string being skipped
  auto blank = [&](size_t i) {
    if (out[i] != '\n') out[i] = ' ';
  };
  for (size_t i = 0; i < src.size(); ++i) {
    const char c = src[i];
    const char n = i + 1 < src.size() ? src[i + 1] : '\0';
    switch (s) {
      case S::kCode:
        if (c == '/' && n == '/') {
          s = S::kLine;
          out[i] = ' ';
        } else if (c == '/' && n == '*') {
          s = S::kBlock;
          out[i] = ' ';
        } else if (c == 'R' && n == '"' && raw_string_prefix_ok(src, i)) {
          const size_t open = src.find('(', i + 2);
          if (open == std::string::npos) break;
          raw_end = ")" + src.substr(i + 2, open - (i + 2)) + "\"";
          for (size_t k = i + 2; k <= open; ++k) blank(k);
          i = open;
          s = S::kRaw;
        } else if (c == '"') {
          // Keep #include <...> intact; only quoted text is blanked.
          s = S::kStr;
        } else if (c == '\'' && !(i > 0 && std::isxdigit(static_cast<unsigned char>(src[i - 1])))) {
          s = S::kChr;  // not a digit separator as in 1'000
        }
        break;
      case S::kLine:
        if (c == '\n') {
          s = S::kCode;
        } else {
          out[i] = ' ';
        }
        break;
      case S::kBlock:
        if (c == '*' && n == '/') {
          out[i] = ' ';
          out[i + 1] = ' ';
          ++i;
          s = S::kCode;
        } else {
          blank(i);
        }
        break;
      case S::kRaw:
        if (src.compare(i, raw_end.size(), raw_end) == 0) {
          for (size_t k = i; k + 1 < i + raw_end.size(); ++k) blank(k);
          i += raw_end.size() - 1;  // the closing quote stays
          s = S::kCode;
        } else {
          blank(i);
        }
        break;
      case S::kStr:
      case S::kChr:
        if (c == '\\' && n != '\0') {
          out[i] = ' ';
          if (n != '\n') out[i + 1] = ' ';
          ++i;
        } else if ((s == S::kStr && c == '"') || (s == S::kChr && c == '\'')) {
          s = S::kCode;
        } else if (c == '\n') {
          s = S::kCode;  // unterminated: recover at the end of the line
        } else {
          out[i] = ' ';
        }
        break;
    }
  }
  return out;
}

}  // namespace fieldproof::lint
