"""The Python client against a real coordinator (`fieldproof coordinator`, one per test, on a
fresh ipc endpoint) and beside a C++ participant (tests/python/cpp_peer.cpp)."""

import os
import subprocess
import sys
import threading
import time
import unittest

import zmq

import fieldproof
from fieldproof import codec
from fieldproof.control import ControlClient
from fieldproof.time import milliseconds, seconds

from coordinator import Coordinator, have_fieldproof, temp_dir

CPP_PEER = os.environ.get("FIELDPROOF_CPP_PEER", "")


def needs_fieldproof(cls):
    if not have_fieldproof():
        return unittest.skip("no fieldproof executable (FIELDPROOF_BIN_DIR unset or not built)")(cls)
    return cls


class CoordinatorTest(unittest.TestCase):
    coordinator_args = ()

    def setUp(self):
        self.coord = Coordinator(*self.coordinator_args)
        self.addCleanup(self.coord.stop)

    def connect(self, name, **kw):
        p = fieldproof.connect(name=name, endpoint=self.coord.endpoint, connect_timeout=10, **kw)
        self.addCleanup(p.leave)
        return p

    def control(self):
        c = ControlClient(self.coord.endpoint)
        self.addCleanup(c.close)
        return c


@needs_fieldproof
class Registration(CoordinatorTest):
    def test_connect_registers_and_learns_the_time(self):
        p = self.connect("py_reg")
        self.assertEqual(p.now(), 0)
        names = [s.participant for s in self.control().status().participants]
        self.assertIn("py_reg", names)

    def test_the_handshake_names_the_coordinator_when_it_has_one(self):
        p = self.connect("py_hello")
        if p.protocol_version is None:
            self.skipTest("this coordinator predates the Hello handshake (answered unknown kind)")
        self.assertEqual(p.protocol_version, fieldproof.PROTOCOL_VERSION)
        self.assertGreater(p.max_message_bytes, 0)

    def test_endpoint_and_role_come_from_the_environment(self):
        env = dict(os.environ, FIELDPROOF_COORDINATOR=self.coord.endpoint,
                   FIELDPROOF_PARTICIPANT="py_env", FIELDPROOF_ROLE="following")
        old = os.environ.copy()
        os.environ.clear()
        os.environ.update(env)
        try:
            p = fieldproof.connect()
        finally:
            os.environ.clear()
            os.environ.update(old)
        self.addCleanup(p.leave)
        self.assertEqual(p.name, "py_env")
        self.assertEqual(p.role, fieldproof.Role.FOLLOWING)
        st = {s.participant: s for s in self.control().status().participants}
        self.assertEqual(st["py_env"].role, codec.Role.FOLLOWING)

    def test_leave_removes_the_participant(self):
        p = fieldproof.connect(name="py_leave", endpoint=self.coord.endpoint)
        p.leave()
        c = self.control()
        deadline = time.monotonic() + 5
        while "py_leave" in [s.participant for s in c.status().participants]:
            self.assertLess(time.monotonic(), deadline, "still listed 5 s after leave")
            time.sleep(0.01)


@needs_fieldproof
class Grants(CoordinatorTest):
    def test_sleep_until_returns_at_the_granted_time(self):
        p = self.connect("py_sleep")
        self.assertTrue(p.sleep_until(milliseconds(250)))
        self.assertEqual(p.now(), milliseconds(250))
        self.assertTrue(p.sleep_for(milliseconds(50)))
        self.assertEqual(p.now(), milliseconds(300))

    def test_rate_wakes_at_exact_multiples_of_its_period(self):
        p = self.connect("py_rate")
        rate = fieldproof.Rate(p, milliseconds(10))
        wakes = []
        for _ in range(5):
            self.assertTrue(rate.sleep())
            wakes.append(p.now())
        self.assertEqual(wakes, [milliseconds(10 * k) for k in range(1, 6)])

    def test_rate_that_fell_behind_wakes_at_the_next_period_after_now(self):
        p = self.connect("py_rate_late")
        rate = fieldproof.Rate(p, milliseconds(10))
        p.sleep_until(milliseconds(35))
        self.assertTrue(rate.sleep())
        self.assertEqual(p.now(), milliseconds(40))

    def test_a_regulating_participant_holds_time_until_it_announces(self):
        p = self.connect("py_hold")
        c = self.control()
        p.sleep_until(milliseconds(20))
        # Not waiting now: its last announcement was 20 ms, so the grant stays there.
        time.sleep(0.2)
        self.assertEqual(c.status().time, milliseconds(20))


