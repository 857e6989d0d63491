#include "fieldproof/network/network.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <unordered_map>

#include "fieldproof/msgs/navigation.hpp"
#include "fieldproof/msgs/types.hpp"
#include "fieldproof/time/seconds.hpp"

namespace fieldproof::network {

using nlohmann::json;

namespace {

double round6(double v) { return std::round(v * 1e6) / 1e6; }

// The vehicle of a /model/<v>/... topic, "" for any other.
std::string vehicle_of(const std::string& topic) {
  constexpr std::string_view kPrefix = "/model/";
  if (topic.rfind(kPrefix, 0) != 0) return "";
  const size_t end = topic.find('/', kPrefix.size());
  if (end == std::string::npos) return "";
  return topic.substr(kPrefix.size(), end - kPrefix.size());
}

json window_json(const LinkWindow& w) {
  return {{"link", w.link},
          {"start_s", to_seconds(w.start)},
          {"end_s", to_seconds(w.end)},
          {"sent", w.sent},
          {"delivered", w.delivered},
          {"lost", w.lost},
          {"latency_p50_s", round6(static_cast<double>(w.latency_p50_ns) / 1e9)},
          {"latency_p95_s", round6(static_cast<double>(w.latency_p95_ns) / 1e9)},
          {"latency_max_s", round6(static_cast<double>(w.latency_max_ns) / 1e9)},
          {"up", w.up},
          {"quality", round6(w.quality)}};
}

}  // namespace

bool Region::contains(double x, double y) const {
  switch (kind) {
    case Kind::kBox:
      return x >= x_min && x <= x_max && y >= y_min && y <= y_max;
    case Kind::kCircle: {
      const double dx = x - cx, dy = y - cy;
      return dx * dx + dy * dy <= radius * radius;
    }
    case Kind::kPolygon: {
      // Even-odd rule; a point on an edge counts as inside.
      bool in = false;
      const size_t n = polygon.size();
      for (size_t i = 0, j = n - 1; i < n; j = i++) {
        const auto [xi, yi] = polygon[i];
        const auto [xj, yj] = polygon[j];
        const double cross = (xj - xi) * (y - yi) - (yj - yi) * (x - xi);
        if (std::abs(cross) < 1e-12 && x >= std::min(xi, xj) && x <= std::max(xi, xj) &&
            y >= std::min(yi, yj) && y <= std::max(yi, yj)) {
          return true;
        }
        if ((yi > y) != (yj > y) && x < (xj - xi) * (y - yi) / (yj - yi) + xi) in = !in;
      }
      return in;
    }
  }
  return false;
}

struct Network::Impl {
  NetworkConfig cfg;
  NetworkHooks hooks;
  std::vector<LinkModel> links;
  std::map<std::string, size_t> ground_link;  // vehicle -> its ground link
  std::map<std::string, std::pair<double, double>> positions;
  std::set<std::string> uplink_topics;  // what vehicles send up to the ground station
  // Vehicle-to-vehicle routes, by the sender's topic (/model/<sender>/<topic>).
  struct Route {
    size_t link = 0;
    Direction dir = Direction::kUp;
    std::string delivered;  // peer_topic(receiver, sender, topic)
  };
  std::map<std::string, std::vector<Route>> peer_routes;
  // Per uplink topic (/model/<v>/<t>), what its messages need, found once.
  struct Uplink {
    std::string vehicle;
    size_t link = 0;
    bool reliable = false;
    std::string ground;  // ground_topic(topic)
    std::optional<SimTime> last_seen;
  };
  std::unordered_map<std::string, Uplink> uplinks;
  std::vector<LinkWindow> windows;  // every closed window, for the summary
  SimTime next_state = SimTime::infinite();
  // Reliable topics: the messages waiting for an attempt that arrives, per (direction, topic).
  struct Pending {
    std::string topic;      // as published on delivery
    std::string payload;
    std::string type;
    std::string vehicle;
    size_t link = 0;
    Direction dir = Direction::kDown;
  };
  struct Queue {
    std::vector<Pending> items;  // the head is being retried
    SimTime due = SimTime::infinite();
  };
  std::map<std::string, Queue> queues;  // key: "<d|u><topic as published>"
  std::set<std::string> reliable_topics;  // vehicle-side topics

