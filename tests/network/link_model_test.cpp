// The link model and the network relay, without a coordinator: fates of messages, determinism
// per seed, windows, link state and the lockstep outage rule.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "fieldproof/msgs/navigation.hpp"
#include "fieldproof/network/link_model.hpp"
#include "fieldproof/network/network.hpp"

namespace fieldproof::network {
namespace {

SimTime ms(int64_t v) { return SimTime::from_ns(v * 1'000'000); }

std::vector<std::optional<SimTime>> fates(uint64_t seed, const LinkParams& p, int n) {
  LinkModel l("gcs-ugv1", p, RandomSource(seed).child("network"));
  std::vector<std::optional<SimTime>> out;
  for (int i = 0; i < n; ++i) out.push_back(l.send(Direction::kUp, ms(20 * i), 100));
  return out;
}

TEST(LinkModel, DeliversAtStampPlusLatencyWithoutJitterOrLoss) {
  LinkParams p;
  p.latency = milliseconds(50);
  LinkModel l("a", p, RandomSource(1));
  EXPECT_EQ(l.send(Direction::kDown, ms(100), 10), ms(150));
  EXPECT_EQ(l.send(Direction::kUp, ms(120), 10), ms(170));
  EXPECT_EQ(l.sent(), 2u);
  EXPECT_EQ(l.lost(), 0u);
}

TEST(LinkModel, SameSeedSameFatesOtherSeedOthers) {
  LinkParams p;
  p.latency = milliseconds(40);
  p.jitter = milliseconds(30);
  p.loss = 0.3;
  const auto a = fates(7, p, 500);
  EXPECT_EQ(a, fates(7, p, 500));
  EXPECT_NE(a, fates(8, p, 500));
  size_t lost = 0;
  for (const auto& f : a) lost += !f.has_value();
  // 30 % of 500, well inside a binomial's spread.
  EXPECT_GT(lost, 100u);
  EXPECT_LT(lost, 200u);
}

TEST(LinkModel, JitterStaysInItsBoundAndOrderIsKept) {
  LinkParams p;
  p.latency = milliseconds(10);
  p.jitter = milliseconds(100);  // larger than the send interval: reordering would show
  LinkModel l("a", p, RandomSource(3));
  SimTime last = SimTime::zero();
  for (int i = 0; i < 200; ++i) {
    const SimTime sent = ms(5 * i);
    const auto at = l.send(Direction::kDown, sent, 10);
    ASSERT_TRUE(at);
    EXPECT_GE(*at - sent, milliseconds(10));
    EXPECT_GE(*at, last);
    last = *at;
  }
}

TEST(LinkModel, BandwidthQueuesTransmissions) {
  LinkParams p;
  p.latency = Duration::zero();
  p.bandwidth_bps = 8000;  // 1000 bytes a second
  LinkModel l("a", p, RandomSource(1));
  EXPECT_EQ(l.send(Direction::kUp, ms(0), 100), ms(100));
  EXPECT_EQ(l.send(Direction::kUp, ms(0), 100), ms(200));   // waits for the first
  EXPECT_EQ(l.send(Direction::kDown, ms(0), 100), ms(100));  // the other direction is free
}

TEST(LinkModel, DownLosesEverythingAndRangeDegrades) {
  LinkParams p;
  p.range_m = 100;
  p.degrade_from_m = 50;
  LinkModel l("a", p, RandomSource(1));
  l.set_geometry(10, false, ms(0));
  EXPECT_TRUE(l.up());
  EXPECT_DOUBLE_EQ(l.quality(), 1.0);
  l.set_geometry(75, false, ms(10));
  EXPECT_NEAR(l.quality(), 0.5, 1e-12);
  l.set_geometry(101, false, ms(20));
  EXPECT_FALSE(l.up());
  EXPECT_EQ(l.cause(), "range");
  EXPECT_FALSE(l.send(Direction::kDown, ms(30), 1));
  l.set_geometry(10, true, ms(40));
  EXPECT_EQ(l.cause(), "outage");
  l.set_forced_down(true, ms(50));
  EXPECT_EQ(l.cause(), "timeline");
  l.set_geometry(10, false, ms(60));
  l.set_forced_down(false, ms(70));
  EXPECT_TRUE(l.up());
  EXPECT_EQ(l.longest_outage(ms(70)), milliseconds(50));
}

TEST(LinkModel, WindowsCountSentDeliveredLostAndLatency) {
  LinkParams p;
  p.latency = milliseconds(100);
  LinkModel l("a", p, RandomSource(1));
  for (int i = 0; i < 10; ++i) l.send(Direction::kUp, ms(950 + i), 1);  // 950..959 ms
  l.set_forced_down(true, ms(1500));
  l.send(Direction::kUp, ms(1600), 1);
  auto w = l.close_windows(ms(999));
  EXPECT_TRUE(w.empty());
  w = l.close_windows(ms(2000));
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].sent, 10u);
  EXPECT_EQ(w[0].delivered, 0u);  // they arrive at 1.05 s
  EXPECT_TRUE(w[0].up);
  EXPECT_EQ(w[1].sent, 1u);
  EXPECT_EQ(w[1].lost, 1u);
  EXPECT_EQ(w[1].delivered, 10u);
  EXPECT_EQ(w[1].latency_p50_ns, 100'000'000);
  EXPECT_EQ(w[1].latency_max_ns, 100'000'000);
  EXPECT_FALSE(w[1].up);
  const auto last = l.close_windows(ms(2500), /*final=*/true);
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0].end, ms(2500));
}

