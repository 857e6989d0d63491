// A 4-ary min-heap over a std::vector of small trivially-copyable entries: shallower than a binary
// heap (log4 n levels) and four children share a cache line, so pop and replace-top touch less
// memory. Private to the time part (SimClock timers, Bus queue).
#pragma once

#include <cstddef>
#include <vector>

namespace fieldproof::detail {

inline constexpr size_t kHeapArity = 4;

template <typename T, typename Less>
inline void heap_sift_up(std::vector<T>& v, size_t i, const T x, Less less) {
  while (i > 0) {
    const size_t p = (i - 1) / kHeapArity;
    if (!less(x, v[p])) break;
    v[i] = v[p];
    i = p;
  }
  v[i] = x;
}

// The smallest of the children c .. min(c + 4, n) - 1 (c < n). A full set of four is compared
// as a tournament, two independent comparisons first, which pipelines better than a chain.
template <typename T, typename Less>
inline size_t heap_min_child(const std::vector<T>& v, size_t c, size_t n, Less less) {
  if (c + 3 < n) {
    const size_t a = less(v[c + 1], v[c]) ? c + 1 : c;
    const size_t b = less(v[c + 3], v[c + 2]) ? c + 3 : c + 2;
    return less(v[b], v[a]) ? b : a;
  }
  size_t m = c;
  for (size_t k = c + 1; k < n; ++k) {
    if (less(v[k], v[m])) m = k;
  }
  return m;
}

template <typename T, typename Less>
inline void heap_sift_down(std::vector<T>& v, size_t i, const T x, Less less) {
  const size_t n = v.size();
  for (;;) {
    const size_t c = i * kHeapArity + 1;
    if (c >= n) break;
    const size_t m = heap_min_child(v, c, n, less);
    if (!less(v[m], x)) break;
    v[i] = v[m];
    i = m;
  }
  v[i] = x;
}

template <typename T, typename Less>
inline void heap_push(std::vector<T>& v, const T& x, Less less) {
  v.push_back(x);
  heap_sift_up(v, v.size() - 1, x, less);
}

template <typename T, typename Less>
inline void heap_pop(std::vector<T>& v, Less less) {
  const T x = v.back();
  v.pop_back();
  if (!v.empty()) heap_sift_down(v, 0, x, less);
}

// Replaces the top by x: one sift-down instead of a pop and a push.
template <typename T, typename Less>
inline void heap_replace_top(std::vector<T>& v, const T& x, Less less) {
  heap_sift_down(v, 0, x, less);
}

// Restores the heap order of an arbitrary vector (Floyd's bottom-up build).
template <typename T, typename Less>
inline void heap_rebuild(std::vector<T>& v, Less less) {
  if (v.size() < 2) return;
  for (size_t i = (v.size() - 2) / kHeapArity + 1; i-- > 0;) heap_sift_down(v, i, v[i], less);
}

template <typename T, typename Less>
class DaryHeap {
 public:
  bool empty() const { return v_.empty(); }
  size_t size() const { return v_.size(); }
  const T& top() const { return v_.front(); }
  void reserve(size_t n) { v_.reserve(n); }
  void push(const T& x) { heap_push(v_, x, Less{}); }
  void pop() { heap_pop(v_, Less{}); }
  void replace_top(const T& x) { heap_replace_top(v_, x, Less{}); }

 private:
  std::vector<T> v_;
};

}  // namespace fieldproof::detail
