// The topic faults' relay (network/faults.hpp, docs/network.md): drops drawn from the seed, delays,
// frozen sensors, each only during its window; the same seed gives the same deliveries.
#include "fieldproof/network/faults.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace fieldproof::network {
namespace {

struct Delivered {
  SimTime at;
  std::string topic;
  std::string payload;
  bool operator==(const Delivered&) const = default;
};

SimTime at_ms(int64_t ms) { return SimTime::zero() + milliseconds(ms); }

struct Relay {
  std::vector<Delivered> out;
  FaultRelay relay;
  explicit Relay(uint64_t seed)
      : relay(seed, [this](SimTime at, const std::string& topic, std::string payload,
                           const std::string&) {
          out.push_back({at, topic, std::move(payload)});
        }) {}
  // One message every 10 ms from `from_ms` to `to_ms` (exclusive), payload "m<ms>".
  void feed(const std::string& topic, int64_t from_ms, int64_t to_ms) {
    for (int64_t ms = from_ms; ms < to_ms; ms += 10) {
      relay.on_message(topic, at_ms(ms), "m" + std::to_string(ms), "T");
    }
  }
};

const std::string kScan = "/model/ugv1/scan";

TopicFault drop(double p, const std::string& label = "drops") {
  TopicFault f;
  f.kind = TopicFault::Kind::kDrop;
  f.label = label;
  f.topic = kScan;
  f.probability = p;
  return f;
}

TEST(FaultRelay, WithoutAFaultEveryMessageIsDeliveredUnchangedAtItsStamp) {
  Relay r(7);
  r.feed(kScan, 0, 100);
  ASSERT_EQ(r.out.size(), 10u);
  EXPECT_EQ(r.out[3], (Delivered{at_ms(30), kScan, "m30"}));
}

TEST(FaultRelay, ADropLosesAboutItsShareOfTheWindowAndNothingOutsideIt) {
  Relay r(7);
  r.feed(kScan, 0, 1000);  // 100 before
  r.relay.start(drop(0.3), at_ms(1000));
  r.feed(kScan, 1000, 21000);  // 2000 during
  const FaultCounts c = r.relay.stop("drops", at_ms(21000));
  r.feed(kScan, 21000, 22000);  // 100 after
  EXPECT_EQ(c.messages, 2000u);
  EXPECT_GT(c.dropped, 500u);  // 600 expected; 4 standard deviations either side
  EXPECT_LT(c.dropped, 700u);
  EXPECT_EQ(r.out.size(), 2200u - c.dropped);
  // Every message outside the window arrived.
  size_t before = 0, after = 0;
  for (const Delivered& d : r.out) {
    before += d.at < at_ms(1000);
    after += d.at >= at_ms(21000);
  }
  EXPECT_EQ(before, 100u);
  EXPECT_EQ(after, 100u);
}

TEST(FaultRelay, AProbabilityOfOneDropsEveryMessageOfTheWindow) {
  Relay r(1);
  r.relay.start(drop(1.0), at_ms(0));
  r.feed(kScan, 0, 500);
  r.feed("/model/ugv1/imu", 0, 100);  // another topic is not touched
  EXPECT_EQ(r.relay.counts("drops").dropped, 50u);
  ASSERT_EQ(r.out.size(), 10u);
  EXPECT_EQ(r.out[0].topic, "/model/ugv1/imu");
}

TEST(FaultRelay, TheSameSeedDropsTheSameMessagesAndAnotherSeedOthers) {
  const auto run = [](uint64_t seed, const std::string& label) {
    Relay r(seed);
    r.relay.start(drop(0.5, label), at_ms(0));
    r.feed(kScan, 0, 2000);
    return r.out;
  };
  EXPECT_EQ(run(7, "drops"), run(7, "drops"));
  EXPECT_NE(run(7, "drops"), run(8, "drops"));
  // Each fault draws from its own source, named by its entry.
  EXPECT_NE(run(7, "drops"), run(7, "other"));
}

TEST(FaultRelay, ADelayDeliversThatMuchLaterDuringItsWindowOnly) {
  Relay r(7);
  TopicFault f;
  f.kind = TopicFault::Kind::kDelay;
  f.label = "late";
  f.topic = kScan;
  f.delay = milliseconds(250);
  r.relay.start(f, at_ms(100));
  r.feed(kScan, 100, 200);
  (void)r.relay.stop("late", at_ms(200));
  r.feed(kScan, 200, 210);
  ASSERT_EQ(r.out.size(), 11u);
  EXPECT_EQ(r.out[0], (Delivered{at_ms(350), kScan, "m100"}));
  EXPECT_EQ(r.out[9], (Delivered{at_ms(440), kScan, "m190"}));
  EXPECT_EQ(r.relay.counts("late").delayed, 10u);
}

TEST(FaultRelay, ADelayIsFifoAcrossItsWindowsEndAMessageAfterItWaitsBehindTheWindowsLast) {
  Relay r(7);
  TopicFault f;
  f.kind = TopicFault::Kind::kDelay;
  f.label = "late";
  f.topic = kScan;
  f.delay = milliseconds(250);
  r.relay.start(f, at_ms(100));
  r.feed(kScan, 100, 200);  // m100 .. m190, delivered 350 .. 440
  (void)r.relay.stop("late", at_ms(200));
  r.feed(kScan, 200, 500);              // m200 .. m490: not delayed, but never before m190
  r.feed("/model/ugv1/imu", 200, 210);  // another topic does not wait
  ASSERT_EQ(r.out.size(), 41u);
  // In order of publication, each no earlier than the one before it.
  for (size_t i = 1; i < 40; ++i) {
    EXPECT_LE(r.out[i - 1].at, r.out[i].at) << i;
    EXPECT_EQ(r.out[i].payload, "m" + std::to_string(100 + 10 * i)) << i;
  }
  // m200 .. m440 wait for m190 (440 ms); from m450 on they are on time again.
  EXPECT_EQ(r.out[10], (Delivered{at_ms(440), kScan, "m200"}));
  EXPECT_EQ(r.out[34], (Delivered{at_ms(440), kScan, "m440"}));
  EXPECT_EQ(r.out[35], (Delivered{at_ms(450), kScan, "m450"}));
  EXPECT_EQ(r.out[40], (Delivered{at_ms(200), "/model/ugv1/imu", "m200"}));
  // Only the window's messages count as delayed.
  EXPECT_EQ(r.relay.counts("late").delayed, 10u);
}

TEST(FaultRelay, AFrozenSensorRepeatsItsLastValueAtItsOwnRate) {
  Relay r(7);
  r.feed(kScan, 0, 50);  // m0 .. m40
  TopicFault f;
  f.kind = TopicFault::Kind::kFreeze;
  f.label = "stuck";
  f.topic = kScan;
  r.relay.start(f, at_ms(50));
  r.feed(kScan, 50, 100);
  (void)r.relay.stop("stuck", at_ms(100));
  r.feed(kScan, 100, 120);
  ASSERT_EQ(r.out.size(), 12u);
  for (size_t i = 5; i < 10; ++i) {
    EXPECT_EQ(r.out[i].payload, "m40") << i;
    EXPECT_EQ(r.out[i].at, at_ms(static_cast<int64_t>(i) * 10)) << i;
  }
  EXPECT_EQ(r.out[10].payload, "m100");
  EXPECT_EQ(r.relay.counts("stuck").frozen, 5u);
}

TEST(FaultRelay, AFreezeWithNothingBeforeItRepeatsTheFirstMessageOfItsWindow) {
  Relay r(7);
  TopicFault f;
  f.kind = TopicFault::Kind::kFreeze;
  f.label = "stuck";
  f.topic = kScan;
  r.relay.start(f, at_ms(0));
  r.feed(kScan, 0, 30);
  ASSERT_EQ(r.out.size(), 3u);
  EXPECT_EQ(r.out[2].payload, "m0");
}

}  // namespace
}  // namespace fieldproof::network
