"""fieldproof: the Python client of fieldproof's lock-step participant protocol (docs/protocol.md).

    import fieldproof
    from fieldproof.time import milliseconds

    with fieldproof.connect(name="ugv1_nav") as p:    # FIELDPROOF_COORDINATOR, FIELDPROOF_ROLE
        rate = fieldproof.Rate(p, milliseconds(100))
        while rate.sleep():
            p.publish("/model/ugv1/cmd_vel", twist)    # a protobuf message or bytes + type name

Message classes generated from ignition-msgs and fieldproof's own .proto files:
fieldproof.msgs (Twist, Odometry, LaserScan, Pose_V, NavigateToPoseGoal, ...).
"""

from . import codec, time
from .codec import INFINITE, ErrorCode, Role
from .errors import (ConnectionLost, ConnectTimeout, CoordinatorError, DuplicateNameError,
                     FieldproofError, RefusedError, RunFailedError, ShutdownError,
                     TransportError, VersionError)
from .participant import CLIENT_NAME, Message, Participant, Rate, Timer, connect

__version__ = "0.2.0"
PROTOCOL_VERSION = codec.PROTOCOL_VERSION

__all__ = [
    "codec", "time", "INFINITE", "ErrorCode", "Role", "ConnectionLost", "ConnectTimeout",
    "CoordinatorError", "DuplicateNameError", "FieldproofError", "RefusedError",
    "RunFailedError", "ShutdownError", "TransportError", "VersionError", "CLIENT_NAME", "Message",
    "Participant", "Rate", "Timer", "connect", "PROTOCOL_VERSION", "__version__",
]
