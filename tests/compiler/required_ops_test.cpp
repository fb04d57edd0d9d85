// The ops dplc finds in every match of a rule (required_ops.h), and the per-rule tables the generated code gives
// the driver (RuleInfo::needs).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "dpl/compiler/compile.h"
#include "dpl/compiler/required_ops.h"
#include "dpl/support/diagnostics.h"

namespace dpl::compiler {
namespace {

constexpr const char* kRules =
    "pass p {\n"
    "  rule plain: add(exp(x), y) => y;\n"
    "  rule alternatives: add(exp(x) | exp(tanh(x)), y) => y;\n"
    "  rule optional: multiply(nn.relu?(exp(x)), y) => y;\n"
    "  rule either_op: (add | subtract)(x, log(y)) => x;\n"
    "  rule wrapped: tanh(exp(x) | log(x)) => x;\n"
    "  rule twice: negative(negative(x)) => x;\n"
    "  rule siblings: subtract(exp(x), exp(y)) => x;\n"
    "  rule chain_or_one: sqrt(sqrt(sqrt(x)) | sqrt(x)) => x;\n"
    "  rule branches {\n"
    "    x: _;\n"
    "    group ms: nn.relu(matmul(x, w: const, out_dtype=d)) where w.rank == 2;\n"
    "    => let y = nn.relu(matmul(x, concat(w, axis=1), out_dtype=d));\n"
    "       ms => split(y, indices_or_sections=split_indices(w.shape[1]), axis=-1);\n"
    "  }\n"
    "}\n"
    "pass parts {\n"
    "  partition \"my.composite\": nn.relu(add(x, y));\n"
    "}\n";

std::vector<OpId> sorted(std::vector<OpId> ops) {
  std::sort(ops.begin(), ops.end());
  return ops;
}

class RequiredOps : public ::testing::Test {
 protected:
  void SetUp() override {
    const SourceFile source("req.dpl", kRules);
    result_ = compile(source, diags_);
    ASSERT_TRUE(result_.ok) << diags_.str();
  }
  std::vector<OpId> of(const std::string& rule) const {
    for (const Pass& pass : result_.ast->passes) {
      for (const Rule& candidate : pass.rules) {
        if (candidate.name == rule) return required_ops(candidate);
      }
    }
    ADD_FAILURE() << "no rule " << rule;
    return {};
  }
  std::string code() const { return result_.cpp ? result_.cpp->source : ""; }

  DiagnosticEngine diags_;
  CompileResult result_;
};

TEST_F(RequiredOps, EveryCallOfOneOpThatAMatchCannotSkip) {
  EXPECT_EQ(of("plain"), sorted({op::add, op::exp}));
  EXPECT_EQ(of("alternatives"), sorted({op::add, op::exp})) << "tanh is in one alternative only";
  EXPECT_EQ(of("optional"), sorted({op::multiply, op::exp})) << "nn.relu? may be absent";
  EXPECT_EQ(of("either_op"), sorted({op::log})) << "the root is one of two ops";
  EXPECT_EQ(of("wrapped"), sorted({op::tanh})) << "no operand op is in both alternatives";
  EXPECT_EQ(of("branches"), sorted({op::nn_relu, op::matmul})) << "a group has two members at least";
}

TEST_F(RequiredOps, AnOpOncePerCallEveryMatchHoldsApart) {
  EXPECT_EQ(of("twice"), sorted({op::negative, op::negative})) << "a call and its operand are two nodes";
  EXPECT_EQ(of("siblings"), sorted({op::subtract, op::exp})) << "subtract(e, e) has one exp";
  EXPECT_EQ(of("chain_or_one"), sorted({op::sqrt, op::sqrt})) << "the alternative with fewer calls counts";
  EXPECT_NE(code().find("constexpr dpl::OpId p_twice_needs[] = {dpl::op::negative, dpl::op::negative};"),
            std::string::npos)
      << code();
}

TEST_F(RequiredOps, PartitionRulesNeedTheirPatternsOps) {
  ASSERT_FALSE(result_.ast->passes.empty());
  const Pass& parts = result_.ast->passes.back();
  ASSERT_EQ(parts.rules.size(), 1u);
  EXPECT_EQ(required_ops(parts.rules[0]), sorted({op::nn_relu, op::add}));
}

TEST_F(RequiredOps, TheRuleTableNamesEachRulesOps) {
  const std::string source = code();
  // Sorted by op id, which follows ops.def: add is the first op.
  EXPECT_NE(source.find("constexpr dpl::OpId p_plain_needs[] = {dpl::op::add, dpl::op::exp};"), std::string::npos)
      << source;
  EXPECT_NE(source.find("{\"plain\", \"req.dpl:2\", p_plain_needs},"), std::string::npos) << source;
  EXPECT_NE(source.find("constexpr dpl::OpId p_either_op_needs[] = {dpl::op::log};"), std::string::npos) << source;
}

}  // namespace
}  // namespace dpl::compiler
