// The coordinator core's rules, one behaviour per test, driven by hand with a fake wall clock.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "core_harness.hpp"

namespace fieldproof::lockstep {
namespace {

using testing::CoreHarness;
using testing::ms;

CoordinatorOptions paused_options() {
  CoordinatorOptions o;
  o.start_paused = true;
  return o;
}

TEST(CoordinatorCore, GrantIsMinOfRegulatingSafeTimes) {
  CoreHarness h(paused_options());
  h.announce(1, "a", ms(10));
  h.announce(2, "b", ms(20));
  h.core->control(resume_request());
  EXPECT_EQ(h.core->grant(), ms(10));
  h.announce(1, "a", ms(30));
  EXPECT_EQ(h.core->grant(), ms(20));
  h.announce(2, "b", ms(40));
  EXPECT_EQ(h.core->grant(), ms(30));
  EXPECT_EQ(h.last_grant(1), ms(30));
  EXPECT_EQ(h.last_grant(2), ms(30));
}

TEST(CoordinatorCore, GrantIsBroadcastOnlyWhenItIncreases) {
  CoreHarness h;
  h.announce(1, "a", ms(10));
  const size_t grants = h.received<Grant>(1).size();
  h.announce(1, "a", ms(10));
  h.core->handle(1, Heartbeat{"a"});
  EXPECT_EQ(h.received<Grant>(1).size(), grants);
  h.announce(1, "a", ms(11));
  EXPECT_EQ(h.received<Grant>(1).size(), grants + 1);
  EXPECT_EQ(h.received<Grant>(1).back().number, h.core->grants_issued());
}

TEST(CoordinatorCore, FollowersDoNotHoldTime) {
  CoreHarness h(paused_options());
  h.announce(1, "a", ms(10));
  h.announce(2, "f", ms(1), Role::kFollowing);
  h.core->control(resume_request());
  EXPECT_EQ(h.core->grant(), ms(10));
  h.announce(1, "a", ms(20));
  EXPECT_EQ(h.core->grant(), ms(20));
  EXPECT_EQ(h.last_grant(2), ms(20));
  EXPECT_TRUE(h.errors(2).empty());
}

TEST(CoordinatorCore, FollowerPublishIsStampedAtTheGrant) {
  CoreHarness h(paused_options());
  h.announce(1, "a", ms(10));
  h.subscribe(1, "a", "chat");
  h.announce(2, "f", ms(0), Role::kFollowing);
  h.core->control(resume_request());
  h.publish(2, "f", "chat", ms(0), 1);  // a follower's stamp is replaced, never refused
  h.announce(1, "a", ms(20));
  ASSERT_EQ(h.deliveries(1).size(), 1u);
  EXPECT_EQ(h.deliveries(1)[0].message.stamp, ms(10));
  EXPECT_TRUE(h.errors(2).empty());
}

TEST(CoordinatorCore, NoRegulatingParticipantKeepsTimeUntilAHold) {
  CoreHarness h;
  h.announce(1, "f", ms(100), Role::kFollowing);
  EXPECT_EQ(h.core->grant(), SimTime::zero());
  EXPECT_EQ(h.core->grants_issued(), 0u);
  h.core->control(run_until_request(ms(50)));
  EXPECT_EQ(h.core->grant(), ms(50));
}

TEST(CoordinatorCore, IdleRegulatingParticipantNeverGetsAnInfiniteGrant) {
  CoreHarness h;
  h.announce(1, "a", SimTime::infinite());
  EXPECT_EQ(h.core->grants_issued(), 0u);
  for (const Grant& g : h.received<Grant>(1)) EXPECT_FALSE(g.time.is_infinite());
}

TEST(CoordinatorCore, GrantsNeverGoBackwards) {
  CoreHarness h(paused_options());
  std::vector<SimTime> seen;
  h.core->set_grant_observer([&](SimTime t, uint64_t) { seen.push_back(t); });
  h.announce(1, "a", ms(5));
  h.announce(2, "b", ms(7));
  h.announce(3, "c", ms(9));
  h.core->control(resume_request());
  // A deterministic pseudo-random walk of announcements, some lower than before (>= grant).
  uint64_t x = 12345;
  for (int i = 0; i < 300; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const ConnId c = 1 + (x >> 33) % 3;
    const std::string name(1, static_cast<char>('a' + c - 1));
    const int64_t jump = static_cast<int64_t>((x >> 20) % 7) - 2;  // -2 .. +4 ms
    const SimTime t = std::max(h.core->grant(), h.core->grant() + milliseconds(jump));
    h.announce(c, name, t);
  }
  ASSERT_GT(seen.size(), 10u);
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_LT(seen[i - 1], seen[i]);
}

// Four publishers put three messages each at one stamp and more at a later one; whatever the
// arrival order, the tap sees (stamp, publisher, seq) order.
std::vector<std::string> trace_for_arrival_order(uint64_t seed) {
  CoreHarness h(paused_options());
  for (ConnId c = 1; c <= 4; ++c) h.announce(c, "p" + std::to_string(c), ms(10));
  h.announce(5, "r", ms(100));
  h.subscribe(5, "r", "t");
  h.core->control(resume_request());
  std::vector<Publish> msgs;
  for (ConnId c = 1; c <= 4; ++c) {
    for (uint64_t seq = 1; seq <= 3; ++seq) {
      msgs.push_back(Publish{"p" + std::to_string(c), "t", ms(10), seq, "", ""});
    }
    msgs.push_back(Publish{"p" + std::to_string(c), "t", ms(15), 4, "", ""});
  }
  uint64_t x = seed;
  for (size_t i = msgs.size(); i > 1; --i) {  // Fisher-Yates with an LCG
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    std::swap(msgs[i - 1], msgs[(x >> 33) % i]);
  }
  for (Publish& m : msgs) {
    const ConnId c = static_cast<ConnId>(m.participant[1] - '0');
    h.core->handle(c, m);
  }
  for (ConnId c = 1; c <= 4; ++c) h.announce(c, "p" + std::to_string(c), ms(20));
  h.announce(5, "r", ms(100));
  std::vector<std::string> out;
  for (const Publish& p : h.trace) {
    out.push_back(format_seconds(p.stamp) + " " + p.participant + " " + std::to_string(p.seq));
  }
  return out;
}

TEST(CoordinatorCore, TotalOrderAtEqualStampsIsIndependentOfArrivalOrder) {
  const auto reference = trace_for_arrival_order(1);
  ASSERT_EQ(reference.size(), 16u);
  EXPECT_EQ(reference.front(), "0.01 p1 1");
  EXPECT_EQ(reference[3], "0.01 p2 1");
  EXPECT_EQ(reference.back(), "0.015 p4 4");
  for (uint64_t seed = 2; seed <= 20; ++seed) EXPECT_EQ(trace_for_arrival_order(seed), reference);
}

TEST(CoordinatorCore, DeliveryLowersTheReceiversSafeTimeUntilItAnnounces) {
  CoreHarness h(paused_options());
  h.announce(1, "a", ms(10));
  h.announce(2, "b", ms(50));
  h.subscribe(2, "b", "t");
  h.core->control(resume_request());
  h.publish(1, "a", "t", ms(10), 1);
  h.announce(1, "a", ms(30));
  ASSERT_EQ(h.deliveries(2).size(), 1u);
  EXPECT_EQ(h.core->grant(), ms(10));  // b holds at the delivered stamp
  const CoordinatorStatus s = h.core->status();
  ASSERT_EQ(s.participants.size(), 2u);
  EXPECT_EQ(s.participants[1].participant, "b");
  EXPECT_EQ(s.participants[1].safe_time, ms(10));
  h.announce(2, "b", ms(50));
  EXPECT_EQ(h.core->grant(), ms(30));
}

TEST(CoordinatorCore, MessageIsNotDeliveredWhileSomeoneMayStillPublishAtItsStamp) {
  CoreHarness h(paused_options());
  h.announce(1, "a", ms(10));
  h.announce(2, "b", ms(10));
  h.subscribe(2, "b", "t");
  h.core->control(resume_request());
  h.publish(1, "a", "t", ms(10), 1);
  h.announce(1, "a", ms(20));
  EXPECT_TRUE(h.deliveries(2).empty());  // b still at 10 may publish at 10
  EXPECT_EQ(h.core->pending_messages(), 1u);
  h.announce(2, "b", ms(20));
  EXPECT_EQ(h.deliveries(2).size(), 1u);
}

TEST(CoordinatorCore, GrantOfAStampComesBeforeItsDeliveriesAndABatchEndsWithAGrant) {
  CoreHarness h(paused_options());
  h.announce(1, "a", ms(10));
  h.announce(2, "b", ms(50));
  h.subscribe(2, "b", "t");
  h.core->control(resume_request());
  h.clear();
  h.publish(1, "a", "t", ms(20), 1);  // stamped ahead of the grant
  h.announce(1, "a", ms(40));
  const auto& frames = h.out[2];
  ASSERT_EQ(frames.size(), 3u);
  ASSERT_TRUE(std::holds_alternative<Grant>(frames[0]));
  EXPECT_EQ(std::get<Grant>(frames[0]).time, ms(20));
  ASSERT_TRUE(std::holds_alternative<Deliver>(frames[1]));
  EXPECT_EQ(std::get<Deliver>(frames[1]).message.stamp, ms(20));
  EXPECT_EQ(std::get<Deliver>(frames[1]).thread, "main");
  ASSERT_TRUE(std::holds_alternative<Grant>(frames[2]));
  EXPECT_EQ(std::get<Grant>(frames[2]).time, ms(20));
  EXPECT_EQ(std::get<Grant>(frames[2]).number, std::get<Grant>(frames[0]).number);
}

// Lookahead: b relays "t" and publishes nothing sooner than 5 ms after what it reads.
TEST(CoordinatorCore, LookaheadLowersTheReceiverOnlyToStampPlusLookahead) {
  CoreHarness h(paused_options());
  size_t unread = 0;
  h.core->set_unread_probe([&](ConnId, const std::string&) { return unread; });
  h.announce(1, "a", ms(10));
  h.announce(2, "b", ms(50));
  h.subscribe(2, "b", "t");
  ASSERT_TRUE(h.core->set_lookahead("b", "main", "t", milliseconds(5)));
  h.core->control(resume_request());
  h.publish(1, "a", "t", ms(10), 1);
  h.announce(1, "a", ms(30));
  ASSERT_EQ(h.deliveries(2).size(), 1u);
  EXPECT_EQ(h.core->grant(), ms(15));  // not held at 10: b cannot publish before 15
  EXPECT_EQ(h.core->status().participants[1].safe_time, ms(15));
  h.announce(2, "b", ms(50));  // read it (nothing unread)
  EXPECT_EQ(h.core->grant(), ms(30));
  // A topic without lookahead still holds b at the stamp.
  h.subscribe(2, "b", "u");
  h.publish(1, "a", "u", ms(30), 2);
  h.announce(1, "a", ms(40));
  EXPECT_EQ(h.core->grant(), ms(30));
  h.announce(2, "b", ms(50));
  EXPECT_EQ(h.core->grant(), ms(40));
}

// A relay (set_relay) runs inside the fan-out: what it publishes is queued at once, the thread is
// not woken for the message, and nothing holds the grant at it.
CoordinatorCore::Relay relay_to(const std::string& participant, const std::string& topic,
                                Duration delay, std::vector<SimTime>* seen, bool deliver) {
  CoordinatorCore::Relay r;
  r.relay = [=](const Publish& m, const std::function<void(Publish)>& emit) {
    seen->push_back(m.stamp);
    emit(Publish{participant, topic, m.stamp + delay, 100 + seen->size(), "t", m.payload});
  };
  r.deliver = deliver;
  return r;
}

// a (connection 1, at 10) publishes; b (connection 2, at 50) relays "t" to "g" 7 ms later with a
// 5 ms lookahead, subscribed to `first` (no lookahead) before "t". Resumed.
struct RelayCase {
  CoreHarness h{paused_options()};
  size_t unread = 0;
  std::vector<SimTime> seen;

