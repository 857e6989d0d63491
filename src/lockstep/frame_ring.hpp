// A growable ring of frames: push/pop without allocating once warm (a deque allocates blocks).
// Internal to the lock-step transports (the in-process links and the coordinator server's local
// links); not installed.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "fieldproof/lockstep/protocol.hpp"

namespace fieldproof::lockstep::detail {

class FrameRing {
 public:
  bool empty() const { return count_ == 0; }
  void push(Frame f) {
    if (count_ == buf_.size()) grow();
    buf_[(head_ + count_) % buf_.size()] = std::move(f);
    ++count_;
  }
  // f(frame) for each queued frame, oldest first.
  template <typename F>
  void for_each(F&& f) const {
    for (size_t i = 0; i < count_; ++i) f(buf_[(head_ + i) % buf_.size()]);
  }
  Frame pop() {
    Frame f = std::move(buf_[head_]);
    head_ = (head_ + 1) % buf_.size();
    --count_;
    return f;
  }

 private:
  void grow() {
    std::vector<Frame> bigger(buf_.empty() ? 16 : buf_.size() * 2);
    for (size_t i = 0; i < count_; ++i) bigger[i] = std::move(buf_[(head_ + i) % buf_.size()]);
    buf_ = std::move(bigger);
    head_ = 0;
  }
  std::vector<Frame> buf_;
  size_t head_ = 0;
  size_t count_ = 0;
};

}  // namespace fieldproof::lockstep::detail
