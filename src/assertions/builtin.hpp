// The built-in assertion types, one function per source file (internal to the assertions part).
// AssertionTypes::builtin() calls each.
#pragma once

#include "fieldproof/assertions/checker.hpp"
#include "util.hpp"

namespace fieldproof::assertions::detail {

void add_pose_types(AssertionTypes& types);      // types_pose.cpp: reach_pose, no_collision
void add_timeline_types(AssertionTypes& types);  // types_timeline.cpp: within_time, mission_time
void add_geometry_types(AssertionTypes& types);  // types_geometry.cpp: geofence, min_distance,
                                                 //   path_efficiency
void add_signal_types(AssertionTypes& types);    // types_signals.cpp: topic_rate, topic_value,
                                                 //   message_latency, resource_usage,
                                                 //   lifecycle_state, always, never, eventually
void add_sequence_types(AssertionTypes& types);  // types_sequence.cpp: sequence

// types_geometry.cpp, shared with the distance collector: resolves a `to` (vehicle, model or
// target) into resolved["to"] and adds the other model's poses to `watch`; throws PlanError.
void plan_target(const scenario::ParamValue& params, const std::string& path,
                 const PlanContext& ctx, nlohmann::json& resolved, Watch& watch);
DistanceMeter make_distance_meter(const std::string& vehicle, const nlohmann::json& to);

}  // namespace fieldproof::assertions::detail
