// The run's radio network (docs/network.md): a ground station and links to the vehicles, emulated
// in simulated time by the engine (docs/lockstep.md, Relays). The engine hands it what the ground
// station sends and what the vehicles publish on the topics that cross a link; the network decides
// each message's fate on its link (link_model.hpp) and publishes what is delivered at its delivery
// time, through the publish_at hook (the engine participant's publish_at: the coordinator delivers
// it in the total order like any message).
//
//   NetworkConfig c = ...;                            // from the scenario's network section
//   Network net(std::move(c), hooks);
//   for (auto& t : net.uplink_topics()) subscribe(t, [&](m) { net.on_vehicle_message(...); });
//   if (!net.send_from_ground(now, topic, payload, type)) publish(topic, payload, type);
//   net.on_pose("ugv1", x, y, stamp);                 // range and outage regions
//   net.set_link_down("ugv1", true, now, "timeline"); // link.down
//   net.tick(now);                                    // windows, link_state, lockstep failure
//
// Topics: a message the ground station sends to a vehicle keeps its topic (/model/<v>/...); one
// a vehicle sends up arrives at the ground station as /ground/<station>/<topic>
// (/ground/gcs/model/ugv1/odometry), which is what the engine's timeline reads and what the
// recording keeps as the ground station's view. A vehicle-to-vehicle link carries its `topics`
// both ways: ugv1's /model/ugv1/odometry arrives at ugv2 as /model/ugv2/peers/ugv1/odometry.
// Each vehicle behind a link receives
// fieldproof.msgs.LinkState on /model/<v>/link_state when the network starts, on every change
// and once a window (a second).
//
// Not thread-safe: one caller at a time (the engine serialises its own thread and the
// coordinator's fan-out, where the uplink relay runs, with a lock; docs/lockstep.md, Relays).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fieldproof/network/link_model.hpp"
#include "fieldproof/time/duration.hpp"

namespace fieldproof::network {

// A region of the plane where links are down (an outage), in world coordinates.
struct Region {
  enum class Kind : uint8_t { kBox, kCircle, kPolygon };
  Kind kind = Kind::kBox;
  double x_min = 0, x_max = 0, y_min = 0, y_max = 0;  // kBox
  double cx = 0, cy = 0, radius = 0;                  // kCircle
  std::vector<std::pair<double, double>> polygon;     // kPolygon, in order
  // The boundary counts as inside.
  bool contains(double x, double y) const;
};

struct Outage {
  std::string name;
  Region region;
  std::vector<std::string> vehicles;  // whose links it cuts; empty: every vehicle
};

struct LinkConfig {
  std::string name;     // unique; "<ground>-<vehicle>" by default
  std::string vehicle;  // the vehicle end
  // The other end: empty for the ground station, else another vehicle (a vehicle-to-vehicle
  // link).
  std::string peer;
  LinkParams params;
  // A vehicle-to-vehicle link's topics, relative to /model/<end>/: what `vehicle` publishes on
  // them crosses kUp to `peer`, what `peer` publishes crosses kDown to `vehicle`, each best effort,
  // arriving as peer_topic(receiver, sender, topic). Empty on a ground link.
  std::vector<std::string> topics;
};

struct NetworkConfig {
  std::string ground = "ground";  // the ground station's name
  double ground_x = 0, ground_y = 0;
  std::vector<LinkConfig> links;
  // Topics, relative to /model/<vehicle>/, that each vehicle sends up to the ground station (the
  // engine adds navigate_to_pose/status to the scenario's telemetry list).
  std::vector<std::string> uplink;
  // Topics, relative to /model/<vehicle>/, that cross their link reliably (the engine's
  // navigate_to_pose goal and status, as a reliable middleware carries an action): an attempt
  // that is lost is made again every retry interval (2 x latency + jitter, at least 1 ms) until
  // one arrives, while later messages of the same topic wait behind it (in order). Every
  // attempt counts in the windows (sent, and lost or delivered).
  std::vector<std::string> reliable;
  std::vector<Outage> outages;
  uint64_t seed = 0;
  Duration window = seconds(1);
  // lockstep: a ground link down longer than this fails the run (tick() returns why); nullopt in
  // the other modes.
  std::optional<Duration> ack_timeout;
};

struct NetworkHooks {
  // Publishes on the bus with an explicit stamp >= the engine's now() (required).
  std::function<void(SimTime stamp, const std::string& topic, std::string payload,
                     const std::string& type)>
      publish_at;
  // A closed window of one link (the /fieldproof/network record); may be empty.
  std::function<void(const LinkWindow& window)> on_window;
  // A reliable message that crossed on a later attempt, at its delivery time `at`; may be empty.
  std::function<void(const std::string& topic, const std::string& vehicle, SimTime at)>
      on_retried_delivery;
  // A link went down or came up (engine.log link.down / link.up); may be empty.
  std::function<void(const std::string& link, const std::string& vehicle, bool up,
                     const std::string& cause, SimTime at)>
      on_change;
};

class Network {
 public:
  Network(NetworkConfig config, NetworkHooks hooks);
  ~Network();
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  const NetworkConfig& config() const;
  // The vehicle-side topics the engine must subscribe to and hand to on_vehicle_message(): what
  // crosses a ground link up, and what crosses a vehicle-to-vehicle link.
  std::vector<std::string> uplink_topics() const;
  // The ground station's copy of a vehicle-side topic: /ground/<station><topic>.
  std::string ground_topic(const std::string& vehicle_topic) const;
  // Where `sender`'s /model/<sender>/<topic> arrives at `receiver` across their link:
  // /model/<receiver>/peers/<sender>/<topic>.
  static std::string peer_topic(const std::string& receiver, const std::string& sender,
                                const std::string& topic);
  // /model/<v>/link_state.
  static std::string link_state_topic(const std::string& vehicle);
  // Whether `vehicle` has a link to the ground station.
  bool has_ground_link(const std::string& vehicle) const;

