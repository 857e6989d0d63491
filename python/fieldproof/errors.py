"""The exceptions of the client. Every one is a FieldproofError.

    try:
        p = fieldproof.connect(name="ugv1_nav")
    except fieldproof.VersionError as e:      # the coordinator speaks another protocol version
        ...
    except fieldproof.CoordinatorError as e:  # e.code (ErrorCode), e.reason (the coordinator's text)
        ...
"""

from __future__ import annotations

from typing import Optional

from .codec import PROTOCOL_VERSION, ErrorCode


class FieldproofError(Exception):
    """Base of every error this package raises."""


class TransportError(FieldproofError):
    """A bad endpoint, a missing FIELDPROOF_COORDINATOR, a failed socket operation."""


class ConnectTimeout(TransportError):
    """The coordinator did not answer within the connect timeout."""


class ConnectionLost(TransportError):
    """The connection to the coordinator dropped (it died or the network failed)."""


class CoordinatorError(FieldproofError):
    """An Error frame from the coordinator: `code` says which, `reason` is its message."""

    def __init__(self, code: ErrorCode, reason: str, context: Optional[str] = None):
        self.code = code
        self.reason = reason
        text = f"{_name(code)}: {reason}"
        if context:
            text = f"{context}: {text}"
        super().__init__(text)


class DuplicateNameError(CoordinatorError):
    """The participant name is in use on another connection."""


class ShutdownError(CoordinatorError):
    """The coordinator is ending (the run is over): leave and exit."""


class RunFailedError(CoordinatorError):
    """The run failed (a regulating participant stayed silent past the ack timeout)."""


class VersionError(CoordinatorError):
    """The coordinator speaks another protocol version; the message names both."""

    def __init__(self, reason: str, ours: int, theirs: Optional[int] = None):
        self.ours = ours
        self.theirs = theirs
        super().__init__(ErrorCode.VERSION, reason)


class RefusedError(CoordinatorError):
    """A frame refused by the coordinator (stamp in the past, backwards announce, ...); the
    participant carries on. Raised from the blocking call that received it unless an on_error
    callback was given to connect()."""


def _name(code) -> str:
    try:
        return ErrorCode(code).name.lower()
    except ValueError:
        return f"error {int(code)}"


def from_error(code: ErrorCode, reason: str) -> CoordinatorError:
    cls = {
        ErrorCode.DUPLICATE_NAME: DuplicateNameError,
        ErrorCode.SHUTDOWN: ShutdownError,
        ErrorCode.TIMEOUT: RunFailedError,
    }.get(code)
    if cls is not None:
        return cls(code, reason)
    if code == ErrorCode.VERSION:
        return VersionError(reason, ours=PROTOCOL_VERSION)
    return RefusedError(code, reason)


# The errors after which the participant can do nothing more.
FATAL_CODES = frozenset({ErrorCode.TIMEOUT, ErrorCode.SHUTDOWN, ErrorCode.DUPLICATE_NAME,
                         ErrorCode.VERSION, ErrorCode.NO_HELLO})
