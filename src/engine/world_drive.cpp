#include "fieldproof/engine/world_drive.hpp"

#include <cmath>
#include <map>

#include "fieldproof/msgs/ign.hpp"
#include "fieldproof/msgs/navigation.hpp"
#include "fieldproof/util/mutex.hpp"

namespace fieldproof::engine {

WorldDriveResult drive_world(const WorldDriveOptions& options) {
  WorldDriveResult r;
  Result<std::unique_ptr<Session>> created = Session::create(options.session);
  if (!created.ok()) {
    r.exit_code = 2;
    r.error = created.status().message();
    return r;
  }
  std::unique_ptr<Session> session = std::move(created).value();
  if (!options.goal_frame.empty()) {
    const auto f = session->world().frame(options.goal_frame);
    if (!f) {
      std::string known;
      for (const auto& [name, pose] : session->world().frames()) {
        known += (known.empty() ? "" : ", ") + name;
      }
      r.exit_code = 2;
      r.error = "--goal " + options.goal_frame + ": no such frame in " +
                options.session.world_file + " (frames: " + known + ")";
      return r;
    }
    r.goal = *f;
  } else if (options.goal) {
    r.goal = options.goal;
    if (!std::isfinite(r.goal->x) || !std::isfinite(r.goal->y) || !std::isfinite(r.goal->yaw)) {
      r.exit_code = 2;
      r.error = "--goal must be finite";
      return r;
    }
  }
  std::map<std::string, VehicleOutcome> outcome;
  for (const auto& name : session->world().vehicles()) {
    VehicleOutcome& o = outcome[name];
    o.name = name;
    o.start = o.end = session->world().vehicle(name)->pose;
    o.status = "none";
  }
  if (const Status started = session->start(); !started.ok()) {
    session->stop();
    r.exit_code = 1;
    r.error = started.message();
    return r;
  }
  lockstep::Participant& e = session->engine();
  Mutex mu;  // the callbacks run on this thread, inside sleeps; the lock is for clarity
  e.subscribe(session->pose_topic(), [&](const lockstep::Publish& m) {
    const auto poses = msgs::parse<ignition::msgs::Pose_V>(m.payload);
    if (!poses) return;
    MutexLock lk(mu);
    for (const auto& p : poses->pose()) {
      auto it = outcome.find(p.name());
      if (it == outcome.end()) continue;
      it->second.end = {p.position().x(), p.position().y(), msgs::yaw_of(p.orientation())};
    }
  });
  for (auto& [name, o] : outcome) {
    e.subscribe(Session::status_topic(name), [&, name = name](const lockstep::Publish& m) {
      const auto s = msgs::decode_nav_status(m.payload);
      if (!s) return;
      MutexLock lk(mu);
      VehicleOutcome& v = outcome[name];
      v.status = std::string(msgs::to_string(s->status));
      v.reason = s->reason;
    });
  }
  if (r.goal) {
    for (auto& [name, o] : outcome) {
      e.publish(Session::goal_topic(name),
                msgs::encode(msgs::NavGoal{"goal", r.goal->x, r.goal->y, r.goal->yaw}),
                "fieldproof.msgs.NavigateToPoseGoal");
    }
  }
  const auto all_done = [&] {
    if (!r.goal) return false;
    MutexLock lk(mu);
    for (const auto& [name, o] : outcome) {
      if (o.status == "none" || o.status == "accepted") return false;
    }
    return true;
  };
  const Duration tick = milliseconds(100);
  bool ok = true;
  while (e.now() < options.until && !all_done()) {
    const SimTime next = std::min(options.until, e.now() + tick);
    if (!e.sleep_until(next)) {
      ok = false;
      break;
    }
  }
  // One more pose (10 Hz) after the end, so `end` is where the vehicle stopped.
  if (ok && e.now() < options.until) ok = e.sleep_for(tick);
  r.sim_time = e.now();
  r.wall = session->wall_elapsed();
  std::string failure = session->failure();
  if (!ok && failure.empty()) failure = "the run ended early: " + e.last_error();
  session->stop();
  r.rtf = r.wall.ns() > 0 ? static_cast<double>(r.sim_time.ns()) / r.wall.ns() : 0.0;
  bool arrived = r.goal.has_value();
  for (auto& [name, o] : outcome) {
    o.arrived = o.status == "succeeded";
    if (r.goal) o.distance_to_goal = std::hypot(o.end.x - r.goal->x, o.end.y - r.goal->y);
    arrived = arrived && o.arrived;
    r.vehicles.push_back(o);
  }
  r.error = failure;
  r.exit_code = arrived && failure.empty() ? 0 : 1;
  return r;
}

}  // namespace fieldproof::engine
