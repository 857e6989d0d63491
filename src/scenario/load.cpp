// Loading a scenario: YAML → generic walk against the tables (walker.cpp) → the model, then the
// checks that need the whole file (references, names, the time modes' refusals).
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "fieldproof/scenario/scenario.hpp"
#include "fieldproof/util/input_file.hpp"
#include "scenario/walker.hpp"

namespace fieldproof::scenario {

using detail::join;

const ParamValue* ParamValue::get(std::string_view key) const {
  for (size_t i = 0; i < keys.size() && i < items.size(); ++i) {
    if (keys[i] == key) return &items[i];
  }
  return nullptr;
}

std::string_view to_string(TimeMode m) {
  switch (m) {
    case TimeMode::kSim:
      return "sim";
    case TimeMode::kRealtime:
      return "realtime";
    case TimeMode::kLockstep:
      return "lockstep";
  }
  return "?";
}

std::string_view to_string(OnDrift d) { return d == OnDrift::kFail ? "fail" : "warn"; }

std::string_view to_string(SeedSource s) {
  switch (s) {
    case SeedSource::kDefault:
      return "default";
    case SeedSource::kScenario:
      return "scenario";
    case SeedSource::kCommandLine:
      return "command line";
  }
  return "?";
}

std::optional<std::string> override_seed(Scenario& scenario, int64_t seed) {
  if (seed < 0 || seed > kMaxSeed) {
    return "--seed: expected an integer from 0 to " + std::to_string(kMaxSeed) + ", got " +
           std::to_string(seed);
  }
  scenario.seed = seed;
  scenario.seed_given = true;
  scenario.seed_source = SeedSource::kCommandLine;
  return std::nullopt;
}

double TimeSection::target_rtf(double world_rtf) const {
  if (rtf) return *rtf;
  return mode == TimeMode::kSim ? world_rtf : 1.0;
}

std::string Diagnostic::to_string() const {
  std::string out = file;
  if (pos.line > 0) {
    out += ":" + std::to_string(pos.line);
    if (pos.column > 0) out += ":" + std::to_string(pos.column);
  }
  if (!out.empty()) out += ": ";
  if (!path.empty()) out += path + ": ";
  return out + message;
}

std::string ValidationResult::format_errors() const {
  std::string out;
  for (const auto& e : errors) out += e.to_string() + "\n";
  return out;
}

const Vehicle* Scenario::vehicle(std::string_view n) const {
  for (const auto& v : vehicles) {
    if (v.name == n) return &v;
  }
  return nullptr;
}

const TimelineEntry* Scenario::entry(std::string_view label) const {
  for (const auto& e : timeline) {
    if (e.label == label) return &e;
  }
  return nullptr;
}

namespace {

const ParamValue kEmptyMap = [] {
  ParamValue v;
  v.kind = ParamValue::Kind::kMap;
  return v;
}();

const ParamValue& get_or_empty(const ParamValue& map, std::string_view key) {
  const ParamValue* v = map.get(key);
  return v != nullptr ? *v : kEmptyMap;
}

std::string str(const ParamValue& map, std::string_view key) {
  const ParamValue* v = map.get(key);
  return v != nullptr && v->kind == ParamValue::Kind::kString ? v->string : std::string();
}

std::optional<Duration> dur(const ParamValue& map, std::string_view key) {
  const ParamValue* v = map.get(key);
  if (v == nullptr || v->kind != ParamValue::Kind::kDuration) return std::nullopt;
  return v->duration;
}

SourcePos pos(const ParamValue& map, std::string_view key, SourcePos fallback) {
  const ParamValue* v = map.get(key);
  return v != nullptr && v->pos.line > 0 ? v->pos : fallback;
}

bool written(const ParamValue& map, std::string_view key) {
  const ParamValue* v = map.get(key);
  return v != nullptr && !v->defaulted;
}

Signal read_signal(const ParamValue& m) {
  Signal s;
  s.topic = str(m, "topic");
  s.field = str(m, "field");
  s.message_type = str(m, "message_type");
  s.metric = str(m, "metric");
  s.vehicle = str(m, "vehicle");
  if (const ParamValue* t = m.get("target"); t && t->kind == ParamValue::Kind::kPlacement) {
    s.target = t->placement;
  }
  return s;
}

ParamValue without(const ParamValue& map, const std::set<std::string>& drop) {
  ParamValue out;
  out.kind = ParamValue::Kind::kMap;
  out.pos = map.pos;
  for (size_t i = 0; i < map.keys.size(); ++i) {
    if (drop.count(map.keys[i]) == 0) {
      out.keys.push_back(map.keys[i]);
      out.items.push_back(map.items[i]);
    }
  }
  return out;
}

class Builder {
 public:
  Builder(std::string file, std::vector<Diagnostic>& errors, std::vector<Diagnostic>& warnings,
          std::vector<std::string>& notes)
      : file_(std::move(file)), errors_(errors), warnings_(warnings), notes_(notes) {}

