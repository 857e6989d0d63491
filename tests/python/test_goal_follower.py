"""The Python example stack (examples/stacks/python_goal_follower): beside the depot world on a
real coordinator (tests/python/world_harness.cpp, no engine needed), and through
`fieldproof run` in sim, realtime and lockstep (the engine's stack hosts)."""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

from coordinator import FIELDPROOF, Coordinator, have_fieldproof, temp_dir

SOURCE = os.environ.get("FIELDPROOF_SOURCE_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", ".."))
STACK = os.path.join(SOURCE, "examples", "stacks", "python_goal_follower", "goal_follower.py")
DEPOT = os.path.join(SOURCE, "examples", "worlds", "depot.sdf")
SCENARIOS = os.path.join(SOURCE, "examples", "scenarios")
HARNESS = os.environ.get("FIELDPROOF_WORLD_HARNESS", "")
# The interpreter running these tests is the one with python3-zmq and python3-protobuf: put its
# folder first on PATH so the scenarios' `python3` is that one.
PATH = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")


def stack_env(endpoint, **extra):
    env = dict(os.environ, PATH=PATH, FIELDPROOF_COORDINATOR=endpoint, FIELDPROOF_VEHICLE="ugv1",
               FIELDPROOF_PARTICIPANT="ugv1_nav", FIELDPROOF_ROLE="regulating",
               FIELDPROOF_WORLD="depot")
    env.update(extra)
    return env


@unittest.skipUnless(have_fieldproof() and os.access(HARNESS, os.X_OK),
                     "needs the fieldproof executable and FIELDPROOF_WORLD_HARNESS (run via ctest)")
