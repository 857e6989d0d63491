// Helpers shared by the assertion types (internal to the assertions part).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "fieldproof/assertions/checker.hpp"
#include "fieldproof/time/duration.hpp"
#include "fieldproof/world/geometry.hpp"

namespace fieldproof::assertions::detail {

// Rounds to a decimal unit (1e-3, 1e-4) without binary noise in the printed value.
inline double round_to(double v, double unit) {
  const double scale = std::round(1.0 / unit);
  return std::round(v * scale) / scale;
}
inline std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}
// "2.5 s", "1 s", "0.125 s".
inline std::string seconds_text(double s) {
  std::string t = fmt("%.3f", s);
  while (t.back() == '0') t.pop_back();
  if (t.back() == '.') t.pop_back();
  return t + " s";
}
inline std::string seconds_text(SimTime t) { return seconds_text(to_seconds(t)); }
inline std::string seconds_text(Duration d) { return seconds_text(to_seconds(d)); }
inline nlohmann::json metric(double value, const char* unit) {
  return {{"value", value}, {"unit", unit}};
}
inline bool is_ok_status(const std::string& status) {
  return status == "ok" || status == "succeeded";
}
inline nlohmann::json position(const world::Pose2D& p) {
  return {{"x", round_to(p.x, 1e-4)}, {"y", round_to(p.y, 1e-4)}};
}
inline std::string xy_text(const world::Pose2D& p) {
  return "(" + fmt("%.2f", p.x) + ", " + fmt("%.2f", p.y) + ")";
}
// A number of a parameter map (kNumber, kInteger), or `otherwise`.
inline std::optional<double> number_param(const scenario::ParamValue& params, const char* key) {
  const scenario::ParamValue* v = params.get(key);
  if (!v) return std::nullopt;
  if (v->kind == scenario::ParamValue::Kind::kNumber ||
      v->kind == scenario::ParamValue::Kind::kInteger)
    return v->number;
  return std::nullopt;
}
inline std::optional<Duration> duration_param(const scenario::ParamValue& params, const char* key) {
  const scenario::ParamValue* v = params.get(key);
  if (!v || v->kind != scenario::ParamValue::Kind::kDuration) return std::nullopt;
  return v->duration;
}
inline std::string string_param(const scenario::ParamValue& params, const char* key) {
  const scenario::ParamValue* v = params.get(key);
  if (!v || v->kind == scenario::ParamValue::Kind::kNull) return "";
  return v->string;
}

// The path a model drove over consecutive ground-truth poses (path_efficiency and the path
// collector): length, straight line to a target (or the last pose), speeds.
class PathMeter {
 public:
  void add(const world::Pose2D& p, SimTime t) {
    if (poses_ == 0) {
      first_ = p;
      t_first_ = t;
    } else {
      const double d = std::hypot(p.x - last_.x, p.y - last_.y);
      path_m_ += d;
      const double dt = to_seconds(t - t_last_);
      if (dt > 0) max_speed_ = std::max(max_speed_, d / dt);
    }
    last_ = p;
    t_last_ = t;
    ++poses_;
  }
  size_t poses() const { return poses_; }
  double path_m() const { return path_m_; }
  const world::Pose2D& first() const { return first_; }
  const world::Pose2D& last() const { return last_; }
  double straight_m(const std::optional<world::Pose2D>& target) const {
    const world::Pose2D& end = target ? *target : last_;
    return std::hypot(end.x - first_.x, end.y - first_.y);
  }
  // straight / path, at most 1 (a vehicle that stopped short of its target is not more efficient
  // than the straight line); 1 when neither is longer than a millimetre (it did not move).
  double efficiency(const std::optional<world::Pose2D>& target) const {
    const double s = straight_m(target);
    if (path_m_ < 1e-3) return s < 1e-3 ? 1.0 : 0.0;
    return std::min(1.0, s / path_m_);
  }
  double max_speed_mps() const { return max_speed_; }
  double mean_speed_mps() const {
    const double dt = to_seconds(t_last_ - t_first_);
    return dt > 0 ? path_m_ / dt : 0.0;
  }
  // path_m, straight_m, efficiency, max_speed_mps, mean_speed_mps.
  nlohmann::json metrics(const std::optional<world::Pose2D>& target) const {
    if (poses_ == 0) return nlohmann::json::object();
    return {{"path_m", metric(round_to(path_m_, 1e-4), "m")},
            {"straight_m", metric(round_to(straight_m(target), 1e-4), "m")},
            {"efficiency", metric(round_to(efficiency(target), 1e-4), "")},
            {"max_speed_mps", metric(round_to(max_speed_mps(), 1e-4), "m/s")},
            {"mean_speed_mps", metric(round_to(mean_speed_mps(), 1e-4), "m/s")}};
  }

 private:
  world::Pose2D first_;
  world::Pose2D last_;
  SimTime t_first_;
  SimTime t_last_;
  double path_m_ = 0;
  double max_speed_ = 0;
  size_t poses_ = 0;
};

