// The same-host transport's shared memory: one segment per connection holding two
// single-producer single-consumer byte rings of encoded frames (the codec's bytes, unchanged),
// each with a futex word for wake-ups. Private to lockstep_zmq (the tests include it to corrupt
// a ring on purpose); docs/lockstep.md "Same-host shared memory" says how it is used.
//
//   auto seg = shm::Segment::create(1 << 20, &error);          // the coordinator, per connection
//   auto mine = shm::Segment::open(path, token, &error);        // the participant
//   shm::Producer out(seg->up(), seg->up_data(), seg->ring_bytes());
//   out.push(encode_frame(frame));                               // never blocks
//   shm::Consumer in(seg->down(), seg->down_data(), seg->ring_bytes(), max_bytes);
//   std::string bytes; if (in.next(bytes, &why) == shm::Next::kFrame) decode_frame(bytes);
//
// Record format: a u32 little-endian header, bit 31 = "more chunks of this frame follow", bits
// 0..30 the chunk's length (>= 1), then the chunk's bytes; records wrap around the ring's end.
// A frame larger than the free space is split into chunks, and what does not fit waits in the
// producer's own memory (pending()), so a sender never blocks.
//
// Trust: the memory is shared with another process, so the consumer keeps its own read position
// and reads each header once, validates it (a chunk within what was published, a frame within
// max_bytes, a published amount within the ring) and copies the bytes out before decoding: a
// corrupt ring gives Next::kCorrupt with a reason, never a read outside the mapping. The segment
// is a sealed memfd (no shrinking: a mapping cannot lose its pages under the reader).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>

#include "fieldproof/time/duration.hpp"
#include "fieldproof/util/status.hpp"

namespace fieldproof::lockstep::shm {

inline constexpr uint64_t kMagic = 0x314D485350444C46ULL;  // "FLDPSHM1" little-endian
inline constexpr uint32_t kLayoutVersion = 1;
inline constexpr size_t kMinRingBytes = size_t{4} << 10;
inline constexpr size_t kMaxRingBytes = size_t{64} << 20;
inline constexpr size_t kTokenBytes = 16;

// One direction. Positions count bytes since the start and never wrap (u64).
struct alignas(64) RingControl {
  std::atomic<uint64_t> write_pos;  // written by the producer
  char pad0[56];
  std::atomic<uint64_t> read_pos;  // written by the consumer
  char pad1[56];
  std::atomic<uint32_t> seq;       // the futex word: bumped to wake a sleeping consumer
  std::atomic<uint32_t> sleeping;  // the consumer is (about to be) in FUTEX_WAIT on seq
  char pad2[56];
};

struct SegmentHeader {
  uint64_t magic;
  uint32_t version;
  uint32_t ring_bytes;  // each ring's data size, a power of two
  uint8_t token[kTokenBytes];  // random, also sent in Welcome: the participant checks it
  char pad[32];
  RingControl up;    // participant -> coordinator
  RingControl down;  // coordinator -> participant
};

// The layout is part of the protocol (docs/protocol.md 5.1): it must not change silently.
static_assert(sizeof(RingControl) == 192);
static_assert(sizeof(SegmentHeader) == 64 + 2 * 192);

// A mapped segment: header, up data, down data.
class Segment {
 public:
  // A new sealed memfd of `ring_bytes` per direction (power of two within the limits above) with a
  // random token; kInvalidArgument (a ring size) or kIoError (a system call) saying why not.
  static Result<std::unique_ptr<Segment>> create(size_t ring_bytes);
  // Opens a segment another process created (`path` is /proc/PID/fd/FD), checking that it is
  // sealed against shrinking, its size, magic, version, ring size and token (hex); kIoError or
  // kCorrupt saying which check failed.
  static Result<std::unique_ptr<Segment>> open(const std::string& path,
                                               const std::string& token_hex);
  ~Segment();
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;