@needs_fieldproof
class Timers(CoordinatorTest):
    def test_periodic_timer_fires_at_its_due_times_with_now_at_them(self):
        p = self.connect("py_timer")
        fired = []
        p.create_timer(milliseconds(10), lambda: fired.append(p.now()))
        p.spin(until=milliseconds(45))
        self.assertEqual(fired, [milliseconds(10), milliseconds(20), milliseconds(30),
                                 milliseconds(40)])

    def test_one_shot_and_cancel(self):
        p = self.connect("py_timer2")
        fired = []
        p.create_timer_at(milliseconds(15), lambda: fired.append(("once", p.now())))
        t = p.create_timer(milliseconds(10), lambda: fired.append(("tick", p.now())))
        p.spin(until=milliseconds(25))
        t.cancel()
        p.spin(until=milliseconds(60))
        self.assertEqual(fired, [("tick", milliseconds(10)), ("once", milliseconds(15)),
                                 ("tick", milliseconds(20))])

    def test_stop_ends_spin(self):
        p = self.connect("py_stop")
        p.create_timer(milliseconds(10), lambda: p.stop() if p.now() >= milliseconds(30) else None)
        self.assertFalse(p.spin())
        self.assertEqual(p.now(), milliseconds(30))


@needs_fieldproof
class Messages(CoordinatorTest):
    coordinator_args = ("--start-paused",)

    def test_a_python_and_a_cpp_participant_see_one_total_order(self):
        if not os.access(CPP_PEER, os.X_OK):
            self.skipTest("the C++ peer (FIELDPROOF_CPP_PEER) is not built")
        # Names: at equal stamps, 'a_py' < 'b_cpp' orders the Python messages first.
        cpp = subprocess.Popen([CPP_PEER, self.coord.endpoint, "b_cpp", "/shared", "4", "10"],
                               stdout=subprocess.PIPE, text=True)
        self.addCleanup(cpp.kill)
        self.assertEqual(cpp.stdout.readline().strip(), "ready")
        p = self.connect("a_py")
        seen = []
        p.subscribe("/shared", lambda m: seen.append((m.stamp, m.participant, m.seq,
                                                      m.payload.decode(), p.now())))
        c = self.control()
        c.resume()
        rate = fieldproof.Rate(p, milliseconds(10))
        for k in range(1, 5):
            rate.sleep()
            p.publish("/shared", f"a_py-{k}".encode(), "text")
        p.sleep_until(milliseconds(50))
        out, _ = cpp.communicate(timeout=30)
        self.assertEqual(cpp.returncode, 0)
        lines = out.splitlines()
        self.assertEqual(lines[-1], "done")
        cpp_seen = [(int(s), name, int(seq), payload)
                    for _, s, name, seq, payload in (ln.split() for ln in lines[:-1])]
        expected = sorted([(milliseconds(10 * k), "a_py", k, f"a_py-{k}") for k in range(1, 5)]
                          + [(milliseconds(10 * k), "b_cpp", k, f"b_cpp-{k}")
                             for k in range(1, 5)])
        self.assertEqual([s[:4] for s in seen], expected)
        self.assertEqual(cpp_seen, expected)
        # Each callback ran with now() at the message's stamp.
        self.assertTrue(all(s[0] == s[4] for s in seen), seen)

    def test_the_executor_holds_time_while_a_callback_runs(self):
        c = self.control()
        a = self.connect("hold_a")
        b = self.connect("hold_b")
        observed = {}

        def on_ping(m):
            time.sleep(0.3)  # work that takes wall time: simulated time must not move meanwhile
            st = c.status()
            observed["time"] = st.time
            observed["a_safe"] = {s.participant: s.safe_time for s in st.participants}["hold_a"]
            observed["now"] = a.now()

        a.subscribe("/ping", on_ping)
        c.resume()

        def run_b():
            b.sleep_until(milliseconds(10))
            b.publish("/ping", b"ping", "text")
            b.sleep_until(milliseconds(100))

        tb = threading.Thread(target=run_b)
        tb.start()
        self.assertTrue(a.sleep_until(milliseconds(100)))
        tb.join(timeout=30)
        self.assertEqual(observed["time"], milliseconds(10))
        self.assertEqual(observed["a_safe"], milliseconds(10))
        self.assertEqual(observed["now"], milliseconds(10))
        self.assertEqual(a.now(), milliseconds(100))

    def test_publish_a_protobuf_message_uses_its_type_name(self):
        from fieldproof import msgs
        c = self.control()
        a = self.connect("pb_a")
        b = self.connect("pb_b")
        got = []
        b.subscribe("/model/x/cmd_vel", lambda m: got.append((m.type, msgs.Twist.FromString(
            m.payload).linear.x)))
        c.resume()
        # b waits in its own thread (its own connection): both regulate, time needs both.
        tb = threading.Thread(target=lambda: b.sleep_until(milliseconds(30)))
        tb.start()
        t = msgs.Twist()
        t.linear.x = 0.25
        a.sleep_until(milliseconds(10))
        a.publish("/model/x/cmd_vel", t)
        a.sleep_until(milliseconds(30))
        tb.join(timeout=30)
        self.assertEqual(got, [("ignition.msgs.Twist", 0.25)])


