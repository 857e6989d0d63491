// A shared library's exported symbols from its ELF file (library_symbols.hpp): headers, the
// dynamic symbol table and its strings, every offset and size checked against the file.
#include "fieldproof/assertions/library_symbols.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace fieldproof::assertions {

namespace {

// Reads [offset, offset + size) of fd exactly.
bool read_at(int fd, uint64_t offset, void* out, size_t size, uint64_t file_size) {
  if (offset > file_size || size > file_size - offset) return false;
  auto* p = static_cast<char*>(out);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = pread(fd, p + done, size - done, static_cast<off_t>(offset + done));
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}


LibrarySymbols failed(std::string why) {
  LibrarySymbols s;
  s.error = std::move(why);
  return s;
}

}  // namespace

const LibrarySymbol* LibrarySymbols::find(std::string_view name) const {
  for (const LibrarySymbol& s : symbols) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

namespace {

// An ELF shared library's headers, read and checked (fd stays open for the caller's reads).
struct ElfFile {
  std::string error;
  int fd = -1;
  uint64_t size = 0;
  Elf64_Ehdr eh{};
  std::vector<Elf64_Shdr> sections;
  ~ElfFile() {
    if (fd >= 0) ::close(fd);
  }
};

void open_elf(const std::string& path, ElfFile& f) {
  // O_NONBLOCK: opening a FIFO does not wait for a writer; fstat then refuses it.
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (f.fd < 0) {
    f.error = "cannot open it: " + std::string(std::strerror(errno));
    return;
  }
  const int fd = f.fd;
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    f.error = "it is not a regular file";
    return;
  }
  const uint64_t size = f.size = static_cast<uint64_t>(st.st_size);
  constexpr const char* kNotElf = "it is not an ELF shared library";
  Elf64_Ehdr& eh = f.eh;
  if (!read_at(fd, 0, &eh, sizeof eh, size) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
    f.error = kNotElf;
    return;
  }
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB) {
    f.error = "it is not a 64-bit little-endian ELF library (this machine's kind)";
    return;
  }
  if (eh.e_type != ET_DYN) {
    f.error = "it is an ELF file but not a shared library";
    return;
  }
  if (eh.e_machine != EM_X86_64 && eh.e_machine != EM_AARCH64) {
    f.error = "it is built for another machine (e_machine " + std::to_string(eh.e_machine) + ")";
    return;
  }
  // A position-independent executable is ET_DYN too: it asks for a program interpreter.
  if (eh.e_phentsize == sizeof(Elf64_Phdr) && eh.e_phnum > 0 && eh.e_phnum < 4096) {
    std::vector<Elf64_Phdr> phdrs(eh.e_phnum);
    if (read_at(fd, eh.e_phoff, phdrs.data(), phdrs.size() * sizeof(Elf64_Phdr), size)) {
      for (const Elf64_Phdr& ph : phdrs) {
        if (ph.p_type == PT_INTERP) {
          f.error = "it is an executable program, not a shared library";
          return;
        }
      }
    }
  }
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 || eh.e_shnum > 65000) {
    f.error = "its section headers cannot be read";
    return;
  }
  f.sections.resize(eh.e_shnum);
  if (!read_at(fd, eh.e_shoff, f.sections.data(), f.sections.size() * sizeof(Elf64_Shdr),
               size)) {
    f.sections.clear();
    f.error = "its section headers are cut short";
  }
}

}  // namespace

