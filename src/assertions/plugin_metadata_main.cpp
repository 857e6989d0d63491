// fieldproof-plugin-metadata LIB [-o FILE]: loads one assertion plugin (its code runs: this is
// a build step of the plugin's author, cmake/fieldproof.cmake's fieldproof_assertion_plugin_tables)
// and prints its types' tables, which the build then embeds in the library's
// .fieldproof.assertions section so `fieldproof validate` never has to load it.
// Exit 0 written, 1 the output cannot be written, 2 the library is not a usable plugin.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "fieldproof/assertions/plugin.hpp"

namespace {

constexpr const char* kUsage =
    "usage: fieldproof-plugin-metadata LIBRARY [-o FILE]\n"
    "\n"
    "Load one assertion plugin (it runs) and print the tables of the types it registers as\n"
    "JSON, for its build to embed in the library's .fieldproof.assertions section (objcopy\n"
    "--add-section), so that `fieldproof validate` checks scenarios against them without loading\n"
    "the plugin.\n"
    "\n"
    "  -o FILE     write the tables to FILE instead of standard output\n"
    "  -h, --help  this text\n"
    "\n"
    "Exit: 0 written, 1 the output cannot be written, 2 not a usable assertion plugin.\n";

}  // namespace

int main(int argc, char** argv) {
  std::string library;
  std::string out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (a == "-o") {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "fieldproof-plugin-metadata: -o needs a file\n%s", kUsage);
        return 2;
      }
      out = argv[++i];
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "fieldproof-plugin-metadata: unknown option %s\n%s", a.c_str(), kUsage);
      return 2;
    } else if (library.empty()) {
      library = a;
    } else {
      std::fprintf(stderr, "fieldproof-plugin-metadata: one library only (%s)\n", a.c_str());
      return 2;
    }
  }
  if (library.empty()) {
    std::fprintf(stderr, "fieldproof-plugin-metadata: no library given\n%s", kUsage);
    return 2;
  }
  namespace fa = fieldproof::assertions;
  fa::PluginLoadOptions options;
  options.libraries = {library};
  options.compare_tables = false;  // a library built before may carry stale tables
  const fa::PluginSet set = fa::load_plugins(options);
  if (!set.ok()) {
    for (const auto& p : set.problems) std::fprintf(stderr, "%s\n", p.to_string().c_str());
    return 2;
  }
  std::vector<fieldproof::scenario::TypeSpec> specs;
  for (const auto& t : set.registry->assertions()) {
    if (!t.plugin.empty()) specs.push_back(t);
  }
  const std::string text = fa::plugin_tables_json(specs) + "\n";
  if (out.empty()) {
    std::fputs(text.c_str(), stdout);
    return 0;
  }
  std::ofstream f(out, std::ios::binary | std::ios::trunc);
  f << text;
  f.close();
  if (!f) {
    std::fprintf(stderr, "fieldproof-plugin-metadata: cannot write %s: %s\n", out.c_str(),
                 std::strerror(errno));
    return 1;
  }
  return 0;
}
