"""A participant of lock-step time over ZeroMQ (docs/protocol.md, docs/lockstep.md).

    import fieldproof
    from fieldproof.time import milliseconds

    p = fieldproof.connect(name="ugv1_nav")          # FIELDPROOF_COORDINATOR, FIELDPROOF_ROLE
    p.subscribe("/model/ugv1/odometry", lambda m: on_odom(m.payload))
    p.create_timer(milliseconds(100), tick)           # 10 Hz of simulated time
    p.spin()                                          # until stop(), leave or the run ends
    p.leave()

Time is an int of nanoseconds. now() is the latest grant. sleep_until(t) announces t (a promise to
publish nothing stamped before t) and waits for a grant >= t; while it waits, it is the
executor: deliveries and due timers run inside it, on the calling thread, with now() at their
time, and only after they ran does it announce again (so simulated time is held while a callback
runs, and a callback's answers are stamped at the time of what it answered). After a Deliver it
never announces before the Grant that ends the delivery batch.

Threads: one thread uses the participant's waiting methods (sleep_until, sleep_for, spin, Rate,
callbacks run there). publish(), now(), stop() and leave() may be called from any thread; stop()
is safe in a signal handler. A heartbeat thread keeps the connection alive when nothing else was
sent for heartbeat_interval seconds of wall time.

Errors: a fatal Error from the coordinator (the run failed, it shut down, the name is taken, a
version mismatch) is raised from the waiting call as a CoordinatorError subclass carrying the
coordinator's message, and from every later one. A refusal (a publish stamped in the past, ...)
goes to on_error when given, else it is raised as RefusedError from the waiting call that
received it; the participant carries on either way.
"""

from __future__ import annotations

import collections
import os
import threading
import time as _walltime
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Union

from . import codec
from .codec import INFINITE, ErrorCode, Role
from .errors import (FATAL_CODES, ConnectionLost, ConnectTimeout, CoordinatorError, FieldproofError,
                     TransportError, VersionError, from_error)
from .transport import Link

CLIENT_NAME = "fieldproof-python 0.2.0"
COORDINATOR_ENV = "FIELDPROOF_COORDINATOR"

# How long one wait on the link lasts before looking at the stop flag again (wall seconds).
_RECEIVE_SLICE = 0.05

Message = codec.Publish
MessageCallback = Callable[[codec.Publish], None]


@dataclass
class _Timer:
    id: int
    start: int
    period: int  # 0: one-shot at start
    callback: Callable[[], None]
    k: int = 1

    def due(self) -> int:
        return self.start if self.period == 0 else self.start + self.period * self.k


class Timer:
    """A timer made by create_timer / create_timer_at; cancel() is idempotent."""

    def __init__(self, participant: "Participant", timer_id: int):
        self._p = participant
        self.id = timer_id

    def cancel(self) -> None:
        self._p.cancel_timer(self)


def _role_from(value) -> Role:
    if isinstance(value, Role):
        return value
    text = str(value).strip().lower()
    if text in ("regulating", "lockstep", "0"):
        return Role.REGULATING
    if text in ("following", "follower", "1"):
        return Role.FOLLOWING
    raise ValueError(f"role '{value}' is neither regulating nor following")


