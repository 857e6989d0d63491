// UgvNavOptions from JSON (the plugin's params_json and the process's --params).
#include <nlohmann/json.hpp>

#include "fieldproof/stacks/ugv_nav_stack.hpp"

namespace fieldproof::stacks {
namespace {

using nlohmann::json;

struct Reader {
  const json& obj;
  std::string path;  // "controller." etc., for messages
  std::string error;

  // Refuses keys outside `known`.
  bool only(std::initializer_list<const char*> known) {
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      bool ok = false;
      for (const char* k : known) ok = ok || it.key() == k;
      if (!ok) {
        error = "unknown key '" + path + it.key() + "'";
        return false;
      }
    }
    return true;
  }
  void number(const char* key, double* out) {
    if (!error.empty() || !obj.contains(key)) return;
    const json& v = obj.at(key);
    if (!v.is_number()) {
      error = "'" + path + key + "' must be a number";
      return;
    }
    *out = v.get<double>();
  }
  void integer(const char* key, int* out) {
    if (!error.empty() || !obj.contains(key)) return;
    const json& v = obj.at(key);
    if (!v.is_number_integer()) {
      error = "'" + path + key + "' must be an integer";
      return;
    }
    *out = v.get<int>();
  }
  void boolean(const char* key, bool* out) {
    if (!error.empty() || !obj.contains(key)) return;
    const json& v = obj.at(key);
    if (!v.is_boolean()) {
      error = "'" + path + key + "' must be true or false";
      return;
    }
    *out = v.get<bool>();
  }
  void text(const char* key, std::string* out) {
    if (!error.empty() || !obj.contains(key)) return;
    const json& v = obj.at(key);
    if (!v.is_string()) {
      error = "'" + path + key + "' must be a string";
      return;
    }
    *out = v.get<std::string>();
  }
  void duration(const char* key, Duration* out) {
    if (!error.empty() || !obj.contains(key)) return;
    const json& v = obj.at(key);
    if (!v.is_string()) {
      error = "'" + path + key + "' must be a duration as text, e.g. \"50ms\" or \"0.05\"";
      return;
    }
    const auto d = parse_duration(v.get<std::string>());
    if (!d.ok()) {
      error = "'" + path + key + "': " + d.status().message();
      return;
    }
    *out = *d;
  }
  void strings(const char* key, std::vector<std::string>* out) {
    if (!error.empty() || !obj.contains(key)) return;
    const json& v = obj.at(key);
    bool ok = v.is_array();
    for (size_t i = 0; ok && i < v.size(); ++i) ok = v[i].is_string();
    if (!ok) {
      error = "'" + path + key + "' must be an array of strings";
      return;
    }
    *out = v.get<std::vector<std::string>>();
  }
  // A nested object; nullptr (and no error) when absent.
  const json* object(const char* key) {
    if (!error.empty() || !obj.contains(key)) return nullptr;
    const json& v = obj.at(key);
    if (!v.is_object()) {
      error = "'" + path + key + "' must be an object";
      return nullptr;
    }
    return &v;
  }
};

}  // namespace