  Scenario build(const ParamValue& root, const std::filesystem::path& base_dir,
                 const std::vector<detail::RefUse>& refs) {
    Scenario s;
    s.file = file_;
    s.name = str(root, "name");
    s.description = str(root, "description");
    s.world_as_written = str(root, "world");
    if (!s.world_as_written.empty()) {
      std::filesystem::path w(s.world_as_written);
      s.world = (w.is_absolute() ? w : base_dir / w).lexically_normal();
      std::error_code ec;
      if (!std::filesystem::is_regular_file(s.world, ec)) {
        error(pos(root, "world", {}), "world",
              "the world file " + s.world.string() +
                  " does not exist (paths are relative to the scenario file)");
      }
    }
    if (const ParamValue* seed = root.get("seed");
        seed && seed->kind == ParamValue::Kind::kInteger) {
      s.seed = seed->integer;
      s.seed_given = true;
      s.seed_source = SeedSource::kScenario;
    }
    build_time(get_or_empty(root, "time"), s);
    if (const ParamValue* m = root.get("map"); m && m->kind == ParamValue::Kind::kMap) {
      build_map(*m, s);
    }
    for (const auto& [i, g] : enumerate(get_or_empty(root, "gps_denied"))) {
      build_gps_denied(g, "gps_denied[" + std::to_string(i) + "]", s);
    }
    for (const auto& v : get_or_empty(root, "vehicles").items) build_vehicle(v, s);
    if (const ParamValue* n = root.get("network"); n && n->kind == ParamValue::Kind::kMap) {
      build_network(*n, s);
    }
    for (const auto& [i, v] : enumerate(get_or_empty(root, "timeline"))) {
      build_entry(v, "timeline[" + std::to_string(i) + "]", s);
    }
    for (const auto& [i, v] : enumerate(get_or_empty(root, "assertions"))) {
      build_assertion(v, "assertions[" + std::to_string(i) + "]", s);
    }
    for (const auto& [i, v] : enumerate(get_or_empty(root, "kpis"))) {
      build_kpi(v, "kpis[" + std::to_string(i) + "]", s);
    }
    const ParamValue& out = get_or_empty(root, "outputs");
    if (const ParamValue* r = out.get("record")) {
      if (r->kind == ParamValue::Kind::kBool) {
        s.outputs.record = r->boolean;
      } else if (r->kind == ParamValue::Kind::kString) {
        s.outputs.record = true;
        s.outputs.record_file = r->string;
        if (r->string.find('/') != std::string::npos || r->string == "." || r->string == "..") {
          error(r->pos, "outputs.record",
                "expected true, false or a plain file name (written under recording/ of the "
                "run directory), got \"" +
                    r->string + "\"");
        } else if (r->string.empty() || r->string.size() > 200) {
          // A name the file system refuses would leave the run without its recording.
          error(r->pos, "outputs.record",
                "a recording's file name is 1 to 200 bytes, got " +
                    std::to_string(r->string.size()));
        }
      }
    }
    for (const auto& t : get_or_empty(out, "topics").items) s.outputs.topics.push_back(t.string);
    for (const auto& p : get_or_empty(root, "plugins").items) {
      std::filesystem::path lib(p.string);
      s.plugins.push_back((lib.is_absolute() ? lib : base_dir / lib).lexically_normal());
    }
    check_names(s);
    check_refs(s, refs);
    check_modes(s);
    check_links(s);
    check_faults(s);
    add_notes(s);
    return s;
  }

 private:
  static std::vector<std::pair<size_t, const ParamValue&>> enumerate(const ParamValue& list) {
    std::vector<std::pair<size_t, const ParamValue&>> out;
    for (size_t i = 0; i < list.items.size(); ++i) out.emplace_back(i, list.items[i]);
    return out;
  }

  void error(SourcePos p, const std::string& path, const std::string& message) {
    errors_.push_back({file_, p, path, message});
  }
  void warn(SourcePos p, const std::string& path, const std::string& message) {
    warnings_.push_back({file_, p, path, message});
  }

  void build_time(const ParamValue& t, Scenario& s) {
    TimeSection& ts = s.time;
    ts.pos = t.pos;
    std::string mode = str(t, "mode");
    if (mode == "realtime") ts.mode = TimeMode::kRealtime;
    if (mode == "lockstep") ts.mode = TimeMode::kLockstep;
    if (const ParamValue* r = t.get("rtf"); r && r->kind == ParamValue::Kind::kNumber) {
      ts.rtf = r->number;
    }
    if (const ParamValue* v = t.get("tolerance"); v && v->kind == ParamValue::Kind::kNumber) {
      ts.tolerance = v->number;
    }
    if (auto d = dur(t, "max_drift_s")) ts.max_drift = *d;
    if (str(t, "on_drift") == "warn") ts.on_drift = OnDrift::kWarn;
    if (auto d = dur(t, "step_s")) ts.step = *d;
    ts.step_pos = pos(t, "step_s", t.pos);
    if (auto d = dur(t, "ack_timeout_s")) ts.ack_timeout = *d;
    if (auto d = dur(t, "timeout_s")) ts.timeout = *d;

    if (ts.mode == TimeMode::kRealtime && ts.rtf && *ts.rtf != 1.0) {
      error(pos(t, "rtf", t.pos), "time.rtf",
            "realtime mode runs at a real-time factor of 1.0 only; remove rtf or set it to 1.0 "
            "(use mode sim for another factor)");
    }
    // Keys that do not apply to the mode are accepted (one file may switch modes) but said.
    auto unused = [&](const char* key, const char* modes) {
      if (written(t, key)) {
        warn(pos(t, key, t.pos), std::string("time.") + key,
             std::string(key) + " applies in " + modes + " mode only; ignored in " +
                 std::string(to_string(ts.mode)) + " mode");
      }
    };
    if (ts.mode != TimeMode::kRealtime) {
      unused("max_drift_s", "realtime");
      unused("on_drift", "realtime");
    }
    if (ts.mode != TimeMode::kLockstep) {
      unused("step_s", "lockstep");
      unused("ack_timeout_s", "lockstep");
    }
  }

  // The map section: bounds that are a rectangle, and not more than kMaxMapCells cells (the
  // world's extent is checked against the cell limit when the world is loaded).
  void build_map(const ParamValue& m, Scenario& s) {
    MapSection& ms = s.map;
    ms.given = true;
    ms.pos = m.pos;
    if (const ParamValue* r = m.get("resolution"); r && r->kind == ParamValue::Kind::kNumber) {
      ms.resolution = r->number;
    }
    ms.resolution_pos = pos(m, "resolution", m.pos);
    const ParamValue* b = m.get("bounds");
    if (b == nullptr || b->kind != ParamValue::Kind::kMap) return;
    const auto num = [&](const char* key) {
      const ParamValue* v = b->get(key);
      return v != nullptr && v->kind == ParamValue::Kind::kNumber ? v->number : 0.0;
    };
    MapSection::Bounds bounds{num("x_min"), num("x_max"), num("y_min"), num("y_max")};
    bool ok = true;
    for (const char* axis : {"x", "y"}) {
      const std::string lo = std::string(axis) + "_min", hi = std::string(axis) + "_max";
      const double vlo = num(lo.c_str()), vhi = num(hi.c_str());
      if (!(vlo < vhi)) {
        error(
            pos(*b, hi, b->pos), "map.bounds." + hi,
            "must be greater than " + lo + " (" + number_text(vlo) + "), got " + number_text(vhi));
        ok = false;
      }
    }
    if (!ok) return;
    ms.bounds = bounds;
    const double cells = std::ceil((bounds.x_max - bounds.x_min) / ms.resolution) *
                         std::ceil((bounds.y_max - bounds.y_min) / ms.resolution);
    if (cells > kMaxMapCells) {
      error(b->pos, "map",
            number_text(bounds.x_max - bounds.x_min) + " x " +
                number_text(bounds.y_max - bounds.y_min) + " m at " + number_text(ms.resolution) +
                " m per cell is " + number_text(cells) + " cells, more than the " +
                number_text(kMaxMapCells) +
                " a map may have: use a coarser resolution or smaller bounds");
    }
  }