  explicit RelayCase(bool deliver, const std::vector<std::string>& first = {}) {
    h.core->set_unread_probe([this](ConnId, const std::string&) { return unread; });
    h.announce(1, "a", ms(10));
    h.announce(2, "b", ms(50));
    for (const std::string& t : first) h.subscribe(2, "b", t);
    h.subscribe(2, "b", "t");
    EXPECT_TRUE(h.core->set_lookahead("b", "main", "t", milliseconds(5)));
    EXPECT_TRUE(
        h.core->set_relay("b", "main", "t", relay_to("b", "g", milliseconds(7), &seen, deliver)));
    h.core->control(resume_request());
  }
};

TEST(CoordinatorCore, ARelayRunsInTheFanOutAndItsPublishesAreQueuedAtOnce) {
  RelayCase rc(false);
  CoreHarness& h = rc.h;
  h.subscribe(1, "a", "g");
  h.publish(1, "a", "t", ms(10), 1, "x");
  h.announce(1, "a", ms(30));
  ASSERT_EQ(rc.seen.size(), 1u);
  EXPECT_EQ(rc.seen[0], ms(10));
  EXPECT_TRUE(h.deliveries(2).empty());  // b is not woken for it
  // The relay's publish is delivered at its stamp, in the total order; b never held the grant.
  ASSERT_EQ(h.deliveries(1).size(), 1u);
  EXPECT_EQ(h.deliveries(1)[0].message.topic, "g");
  EXPECT_EQ(h.deliveries(1)[0].message.stamp, ms(17));
  EXPECT_EQ(h.deliveries(1)[0].message.payload, "x");
  EXPECT_FALSE(h.deliveries(1)[0].message.relayed);
  ASSERT_EQ(h.trace.size(), 2u);
  EXPECT_EQ(h.trace[0].topic, "t");
  EXPECT_EQ(h.trace[1].topic, "g");
  // a, held by its own delivery at 17, reads it; then the grant reaches a's next time.
  h.announce(1, "a", ms(30));
  EXPECT_EQ(h.core->grant(), ms(30));
}

TEST(CoordinatorCore, ARelayThatDeliversTooMarksTheMessageAndKeepsTheLookahead) {
  RelayCase rc(true);
  CoreHarness& h = rc.h;
  h.publish(1, "a", "t", ms(10), 1);
  rc.unread = 1;
  h.announce(1, "a", ms(30));
  ASSERT_EQ(rc.seen.size(), 1u);
  ASSERT_EQ(h.deliveries(2).size(), 1u);
  EXPECT_TRUE(h.deliveries(2)[0].message.relayed);
  EXPECT_EQ(h.core->grant(), ms(15));  // b's unread delivery holds it at stamp + lookahead
}

TEST(CoordinatorCore, ARelayGivesWayToADeliveryOfItsBatchThatHoldsTheThread) {
  RelayCase rc(false, {"u"});  // "u" has no lookahead: it holds b at the stamp
  CoreHarness& h = rc.h;
  // One batch at 10: u (seq 1) reaches b first, so b must see t after it and relay it itself.
  h.publish(1, "a", "t", ms(10), 2);
  h.publish(1, "a", "u", ms(10), 1);
  rc.unread = 2;
  h.announce(1, "a", ms(30));
  EXPECT_TRUE(rc.seen.empty());
  auto d = h.deliveries(2);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].message.topic, "u");
  EXPECT_EQ(d[1].message.topic, "t");
  EXPECT_FALSE(d[1].message.relayed);
  EXPECT_EQ(h.core->grant(), ms(10));  // both hold b at 10, the relayed topic too
  rc.unread = 0;
  h.announce(2, "b", ms(50));
  EXPECT_EQ(h.core->grant(), ms(30));
  // The next batch has nothing ahead of t: the relay runs again.
  h.publish(1, "a", "t", ms(30), 3);
  h.announce(1, "a", ms(40));
  ASSERT_EQ(rc.seen.size(), 1u);
  EXPECT_EQ(rc.seen[0], ms(30));
  EXPECT_EQ(h.deliveries(2).size(), 2u);
}

