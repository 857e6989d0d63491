// Lists the functions of the project's sources longer than a limit, and fails when one that is
// not on the allow-list exceeds it. A function is measured from the line of its name to the line
// of its closing brace. Namespace, class and struct bodies are looked into; lambdas and local
// classes count as part of the function around them. The scan is lexical (no compiler): comments
// and literals are blanked first, then braces are matched.
//
//   function_length_lint --root DIR [--max N] [--report N] [--allowlist FILE] [DIR_UNDER_ROOT ...]
//   Exit 0: none over --max outside the allow-list; 1: some (listed, file:line, name, length);
//   2: bad usage. --report N also lists (without failing) every function over N lines.
//   An allow-list line is "path/file.cpp function_name  # why": that function may exceed --max.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "source_text.hpp"

namespace fs = std::filesystem;

namespace {

struct Function {
  std::string file;
  std::string name;
  int line = 0;
  int length = 0;
};

bool is_ident(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

bool has_word(const std::string& s, const std::string& w) {
  for (size_t p = s.find(w); p != std::string::npos; p = s.find(w, p + 1)) {
    const bool left = p == 0 || !is_ident(s[p - 1]);
    const bool right = p + w.size() >= s.size() || !is_ident(s[p + w.size()]);
    if (left && right) return true;
  }
  return false;
}

std::string trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// The name in front of the header's first '(' ("Foo::bar", "operator==", "run").
std::string name_of(const std::string& header) {
  const size_t paren = header.find('(');
  if (paren == std::string::npos) return "?";
  const size_t op = header.rfind("operator", paren);
  if (op != std::string::npos && (op == 0 || !is_ident(header[op - 1]))) {
    size_t b = op;
    while (b > 0 && (is_ident(header[b - 1]) || header[b - 1] == ':')) --b;
    // operator() has its name's parentheses before the parameters'.
    size_t end = header.compare(paren, 2, "()") == 0 ? header.find('(', paren + 2) : paren;
    if (end == std::string::npos) end = paren;
    std::string n = header.substr(b, end - b);
    n.erase(std::remove_if(n.begin(), n.end(), [](char c) { return c == ' '; }), n.end());
    return n;
  }
  size_t e = paren;
  while (e > 0 && header[e - 1] == ' ') --e;
  size_t b = e;
  while (b > 0 && (is_ident(header[b - 1]) || header[b - 1] == ':' || header[b - 1] == '~')) --b;
  const std::string n = header.substr(b, e - b);
  return n.empty() ? "(lambda)" : n;
}

enum class Scope { kTransparent, kFunction, kOpaque };

// Classifies the '{' that ends `header` (the text since the previous ';', '{' or '}').
Scope classify(const std::string& header) {
  const bool has_paren = header.find('(') != std::string::npos;
  if (has_word(header, "namespace")) return Scope::kTransparent;
  if (has_word(header, "extern") && !has_paren) return Scope::kTransparent;  // extern "C" {
  if (has_word(header, "enum")) return Scope::kOpaque;
  const bool class_head =
      has_word(header, "class") || has_word(header, "struct") || has_word(header, "union");
  if (class_head && !has_paren) return Scope::kTransparent;
  if (!has_paren) return Scope::kOpaque;  // an initializer: kTable = { ... }
  // After the parameters a function head has qualifiers, a trailing return type or a member
  // initializer list; "f(x) = {" or "= g(y) {" is not one.
  const std::string tail = header.substr(header.rfind(')') + 1);
  if (tail.find('=') != std::string::npos && tail.find("->") == std::string::npos) {
    return Scope::kOpaque;
  }
  return Scope::kFunction;
}

void scan(const std::string& rel, const std::string& code, std::vector<Function>& out) {
  std::vector<Scope> stack;  // the namespaces, classes and initializers around the position
  std::string header;
  int header_line = 0;  // line of the header's first non-space character
  int line = 1;
  int fn_depth = 0;  // braces open inside the function being measured
  Function current;
  for (char c : code) {
    if (c == '\n') {
      ++line;
      if (fn_depth == 0) header += ' ';
      continue;
    }
    if (fn_depth > 0) {
      if (c == '{') {
        ++fn_depth;
      } else if (c == '}' && --fn_depth == 0) {
        current.length = line - current.line + 1;
        out.push_back(current);
        header.clear();
      }
      continue;
    }
    if (c == '{') {
      const Scope s = classify(header);
      if (s == Scope::kFunction) {
        current = Function{rel, name_of(header), header_line, 0};
        fn_depth = 1;
      } else {
        stack.push_back(s);
      }
      header.clear();
      continue;
    }
    if (c == '}') {
      if (!stack.empty()) stack.pop_back();
      header.clear();
      continue;
    }
    if (!stack.empty() && stack.back() == Scope::kOpaque) continue;
    if (c == ';') {
      header.clear();
      continue;
    }
    // An access specifier ends a header too.
    if (c == ':') {
      const std::string h = trim(header);
      if (h == "public" || h == "private" || h == "protected") {
        header.clear();
        continue;
      }
    }
    if (header.find_first_not_of(' ') == std::string::npos && !std::isspace(c)) {
      header_line = line;
    }
    header += c;
  }
}

// Removes preprocessor lines (they hold no braces of interest and may hold unbalanced ones).
std::string drop_preprocessor(const std::string& code) {
  std::string out;
  std::istringstream in(code);
  std::string l;
  bool continued = false;
  while (std::getline(in, l)) {
    const size_t first = l.find_first_not_of(" \t");
    const bool pp = continued || (first != std::string::npos && l[first] == '#');
    continued = pp && !l.empty() && l.back() == '\\';
    out += pp ? std::string() : l;
    out += '\n';
  }
  return out;
}

bool is_source(const fs::path& p) {
  const std::string e = p.extension().string();
  return e == ".cpp" || e == ".hpp" || e == ".cc" || e == ".h";
}

}  // namespace

int main(int argc, char** argv) {
  fs::path root;
  fs::path allowlist;
  int max_lines = 150;
  int report_lines = 0;
  std::vector<std::string> dirs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--root" && i + 1 < argc) {
      root = argv[++i];
    } else if (a == "--allowlist" && i + 1 < argc) {
      allowlist = argv[++i];
    } else if ((a == "--max" || a == "--report") && i + 1 < argc) {
      char* end = nullptr;
      const long v = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || v <= 0 || v > 100000) {
        std::cerr << "function_length_lint: " << a << " takes a positive number of lines\n";
        return 2;
      }
      (a == "--max" ? max_lines : report_lines) = static_cast<int>(v);
    } else if (a == "-h" || a == "--help") {
      std::cout << "usage: function_length_lint --root DIR [--max N] [--report N] "
                   "[--allowlist FILE] [DIR ...]\n";
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      std::cerr << "function_length_lint: unknown option " << a << "\n";
      return 2;
    } else {
      dirs.push_back(a);
    }
  }
  if (root.empty()) {
    std::cerr << "usage: function_length_lint --root DIR [--max N] [--allowlist FILE] [DIR ...]\n";
    return 2;
  }
  if (dirs.empty()) dirs = {"src"};

  std::set<std::string> allowed;  // "path name"
  if (!allowlist.empty()) {
    std::ifstream in(allowlist);
    if (!in) {
      std::cerr << "function_length_lint: cannot read the allow-list " << allowlist << "\n";
      return 2;
    }
    std::string l;
    while (std::getline(in, l)) {
      l = l.substr(0, l.find('#'));
      std::istringstream words(l);
      std::string path;
      std::string name;
      if (words >> path >> name) allowed.insert(path + " " + name);
    }
  }

  std::vector<fs::path> files;
  for (const auto& d : dirs) {
    std::error_code ec;
    const fs::path dir = root / d;
    if (!fs::is_directory(dir, ec)) {
      std::cerr << "function_length_lint: no folder " << dir << "\n";
      return 2;
    }
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
      if (it->is_regular_file(ec) && is_source(it->path())) files.push_back(it->path());
    }
  }
  std::sort(files.begin(), files.end());

  std::vector<Function> all;
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string code =
        drop_preprocessor(fieldproof::lint::strip_comments_and_literals(ss.str()));
    scan(fs::relative(f, root).generic_string(), code, all);
  }
  std::sort(all.begin(), all.end(),
            [](const Function& a, const Function& b) { return a.length > b.length; });

  int failures = 0;
  int listed = 0;
  for (const auto& fn : all) {
    const bool over = fn.length > max_lines;
    const bool ok = allowed.count(fn.file + " " + fn.name) > 0;
    if (over && !ok) {
      std::cout << fn.file << ":" << fn.line << ": " << fn.name << " is " << fn.length
                << " lines (limit " << max_lines << "): split it into functions named after "
                << "its steps\n";
      ++failures;
    } else if ((over && ok) || (report_lines > 0 && fn.length > report_lines)) {
      std::cout << fn.file << ":" << fn.line << ": " << fn.name << " is " << fn.length
                << " lines" << (over ? " (allow-listed: to be split)" : "") << "\n";
      ++listed;
    }
  }
  std::cout << files.size() << " files, " << all.size() << " functions; " << failures
            << " over " << max_lines << " lines outside the allow-list\n";
  return failures == 0 ? 0 : 1;
}
