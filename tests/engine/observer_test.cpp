// The observer fed by hand: poses at 10 Hz, contacts, values, rates over sliding windows,
// latencies from header stamps, lifecycle states, resources from a fake /proc, the lines of
// samples.jsonl, and nothing when nothing is watched.
#include "fieldproof/engine/observer.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "engine/resources.hpp"
#include "fieldproof/msgs/ign.hpp"
#include "fieldproof/msgs/lifecycle.pb.h"

namespace fieldproof::engine {
namespace {

using assertions::Sample;
using nlohmann::json;
namespace fs = std::filesystem;

SimTime at_ms(int64_t ms) { return SimTime::from_ns(ms * 1'000'000); }

lockstep::Publish publish(const std::string& topic, SimTime stamp, std::string_view type,
                          std::string payload) {
  lockstep::Publish p;
  p.participant = "test";
  p.topic = topic;
  p.stamp = stamp;
  p.type = std::string(type);
  p.payload = std::move(payload);
  return p;
}

lockstep::Publish odometry(SimTime received, SimTime stamped) {
  ignition::msgs::Odometry o;
  msgs::set_stamp(o.mutable_header(), stamped);
  o.mutable_twist()->mutable_linear()->set_x(0.4);
  return publish("/model/ugv1/odometry", received, msgs::kOdometry, msgs::serialize(o));
}

lockstep::Publish twist(SimTime t, double x) {
  ignition::msgs::Twist m;
  m.mutable_linear()->set_x(x);
  return publish("/model/ugv1/cmd_vel", t, msgs::kTwist, msgs::serialize(m));
}

struct Harness {
  std::vector<Sample> samples;
  std::vector<json> lines;
  std::vector<json> resources;
  SimTime wall = SimTime::zero();
  std::unique_ptr<Observer> obs;

  explicit Harness(assertions::Watch w, std::function<void(ObserverOptions&)> more = {}) {
    ObserverOptions o;
    o.watch = std::move(w);
    o.pose_topic = "/world/depot/pose/info";
    o.wall_now = [this] { return wall; };
    o.on_sample = [this](const Sample& s) { samples.push_back(s); };
    o.write_line = [this](const json& j) { lines.push_back(j); };
    o.on_resources = [this](const json& j) { resources.push_back(j); };
    if (more) more(o);
    obs = std::make_unique<Observer>(std::move(o));
    obs->start(SimTime::zero());
  }
  std::vector<Sample> of(Sample::Kind k) const {
    std::vector<Sample> out;
    for (const auto& s : samples) {
      if (s.kind == k) out.push_back(s);
    }
    return out;
  }
};

TEST(Observer, NothingWatchedSubscribesToNothingAndEmitsNothing) {
  Harness h(assertions::Watch{});
  EXPECT_TRUE(h.obs->topics().empty());
  EXPECT_FALSE(h.obs->watching());
  h.obs->on_message(twist(at_ms(100), 1.0));
  h.obs->on_tick(at_ms(5000));
  EXPECT_TRUE(h.samples.empty());
}

TEST(Observer, TopicsAreTheUnionOfTheWatch) {
  assertions::Watch w;
  w.poses = {"ugv1"};
  w.contacts = {"ugv1"};
  w.values = {"/model/ugv1/cmd_vel"};
  w.rates = {{"/model/ugv1/scan", seconds(5)}};
  w.latencies = {{"/model/ugv1/odometry", seconds(2)}, {"/model/ugv1/scan", seconds(2)}};
  w.lifecycle = {"ugv1"};
  Harness h(w);
  EXPECT_EQ(h.obs->topics(),
            (std::vector<std::string>{"/model/ugv1/cmd_vel", "/model/ugv1/contacts",
                                      "/model/ugv1/lifecycle", "/model/ugv1/odometry",
                                      "/model/ugv1/scan", "/world/depot/pose/info"}));
}

TEST(Observer, PosesAreSampledAtTenHertzPerWatchedModel) {
  assertions::Watch w;
  w.poses = {"ugv1", "crate"};
  Harness h(w);
  for (int ms = 0; ms < 1000; ms += 10) {  // the world at 100 Hz
    ignition::msgs::Pose_V v;
    for (const char* name : {"ugv1", "crate", "ugv2"}) {
      auto* p = v.add_pose();
      p->set_name(name);
      msgs::set_planar_pose(p, ms / 1000.0, 1.0, 0.5);
    }
    h.obs->on_message(
        publish("/world/depot/pose/info", at_ms(ms), msgs::kPoseV, msgs::serialize(v)));
  }
  const auto poses = h.of(Sample::Kind::kPose);
  ASSERT_EQ(poses.size(), 20u);  // 10 per model, ugv2 not watched
  int ugv1 = 0;
  for (const auto& s : poses) ugv1 += s.vehicle == "ugv1";
  EXPECT_EQ(ugv1, 10);
  EXPECT_EQ(poses[2].sim, at_ms(100));
  EXPECT_NEAR(poses[2].pose.x, 0.1, 1e-9);
  EXPECT_NEAR(poses[2].pose.yaw, 0.5, 1e-9);
}

TEST(Observer, ContactMessagesBecomeContactSamples) {
  assertions::Watch w;
  w.contacts = {"ugv1"};
  Harness h(w);
  ignition::msgs::Contacts c;
  c.add_contact()->mutable_collision2()->set_name("crate::link::collision");
  h.obs->on_message(
      publish("/model/ugv1/contacts", at_ms(2500), msgs::kContacts, msgs::serialize(c)));
  const auto s = h.of(Sample::Kind::kContact);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].vehicle, "ugv1");
  EXPECT_EQ(s[0].contacts, std::vector<std::string>{"crate::link::collision"});
}

