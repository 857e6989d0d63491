// The timeline on a hand-made plan: triggers, the world's hold, sim.step targets, cancel. The
// engine's side (publish, events) is recorded by the hooks; time is advanced by hand.
#include "fieldproof/engine/timeline.hpp"

#include <gtest/gtest.h>

namespace fieldproof::engine {
namespace {

using assertions::Sample;

SimTime at_ms(int64_t ms) { return SimTime::zero() + milliseconds(ms); }

scenario::ParamValue map_of(std::vector<std::pair<std::string, scenario::ParamValue>> kv) {
  scenario::ParamValue m;
  m.kind = scenario::ParamValue::Kind::kMap;
  for (auto& [k, v] : kv) {
    m.keys.push_back(k);
    m.items.push_back(v);
  }
  return m;
}

scenario::ParamValue duration(Duration d) {
  scenario::ParamValue v;
  v.kind = scenario::ParamValue::Kind::kDuration;
  v.duration = d;
  return v;
}

scenario::ParamValue boolean(bool b) {
  scenario::ParamValue v;
  v.kind = scenario::ParamValue::Kind::kBool;
  v.boolean = b;
  return v;
}

struct Fixture {
  RunPlan plan;
  std::vector<std::string> published;  // topics
  std::vector<std::string> faults;     // "<label> start|end" per fault hook call
  std::string fault_error;             // what the fault hook answers on an end
  std::vector<bool> held_calls;
  std::unique_ptr<Timeline> tl;

