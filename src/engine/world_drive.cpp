#include "fieldproof/engine/world_drive.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "fieldproof/engine/stack_host.hpp"
#include "fieldproof/msgs/ign.hpp"
#include "fieldproof/msgs/navigation.hpp"
#include "fieldproof/time/duration.hpp"
#include "fieldproof/world/robot_model.hpp"

namespace fieldproof::engine {
namespace {

Status invalid(std::string message) {
  return Status(StatusCode::kInvalidArgument, std::move(message));
}

bool parse_number(const std::string& text, double* out) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) return false;
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);
  return end && *end == '\0' && std::isfinite(*out);
}

// "X,Y" or "X,Y,YAW" (metres, radians); nothing when the text is not 2 or 3 finite numbers
// separated by commas.
std::optional<world::Pose2D> parse_pose(const std::string& text) {
  std::vector<double> v;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    double d = 0;
    if (!parse_number(text.substr(start, comma == std::string::npos ? comma : comma - start), &d)) {
      return std::nullopt;
    }
    v.push_back(d);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (v.size() < 2 || v.size() > 3) return std::nullopt;
  return world::Pose2D{v[0], v[1], v.size() == 3 ? v[2] : 0.0};
}

// The checks made before the stack is resolved.
Status check_limits(const WorldDriveRequest& r) {
  if (r.seed < 0 || r.seed > 2147483647) return invalid("--seed must be between 0 and 2^31-1");
  if (r.max_rtf < 0 || !std::isfinite(r.max_rtf)) {
    return invalid("--max-rtf must be >= 0 (0 = unpaced)");
  }
  if (r.spawns.empty()) return invalid("give at least one --spawn NAME@FRAME or NAME@X,Y[,YAW]");
  return Status();
}

// NAME@FRAME or NAME@X,Y[,YAW]; a vehicle without a name when the text is neither.
VehicleSetup parse_spawn(const std::string& s) {
  VehicleSetup v;
  const auto at = s.find('@');
  if (at == std::string::npos || at == 0 || at + 1 >= s.size()) return v;
  v.name = s.substr(0, at);
  const std::string where = s.substr(at + 1);
  // A frame name holds no comma; anything with one must be a pose.
  if (where.find(',') == std::string::npos) {
    v.frame = where;
  } else if (const auto p = parse_pose(where)) {
    v.pose = *p;
  } else {
    v.name.clear();
  }
  return v;
}

// The stack's parameters for an explicitly given robot model: its footprint radius and speed
// limits, capped at the stack's own defaults.
std::string stack_params_for(const world::VehicleParams& p) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "{\"inflation\":{\"robot_radius\":%.17g},\"controller\":{\"max_linear\":%.17g,"
                "\"max_angular\":%.17g}}",
                std::hypot(p.length / 2, p.width / 2), std::min(0.5, p.max_linear),
                std::min(1.0, p.max_angular));
  return buf;
}

}  // namespace

Result<WorldDriveOptions> world_drive_options(const WorldDriveRequest& request,
                                              const StackSpec& stack) {
  if (Status s = check_limits(request); !s.ok()) return s;
  WorldDriveOptions o;
  o.session.world_file = request.world;
  o.session.seed = static_cast<uint64_t>(request.seed);
  o.session.max_rtf = request.max_rtf;
  o.session.on_warning = request.on_warning;
  const world::RobotModel model = world::load_robot_model(
      request.model.empty() ? std::string(util::kDefaultRobotModel) : request.model,
      request.base_dir, world::model_search_path(executable_dir()));
  if (request.on_warning) {
    for (const std::string& w : model.warnings) request.on_warning(w);
  }
  if (!model.ok()) {
    std::string lines;
    for (const std::string& e : model.errors) {
      lines += (lines.empty() ? "" : "\n") + ("--model: " + e);
    }
    return invalid(std::move(lines));
  }
  StackSpec vehicle_stack = stack;
  if (!request.model.empty()) vehicle_stack.params_json = stack_params_for(model.params);
  for (const std::string& s : request.spawns) {
    VehicleSetup v = parse_spawn(s);
    if (v.name.empty()) {
      return invalid("--spawn '" + s +
                     "': expected NAME@FRAME or NAME@X,Y[,YAW] (metres, radians), e.g. ugv1@dock "
                     "or ugv1@2.5,-1,1.57");
    }
    v.stack = vehicle_stack;
    v.params = model.params;
    o.session.vehicles.push_back(std::move(v));
  }
  if (!request.goal.empty()) {
    if (request.goal.find(',') == std::string::npos) {
      o.goal_frame = request.goal;
    } else if (const auto g = parse_pose(request.goal)) {
      o.goal = *g;
    } else {
      return invalid("--goal '" + request.goal +
                     "': expected X,Y[,YAW] (metres, radians) or a frame");
    }
  }
  const Result<Duration> until = parse_duration(request.until);
  if (!until.ok() || *until <= Duration::zero()) {
    return invalid("--until '" + request.until +
                   "': " + (until.ok() ? std::string("must be > 0") : until.status().message()));
  }
  o.until = SimTime::zero() + *until;
  return o;
}

WorldDriveResult drive_world(const WorldDriveRequest& request) {
  WorldDriveResult refused;
  refused.refused = true;
  refused.exit_code = 2;
  if (Status s = check_limits(request); !s.ok()) {
    refused.error = s.message();
    return refused;
  }
  const Result<StackSpec> stack =
      resolve_stack(request.stack_plugin, request.stack_command, request.base_dir);
  if (!stack.ok()) {
    refused.exit_code = 1;
    refused.error = stack.status().message();
    return refused;
  }
  Result<WorldDriveOptions> options = world_drive_options(request, *stack);
  if (!options.ok()) {
    refused.error = options.status().message();
    return refused;
  }
  return drive_world(*options);
}

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
  // No lock: a participant delivers to the thread that subscribed, inside its sleeps, so these
  // callbacks and the loop below never run at once.
  e.subscribe(session->pose_topic(), [&](const lockstep::Publish& m) {
    const auto poses = msgs::parse<ignition::msgs::Pose_V>(m.payload);
    if (!poses) return;
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
