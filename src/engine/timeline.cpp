#include "fieldproof/engine/timeline.hpp"

#include <ignition/msgs/entity.pb.h>
#include <ignition/msgs/entity_factory.pb.h>

#include <cmath>
#include <cstdio>
#include <set>
#include <string_view>
#include <utility>

#include "fieldproof/msgs/ign.hpp"
#include "fieldproof/msgs/navigation.hpp"
#include "fieldproof/scenario/condition.hpp"
#include "fieldproof/time/seconds.hpp"

namespace fieldproof::engine {

using assertions::ActionEvent;
using assertions::Sample;
using nlohmann::json;

namespace {

std::string twist_payload(double linear, double angular) {
  ignition::msgs::Twist t;
  t.mutable_linear()->set_x(linear);
  t.mutable_angular()->set_z(angular);
  return msgs::serialize(t);
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// The SDF of a static model of one collision shape (spawn_model), its base on the ground.
std::string shape_sdf(const std::string& name, const scenario::ParamValue& p, double* z) {
  const auto* shape = p.get("shape");
  const std::string kind = shape ? shape->string : "box";
  std::string geometry;
  if (kind == "cylinder") {
    const auto* r = p.get("radius_m");
    const auto* l = p.get("length_m");
    const double radius = r ? r->number : 0.25;
    const double length = l ? l->number : 1.0;
    geometry = "<cylinder><radius>" + num(radius) + "</radius><length>" + num(length) +
               "</length></cylinder>";
    *z = length / 2;
  } else if (kind == "sphere") {
    const auto* r = p.get("radius_m");
    const double radius = r ? r->number : 0.25;
    geometry = "<sphere><radius>" + num(radius) + "</radius></sphere>";
    *z = radius;
  } else {
    double sx = 0.5, sy = 0.5, sz = 0.5;
    if (const auto* s = p.get("size"); s && s->items.size() == 3) {
      sx = s->items[0].number;
      sy = s->items[1].number;
      sz = s->items[2].number;
    }
    geometry = "<box><size>" + num(sx) + " " + num(sy) + " " + num(sz) + "</size></box>";
    *z = sz / 2;
  }
  return "<sdf version=\"1.9\"><model name=\"" + name +
         "\"><static>true</static><link name=\"link\"><collision name=\"collision\"><geometry>" +
         geometry + "</geometry></collision></link></model></sdf>";
}

enum class Trigger { kAt, kAfter, kWhen };

struct EntryState {
  bool started = false;
  bool ended = false;
  bool running = false;  // an occurrence is in progress
  std::string status = "pending";
  std::string detail;
  double started_s = -1;
  double ended_s = -1;
  uint64_t occurrences = 0;
  std::optional<SimTime> stop_at;  // cmd_vel / link.down with duration_s
  std::optional<SimTime> next_at;  // every: the next occurrence
  std::string failed_code;         // every: the first occurrence that did not end ok
  std::string goal_id;             // navigate_to_pose: the current goal's id
};

bool ok_code(const std::string& code) { return code == "ok" || code == "succeeded"; }

}  // namespace

struct Timeline::Impl {
  const RunPlan& plan;
  TimelineHooks hooks;
  std::vector<EntryState> st;
  std::vector<Trigger> trigger;
  std::vector<std::optional<scenario::Condition>> when;
  SimTime now = SimTime::zero();
  SimTime wall = SimTime::zero();
  bool cancelled = false;
  // The world's hold.
  bool held = false;
  SimTime held_since_wall;
  Duration held_wall = Duration::zero();
  std::optional<size_t> pause_entry;  // a sim.pause with duration_s in effect
  SimTime pause_until_wall;
  std::optional<size_t> step_entry;  // a sim.step in progress
  SimTime step_target;
  bool hold_request = false;
  std::set<std::string> awaiting_ack;  // goal ids whose acceptance is awaited
  SimTime last_hold_time = SimTime::infinite();
  uint64_t holds = 0;
  uint64_t commands = 0;
  // Inside advance() or a sample the engine made itself: the engine's thread is not in the middle
  // of a sleep, so the world can still be held at now(). Clock actions triggered inside a
  // delivery (the engine has already announced its next wake) wait for that wake.
  bool in_control = false;
  std::vector<size_t> deferred;
  std::string failure;  // the first entry that ended with a status other than ok
  std::string fail_at_start;          // a fault that could not act: its entry ends failed
  std::optional<size_t> restart_now;  // a kill_stack restarted in the same instant

