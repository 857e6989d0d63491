#include "fieldproof/network/link_model.hpp"

#include <algorithm>
#include <cmath>

namespace fieldproof::network {

namespace {

int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// The nearest-rank percentile of sorted values.
int64_t percentile(const std::vector<int64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  const double rank = std::ceil(p * static_cast<double>(sorted.size()));
  const size_t i = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return sorted[std::min(i, sorted.size() - 1)];
}

}  // namespace

LinkModel::LinkModel(std::string name, LinkParams params, const RandomSource& network,
                     Duration window)
    : name_(std::move(name)),
      params_(params),
      window_(window.ns() > 0 ? window : seconds(1)),
      rng_{network.child(name_).child("down"), network.child(name_).child("up")} {}

double LinkModel::effective_loss() const {
  double loss = std::clamp(params_.loss, 0.0, 1.0);
  if (params_.range_m && params_.degrade_from_m && distance_m_ > *params_.degrade_from_m &&
      *params_.range_m > *params_.degrade_from_m) {
    const double f = (distance_m_ - *params_.degrade_from_m) /
                     (*params_.range_m - *params_.degrade_from_m);
    loss += (1.0 - loss) * std::clamp(f, 0.0, 1.0);
  }
  return loss;
}

double LinkModel::quality() const { return up() ? 1.0 - effective_loss() : 0.0; }

std::string LinkModel::cause() const {
  if (causes_ & static_cast<uint8_t>(DownCause::kTimeline)) return "timeline";
  if (causes_ & static_cast<uint8_t>(DownCause::kRange)) return "range";
  if (causes_ & static_cast<uint8_t>(DownCause::kOutage)) return "outage";
  return "";
}

LinkModel::Acc& LinkModel::acc(SimTime t) {
  // A message of a window already closed (it cannot happen for sends, which are never before
  // now) counts in the first open one.
  return windows_[std::max(floor_div(t.ns(), window_.ns()), next_window_)];
}

std::optional<SimTime> LinkModel::send(Direction d, SimTime stamp, size_t bytes) {
  const int k = d == Direction::kUp ? 1 : 0;
  RandomSource& rng = rng_[k];
  // Always two draws, so the stream of draws does not depend on the link's state.
  const double u_loss = rng.uniform01();
  const double u_jitter = rng.uniform01();
  ++sent_;
  Acc& at_send = acc(stamp);
  ++at_send.sent;
  if (!up() || u_loss < effective_loss()) {
    ++lost_;
    ++at_send.lost;
    return std::nullopt;
  }
  SimTime start = std::max(stamp, busy_until_[k]);
  if (params_.bandwidth_bps > 0) {
    const double tx_s = static_cast<double>(bytes) * 8.0 / params_.bandwidth_bps;
    busy_until_[k] = start + Duration::from_ns(std::llround(tx_s * 1e9));
    start = busy_until_[k];
  }
  const auto jitter_ns =
      static_cast<int64_t>(std::floor(u_jitter * static_cast<double>(params_.jitter.ns())));
  SimTime at = start + params_.latency + Duration::from_ns(jitter_ns);
  at = std::max(at, last_delivery_[k]);
  last_delivery_[k] = at;
  ++delivered_;
  Acc& at_delivery = acc(at);
  ++at_delivery.delivered;
  at_delivery.latencies.push_back((at - stamp).ns());
  return at;
}

void LinkModel::set_causes(uint8_t causes, SimTime now) {
  const bool was_up = up();
  causes_ = causes;
  if (was_up && !up()) down_since_ = now;
  if (!was_up && up()) {
    longest_outage_ = std::max(longest_outage_, now - down_since_);
    down_since_ = SimTime::infinite();
  }
  if (was_up != up()) transitions_.push_back({now, up()});
}

namespace {
uint8_t with(uint8_t causes, DownCause c, bool on) {
  const auto bit = static_cast<uint8_t>(c);
  return static_cast<uint8_t>(on ? (causes | bit) : (causes & ~bit));
}
}  // namespace

void LinkModel::set_forced_down(bool down, SimTime now) {
  set_causes(with(causes_, DownCause::kTimeline, down), now);
}

void LinkModel::set_geometry(double distance_m, bool in_outage, SimTime now) {
  distance_m_ = distance_m;
  // Both causes at once, so a range outage turning into a region outage is one outage.
  const bool beyond = params_.range_m && distance_m > *params_.range_m;
  set_causes(with(with(causes_, DownCause::kRange, beyond), DownCause::kOutage, in_outage), now);
}

Duration LinkModel::longest_outage(SimTime now) const {
  if (down_since_.is_infinite()) return longest_outage_;
  return std::max(longest_outage_, now - down_since_);
}

bool LinkModel::up_at(SimTime t) const {
  bool state = base_up_;
  for (const auto& [at, u] : transitions_) {
    if (at > t) break;
    state = u;
  }
  return state;
}

std::vector<LinkWindow> LinkModel::close_windows(SimTime now, bool final) {
  std::vector<LinkWindow> out;
  const int64_t w = window_.ns();
  while (true) {
    const SimTime start = SimTime::from_ns(next_window_ * w);
    SimTime end = start + window_;
    if (end > now) {
      if (!final || now <= start) break;
      end = now;
    }
    LinkWindow lw;
    lw.link = name_;
    lw.start = start;
    lw.end = end;
    if (auto it = windows_.find(next_window_); it != windows_.end()) {
      Acc& a = it->second;
      lw.sent = a.sent;
      lw.delivered = a.delivered;
      lw.lost = a.lost;
      std::sort(a.latencies.begin(), a.latencies.end());
      lw.latency_p50_ns = percentile(a.latencies, 0.50);
      lw.latency_p95_ns = percentile(a.latencies, 0.95);
      lw.latency_max_ns = a.latencies.empty() ? 0 : a.latencies.back();
      windows_.erase(it);
    }
    // The state just before the window's end (a change at the end belongs to the next window).
    lw.up = up_at(end - Duration::from_ns(1));
    lw.quality = lw.up ? 1.0 - effective_loss() : 0.0;
    out.push_back(lw);
    ++next_window_;
    if (end == now && final) break;
  }
  // Transitions no window will ask about again.
  const SimTime kept = SimTime::from_ns(next_window_ * w);
  while (!transitions_.empty() && transitions_.front().first <= kept - Duration::from_ns(1)) {
    base_up_ = transitions_.front().second;
    transitions_.erase(transitions_.begin());
  }
  return out;
}

}  // namespace fieldproof::network
