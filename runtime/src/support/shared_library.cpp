// dlopen() for pass plugins and natives libraries (shared_library.h).
#include "dpl/support/shared_library.h"

#include <dlfcn.h>

namespace dpl {

bool load_shared_library(const std::string& path, std::string& error) {
  // dlopen looks a name without a slash up in the library search path; on a command line it means a file.
  const std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  if (dlopen(file.c_str(), RTLD_NOW | RTLD_GLOBAL) != nullptr) return true;
  const char* message = dlerror();
  error = message != nullptr ? message : path + ": cannot be loaded";
  return false;
}

}  // namespace dpl
