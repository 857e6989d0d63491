// What a shared library exports, read from its ELF dynamic symbol table without loading it: no
// constructor runs, so a plugin can be checked (by `fieldproof validate`, or before a dlopen) for
// its entry point and its ABI constant. Used for assertion plugins and, by the engine, for stack
// plugins.
//
//   LibrarySymbols s = read_library_symbols("libmy_stack.so");
//   if (!s.error.empty()) ...;                                // not a library we can read
//   const LibrarySymbol* e = s.find("fieldproof_stack_create");
//   if (!e || e->kind != LibrarySymbol::Kind::kFunction) ...;
//
// A section's bytes (read_library_section) are read the same way: how an assertion plugin's type
// tables, which it carries as data, reach `validate` without the plugin being loaded.
//
// Only regular files are read (a FIFO or a device is refused without blocking); sizes are checked
// against the file, so a damaged library is an error, never a crash.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fieldproof::assertions {

struct LibrarySymbol {
  enum class Kind { kFunction, kObject, kOther };
  std::string name;
  Kind kind = Kind::kOther;
  uint64_t size = 0;
  // A 4-byte object's stored value (read from the file), when it has one.
  std::optional<uint32_t> u32_value;
};

struct LibrarySymbols {
  std::string error;                   // "" or why the file is not a readable shared library
  std::vector<LibrarySymbol> symbols;  // defined, exported dynamic symbols

  const LibrarySymbol* find(std::string_view name) const;
};

LibrarySymbols read_library_symbols(const std::string& path);

// One section's bytes, by name (".fieldproof.assertions"), read from the file the same way.
struct LibrarySection {
  std::string error;  // "" or why the file or the section cannot be read
  bool found = false;  // the library has a section of that name
  std::string bytes;   // its contents (when found and error is "")
};

// A section larger than max_bytes is an error (nothing read).
LibrarySection read_library_section(const std::string& path, std::string_view name,
                                    uint64_t max_bytes);

}  // namespace fieldproof::assertions