  // A gps_denied region: a rectangle (the walker has refused what is not a finite number).
  void build_gps_denied(const ParamValue& g, const std::string& path, Scenario& s) {
    if (g.kind != ParamValue::Kind::kMap) return;
    const auto num = [&](const char* key) {
      const ParamValue* v = g.get(key);
      return v != nullptr && v->kind == ParamValue::Kind::kNumber ? v->number : 0.0;
    };
    GpsDeniedRegion r{str(g, "name"), num("x_min"), num("x_max"),
                      num("y_min"),   num("y_max"), g.pos};
    bool ok = true;
    for (const char* axis : {"x", "y"}) {
      const std::string lo = std::string(axis) + "_min", hi = std::string(axis) + "_max";
      const double vlo = num(lo.c_str()), vhi = num(hi.c_str());
      if (!(vlo < vhi)) {
        error(pos(g, hi, g.pos), path + "." + hi,
              "must be greater than " + lo + " (" + number_text(vlo) + "), got " +
                  number_text(vhi) + ": a region is a rectangle of the world frame");
        ok = false;
      }
    }
    if (ok) s.gps_denied.push_back(std::move(r));
  }

  static std::string number_text(double v) {
    std::ostringstream o;
    o.precision(6);
    o << v;
    return o.str();
  }

  void build_vehicle(const ParamValue& v, Scenario& s) {
    if (v.kind != ParamValue::Kind::kMap) return;
    Vehicle out;
    out.name = str(v, "name");
    out.model = str(v, "model");
    out.pos = v.pos;
    out.model_pos = v.get("model") ? v.get("model")->pos : v.pos;
    if (const ParamValue* sp = v.get("spawn"); sp && sp->kind == ParamValue::Kind::kPlacement) {
      out.spawn = sp->placement;
    }
    const ParamValue& st = get_or_empty(v, "stack");
    out.stack.pos = st.pos;
    if (!str(st, "plugin").empty()) {
      out.stack.kind = Stack::Kind::kPlugin;
      out.stack.plugin = str(st, "plugin");
      out.stack.program_pos = st.get("plugin")->pos;
    } else if (const ParamValue* c = st.get("command"); c && !c->items.empty()) {
      out.stack.kind = Stack::Kind::kCommand;
      for (const auto& a : c->items) out.stack.command.push_back(a.string);
      out.stack.program_pos = c->items.front().pos;
    }
    for (const auto& a : get_or_empty(st, "arguments").items) {
      out.stack.arguments.push_back(a.string);
    }
    out.stack.cwd = str(st, "cwd");
    const ParamValue& env = get_or_empty(st, "env");
    for (size_t i = 0; i < env.keys.size() && i < env.items.size(); ++i) {
      const ParamValue& e = env.items[i];
      std::string value = e.string;
      if (e.kind == ParamValue::Kind::kBool) value = e.boolean ? "true" : "false";
      if (e.kind == ParamValue::Kind::kInteger) value = std::to_string(e.integer);
      if (e.kind == ParamValue::Kind::kNumber) {
        std::ostringstream o;
        o.precision(17);
        o << e.number;
        value = o.str();
      }
      out.stack.env.emplace_back(env.keys[i], value);
    }
    out.parameters = get_or_empty(v, "parameters");
    s.vehicles.push_back(std::move(out));
  }

  void build_entry(const ParamValue& v, const std::string& path, Scenario& s) {
    if (v.kind != ParamValue::Kind::kMap) return;
    TimelineEntry e;
    e.action = str(v, "action");
    e.name = str(v, "name");
    e.vehicle = str(v, "vehicle");
    e.pos = v.pos;
    e.path = path;
    if (auto at = dur(v, "at")) {
      e.at = *at;
      e.at_given = true;
    }
    e.every = dur(v, "every");
    if (const ParamValue* a = v.get("after"); a && a->kind == ParamValue::Kind::kString) {
      e.after = a->string;
    }
    if (const ParamValue* w = v.get("when"); w && w->kind == ParamValue::Kind::kMap) {
      WhenTrigger when;
      when.signal = read_signal(*w);
      when.condition = str(*w, "condition");
      when.pos = w->pos;
      e.when = when;
      check_signal(when.signal, e.vehicle, *w, path + ".when");
    }
    e.until = dur(v, "until_s");
    e.params = without(v, {"action", "name", "at", "every", "after", "when", "until_s", "vehicle"});
    e.label = e.name.empty() ? e.action + "@" + format_seconds(e.at) + "s" : e.name;

    int triggers = (e.at_given ? 1 : 0) + (e.after ? 1 : 0) + (e.when ? 1 : 0);
    if (triggers > 1) {
      error(v.pos, path,
            "give one trigger: at, after or when (an entry starts once; every repeats from at)");
    }
    if (e.every && (e.after || e.when)) {
      error(pos(v, "every", v.pos), path + ".every",
            "every repeats from at; it does not combine with after or when");
    }
    if (e.until && !e.every && !e.when) {
      error(pos(v, "until_s", v.pos), path + ".until_s",
            "until_s ends a repetition (every) or a wait (when); this entry has neither");
    }
    if (e.until && (e.every || e.when) && *e.until <= e.at) {
      error(pos(v, "until_s", v.pos), path + ".until_s",
            "until_s (" + format_seconds(*e.until) + " s) must be later than at (" +
                format_seconds(e.at) + " s)");
    }
    if (e.after && !e.name.empty() && *e.after == e.name) {
      error(pos(v, "after", v.pos), path + ".after", "an entry cannot start after itself");
    }
    s.timeline.push_back(std::move(e));
  }

  void check_signal(const Signal& sig, const std::string& default_vehicle, const ParamValue& m,
                    const std::string& path) {
    static const std::set<std::string> kVehicleMetrics = {"x", "y", "z", "yaw", "distance_to"};
    if (kVehicleMetrics.count(sig.metric) && sig.vehicle.empty() && default_vehicle.empty()) {
      error(pos(m, "metric", m.pos), path + ".metric",
            "the metric " + sig.metric + " is a vehicle's; give vehicle here or on the " +
                "assertion / entry");
    }
    if (sig.metric == "distance_to" && !sig.target) {
      error(pos(m, "metric", m.pos), path + ".metric", "distance_to needs a target (a placement)");
    }
    if (!sig.metric.empty() && sig.metric != "distance_to" && sig.target) {
      error(pos(m, "target", m.pos), path + ".target", "target is for the metric distance_to only");
    }
    if (!sig.metric.empty() && (!sig.field.empty() || !sig.message_type.empty())) {
      const char* key = sig.field.empty() ? "message_type" : "field";
      error(pos(m, key, m.pos), path + "." + key,
            std::string(key) + " belongs to a topic signal, not to a metric");
    }
  }