TEST(CoordinatorCore, ARelayNeedsAKnownThreadAndAFunction) {
  CoreHarness h(paused_options());
  h.announce(2, "b", ms(50));
  std::vector<SimTime> seen;
  EXPECT_FALSE(
      h.core->set_relay("nobody", "main", "t", relay_to("b", "g", milliseconds(7), &seen, false)));
  EXPECT_FALSE(
      h.core->set_relay("b", "other", "t", relay_to("b", "g", milliseconds(7), &seen, false)));
  EXPECT_FALSE(h.core->set_relay("b", "main", "t", CoordinatorCore::Relay{}));
  EXPECT_TRUE(
      h.core->set_relay("b", "main", "t", relay_to("b", "g", milliseconds(7), &seen, false)));
}

// waits_past: every thread of the connection regulates with an effective safe time past g.
TEST(CoordinatorCore, WaitsPastOnlyWhenEveryThreadOfTheConnectionWaitsForALaterTime) {
  CoreHarness h(paused_options());
  size_t unread = 1;
  h.core->set_unread_probe([&](ConnId, const std::string&) { return unread; });
  h.announce(1, "a", ms(10));
  h.announce(2, "b", ms(50));
  h.announce(2, "b", ms(70), Role::kRegulating, "second");
  h.announce(3, "f", ms(90), Role::kFollowing);
  EXPECT_FALSE(h.core->waits_past(1, ms(10)));  // a waits for exactly 10
  EXPECT_TRUE(h.core->waits_past(1, ms(9)));
  EXPECT_TRUE(h.core->waits_past(2, ms(49)));  // both of b's threads are past 49
  EXPECT_FALSE(h.core->waits_past(2, ms(50)));
  EXPECT_FALSE(h.core->waits_past(3, ms(1)));  // a follower takes every grant
  EXPECT_FALSE(h.core->waits_past(4, ms(1)));  // unknown connection
  // A delivery lowers the receiver to its stamp, with a lookahead to stamp + lookahead.
  h.subscribe(2, "b", "t");
  h.subscribe(2, "b", "u", "second");
  ASSERT_TRUE(h.core->set_lookahead("b", "main", "t", milliseconds(5)));
  h.core->control(resume_request());
  h.publish(1, "a", "t", ms(10), 1);
  h.announce(1, "a", ms(30));
  EXPECT_EQ(h.core->grant(), ms(15));
  EXPECT_FALSE(h.core->waits_past(2, ms(15)));
  EXPECT_TRUE(h.core->waits_past(2, ms(14)));
  unread = 0;
  h.announce(2, "b", ms(50));  // read it
  EXPECT_EQ(h.core->grant(), ms(30));
  EXPECT_TRUE(h.core->waits_past(2, ms(30)));
  h.publish(1, "a", "u", ms(30), 2);  // no lookahead on "u" (thread "second")
  h.announce(1, "a", ms(40));
  EXPECT_EQ(h.core->grant(), ms(30));
  EXPECT_FALSE(h.core->waits_past(2, ms(30)));
}

