// The plots' shared axes (svg.hpp).
#include "report/svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "report/internal.hpp"

namespace fieldproof::report::svg {

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", std::isfinite(v) ? v : 0.0);
  std::string s = b;
  if (s == "-0.00") s = "0.00";
  return s;
}

double nice_step(double span, int max_ticks) {
  if (!std::isfinite(span) || span <= 0) return 1.0;
  const double raw = span / std::max(1, max_ticks);
  double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (int guard = 0; guard < 4; ++guard, p *= 10) {
    for (double m : {1.0, 2.0, 5.0}) {
      if (m * p >= raw * (1 - 1e-9)) return m * p;
    }
  }
  return 10 * p;
}

std::vector<double> Axis::ticks() const {
  std::vector<double> out;
  if (!(step > 0) || !std::isfinite(lo) || !std::isfinite(hi)) return out;
  const long n0 = std::lround(lo / step);
  const long n1 = std::lround(hi / step);
  for (long n = n0; n <= n1 && out.size() < 200; ++n) out.push_back(static_cast<double>(n) * step);
  return out;
}

std::string Axis::label(double v) const {
  int decimals = 0;
  if (step > 0 && step < 1) decimals = static_cast<int>(std::ceil(-std::log10(step) - 1e-9));
  decimals = std::clamp(decimals, 0, 9);
  if (std::fabs(v) < step * 1e-6) v = 0;
  char b[48];
  if (std::fabs(v) >= 1e7 || (v != 0 && std::fabs(v) < 1e-6)) {
    std::snprintf(b, sizeof b, "%g", v);
  } else {
    std::snprintf(b, sizeof b, "%.*f", decimals, v);
  }
  return b;
}

Axis Axis::fit(double lo, double hi, int max_ticks) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) lo = 0, hi = 1;
  if (hi < lo) std::swap(lo, hi);
  if (hi - lo <= std::max(1e-9, 1e-9 * std::fabs(hi))) {
    const double pad = lo == 0 ? 0.5 : std::fabs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  Axis a;
  a.step = nice_step(hi - lo, max_ticks);
  // Widening to whole steps can add an interval at each end; take a larger step if it overflows.
  for (int guard = 0; guard < 8; ++guard) {
    a.lo = std::floor(lo / a.step + 1e-9) * a.step;
    a.hi = std::ceil(hi / a.step - 1e-9) * a.step;
    if (a.hi <= a.lo) a.hi = a.lo + a.step;
    if ((a.hi - a.lo) / a.step <= max_ticks + 0.5) break;
    a.step = nice_step(a.step * 1.01 * max_ticks, max_ticks);
  }
  return a;
}

Frame::Frame(Axis x, Axis y, double width, double height, double left, double right, double top,
             double bottom)
    : x_(x), y_(y), w_(width), h_(height), l_(left), r_(right), t_(top), b_(bottom) {}

Frame Frame::equal_scale(Axis x, Axis y, double max_w, double max_h) {
  const double sx = max_w / (x.hi - x.lo), sy = max_h / (y.hi - y.lo);
  const double s = std::min(sx, sy);
  const double l = 58, r = 14, t = 10, b = 40;
  return Frame(x, y, (x.hi - x.lo) * s + l + r, (y.hi - y.lo) * s + t + b, l, r, t, b);
}

double Frame::px(double x) const { return l_ + (x - x_.lo) / (x_.hi - x_.lo) * (w_ - l_ - r_); }
double Frame::py(double y) const { return t_ + (y_.hi - y) / (y_.hi - y_.lo) * (h_ - t_ - b_); }

std::string Frame::open(const std::string& cls, const std::string& aria,
                        const std::string& clip_id) {
  clip_id_ = clip_id;
  return "<svg class=\"plot " + cls + "\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(w_) +
         "\" height=\"" + num(h_) + "\" viewBox=\"0 0 " + num(w_) + " " + num(h_) +
         "\" role=\"img\" aria-label=\"" + html_escape(aria) + "\">\n<defs><clipPath id=\"" +
         html_escape(clip_id) + "\"><rect x=\"" + num(l_) + "\" y=\"" + num(t_) + "\" width=\"" +
         num(w_ - l_ - r_) + "\" height=\"" + num(h_ - t_ - b_) + "\"/></clipPath></defs>\n";
}

std::string Frame::clip_attr() const { return "clip-path=\"url(#" + html_escape(clip_id_) + ")\""; }

std::string Frame::axes(const std::string& x_title, const std::string& y_title,
                        bool y_ticks) const {
  const double x1 = w_ - r_, y1 = h_ - b_;
  std::string s = "<rect class=\"bg\" x=\"" + num(l_) + "\" y=\"" + num(t_) + "\" width=\"" +
                  num(x1 - l_) + "\" height=\"" + num(y1 - t_) + "\"/>\n<g class=\"grid\">";
  std::string labels = "<g class=\"ticks x\">";
  for (double v : x_.ticks()) {
    const std::string p = num(px(v));
    s += "<line x1=\"" + p + "\" x2=\"" + p + "\" y1=\"" + num(t_) + "\" y2=\"" + num(y1) + "\"/>";
    labels += "<line x1=\"" + p + "\" x2=\"" + p + "\" y1=\"" + num(y1) + "\" y2=\"" + num(y1 + 4) +
              "\"/><text x=\"" + p + "\" y=\"" + num(y1 + 15) + "\" text-anchor=\"middle\">" +
              x_.label(v) + "</text>";
  }
  labels += "</g>\n<g class=\"ticks y\">";
  for (double v : y_ticks ? y_.ticks() : std::vector<double>{}) {
    const std::string p = num(py(v));
    s += "<line x1=\"" + num(l_) + "\" x2=\"" + num(x1) + "\" y1=\"" + p + "\" y2=\"" + p + "\"/>";
    labels += "<line x1=\"" + num(l_ - 4) + "\" x2=\"" + num(l_) + "\" y1=\"" + p + "\" y2=\"" + p +
              "\"/><text x=\"" + num(l_ - 6) + "\" y=\"" + p + "\" dy=\"4\" text-anchor=\"end\">" +
              y_.label(v) + "</text>";
  }
  s += "</g>\n" + labels + "</g>\n";
  s += "<rect class=\"frame\" x=\"" + num(l_) + "\" y=\"" + num(t_) + "\" width=\"" + num(x1 - l_) +
       "\" height=\"" + num(y1 - t_) + "\"/>\n";
  s += "<text class=\"axis-title x\" x=\"" + num((l_ + x1) / 2) + "\" y=\"" + num(h_ - 6) +
       "\" text-anchor=\"middle\">" + html_escape(x_title) + "</text>\n";
  if (!y_ticks) return s;
  s += "<text class=\"axis-title y\" transform=\"translate(12 " + num((t_ + y1) / 2) +
       ") rotate(-90)\" text-anchor=\"middle\">" + html_escape(y_title) + "</text>\n";
  return s;
}

}  // namespace fieldproof::report::svg