  void check_window(const ParamValue& v, const std::string& path) {
    auto a = dur(v, "after_s");
    auto w = dur(v, "within_s");
    if (a && w && *w <= *a && written(v, "within_s")) {
      error(pos(v, "within_s", v.pos), path + ".within_s",
            "within_s (" + format_seconds(*w) + " s) must be later than after_s (" +
                format_seconds(*a) + " s)");
    }
  }

  void check_type_specific(const std::string& type, const ParamValue& v, const std::string& path) {
    auto num = [&](std::string_view key) -> std::optional<double> {
      const ParamValue* p = v.get(key);
      if (p == nullptr ||
          (p->kind != ParamValue::Kind::kNumber && p->kind != ParamValue::Kind::kInteger)) {
        return std::nullopt;
      }
      return p->number;
    };
    if (type == "topic_rate") {
      if (auto lo = num("min_hz"), hi = num("max_hz"); lo && hi && *hi < *lo) {
        error(pos(v, "max_hz", v.pos), path + ".max_hz", "max_hz must be at least min_hz");
      }
    }
    if (type == "mission_time") {
      auto lo = dur(v, "min_s");
      auto hi = dur(v, "max_s");
      if (lo && hi && *lo > *hi) {
        error(pos(v, "min_s", v.pos), path + ".min_s", "min_s must not be more than max_s");
      }
    }
    if (type == "geofence") {
      const ParamValue& region = get_or_empty(v, "region");
      const ParamValue& box = get_or_empty(region, "box");
      auto rn = [&](const ParamValue& m, std::string_view k) -> std::optional<double> {
        const ParamValue* p = m.get(k);
        return p ? std::optional<double>(p->number) : std::nullopt;
      };
      if (auto a = rn(box, "x_min"), b = rn(box, "x_max"); a && b && *a >= *b) {
        error(pos(box, "x_max", box.pos), path + ".region.box.x_max", "x_max must exceed x_min");
      }
      if (auto a = rn(box, "y_min"), b = rn(box, "y_max"); a && b && *a >= *b) {
        error(pos(box, "y_max", box.pos), path + ".region.box.y_max", "y_max must exceed y_min");
      }
      if (auto a = rn(region, "z_min"), b = rn(region, "z_max"); a && b && *a > *b) {
        error(pos(region, "z_max", region.pos), path + ".region.z_max",
              "z_max must not be below z_min");
      }
    }
    if (type == "sequence") {
      const std::string vehicle = str(v, "vehicle");
      for (size_t i = 0; i < get_or_empty(v, "steps").items.size(); ++i) {
        const ParamValue& step = get_or_empty(v, "steps").items[i];
        std::string sp = path + ".steps[" + std::to_string(i) + "]";
        check_signal(read_signal(step), vehicle, step, sp);
        bool signal_step = step.has("topic") || step.has("metric");
        if (!signal_step && written(step, "condition")) {
          error(pos(step, "condition", step.pos), sp + ".condition",
                "condition belongs to a signal step (topic or metric)");
        }
        if (!step.has("action") && written(step, "event")) {
          error(pos(step, "event", step.pos), sp + ".event", "event belongs to an action step");
        }
      }
    }
    if (type == "always" || type == "never" || type == "eventually") {
      const std::string vehicle = str(v, "vehicle");
      const ParamValue& sigs = get_or_empty(v, "signals");
      for (size_t i = 0; i < sigs.items.size(); ++i) {
        check_signal(read_signal(sigs.items[i]), vehicle, sigs.items[i],
                     path + ".signals." + sigs.keys[i]);
      }
    }
  }

  void build_assertion(const ParamValue& v, const std::string& path, Scenario& s) {
    if (v.kind != ParamValue::Kind::kMap) return;
    AssertionSpec a;
    a.name = str(v, "name");
    a.type = str(v, "type");
    a.on_fail = str(v, "on_fail") == "abort" ? OnFail::kAbort : OnFail::kContinue;
    a.vehicle = str(v, "vehicle");
    a.after = dur(v, "after_s");
    a.within = dur(v, "within_s");
    a.params = without(v, {"name", "type", "on_fail"});
    a.pos = v.pos;
    a.path = path;
    check_window(v, path);
    check_type_specific(a.type, v, path);
    s.assertions.push_back(std::move(a));
  }

  void build_kpi(const ParamValue& v, const std::string& path, Scenario& s) {
    if (v.kind != ParamValue::Kind::kMap) return;
    KpiSpec k;
    k.name = str(v, "name");
    k.type = str(v, "type");
    k.params = without(v, {"name", "type"});
    k.pos = v.pos;
    k.path = path;
    check_window(v, path);
    s.kpis.push_back(std::move(k));
  }

  void check_names(const Scenario& s) {
    std::map<std::string, std::string> vehicles;
    for (size_t i = 0; i < s.vehicles.size(); ++i) {
      const auto& v = s.vehicles[i];
      if (v.name.empty()) continue;
      auto [it, fresh] = vehicles.emplace(v.name, "vehicles[" + std::to_string(i) + "]");
      if (!fresh) {
        error(v.pos, "vehicles[" + std::to_string(i) + "].name",
              "duplicate vehicle name '" + v.name + "' (first at " + it->second + ")");
      }
    }
    std::map<std::string, std::string> labels;
    for (const auto& e : s.timeline) {
      if (e.action.empty()) continue;
      auto [it, fresh] = labels.emplace(e.label, e.path);
      if (!fresh) {
        error(e.pos, e.path + (e.name.empty() ? "" : ".name"),
              "duplicate timeline entry '" + e.label + "' (first at " + it->second + ")" +
                  (e.name.empty() ? "; give the entries names" : ""));
      }
    }
    std::map<std::string, std::string> names;  // assertions and KPIs share the KPI map
    auto unique = [&](const std::string& name, const std::string& path, SourcePos p,
                      const char* what) {
      if (name.empty()) return;
      auto [it, fresh] = names.emplace(name, path);
      if (!fresh) {
        error(p, path + ".name",
              std::string("duplicate ") + what + " name '" + name + "' (first at " + it->second +
                  "; assertions and KPIs share one namespace)");
      }
    };
    for (const auto& a : s.assertions) unique(a.name, a.path, a.pos, "assertion");
    for (const auto& k : s.kpis) unique(k.name, k.path, k.pos, "KPI");
  }

