// cpp_goal_follower: an example vehicle stack outside the fieldproof tree, built against the
// installed SDK only (find_package(fieldproof)). The engine starts it as a process (scenario
// `stack: {command: [cpp_goal_follower]}`) with the FIELDPROOF_* environment of
// docs/vehicle-interface.md; it joins the coordinator as $FIELDPROOF_PARTICIPANT, drives
// /model/<vehicle>/cmd_vel from odometry towards each navigation goal, stops for (or goes round)
// what its lidar sees ahead, and answers the goal protocol on navigate_to_pose/status.
//
// Exit codes: 0 stopped by SIGTERM/SIGINT or the run ended, 1 the coordinator failed the run or
// refused the name, 2 a missing environment variable or bad parameters.
#include <pthread.h>

#include <ignition/msgs/laserscan.pb.h>
#include <ignition/msgs/odometry.pb.h>
#include <ignition/msgs/pose_v.pb.h>
#include <ignition/msgs/twist.pb.h>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>

#include "fieldproof/lockstep/participant.hpp"
#include "fieldproof/lockstep/transport.hpp"
#include "fieldproof/msgs/ign.hpp"
#include "fieldproof/msgs/navigation.hpp"
#include "fieldproof/msgs/types.hpp"
#include "follower.hpp"

namespace {

namespace fp = fieldproof;
using goal_follower::GoalFollower;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

struct Topics {
  std::string pose, scan, goal, cmd_vel, status, feedback, lifecycle;
};

Topics topics_for(const std::string& vehicle, const std::string& world, bool ground_truth) {
  const std::string m = "/model/" + vehicle;
  return {ground_truth ? "/world/" + world + "/pose/info" : m + "/odometry",
          m + "/scan",
          m + "/navigate_to_pose/goal",
          m + "/cmd_vel",
          m + "/navigate_to_pose/status",
          m + "/navigate_to_pose/feedback",
          m + "/lifecycle"};
}

// Publishes what the follower produced, stamped now() (the participant's latest grant).
void flush(fp::lockstep::Participant& p, GoalFollower& f, const Topics& t) {
  for (auto& o : f.take_outputs()) {
    if (const auto* c = std::get_if<goal_follower::CmdVel>(&o)) {
      ignition::msgs::Twist tw;
      fp::msgs::set_stamp(tw.mutable_header(), p.now());
      tw.mutable_linear()->set_x(c->linear);
      tw.mutable_angular()->set_z(c->angular);
      p.publish(t.cmd_vel, fp::msgs::serialize(tw), std::string(fp::msgs::kTwist));
    } else if (const auto* s = std::get_if<fp::msgs::NavStatus>(&o)) {
      p.publish(t.status, fp::msgs::encode(*s), std::string(fp::msgs::kNavigateToPoseStatus));
    } else if (const auto* fb = std::get_if<fp::msgs::NavFeedback>(&o)) {
      p.publish(t.feedback, fp::msgs::encode(*fb), std::string(fp::msgs::kNavigateToPoseFeedback));
    } else if (const auto* l = std::get_if<fp::msgs::Lifecycle>(&o)) {
      p.publish(t.lifecycle, fp::msgs::encode(*l), std::string(fp::msgs::kLifecycleState));
    }
  }
}

int run() {
  const std::string vehicle = env("FIELDPROOF_VEHICLE");
  if (vehicle.empty()) {
    std::fprintf(stderr,
                 "cpp_goal_follower: FIELDPROOF_VEHICLE is not set (the engine sets it; by hand: "
                 "FIELDPROOF_VEHICLE=ugv1 FIELDPROOF_COORDINATOR=ipc://... cpp_goal_follower)\n");
    return 2;
  }
  std::string name = env("FIELDPROOF_PARTICIPANT");
  if (name.empty()) name = vehicle + "_nav";

  std::string params_text = "{}";
  if (const std::string file = env("FIELDPROOF_PARAMS_FILE"); !file.empty()) {
    std::ifstream in(file);
    if (!in) {
      std::fprintf(stderr, "cpp_goal_follower: cannot read FIELDPROOF_PARAMS_FILE %s\n",
                   file.c_str());
      return 2;
    }
    params_text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::string error;
  const auto params = goal_follower::parse_params(params_text, &error);
  if (!params) {
    std::fprintf(stderr, "cpp_goal_follower: %s: %s\n", env("FIELDPROOF_PARAMS_FILE").c_str(),
                 error.c_str());
    return 2;
  }
  const bool ground_truth = params->pose_source == "ground_truth";
  const std::string world = env("FIELDPROOF_WORLD");
  if (ground_truth && world.empty()) {
    std::fprintf(stderr, "cpp_goal_follower: pose_source ground_truth needs FIELDPROOF_WORLD\n");
    return 2;
  }
  const Topics topics = topics_for(vehicle, world, ground_truth);

  // Signals go to one thread that stops the loop; blocked before any thread starts so every
  // thread inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  fp::lockstep::ParticipantOptions options;
  options.name = name;
  // regulating (lockstep: time waits for this stack) or following (sim, realtime).
  options.role = env("FIELDPROOF_ROLE") == "following" ? fp::lockstep::Role::kFollowing
                                                       : fp::lockstep::Role::kRegulating;
  options.on_error = [](const fp::lockstep::Error& e) {
    std::fprintf(stderr, "cpp_goal_follower: coordinator: %s\n", e.reason.c_str());
  };
  std::unique_ptr<fp::lockstep::Participant> participant;
  try {
    participant = fp::lockstep::participant_from_environment(options);
  } catch (const fp::lockstep::TransportError& e) {
    std::fprintf(stderr, "cpp_goal_follower: %s\n", e.what());
    return 2;
  }
  fp::lockstep::Participant& p = *participant;
  if (!p.ok()) {
    std::fprintf(stderr, "cpp_goal_follower: the coordinator refused %s: %s\n", name.c_str(),
                 p.last_error().c_str());
    return 1;
  }

  GoalFollower follower(*params);
  uint64_t bad_messages = 0;
  const auto bad = [&](const fp::lockstep::Publish& m, const char* type) {
    if (bad_messages++ < 10) {
      std::fprintf(stderr, "cpp_goal_follower: %s: the payload is not a valid %s\n",
                   m.topic.c_str(), type);
    }
  };
  p.subscribe(topics.pose, [&](const fp::lockstep::Publish& m) {
    if (ground_truth) {
      const auto poses = fp::msgs::parse<ignition::msgs::Pose_V>(m.payload);
      if (!poses) return bad(m, "ignition.msgs.Pose_V");
      for (const auto& q : poses->pose()) {
        if (q.name() != vehicle) continue;
        follower.on_pose(m.stamp,
                         {q.position().x(), q.position().y(), fp::msgs::yaw_of(q.orientation())});
      }
    } else {
      const auto odom = fp::msgs::parse<ignition::msgs::Odometry>(m.payload);
      if (!odom) return bad(m, "ignition.msgs.Odometry");
      const auto& q = odom->pose();
      follower.on_pose(m.stamp,
                       {q.position().x(), q.position().y(), fp::msgs::yaw_of(q.orientation())});
    }
    flush(p, follower, topics);
  });
  p.subscribe(topics.scan, [&](const fp::lockstep::Publish& m) {
    const auto scan = fp::msgs::parse<ignition::msgs::LaserScan>(m.payload);
    if (!scan) return bad(m, "ignition.msgs.LaserScan");
    goal_follower::Scan s;
    s.angle_min = scan->angle_min();
    s.angle_step = scan->angle_step();
    s.range_min = scan->range_min();
    s.range_max = scan->range_max();
    s.ranges.assign(scan->ranges().begin(), scan->ranges().end());
    follower.on_scan(m.stamp, std::move(s));
    flush(p, follower, topics);
  });
  p.subscribe(topics.goal, [&](const fp::lockstep::Publish& m) {
    const auto goal = fp::msgs::decode_nav_goal(m.payload);
    if (!goal) return bad(m, "fieldproof.msgs.NavigateToPoseGoal");
    follower.on_goal(m.stamp, *goal);
    flush(p, follower, topics);
  });

  std::thread signal_thread([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    p.main_thread().stop();
  });

  follower.start(p.now());
  flush(p, follower, topics);
  fp::lockstep::Rate rate(p, fp::seconds(1) / params->control_rate_hz);
  while (rate.sleep()) {
    follower.tick(p.now());
    flush(p, follower, topics);
  }
  const bool failed = !p.ok();
  if (!failed) {
    follower.shutdown(p.now(), "the follower was stopped");
    flush(p, follower, topics);
  }
  p.leave();
  // Wake the signal thread if no signal came.
  pthread_kill(signal_thread.native_handle(), SIGTERM);
  signal_thread.join();
  if (failed) {
    std::fprintf(stderr, "cpp_goal_follower: %s\n", p.last_error().c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cpp_goal_follower: %s\n", e.what());
    return 1;
  }
}