  Duration retry(size_t link) const {
    const LinkParams& p = links[link].params();
    return std::max(Duration(milliseconds(1)), p.latency * 2 + p.jitter);
  }
  // One attempt of the head of q at `now`: its delivery time when it crossed.
  std::optional<SimTime> attempt(Queue& q, SimTime now, bool retried) {
    Pending& p = q.items.front();
    const auto at = links[p.link].send(p.dir, now, p.payload.size());
    if (!at) {
      q.due = now + retry(p.link);
      return std::nullopt;
    }
    if (retried && hooks.on_retried_delivery) hooks.on_retried_delivery(p.topic, p.vehicle, *at);
    hooks.publish_at(*at, p.topic, std::move(p.payload), p.type);
    q.items.erase(q.items.begin());
    q.due = SimTime::infinite();
    return at;
  }
  // Sends a reliable message: its delivery time when the first attempt crossed.
  std::optional<SimTime> send_reliable(Pending p, SimTime now) {
    const std::string key = (p.dir == Direction::kDown ? "d" : "u") + p.topic;
    Queue& q = queues[key];
    q.items.push_back(std::move(p));
    if (q.items.size() > 1) return std::nullopt;  // behind an earlier one
    return attempt(q, now, false);
  }
  void retry_due(SimTime now) {
    for (auto& [key, q] : queues) {
      (void)key;
      while (!q.items.empty() && q.due <= now) {
        if (!attempt(q, now, true)) break;
        // The next one in line goes at once.
        if (!q.items.empty()) q.due = now;
      }
    }
  }
  SimTime next_retry() const {
    SimTime due = SimTime::infinite();
    for (const auto& [key, q] : queues) {
      (void)key;
      if (!q.items.empty()) due = std::min(due, q.due);
    }
    return due;
  }
  std::string failure;

  const LinkConfig& lc(size_t i) const { return cfg.links[i]; }

  void publish_state(size_t i, SimTime at) {
    const LinkModel& l = links[i];
    msgs::LinkStateMsg m{l.name(), l.up(), l.quality(), l.cause()};
    const std::string payload = msgs::encode(m);
    hooks.publish_at(at, link_state_topic(lc(i).vehicle), payload, std::string(msgs::kLinkState));
    if (!lc(i).peer.empty()) {
      hooks.publish_at(at, link_state_topic(lc(i).peer), payload, std::string(msgs::kLinkState));
    }
  }
  // Applies a change of state made at `now`: link_state at once, the hook.
  void changed(size_t i, bool was_up, SimTime now) {
    const LinkModel& l = links[i];
    if (l.up() == was_up) return;
    publish_state(i, now);
    if (hooks.on_change) hooks.on_change(l.name(), lc(i).vehicle, l.up(), l.cause(), now);
  }
  double distance(size_t i) const {
    const auto a = positions.find(lc(i).vehicle);
    if (a == positions.end()) return 0.0;
    double bx = cfg.ground_x, by = cfg.ground_y;
    if (!lc(i).peer.empty()) {
      const auto b = positions.find(lc(i).peer);
      if (b == positions.end()) return 0.0;
      bx = b->second.first;
      by = b->second.second;
    }
    return std::hypot(a->second.first - bx, a->second.second - by);
  }
  bool in_outage(const std::string& vehicle) const {
    const auto p = positions.find(vehicle);
    if (p == positions.end()) return false;
    for (const Outage& o : cfg.outages) {
      if (!o.vehicles.empty() &&
          std::find(o.vehicles.begin(), o.vehicles.end(), vehicle) == o.vehicles.end()) {
        continue;
      }
      if (o.region.contains(p->second.first, p->second.second)) return true;
    }
    return false;
  }
  void close(SimTime now, bool final) {
    for (LinkModel& l : links) {
      for (LinkWindow& w : l.close_windows(now, final)) {
        if (hooks.on_window) hooks.on_window(w);
        windows.push_back(std::move(w));
      }
    }
  }
};

Network::Network(NetworkConfig config, NetworkHooks hooks) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.cfg = std::move(config);
  m.hooks = std::move(hooks);
  const RandomSource root = RandomSource(m.cfg.seed).child("network");
  for (size_t i = 0; i < m.cfg.links.size(); ++i) {
    const LinkConfig& c = m.cfg.links[i];
    m.links.emplace_back(c.name, c.params, root, m.cfg.window);
    if (c.peer.empty()) {
      m.ground_link.emplace(c.vehicle, i);
      continue;
    }
    for (const std::string& t : c.topics) {
      m.peer_routes["/model/" + c.vehicle + "/" + t].push_back(
          {i, Direction::kUp, peer_topic(c.peer, c.vehicle, t)});
      m.peer_routes["/model/" + c.peer + "/" + t].push_back(
          {i, Direction::kDown, peer_topic(c.vehicle, c.peer, t)});
    }
  }
  for (const auto& [v, i] : m.ground_link) {
    for (const std::string& t : m.cfg.uplink) m.uplink_topics.insert("/model/" + v + "/" + t);
    for (const std::string& t : m.cfg.reliable) m.reliable_topics.insert("/model/" + v + "/" + t);
    for (const std::string& t : m.cfg.uplink) {
      const std::string topic = "/model/" + v + "/" + t;
      m.uplinks[topic] = {v, i, m.reliable_topics.count(topic) != 0, ground_topic(topic), {}};
    }
  }
}

