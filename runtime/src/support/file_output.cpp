// Atomic output files (temporary file + rename) for the command-line tools.
#include "dpl/support/file_output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

namespace dpl {

namespace {

bool write_all(int fd, const std::string& text) {
  for (size_t written = 0; written < text.size();) {
    const ssize_t n = write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    written += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

bool write_file_atomically(const std::string& path, const std::string& text, std::string& error) {
  struct stat existing {};
  const bool exists = stat(path.c_str(), &existing) == 0;
  if (exists && !S_ISREG(existing.st_mode)) {
    const int fd = open(path.c_str(), O_WRONLY | O_TRUNC);
    const bool ok = fd >= 0 && write_all(fd, text);
    if (!ok) error = fmt::format("cannot write {}: {}", path, std::strerror(errno));
    if (fd >= 0 && close(fd) != 0 && ok) {
      error = fmt::format("cannot write {}: {}", path, std::strerror(errno));
      return false;
    }
    return ok;
  }

  std::string target = path;
  if (exists) {
    std::error_code failed;
    std::filesystem::path resolved = std::filesystem::canonical(path, failed);
    if (!failed) target = resolved.string();
  }
  std::string temp = target + ".tmp.XXXXXX";
  const int fd = mkstemp(temp.data());
  if (fd < 0) {
    error = fmt::format("cannot create a temporary file for {}: {}", path, std::strerror(errno));
    return false;
  }
  mode_t mode = existing.st_mode & 07777;
  if (!exists) {
    const mode_t mask = umask(0);
    umask(mask);
    mode = 0666 & ~mask;
  }
  bool ok = fchmod(fd, mode) == 0 && write_all(fd, text);
  ok = (close(fd) == 0) && ok;
  ok = ok && std::rename(temp.c_str(), target.c_str()) == 0;
  if (!ok) {
    error = fmt::format("cannot write {}: {}", path, std::strerror(errno));
    std::remove(temp.c_str());
  }
  return ok;
}

}  // namespace dpl
