// geofence, min_distance and path_efficiency (seed 004).
#include <algorithm>
#include <cmath>
#include <limits>

#include "builtin.hpp"
#include "fieldproof/assertions/checker.hpp"
#include "util.hpp"

namespace fieldproof::assertions {

using nlohmann::json;
using namespace detail;  // NOLINT(google-build-using-namespace): the part's own helpers

namespace detail {
void add_geometry_types(AssertionTypes& types) { static_cast<void>(types); }
}  // namespace detail

}  // namespace fieldproof::assertions
