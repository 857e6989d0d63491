"""The message types, generated at build time by protoc.

    from fieldproof import msgs
    t = msgs.Twist(); t.linear.x = 0.5
    p.publish("/model/ugv1/cmd_vel", t)              # type name ignition.msgs.Twist

Every ignition-msgs module is in fieldproof.ignition.msgs (e.g. fieldproof.ignition.msgs.pose_pb2);
fieldproof's own are fieldproof.msgs.navigation_pb2 and fieldproof.msgs.lifecycle_pb2. The names
below are the ones a vehicle's stack uses (docs/vehicle-interface.md). Each is loaded on first use.
"""

import importlib

_WHERE = {
    "Clock": "fieldproof.ignition.msgs.clock_pb2",
    "Header": "fieldproof.ignition.msgs.header_pb2",
    "Time": "fieldproof.ignition.msgs.time_pb2",
    "Pose": "fieldproof.ignition.msgs.pose_pb2",
    "Pose_V": "fieldproof.ignition.msgs.pose_v_pb2",
    "Odometry": "fieldproof.ignition.msgs.odometry_pb2",
    "LaserScan": "fieldproof.ignition.msgs.laserscan_pb2",
    "Twist": "fieldproof.ignition.msgs.twist_pb2",
    "IMU": "fieldproof.ignition.msgs.imu_pb2",
    "Contacts": "fieldproof.ignition.msgs.contacts_pb2",
    "WorldStatistics": "fieldproof.ignition.msgs.world_stats_pb2",
    "WorldControl": "fieldproof.ignition.msgs.world_control_pb2",
    "Vector3d": "fieldproof.ignition.msgs.vector3d_pb2",
    "Quaternion": "fieldproof.ignition.msgs.quaternion_pb2",
    "NavigateToPoseGoal": "fieldproof.msgs.navigation_pb2",
    "NavigateToPoseStatus": "fieldproof.msgs.navigation_pb2",
    "NavigateToPoseFeedback": "fieldproof.msgs.navigation_pb2",
    "LifecycleState": "fieldproof.msgs.lifecycle_pb2",
}

__all__ = sorted(_WHERE)


def __getattr__(name):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'fieldproof.msgs' has no attribute '{name}'")
    try:
        value = getattr(importlib.import_module(module), name)
    except ImportError as e:
        raise ImportError(f"fieldproof.msgs.{name}: the generated module {module} is missing "
                          f"({e}); the package is used from its source folder, not from the "
                          "build tree (build/python) or an installation") from None
    globals()[name] = value
    return value
