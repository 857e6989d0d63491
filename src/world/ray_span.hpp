// Private: which rays of a full-turn lidar can meet a shape. The exact span takes four or five
// libm atan2/asin calls a shape a scan; the fast one takes a polynomial atan2 and widens the span
// by a margin far above that polynomial's error, so the rays it names are a superset of the exact
// ones. The rays outside the exact span cannot meet the shape (they return +inf), so tracing the
// fast span gives exactly the ranges the exact one gives (tests/world/ray_span_test.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <numbers>

#include "collide.hpp"
#include "sdf_loader.hpp"

namespace fieldproof::world::detail {

// atan2(y, x) within kAtan2ApproxError (tested over a dense sweep); y = x = 0 gives 0.
inline constexpr double kAtan2ApproxError = 2e-5;
inline double atan2_approx(double y, double x) {
  constexpr double kPi = std::numbers::pi;
  const double ax = std::abs(x), ay = std::abs(y);
  const double hi = std::max(ax, ay), lo = std::min(ax, ay);
  if (!(hi > 0)) return 0.0;
  const double t = lo / hi, t2 = t * t;
  // Minimax atan on [0, 1] (Abramowitz and Stegun 4.4.49's form, |error| about 1e-5).
  double a =
      t * (0.99997726 +
           t2 * (-0.33262347 +
                 t2 * (0.19354346 + t2 * (-0.11643287 + t2 * (0.05265332 - t2 * 0.01172120)))));
  if (ay > ax) a = kPi / 2 - a;
  if (x < 0) a = kPi - a;
  return y < 0 ? -a : a;
}

// Corner k (0..3) of a box, in the world frame.
inline void box_corner(const Obb& b, int k, double* qx, double* qy) {
  const double sx = (k & 1) ? b.hx : -b.hx, sy = (k & 2) ? b.hy : -b.hy;
  *qx = b.cx + sx * b.c - sy * b.s;
  *qy = b.cy + sx * b.s + sy * b.c;
}

// The rays between the angles lo and hi (world frame), widened by `margin` and a ray more on each
// side: [first, first + count) modulo n; the whole turn when that is not less than n rays.
inline void rays_between(double lo, double hi, double margin, double yaw, int n, int* first,
                         int* count) {
  constexpr double kPi = std::numbers::pi;
  const double step = 2 * kPi / n;
  const double f = std::floor((lo - margin - yaw + kPi) / step) - 1;
  const double l = std::ceil((hi + margin - yaw + kPi) / step) + 1;
  if (!(l - f + 1 < n)) {
    *first = 0;
    *count = n;
    return;
  }
  *first = static_cast<int>(f);
  *count = static_cast<int>(l - f) + 1;
}

// The rays of a lidar at (ox, oy) facing `yaw` that may meet a collider: [first, first + count)
// modulo n, ray i pointing at yaw - pi + i * step. Conservative (a ray more on each side); the
// whole turn when the origin is inside or on it.
inline void ray_span_exact(const Collider& col, double ox, double oy, double yaw, int n, int* first,
                           int* count) {
  *first = 0;
  *count = n;
  double lo = 0, hi = 0;
  if (col.is_box) {
    const Obb& b = col.box;
    const double rx = ox - b.cx, ry = oy - b.cy;
    const double lx = rx * b.c + ry * b.s, ly = -rx * b.s + ry * b.c;
    if (std::abs(lx) <= b.hx + 1e-9 && std::abs(ly) <= b.hy + 1e-9) return;
    // From a point outside a convex polygon, the directions that meet it are spanned by its
    // corners, all within half a turn of the direction to its centre.
    const double mid = std::atan2(-ry, -rx);
    double amin = kInf, amax = -kInf;
    for (int k = 0; k < 4; ++k) {
      double qx = 0, qy = 0;
      box_corner(b, k, &qx, &qy);
      const double a = normalize_angle(std::atan2(qy - oy, qx - ox) - mid);
      amin = std::min(amin, a);
      amax = std::max(amax, a);
    }
    lo = mid + amin;
    hi = mid + amax;
  } else {
    const Circle& k = col.circle;
    const double dx = k.cx - ox, dy = k.cy - oy;
    const double d = std::sqrt(dx * dx + dy * dy);
    if (d <= k.r * (1 + 1e-9)) return;
    const double mid = std::atan2(dy, dx), half = std::asin(k.r / d);
    lo = mid - half;
    hi = mid + half;
  }
  rays_between(lo, hi, 0.0, yaw, n, first, count);
}

// The margin the fast span widens by on each side: five times the approximation's error bound.
inline constexpr double kSpanMargin = 1e-4;

// ray_span_exact's rays, or more: [first, first + count) holds every ray of the exact span.
// Cases where an approximate angle could fall on the other side of the half-turn wrap (a corner
// almost behind the lidar) or where asin is steep (r / d near 1) take the exact span.
inline void ray_span(const Collider& col, double ox, double oy, double yaw, int n, int* first,
                     int* count) {
  constexpr double kPi = std::numbers::pi;
  constexpr double kWrapGuard = 0.01;  // far above the approximation's error
  double lo = 0, hi = 0;
  if (col.is_box) {
    const Obb& b = col.box;
    const double rx = ox - b.cx, ry = oy - b.cy;
    const double lx = rx * b.c + ry * b.s, ly = -rx * b.s + ry * b.c;
    if (std::abs(lx) <= b.hx + 1e-9 && std::abs(ly) <= b.hy + 1e-9) {
      *first = 0;
      *count = n;
      return;
    }
    const double mid = atan2_approx(-ry, -rx);
    double amin = kInf, amax = -kInf;
    for (int k = 0; k < 4; ++k) {
      double qx = 0, qy = 0;
      box_corner(b, k, &qx, &qy);
      double a = atan2_approx(qy - oy, qx - ox) - mid;
      if (a > kPi + kWrapGuard) {
        a -= 2 * kPi;
      } else if (a < -kPi - kWrapGuard) {
        a += 2 * kPi;
      } else if (!(std::abs(a) < kPi - kWrapGuard)) {
        return ray_span_exact(col, ox, oy, yaw, n, first, count);
      }
      amin = std::min(amin, a);
      amax = std::max(amax, a);
    }
    lo = mid + amin;
    hi = mid + amax;
  } else {
    const Circle& k = col.circle;
    const double dx = k.cx - ox, dy = k.cy - oy;
    const double d = std::sqrt(dx * dx + dy * dy);
    if (!(k.r < 0.9 * d)) return ray_span_exact(col, ox, oy, yaw, n, first, count);
    const double mid = atan2_approx(dy, dx);
    const double half = atan2_approx(k.r, std::sqrt(d * d - k.r * k.r));  // asin(r / d)
    lo = mid - half;
    hi = mid + half;
  }
  rays_between(lo, hi, kSpanMargin, yaw, n, first, count);
}

}  // namespace fieldproof::world::detail
