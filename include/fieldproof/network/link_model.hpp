// The model of one radio link in simulated time (docs/network.md): what happens to a message that
// crosses it, whether it is up, and its measurements one window a second.
//
//   LinkParams p;
//   p.latency = milliseconds(50);
//   p.jitter = milliseconds(10);
//   p.loss = 0.05;
//   LinkModel link("gcs-ugv1", p, RandomSource(seed).child("network"));
//   if (auto at = link.send(Direction::kDown, now, payload.size())) publish_at(*at, ...);
//   for (const LinkWindow& w : link.close_windows(now)) record(w);
//
// Every message draws exactly two numbers (loss, then jitter) from the direction's own source,
// RandomSource(seed).child("network/<link>/<up|down>"), whether or not it is lost, so a seed
// gives the same deliveries in every run and one direction's traffic does not shift the other's
// draws. A message is lost when the link is down or the loss draw says so; otherwise it is
// delivered at
//     max(stamp, the end of the previous transmission) + bytes * 8 / bandwidth   (transmission)
//     + latency + jitter * u                                                     (u in [0, 1))
// and never before an earlier message of the same direction (a radio link delivers in order).
// Durations are rounded to whole nanoseconds once, here; nothing accumulates in floating point.
//
// Not thread-safe: one owner (the engine's thread).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fieldproof/time/duration.hpp"
#include "fieldproof/time/random_source.hpp"

namespace fieldproof::network {

enum class Direction : uint8_t {
  kDown,  // to the link's vehicle: from the ground station, or from a vehicle link's peer
  kUp,    // from the link's vehicle: to the ground station, or to the peer
};

struct LinkParams {
  Duration latency = milliseconds(20);  // fixed one-way delay
  Duration jitter = Duration::zero();   // plus uniform [0, jitter)
  double loss = 0.0;                    // probability that a message is lost, [0, 1]
  double bandwidth_bps = 0.0;           // bits per second; 0 = unlimited
  std::optional<double> range_m;        // beyond this distance the link is down
  // Between degrade_from_m and range_m the loss rises linearly from `loss` to 1 and the quality
  // falls accordingly; needs range_m.
  std::optional<double> degrade_from_m;
};

// Why a link is down. Several causes may hold at once; the link is up when none does.
enum class DownCause : uint8_t { kTimeline = 1, kRange = 2, kOutage = 4 };

// One window of a link's measurements ([start, end), one simulated second).
struct LinkWindow {
  std::string link;
  SimTime start;
  SimTime end;
  uint64_t sent = 0;       // messages handed to the link in the window (both directions)
  uint64_t delivered = 0;  // messages whose delivery falls in the window
  uint64_t lost = 0;       // messages sent in the window that will never be delivered
  // Latency of the messages delivered in the window (ns); zero when none was.
  int64_t latency_p50_ns = 0;
  int64_t latency_p95_ns = 0;
  int64_t latency_max_ns = 0;
  bool up = true;  // at the window's end
  double quality = 1.0;
};

class LinkModel {
 public:
  // `network` is the run's RandomSource for the network ("network" child of the root); the
  // link's sources are its children "<name>/down" and "<name>/up".
  LinkModel(std::string name, LinkParams params, const RandomSource& network,
            Duration window = seconds(1));

  const std::string& name() const { return name_; }
  const LinkParams& params() const { return params_; }

  // The fate of a message of `bytes` bytes sent at `stamp` (never before an earlier send's stamp):
  // its delivery time, or nullopt when it is lost.
  std::optional<SimTime> send(Direction d, SimTime stamp, size_t bytes);

  // The timeline's link.down / link.up, and the geometry (distance to the other end, inside an
  // outage region), as of `now`. They change up() and quality() for later sends.
  void set_forced_down(bool down, SimTime now);
  void set_geometry(double distance_m, bool in_outage, SimTime now);

  bool up() const { return causes_ == 0; }
  // 0 while down, else 1 - the loss probability in effect.
  double quality() const;
  // "timeline", "range", "outage" (the first that holds, in that order); "" while up.
  std::string cause() const;
  // Since when the link has been down (infinite while up).
  SimTime down_since() const { return down_since_; }

  // Windows whose end is at or before `now`, in order, each once. With `final`, also the window
  // in progress at `now` (its end is then `now`; the run ended).
  std::vector<LinkWindow> close_windows(SimTime now, bool final = false);

  // Totals since the start.
  uint64_t sent() const { return sent_; }
  uint64_t delivered() const { return delivered_; }  // scheduled for delivery
  uint64_t lost() const { return lost_; }
  Duration longest_outage(SimTime now) const;

 private:
  struct Acc {
    uint64_t sent = 0, delivered = 0, lost = 0;
    std::vector<int64_t> latencies;
  };
  double effective_loss() const;
  void set_causes(uint8_t causes, SimTime now);
  Acc& acc(SimTime t);
  bool up_at(SimTime t) const;

  std::string name_;
  LinkParams params_;
  Duration window_;
  RandomSource rng_[2];
  SimTime busy_until_[2] = {SimTime::zero(), SimTime::zero()};
  SimTime last_delivery_[2] = {SimTime::zero(), SimTime::zero()};
  uint8_t causes_ = 0;
  double distance_m_ = 0.0;
  SimTime down_since_ = SimTime::infinite();
  // Changes of up() not yet behind a closed window, and the state before the first of them.
  std::vector<std::pair<SimTime, bool>> transitions_;
  bool base_up_ = true;
  Duration longest_outage_ = Duration::zero();
  std::map<int64_t, Acc> windows_;  // by window index
  int64_t next_window_ = 0;         // the first window not closed yet
  uint64_t sent_ = 0, delivered_ = 0, lost_ = 0;
};

}  // namespace fieldproof::network