class BesideTheWorld(unittest.TestCase):
    """The stack and the world, each a regulating participant of one coordinator."""

    def drive(self, goal="goal_a", params=None, role="regulating", coordinator_args=()):
        coord = Coordinator("--start-paused", *coordinator_args)
        self.addCleanup(coord.stop)
        extra = {}
        if params is not None:
            path = os.path.join(coord.dir, "params.json")
            with open(path, "w") as f:
                json.dump(params, f)
            extra["FIELDPROOF_PARAMS_FILE"] = path
        log = open(os.path.join(coord.dir, "stack.log"), "w+")
        self.addCleanup(log.close)
        extra["FIELDPROOF_ROLE"] = role
        # The world first, and the stack once the world has subscribed ("ready"): started together,
        # the stack's lifecycle message at 0 reached the world only when the world won the race,
        # so two runs printed different lines on a loaded machine.
        world = subprocess.Popen([HARNESS, DEPOT, coord.endpoint, "ugv1", "dock", goal, "90"],
                                 stdout=subprocess.PIPE, text=True)
        self.addCleanup(lambda: world.poll() is None and world.kill())
        first = world.stdout.readline()
        self.assertEqual(first, "ready\n", "the world harness did not start")
        stack = subprocess.Popen([sys.executable, STACK], env=stack_env(coord.endpoint, **extra),
                                 stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self.addCleanup(lambda: stack.poll() is None and stack.kill())
        from fieldproof.control import ControlClient
        with ControlClient(coord.endpoint) as c:
            deadline = time.monotonic() + 20
            while len(c.status().participants) < 2:
                self.assertLess(time.monotonic(), deadline, "the stack or the world never joined")
                self.assertIsNone(stack.poll(), "the stack exited before joining")
                time.sleep(0.02)
            c.resume()
        out, _ = world.communicate(timeout=240)
        out = first + out
        self.assertEqual(world.returncode, 0, out + "\ncoordinator: " + coord.stderr())
        stack.send_signal(signal.SIGTERM)
        stack_rc = stack.wait(timeout=10)
        log.seek(0)
        return out, stack_rc, log.read()

    def test_drives_to_goal_a_around_the_crate_without_touching_and_exits_0_on_sigterm(self):
        out, rc, log = self.drive()
        result = out.splitlines()[-1].split()
        self.assertEqual(result[:2], ["result", "succeeded"], out + log)
        self.assertLess(float(result[2]), 0.5, "ground truth ends more than 0.5 m from goal_a")
        self.assertEqual(result[3], "0", "the chassis touched something")
        self.assertIn("lifecycle 0.100 goal_follower active", out)
        self.assertIn("status 1.000 drive accepted", out)
        # It went around the crate (x 1.4..2.6, y -1.1..0.1): beside it, y is clear of it.
        beside = [ln.split() for ln in out.splitlines()
                  if ln.startswith("pose") and 1.0 <= float(ln.split()[2]) <= 3.0]
        self.assertTrue(beside, out)
        for _, _, _, y, _ in beside:
            self.assertTrue(float(y) < -1.3 or float(y) > 0.3, out)
        self.assertEqual(rc, 0, log)

    def test_as_a_follower_of_a_world_paced_at_real_time_it_arrives_too(self):
        # As in sim and realtime mode: the stack does not hold time, its publishes are stamped by
        # the coordinator, and it keeps up because the world runs at 1x.
        out, rc, log = self.drive(role="following", coordinator_args=("--max-rtf", "1"))
        result = out.splitlines()[-1].split()
        self.assertEqual(result[:2], ["result", "succeeded"], out + log)
        self.assertLess(float(result[2]), 0.5)
        self.assertEqual(result[3], "0")
        self.assertIn("(following)", log)
        self.assertEqual(rc, 0, log)

    def test_two_runs_in_lockstep_give_the_same_trajectory(self):
        a, _, _ = self.drive()
        b, _, _ = self.drive()
        self.assertEqual(a, b)

    def test_a_goal_outside_the_sane_range_is_rejected_with_a_reason(self):
        out, rc, _ = self.drive(goal="5000,0")
        self.assertIn("drive rejected goal (5000.00, 0.00) is beyond", out)
        self.assertEqual(out.splitlines()[-1].split()[1], "rejected")
        self.assertEqual(rc, 0)

    def test_parameters_reach_the_stack(self):
        # A goal_timeout shorter than the drive: the stack aborts it, saying why.
        out, _, log = self.drive(params={"goal_timeout": 5, "max_linear": 0.5})
        self.assertIn("drive aborted not reached within 5 s", out)
        self.assertIn('"max_linear": 0.5', log)


class BadInput(unittest.TestCase):
    def run_stack(self, params_text):
        d = temp_dir("params-")
        path = os.path.join(d, "params.json")
        with open(path, "w") as f:
            f.write(params_text)
        return subprocess.run([sys.executable, STACK], capture_output=True, text=True, timeout=30,
                              env=stack_env(f"ipc://{d}/none.sock", FIELDPROOF_PARAMS_FILE=path))

    def test_an_unknown_parameter_exits_2_naming_it(self):
        r = self.run_stack('{"max_speed": 1}')
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("unknown parameter 'max_speed'", r.stderr)

    def test_a_parameters_file_that_is_not_json_exits_2_with_line_and_column(self):
        r = self.run_stack('{"max_linear": }')
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("params.json:1:16: not JSON", r.stderr)

    def test_a_negative_value_exits_2(self):
        r = self.run_stack('{"goal_tolerance": -1}')
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("'goal_tolerance' must be a number >= 0", r.stderr)


def fieldproof_run(scenario, *args, run_id="a"):
    runs = temp_dir("runs-")
    env = dict(os.environ, PATH=PATH)
    r = subprocess.run([FIELDPROOF, "run", os.path.join(SCENARIOS, scenario), "--runs-dir", runs,
                        "--run-id", run_id, *args], capture_output=True, text=True, env=env,
                       timeout=600, cwd=SOURCE)
    return r, runs


def no_stack_hosts(r):
    """The engine before issue 11's stack hosts: it refuses any program but fieldproof-ugv-nav
    (and knows no stack.cwd)."""
    text = r.stdout + r.stderr
    return r.returncode == 2 and ("only fieldproof-ugv-nav is started" in text
                                  or "unknown key 'cwd'" in text)


def assertions_of(run):
    a = run.get("assertions", [])
    if isinstance(a, dict):
        return a
    return {e["name"]: e for e in a}


@unittest.skipUnless(have_fieldproof(), "needs the fieldproof executable (FIELDPROOF_BIN_DIR)")
class ThroughTheEngine(unittest.TestCase):
    def run_scenario(self, scenario, *args):
        r, runs = fieldproof_run(scenario, *args)
        if no_stack_hosts(r):
            self.skipTest("this engine has no stack hosts yet (issue 11 item 1): it refuses a "
                          "command other than fieldproof-ugv-nav")
        path = os.path.join(runs, "a", "run.json")
        self.assertTrue(os.path.exists(path), r.stdout + r.stderr)
        with open(path) as f:
            run = json.load(f)
        log_path = os.path.join(runs, "a", "logs", "ugv1.log")
        log = None
        if os.path.exists(log_path):
            with open(log_path) as f:
                log = f.read()
        return r, run, log

    def check_passes(self, scenario, *args):
        r, run, log = self.run_scenario(scenario, *args)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr + (log or ""))
        self.assertEqual(run["verdict"], "PASS")
        a = assertions_of(run)
        for name in ("reached_goal", "arrived_in_time", "no_collision", "follower_active"):
            self.assertEqual(a[name]["status"], "passed", f"{name}: {a[name]}")
        self.assertEqual(run["timeline"][0]["status"], "succeeded")
        if log is not None:  # the stack's own account, when the engine keeps its log
            self.assertIn("goal drive: SUCCEEDED", log)
        return run

    def test_sim(self):
        # At the scenario's pace (1x): a following stack cannot keep up with an unpaced world.
        self.check_passes("python_goal_follower_sim.yaml")

    def test_realtime(self):
        self.check_passes("python_goal_follower_realtime.yaml")

    def test_lockstep(self):
        run = self.check_passes("python_goal_follower_lockstep.yaml", "--max-rtf", "0")
        self.assertEqual(run["clock"]["mode"], "lockstep")

    def test_lockstep_drives_the_tug(self):
        # The second robot (examples/models/fieldproof_tug): its own footprint, limits and a
        # 270-degree front lidar, the same program told its size by its parameters.
        run = self.check_passes("tug_python_goal_follower_lockstep.yaml", "--max-rtf", "0")
        self.assertEqual(run["clock"]["mode"], "lockstep")

    def test_a_too_tight_within_time_fails_and_shows_its_evidence(self):
        r, run, log = self.run_scenario("python_goal_follower_fails_on_time.yaml")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertEqual(run["verdict"], "FAIL")
        a = assertions_of(run)
        self.assertEqual(a["arrived_in_time"]["status"], "failed")
        self.assertTrue(a["arrived_in_time"].get("evidence"), a["arrived_in_time"])
        self.assertEqual(a["reached_goal"]["status"], "passed")
        self.assertEqual(a["no_collision"]["status"], "passed")

    def test_lockstep_check_determinism(self):
        r, _ = fieldproof_run("python_goal_follower_lockstep.yaml", "--max-rtf", "0",
                              "--check-determinism")
        if no_stack_hosts(r):
            self.skipTest("this engine has no stack hosts yet (issue 11 item 1)")
        self.assertIn("IDENTICAL", r.stdout, r.stdout + r.stderr)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


if __name__ == "__main__":
    unittest.main()
