// What every command checks before it reads a file a user named: that it is a
// regular file (a FIFO, a device such as /dev/zero, a directory or a socket is refused without
// being read or waited on) of at most a stated size, and, for text, that it is valid UTF-8 (the
// first bad byte located by line and column). Header-only: the scenario loader, the world front,
// the recording reader, report, compare, clock and the coordinator all use it.
//
//   Result<std::string> f = util::read_input_file(path, util::kMaxScenarioBytes, "the scenario");
//   if (!f.ok()) return f.status();   // "the scenario 'x.yaml' is a FIFO (named pipe) ..."
//   if (auto bad = util::first_invalid_utf8(*f)) {
//     const auto [line, column] = util::line_column(*f, *bad);   // where the first bad byte is
//   }
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "fieldproof/util/status.hpp"

namespace fieldproof::util {

// Size limits of what is read whole (a recording is streamed and has none).
inline constexpr uint64_t kMaxScenarioBytes = uint64_t{16} << 20;   // a scenario YAML
inline constexpr uint64_t kMaxWorldBytes = uint64_t{256} << 20;     // a world (SDF) file
inline constexpr uint64_t kMaxRunFileBytes = uint64_t{256} << 20;   // run.json, *.jsonl
inline constexpr uint64_t kMaxSmallFileBytes = uint64_t{1} << 20;   // control.json, key files
inline constexpr uint64_t kNoSizeLimit = UINT64_MAX;

// "16 MiB", "1.5 GiB", "300 bytes".
inline std::string format_bytes(uint64_t n) {
  if (n < 1024) return std::to_string(n) + " bytes";
  const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(n) / 1024;
  int u = 0;
  while (v >= 1024 && u < 5) {
    v /= 1024;
    ++u;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  std::string out = buf;
  if (out.size() > 2 && out.compare(out.size() - 2, 2, ".0") == 0) out.resize(out.size() - 2);
  return out + " " + units[u];
}

// What a file that is not a regular one is, for a message.
inline std::string file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// An open descriptor of a checked input (closed on destruction), or why not (status()).
class CheckedFile {
 public:
  // `what` names the role for messages ("the scenario", "run.json"). Opening never waits (a FIFO
  // is opened non-blocking and then refused).
  CheckedFile(const std::filesystem::path& path, uint64_t max_bytes, std::string_view what) {
    const std::string name = std::string(what) + " '" + path.string() + "'";
    fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd_ < 0) {
      const int err = errno;
      status_ = err == ENOENT ? Status(StatusCode::kNotFound, name + " does not exist")
                              : Status(StatusCode::kIoError,
                                       name + " cannot be opened: " + std::strerror(err));
      return;
    }
    struct stat st {};
    if (::fstat(fd_, &st) != 0) {
      status_ = Status(StatusCode::kIoError, name + " cannot be examined: " + std::strerror(errno));
      return;
    }
    if (!S_ISREG(st.st_mode)) {
      status_ = Status(StatusCode::kInvalidArgument, name + " is " + file_kind(st.st_mode) +
                                                         ", not a regular file; nothing was read");
      return;
    }
    size_ = static_cast<uint64_t>(st.st_size);
    max_ = max_bytes;
    if (size_ > max_bytes) {
      status_ = Status(StatusCode::kInvalidArgument, name + " is " + format_bytes(size_) +
                                                         ", larger than the " +
                                                         format_bytes(max_bytes) + " limit for " +
                                                         std::string(what) + "; nothing was read");
      return;
    }
    name_ = name;
    // Back to blocking reads (a regular file never blocks; keeps later readers simple).
    const int flags = ::fcntl(fd_, F_GETFL);
    if (flags >= 0) ::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK);
  }
  ~CheckedFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  CheckedFile(const CheckedFile&) = delete;
  CheckedFile& operator=(const CheckedFile&) = delete;

  // Ok when the file is open and within its limit; otherwise why not (kNotFound: it does not
  // exist; kIoError: it cannot be opened or examined; kInvalidArgument: not a regular file, or too
  // large). fd() is >= 0 when it was opened, refused or not.
  const Status& status() const { return status_; }
  int fd() const { return fd_; }
  uint64_t size() const { return size_; }
  // Gives the descriptor away (the caller closes it).
  int release() {
    const int f = fd_;
    fd_ = -1;
    return f;
  }

