// The axes every plot of report.html shares: round ("nice") ticks of 1, 2 or 5 x 10^k, grid lines,
// tick labels and axis titles with their units (docs/reports.md, "report.html").
//
//   svg::Axis x = svg::Axis::fit(0, 48.3, 8), y = svg::Axis::fit(0.2, 1.4, 5);
//   svg::Frame f(x, y, 640, 200);            // the plot area in pixels, margins for the labels
//   std::string s = f.open("rtf", "real-time factor", "clip-rtf") + f.axes("simulated time (s)",
//   "RTF") + ... s += "<path d=\"M" + svg::num(f.px(t)) + " " + svg::num(f.py(v)) + ..."; s +=
//   f.close();
#pragma once

#include <string>
#include <vector>

namespace fieldproof::report::svg {

// A number for an SVG attribute (two decimals; 0 for a non-finite value).
std::string num(double v);

// 1, 2 or 5 x 10^k: the smallest such step giving at most `max_ticks` intervals over `span`.
double nice_step(double span, int max_ticks);

// One axis: its range (widened to whole steps) and its ticks.
struct Axis {
  double lo = 0.0;
  double hi = 1.0;
  double step = 0.2;
  // The ticks from lo to hi, one per step (lo and hi are multiples of the step).
  std::vector<double> ticks() const;
  // A tick's label with as many decimals as the step needs ("0", "2.5" never: steps are 1/2/5).
  std::string label(double v) const;
  // [lo, hi] widened to whole steps; an empty or degenerate range becomes one around it.
  static Axis fit(double lo, double hi, int max_ticks);
};

// A plot: the SVG's size, the plot area inside the margins, data-to-pixel mapping.
class Frame {
 public:
  Frame(Axis x, Axis y, double width, double height, double left = 58, double right = 14,
        double top = 10, double bottom = 40);
  // The same with the plot area sized so that a metre is as long on both axes (maps):
  // `max_w` x `max_h` pixels at most for the plot area.
  static Frame equal_scale(Axis x, Axis y, double max_w, double max_h);

  double px(double x) const;  // data x -> pixels (not clamped)
  double py(double y) const;  // data y -> pixels, y up
  double width() const { return w_; }
  double height() const { return h_; }
  const Axis& x() const { return x_; }
  const Axis& y() const { return y_; }
  // <svg class="plot CLS" ...> with a clipPath named CLIP-ID for the plot area.
  std::string open(const std::string& cls, const std::string& aria, const std::string& clip_id);
  // The plot area's background, the grid, the tick marks and labels, the axis titles; without
  // y ticks (a bar chart's rows), the x axis alone.
  std::string axes(const std::string& x_title, const std::string& y_title,
                   bool y_ticks = true) const;
  // clip-path="url(#ID)" for what must stay inside the plot area.
  std::string clip_attr() const;
  static std::string close() { return "</svg>\n"; }

 private:
  Axis x_, y_;
  double w_, h_, l_, r_, t_, b_;
  std::string clip_id_;
};

}  // namespace fieldproof::report::svg