LibrarySection read_library_section(const std::string& path, std::string_view name,
                                    uint64_t max_bytes) {
  LibrarySection out;
  ElfFile f;
  open_elf(path, f);
  if (!f.error.empty()) {
    out.error = f.error;
    return out;
  }
  if (f.eh.e_shstrndx == SHN_UNDEF || f.eh.e_shstrndx >= f.sections.size()) return out;
  const Elf64_Shdr& shstr = f.sections[f.eh.e_shstrndx];
  constexpr uint64_t kMaxNames = uint64_t{16} << 20;
  if (shstr.sh_type != SHT_STRTAB || shstr.sh_size > kMaxNames) {
    out.error = "its section names cannot be read";
    return out;
  }
  std::string names(shstr.sh_size, '\0');
  if (!read_at(f.fd, shstr.sh_offset, names.data(), names.size(), f.size)) {
    out.error = "its section names are cut short";
    return out;
  }
  for (const Elf64_Shdr& s : f.sections) {
    if (s.sh_name >= names.size()) continue;
    const char* p = names.data() + s.sh_name;
    if (std::string_view(p, strnlen(p, names.size() - s.sh_name)) != name) continue;
    out.found = true;
    if (s.sh_type == SHT_NOBITS) {
      out.error = "its section " + std::string(name) + " holds no bytes";
      return out;
    }
    if (s.sh_size > max_bytes) {
      out.error = "its section " + std::string(name) + " is " + std::to_string(s.sh_size) +
                  " bytes, larger than the " + std::to_string(max_bytes) + "-byte limit";
      return out;
    }
    out.bytes.assign(s.sh_size, '\0');
    if (!read_at(f.fd, s.sh_offset, out.bytes.data(), out.bytes.size(), f.size)) {
      out.bytes.clear();
      out.error = "its section " + std::string(name) + " is cut short";
    }
    return out;
  }
  return out;
}

LibrarySymbols read_library_symbols(const std::string& path) {
  ElfFile f;
  open_elf(path, f);
  if (!f.error.empty()) return failed(f.error);
  const int fd = f.fd;
  const uint64_t size = f.size;
  const std::vector<Elf64_Shdr>& sections = f.sections;
  const Elf64_Shdr* dynsym = nullptr;
  for (const Elf64_Shdr& s : sections) {
    if (s.sh_type == SHT_DYNSYM) dynsym = &s;
  }
  if (dynsym == nullptr || dynsym->sh_link >= sections.size() ||
      dynsym->sh_entsize != sizeof(Elf64_Sym)) {
    return failed("it exports no dynamic symbols");
  }
  const Elf64_Shdr& strtab = sections[dynsym->sh_link];
  constexpr uint64_t kMaxTable = uint64_t{64} << 20;
  if (dynsym->sh_size > kMaxTable || strtab.sh_size > kMaxTable) {
    return failed("its dynamic symbol table is implausibly large");
  }
  std::vector<Elf64_Sym> syms(dynsym->sh_size / sizeof(Elf64_Sym));
  std::string names(strtab.sh_size, '\0');
  if (!read_at(fd, dynsym->sh_offset, syms.data(), syms.size() * sizeof(Elf64_Sym), size) ||
      !read_at(fd, strtab.sh_offset, names.data(), names.size(), size)) {
    return failed("its dynamic symbol table is cut short");
  }
  LibrarySymbols out;
  for (const Elf64_Sym& s : syms) {
    if (s.st_shndx == SHN_UNDEF || s.st_name >= names.size()) continue;
    const unsigned bind = ELF64_ST_BIND(s.st_info);
    if (bind != STB_GLOBAL && bind != STB_WEAK) continue;
    if (ELF64_ST_VISIBILITY(s.st_other) != STV_DEFAULT &&
        ELF64_ST_VISIBILITY(s.st_other) != STV_PROTECTED) {
      continue;
    }
    LibrarySymbol sym;
    const char* p = names.data() + s.st_name;
    sym.name.assign(p, strnlen(p, names.size() - s.st_name));
    const unsigned type = ELF64_ST_TYPE(s.st_info);
    sym.kind = type == STT_FUNC || type == STT_GNU_IFUNC ? LibrarySymbol::Kind::kFunction
               : type == STT_OBJECT                      ? LibrarySymbol::Kind::kObject
                                                         : LibrarySymbol::Kind::kOther;
    sym.size = s.st_size;
    if (sym.kind == LibrarySymbol::Kind::kObject && s.st_size == sizeof(uint32_t) &&
        s.st_shndx < sections.size()) {
      const Elf64_Shdr& holder = sections[s.st_shndx];
      uint32_t value = 0;
      if (holder.sh_type != SHT_NOBITS && s.st_value >= holder.sh_addr &&
          read_at(fd, holder.sh_offset + (s.st_value - holder.sh_addr), &value, sizeof value,
                  size)) {
        sym.u32_value = value;
      }
    }
    out.symbols.push_back(std::move(sym));
  }
  return out;
}

}  // namespace fieldproof::assertions
