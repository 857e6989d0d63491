// Evaluator throughput: one assertion of every type AssertionTypes::builtin() knows (16 once the
// library is complete), all active (none resolves early) on a synthetic stream of the observer's
// kinds in a run's proportions (per 0.1 s of simulated time: the poses of two vehicles and one
// odometry message; per second: a rate, a latency, a lifecycle, a resources and a clock sample;
// a tick every 0.1 s), beside the floor: the same loop that only builds the samples.
// Ends with: BENCH evaluator_all_types <samples/s> samples/s ratio=<rate/floor> baseline=<..>
// Timed with the thread's CPU clock (bench/ is on the lint allow-list), best of three.
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "fieldproof/assertions/checker.hpp"
#include "fieldproof/scenario/scenario.hpp"

namespace fa = fieldproof::assertions;
namespace fs = fieldproof::scenario;
using nlohmann::json;

namespace {

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// One assertion per type, each chosen so that it stays pending over the whole stream.
constexpr const char* kHeader = R"(name: bench
world: examples/worlds/depot.sdf
vehicles:
  - name: ugv1
    spawn: {x: 0, y: 0}
  - name: ugv2
    spawn: {x: 5, y: 0}
timeline:
  - action: navigate_to_pose
    name: drive
    vehicle: ugv1
    at: 100000s
    goal: {x: 10, y: 0}
assertions:
)";
const char* const kAssertions[][2] = {
    {"reach_pose", "{name: a1, type: reach_pose, vehicle: ugv1, target: {x: 900, y: 900}}"},
    {"within_time", "{name: a2, type: within_time, action: drive, max_s: 100000s}"},
    {"topic_rate", "{name: a3, type: topic_rate, topic: scan, vehicle: ugv1, min_hz: 1}"},
    {"no_collision", "{name: a4, type: no_collision, vehicle: ugv1}"},
    {"topic_value",
     "{name: a5, type: topic_value, topic: odom, vehicle: ugv1, field: twist.linear.x, "
     "condition: 'abs(value) < 10'}"},
    {"geofence",
     "{name: a6, type: geofence, vehicle: ugv1, region: {box: {x_min: -1000, x_max: 1000, "
     "y_min: -1000, y_max: 1000}}}"},
    {"min_distance",
     "{name: a7, type: min_distance, vehicle: ugv1, to: {vehicle: ugv2}, min_m: 0.01}"},
    {"path_efficiency", "{name: a8, type: path_efficiency, vehicle: ugv1, min_ratio: 0.0}"},
    {"mission_time", "{name: a9, type: mission_time, max_s: 1000000s}"},
    {"message_latency",
     "{name: a10, type: message_latency, topic: odom, vehicle: ugv1, max_ms: 100000}"},
    {"sequence",
     "{name: a11, type: sequence, vehicle: ugv1, steps: [{action: drive, event: started}, "
     "{topic: odom, field: twist.linear.x, condition: 'value > 100'}]}"},
    {"resource_usage", "{name: a12, type: resource_usage, vehicle: ugv1, max_memory_mb: 1000000}"},
    {"lifecycle_state",
     "{name: a13, type: lifecycle_state, vehicle: ugv1, node: bt_navigator, state: finalized}"},
    {"always",
     "{name: a14, type: always, vehicle: ugv1, signals: {speed: {topic: odom, field: "
     "twist.linear.x}, x: {metric: x}}, condition: 'abs(speed) < 10 and x < 1000'}"},
    {"never",
     "{name: a15, type: never, vehicle: ugv1, signals: {speed: {topic: odom, field: "
     "twist.linear.x}}, condition: 'speed > 100'}"},
    {"eventually",
     "{name: a16, type: eventually, vehicle: ugv1, signals: {speed: {topic: odom, field: "
     "twist.linear.x}}, condition: 'speed > 100', for_s: 1s}"},
};

// The stream, pre-generated so that both passes build the same samples from plain data.
struct Record {
  fa::Sample::Kind kind;
  int64_t sim_ns;
  int vehicle;           // 0 ugv1, 1 ugv2
  double a;              // x, hz, mean_ms, cpu, value
  double b;              // y, ...
  uint32_t message = 0;  // kValue: index into messages
};

struct Stream {
  std::vector<Record> records;
  std::vector<json> messages;
};

