// The lidar's fast ray span (src/world/ray_span.hpp): its atan2 within the stated error, and the
// rays it names a superset of the exact span's, so a scan traces every ray that can meet a shape
// (the world bench's stream hash shows the ranges unchanged; these show why on many more cases).
#include "ray_span.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "fieldproof/time/random_source.hpp"

namespace fieldproof::world::detail {
namespace {

constexpr double kPi = std::numbers::pi;

TEST(Atan2Approx, WithinItsStatedErrorAllAroundTheCircle) {
  double worst = 0;
  for (const double r : {1e-3, 0.7, 1.0, 37.5, 1e4}) {
    for (int i = 0; i <= 400000; ++i) {
      const double th = -kPi + 2 * kPi * i / 400000.0;
      const double y = r * std::sin(th), x = r * std::cos(th);
      worst = std::max(worst, std::abs(atan2_approx(y, x) - std::atan2(y, x)));
    }
  }
  // The axes, where the branches meet (y = +0 on the negative x axis: +pi, as atan2).
  for (const auto& [y, x] : std::vector<std::pair<double, double>>{
           {0.0, 1.0}, {1.0, 0.0}, {0.0, -1.0}, {-1.0, 0.0}, {1.0, 1.0}, {-1.0, -1.0}}) {
    worst = std::max(worst, std::abs(atan2_approx(y, x) - std::atan2(y, x)));
  }
  EXPECT_LT(worst, kAtan2ApproxError);
  EXPECT_GT(worst, 0.0);  // an approximation indeed: the margin is what makes it safe
  EXPECT_LT(kAtan2ApproxError * 4, kSpanMargin);
}

// Ray indices of [first, first + count) modulo n.
std::vector<bool> rays_of(int first, int count, int n) {
  std::vector<bool> in(static_cast<size_t>(n), false);
  for (int k = 0; k < std::min(count, n); ++k)
    in[static_cast<size_t>((((first + k) % n) + n) % n)] = true;
  return in;
}

TEST(RaySpan, TheFastSpanHoldsEveryRayOfTheExactOne) {
  RandomSource rng(5, "/ray_span");
  int cases = 0, narrower_than_full = 0;
  for (int c = 0; c < 60000; ++c) {
    StaticShape s;
    s.pose = Pose2D{rng.uniform(-10, 10), rng.uniform(-10, 10), rng.uniform(-kPi, kPi)};
    if (c % 3 == 0) {
      s.type = ShapeType::kCylinder;
      s.radius = rng.uniform(0.05, 3.0);
    } else {
      s.type = ShapeType::kBox;
      s.size_x = rng.uniform(0.05, 20.0);  // long walls too: corners almost behind the lidar
      s.size_y = rng.uniform(0.05, 3.0);
    }
    if (c % 7 == 0) s.pose.yaw = 0.0;  // axis-aligned, as most of a depot's shapes
    const Collider col = make_collider(s, 0);
    const double ox = rng.uniform(-12, 12), oy = rng.uniform(-12, 12);
    const double yaw = c % 11 == 0 ? 0.0 : rng.uniform(-kPi, kPi);
    for (const int n : {360, 720, 97, 4}) {
      int ef = 0, ec = 0, ff = 0, fc = 0;
      ray_span_exact(col, ox, oy, yaw, n, &ef, &ec);
      ray_span(col, ox, oy, yaw, n, &ff, &fc);
      const std::vector<bool> exact = rays_of(ef, ec, n), fast = rays_of(ff, fc, n);
      for (int i = 0; i < n; ++i) {
        ASSERT_FALSE(exact[static_cast<size_t>(i)] && !fast[static_cast<size_t>(i)])
            << "ray " << i << " of " << n << " case " << c;
      }
      ++cases;
      narrower_than_full += fc < n ? 1 : 0;
      // What makes a superset harmless: the rays outside the exact span miss the shape.
      if (n == 360) {
        const double step = 2 * kPi / n;
        for (int i = 0; i < n; ++i) {
          if (exact[static_cast<size_t>(i)]) continue;
          const double a = yaw - kPi + i * step;
          ASSERT_EQ(ray_hit(col, ox, oy, std::cos(a), std::sin(a)), kInf)
              << "ray " << i << " case " << c;
        }
      }
    }
  }
  EXPECT_EQ(cases, 240000);
  EXPECT_GT(narrower_than_full, cases / 2);  // the span still spares most rays
}

}  // namespace
}  // namespace fieldproof::world::detail