  Impl(const RunPlan& p, TimelineHooks h) : plan(p), hooks(std::move(h)) {
    st.resize(plan.timeline.size());
    for (const PlannedEntry& pe : plan.timeline) {
      const scenario::TimelineEntry& te = *pe.entry;
      trigger.push_back(te.after ? Trigger::kAfter : te.when ? Trigger::kWhen : Trigger::kAt);
      std::optional<scenario::Condition> c;
      if (te.when) {
        auto compiled = scenario::Condition::compile(te.when->condition, {"value"});
        if (compiled) c = *compiled;  // validation compiled it already
      }
      when.push_back(c);
      if (te.every) st[when.size() - 1].next_at = SimTime::zero() + te.at;
    }
  }

  const scenario::TimelineEntry& te(size_t i) const { return *plan.timeline[i].entry; }
  SimTime due(size_t i) const { return SimTime::zero() + te(i).at; }
  std::optional<SimTime> until(size_t i) const {
    if (!te(i).until) return std::nullopt;
    return SimTime::zero() + *te(i).until;
  }
  // every / when without until_s: they end once the rest of the timeline has.
  bool open_ended(size_t i) const {
    return !te(i).until && (te(i).every || trigger[i] == Trigger::kWhen);
  }

  void event(const std::string& name, json fields) {
    if (hooks.event) hooks.event(name, fields);
  }
  void say(const std::string& line) {
    if (hooks.say) hooks.say(line);
  }
  void publish(const std::string& topic, std::string payload, std::string_view type) {
    hooks.publish(topic, std::move(payload), std::string(type));
  }

  void hold(bool on, const std::string& label) {
    if (held == on) return;
    held = on;
    ++commands;
    if (on) {
      held_since_wall = wall;
    } else {
      held_wall = held_wall + (wall - held_since_wall);
    }
    event(on ? "clock.pause" : "clock.resume", {{"label", label}});
    if (hooks.world_held) hooks.world_held(on);
  }

  std::vector<size_t> dependents(size_t i) const {
    std::vector<size_t> out;
    const scenario::TimelineEntry& ref = te(i);
    for (size_t j = 0; j < st.size(); ++j) {
      const auto& after = te(j).after;
      if (after && (*after == ref.label || *after == ref.name) && !st[j].started && !st[j].ended) {
        out.push_back(j);
      }
    }
    return out;
  }

  void skip(size_t i, const std::string& why, bool quiet = false) {
    EntryState& es = st[i];
    es.ended = true;
    es.running = false;
    es.next_at.reset();
    es.status = "skipped";
    es.detail = why;
    if (!quiet) event("action.skipped", {{"label", te(i).label}, {"detail", why}});
    for (size_t j : dependents(i)) skip(j, te(i).label + " was skipped", quiet);
  }

  void end_entry(size_t i, const std::string& code, const std::string& detail) {
    EntryState& es = st[i];
    if (es.ended) return;
    es.ended = true;
    es.running = false;
    es.status = code;
    if (!detail.empty()) es.detail = detail;
    es.ended_s = to_seconds(now);
    const std::string& label = te(i).label;
    if (te(i).every) {
      event("action.complete", {{"label", label},
                                {"status", code},
                                {"occurrences", es.occurrences},
                                {"detail", es.detail}});
    }
    const bool ok = ok_code(code);
    if (!ok && failure.empty()) {
      failure = "timeline entry " + label + " (" + te(i).action + ") ended " + code +
                (es.detail.empty() ? "" : ": " + es.detail);
    }
    for (size_t j : dependents(i)) {
      if (ok) {
        start(j);
      } else {
        skip(j, label + " ended " + code);
      }
    }
  }

