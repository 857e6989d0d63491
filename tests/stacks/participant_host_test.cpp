// The process host's loop (UgvNavParticipantHost) as a regulating lock-step participant over the
// in-process transport, against a small simulated world participant: a unicycle with odometry at
// 50 Hz and a ray-marched scan at 10 Hz, taking cmd_vel.
#include <gtest/gtest.h>

#include <condition_variable>
#include <cstring>
#include <functional>
#include <mutex>
#include <sstream>
#include <thread>

#include "fieldproof/lockstep/inprocess.hpp"
#include "fieldproof/lockstep/participant.hpp"
#include "fieldproof/msgs/ign.hpp"
#include "fieldproof/msgs/navigation.hpp"
#include "fieldproof/stacks/participant_host.hpp"
#include "stacks/stack_test_util.hpp"

namespace fieldproof::stacks {
namespace {

using lockstep::InProcessCoordinator;
using lockstep::Participant;
using lockstep::Publish;

world::OccupancyGrid room_with_block() {
  auto g = testing::free_grid(120, 80, 0.1);
  testing::add_border(g);
  testing::fill_rect(g, 5.5, 0.0, 6.5, 5.0);
  return g;
}

std::string scan_payload(const LaserScan& s, SimTime t) {
  ignition::msgs::LaserScan m;
  msgs::set_stamp(m.mutable_header(), t);
  m.set_angle_min(s.angle_min);
  m.set_angle_step(s.angle_increment);
  m.set_range_min(s.range_min);
  m.set_range_max(s.range_max);
  for (double r : s.ranges) m.add_ranges(r);
  return msgs::serialize(m);
}

// The simulated world's loop on its own participant: steps of 10 ms until `end`.
struct FakeWorld {
  world::OccupancyGrid grid = room_with_block();
  Pose2D pose{2.0, 2.0, 0.0};
  CmdVel cmd;
  std::vector<msgs::NavStatus> statuses;
  std::mutex mutex;

