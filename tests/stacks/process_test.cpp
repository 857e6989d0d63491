// The stack as a process: fieldproof-ugv-nav, a regulating participant over ZeroMQ ipc, driving
// the embedded world's UGV in depot.sdf under lock-step. The ordered message stream of the run
// is bit-identical to the same run with the stack in-process (same code, in-process transport).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <thread>

#include "fieldproof/lockstep/inprocess.hpp"
#include "fieldproof/lockstep/transport.hpp"
#include "fieldproof/lockstep/zmq_server.hpp"
#include "fieldproof/msgs/navigation.hpp"
#include "fieldproof/stacks/participant_host.hpp"
#include "fieldproof/time/system_clock.hpp"
#include "fieldproof/world/world_participant.hpp"

extern char** environ;

namespace fieldproof::stacks {
namespace {

using lockstep::Participant;
using lockstep::Publish;

constexpr const char* kDepot = "examples/worlds/depot.sdf";
const SimTime kEnd = SimTime::from_ns(12'000'000'000);

struct Trace {
  std::mutex mutex;
  std::ostringstream out;
  int statuses = 0;
  void tap(const Publish& m) {
    std::lock_guard<std::mutex> lock(mutex);
    if (m.stamp >= kEnd) return;  // the stack's shutdown after the end is not part of the run
    uint64_t h = 1469598103934665603ull;
    for (const char c : m.payload) h = (h ^ static_cast<uint8_t>(c)) * 1099511628211ull;
    out << m.stamp.ns() << ' ' << m.participant << ' ' << m.seq << ' ' << m.topic << ' ' << h
        << '\n';
    statuses += m.topic == "/model/ugv1/navigate_to_pose/status";
  }
};

std::unique_ptr<world::World> depot() {
  world::WorldOptions o;
  o.seed = 11;
  auto loaded = world::World::load(kDepot, o);
  EXPECT_TRUE(loaded.world);
  if (!loaded.world) return nullptr;
  EXPECT_TRUE(loaded.world->spawn_vehicle("ugv1", "dock").ok());
  return std::move(loaded.world);
}

// The engine's part: the goal at 0.5 s, then leave.
void send_goal(Participant& engine) {
  engine.sleep_until(SimTime::from_ns(500'000'000));
  engine.publish("/model/ugv1/navigate_to_pose/goal",
                 msgs::encode(msgs::NavGoal{"g1", 10.0, -1.0, 0.0}),
                 "fieldproof.msgs.NavigateToPoseGoal");
  engine.leave();
}

std::string run_in_process() {
  lockstep::InProcessCoordinator coord;
  Trace trace;
  coord.set_tap([&](const Publish& m) { trace.tap(m); });
  auto w = depot();
  auto created = UgvNavNode::create({}, w->occupancy_grid(0.05), SystemClock::wall_now());
  EXPECT_TRUE(created.ok()) << created.status().message();
  if (!created.ok()) return "";
  auto node = std::move(created).value();
  Participant world_p(coord.make_link(), {.name = "world"});
  Participant engine(coord.make_link(), {.name = "engine"});
  Participant nav_p(coord.make_link(), {.name = "ugv1_nav"});
  world::WorldParticipant glue(*w, world_p);
  UgvNavParticipantHost host(nav_p, *node, {.wall_check_period = Duration::zero()});
  std::thread nav([&] { host.run(kEnd); });
  std::thread eng([&] { send_goal(engine); });
  glue.run_until(kEnd);
  world_p.leave();
  eng.join();
  nav.join();
  nav_p.leave();
  std::lock_guard<std::mutex> lock(trace.mutex);
  EXPECT_GE(trace.statuses, 1);
  return trace.out.str();
}

std::string run_as_process() {
  const auto dir =
      std::filesystem::temp_directory_path() / ("fieldproof-stacks-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  Trace trace;
  std::mutex mutex;
  std::condition_variable cv;
  bool nav_registered = false;
  lockstep::ServerOptions so;
  so.bind = {"ipc://coord.sock"};
  so.ipc_dir = dir.string();
  so.tap = [&](const Publish& m) { trace.tap(m); };
  so.on_announce = [&](const lockstep::Announce& a) {
    if (a.participant != "ugv1_nav") return;
    std::lock_guard<std::mutex> lock(mutex);
    nav_registered = true;
    cv.notify_all();
  };
  lockstep::CoordinatorServer server(so);
  const std::string endpoint = server.endpoints().front();

  auto w = depot();
  auto world_p = lockstep::connect_participant(endpoint, {.name = "world"});
  auto engine = lockstep::connect_participant(endpoint, {.name = "engine"});
  world::WorldParticipant glue(*w, *world_p);

  const std::string env = std::string(lockstep::kCoordinatorEnv) + "=" + endpoint;
  std::vector<std::string> args = {
      FIELDPROOF_UGV_NAV_EXE, "--vehicle", "ugv1", "--world", kDepot, "--no-wall-watchdog-thread"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> envs = {env};
  for (char** e = environ; *e; ++e) envs.emplace_back(*e);
  std::vector<char*> envp;
  for (auto& e : envs) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = 0;
  EXPECT_EQ(posix_spawn(&pid, argv[0], nullptr, &attr, argv.data(), envp.data()), 0);
  posix_spawnattr_destroy(&attr);
  {
    std::unique_lock<std::mutex> lock(mutex);
    EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(60), [&] { return nav_registered; }));
  }
  std::thread eng([&] { send_goal(*engine); });
  EXPECT_TRUE(glue.run_until(kEnd));
  world_p->leave();
  eng.join();
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0);
  server.stop();
  std::filesystem::remove_all(dir);
  std::lock_guard<std::mutex> lock(trace.mutex);
  EXPECT_GE(trace.statuses, 1);
  return trace.out.str();
}

TEST(UgvNavProcess, GivesTheSameOrderedStreamAsTheStackInProcess) {
  const std::string in_process = run_in_process();
  const std::string process = run_as_process();
  EXPECT_GT(in_process.size(), 100'000u);
  EXPECT_EQ(process.size(), in_process.size());
  EXPECT_TRUE(process == in_process) << "the streams differ";
  // The stack did drive: cmd_vel from ugv1_nav is in the stream.
  EXPECT_NE(process.find(" ugv1_nav "), std::string::npos);
}

TEST(UgvNavProcess, RefusesBadArgumentsWithExitCode2) {
  const auto run = [](std::vector<std::string> args) {
    args.insert(args.begin(), FIELDPROOF_UGV_NAV_EXE);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    EXPECT_EQ(posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  EXPECT_EQ(run({"--world", kDepot}), 2);                                   // no --vehicle
  EXPECT_EQ(run({"--vehicle", "ugv1", "--world", "/nonexistent.sdf"}), 2);  // bad world
  EXPECT_EQ(run({"--vehicle", "ugv1", "--world", kDepot, "--params", "{"}), 2);
  EXPECT_EQ(run({"--vehicle", "ugv1", "--world", kDepot, "--endpoint", "bogus://x"}), 2);
}

}  // namespace
}  // namespace fieldproof::stacks
