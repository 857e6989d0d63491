// The side channels' topics and JSON Schemas (what docs/recording.md says each carries), and the
// JSON writer they share.
#include <string>
#include <string_view>
#include <vector>

#include "fieldproof/record/recorder.hpp"

namespace fieldproof::record {
namespace {

// Numbers may be null: NaN and infinity are written as null.
constexpr std::string_view kEventsSchema = R"({
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "fieldproof event",
  "description": "A line of engine.log as the engine writes it: phases, processes, readiness, verdicts, and timeline entries as action.start / action.end carrying their record.",
  "type": "object",
  "properties": {
    "event": {"type": "string", "description": "what happened, e.g. phase, action.start, action.end, verdict"},
    "level": {"type": "string"},
    "message": {"type": "string"},
    "phase": {"type": "string"},
    "wall": {"type": ["number", "null"], "description": "wall clock, epoch seconds"},
    "sim": {"type": ["number", "null"], "description": "simulation seconds"},
    "action": {"type": "string"},
    "vehicle": {"type": "string"},
    "trigger": {"type": "string"},
    "occurrence": {"type": "integer"},
    "parameters": {"type": "object"},
    "status": {"type": "string"},
    "detail": {"type": "string"}
  },
  "additionalProperties": true
})";

constexpr std::string_view kAssertionsSchema = R"({
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "fieldproof assertion verdict",
  "description": "A verdict as it resolves.",
  "type": "object",
  "properties": {
    "run_id": {"type": "string"},
    "name": {"type": "string"},
    "type": {"type": "string"},
    "status": {"type": "string", "description": "passed, failed, skipped, pending, error"},
    "reason": {"type": "string"},
    "t_s": {"type": ["number", "null"], "description": "seconds into the timeline"},
    "sim_s": {"type": ["number", "null"], "description": "simulation seconds"},
    "evidence": {},
    "metrics": {"type": "object", "description": "what the checker measured, by name", "additionalProperties": {"$ref": "#/$defs/metric"}},
    "vehicle": {"type": ["string", "null"], "description": "the model the checker read"},
    "window": {"type": "object", "description": "after_s / within_s in timeline seconds, within_s null without one", "properties": {"after_s": {"type": "number"}, "within_s": {"type": ["number", "null"]}}},
    "resolved": {"type": "object", "description": "the assertion's parameters as planned: target, tolerance_m, region, min_hz, ..."}
  },
  "required": ["name", "status"],
  "$defs": {
    "metric": {
      "type": "object",
      "properties": {
        "value": {"type": ["number", "null", "string", "boolean"]},
        "unit": {"type": "string", "description": "m, s, Hz, %, MiB, or empty"}
      },
      "required": ["value", "unit"]
    }
  },
  "additionalProperties": true
})";

constexpr std::string_view kMetricsSchema = R"schema({
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "fieldproof metrics",
  "description": "Once a second: clocks, pace, lock-step state, topic rates, vehicle poses, lifecycle states, recording.",
  "type": "object",
  "properties": {
    "wall": {"type": ["number", "null"], "description": "wall clock, epoch seconds"},
    "sim": {"type": "number", "description": "simulation seconds"},
    "wall_s": {"type": "number", "description": "wall seconds since the run started"},
    "sim_s": {"type": "number", "description": "simulation seconds (the same as sim)"},
    "rtf": {"type": ["number", "null"], "description": "real-time factor over the last second"},
    "drift_s": {"type": ["number", "null"], "description": "simulation seconds gained or lost against the wall clock at the target pace"},
    "mode": {"type": "string", "enum": ["sim", "realtime", "lockstep"]},
    "target_rtf": {"type": ["number", "null"]},
    "paused": {"type": "boolean"},
    "lockstep": {
      "type": "object",
      "description": "lockstep mode only: the step, the hold, the acknowledgements",
      "properties": {
        "step": {"type": "integer", "minimum": 0, "description": "steps of step_s taken so far"},
        "step_s": {"type": "number", "exclusiveMinimum": 0},
        "sim_s": {"type": "number"},
        "hold": {"type": "boolean", "description": "the world is held now (a pause, between sim.steps)"},
        "holds": {"type": "integer", "minimum": 0, "description": "how often the stepping held for the engine (entries at a due time)"},
        "acknowledgements": {"type": "object", "description": "per regulating vehicle: the simulation seconds it has acknowledged (a step is granted only once every vehicle acknowledged the last)", "additionalProperties": {"type": "number"}},
        "max_ack_wait_s": {"type": "number", "minimum": 0, "description": "the longest wall wait for a step's acknowledgements so far"}
      },
      "required": ["step", "step_s", "hold", "holds", "acknowledgements"]
    },
    "rates_hz": {"type": "object", "additionalProperties": {"type": ["number", "null"]}},
    "poses": {"type": "object", "additionalProperties": {"type": "object", "properties": {"x": {"type": ["number", "null"]}, "y": {"type": ["number", "null"]}, "yaw": {"type": ["number", "null"]}}}},
    "lifecycle": {"type": "object", "additionalProperties": {"type": "string"}},
    "recording": {
      "type": "object",
      "description": "the recording so far",
      "properties": {
        "file": {"type": "string", "description": "relative to the run directory"},
        "bytes": {"type": "integer", "minimum": 0, "description": "bytes written to the file (closed chunks)"},
        "messages": {"type": "integer", "minimum": 0, "description": "messages recorded (every channel)"}
      },
      "required": ["file", "bytes", "messages"]
    }
  },
  "required": ["wall", "sim", "mode", "rtf", "paused", "recording"],
  "additionalProperties": true
})schema";

