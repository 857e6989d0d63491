// Fixture run directories (tests/report/data/<name>) copied to a fresh temporary directory.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

namespace fieldproof::report::testing {

inline std::filesystem::path fresh_dir(const std::string& tag) {
  static std::atomic<int> n{0};
  const auto d =
      std::filesystem::path(::testing::TempDir()) /
      ("fieldproof_report_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

// A copy of the fixture run directory `name`, so tests may write into it.
inline std::filesystem::path fixture_copy(const std::string& name) {
  const auto d = fresh_dir(name) / name;
  std::filesystem::copy(std::filesystem::path(FIELDPROOF_REPORT_DATA) / name, d,
                        std::filesystem::copy_options::recursive);
  return d;
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

inline size_t count(const std::string& hay, const std::string& needle) {
  size_t n = 0;
  for (size_t p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

}  // namespace fieldproof::report::testing
