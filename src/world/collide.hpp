// Private: planar collision and ray-casting primitives and the broad-phase grid.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "fieldproof/world/geometry.hpp"

namespace fieldproof::world::detail {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

struct Aabb {
  double min_x = kInf, min_y = kInf, max_x = -kInf, max_y = -kInf;
  void add(const Aabb& o) {
    min_x = std::min(min_x, o.min_x);
    min_y = std::min(min_y, o.min_y);
    max_x = std::max(max_x, o.max_x);
    max_y = std::max(max_y, o.max_y);
  }
  bool overlaps(const Aabb& o) const {
    return min_x <= o.max_x && o.min_x <= max_x && min_y <= o.max_y && o.min_y <= max_y;
  }
  bool empty() const { return !(min_x <= max_x && min_y <= max_y); }
};

// An oriented box: centre, unit axis (c, s) of its local x, half extents.
struct Obb {
  double cx = 0, cy = 0, c = 1, s = 0, hx = 0, hy = 0;
  static Obb make(const Pose2D& p, double size_x, double size_y) {
    return Obb{p.x, p.y, std::cos(p.yaw), std::sin(p.yaw), size_x / 2, size_y / 2};
  }
  Obb grown(double m) const { return Obb{cx, cy, c, s, hx + m, hy + m}; }
  Aabb aabb() const {
    const double ex = std::abs(c) * hx + std::abs(s) * hy;
    const double ey = std::abs(s) * hx + std::abs(c) * hy;
    return Aabb{cx - ex, cy - ey, cx + ex, cy + ey};
  }
  double bounding_radius() const { return std::sqrt(hx * hx + hy * hy); }
};

struct Circle {
  double cx = 0, cy = 0, r = 0;
  Aabb aabb() const { return Aabb{cx - r, cy - r, cx + r, cy + r}; }
};

// Separating-axis overlap of two boxes: the smallest overlap over the four axes. > 0: the boxes
// penetrate by about that much; <= 0: separated (by at least -value along some axis).
inline double overlap(const Obb& a, const Obb& b) {
  const double dx = b.cx - a.cx, dy = b.cy - a.cy;
  const double axes[4][2] = {{a.c, a.s}, {-a.s, a.c}, {b.c, b.s}, {-b.s, b.c}};
  double best = kInf;
  for (const auto& ax : axes) {
    const double ra =
        a.hx * std::abs(a.c * ax[0] + a.s * ax[1]) + a.hy * std::abs(-a.s * ax[0] + a.c * ax[1]);
    const double rb =
        b.hx * std::abs(b.c * ax[0] + b.s * ax[1]) + b.hy * std::abs(-b.s * ax[0] + b.c * ax[1]);
    const double d = std::abs(dx * ax[0] + dy * ax[1]);
    best = std::min(best, ra + rb - d);
  }
  return best;
}

// The point of box b closest to (px, py) (the point itself when inside).
inline void closest_point(const Obb& b, double px, double py, double* qx, double* qy) {
  const double dx = px - b.cx, dy = py - b.cy;
  const double lx = std::clamp(dx * b.c + dy * b.s, -b.hx, b.hx);
  const double ly = std::clamp(-dx * b.s + dy * b.c, -b.hy, b.hy);
  *qx = b.cx + lx * b.c - ly * b.s;
  *qy = b.cy + lx * b.s + ly * b.c;
}

// Penetration of a circle into a box: > 0 overlapping by that much, <= 0 separated by -value.
inline double overlap(const Obb& b, const Circle& k) {
  const double dx = k.cx - b.cx, dy = k.cy - b.cy;
  const double lx = dx * b.c + dy * b.s;
  const double ly = -dx * b.s + dy * b.c;
  const double ox = std::abs(lx) - b.hx, oy = std::abs(ly) - b.hy;
  if (ox <= 0 && oy <= 0) return k.r + std::min(-ox, -oy);  // centre inside the box
  const double ex = std::max(ox, 0.0), ey = std::max(oy, 0.0);
  return k.r - std::sqrt(ex * ex + ey * ey);
}

// Ray (ox, oy) + t (dx, dy), |d| = 1, against a box: the entry distance t >= 0, or +inf.
// A ray starting inside reports 0.
// The same in the box's frame: origin (lox, loy), direction (ldx, ldy) (what ray_hit computes
// first; a caller casting many rays from one origin computes the origin's part once).
inline double ray_hit_local(const Obb& b, double lox, double loy, double ldx, double ldy) {
  double t0 = 0.0, t1 = kInf;
  const double lo[2] = {lox, loy}, ld[2] = {ldx, ldy}, h[2] = {b.hx, b.hy};
  for (int i = 0; i < 2; ++i) {
    if (std::abs(ld[i]) < 1e-300) {
      if (std::abs(lo[i]) > h[i]) return kInf;
      continue;
    }
    const double inv = 1.0 / ld[i];
    double ta = (-h[i] - lo[i]) * inv, tb = (h[i] - lo[i]) * inv;
    if (ta > tb) std::swap(ta, tb);
    t0 = std::max(t0, ta);
    t1 = std::min(t1, tb);
    if (t0 > t1) return kInf;
  }
  return t0;
}

inline double ray_hit(const Obb& b, double ox, double oy, double dx, double dy) {
  const double rx = ox - b.cx, ry = oy - b.cy;
  const double lox = rx * b.c + ry * b.s, loy = -rx * b.s + ry * b.c;
  const double ldx = dx * b.c + dy * b.s, ldy = -dx * b.s + dy * b.c;
  return ray_hit_local(b, lox, loy, ldx, ldy);
}

inline double ray_hit(const Circle& k, double ox, double oy, double dx, double dy) {
  const double fx = ox - k.cx, fy = oy - k.cy;
  const double b = fx * dx + fy * dy;
  const double c = fx * fx + fy * fy - k.r * k.r;
  if (c <= 0) return 0.0;  // inside
  const double disc = b * b - c;
  if (disc < 0 || b > 0) return kInf;
  const double t = -b - std::sqrt(disc);
  return t >= 0 ? t : kInf;
}

// A static collider: a box or a disc, from a StaticShape.
struct Collider {
  bool is_box = true;
  Obb box;
  Circle circle;
  Aabb bounds;
  int shape = 0;  // index into the world's static shapes
};

inline Collider make_collider(const StaticShape& s, int index) {
  Collider c;
  c.shape = index;
  if (s.type == ShapeType::kBox) {
    c.is_box = true;
    c.box = Obb::make(s.pose, s.size_x, s.size_y);
    c.bounds = c.box.aabb();
  } else {
    c.is_box = false;
    c.circle = Circle{s.pose.x, s.pose.y, s.radius};
    c.bounds = c.circle.aabb();
  }
  return c;
}

inline double overlap(const Obb& a, const Collider& c) {
  return c.is_box ? overlap(a, c.box) : overlap(a, c.circle);
}

inline double ray_hit(const Collider& c, double ox, double oy, double dx, double dy) {
  return c.is_box ? ray_hit(c.box, ox, oy, dx, dy) : ray_hit(c.circle, ox, oy, dx, dy);
}

// Uniform grid over the static colliders' bounds. Queries visit each collider once (a stamp per
// collider), in cell order then insertion order: deterministic.
class Grid {
 public:
  void build(const std::vector<Collider>& colliders, double cell) {
    colliders_ = &colliders;
    cell_ = cell;
    bounds_ = Aabb{};
    for (const auto& c : colliders) bounds_.add(c.bounds);
    cells_.clear();
    stamp_.assign(colliders.size(), 0);
    query_ = 0;
    if (colliders.empty()) {
      nx_ = ny_ = 0;
      return;
    }
    nx_ = std::max(1, static_cast<int>(std::ceil((bounds_.max_x - bounds_.min_x) / cell_)));
    ny_ = std::max(1, static_cast<int>(std::ceil((bounds_.max_y - bounds_.min_y) / cell_)));
    cells_.assign(static_cast<size_t>(nx_) * ny_, {});
    for (size_t i = 0; i < colliders.size(); ++i) {
      int x0, y0, x1, y1;
      cell_range(colliders[i].bounds, &x0, &y0, &x1, &y1);
      for (int y = y0; y <= y1; ++y)
        for (int x = x0; x <= x1; ++x) cells_[idx(x, y)].push_back(static_cast<int>(i));
    }
  }

