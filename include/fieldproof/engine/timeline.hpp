// The run's timeline: the scenario's entries started at their exact due simulated time by the
// engine's participant (docs/scenarios.md, sim.pause, sim.resume and sim.step).
//
//   TimelineHooks h;
//   h.publish = [&](const std::string& topic, std::string payload, const std::string& type) {
//     engine.publish(topic, std::move(payload), type);
//   };
//   Timeline tl(plan, std::move(h));
//   while (!tl.complete() && !tl.cancelled()) {
//     tl.advance(engine.now(), wall_now());        // due entries start, durations end
//     if (tl.held()) { if (auto t = tl.step_target()) engine.sleep_until(*t); else wait(10 ms); }
//     else engine.sleep_until(std::min(next_tick, tl.next_due(engine.now())));
//   }
//
// Triggers: `at` (the entry's due time), `every` (from at, each period, until until_s, exclusive;
// without until_s until the rest of the timeline has ended), `after` (the moment the named entry
// ends ok, at that exact simulated time; skipped with its dependents when it ended otherwise) and
// `when` (armed from the timeline's start until until_s: the first sample whose signal satisfies
// the condition starts the entry at that sample's time; on_sample() is fed by the observer and the
// clock monitor; sim_time is also checked at every advance()). A when entry still waiting at
// until_s is skipped; every and when entries without until_s end once every other entry has ended.
//
// Actions: navigate_to_pose (a goal on /model/<v>/navigate_to_pose/goal, ends with the final
// status: on_nav_status), cmd_vel (a Twist; with duration_s a zero Twist after that much simulated
// time, else ends at once), sim.pause (holds the world: with duration_s for that much wall time,
// else until a sim.resume or sim.step), sim.resume, sim.step (steps x the physics step or
// duration_s: the world, paused first if running, advances exactly that much and stays held),
// spawn_model and remove_model (ignition.msgs.EntityFactory / Entity on /world/<w>/create and
// /remove; the world applies them before its next physics step), link.down (the vehicle's links
// down: for duration_s, then up again and the entry ends ok; without it the entry ends at once)
// and link.up, and the faults: fault.drop_topic, fault.delay_topic and fault.freeze_sensor (for
// duration_s, through the fault hook), fault.kill_stack (at once; with restart, the entry runs
// until the stack is started again restart_after_s later; the vehicle's running
// navigate_to_pose entries end aborted at the kill, or, with restart and resend_goals, get their
// goal again, under the same id, once the stack is back). "Held" means the engine does
// not announce past now(): the engine is a regulating participant, so the world stands still.
//
// cancel() (on_fail: abort) ends running entries as "cancelled" and skips pending ones.
// Not thread-safe: call from the engine's thread (its delivery callbacks included).
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fieldproof/assertions/checker.hpp"
#include "fieldproof/engine/plan.hpp"
#include "fieldproof/time/duration.hpp"

namespace fieldproof::engine {

// What a fault hook did (TimelineHooks::fault).
struct FaultOutcome {
  std::string error;               // why it could not act ("" when it did): the entry ends failed
  std::string detail;              // the entry's detail when it ends (what happened)
  nlohmann::json params = nlohmann::json::object();  // action.start's params (a start)
};

struct TimelineHooks {
  // Publishes on the bus at the engine's now() (required).
  std::function<void(const std::string& topic, std::string payload, const std::string& type)>
      publish;
  // engine.log events (name, fields); may be empty.
  std::function<void(const std::string& name, const nlohmann::json& fields)> event;
  // Progress lines ("action drive started"); may be empty.
  std::function<void(const std::string& line)> say;
  // The evaluator's on_action (label, event, t, status); may be empty.
  std::function<void(const std::string& label, assertions::ActionEvent event, SimTime t,
                     const std::string& status)>
      on_action;
  // The world was held (true) or released (false) by the timeline: the coordinator's pause, so
  // status and the pace regulator see it; may be empty.
  std::function<void(bool held)> world_held;
  // link.down (down = true) and link.up: the vehicle's radio links (network.hpp); may be empty
  // when the scenario has no network (validation refuses the actions then).
  std::function<void(const std::string& vehicle, bool down)> link;
  // fault.* actions (docs/network.md, faults): the entry's effect starts (start = true, when it
  // starts) or ends (after its duration_s; fault.kill_stack: its restart, restart_after_s after
  // the kill). May be empty when the timeline has no fault (the entries then end failed).
  std::function<FaultOutcome(const scenario::TimelineEntry& entry, bool start)> fault;
};

class Timeline {
 public:
  Timeline(const RunPlan& plan, TimelineHooks hooks);
  ~Timeline();
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;

  // Starts what is due at or before `now` (at, every, sim_time conditions), ends cmd_vel
  // durations, sim.step targets reached, sim.pause wall durations passed and when / every
  // entries past until_s. `wall` is the engine's wall clock.
  void advance(SimTime now, SimTime wall);
  // A sample of the run (observer, clock monitor): `when` triggers watching it are checked.
  // Entries it triggers start at `now` (the engine's clock, the sample's time in a delivery).
  // from_delivery: called inside a delivery callback (the engine is in the middle of a sleep and
  // cannot hold the world there any more): sim.pause / sim.resume / sim.step entries triggered
  // then (and those chained by `after` to an entry ending in a delivery) start at the engine's
  // next wake instead, which next_due() makes immediate.
  void on_sample(const assertions::Sample& sample, SimTime now, bool from_delivery = true);
  // A navigation status of `vehicle` (the goal id is the entry's label, "#n" for repetitions).
  void on_nav_status(const std::string& goal_id, const std::string& code, bool final,
                     const std::string& reason, SimTime now);

  // The earliest simulated time after `now` at which advance() has something to do (infinite
  // when nothing is scheduled).
  SimTime next_due(SimTime now) const;
  // The world must stand still (a sim.pause or sim.step in effect).
  bool held() const;
  // While held: the time a sim.step advances the world to (exactly), if one is in progress.
  std::optional<SimTime> step_target() const;
  // Entries started at `now` whose effect is to be confirmed in the same instant (a goal's
  // acceptance): the engine holds the world at now while deliveries stamped now arrive. Returns
  // and clears the request.
  bool take_hold_request();
  // Whether a goal whose hold was requested has been accepted (or answered) yet.
  bool holds_settled() const;
  // The hold ended without an answer (10 s of wall time): stop waiting for those goals.
  void release_holds();

  // Every entry has ended (or been skipped).
  bool complete() const;
  // on_fail: abort: running entries end "cancelled", pending ones are "skipped" (detail `why`).
  void cancel(const std::string& why, SimTime now);
  bool cancelled() const;
  // A failed action: the first entry that ended with a status other than ok ("timeline entry
  // into_crate (navigate_to_pose) ended rejected: <detail>"), empty while there is none. The
  // engine ends the run failed with it as the reason (docs/assertions.md, verdicts).
  const std::string& failure() const;
  // The run ended early (timeout, interrupt, error): the same statuses, without events.
  void abandon();

  // How often the world was held at a due time while entries started there; clock commands
  // (pause, resume, step) the timeline sent; wall time the world was held.
  uint64_t holds() const;
  uint64_t commands() const;
  Duration held_wall() const;
  // run.json's timeline: one object per entry (label, action, trigger, at_s, status, started_s,
  // ended_s, detail, vehicle, goal, occurrences).
  nlohmann::json to_json() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace fieldproof::engine
