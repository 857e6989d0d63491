#include "engine/links.hpp"

#include <algorithm>

namespace fieldproof::engine {

network::NetworkConfig network_config(const scenario::Scenario& s) {
  const scenario::NetworkSection& n = s.network;
  network::NetworkConfig c;
  c.ground = n.ground;
  c.ground_x = n.ground_x;
  c.ground_y = n.ground_y;
  c.seed = static_cast<uint64_t>(s.seed);
  for (const scenario::NetworkLink& l : n.links) {
    network::LinkConfig lc;
    lc.name = l.name;
    lc.vehicle = l.vehicle;
    lc.peer = l.peer;
    lc.params.latency = l.latency;
    lc.params.jitter = l.jitter;
    lc.params.loss = l.loss;
    lc.params.bandwidth_bps = l.bandwidth_kbps ? *l.bandwidth_kbps * 1000.0 : 0.0;
    lc.params.range_m = l.range_m;
    lc.params.degrade_from_m = l.degrade_from_m;
    c.links.push_back(std::move(lc));
  }
  c.uplink.push_back("navigate_to_pose/status");
  c.reliable = {"navigate_to_pose/goal", "navigate_to_pose/status"};
  for (const std::string& t : n.telemetry) {
    if (std::find(c.uplink.begin(), c.uplink.end(), t) == c.uplink.end()) c.uplink.push_back(t);
  }
  for (const scenario::NetworkOutage& o : n.outages) {
    network::Outage out;
    out.name = o.name;
    out.vehicles = o.vehicles;
    switch (o.region.kind) {
      case scenario::NetworkRegion::Kind::kBox:
        out.region.kind = network::Region::Kind::kBox;
        out.region.x_min = o.region.x_min;
        out.region.x_max = o.region.x_max;
        out.region.y_min = o.region.y_min;
        out.region.y_max = o.region.y_max;
        break;
      case scenario::NetworkRegion::Kind::kCircle:
        out.region.kind = network::Region::Kind::kCircle;
        out.region.cx = o.region.x;
        out.region.cy = o.region.y;
        out.region.radius = o.region.radius;
        break;
      case scenario::NetworkRegion::Kind::kPolygon:
        out.region.kind = network::Region::Kind::kPolygon;
        out.region.polygon = o.region.polygon;
        break;
    }
    c.outages.push_back(std::move(out));
  }
  if (s.time.mode == scenario::TimeMode::kLockstep) c.ack_timeout = s.time.ack_timeout;
  return c;
}

}  // namespace fieldproof::engine
