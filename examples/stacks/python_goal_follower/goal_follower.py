#!/usr/bin/env python3
"""A small go-to-goal controller for fieldproof's UGV, in Python, using only the installed
`fieldproof` package (the participant client and the generated messages).

What it does (docs/vehicle-interface.md is the contract):
  * joins the coordinator as $FIELDPROOF_PARTICIPANT, in the role $FIELDPROOF_ROLE;
  * reads /model/<vehicle>/odometry (or the world's ground-truth poses, pose_source: ground_truth)
    and /model/<vehicle>/scan;
  * answers /model/<vehicle>/navigate_to_pose/goal on .../status: REJECTED (not active yet, no id,
    a pose that is not finite or outside a sane range), else ACCEPTED; a new goal while one runs
    CANCELS the old one; then SUCCEEDED within goal_tolerance, or ABORTED (blocked too long, out
    of time); .../feedback once per feedback_period;
  * drives with /model/<vehicle>/cmd_vel straight at the goal; when the lidar sees something in
    the corridor ahead, it steers to the nearest clear heading (keeping to the side it chose) and
    stops rather than drive into something closer than stop_distance;
  * reports its lifecycle on /model/<vehicle>/lifecycle (node goal_follower): inactive at start,
    active once it has a pose and a scan, finalized when it ends;
  * exits 0 after leaving on SIGTERM (or when the coordinator ends the run).

Every decision is a function of the messages received and of simulated time (never the wall
clock), so in lockstep the same inputs give the same outputs.

Parameters ($FIELDPROOF_PARAMS_FILE, a JSON object; every key optional, see DEFAULTS). An unknown
key or a bad value is an error naming the key (exit 2).
"""

import json
import math
import os
import signal
import sys

import fieldproof
from fieldproof import msgs
from fieldproof.time import seconds, to_seconds

NODE = "goal_follower"

DEFAULTS = {
    "max_linear": 0.8,          # m/s
    "max_angular": 1.2,         # rad/s
    "goal_tolerance": 0.25,     # m: SUCCEEDED within this distance
    "control_period": 0.05,     # s of simulated time between two commands
    "feedback_period": 1.0,     # s
    "look_ahead": 1.5,          # m: how far ahead the corridor is checked
    "corridor_half_width": 0.5, # m: robot half-diagonal (0.36) plus a margin
    "stop_distance": 0.45,      # m: never drive forward with something this close ahead
    "heading_step_deg": 10.0,   # candidate headings around the goal's bearing
    "max_detour_deg": 120.0,
    "blocked_timeout": 10.0,    # s without any clear heading: ABORTED
    "goal_timeout": 0.0,        # s from acceptance: ABORTED (0: none)
    "max_goal_distance": 100.0, # m from the vehicle: farther goals are REJECTED
    "max_coordinate": 1000.0,   # m: |x| or |y| beyond this is REJECTED
    "pose_source": "odometry",  # odometry | ground_truth
}


class ParameterError(Exception):
    pass


def load_parameters(path):
    params = dict(DEFAULTS)
    if not path:
        return params
    try:
        with open(path, encoding="utf-8") as f:
            given = json.load(f)
    except OSError as e:
        raise ParameterError(f"{path}: cannot read the parameters file: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise ParameterError(f"{path}:{e.lineno}:{e.colno}: not JSON: {e.msg}") from None
    if not isinstance(given, dict):
        raise ParameterError(f"{path}: the parameters must be a JSON object")
    for key, value in given.items():
        if key not in DEFAULTS:
            raise ParameterError(f"{path}: unknown parameter '{key}' (known: "
                                 f"{', '.join(sorted(DEFAULTS))})")
        if key == "pose_source":
            if value not in ("odometry", "ground_truth"):
                raise ParameterError(f"{path}: parameter 'pose_source' must be odometry or "
                                     f"ground_truth, not {value!r}")
        elif isinstance(value, bool) or not isinstance(value, (int, float)) or \
                not math.isfinite(value) or value < 0:
            raise ParameterError(f"{path}: parameter '{key}' must be a number >= 0, not "
                                 f"{value!r}")
        params[key] = value
    for key in ("max_linear", "max_angular", "control_period", "feedback_period",
                "heading_step_deg"):
        if params[key] <= 0:
            raise ParameterError(f"{path}: parameter '{key}' must be > 0")
    return params


def wrap(a):
    return math.atan2(math.sin(a), math.cos(a))


def yaw_of(q):
    return math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))