class Participant:
    """See the module comment. Made by connect()."""

    def __init__(self, link: Link, name: str, role: Role, thread: str,
                 on_error: Optional[Callable[[CoordinatorError], None]]):
        self._link = link
        self.name = name
        self.role = role
        self.thread = thread
        self._on_error = on_error
        self._lock = threading.RLock()
        self._grant = 0
        self._grants_seen = 0
        self._got_grant = False
        self._fatal: Optional[CoordinatorError] = None
        self._left = False
        self._stop = False
        self._seq = 0
        self._inbox: collections.deque = collections.deque()
        self._callbacks: Dict[str, MessageCallback] = {}
        self._timers: List[_Timer] = []
        self._next_timer = 1
        self._announced: Optional[int] = None
        self._lowered = False
        self._awaiting_marker = False
        self._refusals: List[CoordinatorError] = []
        self.errors = 0
        self.last_error = ""
        self.max_message_bytes = codec.DEFAULT_MAX_FRAME_BYTES
        self.coordinator = ""
        self.protocol_version: Optional[int] = None

    # ---- state ----

    def now(self) -> int:
        """The latest grant (ns)."""
        return self._grant

    def ok(self) -> bool:
        """False once the run failed, the coordinator shut down, or the participant left."""
        return self._fatal is None and not self._left

    @property
    def grants(self) -> int:
        """How many Grant frames raised the time (for statistics)."""
        return self._grants_seen

    # ---- the link ----

    def _send(self, frame) -> None:
        if self._left:
            return
        self._link.send(frame)

    def _dispatch(self, f) -> None:
        t = type(f)
        if t is codec.Grant:
            if f.time > self._grant:
                self._grant = f.time
                self._grants_seen += 1
            self._got_grant = True
            self._awaiting_marker = False
        elif t is codec.Deliver:
            if f.thread != self.thread:
                return  # a thread this participant never created
            self._inbox.append(f.message)
            self._lowered = True
            self._awaiting_marker = True
        elif t is codec.Error:
            self.errors += 1
            self.last_error = f.reason
            err = from_error(f.code, f.reason)
            if f.code in FATAL_CODES:
                if self._fatal is None:
                    self._fatal = err
            else:
                self._refusals.append(err)
        # Welcome, ControlReply: nothing to do here.

    def _pump(self, pred: Callable[[], bool]) -> None:
        """Reads the link until pred() holds, or the participant is done or stopped."""
        link = self._link
        while not pred() and self._fatal is None and not self._left and not self._stop:
            try:
                f = link.receive(_RECEIVE_SLICE)
            except ConnectionLost as e:
                self._fatal = e
                break
            if f is not None:
                self._dispatch(f)
                while self._fatal is None:
                    more = link.receive(0)
                    if more is None:
                        break
                    self._dispatch(more)
            self._report()

    def _report(self) -> None:
        if not self._refusals:
            return
        errs, self._refusals = self._refusals, []
        if self._on_error is not None:
            for e in errs:
                self._on_error(e)
        else:
            raise errs[0]

    def _check(self) -> None:
        if self._fatal is not None:
            raise self._fatal

    def _announce(self, t: int) -> None:
        self._announced = t
        self._lowered = False
        self._send(codec.Announce(self.name, self.thread, self.role, t))

    # ---- time ----

    def _next_timer_index(self) -> int:
        best = -1
        for i, tm in enumerate(self._timers):
            if best < 0:
                best = i
                continue
            b = self._timers[best]
            if tm.due() < b.due() or (tm.due() == b.due() and tm.id < b.id):
                best = i
        return best

    def sleep_until(self, t: int) -> bool:
        """Announces t and waits for a grant >= t, running deliveries and due timers meanwhile.

        True when the grant reached t; False when stop() was called or the participant left.
        Raises the coordinator's fatal error (CoordinatorError) and, without on_error, refusals
        (RefusedError)."""
        t = int(t)
        while True:
            self._check()
            if self._left:
                return False
            if self._stop:
                self._stop = False
                return False
            if self._inbox:
                m = self._inbox.popleft()
                cb = self._callbacks.get(m.topic)
                if cb is not None:
                    cb(m)
                continue
            if self._awaiting_marker:
                # More deliveries of this batch may be on their way: wait for the batch's end.
                self._pump(lambda: bool(self._inbox) or not self._awaiting_marker)
                continue
            ti = self._next_timer_index()
            if ti >= 0 and self._timers[ti].due() <= self._grant:
                tm = self._timers[ti]
                if tm.period == 0:
                    del self._timers[ti]
                else:
                    tm.k += 1
                tm.callback()
                continue
            if self._grant >= t:
                return True
            target = t
            if ti >= 0:
                target = min(target, self._timers[ti].due())
            if self._announced != target or self._lowered:
                self._announce(target)
            self._pump(lambda: bool(self._inbox) or self._grant >= target)

    def sleep_for(self, d: int) -> bool:
        return self.sleep_until(self._grant + int(d))

    def spin(self, until: Optional[int] = None) -> bool:
        """Runs callbacks and timers until simulated time `until` (None: until stop() or the
        participant leaves). Returns True when `until` was reached, False when stopped."""
        return self.sleep_until(INFINITE if until is None else until)

    spin_until = spin

    def stop(self) -> None:
        """Makes the waiting call return False (safe from a signal handler or another thread)."""
        self._stop = True
        try:
            self._link.wake()
        except OSError:
            pass

    def announce(self, safe_time: int) -> None:
        """Announces without waiting (INFINITE: idle until a delivery)."""
        self._announce(int(safe_time))

    # ---- topics ----

    def subscribe(self, topic: str, callback: MessageCallback) -> None:
        """Deliveries of `topic` run callback(message) inside a wait (message: codec.Publish with
        participant, topic, stamp, seq, type, payload). Re-subscribing replaces the callback."""
        if self._announced is None:
            self._announce(self._grant)
        fresh = topic not in self._callbacks
        self._callbacks[topic] = callback
        if fresh:
            self._send(codec.Subscribe(self.name, self.thread, topic))

    def unsubscribe(self, topic: str) -> None:
        if self._callbacks.pop(topic, None) is None:
            return
        self._send(codec.Unsubscribe(self.name, self.thread, topic))

    def publish(self, topic: str, payload, type_name: Optional[str] = None,
                stamp: Optional[int] = None) -> None:
        """Publishes payload (bytes, or a protobuf message: serialized, its full name as the type)
        stamped `stamp` (default: now()). A following participant's stamp is replaced by the
        coordinator with the current grant."""
        if hasattr(payload, "SerializeToString"):
            if type_name is None:
                type_name = payload.DESCRIPTOR.full_name
            payload = payload.SerializeToString()
        elif isinstance(payload, str):
            payload = payload.encode("utf-8")
        if type_name is None:
            raise TypeError("publish: type_name is needed for a payload of bytes")
        if len(payload) > self.max_message_bytes:
            raise ValueError(f"publish on {topic}: a payload of {len(payload)} bytes exceeds the "
                             f"coordinator's limit of {self.max_message_bytes} bytes")
        with self._lock:
            self._seq += 1
            self._send(codec.Publish(self.name, topic, self._grant if stamp is None else int(stamp),
                                     self._seq, type_name, bytes(payload)))

    # ---- timers ----

    def create_timer(self, period: int, callback: Callable[[], None]) -> Timer:
        """Calls callback at now() + k * period, k = 1, 2, ... (ns of simulated time)."""
        period = int(period)
        if period <= 0:
            raise ValueError(f"a timer period must be > 0 ns, got {period}")
        return self._add_timer(self._grant, period, callback)

    def create_timer_at(self, at: int, callback: Callable[[], None]) -> Timer:
        """Calls callback once, at simulated time `at`."""
        return self._add_timer(int(at), 0, callback)

    def _add_timer(self, start: int, period: int, callback) -> Timer:
        tm = _Timer(self._next_timer, start, period, callback)
        self._next_timer += 1
        self._timers.append(tm)
        return Timer(self, tm.id)

    def cancel_timer(self, timer: Timer) -> None:
        self._timers = [t for t in self._timers if t.id != timer.id]

    # ---- leaving ----

    def leave(self) -> None:
        """Leaves the coordinator (idempotent) and closes the connection."""
        if self._left:
            return
        self._send(codec.Leave(self.name, ""))
        self._left = True
        self._link.close()

    close = leave

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.leave()
        return False