TEST(Region, BoxCirclePolygonBoundaryInside) {
  Region b;
  b.kind = Region::Kind::kBox;
  b.x_min = 0, b.x_max = 2, b.y_min = 0, b.y_max = 1;
  EXPECT_TRUE(b.contains(2, 1));
  EXPECT_FALSE(b.contains(2.01, 0.5));
  Region c;
  c.kind = Region::Kind::kCircle;
  c.cx = 1, c.cy = 1, c.radius = 1;
  EXPECT_TRUE(c.contains(2, 1));
  EXPECT_FALSE(c.contains(2, 2));
  Region t;
  t.kind = Region::Kind::kPolygon;
  t.polygon = {{0, 0}, {4, 0}, {0, 4}};
  EXPECT_TRUE(t.contains(1, 1));
  EXPECT_TRUE(t.contains(2, 2));  // on the hypotenuse
  EXPECT_FALSE(t.contains(3, 3));
}

struct Published {
  SimTime at;
  std::string topic;
  std::string payload;
  bool operator==(const Published&) const = default;
};

struct Rig {
  std::vector<Published> out;
  std::vector<LinkWindow> windows;
  std::vector<std::string> changes;
  std::unique_ptr<Network> net;
  explicit Rig(NetworkConfig c) {
    NetworkHooks h;
    h.publish_at = [this](SimTime at, const std::string& t, std::string p, const std::string&) {
      out.push_back({at, t, std::move(p)});
    };
    h.on_window = [this](const LinkWindow& w) { windows.push_back(w); };
    h.on_change = [this](const std::string& l, const std::string& v, bool up,
                         const std::string& cause, SimTime) {
      changes.push_back(l + " " + v + (up ? " up" : " down " + cause));
    };
    net = std::make_unique<Network>(std::move(c), std::move(h));
  }
  std::vector<Published> on(const std::string& topic) const {
    std::vector<Published> r;
    for (const auto& p : out) {
      if (p.topic == topic) r.push_back(p);
    }
    return r;
  }
};

NetworkConfig one_link() {
  NetworkConfig c;
  c.ground = "gcs";
  c.links.push_back({"gcs-ugv1", "ugv1", "", {}, {}});
  c.links[0].params.latency = milliseconds(30);
  c.uplink = {"navigate_to_pose/status", "odometry"};
  return c;
}