Stream make_stream(size_t n) {
  Stream s;
  s.records.reserve(n + 64);
  s.messages.reserve(n / 3 + 16);
  for (int64_t step = 0; s.records.size() < n; ++step) {
    const int64_t t = step * 100'000'000;
    const double ts = static_cast<double>(t) / 1e9;
    s.records.push_back({fa::Sample::Kind::kPose, t, 0, std::cos(ts * 0.01) * 50, 0.0});
    s.records.push_back({fa::Sample::Kind::kPose, t, 1, 5.0 + std::sin(ts * 0.01) * 50, 3.0});
    s.messages.push_back({{"header", {{"stamp", {{"sec", t / 1'000'000'000}, {"nsec", 0}}}}},
                          {"twist", {{"linear", {{"x", 0.5 + 0.1 * std::sin(ts)}}}}}});
    s.records.push_back(
        {fa::Sample::Kind::kValue, t, 0, 0, 0, static_cast<uint32_t>(s.messages.size() - 1)});
    if (step % 10 == 9) {
      s.records.push_back({fa::Sample::Kind::kRate, t, 0, 10.0, 0});
      s.records.push_back({fa::Sample::Kind::kLatency, t, 0, 12.0, 0});
      s.records.push_back({fa::Sample::Kind::kLifecycle, t, 0, 0, 0});
      s.records.push_back({fa::Sample::Kind::kResources, t, 0, 25.0, 80.0});
      s.records.push_back({fa::Sample::Kind::kClock, t, 0, 1.0, 0});
    }
  }
  return s;
}

const std::string kVehicles[2] = {"ugv1", "ugv2"};

void build(fa::Sample& s, const Record& r, const Stream& st) {
  s.kind = r.kind;
  s.sim = fieldproof::SimTime::from_ns(r.sim_ns);
  s.vehicle = kVehicles[r.vehicle];
  switch (r.kind) {
    case fa::Sample::Kind::kPose:
      s.pose = {r.a, r.b, 0.0};
      break;
    case fa::Sample::Kind::kValue:
      s.topic = "/model/ugv1/odom";
      s.message = st.messages[r.message];
      ++s.messages;
      break;
    case fa::Sample::Kind::kRate:
      s.topic = "/model/ugv1/scan";
      s.hz = r.a;
      s.window = fieldproof::seconds(5);
      s.messages = 50;
      break;
    case fa::Sample::Kind::kLatency:
      s.topic = "/model/ugv1/odom";
      s.window = fieldproof::seconds(2);
      s.latency = {20, r.a, r.a * 2, r.a / 2, r.a * 1.5, 0};
      break;
    case fa::Sample::Kind::kLifecycle:
      s.node = "bt_navigator";
      s.state = "active";
      break;
    case fa::Sample::Kind::kResources:
      s.process = "ugv1_nav";
      s.cpu_pct = r.a;
      s.memory_mb = r.b;
      break;
    case fa::Sample::Kind::kClock:
      s.rtf = r.a;
      break;
    case fa::Sample::Kind::kContact:
      break;
  }
}

uint64_t g_sink = 0;

}  // namespace

int main() {
  // The plan: one assertion per type the library has.
  std::string yaml = kHeader;
  const fa::AssertionTypes& types = fa::AssertionTypes::builtin();
  std::vector<std::string> absent;
  for (const auto& [type, line] : kAssertions) {
    if (types.find(type)) {
      yaml += std::string("  - ") + line + "\n";
    } else {
      absent.push_back(type);
    }
  }
  auto loaded = fs::load_scenario_text(yaml, "bench.yaml", FIELDPROOF_SOURCE_DIR);
  if (!loaded.ok()) {
    std::fprintf(stderr, "%s", loaded.format_errors().c_str());
    return 2;
  }
  const fs::Scenario& sc = *loaded.scenario;
  fa::PlanContext ctx{sc, {}};
  std::vector<fa::PlannedAssertion> planned;
  for (const auto& a : sc.assertions) {
    try {
      planned.push_back(types.find(a.type)->plan(a, ctx));
    } catch (const fa::PlanError& e) {
      std::fprintf(stderr, "%s: %s: %s (left out)\n", a.type.c_str(), e.path().c_str(), e.what());
      absent.push_back(a.type);
    }
  }

  constexpr size_t kSamples = 1'000'000;
  const Stream stream = make_stream(kSamples);

  const auto floor_pass = [&] {
    fa::Sample s;
    const double t0 = cpu_seconds();
    for (const Record& r : stream.records) {
      build(s, r, stream);
      g_sink += static_cast<uint64_t>(s.sim.ns()) + s.vehicle.size();
    }
    return cpu_seconds() - t0;
  };
  size_t pending = 0;
  const auto eval_pass = [&] {
    size_t resolved = 0;
    fa::Evaluator ev(planned, types, [&](const fa::AssertionResult&) { ++resolved; });
    fa::Sample s;
    int64_t next_tick = 0;
    const double t0 = cpu_seconds();
    for (const Record& r : stream.records) {
      build(s, r, stream);
      const fieldproof::SimTime t = fieldproof::SimTime::from_ns(r.sim_ns);
      if (r.sim_ns >= next_tick) {
        ev.on_tick(t);
        next_tick += 100'000'000;
      }
      ev.on_sample(s, t);
    }
    const double secs = cpu_seconds() - t0;
    pending = planned.size() - resolved;
    return secs;
  };

  double best_floor = 1e300, best_eval = 1e300;
  for (int rep = 0; rep < 3; ++rep) {
    best_floor = std::min(best_floor, floor_pass());
    best_eval = std::min(best_eval, eval_pass());
  }
  const double n = static_cast<double>(stream.records.size());
  const double floor_rate = n / best_floor;
  const double rate = n / best_eval;
  std::printf("evaluator: %zu assertion types active (%zu still pending at the end of the stream)",
              planned.size(), pending);
  if (!absent.empty()) {
    std::printf("; not in the library yet:");
    for (const auto& a : absent) std::printf(" %s", a.c_str());
  }
  std::printf("\n%.0f samples: evaluator %.3g samples/s, building the samples only %.3g/s\n", n,
              rate, floor_rate);
  std::printf(
      "BENCH evaluator_all_types %.0f samples/s ratio=%.3f baseline=building_the_samples_only\n",
      rate, rate / floor_rate);
  std::fflush(stdout);
  return g_sink == 42 ? 1 : 0;
}
