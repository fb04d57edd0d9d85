// Atomic output files (temporary files + rename) for the command-line tools.
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

StagedOutputs::~StagedOutputs() {
  for (const Staged& file : staged_) std::remove(file.temporary.c_str());
}

bool StagedOutputs::stage(const std::string& path, const std::string& text, std::string& error) {
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
    error = fmt::format("cannot write {}: no temporary file beside it: {}", path, std::strerror(errno));
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
  if (!ok) {
    error = fmt::format("cannot write {}: {}", path, std::strerror(errno));
    std::remove(temp.c_str());
    return false;
  }
  staged_.push_back({temp, target, path});
  return true;
}

bool StagedOutputs::commit(std::string& error) {
  while (!staged_.empty()) {
    const Staged& file = staged_.front();
    if (std::rename(file.temporary.c_str(), file.target.c_str()) != 0) {
      error = fmt::format("cannot write {}: {}", file.path, std::strerror(errno));
      return false;  // the rest are removed with the object
    }
    staged_.erase(staged_.begin());
  }
  return true;
}

bool write_file_atomically(const std::string& path, const std::string& text, std::string& error) {
  StagedOutputs output;
  return output.stage(path, text, error) && output.commit(error);
}

}  // namespace dpl
