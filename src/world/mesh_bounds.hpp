// Private: the axis-aligned bounding box of a mesh file, in the mesh's own frame, for the world's
// obstacles (a mesh collision becomes a box of its bounds). Reads Wavefront OBJ (`v` lines), STL
// (ASCII and binary) and COLLADA (.dae: the <float_array>s of the geometries' POSITION sources,
// scaled by <unit meter>; node transforms are not applied). Everything else is an error.
//
// And where Gazebo would find a resource: a model:// URI, a Fuel URI (https://fuel...), a
// relative path against the file that names it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fieldproof/util/status.hpp"

namespace fieldproof::world::detail {

struct MeshBounds {
  double min[3] = {0, 0, 0};
  double max[3] = {0, 0, 0};
};

// The bounds, or why there are none: kIoError (unreadable), kUnsupported (another format),
// kCorrupt (not XML, no vertices).
Result<MeshBounds> read_mesh_bounds(const std::string& path);

// The folders searched for model://NAME and for a Fuel model by name, in order:
// FIELDPROOF_RESOURCE_PATH, GZ_SIM_RESOURCE_PATH, IGN_GAZEBO_RESOURCE_PATH, SDF_PATH (each
// ':'-separated).
std::vector<std::string> resource_paths();

// A URI as Gazebo resolves it: file:// and absolute paths as they are; model://NAME/rest in each
// of resource_paths(); a relative path against `base_dir`. "" when nothing exists there.
std::string resolve_resource(const std::string& uri, const std::string& base_dir);

// True for a Fuel URI (http:// or https://).
bool is_fuel_uri(const std::string& uri);
// A Fuel model URI made local: a folder named as the model (its name in the URI, %20 decoded,
// compared without case and with a space matching an underscore) on resource_paths(), or the newest
// version in Gazebo's Fuel cache
// (~/.gz/fuel, ~/.ignition/fuel; GZ_FUEL_CACHE_PATH). "" when it is in neither.
std::string find_fuel_model(const std::string& uri);
// What to tell a user whose world includes a Fuel URI that is not available offline.
std::string fuel_advice(const std::string& uri);

}  // namespace fieldproof::world::detail