TEST(Network, RoutesGroundMessagesDownAndVehicleMessagesUpUnderTheGroundName) {
  Rig r(one_link());
  const auto s = r.net->send_from_ground(ms(100), "/model/ugv1/navigate_to_pose/goal", "g", "T");
  EXPECT_TRUE(s.routed);
  EXPECT_EQ(s.delivery, ms(130));
  EXPECT_FALSE(r.net->send_from_ground(ms(100), "/model/ugv2/cmd_vel", "x", "T").routed);
  EXPECT_FALSE(r.net->send_from_ground(ms(100), "/world/w/create", "x", "T").routed);
  r.net->on_vehicle_message("/model/ugv1/odometry", ms(200), "o", "T");
  r.net->on_vehicle_message("/model/ugv1/scan", ms(200), "s", "T");  // not a telemetry topic
  const auto up = r.on("/ground/gcs/model/ugv1/odometry");
  ASSERT_EQ(up.size(), 1u);
  EXPECT_EQ(up[0].at, ms(230));
  EXPECT_EQ(r.net->ground_topic("/model/ugv1/odometry"), "/ground/gcs/model/ugv1/odometry");
  EXPECT_EQ(r.net->last_seen("/model/ugv1/odometry"), ms(200));
  EXPECT_EQ(r.on("/model/ugv1/navigate_to_pose/goal").size(), 1u);
}

TEST(Network, LinkStateAtStartOnChangeAndEverySecond) {
  Rig r(one_link());
  r.net->start(ms(0));
  EXPECT_TRUE(r.net->set_link_down("ugv1", true, ms(500)));
  EXPECT_FALSE(r.net->set_link_down("nobody", true, ms(500)));
  EXPECT_EQ(r.net->tick(ms(1000)), "");
  const auto states = r.on("/model/ugv1/link_state");
  ASSERT_EQ(states.size(), 3u);
  EXPECT_EQ(states[0].at, ms(0));
  EXPECT_EQ(states[1].at, ms(500));
  EXPECT_EQ(states[2].at, ms(1000));
  const auto down = msgs::decode_link_state(states[1].payload);
  ASSERT_TRUE(down);
  EXPECT_FALSE(down->up);
  EXPECT_EQ(down->cause, "timeline");
  EXPECT_DOUBLE_EQ(down->quality, 0.0);
  ASSERT_EQ(r.changes.size(), 1u);
  EXPECT_EQ(r.changes[0], "gcs-ugv1 ugv1 down timeline");
  ASSERT_EQ(r.windows.size(), 1u);
  EXPECT_FALSE(r.windows[0].up);
  // Nothing crosses while down.
  EXPECT_FALSE(r.net->send_from_ground(ms(1100), "/model/ugv1/cmd_vel", "x", "T").delivery);
}

TEST(Network, OutageRegionAndRangeFromPoses) {
  NetworkConfig c = one_link();
  c.links[0].params.range_m = 50;
  Outage o;
  o.name = "shed";
  o.region.kind = Region::Kind::kCircle;
  o.region.cx = 10, o.region.cy = 0, o.region.radius = 2;
  c.outages.push_back(o);
  Rig r(c);
  r.net->on_pose("ugv1", 5, 0, ms(100));
  r.net->on_pose("ugv1", 9, 0, ms(200));
  r.net->on_pose("ugv1", 13, 0, ms(300));
  r.net->on_pose("ugv1", 60, 0, ms(400));
  ASSERT_EQ(r.changes.size(), 3u);
  EXPECT_EQ(r.changes[0], "gcs-ugv1 ugv1 down outage");
  EXPECT_EQ(r.changes[1], "gcs-ugv1 ugv1 up");
  EXPECT_EQ(r.changes[2], "gcs-ugv1 ugv1 down range");
}