  // One occurrence ended (an entry without every: the entry).
  void end_occurrence(size_t i, const std::string& code, const std::string& detail) {
    EntryState& es = st[i];
    if (es.ended || !es.running) return;
    es.running = false;
    es.stop_at.reset();
    const std::string& label = te(i).label;
    event("action.end", {{"label", label}, {"status", code}, {"detail", detail}});
    say("action " + label + " " + code + (detail.empty() ? "" : ": " + detail));
    if (hooks.on_action) hooks.on_action(label, ActionEvent::kEnd, now, code);
    if (te(i).every) {
      if (!ok_code(code) && es.failed_code.empty()) {
        es.failed_code = code;
        es.detail = "occurrence " + std::to_string(es.occurrences) + " ended " + code +
                    (detail.empty() ? "" : ": " + detail);
      }
      if (!es.next_at) end_entry(i, es.failed_code.empty() ? "ok" : es.failed_code, "");
      return;
    }
    end_entry(i, code, detail);
  }

  // The end of a held effect (cmd_vel's, link.down's or a fault's duration_s, a kill_stack's
  // restart, or a cancel): the entry's status and detail.
  std::pair<std::string, std::string> stop(size_t i) {
    const scenario::TimelineEntry& e = te(i);
    if (e.action == "link.down") {
      if (hooks.link) hooks.link(e.vehicle, false);
    } else if (e.action.starts_with("fault.")) {
      if (e.action == "fault.kill_stack" && cancelled) {
        return {"cancelled", "not restarted: the timeline was cancelled"};
      }
      if (!hooks.fault) return {"failed", "no fault hook"};
      const FaultOutcome out = hooks.fault(e, false);
      if (!out.error.empty()) return {"failed", out.error};
      if (e.action == "fault.kill_stack" && !cancelled && flag(e, "resend_goals", true)) {
        resend_goals(e.vehicle, e.label);
      }
      return {"ok", out.detail};
    } else {
      publish(Session::cmd_vel_topic(e.vehicle), twist_payload(0, 0), msgs::kTwist);
    }
    return {"ok", ""};
  }

  static bool flag(const scenario::TimelineEntry& e, std::string_view key, bool dflt) {
    const auto* v = e.params.get(key);
    return v && v->kind == scenario::ParamValue::Kind::kBool ? v->boolean : dflt;
  }

  // The vehicle's running navigate_to_pose entries: their goal again, under the same id (the
  // stack that had it was killed and is back), or ended aborted (it is not coming back).
  void resend_goals(const std::string& vehicle, const std::string& by) {
    for (size_t j = 0; j < st.size(); ++j) {
      const PlannedEntry& pe = plan.timeline[j];
      if (te(j).action != "navigate_to_pose" || te(j).vehicle != vehicle || !st[j].running) {
        continue;
      }
      publish(Session::goal_topic(vehicle),
              msgs::encode(msgs::NavGoal{st[j].goal_id, pe.goal->x, pe.goal->y, pe.goal->yaw}),
              "fieldproof.msgs.NavigateToPoseGoal");
      awaiting_ack.insert(st[j].goal_id);
      hold_request = true;
      event("action.resent", {{"label", te(j).label}, {"goal_id", st[j].goal_id}, {"by", by}});
    }
  }
  void abort_goals(const std::string& vehicle, const std::string& why) {
    for (size_t j = 0; j < st.size(); ++j) {
      if (te(j).action == "navigate_to_pose" && te(j).vehicle == vehicle && st[j].running) {
        end_occurrence(j, "aborted", why);
      }
    }
  }

