// The fuzz entry points, shared by the libFuzzer targets (fuzz_target.cpp,
// clang, `make fuzz`) and the driver CTest runs in every build (fuzz_driver_test.cpp: the corpora
// replayed and a bounded mutation loop, under -fsanitize=address,undefined). Each takes any
// bytes and must return without a crash, a sanitizer report, a hang or unbounded memory; a
// property that must hold for every input (a decoded frame re-encodes to the same bytes) ends
// the process with abort() when it does not, which both drivers report as a finding.
//
//   scenario_loader  a scenario file's text, validated (YAML, the tables, the condition language)
//   condition        a condition-language expression: compiled, and evaluated when it compiles
//   sdf_front        a world file's text through the checks made before sdformat reads it
//                    (the file checks, the <include> chain: files beside it, cycles)
//   frame_decoder    one ZeroMQ message through the coordinator's frame decoder
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "fieldproof/lockstep/codec.hpp"
#include "fieldproof/scenario/condition.hpp"
#include "fieldproof/scenario/scenario.hpp"
#include "world/include_check.hpp"

namespace fieldproof::fuzz {

enum class Target { kScenarioLoader, kCondition, kSdfFront, kFrameDecoder };
inline constexpr Target kTargets[] = {Target::kScenarioLoader, Target::kCondition,
                                      Target::kSdfFront, Target::kFrameDecoder};

inline const char* target_name(Target t) {
  switch (t) {
    case Target::kScenarioLoader:
      return "scenario_loader";
    case Target::kCondition:
      return "condition";
    case Target::kSdfFront:
      return "sdf_front";
    case Target::kFrameDecoder:
      return "frame_decoder";
  }
  return "?";
}

// A directory of this process's own (the SDF front reads files, so the input is written to one),
// with a second file the input may include: included.sdf, which includes nothing.
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    std::string templ = (std::filesystem::temp_directory_path() / "fieldproof-fuzz-XXXXXX").string();
    if (::mkdtemp(templ.data()) == nullptr) std::abort();
    const std::filesystem::path d(templ);
    std::ofstream(d / "included.sdf")
        << "<?xml version=\"1.0\"?>\n<sdf version=\"1.9\"><model name=\"m\"><static>true</static>"
           "<link name=\"l\"/></model></sdf>\n";
    std::filesystem::create_directories(d / "models" / "box");
    std::ofstream(d / "models" / "box" / "model.config")
        << "<?xml version=\"1.0\"?>\n<model><name>box</name><sdf>model.sdf</sdf></model>\n";
    std::ofstream(d / "models" / "box" / "model.sdf")
        << "<?xml version=\"1.0\"?>\n<sdf version=\"1.9\"><model name=\"box\"><include><uri>"
           "../../included.sdf</uri></include></model></sdf>\n";
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(scratch_dir(), ec);
    });
    return d;
  }();
  return dir;
}

inline void scenario_loader(std::string_view text) {
  const scenario::ValidationResult r =
      scenario::load_scenario_text(text, "fuzz.yaml", scratch_dir());
  // Every error is located and printable.
  for (const auto& e : r.errors) static_cast<void>(e.to_string());
  static_cast<void>(r.ok());
}

inline void condition(std::string_view text) {
  auto compiled = scenario::Condition::compile(text, {"value", "a", "b"});
  if (!compiled) return;
  scenario::Variables vars;
  vars["value"] = scenario::Value(scenario::Value::Map{
      {"x", scenario::Value(1.5)}, {"name", scenario::Value("ugv1")},
      {"list", scenario::Value(scenario::Value::List{scenario::Value(1), scenario::Value(2)})}});
  vars["a"] = scenario::Value(3);
  vars["b"] = scenario::Value("text");
  auto v = compiled->evaluate(vars);
  if (v) static_cast<void>(v->repr());
  static_cast<void>(compiled->holds(vars));
}

inline void sdf_front(std::string_view text) {
  const std::filesystem::path world = scratch_dir() / "world.sdf";
  {
    std::ofstream out(world, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
  }
  // Only the scratch directory's models are found by model:// (not the machine's).
  ::setenv("SDF_PATH", (scratch_dir() / "models").c_str(), 1);
  ::setenv("GZ_SIM_RESOURCE_PATH", (scratch_dir() / "models").c_str(), 1);
  static_cast<void>(world::detail::check_sdf_includes(world.string()));
}

inline void frame_decoder(std::string_view bytes) {
  lockstep::DecodeResult r = lockstep::decode_frame(bytes, size_t{1} << 20);
  if (!r) {
    static_cast<void>(r.error().reason.size());
    return;
  }
  // The wire format has one encoding per frame: what decodes re-encodes to the same bytes.
  if (lockstep::encode_frame(r.frame()) != bytes) {
    std::fprintf(stderr, "frame_decoder: a decoded %s frame re-encodes to other bytes\n",
                 lockstep::frame_kind_name(lockstep::frame_kind(r.frame())));
    std::abort();
  }
}

inline void run(Target t, const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  switch (t) {
    case Target::kScenarioLoader:
      return scenario_loader(in);
    case Target::kCondition:
      return condition(in);
    case Target::kSdfFront:
      return sdf_front(in);
    case Target::kFrameDecoder:
      return frame_decoder(in);
  }
}

// One frame of each kind, encoded: the frame decoder's seeds (its corpus holds the same bytes).
inline std::vector<std::string> frame_seeds() {
  using namespace lockstep;
  Publish pub{.participant = "ugv1",
              .topic = "/ugv1/odom",
              .stamp = SimTime::from_ns(123'456'789),
              .seq = 42,
              .type = "ignition.msgs.Odometry",
              .payload = std::string("\0\x01\xFFpayload", 10)};
  CoordinatorStatus st{.paused = true,
                       .time = SimTime::from_ns(5'000'000),
                       .grants = 17,
                       .measured_rtf = 1.25,
                       .max_rtf = 2.0,
                       .hold = SimTime::infinite(),
                       .participants = {{"ugv1", "main", Role::kRegulating, SimTime::from_ns(7)},
                                        {"viewer", "ui", Role::kFollowing, SimTime::infinite()}}};
  const Frame frames[] = {
      Announce{"ugv1", "main", Role::kFollowing, SimTime::infinite()},
      Subscribe{"ugv1", "main", "/cmd_vel"},
      Unsubscribe{"ugv1", "worker-1", "/cmd_vel"},
      pub,
      Leave{"ugv1", ""},
      Heartbeat{"ugv1"},
      Grant{SimTime::from_ns(1'000'000), 99},
      Deliver{"main", pub},
      Error{ErrorCode::kStampInPast, "publish stamped 1 before grant 2"},
      Control{ControlOp::kStep, milliseconds(250), SimTime::from_ns(-5), 0.5},
      ControlReply{false, "not paused", st},
      Hello{kProtocolVersion, "fieldproof-cpp 0.2.0"},
      Welcome{kProtocolVersion, "fieldproof-coordinator 0.2.0", uint64_t{64} << 20},
      PlayerControl{PlayerOp::kSeek, seconds(2), 3, 1.5},
      PlayerReply{true, "", true, 2.0, SimTime::from_ns(3'000'000'000), seconds(2), 3, 3, 5, 0,
                  SimTime::from_ns(5'000'000'000), true, "seek: clamped", 2},
  };
  std::vector<std::string> out;
  for (const Frame& f : frames) out.push_back(encode_frame(f));
  return out;
}

}  // namespace fieldproof::fuzz