TEST(Observer, EveryMessageOfAWatchedTopicIsAValueSample) {
  assertions::Watch w;
  w.values = {"/model/ugv1/cmd_vel"};
  Harness h(w);
  h.obs->on_message(twist(at_ms(100), 0.3));
  h.obs->on_message(twist(at_ms(200), 0.6));
  const auto v = h.of(Sample::Kind::kValue);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[1].topic, "/model/ugv1/cmd_vel");
  EXPECT_EQ(v[1].vehicle, "ugv1");
  EXPECT_EQ(v[1].messages, 2u);
  const Result<const json*> x = assertions::find_field(v[1].message, "linear.x");
  ASSERT_TRUE(x.ok()) << x.status().to_string();
  EXPECT_DOUBLE_EQ((*x)->get<double>(), 0.6);
}

TEST(Observer, RateIsEmittedOnlyOnceAFullWindowHasPassed) {
  assertions::Watch w;
  w.rates = {{"/model/ugv1/cmd_vel", seconds(2)}};
  Harness h(w);
  for (int ms = 100; ms <= 3000; ms += 100) {  // 10 Hz
    h.obs->on_message(twist(at_ms(ms), 0.1));
    h.obs->on_tick(at_ms(ms));
  }
  const auto r = h.of(Sample::Kind::kRate);
  ASSERT_EQ(r.size(), 2u);  // at 2 s and 3 s; none at 1 s (half a window)
  EXPECT_EQ(r[0].sim, at_ms(2000));
  EXPECT_EQ(r[0].messages, 20u);
  EXPECT_DOUBLE_EQ(r[0].hz, 10.0);
  EXPECT_EQ(r[0].window, seconds(2));
  EXPECT_EQ(r[1].sim, at_ms(3000));
  EXPECT_DOUBLE_EQ(r[1].hz, 10.0);
}

TEST(Observer, RateWindowSlidesWhenMessagesStop) {
  assertions::Watch w;
  w.rates = {{"/model/ugv1/cmd_vel", seconds(2)}};
  Harness h(w);
  for (int ms = 100; ms <= 2000; ms += 100) h.obs->on_message(twist(at_ms(ms), 0.1));
  h.obs->on_tick(at_ms(4000));  // silent from 2 s on
  const auto r = h.of(Sample::Kind::kRate);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_DOUBLE_EQ(r[0].hz, 10.0);  // (0, 2]
  EXPECT_DOUBLE_EQ(r[1].hz, 5.0);   // (1, 3]
  EXPECT_DOUBLE_EQ(r[2].hz, 0.0);   // (2, 4]
  EXPECT_EQ(r[2].messages, 0u);
}