  scenario::TimelineEntry& add(const std::string& action, const std::string& name) {
    scenario::TimelineEntry e;
    e.action = action;
    e.name = name;
    e.label = name;
    e.vehicle = action == "cmd_vel" ? "ugv1" : "";
    e.params = map_of({});
    plan.scenario.timeline.push_back(e);
    return plan.scenario.timeline.back();
  }
  void start() {
    plan.physics_step = milliseconds(1);
    plan.world_name = "depot";
    plan.timeline.clear();
    for (auto& e : plan.scenario.timeline) {
      PlannedEntry pe;
      pe.entry = &e;
      if (e.action == "sim.step") pe.step = e.params.get("duration_s")->duration;
      if (e.action == "navigate_to_pose") pe.goal = world::Pose2D{1, 2, 0};
      plan.timeline.push_back(pe);
    }
    TimelineHooks h;
    h.publish = [this](const std::string& topic, std::string, const std::string&) {
      published.push_back(topic);
    };
    h.world_held = [this](bool held) { held_calls.push_back(held); };
    h.fault = [this](const scenario::TimelineEntry& e, bool start) {
      faults.push_back(e.label + (start ? " start" : " end"));
      FaultOutcome out;
      if (!start) out.error = fault_error;
      out.detail = start ? "killed" : "back";
      return out;
    };
    tl = std::make_unique<Timeline>(plan, std::move(h));
  }
  const nlohmann::json entry(const std::string& label) const {
    for (const auto& e : tl->to_json()) {
      if (e["label"] == label) return e;
    }
    return nullptr;
  }
};

TEST(Timeline, EveryActsOncePerPeriodBeforeUntil) {
  Fixture f;
  auto& e = f.add("cmd_vel", "nudge");
  e.at = milliseconds(500);
  e.every = milliseconds(500);
  e.until = seconds(2);
  f.start();
  for (int ms = 0; ms <= 2500; ms += 100) f.tl->advance(at_ms(ms), at_ms(ms));
  EXPECT_EQ(f.published.size(), 3u);  // 0.5, 1.0, 1.5 s
  EXPECT_EQ(f.entry("nudge")["occurrences"], 3);
  EXPECT_EQ(f.entry("nudge")["status"], "ok");
  EXPECT_TRUE(f.tl->complete());
}

TEST(Timeline, NextDueIsTheNextOccurrence) {
  Fixture f;
  auto& e = f.add("cmd_vel", "nudge");
  e.at = milliseconds(500);
  e.every = milliseconds(300);
  e.until = seconds(2);
  f.start();
  f.tl->advance(at_ms(0), at_ms(0));
  EXPECT_EQ(f.tl->next_due(at_ms(0)), at_ms(500));
  f.tl->advance(at_ms(500), at_ms(500));
  EXPECT_EQ(f.tl->next_due(at_ms(500)), at_ms(800));
}

TEST(Timeline, APauseHoldsTheWorldUntilAWhenOnTheRtfResumesIt) {
  Fixture f;
  auto& p = f.add("sim.pause", "pause");
  p.at = seconds(1);
  p.at_given = true;
  auto& r = f.add("sim.resume", "resume");
  r.when = scenario::WhenTrigger{};
  r.when->signal.metric = "rtf";
  r.when->condition = "value < 0.05";
  r.until = seconds(30);
  f.start();
  f.tl->advance(at_ms(1000), at_ms(1000));
  EXPECT_TRUE(f.tl->held());
  Sample s;
  s.kind = Sample::Kind::kClock;
  s.rtf = 0.6;
  f.tl->on_sample(s, at_ms(1000), /*from_delivery=*/false);
  EXPECT_TRUE(f.tl->held());
  s.rtf = 0.0;
  f.tl->on_sample(s, at_ms(1000), /*from_delivery=*/false);
  EXPECT_FALSE(f.tl->held());
  EXPECT_EQ(f.held_calls, (std::vector<bool>{true, false}));
  EXPECT_EQ(f.entry("resume")["started_s"], 1.0);
  EXPECT_TRUE(f.tl->complete());
}

TEST(Timeline, ASimStepAdvancesExactlyItsDurationAndStaysHeld) {
  Fixture f;
  auto& p = f.add("sim.pause", "pause");
  p.at = seconds(5);
  p.at_given = true;
  auto& st = f.add("sim.step", "step");
  st.after = "pause";
  st.params = map_of({{"duration_s", duration(milliseconds(100))}});
  f.start();
  f.tl->advance(at_ms(5000), at_ms(0));
  ASSERT_TRUE(f.tl->step_target());
  EXPECT_EQ(*f.tl->step_target(), at_ms(5100));
  f.tl->advance(at_ms(5100), at_ms(10));
  EXPECT_FALSE(f.tl->step_target());
  EXPECT_TRUE(f.tl->held());
  EXPECT_EQ(f.entry("step")["ended_s"], 5.1);
  EXPECT_EQ(f.entry("step")["status"], "ok");
}

TEST(Timeline, AClockActionTriggeredInADeliveryStartsAtTheNextWake) {
  Fixture f;
  auto& p = f.add("sim.pause", "pause");
  p.when = scenario::WhenTrigger{};
  p.when->signal.metric = "sim_time";
  p.when->condition = "value >= 0.25";
  p.until = seconds(10);
  f.start();
  Sample s;
  s.kind = Sample::Kind::kPose;
  f.tl->on_sample(s, at_ms(250), /*from_delivery=*/true);
  EXPECT_FALSE(f.tl->held());  // the engine is mid-sleep: it cannot hold the world at 0.25 s
  f.tl->advance(at_ms(300), at_ms(300));
  EXPECT_TRUE(f.tl->held());
  EXPECT_EQ(f.entry("pause")["started_s"], 0.3);
}

TEST(Timeline, AWhenStillWaitingAtUntilIsSkipped) {
  Fixture f;
  auto& e = f.add("cmd_vel", "never");
  e.when = scenario::WhenTrigger{};
  e.when->signal.metric = "sim_time";
  e.when->condition = "value > 100";
  e.until = seconds(3);
  f.start();
  for (int ms = 0; ms <= 3000; ms += 100) f.tl->advance(at_ms(ms), at_ms(ms));
  EXPECT_EQ(f.entry("never")["status"], "skipped");
  EXPECT_TRUE(f.published.empty());
}

TEST(Timeline, CancelEndsRunningEntriesAndSkipsPendingOnes) {
  Fixture f;
  auto& d = f.add("cmd_vel", "drive");
  d.at = seconds(1);
  d.at_given = true;
  d.params = map_of({{"duration_s", duration(seconds(10))}});
  auto& l = f.add("cmd_vel", "later");
  l.at = seconds(8);
  l.at_given = true;
  f.start();
  f.tl->advance(at_ms(1000), at_ms(1000));
  f.tl->cancel("assertion safe failed", at_ms(2000));
  EXPECT_TRUE(f.tl->cancelled());
  EXPECT_EQ(f.entry("drive")["status"], "cancelled");
  EXPECT_EQ(f.entry("later")["status"], "skipped");
  EXPECT_EQ(f.published.size(), 2u);  // the drive and its zero command
  f.tl->advance(at_ms(8000), at_ms(8000));
  EXPECT_EQ(f.published.size(), 2u);
}

TEST(Timeline, ATopicFaultStartsAndEndsThroughItsHookAfterItsDuration) {
  Fixture f;
  auto& d = f.add("fault.drop_topic", "drops");
  d.vehicle = "ugv1";
  d.at = seconds(1);
  d.at_given = true;
  d.params = map_of({{"duration_s", duration(seconds(2))}});
  f.start();
  f.tl->advance(at_ms(1000), at_ms(0));
  EXPECT_EQ(f.faults, std::vector<std::string>{"drops start"});
  EXPECT_EQ(f.tl->next_due(at_ms(1000)), at_ms(3000));
  f.tl->advance(at_ms(3000), at_ms(0));
  EXPECT_EQ(f.faults, (std::vector<std::string>{"drops start", "drops end"}));
  const auto e = f.entry("drops");
  EXPECT_EQ(e["status"], "ok");
  EXPECT_DOUBLE_EQ(e["started_s"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(e["ended_s"].get<double>(), 3.0);
  EXPECT_EQ(e["detail"], "back");
  EXPECT_TRUE(f.tl->failure().empty());
}

TEST(Timeline, AKilledStackThatIsRestartedGetsItsOpenGoalAgain) {
  Fixture f;
  auto& g = f.add("navigate_to_pose", "drive");
  g.vehicle = "ugv1";
  auto& k = f.add("fault.kill_stack", "kill");
  k.vehicle = "ugv1";
  k.at = seconds(5);
  k.at_given = true;
  k.params = map_of({{"restart", boolean(true)},
                     {"restart_after_s", duration(seconds(2))},
                     {"resend_goals", boolean(true)}});
  f.start();
  f.tl->advance(at_ms(0), at_ms(0));
  ASSERT_EQ(f.published.size(), 1u);  // the goal
  f.tl->advance(at_ms(5000), at_ms(0));
  EXPECT_EQ(f.entry("drive")["status"], "running");
  EXPECT_EQ(f.entry("kill")["status"], "running");
  f.tl->advance(at_ms(7000), at_ms(0));
  EXPECT_EQ(f.faults, (std::vector<std::string>{"kill start", "kill end"}));
  EXPECT_EQ(f.entry("kill")["status"], "ok");
  ASSERT_EQ(f.published.size(), 2u);  // the same goal, to the new stack
  EXPECT_EQ(f.published[1], "/model/ugv1/navigate_to_pose/goal");
  EXPECT_TRUE(f.tl->take_hold_request());
  f.tl->on_nav_status("drive", "succeeded", true, "", at_ms(20000));
  EXPECT_EQ(f.entry("drive")["status"], "succeeded");
  EXPECT_TRUE(f.tl->failure().empty());
}

TEST(Timeline, AKilledStackNotRestartedEndsItsOpenGoalAborted) {
  Fixture f;
  auto& g = f.add("navigate_to_pose", "drive");
  g.vehicle = "ugv1";
  auto& k = f.add("fault.kill_stack", "kill");
  k.vehicle = "ugv1";
  k.at = seconds(5);
  k.at_given = true;
  k.params = map_of({{"restart", boolean(false)}});
  f.start();
  f.tl->advance(at_ms(0), at_ms(0));
  f.tl->advance(at_ms(5000), at_ms(0));
  EXPECT_EQ(f.faults, std::vector<std::string>{"kill start"});
  EXPECT_EQ(f.entry("kill")["status"], "ok");
  EXPECT_EQ(f.entry("kill")["detail"], "killed");
  EXPECT_EQ(f.entry("drive")["status"], "aborted");
  EXPECT_EQ(f.tl->failure(),
            "timeline entry drive (navigate_to_pose) ended aborted: the stack of ugv1 was killed "
            "by kill and not restarted");
}

TEST(Timeline, ARestartThatFailsEndsTheKillFailed) {
  Fixture f;
  auto& k = f.add("fault.kill_stack", "kill");
  k.vehicle = "ugv1";
  k.params = map_of({{"restart", boolean(true)}, {"restart_after_s", duration(seconds(1))}});
  f.fault_error = "it did not register";
  f.start();
  f.tl->advance(at_ms(0), at_ms(0));
  f.tl->advance(at_ms(1000), at_ms(0));
  EXPECT_EQ(f.entry("kill")["status"], "failed");
  EXPECT_EQ(f.tl->failure(),
            "timeline entry kill (fault.kill_stack) ended failed: it did not register");
}

}  // namespace
}  // namespace fieldproof::engine