  void check_refs(const Scenario& s, const std::vector<detail::RefUse>& refs) {
    std::vector<std::string> vehicles, labels, assertions;
    for (const auto& v : s.vehicles) vehicles.push_back(v.name);
    for (const auto& e : s.timeline) labels.push_back(e.label);
    for (const auto& a : s.assertions) assertions.push_back(a.name);
    auto known = [](const std::vector<std::string>& set, const std::string& v) {
      return std::find(set.begin(), set.end(), v) != set.end();
    };
    for (const auto& r : refs) {
      switch (r.ref) {
        case Ref::kVehicle:
          if (!known(vehicles, r.value)) {
            error(r.pos, r.path,
                  "unknown vehicle '" + r.value + "'; the scenario's vehicles are " +
                      (vehicles.empty() ? std::string("none") : join(vehicles)));
          }
          break;
        case Ref::kAction:
          if (!known(labels, r.value)) {
            error(r.pos, r.path,
                  "unknown timeline entry '" + r.value + "'; the entries are " +
                      (labels.empty() ? std::string("none") : join(labels)) +
                      " (an unnamed entry is <action>@<at>s)");
          }
          break;
        case Ref::kAssertion:
          if (!known(assertions, r.value)) {
            error(r.pos, r.path,
                  "unknown assertion '" + r.value + "'; the assertions are " +
                      (assertions.empty() ? std::string("none") : join(assertions)));
          }
          break;
        case Ref::kNone:
          break;
      }
    }
    // after chains must not loop.
    for (const auto& e : s.timeline) {
      std::set<std::string> seen = {e.label};
      const TimelineEntry* cur = &e;
      while (cur != nullptr && cur->after) {
        if (!seen.insert(*cur->after).second) {
          error(e.pos, e.path + ".after",
                "the after chain of '" + e.label + "' loops back to '" + *cur->after + "'");
          break;
        }
        cur = s.entry(*cur->after);
      }
    }
  }

  // A link's `topics` (docs/network.md): relative, each once, not a peer's arrival; only on a
  // vehicle-to-vehicle link.
  std::vector<std::string> link_topics(const ParamValue& l, const std::string& path,
                                       bool vehicle_to_vehicle) {
    std::vector<std::string> out;
    const ParamValue* topics = l.get("topics");
    if (topics == nullptr || topics->kind != ParamValue::Kind::kList) return out;
    if (!vehicle_to_vehicle) {
      error(topics->pos, path + ".topics",
            "topics cross a vehicle-to-vehicle link (one with a peer); what a vehicle sends the "
            "ground station is network.telemetry");
      return out;
    }
    for (const auto& [i, t] : enumerate(*topics)) {
      if (t.kind != ParamValue::Kind::kString) continue;
      const std::string at = path + ".topics[" + std::to_string(i) + "]";
      if (t.string.empty() || t.string.front() == '/' || t.string.back() == '/') {
        error(t.pos, at,
              "a topic is relative to /model/<vehicle>/ (e.g. odometry), got \"" + t.string + "\"");
      } else if (t.string == "peers" || t.string.rfind("peers/", 0) == 0) {
        error(t.pos, at,
              "peers/... is where a peer's topics arrive; they do not cross another link, got \"" +
                  t.string + "\"");
      } else if (t.string == "link_state") {
        error(t.pos, at,
              "link_state is each vehicle's own radio's state; it does not cross the link");
      } else if (std::find(out.begin(), out.end(), t.string) != out.end()) {
        error(t.pos, at, "topic '" + t.string + "' is listed twice");
      } else {
        out.push_back(t.string);
      }
    }
    return out;
  }