  // The visited marks of one thread's queries. The grid's own serve the thread that builds it;
  // a thread querying while others do brings its own (a shared stamp is a data race: two threads
  // drawing one query number skip each other's colliders).
  struct Stamps {
    std::vector<uint32_t> stamp;
    uint32_t query = 0;
  };

  // Calls f(const Collider&) for every collider whose cell range meets `box`.
  template <typename F>
  void query(const Aabb& box, F&& f) {
    query_with(box, f, stamp_, query_);
  }
  // The same with the caller's marks; the grid itself is only read (safe from several threads).
  template <typename F>
  void query(const Aabb& box, F&& f, Stamps& own) const {
    if (own.stamp.size() != stamp_.size()) {
      own.stamp.assign(stamp_.size(), 0);
      own.query = 0;
    }
    query_with(box, f, own.stamp, own.query);
  }

  // Where query(box) first meets a collider of these bounds: its first cell in the query's
  // row-major order; colliders first met in one cell follow in index order (a stable sort by
  // this rank, from index order, gives query()'s visiting order).
  int64_t visit_rank(const Aabb& box, const Aabb& bounds) const {
    int qx0, qy0, qx1, qy1, bx0, by0, bx1, by1;
    cell_range(box, &qx0, &qy0, &qx1, &qy1);
    cell_range(bounds, &bx0, &by0, &bx1, &by1);
    return static_cast<int64_t>(std::max(qy0, by0)) * nx_ + std::max(qx0, bx0);
  }

