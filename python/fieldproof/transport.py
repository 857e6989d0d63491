"""A ZeroMQ DEALER link to a coordinator's ROUTER: one frame per single-part message.

Thread safety: send() may be called from any thread (the heartbeat thread does) while another
blocks in receive(). ZeroMQ sockets are not thread-safe, so every socket call is made under one
lock; receive() waits in zmq_poll with the lock held, in slices of at most 10 ms, so a sender
waits at most one slice. (Polling the socket's ZMQ_FD without the lock instead needs a wake-up
pipe against its edge-style signal and measured slower from Python.)
"""

from __future__ import annotations

import atexit
import threading
import time as _walltime
import weakref
from typing import Optional

import zmq

from . import codec
from .errors import ConnectionLost, TransportError

_MAX_IPC_PATH = 107
# The longest one zmq_poll lasts while holding the socket's lock (ms).
_SLICE_MS = 10

# Every link not yet closed: closed at interpreter exit, so no heartbeat thread is still sending
# on a socket while the interpreter and ZeroMQ's context are torn down.
_open_links: "weakref.WeakSet[Link]" = weakref.WeakSet()


@atexit.register
def _close_open_links() -> None:
    for link in list(_open_links):
        try:
            link.close()
        except Exception:  # best effort at exit
            pass


def resolve_endpoint(endpoint: str) -> str:
    """Checks an endpoint as the C++ transport does; a relative ipc path is left to ZeroMQ."""
    if endpoint.startswith("ipc://"):
        path = endpoint[6:]
        if not path:
            raise TransportError(f"endpoint '{endpoint}': an ipc endpoint needs a path, "
                                 "e.g. ipc://coordinator.sock")
        if len(path.encode()) > _MAX_IPC_PATH:
            raise TransportError(f"endpoint '{endpoint}': the ipc path is {len(path.encode())} "
                                 f"bytes, longer than the {_MAX_IPC_PATH} a Unix socket allows; "
                                 "use a shorter directory")
        return endpoint
    if endpoint.startswith("tcp://"):
        rest = endpoint[6:]
        host, sep, port = rest.rpartition(":")
        if not sep or not host or not port:
            raise TransportError(f"endpoint '{endpoint}': a tcp endpoint needs host:port, "
                                 "e.g. tcp://127.0.0.1:5545")
        if not port.isdigit() or int(port) > 65535:
            raise TransportError(f"endpoint '{endpoint}': port '{port}' is not a port number")
        return endpoint
    raise TransportError(f"endpoint '{endpoint}': unsupported transport; use ipc://PATH or "
                         "tcp://HOST:PORT")


