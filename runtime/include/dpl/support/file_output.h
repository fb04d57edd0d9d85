// Writing an output file all at once: a temporary file beside it, renamed over it, so readers never see half a file.
#pragma once

#include <string>

namespace dpl {

// Writes `text` to a temporary file beside `path` and renames it over `path`; a failure leaves `path` untouched
// and sets `error`. A symbolic link is followed (the file it names is replaced, the link stays) and an existing
// file keeps its permissions. Anything but a regular file (/dev/null, a pipe) is written in place.
bool write_file_atomically(const std::string& path, const std::string& text, std::string& error);

}  // namespace dpl
