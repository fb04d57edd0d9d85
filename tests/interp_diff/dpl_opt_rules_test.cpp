// `dpl-opt --rules`: interpreted passes from the command line, pass and pipeline selection, and the errors for
// unknown passes and for rules the interpreter cannot run.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>

namespace {

struct Outcome {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

Outcome dpl_opt(const std::string& args) {
  Outcome outcome;
  FILE* pipe = popen((std::string(DPL_OPT_PATH) + " " + args + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return outcome;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) outcome.output.append(buffer, n);
  const int status = pclose(pipe);
  if (WIFEXITED(status)) outcome.exit_code = WEXITSTATUS(status);
  return outcome;
}

const std::string kSeed000 = std::string(DPL_EXAMPLES_DIR) + "/seed000/";

TEST(DplOptRules, RewritesLikeTheCompiledPass) {
  const std::string out = ::testing::TempDir() + "dpl_opt_rules_quadruple.relax";
  Outcome run = dpl_opt("--rules " + kSeed000 + "quadruple.dpl " + kSeed000 + "quadruple.input.relax -o " + out);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  Outcome equal = dpl_opt("--equal " + out + " " + kSeed000 + "quadruple.expected.relax");
  EXPECT_EQ(equal.exit_code, 0) << equal.output;
}

TEST(DplOptRules, PicksPassesByName) {
  Outcome run = dpl_opt("--rules " + kSeed000 + "add_self.dpl -p seed000_add_self --stats " + kSeed000 +
                        "add_self.input.relax");
  EXPECT_EQ(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("R.multiply"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("pass seed000_add_self: 2 rewrites"), std::string::npos) << run.output;
}

TEST(DplOptRules, UnknownPassNamesTheKnownOnes) {
  Outcome run = dpl_opt("--rules " + kSeed000 + "add_self.dpl -p no_such_pass " + kSeed000 + "add_self.input.relax");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.output.find("'no_such_pass' is neither a pass nor a pipeline of add_self.dpl; it has: "
                            "seed000_add_self"),
            std::string::npos)
      << run.output;
}

TEST(DplOptRules, ExternPredicatesAreAnErrorAtTheRule) {
  const std::string rules = ::testing::TempDir() + "dpl_opt_rules_extern.dpl";
  std::ofstream(rules) << "extern predicate is_matrix(x: Tensor) from \"natives.h\";\n"
                          "pass p {\n  rule r: add(x, x) where is_matrix(x) => multiply(x, const(2.0));\n}\n";
  Outcome run = dpl_opt("--rules " + rules + " " + kSeed000 + "add_self.input.relax");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.output.find(":3:27: error: rule 'r' cannot be interpreted: extern predicate 'is_matrix' needs "
                            "native code"),
            std::string::npos)
      << run.output;
}

TEST(DplOptRules, RuleErrorsAreReportedWithLocations) {
  const std::string rules = ::testing::TempDir() + "dpl_opt_rules_bad.dpl";
  std::ofstream(rules) << "pass p {\n  rule r: addd(x, x) => x;\n}\n";
  Outcome run = dpl_opt("--rules " + rules + " " + kSeed000 + "add_self.input.relax");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.output.find("dpl_opt_rules_bad.dpl:2:11: error:"), std::string::npos) << run.output;
}

}  // namespace
