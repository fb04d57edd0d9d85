// Writing output files all at once: each to a temporary file beside it, renamed over it, so readers never see half a file.
#pragma once

#include <string>
#include <vector>

namespace dpl {

// The output files of one run of a tool. stage() writes each to a temporary file beside its target; commit()
// renames them all over their targets, so a run that fails before commit() (a bad path, a full disk) leaves every
// previous output as it was. Staged files not committed are removed when the object goes away. A symbolic link
// is followed (the file it names is replaced, the link stays) and an existing file keeps its permissions. Anything
// but a regular file (/dev/null, a pipe) is written in place by stage().
class StagedOutputs {
 public:
  StagedOutputs() = default;
  ~StagedOutputs();
  StagedOutputs(const StagedOutputs&) = delete;
  StagedOutputs& operator=(const StagedOutputs&) = delete;

  bool stage(const std::string& path, const std::string& text, std::string& error);
  bool commit(std::string& error);

 private:
  struct Staged {
    std::string temporary;
    std::string target;
    std::string path;  // as given, for messages
  };
  std::vector<Staged> staged_;
};

// One file, staged and committed: a failure leaves `path` untouched and sets `error`.
bool write_file_atomically(const std::string& path, const std::string& text, std::string& error);

}  // namespace dpl
