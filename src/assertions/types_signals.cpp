// topic_rate, topic_value, message_latency, sequence, resource_usage, lifecycle_state, always,
// never and eventually (seed 004).
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
void add_signal_types(AssertionTypes& types) { static_cast<void>(types); }
}  // namespace detail

}  // namespace fieldproof::assertions