constexpr std::string_view kResourcesSchema = R"schema({
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "fieldproof resource sample",
  "description": "The resource monitor: one sample per process of the run and wall second, from the start of the timeline.",
  "type": "object",
  "properties": {
    "process": {"type": "string", "description": "engine, or <vehicle>_nav for a process stack"},
    "container": {"type": "string", "description": "the same as process (docker stats' name)"},
    "role": {"type": "string", "enum": ["engine", "stack"]},
    "vehicle": {"type": ["string", "null"], "description": "the stack's vehicle; null for the engine"},
    "hosts": {"type": "array", "items": {"type": "string"}, "description": "vehicles whose stacks run inside this process (in-process plugins, or none)"},
    "pid": {"type": "integer"},
    "cpu_pct": {"type": "number", "minimum": 0, "description": "percent of one core over the last wall second"},
    "memory_mb": {"type": "number", "minimum": 0, "description": "resident set, MiB"},
    "memory_limit_mb": {"type": ["number", "null"], "description": "the cgroup's memory limit, MiB; null when unlimited"},
    "pids": {"type": "integer", "minimum": 0, "description": "tasks (threads) of the process"},
    "sim": {"type": "number", "description": "simulation seconds"},
    "wall": {"type": ["number", "null"], "description": "wall clock, epoch seconds"},
    "wall_s": {"type": "number", "description": "wall seconds since the run started"}
  },
  "required": ["process", "role", "vehicle", "pid", "cpu_pct", "memory_mb", "memory_limit_mb", "pids", "sim", "wall"],
  "additionalProperties": true
})schema";

constexpr std::string_view kKpisSchema = R"({
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "fieldproof KPI",
  "description": "At the end of the timeline: each collector's result, then the run's KPI map (kind: kpis).",
  "type": "object",
  "properties": {
    "kind": {"type": "string", "description": "\"kpi_collector\" for a collector's result; \"kpis\" for the map"},
    "name": {"type": "string"},
    "type": {"type": "string"},
    "status": {"type": "string"},
    "reason": {"type": "string"},
    "evidence": {},
    "metrics": {"type": "object", "description": "a collector's measurements, by name", "additionalProperties": {"$ref": "#/$defs/metric"}},
    "kpis": {"type": "object", "description": "the run's KPI map: <assertion or collector>.<metric>", "additionalProperties": {"$ref": "#/$defs/kpi"}}
  },
  "additionalProperties": true,
  "$defs": {
    "metric": {
      "type": "object",
      "properties": {
        "value": {"type": ["number", "null", "string", "boolean"]},
        "unit": {"type": "string"}
      },
      "required": ["value", "unit"]
    },
    "kpi": {
      "type": "object",
      "properties": {
        "value": {"type": ["number", "null", "string", "boolean"]},
        "unit": {"type": "string"},
        "source": {"type": "string", "description": "assertion <name> or collector <name>"}
      },
      "required": ["value", "unit", "source"]
    }
  }
})";

constexpr std::string_view kNetworkSchema = R"json({
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "fieldproof network window",
  "description": "One window (a simulated second) of one radio link's measurements, when the run has radio links (docs/network.md).",
  "type": "object",
  "properties": {
    "link": {"type": "string", "description": "the link's name"},
    "start_s": {"type": "number", "description": "the window's start (simulated s)"},
    "end_s": {"type": "number", "description": "the window's end (simulated s; the run's end for the last)"},
    "sent": {"type": "integer", "description": "messages handed to the link in the window, both directions"},
    "delivered": {"type": "integer", "description": "messages delivered in the window"},
    "lost": {"type": "integer", "description": "messages sent in the window that are never delivered"},
    "latency_p50_s": {"type": "number", "description": "median latency of the messages delivered in the window, 0 when none"},
    "latency_p95_s": {"type": "number"},
    "latency_max_s": {"type": "number"},
    "up": {"type": "boolean", "description": "the link's state at the window's end"},
    "quality": {"type": "number", "description": "0 (down) .. 1: one minus the loss probability"}
  },
  "required": ["link", "start_s", "end_s", "sent", "delivered", "lost", "up"],
  "additionalProperties": true
})json";

}  // namespace

std::string_view side_channel_topic(SideChannel channel) {
  switch (channel) {
    case SideChannel::kEvents:
      return "/fieldproof/events";
    case SideChannel::kAssertions:
      return "/fieldproof/assertions";
    case SideChannel::kMetrics:
      return "/fieldproof/metrics";
    case SideChannel::kResources:
      return "/fieldproof/resources";
    case SideChannel::kKpis:
      return "/fieldproof/kpis";
    case SideChannel::kNetwork:
      return "/fieldproof/network";
  }
  return "/fieldproof/unknown";
}

std::string_view side_channel_schema(SideChannel channel) {
  switch (channel) {
    case SideChannel::kEvents:
      return kEventsSchema;
    case SideChannel::kAssertions:
      return kAssertionsSchema;
    case SideChannel::kMetrics:
      return kMetricsSchema;
    case SideChannel::kResources:
      return kResourcesSchema;
    case SideChannel::kKpis:
      return kKpisSchema;
    case SideChannel::kNetwork:
      return kNetworkSchema;
  }
  return "{}";
}

std::vector<SideChannel> side_channels() {
  return {SideChannel::kEvents, SideChannel::kAssertions, SideChannel::kMetrics,
          SideChannel::kResources, SideChannel::kKpis, SideChannel::kNetwork};
}

std::string vehicle_pose_topic(std::string_view vehicle) {
  return "/fieldproof/vehicles/" + std::string(vehicle) + "/pose";
}

std::string dump_json(const nlohmann::json& value) {
  // nlohmann's serializer writes every non-finite float as null; replace keeps invalid UTF-8
  // from throwing. The tests pin both.
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace fieldproof::record
