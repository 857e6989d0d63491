// The SDF files a world includes, checked before sdformat reads them: every one
// a regular file of at most util::kMaxWorldBytes, and no include cycle (a world including itself
// made sdformat allocate for tens of seconds and abort). Resolves <include><uri> the way
// sdformat 12 does for files: "file://" and plain paths against the including file's folder, then
// SDF_PATH; "model://NAME[/PATH]" in SDF_PATH and the including file's folder; a folder by its
// model.config (or model.sdf). URIs it cannot resolve (http, a model not found) are left to
// sdformat, which reports them.
#pragma once

#include <string>

#include "fieldproof/util/status.hpp"

namespace fieldproof::world::detail {

// Ok when the includes of `world_file` are fine; otherwise kInvalidArgument with a message naming
// the chain: "a.sdf includes itself: a.sdf -> b.sdf -> a.sdf (an include cycle)".
[[nodiscard]] Status check_sdf_includes(const std::string& world_file);

}  // namespace fieldproof::world::detail