class Link:
    """One connection. `name` (set by the participant) is what heartbeats speak for."""

    def __init__(self, endpoint: str, *, heartbeat_interval: float = 0.5, linger: float = 0.5,
                 server_public_key: Optional[str] = None,
                 max_frame_bytes: int = codec.DEFAULT_MAX_FRAME_BYTES):
        self.endpoint = resolve_endpoint(endpoint)
        self.name = ""
        self.max_frame_bytes = max_frame_bytes
        self._heartbeat_interval = heartbeat_interval
        self._linger = max(0.0, linger)
        self._lock = threading.Lock()
        self._closed = False
        self._dropped: Optional[str] = None
        self._drop_reported = False
        self._sent = False
        self._sent_any = False
        self._connected = False
        self._ctx = zmq.Context.instance()
        try:
            s = self._ctx.socket(zmq.DEALER)
        except zmq.ZMQError as e:
            raise TransportError(f"creating a DEALER socket: {e}") from None
        self._sock = s
        try:
            s.setsockopt(zmq.LINGER, int(linger * 1000))
            # Never block a sender: frames queue while the coordinator is not reading.
            s.setsockopt(zmq.SNDHWM, 0)
            # Nor throttle what arrives (the coordinator bounds what it queues for a peer):
            # libzmq 4.3.4 aborts ("Assertion failed: !_io_error", stream_engine_base.cpp:331)
            # when input throttled at the high-water mark restarts after the connection failed,
            # which a participant busy for a while (grants queue up) and then closed could hit.
            s.setsockopt(zmq.RCVHWM, 0)
            if server_public_key:
                if len(server_public_key) != 40:
                    raise TransportError("the CURVE server public key must be 40 Z85 characters, "
                                         f"got {len(server_public_key)}")
                pub, sec = zmq.curve_keypair()
                s.curve_serverkey = server_public_key.encode()
                s.curve_publickey = pub
                s.curve_secretkey = sec
            if heartbeat_interval > 0:
                ivl = max(1, int(heartbeat_interval * 1000))
                s.setsockopt(zmq.HEARTBEAT_IVL, ivl)
                # Ten intervals, never below a second (as the C++ client): a 1 ms interval would
                # drop a healthy connection on a loaded machine after 10 ms.
                s.setsockopt(zmq.HEARTBEAT_TIMEOUT, max(10 * ivl, 1000))
            self._monitor = s.get_monitor_socket(
                zmq.EVENT_HANDSHAKE_SUCCEEDED | zmq.EVENT_DISCONNECTED
                | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL
                | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL | zmq.EVENT_HANDSHAKE_FAILED_AUTH)
            s.connect(self.endpoint)
        except zmq.ZMQError as e:
            s.close(0)
            raise TransportError(f"connecting to '{self.endpoint}': {e}") from None
        self._woken = False
        self._poller = zmq.Poller()
        self._poller.register(s, zmq.POLLIN)
        self._hb_stop = threading.Event()
        self._hb_thread: Optional[threading.Thread] = None
        _open_links.add(self)

    # ---- sending ----

    def send(self, frame) -> None:
        self.send_bytes(codec.encode(frame))

    def send_bytes(self, data: bytes) -> None:
        with self._lock:
            if self._closed:
                return
            try:
                self._sock.send(data, zmq.DONTWAIT, copy=len(data) < 65536)
            except zmq.Again:
                pass  # SNDHWM 0: cannot happen; a frame dropped here would show as a timeout
            self._sent = True
            self._sent_any = True

    def wake(self) -> None:
        """Makes a blocked receive() return None after its current slice (stop(), signals)."""
        self._woken = True

    # ---- heartbeats ----

    def start_heartbeats(self) -> None:
        if self._heartbeat_interval <= 0 or self._hb_thread is not None:
            return
        self._hb_thread = threading.Thread(target=self._heartbeat_loop,
                                           name="fieldproof-heartbeat", daemon=True)
        self._hb_thread.start()

    def _heartbeat_loop(self) -> None:
        while not self._hb_stop.wait(self._heartbeat_interval):
            with self._lock:
                sent, self._sent = self._sent, False
            if sent or not self.name:
                continue
            try:
                self.send(codec.Heartbeat(self.name))
            except Exception:  # the socket went away under us (closing, exiting): stop quietly
                return

    # ---- receiving ----

    def receive(self, timeout: Optional[float]):
        """The next frame, or None after `timeout` seconds (None: wait forever) or once closed.

        A frame that does not decode comes back as an Error frame; a dropped connection raises
        ConnectionLost once."""
        deadline = None if timeout is None else _walltime.monotonic() + timeout
        sock = self._sock
        while True:
            wait_ms = _SLICE_MS
            if deadline is not None:
                left = deadline - _walltime.monotonic()
                wait_ms = max(0, min(wait_ms, int(left * 1000 + 0.999)))
            # zmq_poll with the lock held, in slices: a sender (the heartbeat thread, publish()
            # from another thread) waits at most one slice for the socket.
            with self._lock:
                if self._closed:
                    return None
                data = None
                if self._poller.poll(wait_ms):
                    data = sock.recv(zmq.DONTWAIT)
                else:
                    self._check_monitor()
                    if self._dropped is not None and not self._drop_reported:
                        self._drop_reported = True
                        raise ConnectionLost(self._dropped)
            if data is not None:
                try:
                    return codec.decode(data, self.max_frame_bytes)
                except codec.DecodeError as e:
                    return codec.Error(e.code, "undecodable frame from the coordinator: "
                                       + e.reason)
            if self._woken:
                self._woken = False
                return None
            if deadline is not None and _walltime.monotonic() >= deadline:
                return None

    def _check_monitor(self) -> None:
        # With the lock held.
        while True:
            try:
                parts = self._monitor.recv_multipart(zmq.DONTWAIT)
            except zmq.Again:
                return
            except zmq.ZMQError:
                return
            if not parts or len(parts[0]) < 2:
                continue
            event = int.from_bytes(parts[0][:2], "little")
            if event == zmq.EVENT_HANDSHAKE_SUCCEEDED:
                self._connected = True
                continue
            if self._dropped is not None:
                continue
            if event == zmq.EVENT_DISCONNECTED:
                self._dropped = f"lost the connection to the coordinator at {self.endpoint}"
            elif event != 0:
                self._dropped = (f"the coordinator at {self.endpoint} refused the connection: "
                                 "security handshake failed (with CURVE the client needs the "
                                 "server's public key)")

    def close(self) -> None:
        """Closes the connection once the coordinator has read everything sent on it (a Leave).

        The socket is closed with no linger: libzmq 4.3.4 aborts the process ("Assertion failed:
        !_io_error", stream_engine_base.cpp:331) when a socket lingering after zmq_close receives
        data and the peer's close in one wake (as a coordinator ending its run sends an Error to
        everyone and exits): the engine stops reading, then its heartbeat timer writes on the
        failed connection. Lingering is replaced by a round trip: a status request, whose reply
        comes after the coordinator has read every earlier frame of this connection, waited for
        at most `linger` seconds (a coordinator that is gone or stopped would not answer)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._hb_stop.set()
            _open_links.discard(self)
            self._check_monitor()
            if self._sent_any and self._connected and self._dropped is None and self._linger > 0:
                self._flush_sent()
            try:
                self._sock.disable_monitor()
            except zmq.ZMQError:
                pass
            self._monitor.close(0)
            self._sock.close(0)
        if self._hb_thread is not None and self._hb_thread is not threading.current_thread():
            self._hb_thread.join()

    def _flush_sent(self) -> None:
        # With the lock held. Frames that arrive meanwhile are for a participant that is leaving.
        deadline = _walltime.monotonic() + self._linger
        try:
            self._sock.send(codec.encode(codec.Control(codec.ControlOp.STATUS)), zmq.DONTWAIT)
        except zmq.ZMQError:
            return
        while True:
            left = deadline - _walltime.monotonic()
            if left <= 0:
                return
            if not self._poller.poll(max(1, min(_SLICE_MS, int(left * 1000)))):
                self._check_monitor()
                if self._dropped is not None:
                    return
                continue
            try:
                data = self._sock.recv(zmq.DONTWAIT)
            except zmq.ZMQError:
                return
            try:
                if isinstance(codec.decode(data, self.max_frame_bytes), codec.ControlReply):
                    return
            except codec.DecodeError:
                pass

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: nothing to do
            pass
