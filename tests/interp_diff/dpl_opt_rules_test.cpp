// `dpl-opt --rules`: interpreted passes from the command line (every rule kind: partitions and composite calls,
// group and multi-root rules, declared ops), pass and pipeline selection, and the errors for unknown passes and for
// rules the interpreter cannot run.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "../common/run_command.h"

namespace {

using Outcome = dpl::testing::CommandOutcome;

Outcome dpl_opt(const std::string& args) { return dpl::testing::run_command(std::string(DPL_OPT_PATH) + " " + args); }

const std::string kSeed000 = std::string(DPL_EXAMPLES_DIR) + "/seed000/";

TEST(DplOptRules, RewritesLikeTheCompiledPass) {
  const std::string out = ::testing::TempDir() + "dpl_opt_rules_quadruple.relax";
  Outcome run = dpl_opt("--rules " + kSeed000 + "quadruple.dpl " + kSeed000 + "quadruple.input.relax -o " + out);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  Outcome equal = dpl_opt("--equal " + out + " " + kSeed000 + "quadruple.expected.relax");
  EXPECT_EQ(equal.exit_code, 0) << equal.output;
}

// `-o OUT` of `IN` with `rules` (and `args`), then `--equal OUT EXPECTED`.
void expect_rewrites_to(const std::string& rules, const std::string& args, const std::string& in,
                        const std::string& expected, const std::string& out_name) {
  const std::string out = ::testing::TempDir() + out_name;
  Outcome run = dpl_opt("--rules " + rules + " " + args + " " + in + " -o " + out);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  Outcome equal = dpl_opt("--equal " + out + " " + expected);
  EXPECT_EQ(equal.exit_code, 0) << equal.output;
}

TEST(DplOptRules, RunsAPipelineOfAPartitionAndACompositeCallRule) {
  const std::string seed001 = std::string(DPL_EXAMPLES_DIR) + "/seed001/add_subtract_multiply";
  expect_rewrites_to(seed001 + ".dpl", "-p seed001_partition", seed001 + ".input.relax",
                     seed001 + ".partitioned.relax", "dpl_opt_rules_partitioned.relax");
  expect_rewrites_to(seed001 + ".dpl", "-p seed001", seed001 + ".input.relax", seed001 + ".expected.relax",
                     "dpl_opt_rules_seed001.relax");
}

TEST(DplOptRules, RunsGroupAndMultiRootRules) {
  const std::string seed002 = std::string(DPL_EXAMPLES_DIR) + "/seed002/";
  for (const std::string stem : {"combine_parallel_matmuls", "combine_qkv", "combine_branches"}) {
    expect_rewrites_to(seed002 + stem + ".dpl", "", seed002 + stem + ".input.relax",
                       seed002 + stem + ".expected.relax", "dpl_opt_rules_" + stem + ".relax");
  }
}

TEST(DplOptRules, RegistersTheOpsAFileDeclares) {
  const std::string dir = ::testing::TempDir();
  std::ofstream(dir + "dpl_opt_rules_ops.dpl")
      << "op my.scale(x, factor: float = 1.0) : elementwise -> same_as(x);\n"
         "rule fold: my.scale(my.scale(x, factor=f), factor=g) => my.scale(x, factor=f * g);\n"
         "rule to_multiply: my.scale(x, factor=2.0) => multiply(x, const(2.0));\n";
  const std::string function_head =
      "# from tvm.script import relax as R\n\n@R.function\ndef main(x: R.Tensor((4, 4), dtype=\"float32\")) -> "
      "R.Tensor((4, 4), dtype=\"float32\"):\n    with R.dataflow():\n";
  std::ofstream(dir + "dpl_opt_rules_ops.input.relax")
      << function_head
      << "        a: R.Tensor((4, 4), dtype=\"float32\") = R.my.scale(x, factor=3.0)\n"
         "        b: R.Tensor((4, 4), dtype=\"float32\") = R.my.scale(a, factor=0.5)\n"
         "        c: R.Tensor((4, 4), dtype=\"float32\") = R.my.scale(b, factor=2.0)\n"
         "        R.output(c)\n    return c\n";
  // The reader knows my.scale only once the rule file is loaded, so the output is compared as text.
  const std::string out = dir + "dpl_opt_rules_ops.relax";
  Outcome run = dpl_opt("--rules " + dir + "dpl_opt_rules_ops.dpl " + dir + "dpl_opt_rules_ops.input.relax -o " + out);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::stringstream printed;
  printed << std::ifstream(out).rdbuf();
  std::string text = printed.str();
  while (!text.empty() && text.back() == '\n') text.pop_back();
  EXPECT_EQ(text, function_head + "        c: R.Tensor((4, 4), dtype=\"float32\") = R.my.scale(x, factor=3.0)\n"
                                  "        R.output(c)\n    return c");
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