  // fault.*: the effect starts now (the hook), for duration_s or until the kill's restart.
  void start_fault(size_t i, json& params, std::optional<std::string>& ends) {
    const scenario::TimelineEntry& e = te(i);
    EntryState& es = st[i];
    if (!hooks.fault) {
      ends = "";
      fail_at_start = "this run cannot carry out faults";
      return;
    }
    const FaultOutcome out = hooks.fault(e, true);
    params = out.params;
    if (!out.error.empty()) {
      ends = "";
      fail_at_start = out.error;
      return;
    }
    if (e.action != "fault.kill_stack") {
      es.stop_at = now + e.params.get("duration_s")->duration;
      return;
    }
    const bool restart = flag(e, "restart", false);
    if (!restart || !flag(e, "resend_goals", true)) {
      abort_goals(e.vehicle, "the stack of " + e.vehicle + " was killed by " + e.label +
                                 (restart ? "" : " and not restarted"));
    }
    if (!restart) {
      ends = out.detail;
      return;
    }
    const auto* after = e.params.get("restart_after_s");
    es.stop_at = now + (after ? after->duration : Duration::zero());
    // Restarted at once: no later wake is needed.
    if (*es.stop_at <= now) restart_now = i;
  }

  // What the entry's action does when it starts: `params` are recorded with action.start, and
  // `ends` is set when the action ends at once (with that detail).
  void begin_action(size_t i, json& params, std::optional<std::string>& ends) {
    const PlannedEntry& pe = plan.timeline[i];
    const scenario::TimelineEntry& e = te(i);
    EntryState& es = st[i];
    if (e.action == "navigate_to_pose") {
      es.goal_id = es.occurrences > 1 ? e.label + "#" + std::to_string(es.occurrences) : e.label;
      publish(Session::goal_topic(e.vehicle),
              msgs::encode(msgs::NavGoal{es.goal_id, pe.goal->x, pe.goal->y, pe.goal->yaw}),
              "fieldproof.msgs.NavigateToPoseGoal");
      params = {{"goal", pe.goal_label}};
      awaiting_ack.insert(es.goal_id);
      hold_request = true;
    } else if (e.action == "cmd_vel") {
      const auto* lx = e.params.get("linear_x");
      const auto* az = e.params.get("angular_z");
      const double lin = lx ? lx->number : 0.0;
      const double ang = az ? az->number : 0.0;
      publish(Session::cmd_vel_topic(e.vehicle), twist_payload(lin, ang), msgs::kTwist);
      params = {{"linear_x", lin}, {"angular_z", ang}};
      const auto* d = e.params.get("duration_s");
      if (d && d->kind == scenario::ParamValue::Kind::kDuration) {
        es.stop_at = now + d->duration;
      } else {
        ends = "";
      }
    } else if (e.action == "sim.pause") {
      const auto* d = e.params.get("duration_s");
      hold(true, e.label);
      if (d && d->kind == scenario::ParamValue::Kind::kDuration) {
        params = {{"duration_s", to_seconds(d->duration)}};
        pause_entry = i;
        pause_until_wall = wall + d->duration;
      } else {
        ends = "the world is paused until a sim.resume or sim.step";
      }
    } else if (e.action == "sim.resume") {
      if (pause_entry) {
        const size_t p = *pause_entry;
        pause_entry.reset();
        end_occurrence(p, "ok", "resumed by " + e.label);
      }
      ends = held ? "" : "the world was running";
      hold(false, e.label);
    } else if (e.action == "sim.step") {
      const bool was_held = held;
      hold(true, e.label);
      step_entry = i;
      step_target = now + pe.step;
      ++commands;
      params = {{"duration_s", to_seconds(pe.step)},
                {"steps", plan.physics_step.ns() > 0 ? pe.step.ns() / plan.physics_step.ns() : 0}};
      event("clock.step", {{"label", e.label},
                           {"duration_s", to_seconds(pe.step)},
                           {"from_s", to_seconds(now)},
                           {"to_s", to_seconds(step_target)},
                           {"paused_first", !was_held}});
    } else if (e.action == "spawn_model") {
      start_spawn(i, params, ends);
    } else if (e.action.starts_with("fault.")) {
      start_fault(i, params, ends);
    } else if (e.action == "link.down" || e.action == "link.up") {
      const bool down = e.action == "link.down";
      if (hooks.link) hooks.link(e.vehicle, down);
      const auto* d = e.params.get("duration_s");
      if (down && d && d->kind == scenario::ParamValue::Kind::kDuration) {
        es.stop_at = now + d->duration;
        params = {{"duration_s", to_seconds(d->duration)}};
      } else {
        ends = "";
      }
    } else if (e.action == "remove_model") {
      const auto* m = e.params.get("model");
      ignition::msgs::Entity ent;
      ent.set_name(m ? m->string : "");
      publish("/world/" + plan.world_name + "/remove", msgs::serialize(ent), msgs::kEntity);
      params = {{"model", ent.name()}};
      ends = "";
    }
  }

