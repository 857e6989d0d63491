// The clock monitor on hand-made clocks: windows, violations, drift with paused time left out,
// the record's fields per mode.
#include "fieldproof/engine/clock_monitor.hpp"

#include <gtest/gtest.h>

namespace fieldproof::engine {
namespace {

SimTime at_ms(int64_t ms) { return SimTime::zero() + milliseconds(ms); }

ClockMonitorOptions options(scenario::TimeMode mode) {
  ClockMonitorOptions o;
  o.time.mode = mode;
  o.time.tolerance = 0.1;
  o.target_rtf = 1.0;
  o.pace = 1.0;
  return o;
}

TEST(ClockMonitor, AWindowClosesEverySimulatedSecondWithItsRealTimeFactor) {
  ClockMonitor cm(options(scenario::TimeMode::kSim));
  cm.start(at_ms(0), at_ms(0));
  EXPECT_FALSE(cm.observe(at_ms(900), at_ms(900), false));
  const auto w = cm.observe(at_ms(1000), at_ms(2000), false);
  ASSERT_TRUE(w);
  EXPECT_DOUBLE_EQ(w->rtf, 0.5);
  EXPECT_TRUE(w->violation);  // 0.5 is outside 1.0 +/- 0.1
  EXPECT_EQ(cm.violations(), 1u);
  EXPECT_EQ(cm.windows(), 1u);
}

TEST(ClockMonitor, AHeldWorldStillGetsAWindowEveryWallSecondReadingAboutZero) {
  ClockMonitor cm(options(scenario::TimeMode::kSim));
  cm.start(at_ms(0), at_ms(0));
  EXPECT_FALSE(cm.observe(at_ms(500), at_ms(500), true));
  const auto w = cm.observe(at_ms(500), at_ms(1600), true);
  ASSERT_TRUE(w);
  EXPECT_TRUE(w->held);
  EXPECT_LT(w->rtf, 0.5);
  // A held window is neither a violation nor part of the rtf statistics.
  EXPECT_FALSE(w->violation);
  EXPECT_EQ(cm.windows(), 0u);
}

TEST(ClockMonitor, TheDriftLeavesPausedWallTimeOut) {
  ClockMonitor cm(options(scenario::TimeMode::kRealtime));
  cm.start(at_ms(0), at_ms(0));
  (void)cm.observe(at_ms(1000), at_ms(1000), false);
  cm.set_paused_wall(milliseconds(3000));  // paused 3 s of wall, then 1 s more of both
  cm.finish(at_ms(2000), at_ms(5000), Duration::zero());
  EXPECT_NEAR(cm.drift_s(), 0.0, 1e-9);
  EXPECT_TRUE(cm.locked());
  const auto r = cm.record({});
  EXPECT_EQ(r["paused_s"], 3.0);
  EXPECT_EQ(r["verdict"], "locked");
  EXPECT_EQ(r["on_drift"], "fail");
}

TEST(ClockMonitor, ARealtimeDriftPastTheBudgetIsDrifted) {
  ClockMonitor cm(options(scenario::TimeMode::kRealtime));
  cm.start(at_ms(0), at_ms(0));
  cm.finish(at_ms(3000), at_ms(1000), Duration::zero());  // 2 s ahead, budget 1 s
  EXPECT_FALSE(cm.locked());
  EXPECT_EQ(cm.record({})["verdict"], "drifted");
  EXPECT_EQ(cm.record({})["max_abs_drift_s"], 2.0);
}

TEST(ClockMonitor, LockstepWindowsAreNeverViolationsAndTheRecordHasTheStepping) {
  ClockMonitor cm(options(scenario::TimeMode::kLockstep));
  cm.start(at_ms(0), at_ms(0));
  const auto w = cm.observe(at_ms(1000), at_ms(5000), false);
  ASSERT_TRUE(w);
  EXPECT_FALSE(w->violation);
  LockstepStats ls;
  ls.vehicles = {"ugv1"};
  ls.steps = 10;
  ls.holds = 2;
  ls.max_wait = milliseconds(40);
  cm.finish(at_ms(1000), at_ms(5000), Duration::zero());
  const auto r = cm.record(ls);
  EXPECT_EQ(r["verdict"], nullptr);
  EXPECT_EQ(r["max_drift_s"], nullptr);
  EXPECT_EQ(r["lockstep"]["steps"], 10);
  EXPECT_EQ(r["lockstep"]["holds"], 2);
  EXPECT_EQ(r["lockstep"]["max_wait_s"], 0.04);
  EXPECT_EQ(r["lockstep"]["timeout"], nullptr);
  EXPECT_EQ(r["lockstep"]["vehicles"], nlohmann::json::array({"ugv1"}));
}

TEST(ClockMonitor, UnpacedRunsCountNoViolations) {
  ClockMonitorOptions o = options(scenario::TimeMode::kSim);
  o.pace = 0.0;
  ClockMonitor cm(o);
  cm.start(at_ms(0), at_ms(0));
  const auto w = cm.observe(at_ms(1000), at_ms(10), false);
  ASSERT_TRUE(w);
  EXPECT_FALSE(w->violation);
  EXPECT_EQ(cm.violations(), 0u);
}

}  // namespace
}  // namespace fieldproof::engine
