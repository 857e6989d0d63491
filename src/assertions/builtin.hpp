// The built-in assertion types, one function per source file (internal to the assertions part).
// AssertionTypes::builtin() calls each.
#pragma once

#include "fieldproof/assertions/checker.hpp"

namespace fieldproof::assertions::detail {

void add_pose_types(AssertionTypes& types);      // types_pose.cpp: reach_pose, no_collision
void add_timeline_types(AssertionTypes& types);  // types_timeline.cpp: within_time, mission_time
void add_geometry_types(AssertionTypes& types);  // types_geometry.cpp: geofence, min_distance,
                                                 //   path_efficiency
void add_signal_types(AssertionTypes& types);    // types_signals.cpp: topic_rate, topic_value,
                                                 //   message_latency, resource_usage,
                                                 //   lifecycle_state, always, never, eventually
void add_sequence_types(AssertionTypes& types);  // types_sequence.cpp: sequence

}  // namespace fieldproof::assertions::detail