  // Nearest hit along a unit ray within max_t (Amanatides-Woo traversal); +inf when none.
  double cast(double ox, double oy, double dx, double dy, double max_t) {
    if (nx_ == 0) return kInf;
    // Clip the ray to the grid bounds.
    double t_enter = 0.0, t_exit = max_t;
    const double o[2] = {ox, oy}, d[2] = {dx, dy};
    const double lo[2] = {bounds_.min_x, bounds_.min_y}, hi[2] = {bounds_.max_x, bounds_.max_y};
    for (int i = 0; i < 2; ++i) {
      if (std::abs(d[i]) < 1e-300) {
        if (o[i] < lo[i] || o[i] > hi[i]) return kInf;
        continue;
      }
      double ta = (lo[i] - o[i]) / d[i], tb = (hi[i] - o[i]) / d[i];
      if (ta > tb) std::swap(ta, tb);
      t_enter = std::max(t_enter, ta);
      t_exit = std::min(t_exit, tb);
    }
    if (t_enter > t_exit) return kInf;
    const double sx = ox + dx * t_enter, sy = oy + dy * t_enter;
    int cx = std::clamp(static_cast<int>(std::floor((sx - bounds_.min_x) / cell_)), 0, nx_ - 1);
    int cy = std::clamp(static_cast<int>(std::floor((sy - bounds_.min_y) / cell_)), 0, ny_ - 1);
    const int step_x = dx > 0 ? 1 : -1, step_y = dy > 0 ? 1 : -1;
    const double inv_dx = std::abs(dx) < 1e-300 ? kInf : 1.0 / std::abs(dx);
    const double inv_dy = std::abs(dy) < 1e-300 ? kInf : 1.0 / std::abs(dy);
    const double next_bx = bounds_.min_x + (cx + (dx > 0 ? 1 : 0)) * cell_;
    const double next_by = bounds_.min_y + (cy + (dy > 0 ? 1 : 0)) * cell_;
    double t_max_x = std::abs(dx) < 1e-300 ? kInf : std::abs(next_bx - ox) * inv_dx;
    double t_max_y = std::abs(dy) < 1e-300 ? kInf : std::abs(next_by - oy) * inv_dy;
    const double t_delta_x = cell_ * inv_dx, t_delta_y = cell_ * inv_dy;
    const uint32_t q = next_query();
    double best = kInf;
    while (true) {
      for (int i : cells_[idx(cx, cy)]) {
        if (stamp_[i] == q) continue;
        stamp_[i] = q;
        const double t = ray_hit((*colliders_)[i], ox, oy, dx, dy);
        if (t < best) best = t;
      }
      const double cell_exit = std::min(t_max_x, t_max_y);
      if (best <= cell_exit || cell_exit > t_exit) break;
      if (t_max_x < t_max_y) {
        cx += step_x;
        t_max_x += t_delta_x;
        if (cx < 0 || cx >= nx_) break;
      } else {
        cy += step_y;
        t_max_y += t_delta_y;
        if (cy < 0 || cy >= ny_) break;
      }
    }
    return best <= max_t ? best : kInf;
  }

