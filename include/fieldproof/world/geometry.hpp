// Planar geometry of the embedded world: poses (x, y, yaw) and the static collision shapes the
// world simulates, cut at the vehicles' plane. No sdformat, no protobuf.
#pragma once

#include <string>

namespace fieldproof::world {

struct Pose2D {
  double x = 0.0;
  double y = 0.0;
  double yaw = 0.0;  // radians, counter-clockwise about z; kept in (-pi, pi]
};

// Box: size_x × size_y footprint centred on pose (its yaw turns it). Cylinder and sphere: a disc
// of `radius` at pose (upright; a tilted one is simulated upright, with a warning at load).
enum class ShapeType { kBox, kCylinder, kSphere };

struct StaticShape {
  std::string model;      // model name (a nested model is "outer::inner")
  std::string link;       // link name
  std::string collision;  // collision name; contacts report "model::link::collision"
  ShapeType type = ShapeType::kBox;
  Pose2D pose;          // centre in the world frame
  double size_x = 0.0;  // box only
  double size_y = 0.0;  // box only
  double radius = 0.0;  // cylinder / sphere only
  double z_min = 0.0;   // vertical extent in the world, for information
  double z_max = 0.0;
};

// "model::link::collision", the scoped name Gazebo gives a collision.
inline std::string scoped_name(const StaticShape& s) {
  return s.model + "::" + s.link + "::" + s.collision;
}

}  // namespace fieldproof::world