  // spawn_model: a shape (resting on the ground) or a vehicle's model file, at the entry's pose.
  void start_spawn(size_t i, json& params, std::optional<std::string>& ends) {
    const PlannedEntry& pe = plan.timeline[i];
    const scenario::TimelineEntry& e = te(i);
    const auto* m = e.params.get("model");
    const std::string name = m ? m->string : e.label;
    const world::Pose2D pose = pe.pose.value_or(world::Pose2D{});
    ignition::msgs::EntityFactory f;
    f.set_name(name);
    const auto* shape = e.params.get("shape");
    double z = 0;
    if (shape && shape->string == "vehicle") {
      // The robot model's file, resolved when the run was planned (else as the scenario names
      // it: the world resolves it like vehicles[].model).
      const auto* vm = e.params.get("vehicle_model");
      f.set_sdf_filename(!pe.vehicle_model_file.empty() ? pe.vehicle_model_file
                                                        : (vm ? vm->string : ""));
    } else {
      f.set_sdf(shape_sdf(name, e.params, &z));  // z: resting on the ground
    }
    // A pose's z, when written, places the model at that height (its centre for a shape).
    if (const auto* at = e.params.get("pose");
        at && at->kind == scenario::ParamValue::Kind::kPlacement && at->placement.z) {
      z = *at->placement.z;
    }
    auto* p = f.mutable_pose();
    p->mutable_position()->set_x(pose.x);
    p->mutable_position()->set_y(pose.y);
    p->mutable_position()->set_z(z);
    p->mutable_orientation()->set_w(std::cos(pose.yaw / 2));
    p->mutable_orientation()->set_z(std::sin(pose.yaw / 2));
    publish("/world/" + plan.world_name + "/create", msgs::serialize(f), msgs::kEntityFactory);
    params = {{"model", name}, {"x", pose.x}, {"y", pose.y}, {"z", z}, {"yaw", pose.yaw}};
    ends = "";
  }

  void start(size_t i) {
    if (cancelled) return;
    const scenario::TimelineEntry& e = te(i);
    EntryState& es = st[i];
    if (es.ended || es.running) return;
    if (!in_control && e.action.rfind("sim.", 0) == 0) {
      deferred.push_back(i);
      return;
    }
    if (!es.started) es.started_s = to_seconds(now);
    es.started = true;
    es.running = true;
    es.status = "running";
    ++es.occurrences;
    if (now != last_hold_time) {
      last_hold_time = now;
      ++holds;
    }
    json params = json::object();
    std::optional<std::string> ends;  // ends at once with this detail
    begin_action(i, params, ends);
    json start_fields = {
        {"label", e.label}, {"action", e.action}, {"t_s", to_seconds(now)}, {"params", params}};
    if (!e.vehicle.empty()) start_fields["vehicle"] = e.vehicle;
    if (trigger[i] != Trigger::kAfter) start_fields["at_s"] = to_seconds(e.at);
    if (e.every) start_fields["occurrence"] = es.occurrences;
    event("action.start", start_fields);
    say("action " + e.label + " started");
    if (hooks.on_action) hooks.on_action(e.label, ActionEvent::kStart, now, "running");
    if (!fail_at_start.empty()) {
      std::string why;
      why.swap(fail_at_start);
      end_occurrence(i, "failed", why);
    } else if (ends) {
      end_occurrence(i, "ok", *ends);
    } else if (restart_now == i) {
      restart_now.reset();
      const auto [code, detail] = stop(i);
      end_occurrence(i, code, detail);
    }
  }