  SegmentHeader& header() { return *static_cast<SegmentHeader*>(base_); }
  RingControl& up() { return header().up; }
  RingControl& down() { return header().down; }
  char* up_data() { return static_cast<char*>(base_) + sizeof(SegmentHeader); }
  char* down_data() { return up_data() + ring_bytes_; }
  uint32_t ring_bytes() const { return ring_bytes_; }  // this side's copy, never re-read
  int fd() const { return fd_; }
  std::string token_hex() const;
  // "/proc/<this pid>/fd/<fd>": where the other process opens it.
  std::string proc_path() const;
  size_t mapped_bytes() const { return size_; }
  void* base() { return base_; }

 private:
  Segment() = default;
  void* base_ = nullptr;
  size_t size_ = 0;
  uint32_t ring_bytes_ = 0;
  int fd_ = -1;
};

// Writes frames into one ring. Not thread-safe: one producer (callers serialise).
class Producer {
 public:
  // `bell`: whose futex to wake when its reader sleeps (the coordinator's doorbell, shared by all
  // its rings towards it); null = this ring's own.
  Producer(RingControl& control, char* data, uint32_t capacity, RingControl* bell = nullptr)
      : c_(control), bell_(bell != nullptr ? *bell : control), data_(data), cap_(capacity) {}
  // Queues `frame` and writes what fits. kCorrupt when the consumer's read position is impossible
  // (saying why); nothing more is written.
  [[nodiscard]] Status push(std::string frame);
  // Writes what fits of the queue (after the consumer made room). Same result as push().
  [[nodiscard]] Status flush();
  // Frames not yet (completely) in the ring.
  size_t pending() const { return queue_.size(); }

 private:
  RingControl& c_;
  RingControl& bell_;
  char* data_;
  uint32_t cap_;
  uint64_t write_pos_ = 0;  // own copy: never read back from shared memory
  std::deque<std::string> queue_;
  size_t offset_ = 0;  // bytes of queue_.front() already written
};

enum class Next : uint8_t { kFrame, kEmpty, kCorrupt };

// Reads frames from one ring. Not thread-safe: one consumer.
class Consumer {
 public:
  Consumer(RingControl& control, char* data, uint32_t capacity, size_t max_frame_bytes)
      : c_(control), data_(data), cap_(capacity), max_(max_frame_bytes) {}
  // The next whole frame into `out`; kEmpty when none is complete yet; kCorrupt when the ring
  // holds something impossible (status() says what). After kCorrupt the consumer stays corrupt.
  Next next(std::string& out);
  // Ok, or kCorrupt saying what next() found impossible.
  const Status& status() const { return status_; }
  // Sleeps until the producer may have written, `timeout` passed or wake() was called. Returns at
  // once when data is already published. Reads only the shared words: may run beside next() on
  // another thread.
  void wait(Duration timeout);
  // Wakes a consumer sleeping in wait() (from any thread or process: closing).
  void wake();
  // Whether something was published that next() has not taken (a shared-word peek).
  bool published() const {
    return c_.write_pos.load(std::memory_order_seq_cst) != read_pos_;
  }
  // Spins up to `rounds` pause instructions (a few microseconds at most) for a publication before
  // the caller sleeps: a reply often comes that fast, and a futex sleep and wake-up costs far more.
  // Reads only the shared words (may run beside next()).
  bool spin_for_data(int rounds) const;

 private:
  RingControl& c_;
  char* data_;
  uint32_t cap_;
  size_t max_;
  uint64_t read_pos_ = 0;  // own copy
  std::string partial_;    // chunks of a frame whose last chunk has not come yet
  Status status_;          // kCorrupt once next() found the ring impossible
};

// A doorbell: one futex word many producers ring (the coordinator's single reader of all its
// rings sleeps on it). The protocol is a ring's: the sleeper sets `sleeping`, re-checks every
// ring, then waits on `seq`; a producer that published and sees `sleeping` bumps `seq` and wakes.
void bell_wait(RingControl& bell, uint32_t seen_seq, Duration timeout);
void bell_ring(RingControl& bell);

// Hex of bytes (the token in Welcome).
std::string to_hex(const uint8_t* bytes, size_t n);

}  // namespace fieldproof::lockstep::shm
