"""The lock-step wire format: one frame per ZeroMQ message (docs/protocol.md).

Layout: byte 0 is the magic/version byte 0xF2, byte 1 the frame kind, then the fields of that
frame in order. u8 / u32 / u64 / i64 are little-endian and fixed width; a double is the u64 of its
IEEE-754 bits; a bool is one byte 0 or 1; an enum is one byte; a string is a u32 length and the
bytes; a vector is a u32 count and its elements; a time or a duration is an i64 of nanoseconds.
A frame must be consumed exactly: trailing bytes are refused.

    data = encode(Grant(time=5, number=1))
    frame = decode(data)          # raises DecodeError with the field and the offset

Pure functions, no state: safe from any thread.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass, field
from typing import List, Union

MAGIC = 0xF2
# Version 2 added PlayerControl and PlayerReply (kinds 14 and 15); version 1 had kinds 1-13.
PROTOCOL_VERSION = 2
DEFAULT_MAX_FRAME_BYTES = 64 << 20

# SimTime::infinite() on the wire: the largest int64.
INFINITE = (1 << 63) - 1


class Kind(enum.IntEnum):
    ANNOUNCE = 1
    SUBSCRIBE = 2
    UNSUBSCRIBE = 3
    PUBLISH = 4
    LEAVE = 5
    HEARTBEAT = 6
    GRANT = 7
    DELIVER = 8
    ERROR = 9
    CONTROL = 10
    CONTROL_REPLY = 11
    HELLO = 12
    WELCOME = 13
    PLAYER_CONTROL = 14
    PLAYER_REPLY = 15


class Role(enum.IntEnum):
    REGULATING = 0
    FOLLOWING = 1


class ErrorCode(enum.IntEnum):
    MALFORMED = 1
    UNKNOWN_KIND = 2
    STAMP_IN_PAST = 3
    ANNOUNCE_BACKWARDS = 4
    DUPLICATE_NAME = 5
    OVERSIZED = 6
    NOT_REGISTERED = 7
    TIMEOUT = 8
    SHUTDOWN = 9
    VERSION = 10
    NO_HELLO = 11


class ControlOp(enum.IntEnum):
    PAUSE = 1
    RESUME = 2
    STEP = 3
    RUN_UNTIL = 4
    SET_MAX_RTF = 5
    STATUS = 6


class PlayerOp(enum.IntEnum):
    PAUSE = 1
    RESUME = 2
    TOGGLE = 3
    SET_RATE = 4
    SEEK = 5
    PLAY_NEXT = 6
    BURST = 7
    STATUS = 8


# ---- frames -------------------------------------------------------------------------------------
# Field types, in wire order, are given by FIELDS below each class ("str", "u8", "u32", "u64",
# "i64", "f64", "bool", an enum class, or ("vec", Class) / ("struct", Class)).


@dataclass
class Announce:
    participant: str = ""
    thread: str = ""
    role: Role = Role.REGULATING
    safe_time: int = 0


@dataclass
class Subscribe:
    participant: str = ""
    thread: str = ""
    topic: str = ""


@dataclass
class Unsubscribe:
    participant: str = ""
    thread: str = ""
    topic: str = ""


@dataclass
class Publish:
    participant: str = ""
    topic: str = ""
    stamp: int = 0
    seq: int = 0
    type: str = ""
    payload: bytes = b""


@dataclass
class Leave:
    participant: str = ""
    thread: str = ""


@dataclass
class Heartbeat:
    participant: str = ""


@dataclass
class Grant:
    time: int = 0
    number: int = 0


@dataclass
class Deliver:
    thread: str = ""
    message: Publish = field(default_factory=Publish)


@dataclass
class Error:
    code: ErrorCode = ErrorCode.MALFORMED
    reason: str = ""


@dataclass
class Control:
    op: ControlOp = ControlOp.STATUS
    duration: int = 0
    until: int = 0
    max_rtf: float = 0.0


@dataclass
class ParticipantStatus:
    participant: str = ""
    thread: str = ""
    role: Role = Role.REGULATING
    safe_time: int = 0


@dataclass
class CoordinatorStatus:
    paused: bool = False
    time: int = 0
    grants: int = 0
    measured_rtf: float = 0.0
    max_rtf: float = 0.0
    hold: int = 0
    participants: List[ParticipantStatus] = field(default_factory=list)


@dataclass
class ControlReply:
    ok: bool = True
    error: str = ""
    status: CoordinatorStatus = field(default_factory=CoordinatorStatus)


@dataclass
class Hello:
    protocol_version: int = PROTOCOL_VERSION
    client: str = ""


@dataclass
class Welcome:
    protocol_version: int = PROTOCOL_VERSION
    coordinator: str = ""
    max_message_bytes: int = 0


@dataclass
class PlayerControl:
    op: PlayerOp = PlayerOp.STATUS
    offset: int = 0     # SEEK: from the start of the play range (ns)
    count: int = 0      # BURST
    rate: float = 0.0   # SET_RATE


@dataclass
class PlayerReply:
    ok: bool = True
    error: str = ""
    paused: bool = False
    rate: float = 1.0
    now: int = 0
    offset: int = 0
    played: int = 0
    position: int = 0
    total: int = 0
    loops: int = 0
    to: int = 0
    clamped: bool = False
    message: str = ""
    burst_played: int = 0


Frame = Union[Announce, Subscribe, Unsubscribe, Publish, Leave, Heartbeat, Grant, Deliver, Error,
              Control, ControlReply, Hello, Welcome, PlayerControl, PlayerReply]

_FIELDS = {
    Announce: (("participant", "str"), ("thread", "str"), ("role", Role), ("safe_time", "i64")),
    Subscribe: (("participant", "str"), ("thread", "str"), ("topic", "str")),
    Unsubscribe: (("participant", "str"), ("thread", "str"), ("topic", "str")),
    Publish: (("participant", "str"), ("topic", "str"), ("stamp", "i64"), ("seq", "u64"),
              ("type", "str"), ("payload", "bytes")),
    Leave: (("participant", "str"), ("thread", "str")),
    Heartbeat: (("participant", "str"),),
    Grant: (("time", "i64"), ("number", "u64")),
    # The Publish's fields follow the thread directly (no length prefix of their own).
    Deliver: (("thread", "str"), ("message", ("struct", Publish))),
    Error: (("code", ErrorCode), ("reason", "str")),
    Control: (("op", ControlOp), ("duration", "i64"), ("until", "i64"), ("max_rtf", "f64")),
    ParticipantStatus: (("participant", "str"), ("thread", "str"), ("role", Role),
                        ("safe_time", "i64")),
    CoordinatorStatus: (("paused", "bool"), ("time", "i64"), ("grants", "u64"),
                        ("measured_rtf", "f64"), ("max_rtf", "f64"), ("hold", "i64"),
                        ("participants", ("vec", ParticipantStatus))),
    ControlReply: (("ok", "bool"), ("error", "str"), ("status", ("struct", CoordinatorStatus))),
    Hello: (("protocol_version", "u32"), ("client", "str")),
    Welcome: (("protocol_version", "u32"), ("coordinator", "str"), ("max_message_bytes", "u64")),
    PlayerControl: (("op", PlayerOp), ("offset", "i64"), ("count", "u64"), ("rate", "f64")),
    PlayerReply: (("ok", "bool"), ("error", "str"), ("paused", "bool"), ("rate", "f64"),
                  ("now", "i64"), ("offset", "i64"), ("played", "u64"), ("position", "u64"),
                  ("total", "u64"), ("loops", "u64"), ("to", "i64"), ("clamped", "bool"),
                  ("message", "str"), ("burst_played", "u64")),
}

_KIND_OF = {
    Announce: Kind.ANNOUNCE, Subscribe: Kind.SUBSCRIBE, Unsubscribe: Kind.UNSUBSCRIBE,
    Publish: Kind.PUBLISH, Leave: Kind.LEAVE, Heartbeat: Kind.HEARTBEAT, Grant: Kind.GRANT,
    Deliver: Kind.DELIVER, Error: Kind.ERROR, Control: Kind.CONTROL,
    ControlReply: Kind.CONTROL_REPLY, Hello: Kind.HELLO, Welcome: Kind.WELCOME,
    PlayerControl: Kind.PLAYER_CONTROL, PlayerReply: Kind.PLAYER_REPLY,
}
_CLASS_OF = {k: c for c, k in _KIND_OF.items()}

_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_I64 = struct.Struct("<q")
_F64 = struct.Struct("<d")
_GRANT = struct.Struct("<qQ")
_ANNOUNCE_HEADER = bytes((MAGIC, Kind.ANNOUNCE))


class DecodeError(ValueError):
    """A frame that does not decode. `code` is ErrorCode.MALFORMED, UNKNOWN_KIND or OVERSIZED."""

    def __init__(self, code: ErrorCode, reason: str):
        super().__init__(reason)
        self.code = code
        self.reason = reason


def kind_of(frame: Frame) -> Kind:
    return _KIND_OF[type(frame)]


# ---- encoding -----------------------------------------------------------------------------------


def _to_bytes(value, what: str) -> bytes:
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"{what} must be str or bytes, not {type(value).__name__}")


def _write(out: list, cls, value) -> None:
    for name, ftype in _FIELDS[cls]:
        v = getattr(value, name)
        if ftype == "str" or ftype == "bytes":
            b = _to_bytes(v, name)
            out.append(_U32.pack(len(b)))
            out.append(b)
        elif ftype == "i64":
            out.append(_I64.pack(int(v)))
        elif ftype == "u64":
            out.append(_U64.pack(int(v)))
        elif ftype == "u32":
            out.append(_U32.pack(int(v)))
        elif ftype == "f64":
            out.append(_F64.pack(float(v)))
        elif ftype == "bool":
            out.append(b"\x01" if v else b"\x00")
        elif isinstance(ftype, tuple) and ftype[0] == "struct":
            _write(out, ftype[1], v)
        elif isinstance(ftype, tuple) and ftype[0] == "vec":
            out.append(_U32.pack(len(v)))
            for e in v:
                _write(out, ftype[1], e)
        else:  # an enum
            out.append(bytes((int(v),)))


def encode(frame: Frame) -> bytes:
    """The wire bytes of `frame`. Raises TypeError / struct.error on a value out of range."""
    cls = type(frame)
    if cls not in _KIND_OF:
        raise TypeError(f"not a frame: {cls.__name__}")
    # Hot paths written out: announce and publish are most of what a participant sends.
    if cls is Announce:
        p = frame.participant.encode("utf-8")
        t = frame.thread.encode("utf-8")
        return b"".join((_ANNOUNCE_HEADER, _U32.pack(len(p)), p, _U32.pack(len(t)), t,
                         bytes((int(frame.role),)), _I64.pack(frame.safe_time)))
    out = [bytes((MAGIC, _KIND_OF[cls]))]
    _write(out, cls, frame)
    return b"".join(out)


# ---- decoding -----------------------------------------------------------------------------------


class _Reader:
    __slots__ = ("data", "pos", "size")

    def __init__(self, data: bytes, pos: int):
        self.data = data
        self.pos = pos
        self.size = len(data)

    def fail(self, reason: str):
        # Offsets count from the first byte after the 2-byte header, as the C++ codec reports.
        raise DecodeError(ErrorCode.MALFORMED, f"{reason} at offset {self.pos - 2}")

    def take(self, n: int, what: str) -> bytes:
        if self.size - self.pos < n:
            self.fail(f"truncated: {what} needs more bytes than the {self.size - 2}-byte frame has")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def read(self, cls):
        values = {}
        for name, ftype in _FIELDS[cls]:
            if ftype == "str" or ftype == "bytes":
                (n,) = _U32.unpack(self.take(4, "string length"))
                if n > self.size - self.pos:
                    self.fail(f"string length {n} runs past the end "
                              f"({self.size - self.pos} bytes left)")
                b = self.take(n, "string")
                if ftype == "str":
                    try:
                        values[name] = b.decode("utf-8")
                    except UnicodeDecodeError:
                        # Names and topics are text; keep undecodable bytes visible, not fatal.
                        values[name] = b.decode("utf-8", "backslashreplace")
                else:
                    values[name] = b
            elif ftype == "i64":
                (values[name],) = _I64.unpack(self.take(8, "time"))
            elif ftype == "u64":
                (values[name],) = _U64.unpack(self.take(8, "u64"))
            elif ftype == "u32":
                (values[name],) = _U32.unpack(self.take(4, "u32"))
            elif ftype == "f64":
                (values[name],) = _F64.unpack(self.take(8, "double"))
            elif ftype == "bool":
                v = self.take(1, "bool")[0]
                if v > 1:
                    self.pos -= 1
                    self.fail(f"bool byte {v} is neither 0 nor 1")
                values[name] = v == 1
            elif isinstance(ftype, tuple) and ftype[0] == "struct":
                values[name] = self.read(ftype[1])
            elif isinstance(ftype, tuple) and ftype[0] == "vec":
                (n,) = _U32.unpack(self.take(4, "vector count"))
                if n > self.size - self.pos:
                    self.fail(f"vector count {n} runs past the end")
                values[name] = [self.read(ftype[1]) for _ in range(n)]
            else:
                v = self.take(1, "enum")[0]
                try:
                    values[name] = ftype(v)
                except ValueError:
                    self.fail(f"unknown enum value {v}")
        return cls(**values)


def decode(data: bytes, max_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> Frame:
    """Decodes one frame; raises DecodeError naming the field and the offset on bad input."""
    data = bytes(data)
    # The hot path: a Grant is most of what a participant receives.
    if len(data) == 18 and data[0] == MAGIC and data[1] == Kind.GRANT:
        return Grant(*_GRANT.unpack_from(data, 2))
    if len(data) > max_bytes:
        raise DecodeError(ErrorCode.OVERSIZED, f"frame of {len(data)} bytes exceeds the limit of "
                                               f"{max_bytes} bytes")
    if len(data) < 2:
        raise DecodeError(ErrorCode.MALFORMED,
                          f"truncated: a frame needs at least 2 bytes, got {len(data)}")
    if data[0] != MAGIC:
        if data[0] >> 4 == MAGIC >> 4:
            raise DecodeError(ErrorCode.VERSION,
                              f"a frame of protocol version {data[0] & 0x0F} (byte 0 "
                              f"0x{data[0]:02X}); this client speaks version {PROTOCOL_VERSION}")
        raise DecodeError(ErrorCode.MALFORMED,
                          f"bad magic/version byte 0x{data[0]:02X} (expected 0x{MAGIC:02X})")
    try:
        cls = _CLASS_OF[Kind(data[1])]
    except (ValueError, KeyError):
        raise DecodeError(ErrorCode.UNKNOWN_KIND, f"unknown frame kind {data[1]}") from None
    r = _Reader(data, 2)
    name = _KIND_NAMES[_KIND_OF[cls]]
    try:
        value = r.read(cls)
    except DecodeError as e:
        raise DecodeError(e.code, f"malformed {name} frame: {e.reason}") from None
    if r.pos != r.size:
        raise DecodeError(ErrorCode.MALFORMED,
                          f"malformed {name} frame: trailing bytes after offset {r.pos - 2}")
    return value


_KIND_NAMES = {
    Kind.ANNOUNCE: "announce", Kind.SUBSCRIBE: "subscribe", Kind.UNSUBSCRIBE: "unsubscribe",
    Kind.PUBLISH: "publish", Kind.LEAVE: "leave", Kind.HEARTBEAT: "heartbeat",
    Kind.GRANT: "grant", Kind.DELIVER: "deliver", Kind.ERROR: "error", Kind.CONTROL: "control",
    Kind.CONTROL_REPLY: "control-reply", Kind.HELLO: "hello", Kind.WELCOME: "welcome",
    Kind.PLAYER_CONTROL: "player-control", Kind.PLAYER_REPLY: "player-reply",
}


def kind_name(kind: Kind) -> str:
    return _KIND_NAMES.get(kind, "unknown")


__all__ = [
    "MAGIC", "PROTOCOL_VERSION", "DEFAULT_MAX_FRAME_BYTES", "INFINITE", "Kind", "Role",
    "ErrorCode", "ControlOp", "PlayerOp", "Announce", "Subscribe", "Unsubscribe", "Publish", "Leave",
    "Heartbeat", "Grant", "Deliver", "Error", "Control", "ParticipantStatus", "CoordinatorStatus",
    "ControlReply", "Hello", "Welcome", "PlayerControl", "PlayerReply", "Frame", "DecodeError", "encode", "decode", "kind_of",
    "kind_name",
]