TEST(CoordinatorCore, AnAnnouncementThatCrossesAnUnreadDeliveryKeepsItsFloor) {
  CoreHarness h(paused_options());
  size_t unread = 0;
  std::vector<std::string> asked;
  h.core->set_unread_probe([&](ConnId c, const std::string& thread) {
    asked.push_back(std::to_string(c) + "/" + thread);
    return unread;
  });
  h.announce(1, "a", ms(10));
  h.announce(2, "b", ms(50));
  h.subscribe(2, "b", "t");
  ASSERT_TRUE(h.core->set_lookahead("b", "main", "t", milliseconds(5)));
  h.core->control(resume_request());
  h.publish(1, "a", "t", ms(10), 1);
  h.publish(1, "a", "t", ms(12), 2);
  h.announce(1, "a", ms(30));
  // Both delivered while b has read neither: 12 < 10 + 5.
  ASSERT_EQ(h.deliveries(2).size(), 2u);
  EXPECT_EQ(h.core->grant(), ms(15));
  // b announces having read the first only: the second still binds it at 12 + 5.
  unread = 1;
  h.announce(2, "b", ms(50));
  EXPECT_EQ(asked.back(), "2/main");
  EXPECT_EQ(h.core->grant(), ms(17));
  unread = 0;
  h.announce(2, "b", ms(50));
  EXPECT_EQ(h.core->grant(), ms(30));
}

TEST(CoordinatorCore, LookaheadNeedsAProbeAKnownThreadAndAPositiveDuration) {
  CoreHarness h(paused_options());
  h.announce(2, "b", ms(50));
  EXPECT_FALSE(h.core->set_lookahead("b", "main", "t", milliseconds(5)));  // no probe
  h.core->set_unread_probe([](ConnId, const std::string&) { return size_t{0}; });
  EXPECT_FALSE(h.core->set_lookahead("nobody", "main", "t", milliseconds(5)));
  EXPECT_FALSE(h.core->set_lookahead("b", "other", "t", milliseconds(5)));
  EXPECT_FALSE(h.core->set_lookahead("b", "main", "t", Duration::zero()));
  EXPECT_TRUE(h.core->set_lookahead("b", "main", "t", milliseconds(5)));
}

TEST(CoordinatorCore, PausedMeansNoGrants) {
  CoreHarness h;
  h.announce(1, "a", ms(10));
  EXPECT_EQ(h.core->grant(), ms(10));
  EXPECT_TRUE(h.core->control(pause_request()).status.paused);
  const uint64_t n = h.core->grants_issued();
  h.announce(1, "a", ms(20));
  h.core->poll();
  EXPECT_EQ(h.core->grants_issued(), n);
  EXPECT_EQ(h.core->grant(), ms(10));
  h.core->control(resume_request());
  EXPECT_EQ(h.core->grant(), ms(20));
}

