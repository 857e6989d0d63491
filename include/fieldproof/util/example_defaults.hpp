// The defaults of the user's surface that name the repository's examples, in one place: the
// scenario table's `model` default (vehicles[].model, spawn_model's vehicle_model), a bus create
// that names no model, and the stack `fieldproof world` drives with when none is given. Each is an
// ordinary name, resolved like any a user writes (a model's short name through model.config's
// <fieldproof_short_name> on the resource path, a plugin and a program on their search paths):
// nothing checks for these names, and a lint (tests/lint/example_names.cmake) holds that no other
// file under src/ or include/ writes them as literals. Header-only.
//
//   world::load_robot_model(std::string(util::kDefaultRobotModel), base, search);
#pragma once

#include <string_view>

namespace fieldproof::util {

// The robot model a vehicle has when its scenario names none (examples/models/fieldproof_ugv).
inline constexpr std::string_view kDefaultRobotModel = "ugv";
// The stack plugin `fieldproof world` drives each vehicle with (stacks/ugv_nav, the reference
// stack), and the program `fieldproof world --process` runs instead.
inline constexpr std::string_view kDefaultStackPlugin = "fieldproof_ugv_nav_plugin";
inline constexpr std::string_view kDefaultStackProgram = "fieldproof-ugv-nav";

}  // namespace fieldproof::util
