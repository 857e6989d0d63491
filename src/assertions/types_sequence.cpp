// sequence (seed 004).
#include "builtin.hpp"
#include "fieldproof/assertions/checker.hpp"

namespace fieldproof::assertions::detail {
void add_sequence_types(AssertionTypes& types) { static_cast<void>(types); }
}  // namespace fieldproof::assertions::detail
