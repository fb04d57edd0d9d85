// Replays tests/fuzz_regressions/{dpl,relax,pass,lsp}/* through the fuzz targets' checks: each input once crashed,
// hung or leaked, and must now be handled cleanly (compiled or read, or rejected with located diagnostics).
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "harness.h"

namespace {

namespace fs = std::filesystem;

using Check = std::string (*)(std::string_view);

std::vector<fs::path> inputs_in(const std::string& subdirectory) {
  std::vector<fs::path> inputs;
  const fs::path dir = fs::path(DPL_FUZZ_REGRESSIONS_DIR) / subdirectory;
  if (!fs::is_directory(dir)) return inputs;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file()) inputs.push_back(entry.path());
  }
  return inputs;
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// Returns how many inputs were replayed.
size_t replay(const std::string& subdirectory, Check check) {
  const std::vector<fs::path> inputs = inputs_in(subdirectory);
  for (const fs::path& input : inputs) {
    EXPECT_EQ(check(read_bytes(input)), "") << input;
  }
  return inputs.size();
}

// dpl/: rule files; relax/: IR texts; pass/: a byte picking the bundled pass, then an IR text (see harness.h).
TEST(FuzzRegressions, EveryInputIsHandledCleanly) {
  const size_t replayed = replay("dpl", dpl::fuzz::check_rules_input) +
                          replay("relax", dpl::fuzz::check_relax_input) +
                          replay("pass", dpl::fuzz::check_pass_input);
  EXPECT_GT(replayed, 0u) << "no inputs under " << DPL_FUZZ_REGRESSIONS_DIR;
}

// The rule files again, edited in the language server (lsp/: inputs only its check once failed on).
TEST(FuzzRegressions, EveryRuleFileIsHandledCleanlyByTheLanguageServer) {
  const size_t replayed = replay("dpl", dpl::fuzz::check_lsp_input) + replay("lsp", dpl::fuzz::check_lsp_input);
  EXPECT_GT(replayed, 0u) << "no inputs under " << DPL_FUZZ_REGRESSIONS_DIR;
}

// The rules check on the rule files of tests/compiler/run (multi-root rules, declared ops, partitions, externs:
// every kind of generated tree), which compile: the source split into parts holds the same trees
// (harness.h, check_parts).
TEST(FuzzRegressions, CompilingRuleFilesSplitIntoPartsKeepsEveryTree) {
  size_t compiled = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(fs::path(DPL_COMPILER_RUN_DIR))) {
    if (entry.path().extension() != ".dpl") continue;
    EXPECT_EQ(dpl::fuzz::check_rules_input(read_bytes(entry.path())), "") << entry.path();
    ++compiled;
  }
  EXPECT_GE(compiled, 10u);
}

}  // namespace