  // The network section (docs/network.md). Types and ranges were checked by the tables.
  void build_network(const ParamValue& n, Scenario& s) {
    NetworkSection& ns = s.network;
    ns.given = true;
    ns.pos = n.pos;
    const auto num = [](const ParamValue& m, const char* key) -> std::optional<double> {
      const ParamValue* v = m.get(key);
      if (v == nullptr || (v->kind != ParamValue::Kind::kNumber &&
                           v->kind != ParamValue::Kind::kInteger)) {
        return std::nullopt;
      }
      return v->number;
    };
    if (const ParamValue* g = n.get("ground_station"); g && g->kind == ParamValue::Kind::kMap) {
      if (const std::string name = str(*g, "name"); !name.empty()) ns.ground = name;
      ns.ground_x = num(*g, "x").value_or(0.0);
      ns.ground_y = num(*g, "y").value_or(0.0);
    }
    std::map<std::string, std::string> names;
    std::map<std::string, std::string> ground_of;  // vehicle -> the path of its ground link
    std::map<std::string, std::string> pair_of;    // "<a> <b>" -> the path of their link
    for (const auto& [i, l] : enumerate(get_or_empty(n, "links"))) {
      if (l.kind != ParamValue::Kind::kMap) continue;
      const std::string path = "network.links[" + std::to_string(i) + "]";
      NetworkLink link;
      link.vehicle = str(l, "vehicle");
      link.peer = str(l, "peer");
      link.pos = l.pos;
      link.name = str(l, "name");
      if (link.name.empty()) {
        link.name = (link.peer.empty() ? ns.ground : link.vehicle) + "_" +
                    (link.peer.empty() ? link.vehicle : link.peer);
      }
      if (auto d = dur(l, "latency_s")) link.latency = *d;
      if (auto d = dur(l, "jitter_s")) link.jitter = *d;
      link.loss = num(l, "loss").value_or(0.0);
      link.bandwidth_kbps = num(l, "bandwidth_kbps");
      link.range_m = num(l, "range_m");
      link.degrade_from_m = num(l, "degrade_from_m");
      if (!link.peer.empty() && link.peer == link.vehicle) {
        error(pos(l, "peer", l.pos), path + ".peer",
              "a link joins two different ends; peer is the vehicle itself ('" + link.peer +
                  "'): leave peer out for a link to the ground station");
      }
      if (link.range_m && link.degrade_from_m && !(*link.degrade_from_m < *link.range_m)) {
        error(pos(l, "degrade_from_m", l.pos), path + ".degrade_from_m",
              "must be less than range_m (" + number_text(*link.range_m) + "), got " +
                  number_text(*link.degrade_from_m));
      }
      if (link.peer.empty() && !link.vehicle.empty()) {
        auto [it, fresh] = ground_of.emplace(link.vehicle, path);
        if (!fresh) {
          error(pos(l, "vehicle", l.pos), path + ".vehicle",
                "vehicle '" + link.vehicle + "' has a link to the ground station already (" +
                    it->second + "); a vehicle has at most one");
        }
      } else if (!link.peer.empty() && link.peer != link.vehicle) {
        const auto pair = std::minmax(link.vehicle, link.peer);
        auto [it, fresh] = pair_of.emplace(pair.first + " " + pair.second, path);
        if (!fresh) {
          error(pos(l, "peer", l.pos), path + ".peer",
                "vehicles '" + link.vehicle + "' and '" + link.peer + "' have a link already (" +
                    it->second + "); two vehicles have at most one");
        }
      }
      link.topics = link_topics(l, path, !link.peer.empty());
      auto [it, fresh] = names.emplace(link.name, path);
      if (!fresh) {
        error(pos(l, "name", l.pos), path + ".name",
              "duplicate link name '" + link.name + "' (first at " + it->second + ")");
      }
      ns.links.push_back(std::move(link));
    }
    for (const auto& t : get_or_empty(n, "telemetry").items) {
      if (t.kind != ParamValue::Kind::kString) continue;
      if (t.string.empty() || t.string.front() == '/') {
        error(t.pos, "network.telemetry",
              "a telemetry topic is relative to /model/<vehicle>/ (e.g. odometry), got \"" +
                  t.string + "\"");
        continue;
      }
      ns.telemetry.push_back(t.string);
    }
    for (const auto& [i, o] : enumerate(get_or_empty(n, "outages"))) {
      if (o.kind != ParamValue::Kind::kMap) continue;
      NetworkOutage out;
      out.name = str(o, "name");
      if (out.name.empty()) out.name = "outage_" + std::to_string(i);
      out.pos = o.pos;
      for (const auto& v : get_or_empty(o, "vehicles").items) out.vehicles.push_back(v.string);
      const ParamValue& r = get_or_empty(o, "region");
      if (const ParamValue* b = r.get("box"); b && b->kind == ParamValue::Kind::kMap) {
        out.region.kind = NetworkRegion::Kind::kBox;
        out.region.x_min = num(*b, "x_min").value_or(0);
        out.region.x_max = num(*b, "x_max").value_or(0);
        out.region.y_min = num(*b, "y_min").value_or(0);
        out.region.y_max = num(*b, "y_max").value_or(0);
        if (!(out.region.x_min < out.region.x_max) || !(out.region.y_min < out.region.y_max)) {
          error(b->pos, "network.outages[" + std::to_string(i) + "].region.box",
                "x_min must be less than x_max and y_min less than y_max");
        }
      } else if (const ParamValue* c = r.get("circle"); c && c->kind == ParamValue::Kind::kMap) {
        out.region.kind = NetworkRegion::Kind::kCircle;
        out.region.x = num(*c, "x").value_or(0);
        out.region.y = num(*c, "y").value_or(0);
        out.region.radius = num(*c, "radius_m").value_or(0);
      } else if (const ParamValue* p = r.get("polygon"); p && p->kind == ParamValue::Kind::kList) {
        out.region.kind = NetworkRegion::Kind::kPolygon;
        for (const auto& vtx : p->items) {
          if (vtx.items.size() == 2) {
            out.region.polygon.emplace_back(vtx.items[0].number, vtx.items[1].number);
          }
        }
      }
      ns.outages.push_back(std::move(out));
    }
  }

  // link.down / link.up need a link of their vehicle.
  void check_links(const Scenario& s) {
    for (const auto& e : s.timeline) {
      if (e.action != "link.down" && e.action != "link.up") continue;
      if (!s.network.given) {
        error(e.pos, e.path + ".action",
              e.action + " needs a network section with a link of vehicle '" + e.vehicle +
                  "' (docs/network.md)");
        continue;
      }
      bool linked = false;
      for (const auto& l : s.network.links) linked = linked || l.vehicle == e.vehicle ||
                                                     l.peer == e.vehicle;
      if (!linked && !e.vehicle.empty()) {
        error(e.pos, e.path + ".vehicle",
              "vehicle '" + e.vehicle + "' has no link in the network section; " + e.action +
                  " acts on a vehicle's links");
      }
    }
  }

  // fault.kill_stack ends a process: a plugin runs inside the engine and cannot be killed alone.
  void check_faults(const Scenario& s) {
    for (const auto& e : s.timeline) {
      if (e.action != "fault.kill_stack") continue;
      const ParamValue* restart = e.params.get("restart");
      const ParamValue* after = e.params.get("restart_after_s");
      if (after && !after->defaulted && !(restart && restart->boolean)) {
        error(after->pos, e.path + ".restart_after_s",
              "restart_after_s applies with restart: true (the stack is not started again)");
      }
      for (const auto& v : s.vehicles) {
        if (v.name != e.vehicle || v.stack.kind == Stack::Kind::kCommand) continue;
        error(e.pos, e.path + ".vehicle",
              v.stack.kind == Stack::Kind::kPlugin
                  ? "vehicle '" + v.name +
                        "' has a plugin stack, which runs inside the engine: fault.kill_stack "
                        "kills a process stack (stack.command)"
                  : "vehicle '" + v.name + "' has no stack to kill");
      }
    }
  }

  void check_modes(const Scenario& s) {
    if (s.time.mode != TimeMode::kLockstep) return;
    for (const auto& e : s.timeline) {
      if (e.action == "sim.pause" || e.action == "sim.resume" || e.action == "sim.step") {
        error(e.pos, e.path + ".action",
              e.action +
                  " is refused in lockstep mode (the world steps only as the vehicles "
                  "acknowledge); use time.mode sim or realtime to pause, resume or step");
      }
    }
  }