// The distance of a model to another model or a fixed point (min_distance and the distance
// collector), measured at every pose of either once both are known.
class DistanceMeter {
 public:
  // `other` empty: a fixed target.
  DistanceMeter(std::string model, std::string other, std::optional<world::Pose2D> target)
      : model_(std::move(model)), other_name_(std::move(other)) {
    if (target) {
      other_ = *target;
      have_other_ = true;
    }
  }
  // Returns true when the sample gave a new distance (distance() is then current).
  bool add(const Sample& s, SimTime t) {
    if (s.kind != Sample::Kind::kPose) return false;
    if (s.vehicle == model_) {
      mine_ = s.pose;
      have_mine_ = true;
    } else if (!other_name_.empty() && s.vehicle == other_name_) {
      other_ = s.pose;
      have_other_ = true;
    } else {
      return false;
    }
    if (!have_mine_ || !have_other_) return false;
    distance_ = std::hypot(mine_.x - other_.x, mine_.y - other_.y);
    ++measured_;
    if (distance_ < closest_) {
      closest_ = distance_;
      closest_at_ = t;
      closest_sim_ = s.sim;
      closest_mine_ = mine_;
      closest_other_ = other_;
    }
    return true;
  }
  size_t measured() const { return measured_; }
  double distance() const { return distance_; }
  double closest() const { return closest_; }
  SimTime closest_at() const { return closest_at_; }
  // {t_s, sim_s, distance_m, vehicle: {x, y}, other: {x, y}}
  nlohmann::json closest_evidence() const {
    if (measured_ == 0) return nullptr;
    return {{"t_s", round_to(to_seconds(closest_at_), 1e-3)},
            {"sim_s", to_seconds(closest_sim_)},
            {"distance_m", round_to(closest_, 1e-4)},
            {"vehicle", position(closest_mine_)},
            {"other", position(closest_other_)}};
  }
  // closest_m, closest_at_s, final_m.
  nlohmann::json metrics() const {
    if (measured_ == 0) return nlohmann::json::object();
    return {{"closest_m", metric(round_to(closest_, 1e-4), "m")},
            {"closest_at_s", metric(round_to(to_seconds(closest_at_), 1e-3), "s")},
            {"final_m", metric(round_to(distance_, 1e-4), "m")}};
  }

 private:
  std::string model_;
  std::string other_name_;
  world::Pose2D mine_;
  world::Pose2D other_;
  bool have_mine_ = false;
  bool have_other_ = false;
  double distance_ = 0;
  double closest_ = std::numeric_limits<double>::infinity();
  SimTime closest_at_;
  SimTime closest_sim_;
  world::Pose2D closest_mine_;
  world::Pose2D closest_other_;
  size_t measured_ = 0;
};

// A span of the timeline between an entry's start (or the timeline's) and an entry's ok end (or
// the timeline's) (mission_time and its collector).
class SpanClock {
 public:
  SpanClock(std::string start, std::string end) : start_(std::move(start)), end_(std::move(end)) {
    if (start_.empty()) started_ = SimTime::zero();
  }
  // Returns true when the event changed the span (started, ended or ended badly).
  bool on_action(const std::string& label, ActionEvent event, SimTime t,
                 const std::string& status) {
    bool changed = false;
    if (!start_.empty() && label == start_ && event == ActionEvent::kStart && !started_) {
      started_ = t;
      changed = true;
    }
    if (!end_.empty() && label == end_ && event == ActionEvent::kEnd && !ended_ && !failed_) {
      end_status_ = status;
      if (started_ && is_ok_status(status)) {
        ended_ = t;
      } else {
        failed_ = true;
      }
      changed = true;
    }
    return changed;
  }
  // The timeline completed: closes a span without an end entry.
  void finish(SimTime t) {
    if (end_.empty() && started_ && !ended_) ended_ = t;
  }
  const std::string& start() const { return start_; }
  const std::string& end() const { return end_; }
  std::optional<SimTime> started() const { return started_; }
  std::optional<SimTime> ended() const { return ended_; }
  bool failed() const { return failed_; }  // the end entry ended otherwise (or before the start)
  const std::string& end_status() const { return end_status_; }
  std::optional<Duration> duration() const {
    if (started_ && ended_) return *ended_ - *started_;
    return std::nullopt;
  }
  nlohmann::json metrics() const {
    if (auto d = duration()) return {{"duration_s", metric(round_to(to_seconds(*d), 1e-3), "s")}};
    return nlohmann::json::object();
  }
  nlohmann::json evidence() const {
    nlohmann::json e = nlohmann::json::object();
    e["started_t_s"] =
        started_ ? nlohmann::json(round_to(to_seconds(*started_), 1e-3)) : nlohmann::json();
    e["ended_t_s"] =
        ended_ ? nlohmann::json(round_to(to_seconds(*ended_), 1e-3)) : nlohmann::json();
    auto d = duration();
    e["duration_s"] = d ? nlohmann::json(round_to(to_seconds(*d), 1e-3)) : nlohmann::json();
    return e;
  }

 private:
  std::string start_;
  std::string end_;
  std::optional<SimTime> started_;
  std::optional<SimTime> ended_;
  bool failed_ = false;
  std::string end_status_;
};

}  // namespace fieldproof::assertions::detail