TEST(Observer, LatencyIsTheHeaderStampAgainstTheClockAtReceipt) {
  assertions::Watch w;
  w.latencies = {{"/model/ugv1/odometry", seconds(2)}};
  Harness h(w);
  // Ages 10, 20, ..., 200 ms over the first second.
  for (int i = 1; i <= 20; ++i) {
    const SimTime received = at_ms(i * 50);
    h.obs->on_message(odometry(received, received - milliseconds(i * 10)));
  }
  h.obs->on_tick(at_ms(1000));
  const auto l = h.of(Sample::Kind::kLatency);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0].sim, at_ms(1000));
  EXPECT_EQ(l[0].latency.count, 20u);
  EXPECT_NEAR(l[0].latency.mean_ms, 105.0, 1e-9);
  EXPECT_NEAR(l[0].latency.min_ms, 10.0, 1e-9);
  EXPECT_NEAR(l[0].latency.max_ms, 200.0, 1e-9);
  EXPECT_NEAR(l[0].latency.p95_ms, 190.0, 1e-9);  // nearest rank: the 19th of 20
  EXPECT_EQ(l[0].window, seconds(2));
}

TEST(Observer, LatencyWindowForgetsOldMessages) {
  assertions::Watch w;
  w.latencies = {{"/model/ugv1/odometry", seconds(1)}};
  Harness h(w);
  h.obs->on_message(odometry(at_ms(500), at_ms(200)));    // 300 ms old
  h.obs->on_message(odometry(at_ms(1500), at_ms(1490)));  // 10 ms old
  h.obs->on_tick(at_ms(3000));
  const auto l = h.of(Sample::Kind::kLatency);
  ASSERT_EQ(l.size(), 2u);  // 1 s and 2 s; the window (2, 3] is empty
  EXPECT_NEAR(l[0].latency.max_ms, 300.0, 1e-9);
  EXPECT_EQ(l[1].latency.count, 1u);
  EXPECT_NEAR(l[1].latency.max_ms, 10.0, 1e-9);
}

TEST(Observer, LatencyCanBeNegativeWhenTheStampIsAhead) {
  assertions::Watch w;
  w.latencies = {{"/model/ugv1/odometry", seconds(1)}};
  Harness h(w);
  h.obs->on_message(odometry(at_ms(500), at_ms(505)));
  h.obs->on_tick(at_ms(1000));
  const auto l = h.of(Sample::Kind::kLatency);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_NEAR(l[0].latency.min_ms, -5.0, 1e-9);
}

TEST(Observer, LatencyWindowOfUnstampedMessagesSaysSo) {
  assertions::Watch w;
  w.latencies = {{"/model/ugv1/cmd_vel", seconds(1)}};
  Harness h(w);
  h.obs->on_message(twist(at_ms(300), 0.1));  // a Twist without a header
  h.obs->on_message(twist(at_ms(600), 0.1));
  h.obs->on_tick(at_ms(3000));
  const auto l = h.of(Sample::Kind::kLatency);
  ASSERT_EQ(l.size(), 1u);  // the windows (1, 2] and (2, 3] are empty
  EXPECT_EQ(l[0].latency.count, 0u);
  EXPECT_EQ(l[0].latency.unstamped, 2u);
}

TEST(Observer, LatencyCountsUnstampedBesideStampedMessages) {
  assertions::Watch w;
  w.latencies = {{"/model/ugv1/odometry", seconds(1)}};
  Harness h(w);
  h.obs->on_message(odometry(at_ms(200), at_ms(190)));
  h.obs->on_message(publish("/model/ugv1/odometry", at_ms(400), msgs::kOdometry,
                            msgs::serialize(ignition::msgs::Odometry())));
  h.obs->on_tick(at_ms(1000));
  const auto l = h.of(Sample::Kind::kLatency);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0].latency.count, 1u);
  EXPECT_EQ(l[0].latency.unstamped, 1u);
}

TEST(Observer, UndecodablePayloadIsReportedOnceAsAnErrorLine) {
  assertions::Watch w;
  w.values = {"/model/ugv1/cmd_vel"};
  Harness h(w);
  for (int i = 1; i <= 3; ++i) {
    h.obs->on_message(publish("/model/ugv1/cmd_vel", at_ms(i * 100), "no.such.Type", "x"));
  }
  EXPECT_TRUE(h.of(Sample::Kind::kValue).empty());
  int errors = 0;
  for (const auto& j : h.lines) errors += j["kind"] == "error";
  EXPECT_EQ(errors, 1);
}