// Positions matter only with a range or an outage; without either, poses change nothing (the
// engine then does not read them for the network).
TEST(Network, UsesPositionsOnlyWithARangeOrAnOutage) {
  NetworkConfig plain = one_link();
  plain.links[0].params.jitter = milliseconds(10);
  plain.links[0].params.loss = 0.3;
  EXPECT_FALSE(Rig(plain).net->uses_positions());
  NetworkConfig ranged = plain;
  ranged.links[0].params.range_m = 5;
  EXPECT_TRUE(Rig(ranged).net->uses_positions());
  NetworkConfig shed = plain;
  Outage o;
  o.region.kind = Region::Kind::kCircle;
  o.region.radius = 1;
  shed.outages.push_back(o);
  EXPECT_TRUE(Rig(shed).net->uses_positions());
  // The same traffic with and without poses (far away, inside where a region would be).
  Rig with(plain), without(plain);
  for (int64_t t = 0; t < 3000; t += 20) {
    with.net->on_pose("ugv1", 1000.0 + static_cast<double>(t), 0, ms(t));
    with.net->on_vehicle_message("/model/ugv1/odometry", ms(t), "o", "T");
    without.net->on_vehicle_message("/model/ugv1/odometry", ms(t), "o", "T");
  }
  EXPECT_EQ(with.net->tick(ms(3000)), "");
  EXPECT_EQ(without.net->tick(ms(3000)), "");
  const auto a = with.on("/ground/gcs/model/ugv1/odometry");
  const auto b = without.on("/ground/gcs/model/ugv1/odometry");
  ASSERT_EQ(a.size(), b.size());
  ASSERT_LT(a.size(), 150u);  // some were lost
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].at, b[i].at);
  EXPECT_TRUE(with.changes.empty());
  EXPECT_EQ(with.net->summary(ms(3000)), without.net->summary(ms(3000)));
}

// Two vehicles with a link between them (and ugv1's ground link): odometry crosses both ways.
NetworkConfig vehicle_link(uint64_t seed) {
  NetworkConfig c = one_link();
  c.seed = seed;
  LinkConfig v2v;
  v2v.name = "ugv1_ugv2";
  v2v.vehicle = "ugv1";
  v2v.peer = "ugv2";
  v2v.params.latency = milliseconds(30);
  v2v.params.jitter = milliseconds(10);
  v2v.params.loss = 0.2;
  v2v.params.range_m = 50;
  v2v.topics = {"odometry"};
  c.links.push_back(v2v);
  return c;
}

// Each vehicle's odometry every 20 ms from 0 to 10 s, payload "<vehicle>@<ms>".
void feed_both(Rig& r, bool with_ugv2 = true) {
  for (int64_t t = 0; t < 10000; t += 20) {
    r.net->on_vehicle_message("/model/ugv1/odometry", ms(t), "ugv1@" + std::to_string(t), "T");
    if (with_ugv2) {
      r.net->on_vehicle_message("/model/ugv2/odometry", ms(t), "ugv2@" + std::to_string(t), "T");
    }
  }
}

TEST(Network, AVehicleToVehicleLinkCarriesItsTopicsBothWaysUnderThePeersName) {
  Rig r(vehicle_link(5));
  const auto topics = r.net->uplink_topics();
  EXPECT_EQ(topics, (std::vector<std::string>{"/model/ugv1/navigate_to_pose/status",
                                              "/model/ugv1/odometry", "/model/ugv2/odometry"}));
  EXPECT_EQ(Network::peer_topic("ugv2", "ugv1", "odometry"), "/model/ugv2/peers/ugv1/odometry");
  feed_both(r);
  r.net->on_vehicle_message("/model/ugv1/scan", ms(100), "s", "T");  // not one of its topics
  for (const auto& [to, from] : {std::pair{"ugv2", "ugv1"}, std::pair{"ugv1", "ugv2"}}) {
    const auto got = r.on(Network::peer_topic(to, from, "odometry"));
    // 500 sent, 20 % lost: well inside the binomial's spread.
    EXPECT_GT(got.size(), 350u) << to;
    EXPECT_LT(got.size(), 450u) << to;
    SimTime last = SimTime::zero();
    for (const Published& p : got) {
      ASSERT_EQ(p.payload.rfind(std::string(from) + "@", 0), 0u) << p.payload;
      const SimTime sent = ms(std::stoll(p.payload.substr(p.payload.find('@') + 1)));
      EXPECT_GE(p.at - sent, milliseconds(30)) << p.payload;
      EXPECT_LT(p.at - sent, milliseconds(40)) << p.payload;
      EXPECT_GE(p.at, last);  // in order
      last = p.at;
    }
  }
  EXPECT_TRUE(r.on("/model/ugv2/peers/ugv1/scan").empty());
  // ugv1's odometry also goes up its ground link; ugv2 has none.
  EXPECT_EQ(r.on("/ground/gcs/model/ugv1/odometry").size(), 500u);
  EXPECT_TRUE(r.on("/ground/gcs/model/ugv2/odometry").empty());
  const nlohmann::json sum = r.net->summary(ms(10000));
  ASSERT_EQ(sum["links"].size(), 2u);
  EXPECT_EQ(sum["links"][1]["name"], "ugv1_ugv2");
  EXPECT_EQ(sum["links"][1]["peer"], "ugv2");
  EXPECT_EQ(sum["links"][1]["sent"], 1000);
  EXPECT_EQ(sum["links"][1]["topics"], nlohmann::json::array({"odometry"}));
  EXPECT_EQ(sum["links"][1]["lost"].get<int>() + sum["links"][1]["delivered"].get<int>(), 1000);
}