Network::~Network() = default;

const NetworkConfig& Network::config() const { return impl_->cfg; }

std::vector<std::string> Network::uplink_topics() const {
  std::set<std::string> all = impl_->uplink_topics;
  for (const auto& [topic, routes] : impl_->peer_routes) {
    (void)routes;
    all.insert(topic);
  }
  return {all.begin(), all.end()};
}

std::string Network::peer_topic(const std::string& receiver, const std::string& sender,
                                const std::string& topic) {
  return "/model/" + receiver + "/peers/" + sender + "/" + topic;
}

std::string Network::ground_topic(const std::string& vehicle_topic) const {
  return "/ground/" + impl_->cfg.ground + vehicle_topic;
}

std::string Network::link_state_topic(const std::string& vehicle) {
  return "/model/" + vehicle + "/link_state";
}

bool Network::has_ground_link(const std::string& vehicle) const {
  return impl_->ground_link.count(vehicle) != 0;
}

void Network::start(SimTime now) {
  Impl& m = *impl_;
  for (size_t i = 0; i < m.links.size(); ++i) m.publish_state(i, now);
  m.next_state = now + m.cfg.window;
}

Network::Sent Network::send_from_ground(SimTime now, const std::string& topic,
                                        std::string payload, const std::string& type) {
  Impl& m = *impl_;
  Sent s;
  s.vehicle = vehicle_of(topic);
  const auto it = m.ground_link.find(s.vehicle);
  if (it == m.ground_link.end()) return s;
  s.routed = true;
  if (m.reliable_topics.count(topic) != 0) {
    s.delivery = m.send_reliable({topic, std::move(payload), type, s.vehicle, it->second,
                                  Direction::kDown},
                                 now);
    return s;
  }
  s.delivery = m.links[it->second].send(Direction::kDown, now, payload.size());
  if (s.delivery) m.hooks.publish_at(*s.delivery, topic, std::move(payload), type);
  return s;
}

void Network::on_vehicle_message(const std::string& topic, SimTime stamp, std::string payload,
                                 const std::string& type) {
  Impl& m = *impl_;
  // To the other vehicles first (each link in the order of the network section), then up.
  if (const auto r = m.peer_routes.empty() ? m.peer_routes.end() : m.peer_routes.find(topic);
      r != m.peer_routes.end()) {
    for (const Impl::Route& route : r->second) {
      if (auto at = m.links[route.link].send(route.dir, stamp, payload.size())) {
        m.hooks.publish_at(*at, route.delivered, payload, type);
      }
    }
  }
  const auto it = m.uplinks.find(topic);
  if (it == m.uplinks.end()) return;
  Impl::Uplink& up = it->second;
  up.last_seen = stamp;
  if (up.reliable) {
    (void)m.send_reliable(
        {up.ground, std::move(payload), type, up.vehicle, up.link, Direction::kUp}, stamp);
    return;
  }
  if (auto at = m.links[up.link].send(Direction::kUp, stamp, payload.size())) {
    m.hooks.publish_at(*at, up.ground, std::move(payload), type);
  }
}

Duration Network::min_delay(const std::string& topic) const {
  const Impl& m = *impl_;
  std::optional<Duration> least;
  const auto take = [&](size_t link) {
    const Duration d = m.links[link].params().latency;
    if (!least || d < *least) least = d;
  };
  if (const auto r = m.peer_routes.find(topic); r != m.peer_routes.end()) {
    for (const Impl::Route& route : r->second) take(route.link);
  }
  if (const auto it = m.uplinks.find(topic); it != m.uplinks.end()) take(it->second.link);
  return least ? *least : Duration::zero();
}

std::optional<SimTime> Network::last_seen(const std::string& topic) const {
  const auto it = impl_->uplinks.find(topic);
  if (it == impl_->uplinks.end()) return std::nullopt;
  return it->second.last_seen;
}

bool Network::uses_positions() const {
  const Impl& m = *impl_;
  if (!m.cfg.outages.empty()) return true;
  return std::any_of(m.links.begin(), m.links.end(),
                     [](const LinkModel& l) { return l.params().range_m.has_value(); });
}