  // Publishes every vehicle's first link_state (at `now`, normally 0).
  void start(SimTime now);

  struct Sent {
    bool routed = false;              // the topic is a vehicle's behind a ground link
    // When it arrives; nullopt when it was lost (or, on a reliable topic, is waiting for a
    // later attempt: on_retried_delivery says when it crossed).
    std::optional<SimTime> delivery;
    std::string vehicle;
  };
  // A message the ground station sends at `now` on `topic`. Not routed (publish it directly):
  // the topic is not under /model/<v>/ of a vehicle with a ground link.
  Sent send_from_ground(SimTime now, const std::string& topic, std::string payload,
                        const std::string& type);
  // A message a vehicle published on one of uplink_topics(), delivered to the engine at `stamp`.
  void on_vehicle_message(const std::string& topic, SimTime stamp, std::string payload,
                          const std::string& type);
  // The least time between a message on the vehicle-side `topic` (one of uplink_topics()) and
  // anything on_vehicle_message publishes for it: the smallest fixed latency of the links it
  // crosses (jitter and bandwidth only add to it). Zero for any other topic. The engine's
  // lookahead on that topic (docs/lockstep.md, Lookahead).
  Duration min_delay(const std::string& topic) const;
  // The last time a vehicle-side message was seen on `topic` (before its link), or nullopt.
  std::optional<SimTime> last_seen(const std::string& topic) const;

  // Whether positions change anything: some link has a range_m, or there are outages. When not,
  // on_pose() is a no-op and the engine need not read the vehicles' poses for the network.
  bool uses_positions() const;
  // Ground-truth position of a vehicle at `stamp` (range, outage regions).
  void on_pose(const std::string& vehicle, double x, double y, SimTime stamp);
  // link.down / link.up: every link of `vehicle` (the ground link and its vehicle links). False
  // when the vehicle has no link.
  bool set_link_down(const std::string& vehicle, bool down, SimTime now);

  // Closes the windows that ended by `now` and publishes the link states due. Returns why the run
  // must fail (lockstep: a ground link down longer than ack_timeout), "" otherwise.
  std::string tick(SimTime now);
  // The earliest simulated time tick() has something to do.
  SimTime next_due() const;
  // The run ended at `now`: the last, partial windows.
  void finish(SimTime now);

  // run.json's network: the ground station, each link's parameters, totals, longest outage and
  // its windows.
  nlohmann::json summary(SimTime now) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// A window as /fieldproof/network records it: link, start_s, end_s, sent, delivered, lost,
// latency_p50_s, latency_p95_s, latency_max_s, up, quality.
nlohmann::json to_json(const LinkWindow& window);

}  // namespace fieldproof::network