TEST(Network, AVehicleToVehicleLinksDrawsAreTheSeedsAndEachDirectionHasItsOwn) {
  const auto deliveries = [](uint64_t seed, bool with_ugv2) {
    Rig r(vehicle_link(seed));
    feed_both(r, with_ugv2);
    return r.on("/model/ugv2/peers/ugv1/odometry");
  };
  const auto a = deliveries(5, true);
  EXPECT_EQ(a, deliveries(5, true));
  EXPECT_NE(a, deliveries(6, true));
  // ugv2's traffic (the other direction) does not shift ugv1's draws.
  EXPECT_EQ(a, deliveries(5, false));
  // They are RandomSource(seed).child("network/ugv1_ugv2/up")'s: the link model's own fates.
  LinkModel alone("ugv1_ugv2", vehicle_link(5).links[1].params, RandomSource(5).child("network"));
  std::vector<Published> expected;
  for (int64_t t = 0; t < 10000; t += 20) {
    if (const auto at = alone.send(Direction::kUp, ms(t), ("ugv1@" + std::to_string(t)).size())) {
      expected.push_back({*at, "/model/ugv2/peers/ugv1/odometry", "ugv1@" + std::to_string(t)});
    }
  }
  EXPECT_EQ(a, expected);
}

TEST(Network, NothingCrossesAVehicleToVehicleLinkOutOfRange) {
  Rig r(vehicle_link(5));
  r.net->on_pose("ugv1", 0, 0, ms(0));
  r.net->on_pose("ugv2", 0, 60, ms(0));  // 60 m apart, range 50 m
  feed_both(r);
  EXPECT_TRUE(r.on("/model/ugv2/peers/ugv1/odometry").empty());
  EXPECT_TRUE(r.on("/model/ugv1/peers/ugv2/odometry").empty());
  EXPECT_EQ(r.on("/ground/gcs/model/ugv1/odometry").size(), 500u);  // the ground link is up
  ASSERT_FALSE(r.changes.empty());
  EXPECT_EQ(r.changes.back(), "ugv1_ugv2 ugv1 down range");
}

TEST(Network, LockstepFailsAnOutageLongerThanAckTimeoutNamingVehicleAndLink) {
  NetworkConfig c = one_link();
  c.ack_timeout = seconds(2);
  Rig r(c);
  r.net->set_link_down("ugv1", true, ms(1000));
  EXPECT_EQ(r.net->next_due(), ms(3000) + Duration::from_ns(1));
  EXPECT_EQ(r.net->tick(ms(3000)), "");  // exactly ack_timeout: not longer
  const std::string why = r.net->tick(ms(3001));
  EXPECT_NE(why.find("gcs-ugv1"), std::string::npos) << why;
  EXPECT_NE(why.find("ugv1"), std::string::npos) << why;
  EXPECT_NE(why.find("ack_timeout_s"), std::string::npos) << why;
}

TEST(Network, ShortOutageInLockstepPasses) {
  NetworkConfig c = one_link();
  c.ack_timeout = seconds(2);
  Rig r(c);
  r.net->set_link_down("ugv1", true, ms(1000));
  r.net->set_link_down("ugv1", false, ms(2500));
  EXPECT_EQ(r.net->tick(ms(10000)), "");
}

}  // namespace
}  // namespace fieldproof::network