 private:
  size_t idx(int x, int y) const { return static_cast<size_t>(y) * nx_ + x; }
  void cell_range(const Aabb& b, int* x0, int* y0, int* x1, int* y1) const {
    auto cx = [&](double v) {
      return std::clamp(static_cast<int>(std::floor((v - bounds_.min_x) / cell_)), 0, nx_ - 1);
    };
    auto cy = [&](double v) {
      return std::clamp(static_cast<int>(std::floor((v - bounds_.min_y) / cell_)), 0, ny_ - 1);
    };
    *x0 = cx(b.min_x);
    *x1 = cx(b.max_x);
    *y0 = cy(b.min_y);
    *y1 = cy(b.max_y);
  }
  uint32_t next_query() { return next_query(stamp_, query_); }
  static uint32_t next_query(std::vector<uint32_t>& stamp, uint32_t& query) {
    if (++query == 0) {  // wrapped: clear the stamps
      std::fill(stamp.begin(), stamp.end(), 0);
      query = 1;
    }
    return query;
  }
  template <typename F>
  void query_with(const Aabb& box, F& f, std::vector<uint32_t>& stamp, uint32_t& query) const {
    if (nx_ == 0 || !box.overlaps(bounds_)) return;
    const uint32_t q = next_query(stamp, query);
    int x0, y0, x1, y1;
    cell_range(box, &x0, &y0, &x1, &y1);
    for (int y = y0; y <= y1; ++y)
      for (int x = x0; x <= x1; ++x)
        for (int i : cells_[idx(x, y)]) {
          if (stamp[i] == q) continue;
          stamp[i] = q;
          const Collider& c = (*colliders_)[i];
          if (c.bounds.overlaps(box)) f(c);
        }
  }

  const std::vector<Collider>* colliders_ = nullptr;
  double cell_ = 1.0;
  Aabb bounds_;
  int nx_ = 0, ny_ = 0;
  std::vector<std::vector<int>> cells_;
  std::vector<uint32_t> stamp_;
  uint32_t query_ = 0;
};

// Uniform grid over the vehicles' chassis centres, kept exact as they move (a doubly linked list
// per cell, O(1) moves), so a chassis or a lidar finds its neighbours without visiting every
// vehicle. Centres outside the grid's bounds sit in one overflow list that every query visits;
// when it grows, rebuild() re-fits the bounds. Queries report slots in no particular order.
class VehicleGrid {
 public:
  // Fits the bounds to the centres (plus `pad` metres, with room to roam) and files every slot.
  void rebuild(const std::vector<double>& x, const std::vector<double>& y, double cell,
               double pad) {
    const size_t n = x.size();
    Aabb b;
    for (size_t i = 0; i < n; ++i) b.add(Aabb{x[i], y[i], x[i], y[i]});
    if (b.empty()) b = Aabb{0, 0, 0, 0};
    cell_ = cell;
    const double roam = pad + 0.25 * std::max(b.max_x - b.min_x, b.max_y - b.min_y);
    ox_ = b.min_x - roam;
    oy_ = b.min_y - roam;
    // Bounded memory: at most about 16 cells a vehicle (and 4096), else coarser cells.
    const double max_cells = std::max(4096.0, 16.0 * static_cast<double>(n));
    double w = (b.max_x - b.min_x + 2 * roam), h = (b.max_y - b.min_y + 2 * roam);
    while (std::ceil(w / cell_) * std::ceil(h / cell_) > max_cells) cell_ *= 1.5;
    nx_ = std::max(1, static_cast<int>(std::ceil(w / cell_)));
    ny_ = std::max(1, static_cast<int>(std::ceil(h / cell_)));
    head_.assign(static_cast<size_t>(nx_) * ny_ + 1, -1);  // the last: overflow
    next_.assign(n, -1);
    prev_.assign(n, -1);
    cell_of_.assign(n, -1);
    overflow_ = 0;
    for (size_t i = 0; i < n; ++i) insert(static_cast<int>(i), bucket(x[i], y[i]));
  }