Result<UgvNavOptions> parse_ugv_nav_options(std::string_view text) {
  UgvNavOptions o;
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) return o;
  const json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return Status(StatusCode::kInvalidArgument, "ugv_nav params: not valid JSON");
  }
  if (!doc.is_object()) {
    return Status(StatusCode::kInvalidArgument, "ugv_nav params: not a JSON object");
  }
  Reader r{doc, "", ""};
  r.only({"vehicle", "pose_source", "world", "inflation", "planner", "controller", "lifecycle",
          "control_period", "feedback_period", "blocked_check_distance", "scan_match_tolerance",
          "max_replans", "replan_interval", "progress_timeout", "progress_distance",
          "pose_timeout", "stop_on_link_loss"});
  r.text("vehicle", &o.vehicle);
  std::string pose_source;
  r.text("pose_source", &pose_source);
  if (pose_source == "ground_truth") {
    o.pose_source = PoseSource::kGroundTruth;
  } else if (!pose_source.empty() && pose_source != "odometry" && r.error.empty()) {
    r.error = "'pose_source' must be \"odometry\" or \"ground_truth\", not \"" + pose_source + "\"";
  }
  r.text("world", &o.world);
  r.duration("control_period", &o.control_period);
  r.duration("feedback_period", &o.feedback_period);
  r.number("blocked_check_distance", &o.blocked_check_distance);
  r.number("scan_match_tolerance", &o.scan_match_tolerance);
  r.integer("max_replans", &o.max_replans);
  r.duration("replan_interval", &o.replan_interval);
  r.duration("progress_timeout", &o.progress_timeout);
  r.number("progress_distance", &o.progress_distance);
  r.duration("pose_timeout", &o.pose_timeout);
  r.boolean("stop_on_link_loss", &o.stop_on_link_loss);
  std::string error = r.error;
  const auto sub = [&](const char* key, auto&& fill) {
    if (!error.empty()) return;
    Reader top{doc, "", ""};
    const json* j = top.object(key);
    if (!top.error.empty()) {
      error = top.error;
      return;
    }
    if (!j) return;
    Reader s{*j, std::string(key) + ".", ""};
    fill(s);
    error = s.error;
  };
  sub("inflation", [&](Reader& s) {
    if (!s.only({"robot_radius", "margin"})) return;
    s.number("robot_radius", &o.inflation.robot_radius);
    s.number("margin", &o.inflation.margin);
  });
  sub("planner", [&](Reader& s) {
    if (!s.only({"caution_weight", "escape_distance", "max_expansions", "shortcut"})) return;
    s.number("caution_weight", &o.planner.caution_weight);
    s.number("escape_distance", &o.planner.escape_distance);
    int max_exp = static_cast<int>(o.planner.max_expansions);
    s.integer("max_expansions", &max_exp);
    if (s.error.empty() && max_exp < 0) s.error = "'planner.max_expansions' must be >= 0";
    o.planner.max_expansions = static_cast<size_t>(std::max(0, max_exp));
    s.boolean("shortcut", &o.planner.shortcut);
  });
  sub("controller", [&](Reader& s) {
    if (!s.only({"lookahead", "max_linear", "max_angular", "min_linear", "slowdown_distance",
                 "rotate_threshold", "angular_gain", "goal_tolerance_xy", "goal_tolerance_yaw"})) {
      return;
    }
    ControllerOptions& c = o.controller;
    s.number("lookahead", &c.lookahead);
    s.number("max_linear", &c.max_linear);
    s.number("max_angular", &c.max_angular);
    s.number("min_linear", &c.min_linear);
    s.number("slowdown_distance", &c.slowdown_distance);
    s.number("rotate_threshold", &c.rotate_threshold);
    s.number("angular_gain", &c.angular_gain);
    s.number("goal_tolerance_xy", &c.goal_tolerance_xy);
    s.number("goal_tolerance_yaw", &c.goal_tolerance_yaw);
  });
  sub("lifecycle", [&](Reader& s) {
    if (!s.only({"servers", "nodes", "heartbeat_timeout", "heartbeat_clock", "reactivate"})) {
      return;
    }
    s.strings("servers", &o.lifecycle.servers);
    s.strings("nodes", &o.lifecycle.nodes);
    s.duration("heartbeat_timeout", &o.lifecycle.heartbeat_timeout);
    std::string clock;
    s.text("heartbeat_clock", &clock);
    if (clock == "wall") {
      o.lifecycle.heartbeat_clock = LifecycleOptions::Clock::kWall;
    } else if (clock == "sim") {
      o.lifecycle.heartbeat_clock = LifecycleOptions::Clock::kSim;
    } else if (!clock.empty() && clock != "auto" && s.error.empty()) {
      s.error = "'lifecycle.heartbeat_clock' must be \"auto\", \"wall\" or \"sim\", not \"" +
                clock + "\"";
    }
    s.boolean("reactivate", &o.lifecycle.reactivate);
  });
  if (!error.empty()) return Status(StatusCode::kInvalidArgument, "ugv_nav params: " + error);
  if (Status s = o.validate(); !s.ok()) {
    return Status(StatusCode::kInvalidArgument, "ugv_nav params: " + s.message());
  }
  return o;
}

}  // namespace fieldproof::stacks