  bool armed(size_t i) const {
    const EntryState& es = st[i];
    if (es.started || es.ended || trigger[i] != Trigger::kWhen) return false;
    if (now < due(i)) return false;
    const auto u = until(i);
    return !u || now < *u;
  }

  void check_when(size_t i, const scenario::Value& value, const std::string& shown) {
    if (!when[i]) return;
    const auto r = when[i]->holds({{"value", value}});
    if (!r.ok() || !*r) return;
    event("action.triggered", {{"label", te(i).label},
                               {"condition", te(i).when->condition},
                               {"value", shown},
                               {"t_s", to_seconds(now)}});
    start(i);
  }

  void close_open_entries() {
    bool others_done = false;
    bool any_finite = false;
    for (size_t i = 0; i < st.size(); ++i) {
      if (open_ended(i)) continue;
      any_finite = true;
      if (!st[i].ended) return;
    }
    others_done = any_finite;
    if (!others_done) return;
    for (size_t i = 0; i < st.size(); ++i) {
      if (!open_ended(i) || st[i].ended) continue;
      if (te(i).every) {
        st[i].next_at.reset();
        if (!st[i].running) {
          end_entry(i, st[i].failed_code.empty() ? "ok" : st[i].failed_code,
                    "repeated " + std::to_string(st[i].occurrences) +
                        " times until the rest of the timeline ended");
        }
      } else if (!st[i].started) {
        skip(i, "the rest of the timeline ended before the condition held");
      }
    }
  }

  void advance(SimTime t, SimTime w) {
    now = t;
    wall = w;
    if (cancelled) return;
    in_control = true;
    std::vector<size_t> waiting;
    waiting.swap(deferred);
    for (size_t i : waiting) start(i);
    if (pause_entry && wall >= pause_until_wall) {
      const size_t p = *pause_entry;
      pause_entry.reset();
      hold(false, te(p).label);
      end_occurrence(p, "ok", "");
    }
    if (step_entry && now >= step_target) {
      const size_t s = *step_entry;
      step_entry.reset();
      end_occurrence(s, "ok", "");
    }
    for (size_t i = 0; i < st.size(); ++i) {
      EntryState& es = st[i];
      if (es.ended) continue;
      const auto u = until(i);
      if (es.stop_at && now >= *es.stop_at) {
        const auto [code, detail] = stop(i);
        end_occurrence(i, code, detail);
        if (es.ended) continue;
      }
      if (te(i).every && es.next_at) {
        if (u && *es.next_at >= *u) {
          es.next_at.reset();
          if (!es.running) {
            end_entry(i, es.failed_code.empty() ? "ok" : es.failed_code,
                      "repeated " + std::to_string(es.occurrences) + " times");
          }
          continue;
        }
        if (now >= *es.next_at && !es.running) {
          es.next_at = *es.next_at + *te(i).every;
          if (u && *es.next_at >= *u) es.next_at.reset();
          start(i);
          continue;
        }
      } else if (trigger[i] == Trigger::kAt && !es.started && now >= due(i)) {
        start(i);
        continue;
      }
      if (trigger[i] == Trigger::kWhen && !es.started) {
        if (u && now >= *u) {
          skip(i, "until_s " + format_seconds(*te(i).until) +
                      " s passed before the condition held (" + te(i).when->condition + ")");
          continue;
        }
        if (armed(i) && te(i).when->signal.metric == "sim_time") {
          check_when(i, scenario::Value(to_seconds(now)), num(to_seconds(now)));
        }
      }
    }
    close_open_entries();
    in_control = false;
  }