  void add_notes(const Scenario& s) {
    const TimeSection& t = s.time;
    switch (t.mode) {
      case TimeMode::kSim:
        notes_.push_back(
            "time.mode sim: the world free-runs at " +
            (t.rtf ? "a real-time factor of " + format_number(*t.rtf)
                   : std::string("its own real-time factor (the world file's)")) +
            "; the timeline runs in simulated time (its entries start at their exact simulated "
            "due time) and the stacks follow the published clock. RTF windows outside target "
            "+/- " +
            format_number(t.tolerance) + " are counted as violations.");
        break;
      case TimeMode::kRealtime:
        notes_.push_back(
            "time.mode realtime: the world is held at a real-time factor of 1.0 and the drift "
            "between simulated and wall-clock time over the timeline (pauses left out) is "
            "judged against max_drift_s " +
            format_seconds(t.max_drift) + " s; a lost lock " +
            (t.on_drift == OnDrift::kFail ? "fails the run (on_drift: fail)"
                                          : "is a warning (on_drift: warn)") +
            ". Whether the host can hold the lock is the host's business.");
        break;
      case TimeMode::kLockstep:
        notes_.push_back(
            "time.mode lockstep: the world waits for every vehicle: it advances in steps of " +
            format_seconds(t.step) + " s, each once every vehicle has acknowledged the last, at " +
            "most " + format_number(t.rtf.value_or(1.0)) +
            " x real time; timeline times count simulation seconds from the origin; a vehicle "
            "silent for " +
            format_seconds(t.ack_timeout) + " s fails the run, naming it.");
        break;
    }
    notes_.push_back("time.timeout_s: the run fails after " + format_seconds(t.timeout) +
                     " s of wall-clock time once every vehicle is ready.");
    if (!s.seed_given) {
      notes_.push_back(
          "seed: absent, so the run uses 0 and records that it defaulted; fieldproof run --seed N "
          "varies it.");
    } else {
      notes_.push_back("seed: " + std::to_string(s.seed) + ".");
    }
  }

  static std::string format_number(double d) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", d);
    return buf;
  }