class GoalFollower:
    def __init__(self, p, vehicle, world, params):
        self.p = p
        self.vehicle = vehicle
        self.prm = params
        base = f"/model/{vehicle}"
        self.t_cmd = base + "/cmd_vel"
        self.t_status = base + "/navigate_to_pose/status"
        self.t_feedback = base + "/navigate_to_pose/feedback"
        self.t_lifecycle = base + "/lifecycle"
        self.pose = None          # (x, y, yaw)
        self.points = None        # the latest scan's hits, (x, y) in the vehicle's frame
        self.goal = None          # the active goal (a dict)
        self.active = False
        self.moving = False
        self.step = math.radians(params["heading_step_deg"])
        self.max_k = int(params["max_detour_deg"] / params["heading_step_deg"])

        if params["pose_source"] == "ground_truth":
            if not world:
                raise ParameterError("pose_source ground_truth needs FIELDPROOF_WORLD")
            p.subscribe(f"/world/{world}/pose/info", self.on_pose_v)
        else:
            p.subscribe(base + "/odometry", self.on_odometry)
        p.subscribe(base + "/scan", self.on_scan)
        p.subscribe(base + "/navigate_to_pose/goal", self.on_goal)
        self.lifecycle(msgs.LifecycleState.INACTIVE)
        p.create_timer(seconds(params["control_period"]), self.tick)

    # ---- output ----

    def log(self, text):
        print(f"[{to_seconds(self.p.now()):9.3f}] {self.vehicle}: {text}", file=sys.stderr,
              flush=True)

    def lifecycle(self, state):
        self.p.publish(self.t_lifecycle, msgs.LifecycleState(node=NODE, state=state))

    def status(self, goal_id, status, reason=""):
        self.p.publish(self.t_status, msgs.NavigateToPoseStatus(id=goal_id, status=status,
                                                                reason=reason))
        name = msgs.NavigateToPoseStatus.Status.Name(status)
        self.log(f"goal {goal_id}: {name}" + (f" ({reason})" if reason else ""))

    def command(self, linear, angular):
        t = msgs.Twist()
        now = self.p.now()
        t.header.stamp.sec = now // 1_000_000_000
        t.header.stamp.nsec = now % 1_000_000_000
        t.linear.x = linear
        t.angular.z = angular
        self.p.publish(self.t_cmd, t)
        self.moving = linear != 0.0 or angular != 0.0

    def stop(self):
        if self.moving:
            self.command(0.0, 0.0)

    # ---- input ----

    def on_odometry(self, m):
        o = msgs.Odometry.FromString(m.payload)
        self.set_pose(o.pose.position.x, o.pose.position.y, yaw_of(o.pose.orientation))

    def on_pose_v(self, m):
        for pose in msgs.Pose_V.FromString(m.payload).pose:
            if pose.name == self.vehicle:
                self.set_pose(pose.position.x, pose.position.y, yaw_of(pose.orientation))
                return

    def set_pose(self, x, y, yaw):
        if all(math.isfinite(v) for v in (x, y, yaw)):
            self.pose = (x, y, yaw)
            self.maybe_activate()

    def on_scan(self, m):
        s = msgs.LaserScan.FromString(m.payload)
        pts = []
        for i, r in enumerate(s.ranges):
            if not math.isfinite(r) or r < s.range_min or r >= s.range_max:
                continue
            a = s.angle_min + i * s.angle_step
            pts.append((r * math.cos(a), r * math.sin(a)))
        self.points = pts
        self.maybe_activate()

    def maybe_activate(self):
        if not self.active and self.pose is not None and self.points is not None:
            self.active = True
            self.lifecycle(msgs.LifecycleState.ACTIVE)
            self.log("active")

    def on_goal(self, m):
        S = msgs.NavigateToPoseStatus
        g = msgs.NavigateToPoseGoal.FromString(m.payload)
        x, y = g.pose.position.x, g.pose.position.y
        reason = None
        if not self.active:
            reason = "the stack is not active yet (no pose or no scan received)"
        elif not g.id:
            reason = "the goal has no id"
        elif not (math.isfinite(x) and math.isfinite(y)):
            reason = "the goal pose is not finite"
        elif max(abs(x), abs(y)) > self.prm["max_coordinate"]:
            reason = (f"goal ({x:.2f}, {y:.2f}) is beyond +/-{self.prm['max_coordinate']:g} m "
                      "(max_coordinate)")
        elif math.hypot(x - self.pose[0], y - self.pose[1]) > self.prm["max_goal_distance"]:
            reason = (f"goal ({x:.2f}, {y:.2f}) is more than {self.prm['max_goal_distance']:g} m "
                      "away (max_goal_distance)")
        if reason is not None:
            self.status(g.id, S.REJECTED, reason)
            return
        if self.goal is not None:
            self.status(self.goal["id"], S.CANCELED, f"preempted by goal {g.id}")
        now = self.p.now()
        self.goal = {"id": g.id, "x": x, "y": y, "accepted": now, "next_feedback": now,
                     "blocked_since": None, "side": 0}
        self.status(g.id, S.ACCEPTED)

    # ---- control ----

    def clear(self, rel, reach):
        """Whether the corridor along heading `rel` (vehicle frame) is free up to `reach` m."""
        c, s = math.cos(rel), math.sin(rel)
        hw = self.prm["corridor_half_width"]
        for px, py in self.points:
            along = px * c + py * s
            if along <= 0.0 or along > reach:
                continue
            if abs(py * c - px * s) < hw:
                return False
        return True

    def choose_heading(self, bearing, reach):
        g = self.goal
        if self.clear(bearing, reach):
            g["side"] = 0
            return bearing
        sides = (g["side"], -g["side"]) if g["side"] else (1, -1)
        for k in range(1, self.max_k + 1):
            for side in sides:
                rel = bearing + side * k * self.step
                if self.clear(rel, self.prm["look_ahead"]):
                    g["side"] = side
                    return rel
        return None

    def finish(self, status, reason=""):
        self.stop()
        self.status(self.goal["id"], status, reason)
        self.goal = None

    def tick(self):
        S = msgs.NavigateToPoseStatus
        g = self.goal
        if g is None or not self.active:
            self.stop()
            return
        now = self.p.now()
        x, y, yaw = self.pose
        dist = math.hypot(g["x"] - x, g["y"] - y)
        if dist <= self.prm["goal_tolerance"]:
            return self.finish(S.SUCCEEDED)
        if self.prm["goal_timeout"] > 0 and now - g["accepted"] >= seconds(self.prm["goal_timeout"]):
            return self.finish(S.ABORTED, f"not reached within {self.prm['goal_timeout']:g} s "
                                          f"({dist:.2f} m left)")
        if now >= g["next_feedback"]:
            self.p.publish(self.t_feedback, msgs.NavigateToPoseFeedback(
                id=g["id"], distance_remaining=dist))
            g["next_feedback"] = now + seconds(self.prm["feedback_period"])

        bearing = wrap(math.atan2(g["y"] - y, g["x"] - x) - yaw)
        heading = self.choose_heading(bearing, min(self.prm["look_ahead"], dist))
        if heading is None:
            self.stop()
            if g["blocked_since"] is None:
                g["blocked_since"] = now
                self.log("blocked: no clear heading; waiting")
            elif now - g["blocked_since"] >= seconds(self.prm["blocked_timeout"]):
                return self.finish(S.ABORTED, f"path blocked for {self.prm['blocked_timeout']:g} "
                                              f"s, {dist:.2f} m from the goal")
            return
        g["blocked_since"] = None
        heading = wrap(heading)
        angular = max(-self.prm["max_angular"], min(self.prm["max_angular"], 1.5 * heading))
        linear = 0.0
        if abs(heading) < 0.6 and self.clear(0.0, self.prm["stop_distance"]):
            linear = self.prm["max_linear"] * math.cos(heading) * min(1.0, max(0.25, dist))
        self.command(linear, angular)

    def shutdown(self):
        S = msgs.NavigateToPoseStatus
        if self.goal is not None:
            self.finish(S.ABORTED, "the stack is shutting down")
        else:
            self.stop()
        self.lifecycle(msgs.LifecycleState.FINALIZED)