class Rate:
    """Wakes at start + k * period (start = now() at construction); falls behind gracefully:
    after a late wake, the next one is the first after now.

        rate = Rate(p, milliseconds(10))
        while rate.sleep():
            ...
    """

    def __init__(self, participant: Participant, period: int):
        self._p = participant
        self.period = max(1, int(period))
        self.start = participant.now()
        self._k = 1

    def next(self) -> int:
        return self.start + self.period * self._k

    def sleep(self) -> bool:
        now = self._p.now()
        if self.next() <= now:
            self._k = (now - self.start) // self.period + 1
        ok = self._p.sleep_until(self.next())
        self._k += 1
        return ok


def connect(name: Optional[str] = None, endpoint: Optional[str] = None,
            role: Union[Role, str, None] = None, *, thread: str = "main",
            connect_timeout: float = 15.0, heartbeat_interval: float = 0.5,
            on_error: Optional[Callable[[CoordinatorError], None]] = None,
            server_public_key: Optional[str] = None,
            _protocol_version: int = codec.PROTOCOL_VERSION) -> Participant:
    """Connects, says Hello, registers `name` and waits for the first Grant (now()).

    name: default $FIELDPROOF_PARTICIPANT. endpoint: default $FIELDPROOF_COORDINATOR.
    role: default $FIELDPROOF_ROLE (regulating | following), else regulating.
    connect_timeout: wall seconds to wait for the coordinator's Welcome and first Grant.
    Raises TransportError (bad or missing endpoint), ConnectTimeout, VersionError (another
    protocol version: the message names both), DuplicateNameError, CoordinatorError."""
    if name is None:
        name = os.environ.get("FIELDPROOF_PARTICIPANT", "")
    if not name:
        raise FieldproofError("connect: no participant name (pass name= or set "
                              "FIELDPROOF_PARTICIPANT)")
    if endpoint is None:
        endpoint = os.environ.get(COORDINATOR_ENV, "")
        if not endpoint:
            raise TransportError(f"{COORDINATOR_ENV} is not set: set it to the coordinator's "
                                 "endpoint (e.g. ipc:///tmp/run/coordinator.sock or "
                                 "tcp://host:5545), as printed by `fieldproof coordinator`")
    if role is None:
        role = os.environ.get("FIELDPROOF_ROLE") or Role.REGULATING
    role = _role_from(role)
    if server_public_key is None:
        server_public_key = os.environ.get("FIELDPROOF_COORDINATOR_SERVER_KEY") or None

    link = Link(endpoint, heartbeat_interval=heartbeat_interval,
                server_public_key=server_public_key)
    try:
        p = Participant(link, name, role, thread, on_error)
        deadline = _walltime.monotonic() + connect_timeout
        _handshake(p, link, endpoint, _protocol_version, deadline, connect_timeout)
        link.name = name
        # Register at time zero: the coordinator raises a late joiner to its grant, and the
        # Grant answering a registration says what now() is.
        p._announce(0)
        while not p._got_grant:
            p._check()
            left = deadline - _walltime.monotonic()
            if left <= 0:
                raise ConnectTimeout(f"no Grant from the coordinator at {endpoint} within "
                                     f"{connect_timeout:g} s of registering {name}")
            f = link.receive(min(left, _RECEIVE_SLICE))
            if f is not None:
                p._dispatch(f)
        p._check()
        p._announced = p._grant
        link.start_heartbeats()
        return p
    except BaseException:
        link.close()
        raise


