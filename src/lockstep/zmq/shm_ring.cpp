// Shared-memory rings (shm_ring.hpp). Wake-ups: a consumer about to sleep sets `sleeping`, then
// re-checks the published position, then FUTEX_WAITs on `seq`; a producer publishes its position,
// then wakes only when `sleeping` is set (both sides use sequentially consistent accesses, so at
// least one sees the other). A busy pair makes no system call.
#include "shm_ring.hpp"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <ctime>

namespace fieldproof::lockstep::shm {
namespace {

constexpr uint32_t kMoreBit = 0x8000'0000u;
constexpr uint32_t kLenMask = 0x7FFF'FFFFu;

static_assert(std::atomic<uint64_t>::is_always_lock_free);
static_assert(std::atomic<uint32_t>::is_always_lock_free);

void futex_wait(std::atomic<uint32_t>* word, uint32_t expected, Duration timeout) {
  timespec ts{};
  timespec* tp = nullptr;
  if (!timeout.is_infinite()) {
    int64_t ns = timeout.ns() < 0 ? 0 : timeout.ns();
    ts.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
    ts.tv_nsec = static_cast<long>(ns % 1'000'000'000);
    tp = &ts;
  }
  // Not FUTEX_PRIVATE: the word is in memory shared with another process.
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, expected, tp, nullptr, 0);
}

void futex_wake(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

// Copies n bytes at ring position pos (wrapping) out / in.
void copy_out(const char* data, uint32_t cap, uint64_t pos, char* dst, size_t n) {
  const size_t at = static_cast<size_t>(pos & (cap - 1));
  const size_t first = std::min(n, static_cast<size_t>(cap) - at);
  std::memcpy(dst, data + at, first);
  if (first < n) std::memcpy(dst + first, data, n - first);
}

void copy_in(char* data, uint32_t cap, uint64_t pos, const char* src, size_t n) {
  const size_t at = static_cast<size_t>(pos & (cap - 1));
  const size_t first = std::min(n, static_cast<size_t>(cap) - at);
  std::memcpy(data + at, src, first);
  if (first < n) std::memcpy(data, src + first, n - first);
}

bool power_of_two(size_t v) { return v != 0 && (v & (v - 1)) == 0; }

}  // namespace

std::string to_hex(const uint8_t* bytes, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  s.reserve(2 * n);
  for (size_t i = 0; i < n; ++i) {
    s += kDigits[bytes[i] >> 4];
    s += kDigits[bytes[i] & 15];
  }
  return s;
}

Result<std::unique_ptr<Segment>> Segment::create(size_t ring_bytes) {
  if (!power_of_two(ring_bytes) || ring_bytes < kMinRingBytes || ring_bytes > kMaxRingBytes) {
    return Status(StatusCode::kInvalidArgument,
                  "ring size " + std::to_string(ring_bytes) + " is not a power of two within [" +
                      std::to_string(kMinRingBytes) + ", " + std::to_string(kMaxRingBytes) + "]");
  }
  std::unique_ptr<Segment> s(new Segment());
  s->fd_ = static_cast<int>(
      syscall(SYS_memfd_create, "fieldproof-lockstep-shm", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (s->fd_ < 0) {
    return Status(StatusCode::kIoError, std::string("memfd_create: ") + std::strerror(errno));
  }
  s->size_ = sizeof(SegmentHeader) + 2 * ring_bytes;
  s->ring_bytes_ = static_cast<uint32_t>(ring_bytes);
  if (::ftruncate(s->fd_, static_cast<off_t>(s->size_)) != 0 ||
      ::fcntl(s->fd_, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    return Status(StatusCode::kIoError,
                  std::string("sizing or sealing the segment: ") + std::strerror(errno));
  }
  void* p = ::mmap(nullptr, s->size_, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd_, 0);
  if (p == MAP_FAILED) {
    return Status(StatusCode::kIoError, std::string("mmap: ") + std::strerror(errno));
  }
  s->base_ = p;
  SegmentHeader& h = s->header();  // the memfd is zero-filled: positions and flags start at 0
  h.magic = kMagic;
  h.version = kLayoutVersion;
  h.ring_bytes = s->ring_bytes_;
  if (::getrandom(h.token, kTokenBytes, 0) != static_cast<ssize_t>(kTokenBytes)) {
    return Status(StatusCode::kIoError, std::string("getrandom: ") + std::strerror(errno));
  }
  return Result<std::unique_ptr<Segment>>(std::move(s));
}

Result<std::unique_ptr<Segment>> Segment::open(const std::string& path,
                                               const std::string& token_hex) {
  std::unique_ptr<Segment> s(new Segment());
  s->fd_ = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (s->fd_ < 0) {
    return Status(StatusCode::kIoError, "cannot open " + path + ": " + std::strerror(errno));
  }
  const int seals = ::fcntl(s->fd_, F_GET_SEALS);
  if (seals < 0 || (seals & F_SEAL_SHRINK) == 0) {
    return Status(StatusCode::kCorrupt, path + " is not a memfd sealed against shrinking");
  }
  struct stat st{};
  if (::fstat(s->fd_, &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<size_t>(st.st_size) < sizeof(SegmentHeader) + 2 * kMinRingBytes ||
      static_cast<size_t>(st.st_size) > sizeof(SegmentHeader) + 2 * kMaxRingBytes) {
    return Status(StatusCode::kCorrupt, path + " has an impossible size");
  }
  s->size_ = static_cast<size_t>(st.st_size);
  void* p = ::mmap(nullptr, s->size_, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd_, 0);
  if (p == MAP_FAILED) {
    return Status(StatusCode::kIoError, std::string("mmap: ") + std::strerror(errno));
  }
  s->base_ = p;
  const SegmentHeader& h = s->header();
  const uint32_t rb = h.ring_bytes;
  if (h.magic != kMagic || h.version != kLayoutVersion || !power_of_two(rb) ||
      rb < kMinRingBytes || rb > kMaxRingBytes ||
      s->size_ != sizeof(SegmentHeader) + 2 * static_cast<size_t>(rb)) {
    return Status(StatusCode::kCorrupt, path + " is not a fieldproof segment of layout version " +
                                            std::to_string(kLayoutVersion));
  }
  if (to_hex(h.token, kTokenBytes) != token_hex) {
    return Status(StatusCode::kCorrupt, path + " does not carry the token the coordinator sent");
  }
  s->ring_bytes_ = rb;
  return Result<std::unique_ptr<Segment>>(std::move(s));
}

Segment::~Segment() {
  if (base_ != nullptr) ::munmap(base_, size_);
  if (fd_ >= 0) ::close(fd_);
}

std::string Segment::token_hex() const {
  return to_hex(static_cast<const SegmentHeader*>(base_)->token, kTokenBytes);
}

std::string Segment::proc_path() const {
  return "/proc/" + std::to_string(::getpid()) + "/fd/" + std::to_string(fd_);
}

// ---- producer -------------------------------------------------------------------------------

Status Producer::push(std::string frame) {
  if (frame.empty()) return Status();  // no frame encodes to nothing
  queue_.push_back(std::move(frame));
  return flush();
}

Status Producer::flush() {
  if (queue_.empty()) return Status();
  const uint64_t read = c_.read_pos.load(std::memory_order_acquire);
  if (read > write_pos_ || write_pos_ - read > cap_) {
    return Status(StatusCode::kCorrupt, "the consumer's read position " + std::to_string(read) +
                                            " is impossible (written " +
                                            std::to_string(write_pos_) + ", ring " +
                                            std::to_string(cap_) + " bytes)");
  }
  uint64_t free = cap_ - (write_pos_ - read);
  const uint64_t before = write_pos_;
  while (!queue_.empty() && free > 4) {
    const std::string& f = queue_.front();
    const size_t rem = f.size() - offset_;
    const size_t chunk = static_cast<size_t>(std::min<uint64_t>(
        {static_cast<uint64_t>(rem), free - 4, static_cast<uint64_t>(kLenMask)}));
    uint32_t header = static_cast<uint32_t>(chunk) | (chunk < rem ? kMoreBit : 0u);
    char hb[4];
    std::memcpy(hb, &header, 4);  // x86-64 / aarch64 Linux: little-endian
    copy_in(data_, cap_, write_pos_, hb, 4);
    copy_in(data_, cap_, write_pos_ + 4, f.data() + offset_, chunk);
    write_pos_ += 4 + chunk;
    free -= 4 + chunk;
    offset_ += chunk;
    if (offset_ == f.size()) {
      queue_.pop_front();
      offset_ = 0;
    }
  }
  if (write_pos_ != before) {
    c_.write_pos.store(write_pos_, std::memory_order_seq_cst);
    if (bell_.sleeping.load(std::memory_order_seq_cst) != 0) {
      bell_.seq.fetch_add(1, std::memory_order_seq_cst);
      futex_wake(&bell_.seq);
    }
  }
  return Status();
}

// ---- consumer -------------------------------------------------------------------------------

Next Consumer::next(std::string& out) {
  if (!status_.ok()) return Next::kCorrupt;
  auto fail = [&](std::string why) {
    status_ = Status(StatusCode::kCorrupt, std::move(why));
    return Next::kCorrupt;
  };
  while (true) {
    const uint64_t written = c_.write_pos.load(std::memory_order_acquire);
    if (written == read_pos_) return Next::kEmpty;
    if (written < read_pos_ || written - read_pos_ > cap_) {
      return fail("published position " + std::to_string(written) + " is impossible (read " +
                  std::to_string(read_pos_) + ", ring " + std::to_string(cap_) + " bytes)");
    }
    const uint64_t avail = written - read_pos_;
    if (avail < 5) {
      return fail("published " + std::to_string(avail) + " bytes, less than a record");
    }
    char hb[4];
    copy_out(data_, cap_, read_pos_, hb, 4);
    uint32_t header = 0;
    std::memcpy(&header, hb, 4);
    const uint32_t len = header & kLenMask;
    if (len == 0 || len > avail - 4) {
      return fail("a record of " + std::to_string(len) + " bytes at position " +
                  std::to_string(read_pos_) + " where " + std::to_string(avail - 4) +
                  " were published");
    }
    if (partial_.size() + len > max_) {
      return fail("a frame of more than " + std::to_string(max_) + " bytes");
    }
    const size_t at = partial_.size();
    partial_.resize(at + len);
    copy_out(data_, cap_, read_pos_ + 4, partial_.data() + at, len);
    read_pos_ += 4 + len;
    c_.read_pos.store(read_pos_, std::memory_order_release);
    if ((header & kMoreBit) == 0) {
      out.swap(partial_);
      partial_.clear();
      return Next::kFrame;
    }
  }
}

void Consumer::wait(Duration timeout) {
  // Only the shared words: wait() runs without the lock that next() runs under. A read position
  // a stranger changed only makes this return early; next() then sees what is really there.
  const uint32_t s = c_.seq.load(std::memory_order_seq_cst);
  c_.sleeping.store(1, std::memory_order_seq_cst);
  if (c_.write_pos.load(std::memory_order_seq_cst) ==
      c_.read_pos.load(std::memory_order_seq_cst)) {
    futex_wait(&c_.seq, s, timeout);
  }
  c_.sleeping.store(0, std::memory_order_relaxed);
}

void bell_wait(RingControl& bell, uint32_t seen_seq, Duration timeout) {
  futex_wait(&bell.seq, seen_seq, timeout);
  bell.sleeping.store(0, std::memory_order_relaxed);
}

void bell_ring(RingControl& bell) {
  bell.seq.fetch_add(1, std::memory_order_seq_cst);
  futex_wake(&bell.seq);
}

bool Consumer::spin_for_data(int rounds) const {
  for (int i = 0; i < rounds; ++i) {
    if (c_.write_pos.load(std::memory_order_acquire) != c_.read_pos.load(std::memory_order_relaxed)) {
      return true;
    }
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  return false;
}

void Consumer::wake() {
  c_.seq.fetch_add(1, std::memory_order_seq_cst);
  futex_wake(&c_.seq);
}

}  // namespace fieldproof::lockstep::shm
