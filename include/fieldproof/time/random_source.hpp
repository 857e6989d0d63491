// RandomSource: reproducible randomness from one root seed, the same numbers on every platform.
//
// The generator is xoshiro256** whose 256-bit state is filled by SplitMix64 from a 64-bit key.
// Distributions are written here (no <random> distributions, whose output differs between
// standard libraries), using only IEEE-754 +, -, *, / and sqrt plus an own log built from those,
// so the results are bit-identical wherever doubles are IEEE binary64 (no x87, no -ffast-math).
//
// Labels are hierarchical paths, "/<module>/<sub>/...". A child is derived from its parent's
// *key* (never from the parent's consumed state), one path component at a time:
//     key(root)        = seed
//     key(parent / c)  = splitmix64(key(parent) ^ splitmix64(fnv1a64(c)))
// where fnv1a64 is the 64-bit FNV-1a hash of the component's bytes. Consequences (tested):
//   * child("/a/b") == child("a/b") == child("a").child("b")  (empty components are ignored, so a
//     leading or doubled '/' does not matter);
//   * a child's numbers do not depend on when it was created or on how many numbers its parent or
//     siblings drew (ChildLabelsIndependentOfCreationOrder);
//   * RandomSource(seed, "/a/b") == RandomSource(seed).child("a/b").
// Use fixed labels: a label built from run-time data (a uuid, a pointer) breaks reproducibility.
//
//   RandomSource root(42);
//   RandomSource imu = root.child("/sensors/imu0/noise");
//   double n = imu.normal(0.0, 0.05);
//   int64_t k = imu.integers(1, 6);          // inclusive, unbiased
//   shuffle(v.begin(), v.end(), imu);        // our own Fisher-Yates; std::shuffle is not portable
//
// Not thread-safe: give each thread its own child.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

namespace fieldproof {

class RandomSource {
 public:
  // A UniformRandomBitGenerator view of a RandomSource, for algorithms that want one. It draws
  // from (and advances) the source it was made from, which must outlive it.
  class Bits {
   public:
    using result_type = uint64_t;
    explicit Bits(RandomSource& source) : source_(&source) {}
    static constexpr result_type min() { return 0; }
    static constexpr result_type max() { return std::numeric_limits<uint64_t>::max(); }
    result_type operator()() { return source_->next_u64(); }

   private:
    RandomSource* source_;
  };

  // `label` is normalised to "/c1/c2/..." ("/" for the root) and the key derived from `seed`
  // through its components as described above.
  explicit RandomSource(uint64_t seed = 0, std::string_view label = "/");

  // The root seed this source descends from (the same for every child of one tree).
  uint64_t seed() const { return seed_; }
  // The normalised label path, e.g. "/sensors/imu0/noise".
  const std::string& label() const { return label_; }
  // The 64-bit key the state was derived from (documented derivation above).
  uint64_t key() const { return key_; }

  // A fresh source for `label` relative to this one: child("a/b") has label this->label()+"/a/b".
  // Does not consume or depend on this source's state. child("") is a copy of the fresh state.
  RandomSource child(std::string_view label) const;

  // 64 uniformly distributed bits (xoshiro256**).
  uint64_t next_u64();
  // Uniform double in [0, 1) with 53 random bits.
  double uniform01();
  // Uniform double in [a, b) (a + (b - a) * u). a == b returns a.
  double uniform(double a, double b);
  // Normal (Gaussian) with mean mu and standard deviation sigma (Marsaglia polar method with an
  // own log, so bit-identical across libms). sigma < 0 throws TimeError.
  double normal(double mu, double sigma);
  // out[0 .. n) = n calls of normal(mu, sigma) in order: the same draws, values and state after
  // (the spare too), without a call and a sigma check per draw. For hot loops (a lidar scan's
  // noise). sigma < 0 throws TimeError before any draw.
  void normals(double* out, size_t n, double mu, double sigma);
  // Uniform integer in [low, high], both inclusive, unbiased (rejection sampling).
  // high < low throws TimeError.
  int64_t integers(int64_t low, int64_t high);
  // Uniform integer in [0, n), unbiased; n == 0 throws TimeError.
  uint64_t below(uint64_t n);

  // UniformRandomBitGenerator interface, so the source itself can be passed where one is wanted.
  using result_type = uint64_t;
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return std::numeric_limits<uint64_t>::max(); }
  result_type operator()() { return next_u64(); }
  Bits bits() { return Bits(*this); }

  // Same seed, label and state (and the same cached normal): the next numbers will be equal.
  friend bool operator==(const RandomSource& a, const RandomSource& b);

 private:
  RandomSource(uint64_t seed, std::string label, uint64_t key);
  void reset_state();

  uint64_t seed_ = 0;
  std::string label_;
  uint64_t key_ = 0;
  uint64_t s_[4] = {0, 0, 0, 0};
  bool has_spare_normal_ = false;
  double spare_normal_ = 0.0;
};

// Fisher-Yates shuffle driven by RandomSource::below: the same permutation on every platform
// (std::shuffle's algorithm is implementation-defined).
template <typename RandomIt>
void shuffle(RandomIt first, RandomIt last, RandomSource& rng) {
  using Diff = typename std::iterator_traits<RandomIt>::difference_type;
  const Diff n = last - first;
  for (Diff i = n - 1; i > 0; --i) {
    const auto j = static_cast<Diff>(rng.below(static_cast<uint64_t>(i) + 1));
    using std::swap;
    swap(first[i], first[j]);
  }
}

// The hash functions of the label derivation, exposed for documentation and tests.
uint64_t fnv1a64(std::string_view bytes);
uint64_t splitmix64_mix(uint64_t x);

}  // namespace fieldproof