  // The slot's centre moved to (x, y). Returns false when the overflow list has grown enough
  // that the caller should rebuild().
  bool move(int slot, double x, double y) {
    const int b = bucket(x, y);
    if (b == cell_of_[slot]) return true;
    unlink(slot);
    insert(slot, b);
    return overflow_ <= std::max<size_t>(8, next_.size() / 8);
  }

  // Calls f(slot) for every slot whose centre lies in a cell meeting [x0, x1] × [y0, y1], and
  // every slot in the overflow list.
  template <typename F>
  void query(double x0, double y0, double x1, double y1, F&& f) const {
    if (nx_ == 0) return;
    const int cx0 = clamp_x(x0), cx1 = clamp_x(x1), cy0 = clamp_y(y0), cy1 = clamp_y(y1);
    if (!(x1 < ox_ || y1 < oy_ || x0 > ox_ + nx_ * cell_ || y0 > oy_ + ny_ * cell_)) {
      for (int cy = cy0; cy <= cy1; ++cy)
        for (int cx = cx0; cx <= cx1; ++cx)
          for (int i = head_[static_cast<size_t>(cy) * nx_ + cx]; i >= 0; i = next_[i]) f(i);
    }
    for (int i = head_.back(); i >= 0; i = next_[i]) f(i);
  }

 private:
  int clamp_x(double v) const {
    return std::clamp(static_cast<int>(std::floor((v - ox_) / cell_)), 0, nx_ - 1);
  }
  int clamp_y(double v) const {
    return std::clamp(static_cast<int>(std::floor((v - oy_) / cell_)), 0, ny_ - 1);
  }
  // floor() left out: for q >= 0, floor(q) >= 0 and floor(q) < n (an integer) exactly when
  // q >= 0 and q < n, and there the conversion's truncation is floor(q); NaN fails both. The same
  // bucket, without two floor sequences a move (every vehicle moves every step).
  int bucket(double x, double y) const {
    const double qx = (x - ox_) / cell_, qy = (y - oy_) / cell_;
    if (!(qx >= 0 && qy >= 0 && qx < nx_ && qy < ny_)) return nx_ * ny_;
    return static_cast<int>(qy) * nx_ + static_cast<int>(qx);
  }
  void insert(int slot, int b) {
    cell_of_[slot] = b;
    prev_[slot] = -1;
    next_[slot] = head_[b];
    if (head_[b] >= 0) prev_[head_[b]] = slot;
    head_[b] = slot;
    if (b == nx_ * ny_) ++overflow_;
  }
  void unlink(int slot) {
    const int b = cell_of_[slot];
    if (prev_[slot] >= 0) {
      next_[prev_[slot]] = next_[slot];
    } else {
      head_[b] = next_[slot];
    }
    if (next_[slot] >= 0) prev_[next_[slot]] = prev_[slot];
    if (b == nx_ * ny_) --overflow_;
  }

  double cell_ = 2.0, ox_ = 0, oy_ = 0;
  int nx_ = 0, ny_ = 0;
  std::vector<int> head_, next_, prev_, cell_of_;
  size_t overflow_ = 0;
};

}  // namespace fieldproof::world::detail
