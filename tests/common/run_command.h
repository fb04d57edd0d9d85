// Running a tool as a process in tests: its exit code and everything it printed (stdout and stderr together).
#pragma once

#include <cstdio>
#include <string>
#include <sys/wait.h>

namespace dpl::testing {

struct CommandOutcome {
  int exit_code = -1;  // -1 when the command could not be started or did not exit normally
  std::string output;
};

// Runs `command` through the shell, stderr joined to stdout.
inline CommandOutcome run_command(const std::string& command) {
  CommandOutcome outcome;
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return outcome;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) outcome.output.append(buffer, n);
  const int status = pclose(pipe);
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  return outcome;
}

}  // namespace dpl::testing
