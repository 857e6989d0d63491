// The tables. Every key a scenario may write is declared here once (docs/scenarios.md is generated
// from them: the time section, the assertion types and KPI collectors).
#include "fieldproof/scenario/registry.hpp"

#include <algorithm>
#include <set>

#include "fieldproof/scenario/condition.hpp"
#include "fieldproof/scenario/scenario.hpp"
#include "fieldproof/util/example_defaults.hpp"

namespace fieldproof::scenario {

namespace {

// A fluent builder so each table row reads as one line.
struct P {
  ParamSpec s;
  P(std::string name, ParamKind kind, std::string description) {
    s.name = std::move(name);
    s.kind = kind;
    s.description = std::move(description);
  }
  P& req() {
    s.required = true;
    return *this;
  }
  P& def(std::string v) {
    s.default_value = std::move(v);
    return *this;
  }
  P& min(double v, bool exclusive = false) {
    s.minimum = v;
    s.exclusive_minimum = exclusive;
    return *this;
  }
  P& max(double v) {
    s.maximum = v;
    return *this;
  }
  P& choices(std::vector<std::string> c) {
    s.choices = std::move(c);
    return *this;
  }
  P& ref(Ref r) {
    s.ref = r;
    return *this;
  }
  P& nullable() {
    s.nullable = true;
    return *this;
  }
  P& items(size_t lo, size_t hi = 0) {
    s.min_items = lo;
    s.max_items = hi;
    return *this;
  }
  P& fields(std::vector<ParamSpec> f) {
    s.fields = std::move(f);
    return *this;
  }
  P& one_of(std::vector<std::string> k) {
    s.exactly_one_of = std::move(k);
    return *this;
  }
  P& any_of(std::vector<std::string> k) {
    s.at_least_one_of = std::move(k);
    return *this;
  }
  P& depends(std::string key, std::vector<std::string> needs) {
    s.dependent_required.emplace_back(std::move(key), std::move(needs));
    return *this;
  }
  P& scope(ConditionScope c) {
    s.scope = c;
    return *this;
  }
  operator ParamSpec() const { return s; }  // NOLINT(google-explicit-constructor)
};

ParamSpec list_of(std::string name, ParamSpec element, std::string description) {
  ParamSpec s;
  s.name = std::move(name);
  s.kind = ParamKind::kList;
  s.description = std::move(description);
  element.name = "item";
  s.fields = {std::move(element)};
  return s;
}

ParamSpec map_of(std::string name, ParamSpec element, std::string description) {
  ParamSpec s = list_of(std::move(name), std::move(element), std::move(description));
  s.kind = ParamKind::kMap;
  return s;
}

// ---- reusable keys ------------------------------------------------------------------------

ParamSpec vehicle(bool required, std::string description = "the vehicle whose pose is read") {
  P p("vehicle", ParamKind::kName, std::move(description));
  p.ref(Ref::kVehicle);
  if (required) p.req();
  return p;
}

ParamSpec topic(bool required = true) {
  P p("topic", ParamKind::kString,
      "the topic, under the vehicle's namespace when vehicle is given, absolute with a leading /");
  if (required) p.req();
  return p;
}

ParamSpec message_type() {
  return P("message_type", ParamKind::kString,
           "the message type (e.g. ignition.msgs.Twist); discovered from the stream when absent");
}

ParamSpec after_s(std::string description = "grace period after the timeline starts",
                  std::string def = "") {
  P p("after_s", ParamKind::kDuration, std::move(description));
  if (!def.empty()) p.def(def);
  return p;
}

ParamSpec within_s(std::string description =
                       "end of the window (or the deadline); the end of the timeline when absent") {
  return P("within_s", ParamKind::kDuration, std::move(description));
}

ParamSpec window_s(std::string def) {
  return P("window_s", ParamKind::kDuration, "the sliding window, in simulation time")
      .def(std::move(def))
      .min(0, true);
}

ParamSpec placement(std::string name, std::string description, bool required) {
  P p(std::move(name), ParamKind::kPlacement, std::move(description));
  if (required) p.req();
  return p;
}

ParamSpec condition(std::string description, bool required = true,
                    ConditionScope scope = ConditionScope::kValue) {
  P p("condition", ParamKind::kCondition, std::move(description));
  p.scope(scope);
  if (required) p.req();
  return p;
}

ParamSpec action_ref(std::string name, std::string description, bool required) {
  P p(std::move(name), ParamKind::kString, std::move(description));
  p.ref(Ref::kAction);
  if (required) p.req();
  return p;
}

ParamSpec to_spec() {
  return P("to", ParamKind::kObject,
           "exactly one of vehicle (another vehicle of the scenario), model (a model of the "
           "world) or target (a placement)")
      .req()
      .fields({P("vehicle", ParamKind::kName, "another vehicle of the scenario").ref(Ref::kVehicle),
               P("model", ParamKind::kString, "a model of the world, by name"),
               placement("target", "a placement in the world", false)})
      .one_of({"vehicle", "model", "target"});
}

ParamSpec region_spec() {
  ParamSpec vertex = P("vertex", ParamKind::kList, "an [x, y] vertex").items(2, 2);
  vertex.fields = {P("coordinate", ParamKind::kNumber, "metres")};
  ParamSpec polygon = list_of("polygon", vertex, "[x, y] vertices, three or more, in order");
  polygon.min_items = 3;
  return P("region", ParamKind::kObject,
           "exactly one of polygon, circle or box; optional z_min, z_max bound the height")
      .req()
      .fields({polygon,
               P("circle", ParamKind::kObject, "a circle: x, y, radius_m")
                   .fields({P("x", ParamKind::kNumber, "centre x (m)").req(),
                            P("y", ParamKind::kNumber, "centre y (m)").req(),
                            P("radius_m", ParamKind::kNumber, "radius (m)").req().min(0, true)}),
               P("box", ParamKind::kObject, "an axis-aligned box: x_min, x_max, y_min, y_max")
                   .fields({P("x_min", ParamKind::kNumber, "m").req(),
                            P("x_max", ParamKind::kNumber, "m").req(),
                            P("y_min", ParamKind::kNumber, "m").req(),
                            P("y_max", ParamKind::kNumber, "m").req()}),
               P("z_min", ParamKind::kNumber, "lowest height (m)"),
               P("z_max", ParamKind::kNumber, "highest height (m)")})
      .one_of({"polygon", "circle", "box"});
}

std::vector<std::string> metric_names() {
  return {"sim_time", "rtf", "x", "y", "z", "yaw", "distance_to"};
}

// The keys of a signal: a topic field or a metric of the run (docs/assertions.md).
std::vector<ParamSpec> signal_fields() {
  return {topic(false),
          P("field", ParamKind::kString,
            "the message field: linear.x, pose.pose.position.x, ranges[0], status.status"),
          message_type(),
          P("metric", ParamKind::kEnum,
            "a metric of the run: sim_time, rtf, or the vehicle's ground-truth x, y, z, yaw, "
            "distance_to a target")
              .choices(metric_names()),
          placement("target", "the target of distance_to", false),
          vehicle(false, "the vehicle of the signal (the assertion's vehicle when absent)")};
}

ParamSpec when_spec() {
  std::vector<ParamSpec> f = signal_fields();
  f.push_back(condition("an expression over value, the signal's current value"));
  return P("when", ParamKind::kObject,
           "start when a signal (a topic field or a metric) satisfies a condition")
      .fields(f)
      .one_of({"topic", "metric"})
      .depends("topic", {"field"});
}

ParamSpec sequence_steps() {
  std::vector<ParamSpec> f = {
      P("name", ParamKind::kString, "labels the step in the evidence"),
      action_ref("action", "a timeline entry whose event is the step", false),
      P("event", ParamKind::kEnum, "started, or finished (ended ok)")
          .choices({"started", "finished"})
          .def("finished"),
      P("assertion", ParamKind::kName, "another assertion of the scenario, which must pass")
          .ref(Ref::kAssertion)};
  for (auto& s : signal_fields()) f.push_back(s);
  f.push_back(condition("an expression over value (signal steps)", false));
  ParamSpec step = P("step", ParamKind::kObject,
                     "one of: an action (with event), a signal with a condition, an assertion")
                       .fields(f)
                       .one_of({"action", "topic", "metric", "assertion"})
                       .depends("topic", {"field", "condition"})
                       .depends("metric", {"condition"})
                       .depends("event", {"action"});
  ParamSpec steps = list_of("steps", step, "the steps, in order (one or more)");
  steps.required = true;
  steps.min_items = 1;
  return steps;
}

std::vector<std::string> kStates() { return {"unconfigured", "inactive", "active", "finalized"}; }

// ---- the 16 assertion types -----------------------------------------------------------------

// What a navigation run checks first: arrival at a pose, an action's time, a topic's rate,
// contacts, a topic's values.
void add_core_assertions(std::vector<TypeSpec>& t) {
  t.push_back(
      {"reach_pose",
       "The vehicle's ground-truth pose comes within a tolerance of a target.",
       {vehicle(true), placement("target", "a frame of the world, or x, y, optional yaw", true),
        P("tolerance_m", ParamKind::kNumber, "distance to the target").def("0.5").min(0, true),
        P("yaw_tolerance_rad", ParamKind::kNumber,
          "heading tolerance; the heading is not checked when absent")
            .min(0, true),
        within_s("deadline after the timeline starts; the end of the timeline when absent")},
       {{"closest_m", "m", "closest distance to the target"},
        {"reached_at_s", "s", "when the target was reached"},
        {"final_distance_m", "m", "distance at the last pose"}},
       {},
       {},
       {},
       ""});
  t.push_back({"within_time",
               "A timeline action reports a successful result within a duration of its start.",
               {action_ref("action",
                           "the name of a timeline entry (an unnamed one is <action>@<at>s)", true),
                P("max_s", ParamKind::kDuration, "the result must arrive within this long").req()},
               {{"duration_s", "s", "how long the action took"}},
               {},
               {},
               {},
               ""});
  t.push_back(
      {"topic_rate",
       "A topic keeps publishing at a rate.",
       {topic(), vehicle(false, "the vehicle whose namespace the topic is under"),
        P("min_hz", ParamKind::kNumber, "lowest acceptable rate over a window").req().min(0),
        P("max_hz", ParamKind::kNumber, "highest acceptable rate").min(0), window_s("5s"),
        after_s("grace period before windows count", "0"), message_type()},
       {{"mean_hz", "Hz", "mean rate"},
        {"lowest_hz", "Hz", "lowest window"},
        {"highest_hz", "Hz", "highest window"},
        {"messages", "", "messages seen"}},
       {},
       {},
       {},
       ""});
  t.push_back(
      {"no_collision",
       "The vehicle's chassis touches nothing during the timeline.",
       {vehicle(true, "the vehicle whose contact sensor is read"),
        P("topic", ParamKind::kString, "the contacts topic; <namespace>/contacts by default"),
        list_of("ignore", P("entity", ParamKind::kString, "a model or scoped collision name"),
                "entities whose contacts do not count")},
       {{"contacts", "", "contacts not ignored"}},
       {},
       {},
       {},
       ""});
  t.push_back({"topic_value",
               "A condition over a field of a topic's messages.",
               {topic(), vehicle(false, "the vehicle whose namespace the topic is under"),
                P("field", ParamKind::kString,
                  "the field: linear.x, pose.pose.position.x, ranges[0], status.status")
                    .req(),
                condition("an expression over value"),
                P("mode", ParamKind::kEnum,
                  "always (every message in the window satisfies it) or eventually (one does)")
                    .choices({"always", "eventually"})
                    .def("always"),
                after_s("grace period after the timeline starts", "0"),
                within_s("end of the window: the deadline of eventually, the end of always"),
                message_type()},
               {{"samples", "", "messages evaluated"},
                {"lowest", "", "lowest value"},
                {"highest", "", "highest value"},
                {"last", "", "last value"}},
               {},
               {},
               {},
               ""});
}

// Where the vehicle drives: a region, the distance to something, the path's shape.
void add_geometry_assertions(std::vector<TypeSpec>& t) {
  t.push_back({"geofence",
               "The vehicle's ground truth stays inside (or outside) a region of the world.",
               {vehicle(true), region_spec(),
                P("mode", ParamKind::kEnum, "inside or outside")
                    .choices({"inside", "outside"})
                    .def("inside"),
                after_s(), within_s()},
               {{"min_clearance_m", "m", "smallest signed clearance to the boundary"},
                {"samples", "", "poses judged"}},
               {},
               {},
               {},
               ""});
  t.push_back({"min_distance",
               "The vehicle keeps a minimum distance to another vehicle, a model or a point.",
               {vehicle(true), to_spec(),
                P("min_m", ParamKind::kNumber, "the distance never to go below, between origins")
                    .req()
                    .min(0),
                after_s(), within_s()},
               {{"closest_m", "m", "closest distance"},
                {"closest_at_s", "s", "when it was closest"},
                {"final_m", "m", "distance at the end"}},
               {},
               {},
               {},
               ""});
  t.push_back(
      {"path_efficiency",
       "The path the vehicle drove is close to the straight line, and short enough.",
       {vehicle(true), action_ref("action", "a timeline entry: the window is its run", false),
        after_s("start of the window, when there is no action"),
        within_s("end of the window, when there is no action"),
        placement("target", "the straight line's end; the window's last pose when absent", false),
        P("min_ratio", ParamKind::kNumber,
          "straight-line distance over path length; 1 is a straight drive")
            .def("0.5")
            .min(0)
            .max(1),
        P("max_path_m", ParamKind::kNumber, "the path length never to exceed").min(0, true)},
       {{"path_m", "m", "path length"},
        {"straight_m", "m", "straight-line distance"},
        {"efficiency", "", "straight_m / path_m"},
        {"max_speed_mps", "m/s", "highest speed"},
        {"mean_speed_mps", "m/s", "mean speed"}},
       {},
       {},
       {},
       ""});
}

// When things happen: a span of the timeline, the age of messages, the order of events.
void add_timing_assertions(std::vector<TypeSpec>& t) {
  t.push_back({"mission_time",
               "A span of the timeline completes within a duration.",
               {P("max_s", ParamKind::kDuration, "the span must complete within this long").req(),
                P("min_s", ParamKind::kDuration, "and take at least this long"),
                action_ref("start",
                           "the entry whose start opens the span; the timeline's start "
                           "when absent",
                           false),
                action_ref("end",
                           "the entry whose successful end closes the span; the "
                           "timeline's end when absent",
                           false)},
               {{"duration_s", "s", "the span's duration"}},
               {},
               {},
               {},
               ""});
  t.push_back({"message_latency",
               "The messages of a stamped topic arrive fresh.",
               {topic(), vehicle(false, "the vehicle whose namespace the topic is under"),
                P("max_ms", ParamKind::kNumber, "the latency never to exceed, in milliseconds")
                    .req()
                    .min(0),
                P("statistic", ParamKind::kEnum, "which statistic of a window is judged")
                    .choices({"p95", "max", "mean"})
                    .def("p95"),
                window_s("2s"), after_s(), within_s(), message_type()},
               {{"p95_ms", "ms", "95th percentile age"},
                {"max_ms", "ms", "largest age"},
                {"mean_ms", "ms", "mean age"},
                {"messages", "", "messages measured"}},
               {},
               {},
               {},
               ""});
  t.push_back({"sequence",
               "Events happen in order.",
               {sequence_steps(), vehicle(false, "the vehicle the signal steps default to"),
                within_s("the last step must happen by then"),
                P("max_gap_s", ParamKind::kDuration,
                  "each step must happen within this long after the previous")},
               {{"steps_done", "", "steps that happened"},
                {"completed_at_s", "s", "when the last step happened"},
                {"duration_s", "s", "from the first step to the last"}},
               {},
               {},
               {},
               ""});
}

// The vehicle's stack as processes and managed nodes: CPU, memory, lifecycle states.
void add_process_assertions(std::vector<TypeSpec>& t) {
  t.push_back(
      {"resource_usage",
       "A process of the vehicle stays within a CPU and memory footprint.",
       {vehicle(true, "the vehicle whose stack is measured"),
        P("container", ParamKind::kEnum, "the process measured: vehicle (the vehicle's stack)")
            .choices({"vehicle"})
            .def("vehicle"),
        P("max_cpu_pct", ParamKind::kNumber,
          "CPU limit in percent of one core, judged on the mean over window_s")
            .min(0, true),
        P("max_memory_mb", ParamKind::kNumber, "memory limit in MiB, judged on every sample")
            .min(0, true),
        window_s("5s"), after_s(), within_s()},
       {{"peak_cpu_pct", "%", "highest CPU sample"},
        {"mean_cpu_pct", "%", "mean CPU"},
        {"peak_memory_mb", "MiB", "highest memory sample"},
        {"mean_memory_mb", "MiB", "mean memory"},
        {"samples", "", "samples taken"}},
       {},
       {"max_cpu_pct", "max_memory_mb"},
       {},
       ""});
  t.push_back(
      {"lifecycle_state",
       "A managed (lifecycle) node of the vehicle is in a state.",
       {vehicle(true, "the vehicle the node belongs to"),
        P("node", ParamKind::kString, "the node, relative to the vehicle's namespace or absolute")
            .req(),
        P("state", ParamKind::kEnum, "the state").choices(kStates()).req(),
        P("mode", ParamKind::kEnum, "eventually (the default) or always")
            .choices({"eventually", "always"})
            .def("eventually"),
        after_s(), within_s("the deadline of eventually, the end of always")},
       {{"samples", "", "states observed"}, {"reached_at_s", "s", "when the state was first seen"}},
       {},
       {},
       {},
       ""});
}

// Temporal logic over named signals: always, never, eventually.
void add_temporal_assertions(std::vector<TypeSpec>& t) {
  ParamSpec signals = map_of("signals",
                             P("signal", ParamKind::kObject, "a topic field or a metric of the run")
                                 .fields(signal_fields())
                                 .one_of({"topic", "metric"})
                                 .depends("topic", {"field"}),
                             "the named signals, one or more");
  signals.required = true;
  signals.min_items = 1;
  signals.identifier_keys = true;
  std::vector<MetricSpec> temporal_metrics = {
      {"evaluations", "", "times the condition was evaluated"},
      {"satisfied_at_s", "s", "when the condition first held"},
      {"longest_hold_s", "s", "longest time the condition held without a break"}};
  for (const char* kind : {"always", "never", "eventually"}) {
    std::vector<ParamSpec> params = {
        signals,
        condition("an expression over the signals' names (every signal must be read)", true,
                  ConditionScope::kSignals),
        vehicle(false, "the vehicle the signals default to"), after_s(),
        within_s("the window: the deadline of eventually, the end of always and never")};
    std::string summary;
    if (std::string(kind) == "always") {
      summary = "A condition over named signals holds at every evaluation in the window.";
    } else if (std::string(kind) == "never") {
      summary = "A condition over named signals never holds in the window.";
    } else {
      summary = "A condition over named signals holds at some point (for for_s, if given).";
      params.push_back(P("for_s", ParamKind::kDuration,
                         "the condition must keep holding this long once it first does"));
    }
    t.push_back({kind, summary, params, temporal_metrics, {}, {}, {}, ""});
  }
}

std::vector<TypeSpec> builtin_assertions() {
  std::vector<TypeSpec> t;
  add_core_assertions(t);
  add_geometry_assertions(t);
  add_timing_assertions(t);
  add_process_assertions(t);
  add_temporal_assertions(t);
  return t;
}

// ---- the 8 KPI collectors -------------------------------------------------------------------

std::vector<TypeSpec> builtin_kpis() {
  std::vector<TypeSpec> t;
  t.push_back(
      {"path",
       "The path a vehicle drove: length, straight line, efficiency, speeds.",
       {vehicle(true), action_ref("action", "a timeline entry: its run is the window", false),
        after_s(), within_s(),
        placement("target", "the straight line's end; the last pose when absent", false)},
       {{"path_m", "m", ""},
        {"straight_m", "m", ""},
        {"efficiency", "", ""},
        {"max_speed_mps", "m/s", ""},
        {"mean_speed_mps", "m/s", ""}},
       {},
       {},
       {},
       ""});
  t.push_back({"mission_time",
               "The duration of the timeline or of a span of it.",
               {action_ref("start", "the entry whose start opens the span", false),
                action_ref("end", "the entry whose successful end closes the span", false)},
               {{"duration_s", "s", ""}},
               {},
               {},
               {},
               ""});
  t.push_back({"distance",
               "The distance of a vehicle to another vehicle, a model or a target.",
               {vehicle(true), to_spec(), after_s(), within_s()},
               {{"closest_m", "m", ""}, {"closest_at_s", "s", ""}, {"final_m", "m", ""}},
               {},
               {},
               {},
               ""});
  t.push_back(
      {"rate",
       "The rate of a topic.",
       {topic(), vehicle(false, "the vehicle whose namespace the topic is under"), window_s("5s"),
        after_s("grace period after the timeline starts", "0"), message_type()},
       {{"mean_hz", "Hz", ""},
        {"lowest_hz", "Hz", ""},
        {"highest_hz", "Hz", ""},
        {"messages", "", ""}},
       {},
       {},
       {},
       ""});
  t.push_back(
      {"latency",
       "The age of a stamped topic's messages.",
       {topic(), vehicle(false, "the vehicle whose namespace the topic is under"), window_s("2s"),
        after_s(), message_type()},
       {{"p95_ms", "ms", ""}, {"max_ms", "ms", ""}, {"mean_ms", "ms", ""}, {"messages", "", ""}},
       {},
       {},
       {},
       ""});
  t.push_back({"resources",
               "The CPU and memory of a vehicle's stack.",
               {vehicle(true, "the vehicle whose stack is measured"),
                P("container", ParamKind::kEnum, "the process measured: vehicle (the stack)")
                    .choices({"vehicle"})
                    .def("vehicle"),
                after_s()},
               {{"peak_cpu_pct", "%", ""},
                {"mean_cpu_pct", "%", ""},
                {"peak_memory_mb", "MiB", ""},
                {"mean_memory_mb", "MiB", ""},
                {"samples", "", ""}},
               {},
               {},
               {},
               ""});
  ParamSpec count_if = condition("counts the messages whose value satisfies it", false);
  count_if.name = "count_if";
  t.push_back({"link",
               "A vehicle's radio link (network section): time down, outages, quality, from its "
               "link_state.",
               {vehicle(true, "the vehicle whose link_state is read"), after_s(), within_s()},
               {{"down_s", "s", "time the link was down in the window"},
                {"outages", "", "times it went down"},
                {"longest_outage_s", "s", "the longest time down"},
                {"min_quality", "", "lowest quality seen"},
                {"mean_quality", "", "time-weighted mean quality"},
                {"samples", "", "link_state messages read"}},
               {},
               {},
               {},
               ""});
  t.push_back({"value",
               "The values of a topic's field.",
               {topic(), vehicle(false, "the vehicle whose namespace the topic is under"),
                P("field", ParamKind::kString, "the message field").req(), count_if, after_s(),
                within_s(), message_type()},
               {{"samples", "", ""},
                {"min", "", ""},
                {"max", "", ""},
                {"mean", "", ""},
                {"last", "", ""},
                {"count", "", "how often count_if held"}},
               {},
               {},
               {},
               ""});
  return t;
}

// ---- the timeline's actions -------------------------------------------------------------------

// Faults (docs/network.md, faults): the topics the world publishes for a vehicle, on their way to
// its stack, and the stack's process.
void add_fault_actions(std::vector<TypeSpec>& t, const ParamSpec& veh) {
  const std::vector<std::string> sensor_topics = {"odometry", "scan", "imu", "contacts", "navsat"};
  const ParamSpec fault_topic =
      P("topic", ParamKind::kEnum,
        "the vehicle's topic the world publishes (under /model/<vehicle>/), on its way to the stack")
          .choices(sensor_topics)
          .req();
  const ParamSpec fault_window =
      P("duration_s", ParamKind::kDuration, "how long the fault lasts (simulation time)")
          .min(0, true)
          .req();
  t.push_back({"fault.drop_topic",
               "Drops messages of a vehicle's topic on their way from the world to its stack, each "
               "with a probability, for duration_s (drawn from the seed).",
               {veh, fault_topic,
                P("probability", ParamKind::kNumber, "the chance that a message is dropped, (0, 1]")
                    .min(0, true)
                    .max(1)
                    .req(),
                fault_window},
               {},
               {},
               {},
               {},
               ""});
  t.push_back({"fault.delay_topic",
               "Delivers messages of a vehicle's topic delay_s later than the world published "
               "them, for duration_s.",
               {veh, fault_topic,
                P("delay_s", ParamKind::kDuration, "how much later each message arrives")
                    .min(0, true)
                    .req(),
                fault_window},
               {},
               {},
               {},
               {},
               ""});
  t.push_back({"fault.freeze_sensor",
               "A vehicle's sensor keeps publishing its last value (the same message, at its own "
               "rate) for duration_s.",
               {veh,
                P("sensor", ParamKind::kEnum, "the sensor, by its topic under /model/<vehicle>/")
                    .choices(sensor_topics)
                    .req(),
                fault_window},
               {},
               {},
               {},
               {},
               ""});
  t.push_back(
      {"fault.kill_stack",
       "Kills the vehicle's stack process (SIGKILL to its process group); with restart, starts "
       "it again restart_after_s later and the run goes on.",
       {vehicle(true, "the vehicle whose stack is killed (a process stack: command)"),
        P("restart", ParamKind::kBool, "start the stack again after restart_after_s").def("false"),
        P("restart_after_s", ParamKind::kDuration,
          "simulation time between the kill and the new start (restart: true)")
            .min(0)
            .def("0"),
        P("resend_goals", ParamKind::kBool,
          "after the restart, send the vehicle's open navigate_to_pose goals to the new stack "
          "again (without it they end aborted at the kill)")
            .def("true")},
       {},
       {},
       {},
       {},
       ""});
}

std::vector<TypeSpec> builtin_actions() {
  std::vector<TypeSpec> t;
  ParamSpec veh = vehicle(true, "the vehicle the action is for");
  t.push_back(
      {"navigate_to_pose",
       "Sends a navigation goal to the vehicle's stack; ends with the goal's result.",
       {veh, placement("goal", "the goal: a frame of the world or x, y, optional yaw", true)},
       {},
       {},
       {},
       {},
       ""});
  t.push_back({"cmd_vel",
               "Commands a velocity to the vehicle (for duration_s, then zero; once when absent).",
               {veh, P("linear_x", ParamKind::kNumber, "forward speed (m/s)").def("0"),
                P("angular_z", ParamKind::kNumber, "turn rate (rad/s)").def("0"),
                P("duration_s", ParamKind::kDuration,
                  "how long the command is held (simulation time) before a zero command")
                    .min(0, true)},
               {},
               {},
               {},
               {},
               ""});
  t.push_back({"sim.pause",
               "Pauses the world's physics (sim and realtime modes).",
               {P("duration_s", ParamKind::kDuration,
                  "wall-clock time after which the world resumes and the entry ends; paused "
                  "until a sim.resume or sim.step when absent")
                    .min(0, true)},
               {},
               {},
               {},
               {},
               ""});
  t.push_back({"sim.resume",
               "Runs a paused world again (sim and realtime modes).",
               {},
               {},
               {},
               {},
               {},
               ""});
  t.push_back(
      {"sim.step",
       "Advances a paused world by steps or duration_s and pauses it again (a running "
       "world is paused first).",
       {P("steps", ParamKind::kInteger, "physics steps").min(1),
        P("duration_s", ParamKind::kDuration, "simulation time, a whole number of physics steps")
            .min(0, true)},
       {},
       {"steps", "duration_s"},
       {},
       {},
       ""});
  t.push_back({"spawn_model",
               "Adds a model to the world at a placement.",
               {P("model", ParamKind::kName, "the new model's name").req(),
                P("shape", ParamKind::kEnum, "its collision shape")
                    .choices({"box", "cylinder", "sphere", "vehicle"})
                    .def("box"),
                P("size", ParamKind::kList, "box: [x, y, z] in metres")
                    .items(3, 3)
                    .fields({P("edge", ParamKind::kNumber, "m").min(0, true)}),
                P("radius_m", ParamKind::kNumber, "cylinder and sphere radius").min(0, true),
                P("length_m", ParamKind::kNumber, "cylinder length").min(0, true),
                P("vehicle_model", ParamKind::kString,
                  "shape vehicle: its robot model, named as vehicles[].model names it (a path, "
                  "model://NAME or a short name)")
                    .def(std::string(util::kDefaultRobotModel)),
                placement("pose",
                          "where: a frame of the world or a pose x, y, optional z (a shape's "
                          "centre height; resting on the ground when absent) and yaw",
                          true)},
               {},
               {},
               {},
               {},
               ""});
  t.push_back({"link.down",
               "Takes the vehicle's radio links down (network section): nothing crosses them "
               "(for duration_s, then up again; until a link.up when absent).",
               {veh, P("duration_s", ParamKind::kDuration,
                       "how long the links stay down (simulation time)")
                         .min(0, true)},
               {},
               {},
               {},
               {},
               ""});
  t.push_back({"link.up",
               "Brings the vehicle's radio links back up after a link.down (range and outage "
               "regions still apply).",
               {veh},
               {},
               {},
               {},
               {},
               ""});
  t.push_back({"remove_model",
               "Removes a model from the world.",
               {P("model", ParamKind::kString, "the model's name").req()},
               {},
               {},
               {},
               {},
               ""});
  add_fault_actions(t, veh);
  return t;
}

std::vector<ParamSpec> assertion_common_fields() {
  return {P("name", ParamKind::kName, "unique name (lower case, digits, underscores)").req(),
          P("type", ParamKind::kString, "the assertion type").req(),
          P("on_fail", ParamKind::kEnum,
            "continue (the timeline completes) or abort (the timeline is cancelled at the "
            "failure)")
              .choices({"continue", "abort"})
              .def("continue")};
}

std::vector<ParamSpec> kpi_common_fields() {
  return {P("name", ParamKind::kName, "unique name (lower case, digits, underscores)").req(),
          P("type", ParamKind::kString, "the collector type").req()};
}

std::vector<ParamSpec> action_common_fields() {
  return {P("action", ParamKind::kString, "the action").req(),
          P("name", ParamKind::kName,
            "the entry's name (assertions refer to it); <action>@<at>s when absent"),
          P("at", ParamKind::kDuration,
            "start this long after the timeline starts (0 when no "
            "trigger is given)"),
          P("every", ParamKind::kDuration, "repeat with this period from at").min(0, true),
          action_ref("after", "start once this entry has ended ok", false),
          when_spec(),
          P("until_s", ParamKind::kDuration,
            "stop repeating (every) or waiting (when) at this time of the timeline")};
}

// The `network` section (docs/network.md): the ground station, the links, telemetry, outages.
ParamSpec network_section() {
  ParamSpec link_item =
      P("link", ParamKind::kObject,
        "a radio link between the ground station and a vehicle, or between two vehicles")
          .fields({P("name", ParamKind::kName,
                     "unique name; <ground station>_<vehicle> (or <vehicle>_<peer>) when absent"),
                   vehicle(true, "the vehicle at one end"),
                   P("peer", ParamKind::kName,
                     "another vehicle at the other end; the ground station when absent")
                       .ref(Ref::kVehicle),
                   P("latency_s", ParamKind::kDuration, "fixed one-way delay").def("0.02").min(0),
                   P("jitter_s", ParamKind::kDuration,
                     "added delay, uniform in [0, jitter_s), drawn per message")
                       .def("0")
                       .min(0),
                   P("loss", ParamKind::kNumber, "probability that a message is lost, drawn per "
                                                 "message")
                       .def("0")
                       .min(0)
                       .max(1),
                   P("bandwidth_kbps", ParamKind::kNumber,
                     "kilobits per second each way; messages queue behind each other; "
                     "unlimited when absent")
                       .min(0, true),
                   P("range_m", ParamKind::kNumber,
                     "beyond this distance between the ends the link is down")
                       .min(0, true),
                   P("degrade_from_m", ParamKind::kNumber,
                     "from this distance to range_m the loss rises linearly to 1")
                       .min(0),
                   list_of("topics", P("topic", ParamKind::kString, "a topic under /model/<v>/"),
                           "a vehicle-to-vehicle link's topics, relative to /model/<vehicle>/: "
                           "each end's arrive at the other as "
                           "/model/<receiver>/peers/<sender>/<topic>")})
          .depends("degrade_from_m", {"range_m"});
  ParamSpec outage_item =
      P("outage", ParamKind::kObject, "a region where radio links are down (a shed, a tunnel)")
          .fields({P("name", ParamKind::kName, "the outage's name (in engine.log)"),
                   region_spec(),
                   list_of("vehicles", vehicle(false, "a vehicle"),
                           "the vehicles whose links it cuts; every vehicle when absent")});
  ParamSpec network =
      P("network", ParamKind::kObject,
        "radio links in simulated time: a ground station, its links to the vehicles, telemetry "
        "and outages (docs/network.md)")
          .fields({P("ground_station", ParamKind::kObject,
                     "where the engine's goals and commands leave from and statuses and "
                     "telemetry arrive")
                       .fields({P("name", ParamKind::kName, "its name (topics /ground/<name>/...)")
                                    .def("ground"),
                                P("x", ParamKind::kNumber, "position x (m)").def("0"),
                                P("y", ParamKind::kNumber, "position y (m)").def("0")}),
                   list_of("links", link_item, "the links; at most one to the ground per vehicle"),
                   list_of("telemetry", P("topic", ParamKind::kString, "a topic under /model/<v>/"),
                           "topics, relative to /model/<vehicle>/, each vehicle sends to the "
                           "ground station (navigate_to_pose/status always is)"),
                   list_of("outages", outage_item, "regions where links are down")});
  network.fields[1].min_items = 1;
  network.fields[1].required = true;
  return network;
}

// time: the clock's mode, pace and budgets.
ParamSpec time_section() {
  ParamSpec time =
      P("time", ParamKind::kObject, "the clock: mode, pace and budgets")
          .fields({P("mode", ParamKind::kEnum,
                     "sim (free-running at rtf), realtime (locked to the wall clock, drift "
                     "judged) or lockstep (the world waits for the vehicles)")
                       .choices({"sim", "realtime", "lockstep"})
                       .def("sim"),
                   P("rtf", ParamKind::kNumber,
                     "target real-time factor: sim: the world's own when null; realtime: 1.0 "
                     "only; lockstep: the pace cap of a step, 1.0 by default")
                       .nullable()
                       .min(0, true),
                   P("tolerance", ParamKind::kNumber,
                     "allowed deviation of a metrics window's RTF from the target")
                       .def("0.1")
                       .min(0),
                   P("max_drift_s", ParamKind::kDuration,
                     "realtime: the drift over the timeline that loses the lock")
                       .def("1.0"),
                   P("on_drift", ParamKind::kEnum, "realtime: fail or warn when the lock is lost")
                       .choices({"fail", "warn"})
                       .def("fail"),
                   P("step_s", ParamKind::kDuration,
                     "lockstep: simulation seconds per step, a whole number of physics steps")
                       .def("0.1")
                       .min(0, true),
                   P("ack_timeout_s", ParamKind::kDuration,
                     "lockstep: how long a vehicle may take to acknowledge a step")
                       .def("30")
                       .min(0, true),
                   P("timeout_s", ParamKind::kDuration,
                     "the wall-clock budget of the run once every vehicle is ready")
                       .def("10m")
                       .min(0, true)});
  return time;
}

// vehicles: each with its model, spawn, stack and parameters.
ParamSpec vehicles_section() {
  ParamSpec stack =
      P("stack", ParamKind::kObject,
        "the vehicle's software: an in-process plugin or a command run as a process")
          .fields(
              {P("plugin", ParamKind::kString,
                 "an in-process stack plugin: a path with a '/' (against the scenario's "
                 "folder) or a name N found as N, libN.so or N.so in the scenario's folder, "
                 "on FIELDPROOF_PLUGIN_PATH and in the installed stack folder (e.g. " +
                     std::string(util::kDefaultStackPlugin) + ")"),
               list_of("command", P("arg", ParamKind::kString, "argv element"),
                       "argv of a process stack; the program is found against the "
                       "scenario's folder, then on PATH, then beside fieldproof (e.g. "
                       "[" +
                           std::string(util::kDefaultStackProgram) + "] or [python3, my_nav.py])"),
               list_of("arguments", P("arg", ParamKind::kString, "argument"),
                       "extra arguments appended to command"),
               P("cwd", ParamKind::kString,
                 "a process stack's working directory, against the scenario's folder "
                 "(default: the scenario's folder)"),
               map_of("env", P("value", ParamKind::kScalar, "a value"),
                      "environment variables added for a process stack")})
          .one_of({"plugin", "command"});
  stack.fields[1].min_items = 1;
  ParamSpec vehicle_item =
      P("vehicle", ParamKind::kObject, "a vehicle of the run")
          .fields({P("name", ParamKind::kName, "unique name; the model's name in the world").req(),
                   P("model", ParamKind::kString,
                     "the vehicle's robot model: an SDF model file, a model folder, model://NAME "
                     "or a short name (docs/robots.md)")
                       .def(std::string(util::kDefaultRobotModel)),
                   placement("spawn", "where it starts: a frame of the world or x, y, yaw", true),
                   stack,
                   map_of("parameters", P("value", ParamKind::kScalar, "a parameter value"),
                          "parameters given to the stack")});
  ParamSpec vehicles = list_of("vehicles", vehicle_item, "the vehicles of the run");
  vehicles.required = true;
  vehicles.min_items = 1;
  return vehicles;
}

// map: what a stack plans on.
ParamSpec map_section() {
  ParamSpec map =
      P("map", ParamKind::kObject,
        "the map a stack plans on: its bounds and resolution (the world's extent at 0.05 m when "
        "absent); at most 1e8 cells")
          .fields({P("bounds", ParamKind::kObject,
                     "the rectangle the map covers, in the world frame (m); the world's extent "
                     "when absent")
                       .fields({P("x_min", ParamKind::kNumber, "m").req(),
                                P("x_max", ParamKind::kNumber, "m").req(),
                                P("y_min", ParamKind::kNumber, "m").req(),
                                P("y_max", ParamKind::kNumber, "m").req()}),
                   P("resolution", ParamKind::kNumber, "metres per cell")
                       .def("0.05")
                       .min(0, true)});
  return map;
}

// outputs: what the run records.
ParamSpec outputs_section() {
  ParamSpec outputs =
      P("outputs", ParamKind::kObject, "what the run records")
          .fields({P("record", ParamKind::kBoolOrString,
                     "true records the bus to recording/recording.mcap; a string names the "
                     "file under recording/")
                       .def("false"),
                   list_of("topics", P("topic", ParamKind::kString, "a topic"),
                           "allow-list of recorded topics; empty records everything")});

  return outputs;
}

// gps_denied: where navsat has no fix, rectangles of the world frame.
ParamSpec gps_denied_section() {
  ParamSpec gps_denied = list_of(
      "gps_denied",
      P("region", ParamKind::kObject,
        "a rectangle of the world frame (m) where /model/<v>/navsat reports no fix (NaN)")
          .fields({P("name", ParamKind::kString, "the region's name, for messages"),
                   P("x_min", ParamKind::kNumber, "m").req(),
                   P("x_max", ParamKind::kNumber, "m, greater than x_min").req(),
                   P("y_min", ParamKind::kNumber, "m").req(),
                   P("y_max", ParamKind::kNumber, "m, greater than y_min").req()}),
      "regions without satellite navigation: while a vehicle's centre is inside one, its navsat "
      "reports latitude, longitude, altitude and velocities NaN (docs/robots.md)");

  return gps_denied;
}

// The typed items of the timeline, the assertions and the KPIs: their common fields, and the
// type's own by their discriminator.
ParamSpec typed_item(const char* name, const char* description, const char* discriminator,
                     TypedSet set, std::vector<ParamSpec> common) {
  ParamSpec item;
  item.name = name;
  item.kind = ParamKind::kTyped;
  item.description = description;
  item.discriminator = discriminator;
  item.typed_set = set;
  item.fields = std::move(common);
  return item;
}

ParamSpec make_root() {
  const ParamSpec entry =
      typed_item("entry", "a timeline entry", "action", TypedSet::kActions, action_common_fields());
  const ParamSpec assertion = typed_item("assertion", "an assertion", "type", TypedSet::kAssertions,
                                         assertion_common_fields());
  const ParamSpec kpi =
      typed_item("kpi", "a KPI collector", "type", TypedSet::kKpis, kpi_common_fields());
  return P("scenario", ParamKind::kObject, "a fieldproof scenario")
      .fields({P("name", ParamKind::kString, "the scenario's name").req(),
               P("description", ParamKind::kString, "free text"),
               P("world", ParamKind::kString, "the SDF world file, relative to the scenario file")
                   .req(),
               P("seed", ParamKind::kInteger,
                 "the run's random numbers; 0 when absent (and the record says so)")
                   .min(0)
                   .max(static_cast<double>(kMaxSeed)),
               time_section(), map_section(), vehicles_section(), network_section(),
               list_of("timeline", entry, "what happens, and when"),
               list_of("assertions", assertion, "what must hold"),
               list_of("kpis", kpi, "what is measured without judging"), outputs_section(),
               list_of("plugins", P("path", ParamKind::kString, "a shared library"),
                       "assertion plugin libraries, relative to the scenario file"),
               gps_denied_section()});
}

}  // namespace

SpecRegistry::SpecRegistry()
    : assertions_(builtin_assertions()),
      kpis_(builtin_kpis()),
      actions_(builtin_actions()),
      root_(make_root()) {}

const SpecRegistry& SpecRegistry::builtin() {
  static const SpecRegistry kBuiltin;
  return kBuiltin;
}

namespace {
const TypeSpec* find_type(const std::vector<TypeSpec>& v, std::string_view type) {
  for (const auto& t : v) {
    if (t.type == type) return &t;
  }
  return nullptr;
}

const ParamSpec& root_list_element(const ParamSpec& root, std::string_view name) {
  for (const auto& f : root.fields) {
    if (f.name == name) return f.fields[0];
  }
  return root;
}

std::optional<std::string> check_param(const ParamSpec& p, const std::string& where) {
  if (p.name.empty()) return where + ": a parameter has no name";
  if (p.kind == ParamKind::kEnum && p.choices.empty()) {
    return where + "." + p.name + ": an enum needs choices";
  }
  if ((p.kind == ParamKind::kList || p.kind == ParamKind::kMap) && p.fields.size() != 1) {
    return where + "." + p.name + ": a list or map needs exactly one element spec";
  }
  if (p.kind == ParamKind::kTyped) return where + "." + p.name + ": nested typed specs";
  for (const auto& f : p.fields) {
    if (auto e = check_param(f, where + "." + p.name)) return e;
  }
  return std::nullopt;
}
}  // namespace

const TypeSpec* SpecRegistry::assertion(std::string_view type) const {
  return find_type(assertions_, type);
}
const TypeSpec* SpecRegistry::kpi(std::string_view type) const { return find_type(kpis_, type); }
const TypeSpec* SpecRegistry::action(std::string_view type) const {
  return find_type(actions_, type);
}

const std::vector<TypeSpec>& SpecRegistry::set(TypedSet s) const {
  switch (s) {
    case TypedSet::kActions:
      return actions_;
    case TypedSet::kKpis:
      return kpis_;
    default:
      return assertions_;
  }
}

const std::vector<ParamSpec>& SpecRegistry::assertion_common() const {
  return root_list_element(root_, "assertions").fields;
}
const std::vector<ParamSpec>& SpecRegistry::kpi_common() const {
  return root_list_element(root_, "kpis").fields;
}
const std::vector<ParamSpec>& SpecRegistry::action_common() const {
  return root_list_element(root_, "timeline").fields;
}

std::optional<std::string> SpecRegistry::add_assertion(TypeSpec spec) {
  if (spec.type.empty()) return std::string("an assertion type needs a non-empty type");
  for (char c : spec.type) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
    if (!ok) {
      return "assertion type '" + spec.type +
             "': use lower case letters, digits, '_' and '.' (e.g. example.visits_waypoints)";
    }
  }
  if (assertion(spec.type) != nullptr) {
    return "assertion type '" + spec.type + "' is already registered";
  }
  std::set<std::string> seen;
  for (const auto& c : assertion_common()) seen.insert(c.name);
  for (const auto& p : spec.params) {
    if (auto e = check_param(p, spec.type)) return e;
    if (!seen.insert(p.name).second) {
      return "assertion type '" + spec.type + "': parameter '" + p.name +
             "' is declared twice or clashes with name, type or on_fail";
    }
  }
  assertions_.push_back(std::move(spec));
  return std::nullopt;
}

std::string describe_kind(const ParamSpec& spec) {
  switch (spec.kind) {
    case ParamKind::kString:
      return "string";
    case ParamKind::kName:
      return "name";
    case ParamKind::kBool:
      return "bool";
    case ParamKind::kInteger:
      return "integer";
    case ParamKind::kNumber:
      return "number";
    case ParamKind::kDuration:
      return "duration";
    case ParamKind::kEnum: {
      std::string out;
      for (const auto& c : spec.choices) out += (out.empty() ? "" : " | ") + c;
      return out;
    }
    case ParamKind::kCondition:
      return "condition";
    case ParamKind::kPlacement:
      return "placement";
    case ParamKind::kScalar:
      return "scalar";
    case ParamKind::kObject:
      return "mapping";
    case ParamKind::kList:
      return "list of " + (spec.fields.empty() ? std::string("?") : describe_kind(spec.fields[0]));
    case ParamKind::kMap:
      return "map of " + (spec.fields.empty() ? std::string("?") : describe_kind(spec.fields[0]));
    case ParamKind::kTyped:
      return "mapping by " + spec.discriminator;
    case ParamKind::kBoolOrString:
      return "bool or string";
  }
  return "?";
}

}  // namespace fieldproof::scenario