  void run(Participant& p, SimTime end, const std::function<void(SimTime)>& each_step = {}) {
    p.subscribe("/model/ugv1/cmd_vel", [this](const Publish& m) {
      const auto t = msgs::parse<ignition::msgs::Twist>(m.payload);
      if (t) cmd = {t->linear().x(), t->angular().z()};
    });
    p.subscribe("/model/ugv1/navigate_to_pose/status", [this](const Publish& m) {
      const auto s = msgs::decode_nav_status(m.payload);
      std::lock_guard<std::mutex> lock(mutex);
      if (s) statuses.push_back(*s);
    });
    lockstep::Rate rate(p, milliseconds(10));
    while (p.now() < end) {
      const SimTime t = p.now();
      if (t.ns() % 20'000'000 == 0) {
        ignition::msgs::Odometry o;
        msgs::set_stamp(o.mutable_header(), t);
        msgs::set_planar_pose(o.mutable_pose(), pose.x, pose.y, pose.yaw);
        p.publish("/model/ugv1/odometry", msgs::serialize(o), "ignition.msgs.Odometry");
      }
      if (t.ns() % 100'000'000 == 0) {
        p.publish("/model/ugv1/scan", scan_payload(testing::scan_grid(grid, pose), t),
                  "ignition.msgs.LaserScan");
      }
      if (t.ns() == 500'000'000) {
        p.publish("/model/ugv1/navigate_to_pose/goal",
                  msgs::encode(msgs::NavGoal{"g1", 10.0, 2.0, 0.0}),
                  "fieldproof.msgs.NavigateToPoseGoal");
      }
      if (each_step) each_step(t);
      pose = testing::integrate(pose, cmd, milliseconds(10));
      if (!rate.sleep()) break;
    }
  }
};

struct Trace {
  std::mutex mutex;
  std::ostringstream out;
  void tap(const Publish& m) {
    std::lock_guard<std::mutex> lock(mutex);
    uint64_t h = 1469598103934665603ull;  // FNV-1a of the payload
    for (const char c : m.payload) h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ull;
    out << m.stamp.ns() << ' ' << m.participant << ' ' << m.seq << ' ' << m.topic << ' ' << h
        << '\n';
  }
};

struct RunResult {
  std::string trace;
  std::vector<msgs::NavStatus> statuses;
  Pose2D pose;
  bool host_ok = false;
};

RunResult drive_in_lockstep() {
  InProcessCoordinator coord;
  Trace trace;
  coord.set_tap([&](const Publish& m) { trace.tap(m); });
  testing::FakeWall wall;
  auto created = UgvNavNode::create({}, room_with_block(), wall.fn());
  EXPECT_TRUE(created.ok()) << created.status().message();
  if (!created.ok()) return {};
  auto node = std::move(created).value();
  // Both register at time 0 before either runs, so the run starts the same way every time.
  Participant world_p(coord.make_link(), {.name = "world"});
  Participant nav_p(coord.make_link(), {.name = "ugv1_nav"});
  UgvNavParticipantHost host(nav_p, *node, {.wall_check_period = Duration::zero()});
  const SimTime end = SimTime::from_ns(40'000'000'000);
  FakeWorld world;
  RunResult r;
  std::thread nav([&] { r.host_ok = host.run(end); });
  std::thread sim(
      [&] { world.run(world_p, end, [&](SimTime) { wall.advance(milliseconds(10)); }); });
  sim.join();
  nav.join();
  world_p.leave();
  nav_p.leave();
  std::lock_guard<std::mutex> lock(trace.mutex);
  r.trace = trace.out.str();
  r.statuses = world.statuses;
  r.pose = world.pose;
  return r;
}

TEST(UgvNavParticipantHost, DrivesToTheGoalAsALockstepParticipant) {
  const RunResult r = drive_in_lockstep();
  EXPECT_TRUE(r.host_ok);
  ASSERT_GE(r.statuses.size(), 2u);
  EXPECT_EQ(r.statuses[0].status, msgs::NavStatusCode::kAccepted);
  EXPECT_EQ(r.statuses[1].status, msgs::NavStatusCode::kSucceeded) << r.statuses[1].reason;
  EXPECT_LT(std::hypot(r.pose.x - 10.0, r.pose.y - 2.0), 0.2);
}

TEST(UgvNavParticipantHost, GivesTheSameOrderedStreamEveryRun) {
  const RunResult a = drive_in_lockstep();
  const RunResult b = drive_in_lockstep();
  EXPECT_GT(a.trace.size(), 50'000u);
  EXPECT_EQ(a.trace, b.trace);
}

TEST(UgvNavParticipantHost, WatchdogAbortsTheGoalWhileTheWorldIsPaused) {
  InProcessCoordinator coord;
  testing::FakeWall wall;
  auto created = UgvNavNode::create({}, room_with_block(), wall.fn());
  ASSERT_TRUE(created.ok()) << created.status().message();
  auto node = std::move(created).value();
  Participant world_p(coord.make_link(), {.name = "world"});
  Participant nav_p(coord.make_link(), {.name = "ugv1_nav"});

  std::mutex mutex;
  std::condition_variable cv;
  bool aborted = false;
  SimTime aborted_at;
  bool paused = false;
  bool stack_at_pause = false;  // the stack has published at 2 s: its clock reached the pause
  ParticipantHostOptions opts;
  opts.wall_check_period = milliseconds(5);  // real wall time: the thread's schedule only
  opts.on_published = [&](const BusMessage& m) {
    if (m.topic == "/model/ugv1/cmd_vel" && m.stamp.ns() >= 2'000'000'000) {
      std::lock_guard<std::mutex> lock(mutex);
      stack_at_pause = true;
      cv.notify_all();
    }
    if (m.topic != "/model/ugv1/navigate_to_pose/status") return;
    const auto s = msgs::decode_nav_status(m.payload);
    if (!s || s->status != msgs::NavStatusCode::kAborted) return;
    std::lock_guard<std::mutex> lock(mutex);
    aborted = true;
    aborted_at = m.stamp;
    cv.notify_all();
  };
  UgvNavParticipantHost host(nav_p, *node, opts);
  const SimTime end = SimTime::from_ns(10'000'000'000);
  std::thread nav([&] { host.run(end); });

  // The world drives for 2 s, then the run is paused; once the stack's clock has reached the
  // pause too, 5 s of wall time pass.
  FakeWorld world;
  std::thread sim([&] {
    world.run(world_p, end, [&](SimTime t) {
      if (t.ns() == 2'000'000'000) {
        coord.control(lockstep::pause_request());
        std::lock_guard<std::mutex> lock(mutex);
        paused = true;
        cv.notify_all();
      }
    });
  });
  {
    std::unique_lock<std::mutex> lock(mutex);
    ASSERT_TRUE(
        cv.wait_for(lock, std::chrono::seconds(30), [&] { return paused && stack_at_pause; }));
  }
  wall.advance(seconds(5));
  {
    std::unique_lock<std::mutex> lock(mutex);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return aborted; }));
  }
  // Simulated time stood still at 2 s: the abort is stamped at the stack's next tick.
  EXPECT_GE(aborted_at.ns(), 2'000'000'000);
  EXPECT_LE(aborted_at.ns(), 2'050'000'000);
  EXPECT_EQ(coord.status().time.ns(), 2'000'000'000);
  coord.control(lockstep::resume_request());
  sim.join();
  host.stop();
  nav.join();
  std::lock_guard<std::mutex> lock(world.mutex);
  ASSERT_GE(world.statuses.size(), 2u);
  EXPECT_EQ(world.statuses[1].status, msgs::NavStatusCode::kAborted);
  EXPECT_NE(world.statuses[1].reason.find("heartbeat lost"), std::string::npos)
      << world.statuses[1].reason;
}

}  // namespace
}  // namespace fieldproof::stacks
