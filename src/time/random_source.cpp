#include "fieldproof/time/random_source.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fieldproof/time/time_error.hpp"

namespace fieldproof {
namespace {

constexpr uint64_t kGolden = 0x9e3779b97f4a7c15ULL;

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

// One xoshiro256** step on a state held anywhere (the member, or locals in a batch).
inline uint64_t xoshiro_step(uint64_t& s0, uint64_t& s1, uint64_t& s2, uint64_t& s3) {
  const uint64_t result = rotl(s1 * 5, 7) * 9;
  const uint64_t t = s1 << 17;
  s2 ^= s0;
  s3 ^= s1;
  s1 ^= s2;
  s0 ^= s3;
  s2 ^= t;
  s3 = rotl(s3, 45);
  return result;
}

// The top 53 bits as a double in [0, 1).
inline double to_unit(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

// Calls f(component) for each non-empty '/'-separated component of path.
template <typename F>
void for_each_component(std::string_view path, F&& f) {
  size_t i = 0;
  while (i < path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    if (j > i) f(path.substr(i, j - i));
    i = j + 1;
  }
}

uint64_t derive(uint64_t parent_key, std::string_view component) {
  return splitmix64_mix(parent_key ^ splitmix64_mix(fnv1a64(component)));
}

// Natural logarithm from IEEE +, -, *, / only (plus the exact frexp), so that it gives the same
// bits under every libm: log(x) = e*ln2 + 2*atanh(f), f = (m-1)/(m+1), m in [sqrt(1/2), sqrt(2)).
// frexp for a positive normal double by its bits, else the library's: the same exact result
// without a call per draw (the noise of every lidar ray goes through here).
inline double exact_frexp(double x, int* e) {
  uint64_t bits = 0;
  std::memcpy(&bits, &x, sizeof bits);
  const uint64_t biased = bits >> 52;  // sign bit 0 for a positive x
  if (biased == 0 || biased >= 0x7ff) return std::frexp(x, e);
  *e = static_cast<int>(biased) - 1022;
  bits = (bits & ((uint64_t{1} << 52) - 1)) | (uint64_t{1022} << 52);
  std::memcpy(&x, &bits, sizeof bits);
  return x;
}

// x = m * 2^e exactly, with m in [sqrt(1/2), sqrt(2)).
inline double reduce(double x, int* e) {
  double m = exact_frexp(x, e);  // exact: x = m * 2^e, m in [0.5, 1)
  if (m < 0.70710678118654752440) {
    m *= 2.0;
    *e -= 1;
  }
  return m;
}

// log(m * 2^e) from the reduced m and de = e: for T = double, and lane for lane for a vector of
// doubles (GCC vector extensions: SSE2's packed +, -, *, / are each lane's IEEE double operation,
// correctly rounded as the scalar ones; no FMA is contracted on this target), the same operations
// in the same order.
template <typename T>
inline T log_of_reduced(T m, T de) {
  const T f = (m - 1.0) / (m + 1.0);  // |f| <= 0.1716
  const T f2 = f * f;
  // 2*atanh(f) = 2f * (1 + f2/3 + f2^2/5 + ...); f2^12/25 < 1e-20, so 12 terms suffice.
  // The reciprocals 1/k are constants: a correctly rounded division gives the same double at
  // compile time as at run time, so this is bit for bit the loop series = (series + 1.0/k) * f2
  // for k = 25, 23, ..., 3, without its twelve divisions (the world's lidar noise draws one
  // normal a ray; world_bench measured them).
  static constexpr double kInvOdd[12] = {1.0 / 25, 1.0 / 23, 1.0 / 21, 1.0 / 19, 1.0 / 17, 1.0 / 15,
                                         1.0 / 13, 1.0 / 11, 1.0 / 9,  1.0 / 7,  1.0 / 5,  1.0 / 3};
  T series = T{};
  for (double inv : kInvOdd) series = (series + inv) * f2;
  const T log_m = 2.0 * f + 2.0 * f * series;
  // ln2 split in a high part with trailing zero bits (e * hi is exact) and a low part (fdlibm).
  constexpr double kLn2Hi = 6.93147180369123816490e-01;
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  return de * kLn2Hi + (de * kLn2Lo + log_m);
}

double portable_log(double x) {
  int e = 0;
  const double m = reduce(x, &e);
  return log_of_reduced(m, static_cast<double>(e));
}

// portable_log of two values at once, a lane each.
using Double2 = double __attribute__((vector_size(16)));

inline Double2 portable_log2(double x0, double x1) {
  int e0 = 0, e1 = 0;
  const double m0 = reduce(x0, &e0), m1 = reduce(x1, &e1);
  return log_of_reduced(Double2{m0, m1}, Double2{static_cast<double>(e0), static_cast<double>(e1)});
}

// The accepted point of Marsaglia's polar method: (u, v) uniform in the unit disc but its
// centre, s = u^2 + v^2, from uniforms in [0, 1).
struct PolarPoint {
  double u, v, s;
};
template <typename Uniform01>
inline PolarPoint polar_point(Uniform01&& uniform01) {
  double u = 0.0;
  double v = 0.0;
  double s = 0.0;
  do {
    u = 2.0 * uniform01() - 1.0;
    v = 2.0 * uniform01() - 1.0;
    s = u * u + v * v;
  } while (s >= 1.0 || s == 0.0);
  return {u, v, s};
}

// Marsaglia's polar method: two independent standard normals from uniforms in [0, 1).
template <typename Uniform01>
inline std::pair<double, double> polar_pair(Uniform01&& uniform01) {
  const PolarPoint p = polar_point(uniform01);
  const double mul = std::sqrt(-2.0 * portable_log(p.s) / p.s);
  return {p.u * mul, p.v * mul};
}

}  // namespace

uint64_t fnv1a64(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

// One SplitMix64 step from state x: the output for state x + golden gamma.
uint64_t splitmix64_mix(uint64_t x) {
  uint64_t z = x + kGolden;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

RandomSource::RandomSource(uint64_t seed, std::string_view label) : seed_(seed), key_(seed) {
  label_.clear();
  for_each_component(label, [&](std::string_view c) {
    label_ += '/';
    label_.append(c);
    key_ = derive(key_, c);
  });
  if (label_.empty()) label_.push_back('/');
  reset_state();
}

RandomSource::RandomSource(uint64_t seed, std::string label, uint64_t key)
    : seed_(seed), label_(std::move(label)), key_(key) {
  reset_state();
}

void RandomSource::reset_state() {
  uint64_t st = key_;
  for (auto& w : s_) {
    w = splitmix64_mix(st);
    st += kGolden;
  }
  // xoshiro's state must not be all zero; SplitMix64 outputs are a bijection of distinct inputs,
  // so four consecutive outputs are never all zero, but keep the guard explicit.
  if ((s_[0] | s_[1] | s_[2] | s_[3]) == 0) s_[0] = kGolden;
  has_spare_normal_ = false;
  spare_normal_ = 0.0;
}

RandomSource RandomSource::child(std::string_view label) const {
  std::string path = label_ == "/" ? std::string() : label_;
  uint64_t key = key_;
  for_each_component(label, [&](std::string_view c) {
    path += '/';
    path.append(c);
    key = derive(key, c);
  });
  if (path.empty()) path.push_back('/');
  return RandomSource(seed_, std::move(path), key);
}

void RandomSource::normals(double* out, size_t n, double mu, double sigma) {
  if (!(sigma >= 0.0)) {
    throw TimeError("RandomSource::normals: sigma " + std::to_string(sigma) +
                    " is negative or NaN (label " + label_ + ")");
  }
  if (n == 0) return;
  size_t i = 0;
  if (has_spare_normal_) {
    has_spare_normal_ = false;
    out[i++] = mu + sigma * spare_normal_;
  }
  // The state in locals, so that the loop keeps it in registers: the same step, the same
  // uniform and the same pair as next_u64, uniform01 and normal(), in the same order.
  uint64_t s0 = s_[0], s1 = s_[1], s2 = s_[2], s3 = s_[3];
  const auto uniform = [&]() { return to_unit(xoshiro_step(s0, s1, s2, s3)); };
  // In chunks: the accepted (u, v, s) of polar_pair's loop in draw order first, then their
  // multipliers two logs at a time (portable_log2), then the pairs out as polar_pair gives them.
  constexpr size_t kChunk = 32;
  double us[kChunk], vs[kChunk], ss[kChunk], mul[kChunk];
  while (i < n) {
    const size_t pairs = std::min(kChunk, (n - i + 1) / 2);
    for (size_t k = 0; k < pairs; ++k) {
      const PolarPoint p = polar_point(uniform);
      us[k] = p.u;
      vs[k] = p.v;
      ss[k] = p.s;
    }
    size_t k = 0;
    for (; k + 1 < pairs; k += 2) {
      const Double2 s2 = {ss[k], ss[k + 1]};
      const Double2 q = -2.0 * portable_log2(ss[k], ss[k + 1]) / s2;
      mul[k] = std::sqrt(q[0]);
      mul[k + 1] = std::sqrt(q[1]);
    }
    if (k < pairs) mul[k] = std::sqrt(-2.0 * portable_log(ss[k]) / ss[k]);
    for (k = 0; k < pairs; ++k) {
      out[i++] = mu + sigma * (us[k] * mul[k]);
      if (i < n) {
        out[i++] = mu + sigma * (vs[k] * mul[k]);
      } else {
        spare_normal_ = vs[k] * mul[k];
        has_spare_normal_ = true;
      }
    }
  }
  s_[0] = s0;
  s_[1] = s1;
  s_[2] = s2;
  s_[3] = s3;
}

uint64_t RandomSource::next_u64() { return xoshiro_step(s_[0], s_[1], s_[2], s_[3]); }

double RandomSource::uniform01() { return to_unit(next_u64()); }

double RandomSource::uniform(double a, double b) { return a + (b - a) * uniform01(); }

double RandomSource::normal(double mu, double sigma) {
  if (!(sigma >= 0.0)) {
    throw TimeError("RandomSource::normal: sigma " + std::to_string(sigma) +
                    " is negative or NaN (label " + label_ + ")");
  }
  if (has_spare_normal_) {
    has_spare_normal_ = false;
    return mu + sigma * spare_normal_;
  }
  // The step inlined on the member state: the same uniforms as uniform01(), without a call each.
  const auto [u, v] =
      polar_pair([this] { return to_unit(xoshiro_step(s_[0], s_[1], s_[2], s_[3])); });
  spare_normal_ = v;
  has_spare_normal_ = true;
  return mu + sigma * u;
}

uint64_t RandomSource::below(uint64_t n) {
  if (n == 0) throw TimeError("RandomSource::below: n must be > 0 (label " + label_ + ")");
  const uint64_t threshold = (0 - n) % n;  // 2^64 mod n: reject the incomplete last block
  for (;;) {
    const uint64_t r = next_u64();
    if (r >= threshold) return r % n;
  }
}

int64_t RandomSource::integers(int64_t low, int64_t high) {
  if (high < low) {
    throw TimeError("RandomSource::integers: high " + std::to_string(high) + " is below low " +
                    std::to_string(low) + " (label " + label_ + ")");
  }
  const uint64_t span = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  const uint64_t r = span == UINT64_MAX ? next_u64() : below(span + 1);
  return static_cast<int64_t>(static_cast<uint64_t>(low) + r);
}

bool operator==(const RandomSource& a, const RandomSource& b) {
  return a.seed_ == b.seed_ && a.label_ == b.label_ && a.key_ == b.key_ && a.s_[0] == b.s_[0] &&
         a.s_[1] == b.s_[1] && a.s_[2] == b.s_[2] && a.s_[3] == b.s_[3] &&
         a.has_spare_normal_ == b.has_spare_normal_ &&
         (!a.has_spare_normal_ || a.spare_normal_ == b.spare_normal_);
}

}  // namespace fieldproof
