// The merged decision tree: which rules exclude each other by their root's operand heads, and what that lets the
// tree share (the generated code of small rule sets, compiled in-process).
#include <gtest/gtest.h>

#include <string>

#include "dpl/compiler/compile.h"
#include "dpl/compiler/decision_tree.h"
#include "dpl/support/diagnostics.h"

namespace dpl::compiler {
namespace {

OperandHeads heads(bool commutative, std::vector<std::string> operand_heads) {
  return OperandHeads{true, commutative, std::move(operand_heads)};
}

TEST(HeadsExclude, PositionalOperandsExcludeWhereBothNameDifferentHeads) {
  EXPECT_TRUE(heads_exclude(heads(false, {"exp", ""}), heads(false, {"log", "sqrt"})));
  EXPECT_FALSE(heads_exclude(heads(false, {"exp", ""}), heads(false, {"", "exp"})));
  EXPECT_FALSE(heads_exclude(heads(false, {"exp", "log"}), heads(false, {"exp", "log"})));
}

TEST(HeadsExclude, CommutativeOperandsExcludeWhereTheirHeadsDoNotFitInTwoOperands) {
  EXPECT_TRUE(heads_exclude(heads(true, {"exp", "log"}), heads(true, {"sqrt", ""})));
  EXPECT_TRUE(heads_exclude(heads(true, {"exp", "exp"}), heads(true, {"exp", "log"})));
  EXPECT_FALSE(heads_exclude(heads(true, {"exp", "log"}), heads(true, {"log", "exp"})));  // either order
  EXPECT_FALSE(heads_exclude(heads(true, {"exp", ""}), heads(true, {"log", ""})));       // add(exp, log)
  EXPECT_FALSE(heads_exclude(heads(true, {"exp", "log"}), heads(true, {"", ""})));
}

TEST(HeadsExclude, UnknownOrDifferentShapesNeverExclude) {
  EXPECT_FALSE(heads_exclude(OperandHeads{}, heads(false, {"exp"})));
  EXPECT_FALSE(heads_exclude(heads(false, {"exp"}), heads(false, {"log", "sqrt"})));
  EXPECT_FALSE(heads_exclude(heads(true, {"exp", "log"}), heads(false, {"sqrt", "tanh"})));
}

// The generated source of `text`, which must compile without diagnostics.
std::string generated(const std::string& text) {
  const SourceFile source("tree.dpl", text);
  DiagnosticEngine diags;
  CompileResult result = compile(source, diags);
  EXPECT_TRUE(result.ok) << diags.str();
  EXPECT_TRUE(diags.diagnostics().empty()) << diags.str();
  return result.cpp ? result.cpp->source : "";
}

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(DecisionTree, RulesOfOneCommutativeRootSwitchOnTheOperandOpsWhicheverWayTheyAreWritten) {
  const std::string code = generated(R"(pass p {
  rule a: add(x: exp(_), y: log(_)) => subtract(x, y);
  rule b: add(y: sqrt(_), x: exp(_)) => subtract(x, y);
  rule c: add(x: tanh(_), y: sigmoid(_)) => subtract(x, y);
})");
  EXPECT_EQ(count(code, "head_key()"), 2u) << code;  // one order, shared
  EXPECT_EQ(count(code, "switch (root->operand(order1)->op())"), 1u) << code;
  EXPECT_EQ(count(code, "case dpl::op::exp:"), 1u) << code;  // a and b under one case
}

TEST(DecisionTree, ARepeatedNameHasTheHeadOfThePatternThatBindsIt) {
  // `c` is a constant wherever it stands, so `add(add(x, c: const), c)` has one possible operand order at its
  // root, as `add(exp, log)` has: no loop there, and both rules share the order.
  const std::string code = generated(R"(pass p {
  rule a: add(add(x, c: const(1.5)), c) => add(x, const(1.5));
  rule b: add(x: exp(_), y: log(_)) => subtract(x, y);
})");
  EXPECT_EQ(count(code, "head_key()"), 2u) << code;
  EXPECT_EQ(count(code, "for (int order1"), 0u) << code;
}

TEST(DecisionTree, ARuleAloneOnItsRootTestsTheHeadItWants) {
  const std::string code = generated("pass p {\n  rule a: add(x: exp(_), y: log(_)) => subtract(x, y);\n}\n");
  EXPECT_EQ(count(code, "head_key()"), 0u) << code;
  EXPECT_EQ(count(code, "? 0 : 1;"), 1u) << code;
}

TEST(DecisionTree, ARulePassesOverEarlierRulesItExcludesToShareWithTheirPredecessor) {
  // b opens an operand-order loop (its second operand is free), which is never shared; c wants operand ops that b
  // cannot have together with its `add`, so c joins a's block and its switch instead of following b.
  const std::string code = generated(R"(pass p {
  rule a priority 3: add(x: exp(_), y: log(_)) => subtract(x, y);
  rule b priority 2: add(add(p, q), _) => multiply(p, q);
  rule c priority 1: add(x: exp(_), y: sqrt(_)) => subtract(x, y);
})");
  EXPECT_EQ(count(code, "head_key()"), 2u) << code;
  EXPECT_LT(code.find("// rule c ("), code.find("// rule b ("))
      << code;  // c is now printed (and tried) before b, which it excludes
}

TEST(DecisionTree, ARuleKeepsItsPlaceAfterARuleThatCanMatchTheSameNode) {
  // b's free operand may be the `log` that c wants: c stays after b.
  const std::string code = generated(R"(pass p {
  rule a priority 3: add(x: exp(_), y: log(_)) => subtract(x, y);
  rule b priority 2: add(x: exp(_), y) where y.uses == 2 => x;
  rule c priority 1: add(x: exp(_), y: sqrt(_)) => subtract(x, y);
})");
  EXPECT_LT(code.find("// rule b ("), code.find("// rule c (")) << code;
}

}  // namespace
}  // namespace dpl::compiler