@needs_fieldproof
class Heartbeats(CoordinatorTest):
    coordinator_args = ("--ack-timeout", "1500ms", "--follower-timeout", "1500ms")

    def test_heartbeats_keep_a_busy_participant_alive_past_the_ack_timeout(self):
        p = self.connect("py_busy")
        p.sleep_until(milliseconds(10))
        # Idle first: a participant that holds a step past the ack timeout is named whatever its
        # heartbeats do (docs/lockstep.md, acknowledgements); silence alone is what they cover.
        p.announce(fieldproof.INFINITE)
        time.sleep(3.0)  # busy outside any wait, twice the ack timeout
        self.assertTrue(p.sleep_until(milliseconds(20)))
        self.assertEqual(p.now(), milliseconds(20))

    def test_without_heartbeats_the_run_fails_naming_the_participant(self):
        p = self.connect("py_silent", heartbeat_interval=0)
        p.sleep_until(milliseconds(10))
        time.sleep(3.0)
        with self.assertRaises(fieldproof.RunFailedError) as cm:
            p.sleep_until(milliseconds(20))
        self.assertIn("py_silent", str(cm.exception))


@needs_fieldproof
class Exiting(unittest.TestCase):
    def test_a_program_that_exits_without_leaving_exits_cleanly(self):
        # Heartbeats running, a control client open, no leave(): the interpreter's exit closes
        # the links (the heartbeat thread must not be sending while ZeroMQ is torn down).
        for _ in range(3):
            coord = Coordinator()
            self.addCleanup(coord.stop)
            prog = ("import fieldproof, sys\n"
                    "from fieldproof.control import ControlClient\n"
                    "from fieldproof.time import milliseconds\n"
                    f"p = fieldproof.connect(name='py_exit', endpoint={coord.endpoint!r},\n"
                    "                        connect_timeout=10, heartbeat_interval=0.001)\n"
                    f"c = ControlClient({coord.endpoint!r})\n"
                    "c.status()\n"
                    "p.sleep_until(milliseconds(10))\n")
            r = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True,
                               timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stderr, "")

    def test_closing_while_the_peer_sends_and_closes_does_not_abort(self):
        # The peer writes and closes just after close(): with a lingering socket libzmq 4.3.4
        # aborts the process (tests/python/lingering_close_peer.py says how).
        peer = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lingering_close_peer.py")
        for _ in range(3):
            r = subprocess.run([sys.executable, peer], capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout, "closed\n")