  // Reads the whole file, at most the limit (a file that grows past it, or a /proc file whose
  // size says 0, is cut off with an error). Not ok when the file was refused (status()).
  Result<std::string> read_all() {
    if (!status_.ok()) return status_;
    std::string out;
    char buf[65536];
    while (true) {
      const ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n < 0) {
        if (errno == EINTR) continue;
        return Status(StatusCode::kIoError, name_ + " cannot be read: " + std::strerror(errno));
      }
      if (n == 0) return out;
      if (out.size() + static_cast<uint64_t>(n) > max_) {
        return Status(StatusCode::kInvalidArgument,
                      name_ + " grew past the " + format_bytes(max_) + " limit while being read");
      }
      out.append(buf, static_cast<size_t>(n));
    }
  }

 private:
  int fd_ = -1;
  uint64_t size_ = 0;
  uint64_t max_ = 0;
  std::string name_;
  Status status_;
};

// Ok when `path` is a regular file of at most max_bytes; otherwise why not (see CheckedFile).
[[nodiscard]] inline Status check_input_file(const std::filesystem::path& path, uint64_t max_bytes,
                                             std::string_view what) {
  const CheckedFile f(path, max_bytes, what);
  return f.status();
}

// The whole content of a checked input file, or why it was not read (see CheckedFile).
inline Result<std::string> read_input_file(const std::filesystem::path& path, uint64_t max_bytes,
                                           std::string_view what) {
  CheckedFile f(path, max_bytes, what);
  return f.read_all();
}

// Lines of an open descriptor (a CheckedFile's), each at most max_line bytes: a longer line is
// skipped to its end and reported (a 3 GB file without a newline is never held whole).
//
//   util::LineReader lines(file.fd());
//   while (const auto line = lines.next()) {
//     if (line->too_long) { ...; continue; }
//     use(line->text);   // valid until the next call
//   }
class LineReader {
 public:
  // A line without its '\n'. too_long: it was longer than max_line, and text is empty. text
  // points into the reader and stays valid until the next call of next().
  struct Line {
    std::string_view text;
    bool too_long = false;
  };

  explicit LineReader(int fd, size_t max_line = size_t{16} << 20) : fd_(fd), max_line_(max_line) {}
  // The next line; nullopt at the end (or on a read error).
  std::optional<Line> next() {
    line_.clear();
    bool too_long = false;
    bool any = false;
    const auto done = [&]() -> std::optional<Line> {
      if (!any) return std::nullopt;
      return Line{line_, too_long};
    };
    while (true) {
      if (pos_ == len_) {
        if (eof_) return done();
        const ssize_t n = ::read(fd_, buf_, sizeof buf_);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          eof_ = true;
          if (any) ++number_;
          return done();
        }
        pos_ = 0;
        len_ = static_cast<size_t>(n);
      }
      any = true;
      const char* start = buf_ + pos_;
      const void* nl = std::memchr(start, '\n', len_ - pos_);
      const size_t take = nl ? static_cast<size_t>(static_cast<const char*>(nl) - start) : len_ - pos_;
      if (!too_long) {
        if (line_.size() + take > max_line_) {
          too_long = true;
          line_.clear();
        } else {
          line_.append(start, take);
        }
      }
      pos_ += take;
      if (nl) {
        ++pos_;
        ++number_;
        return done();
      }
    }
  }
  // The number of the line last returned (1-based).
  int line_number() const { return number_; }

 private:
  int fd_;
  size_t max_line_;
  std::string line_;
  char buf_[65536];
  size_t pos_ = 0;
  size_t len_ = 0;
  bool eof_ = false;
  int number_ = 0;
};

// The byte offset of the first invalid UTF-8 sequence (overlong forms, surrogates and code points
// above U+10FFFF included), or nullopt when `s` is valid.
inline std::optional<size_t> first_invalid_utf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = 0;
    uint32_t cp = 0;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
      cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      cp = c & 0x07;
    } else {
      return i;
    }
    if (i + len > n) return i;
    for (size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF)) {
      return i;
    }
    i += len;
  }
  return std::nullopt;
}

// Line and column (1-based; the column counts characters, a tab as one) of a byte offset.
inline std::pair<int, int> line_column(std::string_view s, size_t offset) {
  int line = 1;
  int column = 1;
  for (size_t i = 0; i < offset && i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '\n') {
      ++line;
      column = 1;
    } else if ((c & 0xC0) != 0x80) {
      ++column;
    }
  }
  return {line, column};
}

}  // namespace fieldproof::util