void Network::on_pose(const std::string& vehicle, double x, double y, SimTime stamp) {
  Impl& m = *impl_;
  m.positions[vehicle] = {x, y};
  for (size_t i = 0; i < m.links.size(); ++i) {
    const LinkConfig& c = m.lc(i);
    if (c.vehicle != vehicle && c.peer != vehicle) continue;
    const bool was_up = m.links[i].up();
    const bool outage = m.in_outage(c.vehicle) || (!c.peer.empty() && m.in_outage(c.peer));
    m.links[i].set_geometry(m.distance(i), outage, stamp);
    m.changed(i, was_up, stamp);
  }
}

bool Network::set_link_down(const std::string& vehicle, bool down, SimTime now) {
  Impl& m = *impl_;
  bool any = false;
  for (size_t i = 0; i < m.links.size(); ++i) {
    if (m.lc(i).vehicle != vehicle && m.lc(i).peer != vehicle) continue;
    any = true;
    const bool was_up = m.links[i].up();
    m.links[i].set_forced_down(down, now);
    m.changed(i, was_up, now);
  }
  return any;
}

std::string Network::tick(SimTime now) {
  Impl& m = *impl_;
  m.retry_due(now);
  m.close(now, false);
  while (m.next_state <= now) {
    for (size_t i = 0; i < m.links.size(); ++i) m.publish_state(i, std::max(m.next_state, now));
    m.next_state = m.next_state + m.cfg.window;
  }
  if (m.cfg.ack_timeout && m.failure.empty()) {
    for (const auto& [v, i] : m.ground_link) {
      const LinkModel& l = m.links[i];
      if (!l.up() && now - l.down_since() > *m.cfg.ack_timeout) {
        char since[32], limit[32];
        std::snprintf(since, sizeof since, "%.3f", to_seconds(l.down_since()));
        std::snprintf(limit, sizeof limit, "%.3f", to_seconds(*m.cfg.ack_timeout));
        m.failure = "lockstep: link " + l.name() + " to " + v + " down since " + since +
                    " s, longer than time.ack_timeout_s (" + limit +
                    " s): the clock cannot reach " + v + " and its acknowledgement cannot return";
        break;
      }
    }
  }
  return m.failure;
}

SimTime Network::next_due() const {
  const Impl& m = *impl_;
  SimTime due = std::min(m.next_state, m.next_retry());
  if (m.cfg.ack_timeout && m.failure.empty()) {
    for (const auto& [v, i] : m.ground_link) {
      (void)v;
      const LinkModel& l = m.links[i];
      if (!l.up()) due = std::min(due, l.down_since() + *m.cfg.ack_timeout + Duration::from_ns(1));
    }
  }
  return due;
}

void Network::finish(SimTime now) { impl_->close(now, true); }

json Network::summary(SimTime now) const {
  const Impl& m = *impl_;
  json links = json::array();
  for (size_t i = 0; i < m.links.size(); ++i) {
    const LinkModel& l = m.links[i];
    const LinkParams& p = l.params();
    json params = {{"latency_s", to_seconds(p.latency)},
                   {"jitter_s", to_seconds(p.jitter)},
                   {"loss", p.loss},
                   {"bandwidth_bps", p.bandwidth_bps}};
    if (p.range_m) params["range_m"] = *p.range_m;
    if (p.degrade_from_m) params["degrade_from_m"] = *p.degrade_from_m;
    json windows = json::array();
    for (const LinkWindow& w : m.windows) {
      if (w.link == l.name()) windows.push_back(window_json(w));
    }
    json j = {{"name", l.name()},
              {"vehicle", m.lc(i).vehicle},
              {"peer", m.lc(i).peer.empty() ? m.cfg.ground : m.lc(i).peer},
              {"params", params},
              {"sent", l.sent()},
              {"delivered", l.delivered()},
              {"lost", l.lost()},
              {"up", l.up()},
              {"longest_outage_s", to_seconds(l.longest_outage(now))},
              {"windows", windows}};
    if (!m.lc(i).topics.empty()) j["topics"] = m.lc(i).topics;
    links.push_back(j);
  }
  return {{"ground_station",
           {{"name", m.cfg.ground}, {"x", m.cfg.ground_x}, {"y", m.cfg.ground_y}}},
          {"telemetry", m.cfg.uplink},
          {"links", links}};
}

json to_json(const LinkWindow& w) { return window_json(w); }

}  // namespace fieldproof::network