  void on_sample(const Sample& s, SimTime t, bool from_delivery) {
    now = t;
    if (cancelled) return;
    in_control = !from_delivery;
    for (size_t i = 0; i < st.size(); ++i) {
      if (!armed(i)) continue;
      const PlannedEntry& pe = plan.timeline[i];
      const scenario::Signal& sig = te(i).when->signal;
      if (!pe.when_topic.empty()) {
        if (s.kind != Sample::Kind::kValue || s.topic != pe.when_topic) continue;
        const json* f = assertions::field_at(s.message, sig.field);
        if (!f) continue;
        check_when(i, assertions::to_value(*f), f->dump());
      } else if (sig.metric == "rtf") {
        if (s.kind != Sample::Kind::kClock) continue;
        check_when(i, scenario::Value(s.rtf), num(s.rtf));
      } else if (sig.metric == "sim_time") {
        check_when(i, scenario::Value(to_seconds(now)), num(to_seconds(now)));
      } else {
        if (s.kind != Sample::Kind::kPose || s.vehicle != pe.when_vehicle) continue;
        double v = 0;
        if (sig.metric == "x") {
          v = s.pose.x;
        } else if (sig.metric == "y") {
          v = s.pose.y;
        } else if (sig.metric == "yaw") {
          v = s.pose.yaw;
        } else if (sig.metric == "distance_to" && pe.when_target) {
          v = std::hypot(s.pose.x - pe.when_target->x, s.pose.y - pe.when_target->y);
        }
        check_when(i, scenario::Value(v), num(v));
      }
    }
    in_control = false;
  }
};

Timeline::Timeline(const RunPlan& plan, TimelineHooks hooks)
    : impl_(std::make_unique<Impl>(plan, std::move(hooks))) {}
Timeline::~Timeline() = default;

void Timeline::advance(SimTime now, SimTime wall) { impl_->advance(now, wall); }
void Timeline::on_sample(const Sample& sample, SimTime now, bool from_delivery) {
  impl_->on_sample(sample, now, from_delivery);
}

void Timeline::on_nav_status(const std::string& goal_id, const std::string& code, bool final,
                             const std::string& reason, SimTime now) {
  Impl& m = *impl_;
  m.now = now;
  m.awaiting_ack.erase(goal_id);
  for (size_t i = 0; i < m.st.size(); ++i) {
    EntryState& es = m.st[i];
    if (es.goal_id != goal_id || !es.running) continue;
    m.event("action.status", {{"label", m.te(i).label}, {"status", code}, {"reason", reason}});
    if (final) m.end_occurrence(i, code, reason);
    return;
  }
}

SimTime Timeline::next_due(SimTime now) const {
  const Impl& m = *impl_;
  SimTime next = SimTime::infinite();
  const auto consider = [&](SimTime t) {
    if (t > now && t < next) next = t;
  };
  for (size_t i = 0; i < m.st.size(); ++i) {
    const EntryState& es = m.st[i];
    if (es.ended) continue;
    if (es.stop_at) consider(*es.stop_at);
    if (es.next_at) consider(*es.next_at);
    if (m.trigger[i] == Trigger::kAt && !es.started) consider(m.due(i));
    if (!m.deferred.empty()) consider(now + Duration::from_ns(1));
    if (m.trigger[i] == Trigger::kWhen && !es.started) {
      consider(m.due(i));
      if (const auto u = m.until(i)) consider(*u);
    }
    if (m.te(i).every && m.until(i)) consider(*m.until(i));
  }
  if (m.step_entry) consider(m.step_target);
  return next;
}

bool Timeline::held() const { return impl_->held; }
std::optional<SimTime> Timeline::step_target() const {
  if (!impl_->step_entry) return std::nullopt;
  return impl_->step_target;
}
bool Timeline::take_hold_request() {
  const bool r = impl_->hold_request;
  impl_->hold_request = false;
  return r;
}
bool Timeline::holds_settled() const { return impl_->awaiting_ack.empty(); }
void Timeline::release_holds() { impl_->awaiting_ack.clear(); }

bool Timeline::complete() const {
  for (const EntryState& es : impl_->st) {
    if (!es.ended) return false;
  }
  return true;
}

void Timeline::cancel(const std::string& why, SimTime now) {
  Impl& m = *impl_;
  if (m.cancelled) return;
  m.now = now;
  m.cancelled = true;
  m.event("timeline.cancelled", {{"reason", why}});
  for (size_t i = 0; i < m.st.size(); ++i) {
    EntryState& es = m.st[i];
    if (es.ended) continue;
    if (es.stop_at) m.stop(i);
    es.ended = true;
    es.next_at.reset();
    es.status = es.running ? "cancelled" : "skipped";
    es.running = false;
    es.detail = why;
    if (es.status == "cancelled") es.ended_s = to_seconds(now);
    m.event(es.status == "cancelled" ? "action.cancelled" : "action.skipped",
            {{"label", m.te(i).label}, {"detail", why}});
    if (m.hooks.on_action) m.hooks.on_action(m.te(i).label, ActionEvent::kEnd, now, es.status);
  }
  if (m.held) m.hold(false, "cancel");
}

bool Timeline::cancelled() const { return impl_->cancelled; }
const std::string& Timeline::failure() const { return impl_->failure; }

void Timeline::abandon() {
  Impl& m = *impl_;
  for (EntryState& es : m.st) {
    if (es.ended) continue;
    es.status = es.running ? "cancelled" : "skipped";
    es.ended = true;
    es.running = false;
  }
  if (m.held) m.hold(false, "end");
}

uint64_t Timeline::holds() const { return impl_->holds; }
uint64_t Timeline::commands() const { return impl_->commands; }
Duration Timeline::held_wall() const {
  const Impl& m = *impl_;
  return m.held ? m.held_wall + (m.wall - m.held_since_wall) : m.held_wall;
}

json Timeline::to_json() const {
  const Impl& m = *impl_;
  json tl = json::array();
  for (size_t i = 0; i < m.st.size(); ++i) {
    const PlannedEntry& pe = m.plan.timeline[i];
    const scenario::TimelineEntry& e = *pe.entry;
    const EntryState& es = m.st[i];
    json j = {{"label", e.label}, {"action", e.action}, {"status", es.status}};
    if (m.trigger[i] != Trigger::kAfter) j["at_s"] = to_seconds(e.at);
    if (e.after) j["after"] = *e.after;
    if (e.when) j["when"] = e.when->condition;
    j["trigger"] = m.trigger[i] == Trigger::kAfter  ? "after"
                   : m.trigger[i] == Trigger::kWhen ? "when"
                   : e.every                        ? "every"
                                                    : "at";
    if (!e.vehicle.empty()) j["vehicle"] = e.vehicle;
    if (pe.goal) {
      j["goal"] = {
          {"name", pe.goal_label}, {"x", pe.goal->x}, {"y", pe.goal->y}, {"yaw", pe.goal->yaw}};
    }
    if (e.every) {
      j["every_s"] = to_seconds(*e.every);
      j["occurrences"] = es.occurrences;
    }
    if (e.until) j["until_s"] = to_seconds(*e.until);
    if (es.started_s >= 0) j["started_s"] = es.started_s;
    if (es.ended_s >= 0) j["ended_s"] = es.ended_s;
    if (!es.detail.empty()) j["detail"] = es.detail;
    tl.push_back(j);
  }
  return tl;
}

}  // namespace fieldproof::engine
