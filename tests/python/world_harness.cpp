// The depot world alone as a participant on a ZeroMQ coordinator, for the Python example stack's
// test without the engine (tests/python/test_goal_follower.py):
//   fieldproof_python_world_harness WORLD.sdf ENDPOINT VEHICLE SPAWN_FRAME GOAL_FRAME UNTIL_S
// Spawns VEHICLE at SPAWN_FRAME, runs the world in lock-step, publishes a navigation goal to
// GOAL_FRAME (a frame, or X,Y; id "drive") at 1 s, and runs until UNTIL_S or until the goal's final
// status. Prints "ready" once subscribed, then one line per status and lifecycle message and per
// second of ground truth, then
// "result <final status> <distance to the goal in m> <touched 0|1> <end time s>".
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "fieldproof/lockstep/participant.hpp"
#include "fieldproof/lockstep/transport.hpp"
#include "fieldproof/msgs/navigation.hpp"
#include "fieldproof/msgs/types.hpp"
#include "fieldproof/world/world.hpp"
#include "fieldproof/world/world_participant.hpp"

using namespace fieldproof;

int main(int argc, char** argv) {
  if (argc != 7) {
    std::fprintf(stderr, "usage: %s WORLD.sdf ENDPOINT VEHICLE SPAWN GOAL UNTIL_S\n", argv[0]);
    return 2;
  }
  const std::string vehicle = argv[3];
  world::WorldOptions wo;
  wo.seed = 7;
  auto loaded = world::World::load(argv[1], wo);
  if (!loaded.world) {
    for (const auto& e : loaded.errors) std::fprintf(stderr, "%s\n", e.c_str());
    return 2;
  }
  world::World& w = *loaded.world;
  if (auto s = w.spawn_vehicle(vehicle, std::string_view(argv[4])); !s.ok()) {
    std::fprintf(stderr, "spawn: %s\n", s.message().c_str());
    return 2;
  }
  // GOAL_FRAME is a frame's name, or X,Y.
  std::optional<world::Pose2D> goal = w.frame(argv[5]);
  if (double gx = 0, gy = 0; !goal && std::sscanf(argv[5], "%lf,%lf", &gx, &gy) == 2) {
    goal = world::Pose2D{gx, gy, 0.0};
  }
  if (!goal) {
    std::fprintf(stderr, "no frame %s\n", argv[5]);
    return 2;
  }
  auto p = lockstep::connect_participant(argv[2], lockstep::ParticipantOptions{.name = "world"});
  world::WorldParticipant glue(w, *p);
  std::string final_status;
  bool touched = false;
  const std::string base = "/model/" + vehicle;
  p->subscribe(base + "/navigate_to_pose/status", [&](const lockstep::Publish& m) {
    auto s = msgs::decode_nav_status(m.payload);
    if (!s) return;
    std::printf("status %.3f %s %s %s\n", m.stamp.seconds_f(), s->id.c_str(),
                std::string(msgs::to_string(s->status)).c_str(), s->reason.c_str());
    if (s->id == "drive" && s->status != msgs::NavStatusCode::kAccepted) {
      final_status = msgs::to_string(s->status);
    }
  });
  p->subscribe(base + "/lifecycle", [&](const lockstep::Publish& m) {
    auto l = msgs::decode_lifecycle(m.payload);
    if (l) {
      std::printf("lifecycle %.3f %s %s\n", m.stamp.seconds_f(), l->node.c_str(),
                  std::string(msgs::to_string(l->state)).c_str());
    }
  });
  // Subscribed: the test starts the stack only now, so the stack's first messages (its lifecycle
  // at 0) reach this participant in every run, not only when it happened to subscribe first.
  std::printf("ready\n");
  std::fflush(stdout);
  const SimTime until = SimTime::zero() + seconds(std::atoi(argv[6]));
  SimTime t = SimTime::zero();
  bool sent = false;
  while (t < until && final_status.empty()) {
    t = t + seconds(1);
    if (!glue.run_until(t)) {
      std::fprintf(stderr, "the world's participant failed: %s\n", p->last_error().c_str());
      return 1;
    }
    const auto v = w.vehicle(vehicle);
    touched = touched || v->touching;
    std::printf("pose %.1f %.3f %.3f %.3f\n", t.seconds_f(), v->pose.x, v->pose.y, v->pose.yaw);
    std::fflush(stdout);
    if (!sent) {
      p->publish(base + "/navigate_to_pose/goal",
                 msgs::encode(msgs::NavGoal{"drive", goal->x, goal->y, goal->yaw}),
                 std::string(msgs::kNavigateToPoseGoal));
      sent = true;
    }
  }
  const auto v = w.vehicle(vehicle);
  std::printf("result %s %.3f %d %.1f\n", final_status.empty() ? "none" : final_status.c_str(),
              std::hypot(v->pose.x - goal->x, v->pose.y - goal->y), touched ? 1 : 0, t.seconds_f());
  p->leave();
  return 0;
}
