#include "engine/metrics_message.hpp"

#include <cmath>

#include "fieldproof/engine/session.hpp"
#include "fieldproof/time/seconds.hpp"
#include "fieldproof/world/geometry.hpp"

namespace fieldproof::engine {

using nlohmann::json;

namespace {
double round3(double v) { return std::round(v * 1e3) / 1e3; }
json finite(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }
}  // namespace

json metrics_message(const MetricsFrame& f) {
  json m = f.observer.is_object() ? f.observer : json::object();
  m["wall"] = f.wall_epoch_s ? json(round3(*f.wall_epoch_s)) : json(nullptr);
  m["sim"] = to_seconds(f.sim);
  m["wall_s"] = round3(f.wall_s);
  m["sim_s"] = to_seconds(f.sim);
  m["mode"] = f.mode;
  m["rtf"] = finite(round3(f.rtf));
  m["target_rtf"] = finite(f.target_rtf);
  m["drift_s"] = finite(round3(f.drift_s));
  m["paused"] = f.paused;
  if (f.lockstep) {
    const MetricsFrame::Lockstep& l = *f.lockstep;
    json acks = json::object();
    for (const std::string& v : l.vehicles) acks[v] = to_seconds(l.acknowledged);
    const int64_t step =
        l.step.ns() > 0 ? f.sim.ns() / l.step.ns() : 0;  // steps of step_s taken so far
    m["lockstep"] = {{"step", step},
                     {"step_s", to_seconds(l.step)},
                     {"sim_s", to_seconds(f.sim)},
                     {"hold", l.hold},
                     {"holds", l.holds},
                     {"acknowledgements", acks},
                     {"max_ack_wait_s", round3(to_seconds(l.max_ack_wait))}};
  }
  if (f.recording) {
    m["recording"] = {{"file", f.recording->file},
                      {"bytes", f.recording->bytes},
                      {"messages", f.recording->messages}};
  }
  return m;
}

std::vector<record::SceneShape> scene_shapes(Session& session) {
  std::vector<record::SceneShape> out;
  for (const world::StaticShape& sh : session.world().static_shapes()) {
    record::SceneShape s;
    s.id = world::scoped_name(sh);
    s.cylinder = sh.type != world::ShapeType::kBox;
    s.x = sh.pose.x;
    s.y = sh.pose.y;
    s.yaw = sh.pose.yaw;
    s.size_x = sh.size_x;
    s.size_y = sh.size_y;
    s.radius = sh.radius;
    s.z_min = sh.z_min;
    s.z_max = sh.z_max;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace fieldproof::engine
