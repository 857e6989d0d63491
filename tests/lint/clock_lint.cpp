// The seed document's random-number and wall-clock linter (section 4 and pitfall 1 of section 9):
// fails, naming file:line, when project code outside the allow-list uses global or
// implementation-defined randomness (std::rand, srand, std::random_device, <random> engines and
// distributions) or reads the wall clock (system_clock, steady_clock, high_resolution_clock,
// time(), clock_gettime, gettimeofday). Comments and string literals are ignored.
//
//   clock_lint --root DIR --allowlist FILE [DIR_UNDER_ROOT ...]   (default: src include examples
//   bench). Exit 0: clean; 1: violations (listed); 2: bad usage.
#include <fnmatch.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "source_text.hpp"

namespace fs = std::filesystem;

namespace {

struct Rule {
  const char* pattern;
  const char* why;
  std::regex re;
};

std::vector<Rule> make_rules() {
  const char* kRandom = "global or implementation-defined randomness: use RandomSource";
  const char* kWall = "wall clock outside SystemClock: inject a WallNow (SystemClock::wall_now())";
  std::vector<std::pair<const char*, const char*>> specs = {
      {R"((^|[^A-Za-z0-9_.>])s?rand\s*\()", kRandom},
      {R"(\bstd::s?rand\b)", kRandom},
      {R"(\brandom_device\b)", kRandom},
      {R"(\b\w+_distribution\b)", kRandom},
      {R"(\b(mt19937(_64)?|minstd_rand0?|default_random_engine|ranlux\w*|knuth_b)\b)", kRandom},
      {R"(\b(linear_congruential|mersenne_twister|subtract_with_carry)_engine\b)", kRandom},
      {R"(#\s*include\s*<random>)", kRandom},
      {R"(\b(system_clock|steady_clock|high_resolution_clock)\b)", kWall},
      {R"(\b(std)?::time\s*\()", kWall},
      {R"((^|[^A-Za-z0-9_.>])time\s*\(\s*(nullptr|NULL|0|&))", kWall},
      {R"(\b(clock_gettime|gettimeofday|timespec_get)\s*\()", kWall},
  };
  std::vector<Rule> rules;
  for (auto& [p, w] : specs) rules.push_back(Rule{p, w, std::regex(p)});
  return rules;
}

struct AllowEntry {
  std::string glob;
  std::string why;
};

bool read_allowlist(const fs::path& file, std::vector<AllowEntry>& out) {
  std::ifstream in(file);
  if (!in) return false;
  std::string line;
  while (std::getline(in, line)) {
    std::string why;
    const size_t hash = line.find('#');
    if (hash != std::string::npos) {
      why = line.substr(hash + 1);
      line = line.substr(0, hash);
    }
    line.erase(0, line.find_first_not_of(" \t"));
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (!line.empty()) out.push_back(AllowEntry{line, why});
  }
  return true;
}

bool allowed(const std::string& rel, const std::vector<AllowEntry>& allow) {
  return std::any_of(allow.begin(), allow.end(), [&](const AllowEntry& e) {
    return fnmatch(e.glob.c_str(), rel.c_str(), 0) == 0;
  });
}

bool is_source(const fs::path& p) {
  static const std::vector<std::string> kExt = {".cpp", ".hpp", ".h",   ".cc",
                                                ".hh",  ".cxx", ".ipp", ".inl"};
  return std::find(kExt.begin(), kExt.end(), p.extension().string()) != kExt.end();
}

}  // namespace

int main(int argc, char** argv) {
  fs::path root;
  fs::path allowlist;
  std::vector<std::string> dirs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--root" && i + 1 < argc) {
      root = argv[++i];
    } else if (a == "--allowlist" && i + 1 < argc) {
      allowlist = argv[++i];
    } else if (!a.empty() && a[0] == '-') {
      std::cerr << "clock_lint: unknown option " << a << "\n";
      return 2;
    } else {
      dirs.push_back(a);
    }
  }
  if (root.empty()) {
    std::cerr << "usage: clock_lint --root DIR [--allowlist FILE] [DIR ...]\n";
    return 2;
  }
  if (dirs.empty()) dirs = {"src", "include", "examples", "bench"};
  std::vector<AllowEntry> allow;
  if (!allowlist.empty() && !read_allowlist(allowlist, allow)) {
    std::cerr << "clock_lint: cannot read the allow-list " << allowlist << "\n";
    return 2;
  }
  const std::vector<Rule> rules = make_rules();

  std::vector<fs::path> files;
  for (const auto& d : dirs) {
    const fs::path dir = root / d;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
      if (it->is_regular_file(ec) && is_source(it->path())) files.push_back(it->path());
    }
  }
  std::sort(files.begin(), files.end());

  size_t violations = 0;
  size_t scanned = 0;
  for (const auto& f : files) {
    const std::string rel = fs::relative(f, root).generic_string();
    if (allowed(rel, allow)) continue;
    ++scanned;
    std::ifstream in(f, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string original = ss.str();
    const std::string code = fieldproof::lint::strip_comments_and_literals(original);
    std::istringstream code_lines(code);
    std::istringstream orig_lines(original);
    std::string line;
    std::string orig;
    int n = 0;
    while (std::getline(code_lines, line)) {
      std::getline(orig_lines, orig);
      ++n;
      for (const auto& r : rules) {
        std::smatch m;
        if (std::regex_search(line, m, r.re)) {
          ++violations;
          orig.erase(0, orig.find_first_not_of(" \t"));
          std::cout << rel << ":" << n << ": " << r.why << "\n    " << orig << "\n";
          break;
        }
      }
    }
  }
  if (violations > 0) {
    std::cout << "clock_lint: " << violations << " violation(s) in " << scanned
              << " file(s); fix them or, for a real wall-clock reader, add the file to "
              << (allowlist.empty() ? std::string("the allow-list") : allowlist.string())
              << " with the reason\n";
    return 1;
  }
  std::cout << "clock_lint: " << scanned << " file(s) clean\n";
  return 0;
}
