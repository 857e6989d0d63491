// Text helpers: tolerant field access, number formatting, escaping for XML, HTML and Markdown.
#include <cinttypes>
#include <cmath>
#include <cstdio>

#include "report/internal.hpp"

namespace fieldproof::report {

const json* field(const json& j, std::string_view key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return nullptr;
  return &*it;
}

std::optional<std::string> get_str(const json& j, std::string_view key) {
  const json* v = field(j, key);
  if (!v) return std::nullopt;
  if (v->is_string()) return v->get<std::string>();
  if (v->is_number() || v->is_boolean()) return show(*v);
  return std::nullopt;
}

std::optional<double> get_num(const json& j, std::string_view key) {
  const json* v = field(j, key);
  if (!v || !v->is_number()) return std::nullopt;
  return v->get<double>();
}

const json* first_field(const json& j, std::initializer_list<std::string_view> keys) {
  for (auto k : keys) {
    if (const json* v = field(j, k)) return v;
  }
  return nullptr;
}

std::string fmt_num(double v) {
  if (!std::isfinite(v)) return std::isnan(v) ? "NaN" : (v > 0 ? "inf" : "-inf");
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    char b[32];
    std::snprintf(b, sizeof b, "%" PRId64, static_cast<int64_t>(v));
    return b;
  }
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

std::string fmt_fixed3(double v) {
  if (!std::isfinite(v)) v = 0;
  char b[40];
  std::snprintf(b, sizeof b, "%.3f", v);
  return b;
}

std::string dump(const json& j, int indent) {
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

std::string show(const json& v) {
  if (v.is_null()) return kDash;
  if (v.is_string()) return valid_utf8(v.get_ref<const std::string&>());
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number_unsigned()) return std::to_string(v.get<uint64_t>());
  if (v.is_number()) return fmt_num(v.get<double>());
  return dump(v);
}

std::string show(const json* v) { return v ? show(*v) : std::string(kDash); }

std::string show_seconds(const json* v) {
  if (!v || !v->is_number()) return v ? show(*v) : std::string(kDash);
  return fmt_num(v->get<double>()) + " s";
}

std::string human_size(uint64_t bytes) {
  char b[48];
  if (bytes < 1024) {
    std::snprintf(b, sizeof b, "%" PRIu64 " B", bytes);
  } else if (bytes < 1024ull * 1024) {
    std::snprintf(b, sizeof b, "%.1f KiB", static_cast<double>(bytes) / 1024.0);
  } else if (bytes < 1024ull * 1024 * 1024) {
    std::snprintf(b, sizeof b, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  } else {
    std::snprintf(b, sizeof b, "%.2f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  }
  return b;
}

std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t n = 0;
    if (c < 0x80) {
      n = 1;
    } else if ((c & 0xE0) == 0xC0 && c >= 0xC2) {
      n = 2;
    } else if ((c & 0xF0) == 0xE0) {
      n = 3;
    } else if ((c & 0xF8) == 0xF0 && c <= 0xF4) {
      n = 4;
    }
    bool ok = n > 0 && i + n <= s.size();
    for (size_t k = 1; ok && k < n; ++k) {
      ok = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
    }
    if (ok && n == 3) {
      const auto c1 = static_cast<unsigned char>(s[i + 1]);
      ok = !(c == 0xE0 && c1 < 0xA0) && !(c == 0xED && c1 >= 0xA0);
    }
    if (ok && n == 4) {
      const auto c1 = static_cast<unsigned char>(s[i + 1]);
      ok = !(c == 0xF0 && c1 < 0x90) && !(c == 0xF4 && c1 >= 0x90);
    }
    if (ok) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

namespace {

// The shared loop of the XML and HTML escapers: the markup characters always, the apostrophe as
// `apos`; with `references_for_whitespace` newline, carriage return and tab become character
// references (XML attributes), otherwise newline and tab pass through. Other control characters
// cannot be carried at all (XML 1.0 refuses even their references) and are shown as \xNN text.
std::string escape_markup(std::string_view raw, const char* apos, bool references_for_whitespace) {
  const std::string s = valid_utf8(raw);
  std::string out;
  out.reserve(s.size() + 16);
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&':
        out += "&amp;";
        continue;
      case '<':
        out += "&lt;";
        continue;
      case '>':
        out += "&gt;";
        continue;
      case '"':
        out += "&quot;";
        continue;
      case '\'':
        out += apos;
        continue;
      default:
        break;
    }
    if (references_for_whitespace && (ch == '\n' || ch == '\r' || ch == '\t')) {
      out += ch == '\n' ? "&#10;" : ch == '\r' ? "&#13;" : "&#9;";
    } else if (!references_for_whitespace && (ch == '\n' || ch == '\t')) {
      out += ch;
    } else if (c < 0x20 || c == 0x7F) {
      char b[8];
      std::snprintf(b, sizeof b, "\\x%02X", c);
      out += b;
    } else {
      out += ch;
    }
  }
  return out;
}

}  // namespace

std::string xml_escape(std::string_view raw) { return escape_markup(raw, "&apos;", true); }

std::string html_escape(std::string_view raw) { return escape_markup(raw, "&#39;", false); }

std::string md_cell(std::string_view raw) {
  const std::string s = valid_utf8(raw);
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    const auto c = static_cast<unsigned char>(ch);
    if (ch == '|') {
      out += "\\|";
    } else if (ch == '\n') {
      out += "<br>";
    } else if (ch == '\r') {
    } else if (ch == '<') {
      out += "&lt;";
    } else if (c < 0x20 || c == 0x7F) {
      out += ' ';
    } else {
      out += ch;
    }
  }
  return out.empty() ? std::string(kDash) : out;
}

}  // namespace fieldproof::report
