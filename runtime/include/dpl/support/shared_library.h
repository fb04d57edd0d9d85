// Loading shared libraries that register things into this process (pass plugins, natives libraries).
#pragma once

#include <string>

namespace dpl {

// dlopen()s `path` for good with RTLD_NOW (a missing symbol is reported here rather than at the first call) and
// RTLD_GLOBAL (a later library may use what an earlier one defines). A path without a slash names a file in the
// current directory, not a library on the search path. False with dlerror()'s message in `error`.
bool load_shared_library(const std::string& path, std::string& error);

}  // namespace dpl