TEST(CoordinatorCore, StepAdvancesExactlyTheDurationThenPauses) {
  CoreHarness h(paused_options());
  h.announce(1, "a", ms(10));
  ControlReply r = h.core->control(step_request(milliseconds(25)));
  EXPECT_TRUE(r.ok);
  EXPECT_EQ(h.core->grant(), ms(10));
  EXPECT_FALSE(r.status.paused);  // still stepping: a holds at 10
  h.announce(1, "a", ms(20));
  EXPECT_EQ(h.core->grant(), ms(20));
  h.announce(1, "a", ms(30));
  EXPECT_EQ(h.core->grant(), ms(25));
  EXPECT_TRUE(h.core->status().paused);
  h.core->control(step_request(milliseconds(25)));
  EXPECT_EQ(h.core->grant(), ms(30));
  h.announce(1, "a", ms(100));
  EXPECT_EQ(h.core->grant(), ms(50));
  EXPECT_TRUE(h.core->status().paused);
}

TEST(CoordinatorCore, StepOnARunningClockPausesFirst) {
  CoreHarness h;
  h.announce(1, "a", ms(10));
  h.core->control(step_request(milliseconds(5)));
  h.announce(1, "a", ms(100));
  EXPECT_EQ(h.core->grant(), ms(15));
  EXPECT_TRUE(h.core->status().paused);
}

TEST(CoordinatorCore, RunUntilHoldsTheGrant) {
  CoreHarness h;
  h.core->control(run_until_request(ms(40)));
  h.announce(1, "a", ms(100));
  EXPECT_EQ(h.core->grant(), ms(40));
  EXPECT_EQ(h.core->status().hold, ms(40));
  h.announce(1, "a", ms(200));
  EXPECT_EQ(h.core->grant(), ms(40));
  EXPECT_FALSE(h.core->status().paused);
  h.core->control(run_until_request(SimTime::infinite()));
  EXPECT_EQ(h.core->grant(), ms(200));
}

TEST(CoordinatorCore, PacedGrantNeverExceedsRtfTimesUnpausedWallElapsed) {
  CoordinatorOptions o;
  o.max_rtf = 2.0;
  CoreHarness h(o);
  const SimTime wall0 = h.wall;
  Duration paused_total = Duration::zero();
  h.announce(1, "a", ms(3));
  uint64_t x = 99;
  SimTime best = SimTime::zero();
  for (int i = 0; i < 400; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const Duration dt = microseconds(static_cast<int64_t>((x >> 33) % 5000));
    if (i == 150) h.core->control(pause_request());
    if (i >= 150 && i < 200) paused_total += dt;
    if (i == 200) h.core->control(resume_request());
    h.wall += dt;
    h.core->poll();
    // a keeps announcing well ahead of the grant, so the pace is what bounds it
    if (h.core->grant() > best) {
      best = h.core->grant();
      h.announce(1, "a", h.core->grant() + seconds(1));
    }
    const Duration unpaused = (h.wall - wall0) - paused_total;
    ASSERT_LE(h.core->grant().ns(), 2 * unpaused.ns()) << "at step " << i;
  }
  // And the pace is actually used: within a couple of steps of the cap.
  const Duration unpaused = (h.wall - wall0) - paused_total;
  EXPECT_GT(h.core->grant().ns(), 2 * unpaused.ns() - milliseconds(10).ns());
}

TEST(CoordinatorCore, PollSaysWhenThePaceAllowsTheNextGrant) {
  CoordinatorOptions o;
  o.max_rtf = 1.0;
  CoreHarness h(o);
  const SimTime wall0 = h.wall;
  h.announce(1, "a", ms(10));
  EXPECT_EQ(h.core->grant(), SimTime::zero());
  const auto next = h.core->poll();
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(*next, wall0 + milliseconds(1));  // the first pace_step grid point
  h.wall = wall0 + milliseconds(10);
  h.core->poll();
  EXPECT_EQ(h.core->grant(), ms(10));
}

TEST(CoordinatorCore, PacedGrantReachesAnOffGridAnnouncementAndPollNeverAsksForThePast) {
  CoordinatorOptions o;
  o.max_rtf = 1.0;
  o.ack_timeout = Duration::infinite();
  CoreHarness h(o);
  const SimTime wall0 = h.wall;
  h.announce(1, "a", SimTime::from_ns(1'500'000));
  std::vector<SimTime> grants;
  for (int i = 0; i < 5; ++i) {
    const auto next = h.core->poll();
    grants.push_back(h.core->grant());
    if (!next) break;
    ASSERT_GT(*next, h.wall);
    h.wall = *next;
  }
  EXPECT_EQ(grants.back(), SimTime::from_ns(1'500'000));
  EXPECT_EQ(h.wall, wall0 + microseconds(1500));
}