lockstep::Publish lifecycle(SimTime t, const std::string& node,
                            fieldproof::msgs::LifecycleState::State state) {
  fieldproof::msgs::LifecycleState l;
  l.set_node(node);
  l.set_state(state);
  return publish("/model/ugv1/lifecycle", t, msgs::kLifecycleState, l.SerializeAsString());
}

TEST(Observer, LifecycleTransitionIsEmittedAsItHappens) {
  assertions::Watch w;
  w.lifecycle = {"ugv1"};
  Harness h(w);
  h.obs->on_message(
      lifecycle(at_ms(300), "bt_navigator", fieldproof::msgs::LifecycleState::ACTIVE));
  const auto l = h.of(Sample::Kind::kLifecycle);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0].sim, at_ms(300));
  EXPECT_EQ(l[0].node, "bt_navigator");
  EXPECT_EQ(l[0].state, "active");
  EXPECT_EQ(l[0].vehicle, "ugv1");
}

TEST(Observer, LifecycleIsPolledOnceASecond) {
  assertions::Watch w;
  w.lifecycle = {"ugv1"};
  Harness h(w);
  h.obs->on_tick(at_ms(1000));  // nothing reported yet
  h.obs->on_message(
      lifecycle(at_ms(1200), "bt_navigator", fieldproof::msgs::LifecycleState::INACTIVE));
  h.obs->on_tick(at_ms(3000));
  const auto l = h.of(Sample::Kind::kLifecycle);
  ASSERT_EQ(l.size(), 4u);
  EXPECT_EQ(l[0].state, "unavailable");
  EXPECT_EQ(l[1].state, "inactive");  // the transition
  EXPECT_EQ(l[2].sim, at_ms(2000));
  EXPECT_EQ(l[2].state, "inactive");
  EXPECT_EQ(l[3].sim, at_ms(3000));
}

TEST(Observer, MetricsCarryTheLastRatePoseAndLifecycleState) {
  assertions::Watch w;
  w.poses = {"ugv1"};
  w.rates = {{"/model/ugv1/cmd_vel", seconds(1)}};
  w.lifecycle = {"ugv1"};
  Harness h(w);
  ignition::msgs::Pose_V v;
  auto* p = v.add_pose();
  p->set_name("ugv1");
  msgs::set_planar_pose(p, 1.5, -2.0, 0.25);
  h.obs->on_message(
      publish("/world/depot/pose/info", at_ms(100), msgs::kPoseV, msgs::serialize(v)));
  for (int ms = 100; ms <= 1000; ms += 100) h.obs->on_message(twist(at_ms(ms), 0.1));
  h.obs->on_message(
      lifecycle(at_ms(200), "bt_navigator", fieldproof::msgs::LifecycleState::ACTIVE));
  h.obs->on_tick(at_ms(1000));
  const json m = h.obs->metrics();
  EXPECT_DOUBLE_EQ(m["rates_hz"]["/model/ugv1/cmd_vel"].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(m["poses"]["ugv1"]["x"].get<double>(), 1.5);
  EXPECT_EQ(m["lifecycle"]["ugv1/bt_navigator"], "active");
}

// A fake /proc/<pid> with utime + stime ticks and a resident set.
void fake_proc(const fs::path& root, int pid, uint64_t utime, uint64_t stime, int rss_kb) {
  fs::create_directories(root / std::to_string(pid));
  std::ofstream(root / std::to_string(pid) / "stat")
      << pid << " (ugv nav) S 1 1 1 0 -1 0 0 0 0 0 " << utime << " " << stime
      << " 0 0 20 0 3 0 100 0 0\n";
  std::ofstream(root / std::to_string(pid) / "status")
      << "Name:\tugv_nav\nVmRSS:\t" << rss_kb << " kB\nThreads:\t3\n";
}

TEST(ResourceReader, CpuIsPercentOfOneCoreOverTheWallInterval) {
  const fs::path root = fs::path(testing::TempDir()) / "fake_proc_cpu";
  fs::remove_all(root);
  SimTime wall = SimTime::zero();
  ResourceReader r([&] { return wall; }, root.string(), 100);
  fake_proc(root, 42, 100, 50, 2048);
  const ProcessUsage first = r.sample(42);
  ASSERT_TRUE(first.ok) << first.error;
  EXPECT_TRUE(first.baseline);
  EXPECT_DOUBLE_EQ(first.memory_mb, 2.0);
  fake_proc(root, 42, 130, 60, 4096);  // 40 ticks = 0.4 s of CPU
  wall = wall + seconds(2);
  const ProcessUsage second = r.sample(42);
  ASSERT_TRUE(second.ok);
  EXPECT_FALSE(second.baseline);
  EXPECT_NEAR(second.cpu_pct, 20.0, 1e-9);
  EXPECT_DOUBLE_EQ(second.memory_mb, 4.0);
}

TEST(ResourceReader, GoneProcessIsAnError) {
  ResourceReader r([] { return SimTime::zero(); }, "/nonexistent-proc", 100);
  const ProcessUsage u = r.sample(7);
  EXPECT_FALSE(u.ok);
  EXPECT_NE(u.error.find("/nonexistent-proc/7/stat"), std::string::npos);
}

TEST(ResourceReader, ReadsTheRealProcOfThisProcess) {
  ResourceReader r([] { return SimTime::zero(); });
  const ProcessUsage u = r.sample(static_cast<int>(getpid()));
  ASSERT_TRUE(u.ok) << u.error;
  EXPECT_GT(u.memory_mb, 0.0);
}

TEST(Observer, ResourcesOfAProcessStackOnceASecond) {
  const fs::path root = fs::path(testing::TempDir()) / "fake_proc_obs";
  fs::remove_all(root);
  fake_proc(root, 4242, 0, 0, 10240);
  assertions::Watch w;
  w.resources = {"ugv1"};
  Harness* hp = nullptr;
  Harness h(w, [&](ObserverOptions& o) {
    o.proc_root = root.string();
    o.stack_pid = [](const std::string& v) { return v == "ugv1" ? 4242 : 0; };
  });
  hp = &h;
  fake_proc(root, 4242, 50, 0, 20480);  // 0.5 s of CPU (100 ticks/s on Linux)
  hp->wall = hp->wall + seconds(1);
  h.obs->on_tick(at_ms(1000));
  const auto r = h.of(Sample::Kind::kResources);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].process, "ugv1_nav");
  EXPECT_EQ(r[0].vehicle, "ugv1");
  EXPECT_NEAR(r[0].cpu_pct, 50.0 * 100.0 / static_cast<double>(sysconf(_SC_CLK_TCK)), 1e-6);
  EXPECT_DOUBLE_EQ(r[0].memory_mb, 20.0);
  ASSERT_EQ(h.resources.size(), 1u);
  EXPECT_EQ(h.resources[0]["pid"], 4242);
  EXPECT_EQ(h.resources[0]["process"], "ugv1_nav");
}

