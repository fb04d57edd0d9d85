// Natives libraries from the command line: dpl-opt --rules --natives and dplc --natives --test/--verify on the
// test library (natives.cpp), and the errors: a library that cannot be loaded, registers nothing or conflicts,
// externs without a fitting native (mismatched.dpl states them), --natives where it means nothing.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "../common/run_command.h"

namespace {

using Outcome = dpl::testing::CommandOutcome;

Outcome run(const std::string& program, const std::string& args) {
  return dpl::testing::run_command(program + " " + args);
}

Outcome dpl_opt(const std::string& args) { return run(DPL_OPT_PATH, args); }
Outcome dplc(const std::string& args) { return run(DPLC_PATH, args); }

const std::string kDir = std::string(DPL_NATIVES_DIR) + "/";
const std::string kRules = kDir + "natives_rules.dpl";
const std::string kInput = kDir + "natives_rules.input.relax";
const std::string kNatives = DPL_TEST_NATIVES;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(NativesCli, InterpretedRulesWithNativesRewriteAsExpected) {
  const std::string out = ::testing::TempDir() + "natives_rules.out.relax";
  Outcome rewrite = dpl_opt("--rules " + kRules + " --natives " + kNatives + " --stats " + kInput + " -o " + out);
  ASSERT_EQ(rewrite.exit_code, 0) << rewrite.output;
  // The compiled pass (ctest dpl_test_natives_passes.rule_tests) is checked against the same expectation.
  Outcome equal = dpl_opt("--equal " + out + " " + kDir + "natives_rules.expected.relax");
  EXPECT_EQ(equal.exit_code, 0) << equal.output;
  // flip fires once: flip_subtract declines -(x - x).
  EXPECT_TRUE(contains(rewrite.output, "pass natives_flip: 2 rewrites")) << rewrite.output;
}

TEST(NativesCli, DplcRunsTheRuleTestsInterpretedWithNatives) {
  Outcome tests = dplc("--natives " + kNatives + " --test " + kRules);
  EXPECT_EQ(tests.exit_code, 0) << tests.output;
  EXPECT_TRUE(contains(tests.output, "PASS flips")) << tests.output;
}

TEST(NativesCli, DplcVerifiesRulesThatCallNatives) {
  Outcome verify = dplc("--natives " + kNatives + " --verify " + kRules);
  EXPECT_EQ(verify.exit_code, 0) << verify.output;
  EXPECT_TRUE(contains(verify.output, "verified: natives_flip/matrix_relu_twice at shapes")) << verify.output;
  EXPECT_TRUE(contains(verify.output, "verified: natives_flip/flip at shapes")) << verify.output;
}

TEST(NativesCli, WithoutNativesTheRulesAreNotInterpreted) {
  Outcome rewrite = dpl_opt("--rules " + kRules + " " + kInput);
  EXPECT_EQ(rewrite.exit_code, 1);
  EXPECT_TRUE(contains(rewrite.output,
                       "natives_rules.dpl:8:53: error: rule 'matrix_relu_twice' cannot be "
                       "interpreted: extern predicate 'is_matrix' needs native code; load a natives "
                       "library (--natives LIB.so) or compile the rules with dplc"))
      << rewrite.output;
  Outcome tests = dplc("--test " + kRules);
  EXPECT_EQ(tests.exit_code, 1);
  EXPECT_TRUE(contains(tests.output,
                       "FAIL flips: the rule interpreter cannot run pass natives_flip: rule "
                       "'matrix_relu_twice': extern predicate 'is_matrix' needs native code"))
      << tests.output;
  Outcome verify = dplc("--verify " + kRules);
  EXPECT_TRUE(contains(verify.output,
                       "not verified: natives_flip/flip: the rule interpreter cannot run it: extern "
                       "rewriter 'flip_subtract' needs native code"))
      << verify.output;
}

// `// expect-error@:COL: MESSAGE` comments of `path` (the convention of tests/compiler/fail), as the lines
// `path:LINE:COL: error: MESSAGE` with $LIB replaced by `library`.
std::vector<std::string> expected_errors(const std::string& path, const std::string& library) {
  std::vector<std::string> errors;
  std::ifstream in(path);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const size_t at = line.find("// expect-error@:");
    if (at == std::string::npos) continue;
    std::string rest = line.substr(at + 17);  // COL: MESSAGE
    const size_t colon = rest.find(": ");
    std::string message = rest.substr(colon + 2);
    if (const size_t lib = message.find("$LIB"); lib != std::string::npos) message.replace(lib, 4, library);
    errors.push_back(path + ":" + std::to_string(number) + ":" + rest.substr(0, colon) + ": error: " + message);
  }
  return errors;
}