TEST(CoordinatorCore, SetMaxRtfAtRunTimeReanchors) {
  CoordinatorOptions o;
  o.max_rtf = 1.0;
  o.ack_timeout = Duration::infinite();
  CoreHarness h(o);
  h.announce(1, "a", SimTime::infinite());
  h.wall += seconds(1);
  h.core->poll();
  EXPECT_EQ(h.core->grant(), ms(1000));
  ControlReply r = h.core->control(set_max_rtf_request(4.0));
  EXPECT_EQ(r.status.max_rtf, 4.0);
  h.wall += milliseconds(500);
  h.core->poll();
  EXPECT_EQ(h.core->grant(), ms(3000));
  h.core->control(set_max_rtf_request(0.0));  // unlimited: only the participant bounds it
  h.announce(1, "a", ms(9000));
  EXPECT_EQ(h.core->grant(), ms(9000));
}

TEST(CoordinatorCore, StatusReportsMeasuredRtfWithPausesLeftOut) {
  CoordinatorOptions o;
  o.ack_timeout = Duration::infinite();
  CoreHarness h(o);
  h.announce(1, "a", ms(500));
  h.core->control(pause_request());
  h.wall += seconds(10);
  h.core->control(resume_request());
  h.wall += seconds(1);
  const CoordinatorStatus s = h.core->status();
  EXPECT_DOUBLE_EQ(s.measured_rtf, 0.5);
  EXPECT_EQ(s.grants, h.core->grants_issued());
  ASSERT_EQ(s.participants.size(), 1u);
  EXPECT_EQ(s.participants[0].role, Role::kRegulating);
}

// ---- bad input: refused, error to the culprit only, the others undisturbed ----

CoordinatorOptions bad_input_options() {
  CoordinatorOptions o = paused_options();
  o.max_message_bytes = 64;
  return o;
}

struct BadInput : ::testing::Test {
  CoreHarness h{bad_input_options()};
  void SetUp() override {
    h.announce(1, "good1", ms(10));
    h.announce(2, "good2", ms(20));
    h.subscribe(2, "good2", "t");
    h.announce(3, "culprit", ms(30));
    h.core->control(resume_request());
    h.clear();
  }
  void expect_refused(ErrorCode code) {
    const auto errs = h.errors(3);
    ASSERT_EQ(errs.size(), 1u);
    EXPECT_EQ(errs[0].code, code);
    EXPECT_FALSE(errs[0].reason.empty());
    EXPECT_TRUE(h.errors(1).empty());
    EXPECT_TRUE(h.errors(2).empty());
    EXPECT_FALSE(h.logs.empty());
    EXPECT_FALSE(h.core->failed());
    // the others carry on
    h.announce(1, "good1", ms(25));
    EXPECT_EQ(h.core->grant(), ms(20));
  }
};

TEST_F(BadInput, PublishStampedBeforeTheGrantIsRefused) {
  h.publish(3, "culprit", "t", ms(5), 1);
  expect_refused(ErrorCode::kStampInPast);
  EXPECT_EQ(h.core->pending_messages(), 0u);
}

TEST_F(BadInput, AnnounceBelowTheGrantIsRefused) {
  h.announce(3, "culprit", ms(5));
  expect_refused(ErrorCode::kAnnounceBackwards);
  EXPECT_EQ(h.core->status().participants[0].safe_time, ms(30));
}

TEST_F(BadInput, PublishBeforeRegisteringIsRefused) {
  h.publish(4, "stranger", "t", ms(50), 1);
  h.out[3] = h.out[4];
  expect_refused(ErrorCode::kNotRegistered);
}

TEST_F(BadInput, SubscribeBeforeRegisteringIsRefused) {
  h.subscribe(4, "stranger", "t");
  h.out[3] = h.out[4];
  expect_refused(ErrorCode::kNotRegistered);
}

TEST_F(BadInput, SubscribeForAThreadThatNeverAnnouncedIsRefused) {
  h.subscribe(3, "culprit", "t", "ghost");
  expect_refused(ErrorCode::kNotRegistered);
}

TEST_F(BadInput, OversizedPayloadIsRefused) {
  h.publish(3, "culprit", "t", ms(30), 1, std::string(65, 'x'));
  expect_refused(ErrorCode::kOversized);
  EXPECT_NE(h.errors(3)[0].reason.find("65 bytes"), std::string::npos);
}

TEST_F(BadInput, DuplicateNameOnAnotherConnectionIsRefused) {
  h.announce(4, "good1", ms(40));
  h.out[3] = h.out[4];
  expect_refused(ErrorCode::kDuplicateName);
}

TEST_F(BadInput, CoordinatorFramesFromAParticipantAreRefused) {
  h.core->handle(3, Grant{ms(99), 7});
  expect_refused(ErrorCode::kUnknownKind);
}

TEST_F(BadInput, PublishStampedInfiniteIsRefused) {
  h.publish(3, "culprit", "t", SimTime::infinite(), 1);
  expect_refused(ErrorCode::kMalformed);
}

// ---- heartbeats ----

TEST(CoordinatorCore, SilentRegulatingParticipantFailsTheRunNamingIt) {
  CoreHarness h;
  h.announce(1, "ugv1", SimTime::infinite());  // idle: silence, not a held step, is its fault
  h.announce(2, "ugv2", ms(10));
  h.wall += seconds(20);
  h.announce(2, "ugv2", ms(20));
  h.wall += seconds(11);
  h.core->poll();
  ASSERT_EQ(h.failures.size(), 1u);
  EXPECT_EQ(h.failures[0].first, "ugv1");
  EXPECT_EQ(h.failures[0].second, "lockstep: participant ugv1 (thread main) sent nothing for 30 s");
  EXPECT_TRUE(h.core->failed());
  ASSERT_EQ(h.errors(2).size(), 1u);
  EXPECT_EQ(h.errors(2)[0].code, ErrorCode::kTimeout);
  const ControlReply r = h.core->control(status_request());
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, h.failures[0].second);
  // no grant after the failure
  const uint64_t n = h.core->grants_issued();
  h.announce(2, "ugv2", ms(50));
  EXPECT_EQ(h.core->grants_issued(), n);
}