@needs_fieldproof
class Errors(CoordinatorTest):
    def test_a_duplicate_name_raises_with_the_coordinators_message(self):
        self.connect("py_dup")
        with self.assertRaises(fieldproof.DuplicateNameError) as cm:
            fieldproof.connect(name="py_dup", endpoint=self.coord.endpoint, connect_timeout=10)
        self.assertIn("py_dup", cm.exception.reason)

    def test_a_publish_stamped_in_the_past_is_raised_from_the_next_wait(self):
        p = self.connect("py_past")
        p.sleep_until(milliseconds(20))
        p.publish("/t", b"late", "text", stamp=milliseconds(5))
        with self.assertRaises(fieldproof.RefusedError) as cm:
            p.sleep_until(milliseconds(30))
        self.assertEqual(cm.exception.code, fieldproof.ErrorCode.STAMP_IN_PAST)
        # The participant carries on.
        self.assertTrue(p.sleep_until(milliseconds(30)))

    def test_on_error_receives_refusals_instead(self):
        errors = []
        p = self.connect("py_onerr", on_error=errors.append)
        p.sleep_until(milliseconds(20))
        p.publish("/t", b"late", "text", stamp=milliseconds(5))
        self.assertTrue(p.sleep_until(milliseconds(40)))
        self.assertEqual([e.code for e in errors], [fieldproof.ErrorCode.STAMP_IN_PAST])

    def test_the_coordinator_ending_raises_shutdown_in_spin(self):
        p = self.connect("py_shut")
        p.sleep_until(milliseconds(10))
        threading.Timer(0.3, self.coord.terminate).start()
        with self.assertRaises((fieldproof.ShutdownError, fieldproof.ConnectionLost)):
            p.spin()

    def test_another_protocol_version_is_refused_naming_both(self):
        try:
            p = fieldproof.connect(name="py_v3", endpoint=self.coord.endpoint,
                                   connect_timeout=10, _protocol_version=3)
        except fieldproof.VersionError as e:
            self.assertIn("2", str(e))
            self.assertIn("3", str(e))
            return
        p.leave()
        self.assertIsNone(p.protocol_version)
        self.skipTest("this coordinator predates the Hello handshake: it cannot refuse a version")


class WithoutACoordinator(unittest.TestCase):
    def test_no_endpoint_says_what_to_set(self):
        old = os.environ.pop("FIELDPROOF_COORDINATOR", None)
        try:
            with self.assertRaises(fieldproof.TransportError) as cm:
                fieldproof.connect(name="x")
        finally:
            if old is not None:
                os.environ["FIELDPROOF_COORDINATOR"] = old
        self.assertIn("FIELDPROOF_COORDINATOR", str(cm.exception))

    def test_a_bad_endpoint_is_refused(self):
        with self.assertRaises(fieldproof.TransportError):
            fieldproof.connect(name="x", endpoint="udp://nowhere")

    def test_nobody_listening_times_out_within_the_connect_timeout(self):
        d = temp_dir("nocoord-")
        t0 = time.monotonic()
        with self.assertRaises(fieldproof.ConnectTimeout):
            fieldproof.connect(name="x", endpoint=f"ipc://{d}/none.sock", connect_timeout=0.5)
        self.assertLess(time.monotonic() - t0, 5)

    def test_a_coordinator_of_another_version_is_refused_naming_both(self):
        # A stand-in coordinator that answers Hello with a Welcome of version 3.
        d = temp_dir("fake-")
        ep = f"ipc://{d}/fake.sock"
        ctx = zmq.Context.instance()
        router = ctx.socket(zmq.ROUTER)
        router.setsockopt(zmq.LINGER, 0)
        router.bind(ep)
        self.addCleanup(router.close)
        hello = {}

        def serve():
            if router.poll(10000):
                rid, data = router.recv_multipart()
                hello["frame"] = codec.decode(data)
                router.send_multipart([rid, codec.encode(codec.Welcome(3, "future", 1 << 20))])

        t = threading.Thread(target=serve)
        t.start()
        with self.assertRaises(fieldproof.VersionError) as cm:
            fieldproof.connect(name="x", endpoint=ep, connect_timeout=10)
        t.join()
        self.assertEqual(hello["frame"], codec.Hello(2, fieldproof.CLIENT_NAME))
        self.assertIn("version 3", str(cm.exception))
        self.assertIn("version 2", str(cm.exception))
        self.assertEqual((cm.exception.ours, cm.exception.theirs), (2, 3))


if __name__ == "__main__":
    unittest.main()
