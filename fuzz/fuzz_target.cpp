// One libFuzzer target; fuzz/CMakeLists.txt builds it once per check of harness.h, naming it in DPL_FUZZ_CHECK.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string problem = dpl::fuzz::DPL_FUZZ_CHECK({reinterpret_cast<const char*>(data), size});
  if (!problem.empty()) {
    // abort() makes libFuzzer save the input as a crash artifact.
    std::fprintf(stderr, "dpl fuzz check failed: %s\n", problem.c_str());
    std::abort();
  }
  return 0;
}