def main():
    vehicle = os.environ.get("FIELDPROOF_VEHICLE", "")
    if not vehicle:
        print("goal_follower: FIELDPROOF_VEHICLE is not set (the engine sets it; by hand: "
              "FIELDPROOF_VEHICLE=ugv1)", file=sys.stderr)
        return 2
    try:
        params = load_parameters(os.environ.get("FIELDPROOF_PARAMS_FILE", ""))
    except ParameterError as e:
        print(f"goal_follower: {e}", file=sys.stderr)
        return 2
    name = os.environ.get("FIELDPROOF_PARTICIPANT") or f"{vehicle}_nav"
    try:
        # Refusals (a frame the coordinator dropped) are logged; the stack carries on.
        p = fieldproof.connect(name=name, on_error=lambda e: print(f"goal_follower: refused: {e}",
                                                                    file=sys.stderr, flush=True))
    except fieldproof.FieldproofError as e:
        print(f"goal_follower: {e}", file=sys.stderr)
        return 1
    # SIGTERM (the engine ending the run) and Ctrl-C: stop spinning, then leave.
    signal.signal(signal.SIGTERM, lambda *_: p.stop())
    signal.signal(signal.SIGINT, lambda *_: p.stop())
    code = 0
    try:
        node = GoalFollower(p, vehicle, os.environ.get("FIELDPROOF_WORLD", ""), params)
        node.log(f"joined as {name} ({p.role.name.lower()}), parameters {json.dumps(params)}")
        p.spin()
        node.shutdown()
    except ParameterError as e:
        print(f"goal_follower: {e}", file=sys.stderr)
        code = 2
    except (fieldproof.ShutdownError, fieldproof.ConnectionLost) as e:
        print(f"goal_follower: the run ended: {e}", file=sys.stderr)
    except fieldproof.CoordinatorError as e:
        print(f"goal_follower: {e}", file=sys.stderr)
        code = 1
    finally:
        p.leave()
    return code


if __name__ == "__main__":
    sys.exit(main())