TEST(Observer, InProcessStackIsMeasuredAsTheEngine) {
  assertions::Watch w;
  w.resources = {"ugv1"};
  Harness h(w);
  h.wall = h.wall + seconds(1);
  h.obs->on_tick(at_ms(1000));
  const auto r = h.of(Sample::Kind::kResources);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].process, "engine");
  EXPECT_GT(r[0].memory_mb, 0.0);
}

TEST(Observer, LinesCarryKindAndSimButNoWallTime) {
  assertions::Watch w;
  w.values = {"/model/ugv1/cmd_vel"};
  Harness h(w);
  h.wall = SimTime::zero() + milliseconds(1500);
  h.obs->on_message(twist(at_ms(700), 0.2));
  ASSERT_GE(h.lines.size(), 2u);
  EXPECT_EQ(h.lines[0]["kind"], "subscribed");
  const json& v = h.lines.back();
  EXPECT_EQ(v["kind"], "value");
  EXPECT_DOUBLE_EQ(v["sim"].get<double>(), 0.7);
  EXPECT_FALSE(v.contains("wall"));  // the same seed gives the same lines
  EXPECT_EQ(v["vehicle"], "ugv1");
}

TEST(Observer, EmittedClockSampleIsWrittenAndPassedOn) {
  Harness h(assertions::Watch{});
  Sample s;
  s.kind = Sample::Kind::kClock;
  s.sim = at_ms(1000);
  s.rtf = 2.0;
  s.wall_s = 0.5;
  h.obs->emit(s);
  ASSERT_EQ(h.samples.size(), 1u);
  EXPECT_EQ(h.lines.back()["kind"], "clock");
  EXPECT_EQ(h.obs->sample_count(), 1u);
}

}  // namespace
}  // namespace fieldproof::engine
