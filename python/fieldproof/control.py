"""Controls a coordinator's clock: pause, resume, step, run_until, rate, status.

    c = fieldproof.control.ControlClient("ipc:///tmp/run/coordinator.sock")
    c.pause(); c.step(milliseconds(100)); print(c.status().time); c.resume()

Each call sends a Control frame and waits for the ControlReply; a reply with ok false raises
CoordinatorError carrying the coordinator's error. A control client is no participant and says no
Hello (docs/protocol.md, section 8: a run's control.sock refuses one).
"""

from __future__ import annotations

import time as _walltime
from typing import Optional

from . import codec
from .codec import INFINITE, ControlOp, ErrorCode
from .errors import ConnectTimeout, CoordinatorError, from_error
from .transport import Link


class ControlClient:
    def __init__(self, endpoint: str, *, timeout: float = 5.0,
                 server_public_key: Optional[str] = None):
        self.endpoint = endpoint
        self.timeout = timeout
        self._link = Link(endpoint, heartbeat_interval=0, server_public_key=server_public_key)

    def _next(self, deadline: float):
        while True:
            left = deadline - _walltime.monotonic()
            if left <= 0:
                raise ConnectTimeout(f"no reply from the coordinator at {self.endpoint} within "
                                     f"{self.timeout:g} s")
            f = self._link.receive(left)
            if f is not None:
                return f

    def request(self, op: ControlOp, duration: int = 0, until: int = INFINITE,
                max_rtf: float = 0.0) -> codec.CoordinatorStatus:
        deadline = _walltime.monotonic() + self.timeout
        self._link.send(codec.Control(op, int(duration), int(until), float(max_rtf)))
        while True:
            f = self._next(deadline)
            if isinstance(f, codec.ControlReply):
                if not f.ok:
                    raise CoordinatorError(ErrorCode.TIMEOUT, f.error, context="control")
                return f.status
            if isinstance(f, codec.Error):
                raise from_error(f.code, f.reason)

    def status(self) -> codec.CoordinatorStatus:
        return self.request(ControlOp.STATUS)

    def pause(self) -> codec.CoordinatorStatus:
        return self.request(ControlOp.PAUSE)

    def resume(self) -> codec.CoordinatorStatus:
        return self.request(ControlOp.RESUME)

    def step(self, duration: int) -> codec.CoordinatorStatus:
        return self.request(ControlOp.STEP, duration=duration)

    def run_until(self, until: int) -> codec.CoordinatorStatus:
        return self.request(ControlOp.RUN_UNTIL, until=until)

    def set_max_rtf(self, max_rtf: float) -> codec.CoordinatorStatus:
        return self.request(ControlOp.SET_MAX_RTF, max_rtf=max_rtf)

    def close(self) -> None:
        self._link.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
