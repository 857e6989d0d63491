// Bus: the seed document's section 6 (total order) and the delivery contracts of bus.hpp.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "fieldproof/time/bus.hpp"
#include "fieldproof/time/random_source.hpp"

namespace fieldproof {
namespace {

SimTime ms(int64_t n) { return SimTime::from_ns(n * 1'000'000); }

TEST(Bus, DeliversInStampThenSequenceOrderNotSubscriptionOrder) {
  Bus bus;
  std::vector<std::string> got;
  auto s1 = bus.subscribe("/b", [&](const BusMessage& m) { got.push_back("b:" + m.payload); });
  auto s2 = bus.subscribe("/a", [&](const BusMessage& m) { got.push_back("a:" + m.payload); });
  bus.publish("/a", ms(3), "late");
  bus.publish("/b", ms(1), "early");
  bus.publish("/a", ms(2), "middle");
  EXPECT_EQ(bus.deliver_until(ms(3)), 3u);
  EXPECT_EQ(got, (std::vector<std::string>{"b:early", "a:middle", "a:late"}));
}

TEST(Bus, EqualStampsAreDeliveredInPublishOrder) {
  Bus bus;
  std::vector<std::string> got;
  auto all = bus.subscribe("*", [&](const BusMessage& m) {
    got.push_back(std::string(m.topic) + "#" + std::to_string(m.sequence));
  });
  bus.publish("/p2", ms(5), "x");
  bus.publish("/p1", ms(5), "y");
  bus.publish("/p2", ms(5), "z");
  bus.deliver_until(ms(5));
  EXPECT_EQ(got, (std::vector<std::string>{"/p2#0", "/p1#1", "/p2#2"}));
}

TEST(Bus, SequenceNumbersAreGlobalAcrossTopics) {
  Bus bus;
  EXPECT_EQ(bus.publish("/a", ms(0), ""), 0u);
  EXPECT_EQ(bus.publish("/b", ms(0), ""), 1u);
  EXPECT_EQ(bus.publish("/a", ms(0), ""), 2u);
  EXPECT_EQ(bus.published(), 3u);
}

TEST(Bus, OnlyMessagesUpToTheTargetAreDelivered) {
  Bus bus;
  int got = 0;
  auto s = bus.subscribe("/a", [&](const BusMessage&) { ++got; });
  bus.publish("/a", ms(1), "");
  bus.publish("/a", ms(4), "");
  EXPECT_EQ(bus.deliver_until(ms(3)), 1u);
  EXPECT_EQ(bus.pending(), 1u);
  EXPECT_EQ(bus.next_stamp(), ms(4));
  EXPECT_EQ(bus.deliver_until(ms(4)), 1u);
  EXPECT_EQ(got, 2);
}

TEST(Bus, MessageCarriesTopicStampSequencePayloadAndType) {
  Bus bus;
  BusMessage seen;
  auto s = bus.subscribe("/odom", [&](const BusMessage& m) { seen = m; });
  bus.publish("/odom", ms(7), std::string("\0bytes", 6), "ignition.msgs.Odometry");
  bus.deliver_until(ms(7));
  EXPECT_EQ(seen.topic, "/odom");
  EXPECT_EQ(seen.stamp, ms(7));
  EXPECT_EQ(seen.sequence, 0u);
  EXPECT_EQ(seen.payload, std::string("\0bytes", 6));
  EXPECT_EQ(seen.type, "ignition.msgs.Odometry");
}

TEST(Bus, PublishInsideDeliveryIsDeliveredInSameCallAfterCurrent) {
  Bus bus;
  std::vector<std::string> got;
  auto s = bus.subscribe("*", [&](const BusMessage& m) {
    got.push_back(m.payload);
    if (m.payload == "ping") {
      bus.publish("/reply", m.stamp, "pong");    // same stamp: after the current message
      bus.publish("/reply", ms(2), "pong2");     // later but <= target: same call
      bus.publish("/reply", ms(9), "too late");  // beyond the target: waits
    }
  });
  bus.publish("/q", ms(1), "ping");
  bus.publish("/q", ms(1), "other");
  bus.publish("/q", ms(3), "last");
  EXPECT_EQ(bus.deliver_until(ms(5)), 5u);
  EXPECT_EQ(got, (std::vector<std::string>{"ping", "other", "pong", "pong2", "last"}));
  EXPECT_EQ(bus.pending(), 1u);
}

TEST(Bus, UnsubscribeDuringDeliverySkipsTheRestOfTheFanOut) {
  Bus bus;
  std::vector<std::string> got;
  Subscription second;
  auto first = bus.subscribe("/t", [&](const BusMessage& m) {
    got.push_back("first:" + m.payload);
    second.unsubscribe();
  });
  second = bus.subscribe("/t", [&](const BusMessage& m) { got.push_back("second:" + m.payload); });
  bus.publish("/t", ms(1), "m1");
  bus.publish("/t", ms(1), "m2");
  bus.deliver_until(ms(1));
  EXPECT_EQ(got, (std::vector<std::string>{"first:m1", "first:m2"}));
  EXPECT_FALSE(second.active());
}

TEST(Bus, UnsubscribeSelfDuringDeliveryStopsFurtherMessages) {
  Bus bus;
  int got = 0;
  Subscription self;
  self = bus.subscribe("/t", [&](const BusMessage&) {
    ++got;
    self.unsubscribe();
  });
  bus.publish("/t", ms(1), "");
  bus.publish("/t", ms(2), "");
  bus.deliver_until(ms(2));
  EXPECT_EQ(got, 1);
}

TEST(Bus, SubscribeDuringDeliveryGetsOnlyLaterMessages) {
  Bus bus;
  std::vector<std::string> got;
  std::vector<Subscription> extra;
  auto s = bus.subscribe("/t", [&](const BusMessage& m) {
    got.push_back("old:" + m.payload);
    if (extra.empty()) {
      extra.push_back(
          bus.subscribe("/t", [&](const BusMessage& n) { got.push_back("new:" + n.payload); }));
    }
  });
  bus.publish("/t", ms(1), "a");
  bus.publish("/t", ms(1), "b");
  bus.deliver_until(ms(1));
  EXPECT_EQ(got, (std::vector<std::string>{"old:a", "old:b", "new:b"}));
}

TEST(Bus, PublishBeforeLastDeliveredStampIsRefused) {
  Bus bus;
  bus.publish("/t", ms(5), "");
  bus.deliver_until(ms(5));
  EXPECT_EQ(bus.last_delivered(), ms(5));
  try {
    bus.publish("/t", ms(4), "");
    FAIL() << "accepted a stamp in the past";
  } catch (const TimeError& e) {
    EXPECT_NE(std::string(e.what()).find("time goes forward"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(bus.publish("/t", ms(5), ""));  // equal is allowed
  EXPECT_THROW(bus.publish("/t", SimTime::infinite(), ""), TimeError);
}

TEST(Bus, AdvanceFloorRefusesEarlierStampsWithoutDelivering) {
  Bus bus;
  bus.advance_floor(ms(10));
  bus.advance_floor(ms(3));  // never lowers
  EXPECT_THROW(bus.publish("/t", ms(9), ""), TimeError);
  EXPECT_NO_THROW(bus.publish("/t", ms(10), ""));
}

TEST(Bus, WildcardAndTopicSubscribersAreCalledInSubscriptionOrder) {
  Bus bus;
  std::string order;
  auto a = bus.subscribe("/t", [&](const BusMessage&) { order += 'a'; });
  auto w = bus.subscribe("", [&](const BusMessage&) { order += 'w'; });
  auto b = bus.subscribe("/t", [&](const BusMessage&) { order += 'b'; });
  auto o = bus.subscribe("/other", [&](const BusMessage&) { order += 'o'; });
  bus.publish("/t", ms(0), "");
  EXPECT_EQ(bus.deliver_until(ms(0)), 3u);
  EXPECT_EQ(order, "awb");
}

TEST(Bus, SubscriptionUnsubscribesWhenDestroyed) {
  Bus bus;
  int got = 0;
  {
    auto s = bus.subscribe("/t", [&](const BusMessage&) { ++got; });
    bus.publish("/t", ms(0), "");
    bus.deliver_until(ms(0));
  }
  bus.publish("/t", ms(1), "");
  bus.deliver_until(ms(1));
  EXPECT_EQ(got, 1);
}

TEST(Bus, SubscriptionOutlivingTheBusIsSafe) {
  Subscription s;
  {
    Bus bus;
    s = bus.subscribe("/t", [](const BusMessage&) {});
    EXPECT_TRUE(s.active());
  }
  EXPECT_FALSE(s.active());
  EXPECT_NO_THROW(s.unsubscribe());
}

TEST(Bus, EmptyCallbackIsRefused) {
  Bus bus;
  EXPECT_THROW((void)bus.subscribe("/t", nullptr), TimeError);
}

TEST(Bus, ReentrantDeliverIsRefused) {
  Bus bus;
  bool refused = false;
  auto s = bus.subscribe("/t", [&](const BusMessage&) {
    try {
      bus.deliver_until(ms(1));
    } catch (const TimeError&) {
      refused = true;
    }
  });
  bus.publish("/t", ms(0), "");
  bus.deliver_until(ms(0));
  EXPECT_TRUE(refused);
}

TEST(Bus, ThrowingSubscriberPropagatesAndTheRestStaysQueued) {
  Bus bus;
  std::vector<std::string> got;
  auto s = bus.subscribe("/t", [&](const BusMessage& m) {
    got.push_back(m.payload);
    if (m.payload == "bad") throw std::runtime_error("subscriber failed");
  });
  bus.publish("/t", ms(1), "a");
  bus.publish("/t", ms(1), "bad");
  bus.publish("/t", ms(1), "c");
  bus.publish("/t", ms(2), "d");
  EXPECT_THROW(bus.deliver_until(ms(2)), std::runtime_error);
  EXPECT_EQ(bus.pending(), 2u);
  EXPECT_EQ(bus.deliver_until(ms(2)), 2u);
  EXPECT_EQ(got, (std::vector<std::string>{"a", "bad", "c", "d"}));
}

TEST(Bus, OutOfOrderPublicationsAreStillDeliveredInOrder) {
  Bus bus;
  std::vector<int64_t> stamps;
  auto s = bus.subscribe("*", [&](const BusMessage& m) { stamps.push_back(m.stamp.ns()); });
  for (int64_t t : {5, 3, 9, 1, 3, 7, 2}) bus.publish("/t", SimTime::from_ns(t), "");
  bus.deliver_until(SimTime::from_ns(100));
  EXPECT_EQ(stamps, (std::vector<int64_t>{1, 2, 3, 3, 5, 7, 9}));
}

TEST(Bus, RandomPublicationsAreDeliveredExactlyOnceInTotalOrder) {
  Bus bus;
  RandomSource rng(77, "/bus/property");
  std::vector<std::pair<int64_t, uint64_t>> got;
  uint64_t published = 0;
  int64_t floor = 0;
  auto s = bus.subscribe("*", [&](const BusMessage& m) {
    got.emplace_back(m.stamp.ns(), m.sequence);
    if (rng.integers(0, 3) == 0) {  // publish from inside the delivery, at or after its stamp
      bus.publish("/in", m.stamp + nanoseconds(rng.integers(0, 20)), "");
      ++published;
    }
  });
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 40; ++i) {
      bus.publish(rng.integers(0, 1) ? "/a" : "/b", SimTime::from_ns(floor + rng.integers(0, 100)),
                  "");
      ++published;
    }
    floor += 50;
    bus.deliver_until(SimTime::from_ns(floor));
    ASSERT_TRUE(!bus.next_stamp() || bus.next_stamp()->ns() > floor);
  }
  bus.deliver_until(SimTime::from_ns(floor + 1000));
  EXPECT_EQ(bus.pending(), 0u);
  ASSERT_EQ(got.size(), published);
  for (size_t i = 1; i < got.size(); ++i) ASSERT_LT(got[i - 1], got[i]) << "at " << i;
}

TEST(Bus, ConcurrentPublishersGetUniqueSequencesDeliveredInOrder) {
  Bus bus;
  std::vector<uint64_t> seqs;
  auto s = bus.subscribe("*", [&](const BusMessage& m) { seqs.push_back(m.sequence); });
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&bus, t] {
      for (int i = 0; i < 1000; ++i) bus.publish("/t" + std::to_string(t), ms(1), "x");
    });
  }
  for (auto& th : threads) th.join();
  bus.deliver_until(ms(1));
  ASSERT_EQ(seqs.size(), 4000u);
  for (size_t i = 0; i < seqs.size(); ++i) EXPECT_EQ(seqs[i], i);
}

}  // namespace
}  // namespace fieldproof