  std::string file_;
  std::vector<Diagnostic>& errors_;
  std::vector<Diagnostic>& warnings_;
  std::vector<std::string>& notes_;
};

// How many YAML documents a text holds, read with yaml-cpp's event parser (no nodes built).
// `stuck`: a document started where the previous one did, so the parser made no progress (it
// would go on making empty documents there); `second` is where it stopped.
struct DocumentCount {
  size_t documents = 0;
  bool stuck = false;
  SourcePos second;  // where a stuck parser stopped
};

class DocumentStarts : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts;
  void OnDocumentStart(const YAML::Mark& m) override { starts.push_back(m); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

DocumentCount count_documents(std::string_view yaml) {
  std::istringstream in{std::string(yaml)};
  YAML::Parser parser(in);
  DocumentStarts h;
  DocumentCount c;
  while (parser.HandleNextDocument(h)) {
    const size_t n = h.starts.size();
    if (n >= 2 && h.starts[n - 1].pos == h.starts[n - 2].pos) {
      c.stuck = true;
      c.second = {h.starts[n - 1].line + 1, h.starts[n - 1].column + 1};
      break;
    }
  }
  c.documents = h.starts.size();
  return c;
}

// yaml-cpp recurses once per nesting level and has no limit of its own: a hostile file of 10^5
// brackets would overflow the stack. No scenario nests anywhere near these bounds.
constexpr int kMaxFlowDepth = 64;
constexpr int kMaxIndent = 256;

std::optional<Diagnostic> check_nesting(std::string_view text, const std::string& file) {
  int depth = 0;
  int line = 1;
  int column = 1;
  bool line_start = true;
  int indent = 0;
  for (char c : text) {
    if (line_start) {
      if (c == ' ' || c == '-' || c == '\t') {
        ++indent;
      } else {
        line_start = false;
      }
      if (indent > kMaxIndent) {
        return Diagnostic{file,
                          {line, column},
                          "",
                          "the file nests deeper than " + std::to_string(kMaxIndent) +
                              " columns of indentation; a scenario never needs that"};
      }
    }
    if (c == '[' || c == '{') {
      if (++depth > kMaxFlowDepth) {
        return Diagnostic{file,
                          {line, column},
                          "",
                          "the file nests more than " + std::to_string(kMaxFlowDepth) +
                              " brackets deep; a scenario never needs that"};
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
    if (c == '\n') {
      ++line;
      column = 1;
      line_start = true;
      indent = 0;
    } else {
      ++column;
    }
  }
  return std::nullopt;
}

void sort_by_position(std::vector<Diagnostic>& d) {
  std::stable_sort(d.begin(), d.end(), [](const Diagnostic& a, const Diagnostic& b) {
    if (a.pos.line != b.pos.line) return a.pos.line < b.pos.line;
    return a.pos.column < b.pos.column;
  });
}

}  // namespace

ValidationResult load_scenario_text(std::string_view yaml, std::string file,
                                    const std::filesystem::path& base_dir,
                                    const LoadOptions& opts) {
  const SpecRegistry& reg = opts.registry ? *opts.registry : SpecRegistry::builtin();
  ValidationResult result;
  // Invalid UTF-8 (in a name, a key, a topic...) would pass YAML and abort a run later, where the
  // text becomes JSON: refused here, located.
  if (const std::optional<size_t> bad = util::first_invalid_utf8(yaml)) {
    const auto [line, column] = util::line_column(yaml, *bad);
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02X",
                  static_cast<unsigned>(static_cast<unsigned char>(yaml[*bad])));
    result.errors.push_back({file,
                             {line, column},
                             "",
                             std::string("invalid UTF-8 (byte ") + byte +
                                 "): a scenario is UTF-8 text"});
    return result;
  }
  if (auto deep = check_nesting(yaml, file)) {
    result.errors.push_back(*deep);
    return result;
  }
  YAML::Node doc;
  try {
    // The documents are counted with yaml-cpp's event parser first: YAML::LoadAll never returns
    // on text its parser cannot get past at the top level (a ',' there, yaml-cpp 0.7), it makes
    // empty documents at the same position for ever. A document that starts where the one before
    // it started is that case: a syntax error at that position.
    const DocumentCount count = count_documents(yaml);
    if (count.stuck) {
      result.errors.push_back({file, count.second, "",
                               "YAML syntax error: the parser cannot go past this point (a flow "
                               "indicator such as ',' outside [ ] or { }?)"});
      return result;
    }
    std::vector<YAML::Node> docs = YAML::LoadAll(std::string(yaml));  // ends: not stuck
    if (docs.size() > 1) {
      result.errors.push_back({file, detail::Walker::pos_of(docs[1]), "",
                               "the file holds " + std::to_string(docs.size()) +
                                   " YAML documents; a scenario is one document (remove ---)"});
      return result;
    }
    if (!docs.empty()) doc = docs[0];
  } catch (const YAML::Exception& e) {
    SourcePos p;
    if (e.mark.line >= 0) p = {e.mark.line + 1, e.mark.column + 1};
    result.errors.push_back({file, p, "", "YAML syntax error: " + e.msg});
    return result;
  }
  if (!doc || doc.IsNull()) {
    result.errors.push_back({file,
                             {1, 1},
                             "",
                             "the file is empty; a scenario is a mapping with name, world, "
                             "vehicles (and time, timeline, assertions, kpis, outputs)"});
    return result;
  }
  detail::Walker walker(reg, file, yaml, result.errors);
  ParamValue root = walker.walk(doc, reg.root(), "");
  if (root.kind != ParamValue::Kind::kMap) return result;
  Builder builder(file, result.errors, result.warnings, result.notes);
  Scenario s = builder.build(root, base_dir, walker.refs());
  sort_by_position(result.errors);
  sort_by_position(result.warnings);
  if (result.errors.empty()) {
    result.scenario = std::move(s);
  } else {
    result.partial = std::move(s);
  }
  return result;
}

ValidationResult load_scenario_file(const std::filesystem::path& path, const LoadOptions& opts) {
  // A FIFO, a device, a directory or a huge file is refused before anything is read.
  const Result<std::string> in =
      util::read_input_file(path, util::kMaxScenarioBytes, "the scenario");
  if (!in.ok()) {
    ValidationResult r;
    std::error_code ec;
    r.errors.push_back({path.string(),
                        {},
                        "",
                        std::filesystem::exists(std::filesystem::symlink_status(path, ec))
                            ? in.status().message()
                            : "cannot read the scenario file (does it exist?)"});
    return r;
  }
  std::filesystem::path base = path.parent_path();
  if (base.empty()) base = ".";
  return load_scenario_text(*in, path.string(), base, opts);
}

std::vector<std::filesystem::path> scenario_plugin_paths(const std::filesystem::path& path) {
  std::vector<std::filesystem::path> out;
  try {
    const Result<std::string> in =
        util::read_input_file(path, util::kMaxScenarioBytes, "the scenario");
    if (!in.ok()) return out;  // the validation reports it
    const YAML::Node root = YAML::Load(*in);
    const YAML::Node plugins = root.IsMap() ? root["plugins"] : YAML::Node();
    if (!plugins || !plugins.IsSequence()) return out;
    std::filesystem::path base = path.parent_path();
    if (base.empty()) base = ".";
    for (const auto& p : plugins) {
      if (!p.IsScalar()) continue;  // the validation names it
      std::filesystem::path lib(p.as<std::string>());
      out.push_back((lib.is_absolute() ? lib : base / lib).lexically_normal());
    }
  } catch (const std::exception&) {
    // Unreadable or not YAML: the validation reports it, with its position.
  }
  return out;
}

std::vector<Diagnostic> validate_against_world(const Scenario& s, Duration physics_step) {
  WorldFacts facts;
  facts.physics_step = physics_step;
  return validate_against_world(s, facts);
}

std::vector<Diagnostic> validate_against_world(const Scenario& s, const WorldFacts& world) {
  std::vector<Diagnostic> out;
  auto add = [&](SourcePos p, std::string path, std::string message) {
    out.push_back({s.file, p, std::move(path), std::move(message)});
  };
  const Duration step = world.physics_step;
  if (step <= Duration::zero()) {
    add({}, "world", "the world's physics step must be positive, got " + format_seconds(step));
    return out;
  }
  auto multiple_hint = [&](Duration d) {
    int64_t n = d / step;
    Duration lo = step * std::max<int64_t>(n, 1);
    Duration hi = step * (n + 1);
    return " (the world's physics step is " + format_seconds(step) +
           " s; expected a multiple such as " + format_seconds(lo) + " or " + format_seconds(hi) +
           ")";
  };
  if (s.time.mode == TimeMode::kLockstep && (s.time.step % step) != Duration::zero()) {
    add(s.time.step_pos, "time.step_s",
        format_seconds(s.time.step) + " s is not a whole number of physics steps" +
            multiple_hint(s.time.step));
  }
  for (const auto& e : s.timeline) {
    if (e.action != "sim.step") continue;
    const ParamValue* d = e.params.get("duration_s");
    if (d != nullptr && d->kind == ParamValue::Kind::kDuration &&
        (d->duration % step) != Duration::zero()) {
      add(d->pos, e.path + ".duration_s",
          format_seconds(d->duration) + " s is not a whole number of physics steps" +
              multiple_hint(d->duration));
    }
  }
  if (!world.frames.empty()) {
    auto check_frame = [&](const Placement& p, const std::string& path) {
      if (!p.is_frame()) return;
      if (std::find(world.frames.begin(), world.frames.end(), p.frame) == world.frames.end()) {
        add(p.pos, path,
            "the world has no frame '" + p.frame + "'; its frames are " + join(world.frames));
      }
    };
    for (size_t i = 0; i < s.vehicles.size(); ++i) {
      check_frame(s.vehicles[i].spawn, "vehicles[" + std::to_string(i) + "].spawn");
    }
    std::function<void(const ParamValue&, const std::string&)> walk = [&](const ParamValue& v,
                                                                          const std::string& path) {
      if (v.kind == ParamValue::Kind::kPlacement) check_frame(v.placement, path);
      for (size_t i = 0; i < v.items.size(); ++i) {
        std::string sub = v.kind == ParamValue::Kind::kMap ? path + "." + v.keys[i]
                                                           : path + "[" + std::to_string(i) + "]";
        walk(v.items[i], sub);
      }
    };
    for (const auto& e : s.timeline) {
      walk(e.params, e.path);
      if (e.when && e.when->signal.target)
        check_frame(*e.when->signal.target, e.path + ".when.target");
    }
    for (const auto& a : s.assertions) walk(a.params, a.path);
    for (const auto& k : s.kpis) walk(k.params, k.path);
  }
  if (!world.models.empty()) {
    auto known = [&](const std::string& m) {
      return std::find(world.models.begin(), world.models.end(), m) != world.models.end() ||
             s.vehicle(m) != nullptr;
    };
    std::set<std::string> spawned;
    for (const auto& e : s.timeline) {
      if (e.action == "spawn_model")
        spawned.insert(e.params.get("model") ? e.params.get("model")->string : "");
    }
    for (const auto& e : s.timeline) {
      if (e.action != "remove_model") continue;
      const ParamValue* m = e.params.get("model");
      if (m && !known(m->string) && !spawned.count(m->string)) {
        add(m->pos, e.path + ".model", "the world has no model '" + m->string + "'");
      }
    }
    for (const auto& group : {&s.assertions}) {
      for (const auto& a : *group) {
        const ParamValue* to = a.params.get("to");
        const ParamValue* m = to ? to->get("model") : nullptr;
        if (m && !known(m->string) && !spawned.count(m->string)) {
          add(m->pos, a.path + ".to.model", "the world has no model '" + m->string + "'");
        }
      }
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return a.pos.line < b.pos.line;
  });
  return out;
}

}  // namespace fieldproof::scenario
