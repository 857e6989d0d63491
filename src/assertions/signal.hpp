// What the signal types (types_signals.cpp) and sequence (types_sequence.cpp) share: a signal
// resolved at plan time and read from samples, the after_s/within_s window, and a checker base
// that keeps the last six samples it judged cheaply and notes them only when it decides (internal
// to the assertions part).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "fieldproof/assertions/checker.hpp"
#include "fieldproof/scenario/condition.hpp"

namespace fieldproof::assertions::detail {

// A message field path ("twist.linear.x", "ranges[0]") parsed once: find() walks a decoded
// message without building strings; when it finds nothing, find_field() says why.
class FieldPath {
 public:
  FieldPath() = default;
  explicit FieldPath(std::string path);
  Result<const nlohmann::json*> find(const nlohmann::json& message) const;
  const std::string& text() const { return text_; }

 private:
  struct Part {
    std::string key;  // a field name, or empty for an index
    size_t index = 0;
  };
  std::string text_;
  std::vector<Part> parts_;
  bool parsed_ = false;  // false: the path is malformed, find() defers to find_field()
};

// A signal (always/never/eventually; sequence's signal steps): a topic field or a
// metric of the run. sim_time and rtf come from clock samples, the others from the vehicle's
// ground-truth poses (z is 0: the vehicles drive on the ground).
struct SignalRef {
  enum class Kind { kField, kSimTime, kRtf, kX, kY, kZ, kYaw, kDistanceTo };
  Kind kind = Kind::kField;
  std::string topic;  // kField: absolute
  std::string field;  // kField
  FieldPath path;     // kField: `field`, parsed
  std::string vehicle;
  world::Pose2D target;  // kDistanceTo
  std::string label;     // "cmd_vel.linear.x", "distance_to (10.00, 0.00)" for reasons

  nlohmann::json to_json() const;
  static SignalRef from_json(const nlohmann::json& j);
};

// Resolves the signal written at `path` (a map with topic/field or metric/target/vehicle) and adds
// what the observer must stream to `watch`. Throws PlanError naming the path.
SignalRef plan_signal(const scenario::ParamValue& m, const std::string& default_vehicle,
                      const PlanContext& ctx, const std::string& path, Watch& watch);

enum class SignalRead {
  kNone,   // the sample is not this signal's
  kValue,  // *out holds the value
};
// What `sample` says of the signal; an error when the field does not exist in the message (its
// message says which part). *out is the caller's slot, so that no Value is made per sample.
Result<SignalRead> read_signal(const SignalRef& signal, const Sample& sample, scenario::Value* out);

// A condition value as JSON (for evidence).
nlohmann::json value_json(const scenario::Value& v);
// The same for an excerpt line: a list or a map is summarised ("[720 items]"), not copied.
nlohmann::json excerpt_json(const scenario::Value& v);
nlohmann::json excerpt_json(const nlohmann::json& v);

// Compiles a condition already accepted by the validator; PlanError at `path` otherwise.
scenario::Condition compile_condition(const std::string& text, std::vector<std::string> names,
                                      const std::string& path);

// A checker over a window of the timeline: closes on the tick past within_s and at the end.
// seen() notes a sample for the excerpt (a value sample with the value read, not its message).
class StreamChecker : public Checker {
 public:
  explicit StreamChecker(const PlannedAssertion& p) : Checker(p) {}
  void on_tick(SimTime t) override {
    if (!resolved() && window().closed(t)) close(window().end(), false);  // at the deadline
  }
  void on_finish(SimTime t) override {
    if (!resolved()) close(t, true);
  }

 protected:
  // The window closed (within_s passed; at_end false) or the timeline ended (at_end true).
  virtual void close(SimTime t, bool at_end) = 0;
  // For a sample of this checker at t: closes the window when t is past it; true when t is in it.
  bool in_window(SimTime t) {
    if (window().closed(t)) {
      close(window().end(), false);
      return false;
    }
    return t >= window().start() && t >= SimTime::zero();
  }
  // Notes a sample for the excerpt: with `field`, `value` is the value read from it; otherwise a
  // numeric `extra_value` is noted as `extra` ("judged_ms").
  void seen(SimTime t, const Sample& s, const std::string* field = nullptr,
            const nlohmann::json& value = nullptr, const char* extra = nullptr,
            const nlohmann::json& extra_value = nullptr);
  void decide(Verdict v, std::string reason, SimTime t, SimTime sim,
              nlohmann::json evidence = nlohmann::json::object());
  // "after 2 s" / "by 10 s" phrases for reasons.
  std::string closing_phrase(SimTime t, bool at_end) const;
};

// Counts messages over sliding windows reported once a second (rates, latencies): each window
// adds the part of its messages that the previous window did not cover, so a steady stream is
// counted once.
class WindowCounter {
 public:
  void add(SimTime sim, Duration window, double messages);
  double total() const { return total_; }

 private:
  SimTime last_sim_;
  bool any_ = false;
  double total_ = 0;
};

}  // namespace fieldproof::assertions::detail
