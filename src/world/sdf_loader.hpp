// Private: reads an SDF world with libsdformat into the planar description the world simulates.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "fieldproof/time/duration.hpp"
#include "fieldproof/world/geometry.hpp"

namespace fieldproof::world::detail {

struct WorldDescription {
  std::string name;
  Duration step;
  double real_time_factor = 1.0;
  std::vector<StaticShape> shapes;
  std::map<std::string, Pose2D> frames;
  std::vector<std::string> models;            // every top-level model, in file order
  std::map<std::string, Pose2D> model_poses;  // top-level models' poses in the world
};

struct SdfOutcome {
  WorldDescription world;
  std::vector<std::string> errors;
  std::vector<std::string> warnings;
};

// `text` non-null: load from that string, `source` naming it in messages; otherwise from the
// file at `source`. Shapes outside [plane_z_min, plane_z_max] are left out with a warning.
SdfOutcome load_sdf(const std::string& source, const std::string* text, double plane_z_min,
                    double plane_z_max);

double normalize_angle(double a);

}  // namespace fieldproof::world::detail