TEST(NativesCli, ExternsWithoutAFittingNativeAreReportedAtTheirDeclarationsInOneRun) {
  const std::string rules = kDir + "mismatched.dpl";
  Outcome rewrite = dpl_opt("--rules " + rules + " --natives " + kNatives + " " + kInput);
  EXPECT_EQ(rewrite.exit_code, 1);
  const std::vector<std::string> expected = expected_errors(rules, kNatives);
  ASSERT_EQ(expected.size(), 3u);
  for (const std::string& error : expected)
    EXPECT_TRUE(contains(rewrite.output, error + "\n")) << error << "\n" << rewrite.output;
  size_t errors = 0;
  for (size_t at = 0; (at = rewrite.output.find(": error: ", at)) != std::string::npos; ++at) ++errors;
  EXPECT_EQ(errors, expected.size()) << rewrite.output;
  // The source line and a caret under the name.
  EXPECT_TRUE(contains(rewrite.output, "extern predicate is_vector(x: Tensor) from \"natives.h\";")) << rewrite.output;
  EXPECT_TRUE(contains(rewrite.output, "\n                 ^~~~~~~~~\n")) << rewrite.output;
}

TEST(NativesCli, ALibraryThatCannotBeLoadedIsAnInputError) {
  Outcome rewrite = dpl_opt("--rules " + kRules + " --natives /no/such/libnatives.so " + kInput);
  EXPECT_EQ(rewrite.exit_code, 1);
  EXPECT_TRUE(contains(rewrite.output, "dpl-opt: error: cannot load natives library: /no/such/libnatives.so"))
      << rewrite.output;
  Outcome tests = dplc("--natives /no/such/libnatives.so --test " + kRules);
  EXPECT_EQ(tests.exit_code, 1);
  EXPECT_TRUE(contains(tests.output, "dplc: error: cannot load natives library: /no/such/libnatives.so"))
      << tests.output;
}

TEST(NativesCli, ALibraryThatRegistersNoNativeIsAnInputError) {
  const std::string library = DPL_TEST_PLUGIN_WITHOUT_PASSES;
  Outcome rewrite = dpl_opt("--rules " + kRules + " --natives " + library + " " + kInput);
  EXPECT_EQ(rewrite.exit_code, 1);
  EXPECT_TRUE(contains(rewrite.output, "dpl-opt: error: natives library " + library + " registers no new native"))
      << rewrite.output;
  // Loading the same library twice registers nothing the second time.
  Outcome twice = dpl_opt("--rules " + kRules + " --natives " + kNatives + " --natives " + kNatives + " " + kInput);
  EXPECT_EQ(twice.exit_code, 1);
  EXPECT_TRUE(contains(twice.output, "registers no new native")) << twice.output;
}

TEST(NativesCli, ALibraryWhoseNativeConflictsWithALoadedOneIsAnInputError) {
  const std::string conflicting = DPL_TEST_CONFLICTING_NATIVES;
  Outcome rewrite =
      dpl_opt("--rules " + kRules + " --natives " + kNatives + " --natives " + conflicting + " " + kInput);
  EXPECT_EQ(rewrite.exit_code, 1);
  EXPECT_TRUE(contains(rewrite.output, "dpl-opt: error: natives library " + conflicting +
                                           ": native 'is_matrix' is "
                                           "already registered as bool is_matrix(const dpl::Node*) (" +
                                           kNatives + "); " + conflicting +
                                           " registers dpl::Node* is_matrix(dpl::Rewriter&, dpl::Node*)"))
      << rewrite.output;
}

TEST(NativesCli, NativesWithoutAnInterpretedRunAreAUsageError) {
  Outcome rewrite = dpl_opt("--natives " + kNatives + " " + kInput);
  EXPECT_EQ(rewrite.exit_code, 2);
  EXPECT_TRUE(contains(rewrite.output, "--natives needs --rules")) << rewrite.output;
  Outcome compile = dplc("--natives " + kNatives + " --check " + kRules);
  EXPECT_EQ(compile.exit_code, 2);
  EXPECT_TRUE(contains(compile.output, "--natives needs --test or --verify")) << compile.output;
}

}  // namespace
