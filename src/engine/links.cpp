#include "engine/links.hpp"
#include "fieldproof/time/seconds.hpp"

#include <algorithm>

namespace fieldproof::engine {

network::NetworkConfig network_config(const scenario::Scenario& s) {
  const scenario::NetworkSection& n = s.network;
  network::NetworkConfig c;
  c.ground = n.ground;
  c.ground_x = n.ground_x;
  c.ground_y = n.ground_y;
  c.seed = static_cast<uint64_t>(s.seed);
  for (const scenario::NetworkLink& l : n.links) {
    network::LinkConfig lc;
    lc.name = l.name;
    lc.vehicle = l.vehicle;
    lc.peer = l.peer;
    lc.params.latency = l.latency;
    lc.params.jitter = l.jitter;
    lc.params.loss = l.loss;
    lc.params.bandwidth_bps = l.bandwidth_kbps ? *l.bandwidth_kbps * 1000.0 : 0.0;
    lc.params.range_m = l.range_m;
    lc.params.degrade_from_m = l.degrade_from_m;
    lc.topics = l.topics;
    c.links.push_back(std::move(lc));
  }
  c.uplink.push_back("navigate_to_pose/status");
  c.reliable = {"navigate_to_pose/goal", "navigate_to_pose/status"};
  for (const std::string& t : n.telemetry) {
    if (std::find(c.uplink.begin(), c.uplink.end(), t) == c.uplink.end()) c.uplink.push_back(t);
  }
  for (const scenario::NetworkOutage& o : n.outages) {
    network::Outage out;
    out.name = o.name;
    out.vehicles = o.vehicles;
    switch (o.region.kind) {
      case scenario::NetworkRegion::Kind::kBox:
        out.region.kind = network::Region::Kind::kBox;
        out.region.x_min = o.region.x_min;
        out.region.x_max = o.region.x_max;
        out.region.y_min = o.region.y_min;
        out.region.y_max = o.region.y_max;
        break;
      case scenario::NetworkRegion::Kind::kCircle:
        out.region.kind = network::Region::Kind::kCircle;
        out.region.cx = o.region.x;
        out.region.cy = o.region.y;
        out.region.radius = o.region.radius;
        break;
      case scenario::NetworkRegion::Kind::kPolygon:
        out.region.kind = network::Region::Kind::kPolygon;
        out.region.polygon = o.region.polygon;
        break;
    }
    c.outages.push_back(std::move(out));
  }
  if (s.time.mode == scenario::TimeMode::kLockstep) c.ack_timeout = s.time.ack_timeout;
  return c;
}

namespace {

bool is_topic_fault(const std::string& action) {
  return action == "fault.drop_topic" || action == "fault.delay_topic" ||
         action == "fault.freeze_sensor";
}

std::string faulted_topic(const scenario::TimelineEntry& e) {
  const scenario::ParamValue* t =
      e.params.get(e.action == "fault.freeze_sensor" ? "sensor" : "topic");
  return "/model/" + e.vehicle + "/" + (t ? t->string : std::string());
}

}  // namespace

std::vector<std::string> faulted_topics(const scenario::Scenario& s) {
  std::vector<std::string> out;
  for (const scenario::TimelineEntry& e : s.timeline) {
    if (!is_topic_fault(e.action)) continue;
    const std::string t = faulted_topic(e);
    if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
  }
  return out;
}

RunFaults::RunFaults(uint64_t seed, FaultEnv env)
    : env_(std::move(env)), relay_(seed, env_.publish_at) {}

void RunFaults::on_raw(const std::string& topic, SimTime stamp, std::string payload,
                       const std::string& type) {
  relay_.on_message(topic, stamp, std::move(payload), type);
}

FaultOutcome RunFaults::on_action(const scenario::TimelineEntry& e, bool start) {
  if (e.action == "fault.kill_stack") return kill_stack(e, start);
  FaultOutcome out;
  if (!is_topic_fault(e.action)) {
    out.error = "unknown fault action " + e.action;
    return out;
  }
  const SimTime now = env_.now();
  network::TopicFault f;
  f.label = e.label;
  f.topic = faulted_topic(e);
  nlohmann::json fields = {{"label", e.label},
                           {"action", e.action},
                           {"vehicle", e.vehicle},
                           {"topic", f.topic},
                           {"t_s", to_seconds(now)}};
  if (start) {
    const scenario::ParamValue* d = e.params.get("duration_s");
    out.params = {{"topic", f.topic}, {"duration_s", d ? to_seconds(d->duration) : 0.0}};
    if (e.action == "fault.drop_topic") {
      f.kind = network::TopicFault::Kind::kDrop;
      const scenario::ParamValue* p = e.params.get("probability");
      f.probability = p ? p->number : 1.0;
      out.params["probability"] = f.probability;
    } else if (e.action == "fault.delay_topic") {
      f.kind = network::TopicFault::Kind::kDelay;
      const scenario::ParamValue* dl = e.params.get("delay_s");
      f.delay = dl ? dl->duration : Duration::zero();
      out.params["delay_s"] = to_seconds(f.delay);
    } else {
      f.kind = network::TopicFault::Kind::kFreeze;
    }
    relay_.start(f, now);
    if (env_.event) env_.event("fault.start", fields);
    return out;
  }
  const network::FaultCounts c = relay_.stop(e.label, now);
  fields["messages"] = c.messages;
  fields["dropped"] = c.dropped;
  fields["delayed"] = c.delayed;
  fields["frozen"] = c.frozen;
  if (env_.event) env_.event("fault.end", fields);
  out.detail = std::to_string(c.messages) + " messages on " + f.topic + ": " +
               (e.action == "fault.drop_topic"    ? std::to_string(c.dropped) + " dropped"
                : e.action == "fault.delay_topic" ? std::to_string(c.delayed) + " delayed"
                                                  : std::to_string(c.frozen) + " frozen");
  return out;
}

FaultOutcome RunFaults::kill_stack(const scenario::TimelineEntry& e, bool start) {
  FaultOutcome out;
  const SimTime now = env_.now();
  nlohmann::json fields = {{"label", e.label}, {"vehicle", e.vehicle}, {"t_s", to_seconds(now)}};
  if (start) {
    const scenario::ParamValue* r = e.params.get("restart");
    const scenario::ParamValue* a = e.params.get("restart_after_s");
    const bool restart = r && r->boolean;
    out.params = {{"restart", restart}};
    if (restart) out.params["restart_after_s"] = a ? to_seconds(a->duration) : 0.0;
    const Result<std::string> killed =
        env_.kill ? env_.kill(e.vehicle)
                  : Result<std::string>(Status(StatusCode::kUnavailable, ""));
    if (!killed.ok()) {
      out.error = "could not kill the stack of " + e.vehicle + ": " + killed.status().message();
      return out;
    }
    const std::string& what = *killed;
    fields["signal"] = "SIGKILL";
    fields["detail"] = what;
    fields["restart"] = restart;
    if (env_.event) env_.event("stack.killed", fields);
    out.params["killed"] = what;
    out.detail = "the stack of " + e.vehicle + " was killed (" + what + ")" +
                 (restart ? "" : "; not restarted");
    return out;
  }
  const Status restarted =
      env_.restart ? env_.restart(e.vehicle) : Status(StatusCode::kUnavailable, "");
  if (!restarted.ok()) {
    out.error = "the stack of " + e.vehicle + " could not be restarted: " + restarted.message();
    fields["error"] = restarted.message();
    if (env_.event) env_.event("stack.restart_failed", fields);
    return out;
  }
  if (env_.stack_pid) fields["pid"] = env_.stack_pid(e.vehicle);
  if (env_.event) env_.event("stack.restarted", fields);
  out.detail = "the stack of " + e.vehicle + " was killed and started again; it registered at " +
               format_seconds(now) + " s";
  return out;
}

}  // namespace fieldproof::engine
