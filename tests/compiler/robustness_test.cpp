// dplc never crashes on bad input: truncated and mutated copies of every test and example rule file, and
// pathological nesting, each end in either generated code or located error diagnostics.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "dpl/compiler/compile.h"

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> rule_files() {
  std::vector<fs::path> files;
  for (const char* root : {DPL_COMPILER_TEST_DIR, DPL_EXAMPLES_DIR}) {
    if (!fs::exists(root)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      if (entry.path().extension() == ".dpl") files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Compiles `text` and checks the outcome is well-formed: output when clean, else located errors.
void compile_and_check(const std::string& text, const std::string& what) {
  dpl::SourceFile source("mutant.dpl", text);
  dpl::DiagnosticEngine diags;
  dpl::compiler::CompileResult result = dpl::compiler::compile(source, diags);
  if (result.ok) {
    ASSERT_TRUE(result.cpp.has_value()) << what;
    EXPECT_FALSE(result.cpp->source.empty()) << what;
  } else {
    EXPECT_TRUE(diags.has_errors()) << what << ": failed without an error";
    EXPECT_FALSE(result.cpp.has_value()) << what;
  }
  for (const dpl::Diagnostic& diag : diags.diagnostics()) {
    EXPECT_TRUE(diag.loc.valid()) << what << ": " << diag.message;
    EXPECT_LE(diag.loc.line, source.line_count() + 1) << what << ": " << diag.message;
    EXPECT_FALSE(diag.message.empty()) << what;
  }
}

TEST(Robustness, FindsTheRuleFiles) { EXPECT_GE(rule_files().size(), 10u); }

TEST(Robustness, EveryTruncationOfEveryRuleFile) {
  for (const fs::path& path : rule_files()) {
    std::string text = read_file(path);
    // Every prefix of small files; for larger ones every few characters, always including token boundaries.
    size_t step = std::max<size_t>(1, text.size() / 400);
    for (size_t length = 0; length < text.size(); length += step) {
      compile_and_check(text.substr(0, length), path.filename().string() + " cut at " + std::to_string(length));
    }
  }
}

TEST(Robustness, RandomMutationsOfEveryRuleFile) {
  static const std::vector<std::string> fragments = {"(",
                                                     ")",
                                                     ",",
                                                     ":",
                                                     "=>",
                                                     ";",
                                                     "|",
                                                     "?",
                                                     "[",
                                                     "]",
                                                     "\"",
                                                     "/*",
                                                     "*/",
                                                     "rule",
                                                     "pass",
                                                     "{",
                                                     "}",
                                                     "const",
                                                     "_",
                                                     "1.5",
                                                     "-",
                                                     "=",
                                                     "where",
                                                     "x",
                                                     "add",
                                                     "nn.",
                                                     "R.",
                                                     "const(",
                                                     "axis=",
                                                     "1e999",
                                                     "99999999999999999999",
                                                     "\\",
                                                     "pattern",
                                                     "import",
                                                     "!",
                                                     "&&",
                                                     ".",
                                                     "$",
                                                     "\n",
                                                     "const(2.0, float99)",
                                                     "(op: add | multiply)",
                                                     "nn.relu?"};
  std::mt19937 random(12345);
  for (const fs::path& path : rule_files()) {
    const std::string original = read_file(path);
    if (original.empty()) continue;
    for (int round = 0; round < 150; ++round) {
      std::string text = original;
      int edits = 1 + static_cast<int>(random() % 3);
      for (int e = 0; e < edits; ++e) {
        size_t at = random() % (text.size() + 1);
        switch (random() % 3) {
          case 0:
            text.erase(at, 1 + random() % 8);
            break;
          case 1:
            text.insert(at, fragments[random() % fragments.size()]);
            break;
          default: {
            size_t from = random() % (text.size() + 1);
            text.insert(at, text.substr(from, random() % 16));
          }
        }
      }
      compile_and_check(text, path.filename().string() + " mutant " + std::to_string(round));
      if (testing::Test::HasFailure()) return;  // one clear report is enough
    }
  }
}

std::string repeat(const std::string& piece, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += piece;
  return out;
}

TEST(Robustness, PathologicalNestingIsAnErrorNotACrash) {
  const int depth = 100000;
  const std::vector<std::string> inputs = {
      "rule r: " + repeat("exp(", depth) + "x" + repeat(")", depth) + " => x;",
      "rule r: exp(x) => " + repeat("exp(", depth) + "x" + repeat(")", depth) + ";",
      "rule r: add(x, " + repeat("x + ", depth) + "x) => x;",
      "rule r: exp(" + repeat("- ", depth) + "x) => x;",
      "rule r: exp(" + repeat("a: ", depth) + "x) => x;",
      "rule r: exp(x) => x" + repeat(".a", depth) + ";",
      "rule r: " + repeat("(", depth) + "exp(x)" + repeat(")", depth) + " => x;",
      repeat("[", depth),
  };
  for (const std::string& text : inputs) {
    dpl::SourceFile source("deep.dpl", text);
    dpl::DiagnosticEngine diags;
    dpl::compiler::CompileResult result = dpl::compiler::compile(source, diags);
    EXPECT_FALSE(result.ok) << text.substr(0, 40);
    EXPECT_TRUE(diags.has_errors()) << text.substr(0, 40);
  }
}

TEST(Robustness, ModeratelyDeepPatternsStillCompile) {
  const int depth = 60;
  std::string text = "rule r: " + repeat("exp(", depth) + "x" + repeat(")", depth) + " => x;";
  dpl::SourceFile source("deep.dpl", text);
  dpl::DiagnosticEngine diags;
  dpl::compiler::CompileResult result = dpl::compiler::compile(source, diags);
  EXPECT_TRUE(result.ok) << diags.str();
}

}  // namespace
