// Private: reads an SDF world with libsdformat into the planar description the world simulates.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "fieldproof/time/duration.hpp"
#include "fieldproof/world/geometry.hpp"
#include "fieldproof/world/world.hpp"

namespace fieldproof::world::detail {

// A ground plane of stated size, as a rectangle in the world frame (the map's extent).
struct GroundPatch {
  Pose2D pose;  // centre
  double size_x = 0.0, size_y = 0.0;
};

struct WorldDescription {
  std::string name;
  Duration step;
  double real_time_factor = 1.0;
  std::vector<StaticShape> shapes;
  std::map<std::string, Pose2D> frames;
  SphericalCoordinates spherical;  // <spherical_coordinates>, navsat's reference
  std::vector<std::string> models;            // every top-level model, in file order
  std::map<std::string, Pose2D> model_poses;  // top-level models' poses in the world
  // Horizontal ground planes with a <size> in the file; a plane without one is unbounded.
  std::vector<GroundPatch> grounds;
  bool unbounded_ground = false;
};

struct SdfOutcome {
  WorldDescription world;
  std::vector<std::string> errors;
  std::vector<std::string> warnings;
};

// `text` non-null: load from that string, `source` naming it in messages; otherwise from the
// file at `source`. Shapes outside [plane_z_min, plane_z_max] are left out with a warning.
// plain_threshold: a world with at least this many plain top-level models (static geometry only,
// see sdf_loader.cpp) has them read directly, not by sdformat (0: never).
SdfOutcome load_sdf(const std::string& source, const std::string* text, double plane_z_min,
                    double plane_z_max, size_t plain_threshold = 0);

// One model given as SDF text (what /world/<w>/create carries): its static shapes placed with the
// model at `pose` when given, else at the model's own <pose>. A text without an <sdf> root is
// wrapped in one. Errors: the text does not parse, holds no <model>, or a collision the world
// cannot simulate (unsupported geometry, outside the plane, degenerate): a spawned model is taken
// whole or not at all. Other remarks (not static, tilted) are warnings.
struct ModelOutcome {
  std::string name;  // the <model name>
  std::vector<StaticShape> shapes;
  Pose2D pose;  // the model's pose in the world
  std::vector<std::string> errors;
  std::vector<std::string> warnings;
};
ModelOutcome load_model_sdf(const std::string& text, const std::string& source, const Pose2D* pose,
                            double plane_z_min, double plane_z_max);

// When `text` is just an <include> (with or without an <sdf> root): true, with its <uri>, its
// <name> and <pose> (x y z roll pitch yaw) when given.
bool model_include(const std::string& text, std::string* uri, std::string* name,
                   std::optional<Pose2D>* pose);

double normalize_angle(double a);

}  // namespace fieldproof::world::detail
