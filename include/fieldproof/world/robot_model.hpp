// Robot models from SDF: a vehicle described the way a team describes it for Gazebo (an SDF
// <model> with a DiffDrive system plugin and <sensor> elements), read into the VehicleParams the
// world simulates. docs/robots.md says what is read and what is left out with a warning.
//
//   const auto search = world::model_search_path();            // env, installed, build tree
//   world::RobotModel m = world::load_robot_model("model://fieldproof_ugv", ".", search);
//   if (!m.ok()) { for (auto& e : m.errors) std::puts(e.c_str()); return 2; }
//   (void)w.spawn_vehicle("ugv1", Pose2D{}, m.params);
//
// Resolution (as Gazebo resolves a model URI): `model://NAME[/sub]` is the folder NAME in the
// first folder of the search path that holds it; a path (absolute, or relative to `base_dir`,
// the including file's folder) names a model.sdf file or a folder with a model.config; a bare
// NAME without '/' is model://NAME, else the model folder whose model.config declares
// <fieldproof_short_name>NAME</fieldproof_short_name> (how `ugv` names
// examples/models/fieldproof_ugv). A model folder's file is the <sdf> of its model.config
// (the highest version), else model.sdf.
//
// Errors and warnings are "file:line: element: what" (the line of the element concerned).
// Pure function of the files read; thread-compatible.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "fieldproof/world/world.hpp"

namespace fieldproof::world {

// The resource path: FIELDPROOF_RESOURCE_PATH, GZ_SIM_RESOURCE_PATH, IGN_GAZEBO_RESOURCE_PATH,
// SDF_PATH (each ':'-separated, in that order), then <tool_dir>/../share/fieldproof/models (an
// installed fieldproof; tool_dir empty: the running program's folder), then the source tree's
// examples/models (a build tree).
std::vector<std::filesystem::path> model_search_path(const std::filesystem::path& tool_dir = {});

struct RobotModel {
  std::string uri;                // as given
  std::filesystem::path file;     // the model file read (empty when not found)
  std::string name;               // the <model name>
  VehicleParams params;           // valid when ok()
  double wheel_separation = 0.0;  // m, from the DiffDrive plugin (for information)
  double wheel_radius = 0.0;      // m
  std::vector<std::string> errors;
  std::vector<std::string> warnings;  // elements read but not simulated, each naming file:line
  bool ok() const { return errors.empty(); }
};

// Resolves `uri` and reads the model. Never throws for bad input: errors say what and where.
RobotModel load_robot_model(const std::string& uri, const std::filesystem::path& base_dir,
                            const std::vector<std::filesystem::path>& search);

// The same from SDF text; `source` names it in messages, `base_dir` resolves its relative URIs.
RobotModel load_robot_model_string(const std::string& text, const std::string& source);

}  // namespace fieldproof::world