TEST(CoordinatorCore, PollAsksToBeCalledAtTheNextHeartbeatDeadline) {
  CoreHarness h;
  const SimTime w0 = h.wall;
  h.announce(1, "a", ms(10));
  const auto next = h.core->poll();
  ASSERT_TRUE(next.has_value());
  EXPECT_LE(*next, w0 + seconds(30) + nanoseconds(1));
  EXPECT_GT(*next, w0 + seconds(29));
}

TEST(CoordinatorCore, SilentFollowerIsDroppedWithALogLine) {
  CoreHarness h;
  h.announce(1, "a", ms(10));
  h.announce(2, "watcher", ms(0), Role::kFollowing);
  h.wall += seconds(6);
  h.core->handle(1, Heartbeat{"a"});
  h.core->poll();
  EXPECT_TRUE(h.failures.empty());
  const CoordinatorStatus s = h.core->status();
  ASSERT_EQ(s.participants.size(), 1u);
  EXPECT_EQ(s.participants[0].participant, "a");
  ASSERT_FALSE(h.logs.empty());
  EXPECT_NE(h.logs.back().find("watcher"), std::string::npos);
}

TEST(CoordinatorCore, ConnectionLostByARegulatingParticipantFailsNamingIt) {
  CoreHarness h;
  h.announce(1, "a", ms(10));
  h.announce(2, "b", ms(10));
  h.core->connection_lost(2);
  ASSERT_EQ(h.failures.size(), 1u);
  EXPECT_EQ(h.failures[0].first, "b");
}

// ---- leave ----

TEST(CoordinatorCore, LeaveOfAThreadReleasesTheTimeItHeld) {
  CoreHarness h(paused_options());
  h.announce(1, "a", ms(50));
  h.announce(1, "a", ms(10), Role::kRegulating, "worker");
  h.core->control(resume_request());
  EXPECT_EQ(h.core->grant(), ms(10));
  h.core->handle(1, Leave{"a", "worker"});
  EXPECT_EQ(h.core->grant(), ms(50));
  EXPECT_EQ(h.core->status().participants.size(), 1u);
}

TEST(CoordinatorCore, LeaveOfAParticipantRemovesItsSubscriptions) {
  CoreHarness h;
  h.announce(1, "a", ms(10));
  h.announce(2, "b", ms(10));
  h.subscribe(2, "b", "t");
  h.core->handle(2, Leave{"b", ""});
  h.publish(1, "a", "t", ms(10), 1);
  h.announce(1, "a", ms(20));
  EXPECT_TRUE(h.deliveries(2).empty());
  EXPECT_EQ(h.trace.size(), 1u);
  EXPECT_EQ(h.core->grant(), ms(20));
  // the name is free again
  h.announce(3, "b", ms(30));
  EXPECT_TRUE(h.errors(3).empty());
}

TEST(CoordinatorCore, DisconnectIsALeaveOfEveryParticipantOfTheConnection) {
  CoreHarness h(paused_options());
  h.announce(1, "a", ms(50));
  h.announce(2, "b", ms(10));
  h.core->control(resume_request());
  h.core->disconnected(2);
  EXPECT_EQ(h.core->grant(), ms(50));
  EXPECT_TRUE(h.failures.empty());
}

TEST(CoordinatorCore, LateJoinerIsRaisedToTheGrantAndToldTheTime) {
  CoreHarness h;
  h.announce(1, "a", ms(50));
  h.announce(2, "late", SimTime::zero());
  EXPECT_TRUE(h.errors(2).empty());
  EXPECT_EQ(h.last_grant(2), ms(50));
  EXPECT_EQ(h.core->status().participants[1].safe_time, ms(50));
}

// ---- acknowledgements: a thread that holds the grant back ----

TEST(CoordinatorCore, ThreadHoldingTheGrantFailsAtAckTimeoutWhateverItsHeartbeats) {
  CoordinatorOptions o;
  o.ack_timeout = seconds(1);
  CoreHarness h(o);
  h.announce(1, "ugv1", ms(10));
  h.announce(2, "world", ms(100));
  ASSERT_EQ(h.core->grant(), ms(10));
  for (int i = 0; i < 4; ++i) {  // 0.25 s apart: heartbeats alone are no acknowledgement
    h.wall += milliseconds(250);
    h.core->handle(1, Heartbeat{"ugv1"});
    h.core->handle(2, Heartbeat{"world"});
    h.core->poll();
  }
  EXPECT_TRUE(h.failures.empty()) << "held exactly ack_timeout, not more";
  h.wall += nanoseconds(1);
  h.core->poll();
  ASSERT_EQ(h.failures.size(), 1u);
  EXPECT_EQ(h.failures[0].first, "ugv1");
  EXPECT_EQ(h.failures[0].second,
            "lockstep: step 2 (t = 0.01 s) not acknowledged by ugv1 within ack_timeout_s");
  ASSERT_FALSE(h.errors(2).empty());
  EXPECT_EQ(h.errors(2).back().code, ErrorCode::kTimeout);
}