def _handshake(p: Participant, link: Link, endpoint: str, version: int, deadline: float,
               timeout: float) -> None:
    link.send(codec.Hello(version, CLIENT_NAME))
    while True:
        left = deadline - _walltime.monotonic()
        if left <= 0:
            raise ConnectTimeout(f"no answer from the coordinator at {endpoint} within "
                                 f"{timeout:g} s (is it running? is FIELDPROOF_COORDINATOR right?)")
        f = link.receive(min(left, _RECEIVE_SLICE))
        if f is None:
            continue
        if isinstance(f, codec.Welcome):
            if f.protocol_version != version:
                raise VersionError(
                    f"the coordinator at {endpoint} speaks protocol version "
                    f"{f.protocol_version}, this client ({CLIENT_NAME}) version {version}",
                    ours=version, theirs=f.protocol_version)
            p.protocol_version = f.protocol_version
            p.coordinator = f.coordinator
            if f.max_message_bytes > 0:
                p.max_message_bytes = f.max_message_bytes
            return
        if isinstance(f, codec.Error):
            if f.code == ErrorCode.VERSION:
                raise VersionError(f"the coordinator at {endpoint} refused this client's protocol "
                                   f"version {version}: {f.reason}", ours=version)
            if f.code == ErrorCode.UNKNOWN_KIND:
                # A coordinator from before the handshake: it speaks version 1 without Hello.
                p.protocol_version = None
                return
            raise from_error(f.code, f.reason)
        # A Grant or anything else before the Welcome: not a coordinator we understand.
        raise VersionError(f"the coordinator at {endpoint} answered Hello with a "
                           f"{codec.kind_name(codec.kind_of(f))} frame, not a Welcome",
                           ours=version)
