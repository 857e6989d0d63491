// RandomSource: the seed document's section 4 and the dynamic-label pitfall of section 9.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <numeric>
#include <random>  // only for the std::uniform_random_bit_generator concept check
#include <set>
#include <vector>

#include "fieldproof/time/random_source.hpp"
#include "fieldproof/time/time_error.hpp"

namespace fieldproof {
namespace {

std::vector<uint64_t> draw(RandomSource r, int n) {
  std::vector<uint64_t> v;
  for (int i = 0; i < n; ++i) v.push_back(r.next_u64());
  return v;
}

TEST(RandomSource, SplitMix64MatchesTheReference) {
  // The first SplitMix64 output for state 0 (Vigna's reference implementation).
  EXPECT_EQ(splitmix64_mix(0), 0xe220a8397b1dcdafULL);
  // FNV-1a 64 reference values.
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
}

TEST(RandomSource, GoldenValuesSeed0) {
  RandomSource r(0);
  EXPECT_EQ(r.next_u64(), 0x99ec5f36cb75f2b4ULL);
  EXPECT_EQ(r.next_u64(), 0xbf6e1f784956452aULL);
  EXPECT_EQ(r.next_u64(), 0x1a5f849d4933e6e0ULL);
  RandomSource u(0);
  EXPECT_EQ(u.uniform(0.0, 1.0), 0.60126299941790484);
  EXPECT_EQ(u.uniform(0.0, 1.0), 0.74777409254723981);
  EXPECT_EQ(u.uniform(0.0, 1.0), 0.10301998939503632);
  RandomSource n(0);
  EXPECT_EQ(n.normal(0.0, 1.0), 0.5981026483626094);
  EXPECT_EQ(n.normal(0.0, 1.0), 1.4634599192204392);
  EXPECT_EQ(n.normal(0.0, 1.0), -0.89505255323799138);
  RandomSource k(0);
  std::vector<int64_t> ints;
  for (int i = 0; i < 5; ++i) ints.push_back(k.integers(1, 6));
  EXPECT_EQ(ints, (std::vector<int64_t>{3, 3, 5, 5, 4}));
}

TEST(RandomSource, GoldenValuesSeed42) {
  RandomSource r(42);
  EXPECT_EQ(r.next_u64(), 0x15780b2e0c2ec716ULL);
  EXPECT_EQ(r.next_u64(), 0x6104d9866d113a7eULL);
  RandomSource u(42);
  EXPECT_EQ(u.uniform(0.0, 1.0), 0.083862971059882163);
  EXPECT_EQ(u.uniform(0.0, 1.0), 0.37898025066266861);
  RandomSource n(42);
  EXPECT_EQ(n.normal(0.0, 1.0), -0.72621913824478568);
  EXPECT_EQ(n.normal(0.0, 1.0), -0.21119691823195985);
  EXPECT_EQ(n.normal(0.0, 1.0), 0.22162270150359331);
  RandomSource k(42);
  std::vector<int64_t> ints;
  for (int i = 0; i < 5; ++i) ints.push_back(k.integers(1, 6));
  EXPECT_EQ(ints, (std::vector<int64_t>{1, 1, 6, 6, 5}));
}

TEST(RandomSource, GoldenValuesChildLabel) {
  RandomSource imu = RandomSource(42).child("/sensors/imu0/noise");
  EXPECT_EQ(imu.label(), "/sensors/imu0/noise");
  EXPECT_EQ(imu.seed(), 42u);
  RandomSource r = imu;
  EXPECT_EQ(r.next_u64(), 0x6dd64c096583bbdcULL);
  EXPECT_EQ(r.next_u64(), 0x543113c58b7450acULL);
  RandomSource n = imu;
  EXPECT_EQ(n.normal(0.0, 1.0), -0.76325044595621661);
  EXPECT_EQ(n.normal(0.0, 1.0), -1.8409336762111654);
  RandomSource u = imu;
  EXPECT_EQ(u.uniform(0.0, 1.0), 0.42905116300018065);
  RandomSource k = imu;
  std::vector<int64_t> ints;
  for (int i = 0; i < 5; ++i) ints.push_back(k.integers(1, 6));
  EXPECT_EQ(ints, (std::vector<int64_t>{1, 5, 5, 5, 1}));
}

TEST(RandomSource, SameSeedSameSequence) {
  EXPECT_EQ(draw(RandomSource(123), 100), draw(RandomSource(123), 100));
}

TEST(RandomSource, DifferentSeedsDifferentSequences) {
  EXPECT_NE(draw(RandomSource(1), 4), draw(RandomSource(2), 4));
}

TEST(RandomSource, ChildLabelsIndependentOfCreationOrder) {
  RandomSource root1(9);
  RandomSource a1 = root1.child("/a");
  RandomSource b1 = root1.child("/b");
  RandomSource root2(9);
  for (int i = 0; i < 10; ++i) root2.next_u64();  // the parent's consumption does not matter
  RandomSource b2 = root2.child("/b");
  RandomSource a2 = root2.child("/a");
  EXPECT_EQ(draw(a1, 10), draw(a2, 10));
  EXPECT_EQ(draw(b1, 10), draw(b2, 10));
  EXPECT_NE(draw(a1, 10), draw(b1, 10));
}

TEST(RandomSource, ChildPathsComposeComponentByComponent) {
  RandomSource root(5);
  const auto expected = draw(root.child("/sensors/imu0"), 8);
  EXPECT_EQ(draw(root.child("sensors/imu0"), 8), expected);
  EXPECT_EQ(draw(root.child("sensors").child("imu0"), 8), expected);
  EXPECT_EQ(draw(root.child("//sensors//imu0/"), 8), expected);
  EXPECT_EQ(draw(RandomSource(5, "/sensors/imu0"), 8), expected);
  EXPECT_EQ(root.child("sensors").child("/imu0").label(), "/sensors/imu0");
}

TEST(RandomSource, ChildDependsOnlyOnLabelTextSoDynamicLabelsBreakReproducibility) {
  // Section 9: a label built from run-time data (a uuid) gives different numbers on every run;
  // only the label text decides the stream.
  RandomSource root(5);
  EXPECT_EQ(draw(root.child("/run_fixed"), 4), draw(root.child("/run_fixed"), 4));
  EXPECT_NE(draw(root.child("/run_3f2a"), 4), draw(root.child("/run_9c1d"), 4));
}

TEST(RandomSource, ChildIsNotTheParentStream) {
  RandomSource root(5);
  EXPECT_NE(draw(root, 4), draw(root.child("x"), 4));
  EXPECT_NE(draw(root.child("a").child("b"), 4), draw(root.child("b").child("a"), 4));
}

TEST(RandomSource, UniformStaysInRange) {
  RandomSource r(3);
  for (int i = 0; i < 10000; ++i) {
    const double x = r.uniform(-2.0, 3.0);
    ASSERT_GE(x, -2.0);
    ASSERT_LT(x, 3.0);
  }
}

TEST(RandomSource, NormalHasRequestedMeanAndDeviation) {
  RandomSource r(11);
  constexpr int kN = 200'000;
  double sum = 0.0;
  double sum2 = 0.0;
  for (int i = 0; i < kN; ++i) {
    const double x = r.normal(3.0, 2.0);
    sum += x;
    sum2 += x * x;
  }
  const double mean = sum / kN;
  const double sd = std::sqrt(sum2 / kN - mean * mean);
  EXPECT_NEAR(mean, 3.0, 0.02);
  EXPECT_NEAR(sd, 2.0, 0.02);
  EXPECT_THROW(r.normal(0.0, -1.0), TimeError);
  EXPECT_EQ(r.normal(1.5, 0.0), 1.5);
}

// The batch is n calls of normal(): the same values bit for bit and the same state after, for
// odd and even counts and starting with or without a spare (the world's lidar noise uses it).
TEST(RandomSource, NormalsBatchEqualsOneCallPerDraw) {
  for (const size_t lead : {size_t{0}, size_t{1}, size_t{2}, size_t{3}}) {
    for (const size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{7}, size_t{360}, size_t{1001}}) {
      RandomSource a(42, "/lidar/noise");
      RandomSource b(42, "/lidar/noise");
      for (size_t i = 0; i < lead; ++i) {
        ASSERT_EQ(a.normal(0.0, 1.0), b.normal(0.0, 1.0));
      }
      std::vector<double> batch(n, -1.0);
      b.normals(batch.data(), n, 0.25, 0.01);
      for (size_t i = 0; i < n; ++i) {
        ASSERT_EQ(batch[i], a.normal(0.25, 0.01)) << "lead " << lead << " n " << n << " i " << i;
      }
      EXPECT_TRUE(a == b) << "lead " << lead << " n " << n;
      EXPECT_EQ(a.normal(0.0, 1.0), b.normal(0.0, 1.0));
      EXPECT_EQ(a.next_u64(), b.next_u64());
    }
  }
  RandomSource r(5);
  const RandomSource before = r;
  double out[2] = {0.0, 0.0};
  EXPECT_THROW(r.normals(out, 2, 0.0, -1.0), TimeError);
  EXPECT_TRUE(r == before);  // nothing drawn
  r.normals(out, 2, 1.5, 0.0);
  EXPECT_EQ(out[0], 1.5);
  EXPECT_EQ(out[1], 1.5);
}

TEST(RandomSource, IntegersAreInclusiveAndUnbiased) {
  RandomSource r(17);
  std::vector<int> counts(6, 0);
  constexpr int kN = 60'000;
  for (int i = 0; i < kN; ++i) {
    const int64_t k = r.integers(1, 6);
    ASSERT_GE(k, 1);
    ASSERT_LE(k, 6);
    ++counts[static_cast<size_t>(k - 1)];
  }
  double chi2 = 0.0;
  for (int c : counts) chi2 += (c - kN / 6.0) * (c - kN / 6.0) / (kN / 6.0);
  EXPECT_LT(chi2, 20.5);  // p ~ 0.001 for 5 degrees of freedom
  EXPECT_EQ(r.integers(7, 7), 7);
  const int64_t lo = std::numeric_limits<int64_t>::min();
  const int64_t hi = std::numeric_limits<int64_t>::max();
  EXPECT_NO_THROW(r.integers(lo, hi));
}

TEST(RandomSource, IntegersRefusesHighBelowLow) {
  RandomSource r(1);
  try {
    r.integers(5, 4);
    FAIL();
  } catch (const TimeError& e) {
    EXPECT_NE(std::string(e.what()).find("below low"), std::string::npos);
  }
}

TEST(RandomSource, BitsIsAUniformRandomBitGenerator) {
  static_assert(std::uniform_random_bit_generator<RandomSource::Bits>);
  static_assert(std::uniform_random_bit_generator<RandomSource>);
  RandomSource a(8);
  RandomSource b(8);
  RandomSource::Bits bits = a.bits();
  EXPECT_EQ(bits(), b.next_u64());
  EXPECT_EQ(a.next_u64(), b.next_u64());  // Bits advanced its source
}

TEST(RandomSource, ShuffleIsAPermutationAndReproducible) {
  std::vector<int> v(50);
  std::iota(v.begin(), v.end(), 0);
  std::vector<int> w = v;
  RandomSource r1(21);
  RandomSource r2(21);
  shuffle(v.begin(), v.end(), r1);
  shuffle(w.begin(), w.end(), r2);
  EXPECT_EQ(v, w);
  std::vector<int> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int> expected(50);
  std::iota(expected.begin(), expected.end(), 0);
  EXPECT_EQ(sorted, expected);
  EXPECT_NE(v, expected);
  std::vector<int> golden = {0, 1, 2, 3, 4, 5, 6, 7};
  RandomSource r3(0);
  shuffle(golden.begin(), golden.end(), r3);
  EXPECT_EQ(golden, (std::vector<int>{3, 0, 6, 1, 2, 7, 5, 4}));
}

}  // namespace
}  // namespace fieldproof