TEST(CoordinatorCore, PollAsksToBeCalledWhenAHeldStepTimesOut) {
  CoordinatorOptions o;
  o.ack_timeout = seconds(1);
  o.follower_timeout = seconds(60);
  CoreHarness h(o);
  const SimTime w0 = h.wall;
  h.announce(1, "a", ms(10));
  h.wall += milliseconds(500);
  h.core->handle(1, Heartbeat{"a"});  // heard later, still holding since w0
  const auto next = h.core->poll();
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(*next, w0 + seconds(1) + nanoseconds(1));
}

TEST(CoordinatorCore, AnnouncingPastTheGrantRestartsTheAcknowledgementClock) {
  CoordinatorOptions o;
  o.ack_timeout = seconds(1);
  CoreHarness h(o);
  h.announce(1, "a", ms(10));
  for (int step = 2; step <= 10; ++step) {
    h.wall += milliseconds(900);
    h.core->poll();
    h.announce(1, "a", ms(10 * step));
  }
  EXPECT_TRUE(h.failures.empty());
  EXPECT_EQ(h.core->grant(), ms(100));
}

TEST(CoordinatorCore, IdleParticipantAnnouncingInfinityHoldsNothing) {
  CoordinatorOptions o;
  o.ack_timeout = seconds(1);
  CoreHarness h(o);
  h.announce(1, "idle", SimTime::infinite());
  for (int i = 0; i < 10; ++i) {
    h.wall += milliseconds(500);
    h.core->handle(1, Heartbeat{"idle"});
    h.core->poll();
  }
  EXPECT_TRUE(h.failures.empty());
}

TEST(CoordinatorCore, PausedCoordinatorHoldsNobodyResponsible) {
  CoordinatorOptions o = paused_options();
  o.ack_timeout = seconds(1);
  CoreHarness h(o);
  h.announce(1, "a", ms(10));
  for (int i = 0; i < 10; ++i) {
    h.wall += milliseconds(500);
    h.core->handle(1, Heartbeat{"a"});
    h.core->poll();
  }
  EXPECT_TRUE(h.failures.empty());
  // Resumed, the thread holds the clock from the resume on.
  h.core->control(resume_request());
  ASSERT_EQ(h.core->grant(), ms(10));
  h.wall += milliseconds(600);
  h.core->handle(1, Heartbeat{"a"});
  h.core->poll();
  EXPECT_TRUE(h.failures.empty());
  h.wall += milliseconds(600);
  h.core->handle(1, Heartbeat{"a"});
  h.core->poll();
  ASSERT_EQ(h.failures.size(), 1u);
  EXPECT_EQ(h.failures[0].first, "a");
}

TEST(CoordinatorCore, ThreadAtTheEnginesHoldIsNotBlamed) {
  CoordinatorOptions o;
  o.ack_timeout = seconds(1);
  CoreHarness h(o);
  h.core->control(run_until_request(ms(10)));
  h.announce(1, "a", ms(10));
  ASSERT_EQ(h.core->grant(), ms(10));
  for (int i = 0; i < 10; ++i) {
    h.wall += milliseconds(500);
    h.core->handle(1, Heartbeat{"a"});
    h.core->poll();
  }
  EXPECT_TRUE(h.failures.empty());
}

TEST(CoordinatorCore, ThreadWaitingAtADeliveryHoldsTheClock) {
  CoordinatorOptions o;
  o.ack_timeout = seconds(1);
  CoreHarness h(o);
  h.announce(1, "rx", SimTime::infinite());
  h.subscribe(1, "rx", "cmd");
  h.announce(2, "tx", ms(10));
  h.publish(2, "tx", "cmd", ms(10), 1);
  h.announce(2, "tx", ms(500));
  ASSERT_EQ(h.deliveries(1).size(), 1u);  // rx's safe time is now 10 ms until it announces
  for (int i = 0; i < 5; ++i) {
    h.wall += milliseconds(300);
    h.core->handle(1, Heartbeat{"rx"});
    h.core->handle(2, Heartbeat{"tx"});
    h.core->poll();
  }
  ASSERT_EQ(h.failures.size(), 1u);
  EXPECT_EQ(h.failures[0].first, "rx");
  EXPECT_NE(h.failures[0].second.find("not acknowledged by rx"), std::string::npos);
}

TEST(CoordinatorCore, SilentParticipantHoldingTheClockIsNamedAsAStepNotAcknowledged) {
  CoreHarness h;
  h.announce(1, "ugv1", ms(10));
  h.announce(2, "ugv2", ms(20));
  h.wall += seconds(31);
  h.core->handle(2, Heartbeat{"ugv2"});
  h.core->poll();
  ASSERT_EQ(h.failures.size(), 1u);
  EXPECT_EQ(h.failures[0].first, "ugv1");
  EXPECT_EQ(h.failures[0].second,
            "lockstep: step 2 (t = 0.01 s) not acknowledged by ugv1 within ack_timeout_s");
}

TEST(CoordinatorCore, PaceBelowTheSafeTimeHoldsNobodyResponsible) {
  CoordinatorOptions o;
  o.ack_timeout = seconds(1);
  o.max_rtf = 0.001;  // 1 ms of simulated time per wall second
  CoreHarness h(o);
  h.announce(1, "a", SimTime::zero() + seconds(10));
  for (int i = 0; i < 10; ++i) {
    h.wall += milliseconds(500);
    h.core->handle(1, Heartbeat{"a"});
    h.core->poll();
  }
  EXPECT_TRUE(h.failures.empty());
  EXPECT_LT(h.core->grant(), ms(10));
}

}  // namespace
}  // namespace fieldproof::lockstep
