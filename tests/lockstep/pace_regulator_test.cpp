#include "fieldproof/lockstep/pace_regulator.hpp"

#include <gtest/gtest.h>

namespace fieldproof::lockstep {
namespace {

const SimTime kWall0 = SimTime::from_ns(5'000'000'000);

TEST(PaceRegulator, UnlimitedHasNoLimit) {
  PaceRegulator p(0.0);
  p.anchor(SimTime::zero(), kWall0);
  EXPECT_TRUE(p.unlimited());
  EXPECT_TRUE(p.limit(kWall0).is_infinite());
}

TEST(PaceRegulator, LimitIsRtfTimesWallElapsedSinceTheAnchor) {
  PaceRegulator p(2.0);
  p.anchor(SimTime::from_ns(100), kWall0);
  EXPECT_EQ(p.limit(kWall0), SimTime::from_ns(100));
  EXPECT_EQ(p.limit(kWall0 + seconds(1)), SimTime::from_ns(100) + seconds(2));
  EXPECT_EQ(p.limit(kWall0 - seconds(1)), SimTime::from_ns(100));
}

TEST(PaceRegulator, WallAtIsTheEarliestWallTimeReachingASimTime) {
  PaceRegulator p(3.0);
  p.anchor(SimTime::zero(), kWall0);
  for (int64_t ns : std::initializer_list<int64_t>{1, 2, 3, 4, 1000, 999'999'999, 3'000'000'001}) {
    const SimTime target = SimTime::from_ns(ns);
    const SimTime w = p.wall_at(target);
    EXPECT_GE(p.limit(w), target) << ns;
    EXPECT_LT(p.limit(w - nanoseconds(1)), target) << ns;
  }
}

TEST(PaceRegulator, PauseFreezesTheLimitAndResumeReanchors) {
  PaceRegulator p(1.0);
  p.anchor(SimTime::zero(), kWall0);
  p.pause(SimTime::from_ns(0) + milliseconds(400));
  EXPECT_EQ(p.limit(kWall0 + seconds(100)), SimTime::zero() + milliseconds(400));
  EXPECT_TRUE(p.wall_at(SimTime::zero() + seconds(1)).is_infinite());
  p.resume(SimTime::zero() + milliseconds(400), kWall0 + seconds(100));
  EXPECT_EQ(p.limit(kWall0 + seconds(101)), SimTime::zero() + milliseconds(1400));
}

TEST(PaceRegulator, SetMaxRtfReanchorsSoNothingIsGainedOrLost) {
  PaceRegulator p(1.0);
  p.anchor(SimTime::zero(), kWall0);
  // at wall +1 s the grant was 0.7 s (participants were slower than the pace)
  p.set_max_rtf(10.0, SimTime::zero() + milliseconds(700), kWall0 + seconds(1));
  EXPECT_EQ(p.limit(kWall0 + seconds(1)), SimTime::zero() + milliseconds(700));
  EXPECT_EQ(p.limit(kWall0 + seconds(2)), SimTime::zero() + milliseconds(10'700));
  EXPECT_EQ(p.max_rtf(), 10.0);
}

TEST(PaceRegulator, NegativeRateMeansUnlimited) {
  PaceRegulator p(-1.0);
  EXPECT_TRUE(p.unlimited());
}

TEST(RtfMeter, MeasuresSimOverUnpausedWallTime) {
  RtfMeter m;
  m.start(SimTime::zero(), kWall0);
  EXPECT_EQ(m.rtf(SimTime::zero(), kWall0), 0.0);
  m.pause(kWall0 + seconds(1));
  m.resume(kWall0 + seconds(5));
  EXPECT_DOUBLE_EQ(m.rtf(SimTime::zero() + seconds(4), kWall0 + seconds(7)), 4.0 / 3.0);
  m.pause(kWall0 + seconds(7));
  EXPECT_DOUBLE_EQ(m.rtf(SimTime::zero() + seconds(4), kWall0 + seconds(70)), 4.0 / 3.0);
}

}  // namespace
}  // namespace fieldproof::lockstep
