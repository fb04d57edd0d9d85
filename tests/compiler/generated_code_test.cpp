// The code dplc generates, compiled (warning-free, as part of this test) and run: each pass of run/*.dpl rewrites
// a graph written in TVMScript into exactly the expected graph, and leaves graphs it must not touch alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core.dpl.h"
#include "custom_ops.dpl.h"
#include "dpl/ir/analysis.h"
#include "fuzzy.dpl.h"
#include "literal_cases.dpl.h"
#include "dpl/rewrite/driver.h"
#include "dpl/text/tvmscript.h"
#include "macros.dpl.h"
#include "many_rules.dpl.h"
#include "multi_root.dpl.h"
#include "natives.dpl.h"
#include "patterns.dpl.h"
#include "rule_order.dpl.h"
#include "shared_checks.dpl.h"

namespace {

struct Parsed {
  std::unique_ptr<dpl::SourceFile> source;
  std::unique_ptr<dpl::Module> module;
};

Parsed parse_module(const std::string& name, const std::string& text) {
  Parsed parsed;
  parsed.source = std::make_unique<dpl::SourceFile>(name, text);
  dpl::DiagnosticEngine diags;
  parsed.module = dpl::read_module(*parsed.source, diags);
  EXPECT_NE(parsed.module, nullptr) << diags.str();
  return parsed;
}

// Runs `pass` on `before`; expects `rewrites` rewrites and a graph structurally equal to `after`.
void expect_rewrite(const dpl::PassDef& pass, const std::string& before, const std::string& after, uint64_t rewrites) {
  Parsed input = parse_module("before.relax", before);
  Parsed expected = parse_module("after.relax", after);
  ASSERT_TRUE(input.module && expected.module);
  dpl::RunOptions options;
  options.verify_each = true;
  dpl::PassResult result = dpl::run_pass(pass, *input.module, options);
  ASSERT_TRUE(result.ok()) << result.error;
  EXPECT_EQ(result.stats.rewrites, rewrites);
  dpl::EqualityResult equal = dpl::structurally_equal(*input.module, *expected.module);
  EXPECT_TRUE(equal.equal) << equal.difference << "\n" << dpl::print_module(*input.module);
}

void expect_unchanged(const dpl::PassDef& pass, const std::string& graph) { expect_rewrite(pass, graph, graph, 0); }

// `R.function` text around a dataflow block's bindings (after `symbols`, declarations such as `b = T.int64()`);
// with no bindings, the function returns a parameter.
std::string function(const std::string& params, const std::string& body, const std::string& output,
                     const std::string& symbols = "") {
  std::string head = "@R.function\ndef main(" + params + "):\n" + symbols;
  if (body.empty()) return head + "    return " + output + "\n";
  return head + "    with R.dataflow():\n" + body + "        R.output(" + output + ")\n    return " + output + "\n";
}

const std::string kX = "x: R.Tensor((4, 4), dtype=\"float32\")";
const std::string kXY = kX + ", y: R.Tensor((4, 4), dtype=\"float32\")";

TEST(GeneratedCode, PassesRegisterUnderTheirNames) {
  EXPECT_EQ(dpl::PassRegistry::find("run_add_self"), &dpl_test_passes::run_add_self_pass());
  EXPECT_EQ(dpl::PassRegistry::find("run_one_to_two"), &dpl_test_passes::run_one_to_two_pass());
  const dpl::PassDef& pass = dpl_test_passes::run_decline_pass();
  ASSERT_EQ(pass.rules.size(), 2u);
  EXPECT_EQ(pass.rules[0].name, "wrong_rank");
  EXPECT_EQ(pass.rules[1].location, "core.dpl:17");
  EXPECT_EQ(pass.source, "core.dpl");
}

// The driver queues again, after a rewrite, only calls of the ops a pass's rules are rooted at; a pass with a rule
// rooted elsewhere (a tuple item, any value) or without rules declares none.
TEST(GeneratedCode, PassesDeclareTheOpsTheirRulesAreRootedAt) {
  const dpl::OpRegistry& ops = dpl::OpRegistry::global();
  auto root_ops = [&](const dpl::PassDef& pass) {
    std::vector<std::string> names;
    for (dpl::OpId op : pass.root_ops) names.emplace_back(ops.get(op).name);
    return names;
  };
  EXPECT_EQ(root_ops(dpl_test_passes::run_add_self_pass()), std::vector<std::string>{"add"});
  EXPECT_EQ(root_ops(dpl_test_passes::run_decline_pass()), std::vector<std::string>{"exp"});
  // Ops declared in the .dpl file too (their ids are known at start-up only).
  std::vector<std::string> custom = root_ops(dpl_test_passes::custom_ops_pass());
  std::sort(custom.begin(), custom.end());
  EXPECT_EQ(custom, (std::vector<std::string>{"my.scale", "my.sum_all", "nn.gelu", "nn.relu"}));
  EXPECT_TRUE(dpl_test_passes::run_item_roots_pass().root_ops.empty());
  EXPECT_TRUE(dpl_test_passes::run_group_of_three_pass().root_ops.empty());
  EXPECT_TRUE(dpl_test_passes::run_empty_pass().root_ops.empty());
}

TEST(GeneratedCode, APassWithoutRulesChangesNothing) {
  const dpl::PassDef& pass = dpl_test_passes::run_empty_pass();
  EXPECT_EQ(pass.rules.size(), 0u);
  EXPECT_EQ(pass.description, "no rules yet");
  expect_unchanged(pass, function(kX, "        a = R.exp(x)\n", "a"));
}

TEST(GeneratedCode, AddSelfTakesTheConstantDtypeFromTheOperand) {
  std::string x16 = "x: R.Tensor((4,), dtype=\"float16\")";
  expect_rewrite(dpl_test_passes::run_add_self_pass(), function(x16, "        lv = R.add(x, x)\n", "lv"),
                 function(x16, "        lv = R.multiply(x, R.const(2.0, \"float16\"))\n", "lv"), 1);
  expect_unchanged(dpl_test_passes::run_add_self_pass(), function(kXY, "        lv = R.add(x, y)\n", "lv"));
}

TEST(GeneratedCode, QuadrupleMatchesTheSameValueTwice) {
  expect_rewrite(dpl_test_passes::run_quadruple_pass(),
                 function(kX, "        x2 = R.add(x, x)\n        x4 = R.add(x2, x2)\n", "x4"),
                 function(kX, "        x4 = R.multiply(x, R.const(4.0, \"float32\"))\n", "x4"), 1);
  // Two different `add(x, x)` nodes are not the same value.
  expect_unchanged(dpl_test_passes::run_quadruple_pass(),
                   function(kX, "        a = R.add(x, x)\n        b = R.add(x, x)\n        c = R.add(a, b)\n", "c"));
}

TEST(GeneratedCode, DistributeRunsToConvergenceInBothOperandOrders) {
  std::string params =
      "x: R.Tensor((8,), dtype=\"float32\"), y: R.Tensor((8,), dtype=\"float32\"), "
      "z: R.Tensor((8,), dtype=\"float32\")";
  // The constant comes first, so the commutative multiply has to be matched in the other order.
  expect_rewrite(dpl_test_passes::run_distribute_pass(),
                 function(params,
                          "        a = R.add(x, y)\n        b = R.add(a, z)\n"
                          "        out = R.multiply(R.const(5.0, \"float32\"), b)\n",
                          "out"),
                 function(params,
                          "        lv3 = R.multiply(x, R.const(5.0, \"float32\"))\n"
                          "        lv4 = R.multiply(y, R.const(5.0, \"float32\"))\n"
                          "        lv1 = R.add(lv3, lv4)\n"
                          "        lv2 = R.multiply(z, R.const(5.0, \"float32\"))\n"
                          "        out = R.add(lv1, lv2)\n",
                          "out"),
                 2);
}

TEST(GeneratedCode, NestedOpsMatchThroughBindings) {
  expect_rewrite(dpl_test_passes::run_relu_pass(),
                 function(kX, "        a = R.nn.relu(x)\n        b = R.nn.relu(a)\n        c = R.nn.relu(b)\n", "c"),
                 function(kX, "        a = R.nn.relu(x)\n", "a"), 2);
}

TEST(GeneratedCode, ADeclinedRewriteFallsThroughToTheNextRule) {
  dpl::PassDef pass = dpl_test_passes::run_decline_pass();
  Parsed input = parse_module("in.relax", function(kX, "        a = R.exp(x)\n", "a"));
  ASSERT_TRUE(input.module);
  dpl::PassResult result = dpl::run_pass(pass, *input.module);
  ASSERT_TRUE(result.ok()) << result.error;
  ASSERT_EQ(result.stats.fired.size(), 2u);
  EXPECT_EQ(result.stats.fired[0], 0u);
  EXPECT_EQ(result.stats.fired[1], 1u);
  Parsed expected = parse_module("out.relax", function(kX, "        a = R.sqrt(x)\n", "a"));
  EXPECT_TRUE(dpl::structurally_equal(*input.module, *expected.module).equal) << dpl::print_module(*input.module);
}

TEST(GeneratedCode, LiteralAttributesConstrainTheMatch) {
  const dpl::PassDef& pass = dpl_test_passes::run_attributes_pass();
  expect_rewrite(pass, function(kX, "        a = R.nn.softmax(x, axis=-1)\n", "a"),
                 function(kX, "        a = R.nn.relu(x)\n", "a"), 1);
  // The default axis is -1, so an unwritten axis matches too.
  expect_rewrite(pass, function(kX, "        a = R.nn.softmax(x)\n", "a"),
                 function(kX, "        a = R.nn.relu(x)\n", "a"), 1);
  expect_unchanged(pass, function(kX, "        a = R.nn.softmax(x, axis=0)\n", "a"));
  expect_rewrite(pass, function(kX, "        a = R.nn.leaky_relu(x, alpha=0.5)\n", "a"),
                 function(kX, "        a = R.nn.leaky_relu(x, alpha=0.25)\n", "a"), 1);
  expect_unchanged(pass, function(kX, "        a = R.nn.leaky_relu(x, alpha=0.25)\n", "a"));
}

TEST(GeneratedCode, CapturedAttributesCarryOver) {
  std::string x = "x: R.Tensor((2, 3), dtype=\"float32\")";
  expect_rewrite(dpl_test_passes::run_attributes_pass(),
                 function(x, "        a = R.exp(x)\n        b = R.permute_dims(a, axes=[1, 0])\n", "b"),
                 function(x, "        a = R.permute_dims(x, axes=[1, 0])\n        b = R.exp(a)\n", "b"), 1);
}

TEST(GeneratedCode, ConstantValuesAndDtypes) {
  const dpl::PassDef& pass = dpl_test_passes::run_constants_pass();
  // const(1.0) matches a float constant of any float dtype, but not an integer one.
  expect_rewrite(pass, function(kX, "        a = R.multiply(x, R.const(1.0, \"float32\"))\n", "a"),
                 function(kX, "", "x"), 1);
  std::string i = "x: R.Tensor((4,), dtype=\"int32\")";
  expect_unchanged(pass, function(i, "        a = R.multiply(x, R.const(1, \"int32\"))\n", "a"));
  // const(0) (an integer literal) matches integer and float zeros.
  expect_rewrite(pass, function(i, "        a = R.add(x, R.const(0, \"int32\"))\n", "a"), function(i, "", "x"), 1);
  expect_rewrite(pass, function(kX, "        a = R.add(R.const(0.0, \"float32\"), x)\n", "a"), function(kX, "", "x"),
                 1);
  expect_unchanged(pass, function(kX, "        a = R.multiply(x, R.const(2.0, \"float32\"))\n", "a"));
  // const(2.0, float16) wants that dtype.
  std::string h = "x: R.Tensor((4,), dtype=\"float16\")";
  expect_rewrite(pass, function(h, "        a = R.divide(x, R.const(2.0, \"float16\"))\n", "a"),
                 function(h, "        a = R.multiply(x, R.const(0.5, \"float16\"))\n", "a"), 1);
  expect_unchanged(pass, function(kX, "        a = R.divide(x, R.const(2.0, \"float32\"))\n", "a"));
}

TEST(GeneratedCode, OpAlternativesBindAnOpVariable) {
  // Seed 000's commutative example: add(const 1, y) becomes add(y, const 2); multiply likewise.
  std::string x = "x: R.Tensor((1024,), dtype=\"float32\")";
  expect_rewrite(dpl_test_passes::run_one_to_two_pass(),
                 function(x, "        y = R.add(x, x)\n        out = R.add(R.const(1.0, \"float32\"), y)\n", "out"),
                 function(x, "        y = R.add(x, x)\n        out = R.add(y, R.const(2.0, \"float32\"))\n", "out"), 1);
  expect_rewrite(dpl_test_passes::run_one_to_two_pass(),
                 function(x, "        out = R.multiply(x, R.const(1.0, \"float32\"))\n", "out"),
                 function(x, "        out = R.multiply(x, R.const(2.0, \"float32\"))\n", "out"), 1);
  expect_unchanged(dpl_test_passes::run_one_to_two_pass(),
                   function(x, "        out = R.subtract(x, R.const(1.0, \"float32\"))\n", "out"));
}

TEST(GeneratedCode, PatternAlternativesAndOptionalOps) {
  const dpl::PassDef& pass = dpl_test_passes::run_alternatives_pass();
  expect_rewrite(pass, function(kX, "        a = R.log(x)\n        b = R.nn.relu(a)\n", "b"), function(kX, "", "x"), 1);
  expect_rewrite(pass, function(kX, "        a = R.exp(x)\n        b = R.nn.relu(a)\n", "b"), function(kX, "", "x"), 1);
  expect_unchanged(pass, function(kX, "        a = R.sqrt(x)\n        b = R.nn.relu(a)\n", "b"));
  // sqrt(gelu(tanh(x))) and sqrt(tanh(x)) both become tanh(x).
  expect_rewrite(pass, function(kX, "        a = R.tanh(x)\n        b = R.nn.gelu(a)\n        c = R.sqrt(b)\n", "c"),
                 function(kX, "        a = R.tanh(x)\n", "a"), 1);
  expect_rewrite(pass, function(kX, "        a = R.tanh(x)\n        c = R.sqrt(a)\n", "c"),
                 function(kX, "        a = R.tanh(x)\n", "a"), 1);
}

TEST(GeneratedCode, CommutativeOperandsAreTriedInBothOrders) {
  const dpl::PassDef& pass = dpl_test_passes::run_commutative_pass();
  expect_rewrite(pass, function(kXY, "        a = R.add(x, y)\n        b = R.subtract(a, y)\n", "b"),
                 function(kXY, "", "x"), 1);
  expect_rewrite(pass, function(kXY, "        a = R.add(y, x)\n        b = R.subtract(a, y)\n", "b"),
                 function(kXY, "", "x"), 1);
  expect_unchanged(pass, function(kXY, "        a = R.add(x, x)\n        b = R.subtract(a, y)\n", "b"));
}

TEST(GeneratedCode, GuardsReadConstantValues) {
  // Seed 000's version of one_to_two, with the constant's value checked in a guard.
  const dpl::PassDef& pass = dpl_test_passes::run_guards_pass();
  std::string x = "x: R.Tensor((1024,), dtype=\"float32\")";
  expect_rewrite(pass,
                 function(x, "        y = R.add(x, x)\n        out = R.add(R.const(1.0, \"float32\"), y)\n", "out"),
                 function(x, "        y = R.add(x, x)\n        out = R.add(y, R.const(2.0, \"float32\"))\n", "out"), 1);
  expect_unchanged(pass, function(x, "        out = R.add(x, R.const(3.0, \"float32\"))\n", "out"));
}

TEST(GeneratedCode, GuardsReadRanksShapesAndUses) {
  const dpl::PassDef& pass = dpl_test_passes::run_guards_pass();
  expect_rewrite(pass, function(kX, "        a = R.exp(x)\n", "a"), function(kX, "        a = R.sqrt(x)\n", "a"), 1);
  std::string wide = "x: R.Tensor((4, 5), dtype=\"float32\")";
  expect_unchanged(pass, function(wide, "        a = R.exp(x)\n", "a"));
  std::string flat = "x: R.Tensor((4,), dtype=\"float32\")";
  expect_unchanged(pass, function(flat, "        a = R.exp(x)\n", "a"));
  // A symbolic last dimension is not known to be 4: the guard is false.
  std::string symbolic = "x: R.Tensor((4, \"n\"), dtype=\"float32\")";
  expect_unchanged(pass, function(symbolic, "        a = R.exp(x)\n", "a"));
  // relu(tanh(x)) => tanh(x) only when the tanh has no other user.
  expect_rewrite(pass, function(kX, "        a = R.tanh(x)\n        b = R.nn.relu(a)\n", "b"),
                 function(kX, "        a = R.tanh(x)\n", "a"), 1);
  expect_unchanged(pass,
                   function(kX, "        a = R.tanh(x)\n        b = R.nn.relu(a)\n        c = R.add(a, b)\n", "c"));
}

TEST(GeneratedCode, GuardsCompareCapturedAttributes) {
  const dpl::PassDef& pass = dpl_test_passes::run_guards_pass();
  // axis=1 on a rank-2 tensor is the last axis: normalised to -1 (which the rule then leaves alone).
  expect_rewrite(pass, function(kX, "        a = R.nn.softmax(x, axis=1)\n", "a"),
                 function(kX, "        a = R.nn.softmax(x, axis=-1)\n", "a"), 1);
  expect_unchanged(pass, function(kX, "        a = R.nn.softmax(x, axis=0)\n", "a"));
  expect_rewrite(pass, function(kX, "        a = R.astype(x, dtype=\"float32\")\n", "a"), function(kX, "", "x"), 1);
  expect_unchanged(pass, function(kX, "        a = R.astype(x, dtype=\"float16\")\n", "a"));
}

TEST(GeneratedCode, TypePatternsCheckDtypeRankAndDimensions) {
  const dpl::PassDef& pass = dpl_test_passes::run_types_pass();
  const std::string body = "        c = R.matmul(a, b)\n        r = R.nn.relu(c)\n";
  const std::string result = "        c = R.matmul(a, b)\n";
  std::string square = "a: R.Tensor((3, 5), dtype=\"float32\"), b: R.Tensor((5, 3), dtype=\"float32\")";
  expect_rewrite(pass, function(square, body, "r"), function(square, result, "c"), 1);
  // m != n.
  std::string wide = "a: R.Tensor((3, 5), dtype=\"float32\"), b: R.Tensor((5, 4), dtype=\"float32\")";
  expect_unchanged(pass, function(wide, body, "r"));
  // Equal symbolic dimensions are equal.
  std::string symbolic = "a: R.Tensor((\"n\", 5), dtype=\"float32\"), b: R.Tensor((5, \"n\"), dtype=\"float32\")";
  expect_rewrite(pass, function(symbolic, body, "r"), function(symbolic, result, "c"), 1);
  // The first operand's dtype must be float32.
  std::string half = "a: R.Tensor((3, 5), dtype=\"float16\"), b: R.Tensor((5, 3), dtype=\"float16\")";
  expect_unchanged(pass, function(half, body, "r"));
  expect_rewrite(pass, function("x: R.Tensor((2, 3, 4), dtype=\"float16\")", "        a = R.exp(x)\n", "a"),
                 function("x: R.Tensor((2, 3, 4), dtype=\"float16\")", "        a = R.sqrt(x)\n", "a"), 1);
  expect_unchanged(pass, function(kX, "        a = R.exp(x)\n", "a"));
}

// `x` reshaped to `shape`, then `op` of it (symbol b declared).
auto reshape_then(const std::string& op) {
  return [op](const std::string& x, const std::string& shape) {
    return function(x, "        r = R.reshape(x, R.shape(" + shape + "))\n        e = R." + op + "(r)\n", "e",
                    "    b = T.int64()\n");
  };
}

TEST(GeneratedCode, GuardsCompareDimensionsForEveryValueOfTheirSymbols) {
  const dpl::PassDef& pass = dpl_test_passes::run_dim_guards_pass();
  const auto merge = reshape_then("exp");
  const auto merged = reshape_then("sqrt");
  const std::string fixed = "x: R.Tensor((2, 4, 8), dtype=\"float32\")";
  expect_rewrite(pass, merge(fixed, "[8, 8]"), merged(fixed, "[8, 8]"), 1);
  expect_unchanged(pass, merge(fixed, "[4, 16]"));
  // A dynamic batch: the reshape merges (b, 4) into b * 4 whatever b is.
  const std::string dynamic = "x: R.Tensor((\"b\", 4, 8), dtype=\"float32\")";
  expect_rewrite(pass, merge(dynamic, "[b * 4, 8]"), merged(dynamic, "[b * 4, 8]"), 1);
  expect_unchanged(pass, merge(dynamic, "[b * 2, 16]"));  // b * 2 is not b * 4 for any b but 0

  // `m != n + 1`: holds for (n, n) (they differ by 1) and (3, 5); fails for (n, n + 1) and (3, 4); for two
  // unrelated symbols it depends on their values, so the guard is false.
  auto tanh_of = [](const std::string& x) { return function(x, "        t = R.tanh(x)\n", "t"); };
  auto sigmoid_of = [](const std::string& x) { return function(x, "        t = R.sigmoid(x)\n", "t"); };
  for (const std::string holds : {"(\"n\", \"n\")", "(3, 5)"}) {
    const std::string x = "x: R.Tensor(" + holds + ", dtype=\"float32\")";
    expect_rewrite(pass, tanh_of(x), sigmoid_of(x), 1);
  }
  for (const std::string fails : {"(\"n\", \"n + 1\")", "(3, 4)", "(\"n\", \"m\")"}) {
    expect_unchanged(pass, tanh_of("x: R.Tensor(" + fails + ", dtype=\"float32\")"));
  }

  // `n * 2 == m + n`: equal polynomials for (n, n); for (n, 3) it depends on n.
  auto relu_of = [](const std::string& x) { return function(x, "        y = R.nn.relu(x)\n", "y"); };
  const std::string square = "x: R.Tensor((\"n\", \"n\"), dtype=\"float32\")";
  expect_rewrite(pass, relu_of(square), function(square, "", "x"), 1);
  expect_unchanged(pass, relu_of("x: R.Tensor((\"n\", 3), dtype=\"float32\")"));
  expect_unchanged(pass, relu_of("x: R.Tensor((2, 3), dtype=\"float32\")"));
}

TEST(GeneratedCode, TypePatternsCompareDimensionArithmetic) {
  const dpl::PassDef& pass = dpl_test_passes::run_dim_types_pass();
  auto concat_of = [](const std::string& a, const std::string& b, const std::string& order) {
    return function("a: R.Tensor(" + a + ", dtype=\"float32\"), b: R.Tensor(" + b + ", dtype=\"float32\")",
                    "        c = R.concat(" + order + ", axis=0)\n", "c", "    n = T.int64()\n");
  };
  // `doubled`: b has twice a's rows, static or symbolic; anything else is left alone.
  for (const auto& [a, b] : {std::pair{"(3, 4)", "(6, 4)"}, {"(\"n\", 4)", "(\"n * 2\", 4)"},
                             {"(\"n\", 4)", "(\"n + n\", 4)"}}) {
    expect_rewrite(pass, concat_of(a, b, "(a, b)"), concat_of(a, b, "(b, a)"), 1);
  }
  for (const auto& [a, b] : {std::pair{"(3, 4)", "(5, 4)"}, {"(\"n\", 4)", "(\"n * 3\", 4)"},
                             {"(\"n\", 4)", "(\"m\", 4)"}}) {
    expect_unchanged(pass, concat_of(a, b, "(a, b)"));
  }
  // `next`: n is bound by the second field, right of the arithmetic that reads it.
  auto three = [](const std::string& x, const std::string& order) {
    return function("x: R.Tensor(" + x + ", dtype=\"float32\"), y: R.Tensor((\"n\", 2), dtype=\"float32\")",
                    "        c = R.concat(" + order + ", axis=0)\n", "c", "    n = T.int64()\n");
  };
  expect_rewrite(pass, three("(\"n + 1\", 2)", "(x, y, y)"), three("(\"n + 1\", 2)", "(y, x, y)"), 1);
  expect_unchanged(pass, three("(\"n + 2\", 2)", "(x, y, y)"));
  // `wide`: the arithmetic inside one alternative reads the dimension that alternative binds.
  auto relu_of = [](const std::string& op, const std::string& x) {
    return function("x: R.Tensor(" + x + ", dtype=\"float32\")", "        e = R." + op + "(x)\n        r = R.nn.relu(e)\n",
                    "r");
  };
  auto inner = [](const std::string& op, const std::string& x) {
    return function("x: R.Tensor(" + x + ", dtype=\"float32\")", "        e = R." + op + "(x)\n", "e");
  };
  expect_rewrite(pass, relu_of("exp", "(5, 10)"), inner("exp", "(5, 10)"), 1);
  expect_unchanged(pass, relu_of("exp", "(5, 9)"));
  expect_rewrite(pass, relu_of("log", "(5, 3)"), inner("log", "(5, 3)"), 1);
  expect_unchanged(pass, relu_of("log", "(5, 10)"));

  // `merged`: the reshape's result type (b * n, k) merges exactly x's first two axes.
  const auto merge = reshape_then("exp");
  const auto merged = reshape_then("sqrt");
  for (const auto& [x, rows] : {std::pair{"x: R.Tensor((2, 4, 8), dtype=\"float32\")", "[8, 8]"},
                                {"x: R.Tensor((\"b\", 4, 8), dtype=\"float32\")", "[b * 4, 8]"}}) {
    expect_rewrite(pass, merge(x, rows), merged(x, rows), 1);
  }
  expect_unchanged(pass, merge("x: R.Tensor((2, 4, 8), dtype=\"float32\")", "[4, 16]"));
  expect_unchanged(pass, merge("x: R.Tensor((\"b\", 4, 8), dtype=\"float32\")", "[b * 2, 16]"));
  expect_unchanged(pass, merge("x: R.Tensor((2, 4, 8), dtype=\"float32\")", "[2, 32]"));
}

TEST(GeneratedCode, TupleItemsAndTuples) {
  const dpl::PassDef& pass = dpl_test_passes::run_tuples_pass();
  std::string bn =
      "x: R.Tensor((1, 2, 4, 4), dtype=\"float32\"), g: R.Tensor((2,), dtype=\"float32\"), "
      "b: R.Tensor((2,), dtype=\"float32\"), m: R.Tensor((2,), dtype=\"float32\"), "
      "v: R.Tensor((2,), dtype=\"float32\")";
  expect_rewrite(
      pass,
      function(bn, "        t = R.nn.batch_norm(x, g, b, m, v)\n        i = t[0]\n        r = R.nn.relu(i)\n", "r"),
      function(bn, "        r = R.nn.relu(x)\n", "r"), 1);
  expect_unchanged(pass, function(bn,
                                  "        t = R.nn.batch_norm(x, g, b, m, v)\n        i = t[1]\n"
                                  "        r = R.nn.relu(i)\n",
                                  "r"));
  std::string pair = "a: R.Tensor((2, 4), dtype=\"float32\"), b: R.Tensor((3, 4), dtype=\"float32\")";
  expect_rewrite(pass, function(pair, "        c = R.concat((a, b), axis=0)\n", "c"),
                 function(pair, "        c = R.concat((b, a), axis=0)\n", "c"), 1);
}

// Seed 000's attention block (smaller shapes), written with `scale` as the constant.
std::string attention_graph(const std::string& scale, bool swap_kv_in_second_matmul) {
  std::string qkv =
      "Q: R.Tensor((2, 16, 8, 4), dtype=\"float32\"), K: R.Tensor((2, 16, 8, 4), dtype=\"float32\"), "
      "V: R.Tensor((2, 16, 8, 4), dtype=\"float32\")";
  std::string second = swap_kv_in_second_matmul ? "lv62" : "lv65";
  return function(qkv,
                  "        lv58 = R.permute_dims(Q, axes=[0, 2, 1, 3])\n"
                  "        lv59 = R.reshape(lv58, R.shape([16, 16, 4]))\n"
                  "        lv61 = R.permute_dims(K, axes=[0, 2, 1, 3])\n"
                  "        lv62 = R.reshape(lv61, R.shape([16, 16, 4]))\n"
                  "        lv64 = R.permute_dims(V, axes=[0, 2, 1, 3])\n"
                  "        lv65 = R.reshape(lv64, R.shape([16, 16, 4]))\n"
                  "        lv62_transposed = R.permute_dims(lv62, axes=[0, 2, 1])\n"
                  "        lv3_1 = R.matmul(lv59, lv62_transposed)\n"
                  "        lv68 = R.multiply(lv3_1, R.const(" +
                      scale +
                      ", \"float32\"))\n"
                      "        lv69 = R.nn.softmax(lv68, axis=-1)\n"
                      "        lv_3 = R.matmul(lv69, " +
                      second +
                      ")\n"
                      "        lv71 = R.reshape(lv_3, R.shape([2, 8, 16, 4]))\n"
                      "        lv72 = R.permute_dims(lv71, axes=[0, 2, 1, 3])\n",
                  "lv72");
}

TEST(GeneratedCode, AttentionFusionPassesQueryKeyValueInOrder) {
  const dpl::PassDef& pass = dpl_test_passes::run_attention_pass();
  std::string qkv =
      "Q: R.Tensor((2, 16, 8, 4), dtype=\"float32\"), K: R.Tensor((2, 16, 8, 4), dtype=\"float32\"), "
      "V: R.Tensor((2, 16, 8, 4), dtype=\"float32\")";
  expect_rewrite(pass, attention_graph("0.5", false),
                 function(qkv, "        lv72 = R.nn.attention(Q, K, V, scale=0.5)\n", "lv72"), 1);
  // Not 1/sqrt(head dim): not an attention.
  expect_unchanged(pass, attention_graph("0.25", false));
  // When the second matmul reads the keys, the graph computes attention(Q, K, K), and that is what it becomes.
  expect_rewrite(pass, attention_graph("0.5", true),
                 function(qkv, "        lv72 = R.nn.attention(Q, K, K, scale=0.5)\n", "lv72"), 1);
}

TEST(GeneratedCode, DeclaredPatternsAndOpClasses) {
  expect_rewrite(dpl_test_passes::run_square_pass(),
                 function(kX, "        a = R.multiply(x, x)\n        b = R.sqrt(a)\n", "b"),
                 function(kX, "        b = R.abs(x)\n", "b"), 1);
  // square(a) is one value multiplied by itself.
  expect_unchanged(dpl_test_passes::run_square_pass(),
                   function(kXY, "        a = R.multiply(x, y)\n        b = R.sqrt(a)\n", "b"));
  const dpl::PassDef& classes = dpl_test_passes::run_classes_pass();
  expect_rewrite(classes, function(kXY, "        a = R.tanh(x)\n        b = R.nn.relu(a)\n", "b"),
                 function(kXY, "        b = R.nn.relu(x)\n", "b"), 1);
  // Only on the parameter named x.
  expect_unchanged(classes, function(kXY, "        a = R.tanh(y)\n        b = R.nn.relu(a)\n", "b"));
  // Only elementwise ops: softmax is not one.
  expect_unchanged(classes, function(kXY, "        a = R.nn.softmax(x)\n        b = R.nn.relu(a)\n", "b"));
}

TEST(GeneratedCode, LetsBuildAValueOnceAndNameIt) {
  expect_rewrite(dpl_test_passes::run_lets_pass(), function(kX, "        a = R.add(x, x)\n        b = R.exp(a)\n", "b"),
                 function(kX, "        e = R.exp(x)\n        b = R.multiply(e, e)\n", "b"), 1);
  expect_rewrite(dpl_test_passes::run_lets_pass(),
                 function(kXY, "        a = R.subtract(x, y)\n        b = R.tanh(a)\n", "b"),
                 function(kXY, "        s = R.subtract(y, x)\n        n = R.negative(s)\n        b = R.tanh(n)\n", "b"),
                 1);
}

TEST(GeneratedCode, ExternPredicatesGuardTheMatch) {
  std::string vector = "x: R.Tensor((4,), dtype=\"float32\")";
  std::string matrix16 = "x: R.Tensor((4, 4), dtype=\"float16\")";
  expect_rewrite(dpl_test_passes::run_natives_pass(), function(kX, "        a = R.tanh(x)\n", "a"),
                 function(kX, "        a = R.sigmoid(x)\n", "a"), 1);
  expect_unchanged(dpl_test_passes::run_natives_pass(), function(vector, "        a = R.tanh(x)\n", "a"));
  expect_unchanged(dpl_test_passes::run_natives_pass(), function(matrix16, "        a = R.tanh(x)\n", "a"));
}

TEST(GeneratedCode, ExternRewritersBuildTheReplacementOrDecline) {
  expect_rewrite(dpl_test_passes::run_natives_pass(),
                 function(kXY, "        a = R.subtract(x, y)\n        b = R.negative(a)\n", "b"),
                 function(kXY, "        b = R.subtract(y, x)\n", "b"), 1);
  // flip_subtract returns nullptr for x - x: no match, the graph stays as it is.
  expect_unchanged(dpl_test_passes::run_natives_pass(),
                   function(kX, "        a = R.subtract(x, x)\n        b = R.negative(a)\n", "b"));
}

TEST(GeneratedCode, TwoHundredRulesInOnePass) {
  const dpl::PassDef& pass = dpl_test_passes::many_rules_pass();
  ASSERT_EQ(pass.rules.size(), 200u);
  // tanh(sqrt(x)) is the pair of r23 (n > 2) and r123 (n > 4); r23 comes first and makes sigmoid(x).
  std::string x = "x: R.Tensor((3, 4), dtype=\"float32\")";
  Parsed input = parse_module("in.relax", function(x, "        a = R.sqrt(x)\n        b = R.tanh(a)\n", "b"));
  ASSERT_TRUE(input.module);
  dpl::PassResult result = dpl::run_pass(pass, *input.module);
  ASSERT_TRUE(result.ok()) << result.error;
  ASSERT_EQ(result.stats.fired.size(), 200u);
  EXPECT_EQ(result.stats.fired[23], 1u);
  EXPECT_EQ(result.stats.rewrites, 1u);
  Parsed expected = parse_module("out.relax", function(x, "        b = R.sigmoid(x)\n", "b"));
  EXPECT_TRUE(dpl::structurally_equal(*input.module, *expected.module).equal) << dpl::print_module(*input.module);
  // With a first dimension of 2 no guard holds.
  expect_unchanged(pass, function("x: R.Tensor((2, 4), dtype=\"float32\")",
                                  "        a = R.sqrt(x)\n        b = R.tanh(a)\n", "b"));
}

// --- rule order, once, termination (run/rule_order.dpl; docs/semantics.md)

TEST(GeneratedCode, TheMoreSpecificRuleGoesFirst) {
  expect_rewrite(dpl_test_passes::run_specific_first_pass(), function(kX, "        a = R.abs(x)\n        b = R.exp(a)\n", "b"),
                 function(kX, "        b = R.tanh(x)\n", "b"), 1);
  expect_rewrite(dpl_test_passes::run_specific_first_pass(), function(kX, "        b = R.exp(x)\n", "b"),
                 function(kX, "        b = R.sqrt(x)\n", "b"), 1);
}

TEST(GeneratedCode, AHigherPriorityGoesFirst) {
  expect_rewrite(dpl_test_passes::run_priority_first_pass(), function(kX, "        a = R.abs(x)\n        b = R.log(a)\n", "b"),
                 function(kX, "        a = R.abs(x)\n        b = R.sqrt(a)\n", "b"), 1);
}

TEST(GeneratedCode, EqualRulesGoInDeclarationOrder) {
  expect_rewrite(dpl_test_passes::run_declaration_order_pass(), function(kX, "        b = R.exp(x)\n", "b"),
                 function(kX, "        b = R.sqrt(x)\n", "b"), 1);
}

TEST(GeneratedCode, AOnceRuleSkipsTheNodesItCreated) {
  expect_rewrite(dpl_test_passes::run_once_pass(), function(kX, "        b = R.nn.relu(x)\n", "b"),
                 function(kX, "        a = R.nn.relu(x)\n        b = R.nn.relu(a)\n", "b"), 1);
}

// An inner value of a match with a user outside it stays for that user: the add survives the rewrite of the
// multiply because the function also returns it.
TEST(GeneratedCode, AnInnerValueWithOtherUsersStaysForThem) {
  const std::string two = "R.const(2.0, \"float32\")";
  expect_rewrite(dpl_test_passes::run_distribute_pass(),
                 function(kXY, "        s = R.add(x, y)\n        m = R.multiply(s, " + two + ")\n        out = (m, s)\n",
                          "out"),
                 function(kXY,
                          "        s = R.add(x, y)\n        a = R.multiply(x, " + two + ")\n        b = R.multiply(y, " +
                              two + ")\n        m = R.add(a, b)\n        out = (m, s)\n",
                          "out"),
                 1);
}

TEST(GeneratedCode, RulesThatUndoEachOtherStopAtTheBudgetNamingBoth) {
  Parsed input = parse_module("in.relax", function(kX, "        b = R.multiply(x, R.const(2.0, \"float32\"))\n", "b"));
  ASSERT_TRUE(input.module);
  dpl::PassResult result = dpl::run_pass(dpl_test_passes::run_ping_pong_pass(), *input.module);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error.find("rewrite budget exhausted"), std::string::npos) << result.error;
  EXPECT_NE(result.error.find("to_add ("), std::string::npos) << result.error;
  EXPECT_NE(result.error.find("to_multiply ("), std::string::npos) << result.error;
  EXPECT_GT(result.stats.fired[0], 100u);
  EXPECT_GT(result.stats.fired[1], 100u);
}

// `where ms.count >= 3`: two matmuls of x are no group for this rule, three are; the shared dimension n (x's
// columns) is read in the group's guard.
TEST(GeneratedCode, GroupSizeGuardAndSharedDimension) {
  const std::string w1 = "R.const([[1.0], [2.0], [3.0], [4.0]], \"float32\")";
  const std::string w2 = "R.const([[0.5], [0.0], [-1.0], [2.0]], \"float32\")";
  const std::string w3 = "R.const([[1.5], [1.0], [0.25], [-2.0]], \"float32\")";
  auto matmul = [](const std::string& name, const std::string& weight) {
    return "        " + name + " = R.matmul(x, " + weight + ", out_dtype=\"void\")\n";
  };
  expect_unchanged(dpl_test_passes::run_group_of_three_pass(),
                   function(kX, matmul("a", w1) + matmul("b", w2) + "        o = R.concat((a, b), axis=1)\n", "o"));
  expect_rewrite(
      dpl_test_passes::run_group_of_three_pass(),
      function(kX, matmul("a", w1) + matmul("b", w2) + matmul("c", w3) + "        o = R.concat((a, b, c), axis=1)\n",
               "o"),
      function(kX,
               "        w = R.concat((" + w1 + ", " + w2 + ", " + w3 + "), axis=1)\n" + matmul("m", "w") +
                   "        s = R.split(m, indices_or_sections=[1, 2], axis=-1)\n        a = s[0]\n        b = s[1]\n"
                   "        c = s[2]\n        o = R.concat((a, b, c), axis=1)\n",
               "o"),
      1);
}

// The multiply is context: it must exist (sharing x) and stays; only the add is replaced.
TEST(GeneratedCode, AContextRootMustExistAndStays) {
  expect_unchanged(dpl_test_passes::run_context_root_pass(),
                   function(kXY, "        a = R.add(x, y)\n        o = R.exp(a)\n", "o"));
  expect_rewrite(dpl_test_passes::run_context_root_pass(),
                 function(kXY, "        a = R.add(x, y)\n        m = R.multiply(x, y)\n        o = R.add(a, m)\n", "o"),
                 function(kXY, "        a = R.subtract(x, y)\n        m = R.multiply(x, y)\n        o = R.add(a, m)\n",
                          "o"),
                 1);
}

TEST(GeneratedCode, DeclaredOpsAreRegisteredReadMatchedAndBuilt) {
  // Linking custom_ops.dpl registered its ops before main: the reader accepts them and the registry knows them.
  const dpl::OpInfo* scale = dpl::OpRegistry::global().find("my.scale");
  ASSERT_NE(scale, nullptr);
  EXPECT_TRUE(scale->has(dpl::kElementwise));
  ASSERT_EQ(scale->attrs.size(), 2u);
  EXPECT_EQ(scale->attrs[0].default_value, dpl::AttrValue(1.0));
  const dpl::PassDef& pass = dpl_test_passes::custom_ops_pass();
  expect_rewrite(pass,
                 function(kX, "        g: R.Tensor((4, 4), dtype=\"float32\") = R.nn.gelu(x)\n", "g"),
                 function(kX, "        g: R.Tensor((4, 4), dtype=\"float32\") = R.my.fused_gelu(x)\n", "g"), 1);
  expect_rewrite(pass,
                 function(kX,
                          "        a: R.Tensor((4, 4), dtype=\"float32\") = R.my.scale(x, factor=3.0)\n"
                          "        b: R.Tensor((4, 4), dtype=\"float32\") = R.my.scale(a, factor=2.0)\n"
                          "        c: R.Tensor((4, 4), dtype=\"float32\") = R.nn.relu(R.my.fused_gelu(b))\n",
                          "c"),
                 function(kX,
                          "        b: R.Tensor((4, 4), dtype=\"float32\") = R.my.scale(x, factor=6.0)\n"
                          "        c: R.Tensor((4, 4), dtype=\"float32\") = R.my.fused_gelu(b)\n",
                          "c"),
                 2);
  expect_rewrite(pass,
                 function(kXY, "        s: R.Tensor((4, 4), dtype=\"float32\") = R.my.sum_all(x, y)\n", "s"),
                 function(kXY, "        s: R.Tensor((4, 4), dtype=\"float32\") = R.add(x, y)\n", "s"), 1);
  // Three operands: sum_two does not fit, and the call (whose type is unknown) stays.
  expect_unchanged(pass, function(kXY, "        s = R.my.sum_all(x, y, x)\n", "s"));
}

TEST(GeneratedCode, VariadicOperandsBindListsThatSpread) {
  const dpl::PassDef& pass = dpl_test_passes::run_variadic_pass();
  std::string four = "a: R.Tensor((2, 3), dtype=\"float32\"), b: R.Tensor((2, 3), dtype=\"float32\"), "
                     "c: R.Tensor((2, 3), dtype=\"float32\"), d: R.Tensor((2, 3), dtype=\"float32\")";
  // (a, b, c) into (abc, d): a tuple of three, then one of two, flattened into one of four.
  expect_rewrite(pass,
                 function(four, "        abc = R.concat((a, b, c), axis=1)\n        out = R.concat((abc, d), axis=1)\n",
                          "out"),
                 function(four, "        out = R.concat((a, b, c, d), axis=1)\n", "out"), 1);
  // The inner concat along another axis does not fit `axis=k` twice.
  expect_unchanged(pass, function(four,
                                  "        ab = R.concat((a, b), axis=0)\n        cd = R.concat((c, d), axis=0)\n"
                                  "        out = R.concat((ab, cd), axis=1)\n",
                                  "out"));
  // `exp(...)`: any exp; `maximum(x, ys...)` with one more operand, spread first on the right.
  expect_rewrite(pass, function(kX, "        e = R.exp(x)\n        r = R.nn.relu(e)\n", "r"),
                 function(kX, "        r = R.exp(x)\n", "r"), 1);
  expect_rewrite(pass, function(kXY, "        e = R.exp(y)\n        m = R.maximum(x, e)\n", "m"),
                 function(kXY, "        e = R.exp(y)\n        m = R.maximum(e, x)\n", "m"), 1);
}

TEST(GeneratedCode, ATupleItemCanBeTheRoot) {
  const dpl::PassDef& pass = dpl_test_passes::run_item_roots_pass();
  expect_rewrite(pass,
                 function(kX, "        s = R.split(x, indices_or_sections=1, axis=0)\n        i = s[0]\n"
                              "        r = R.nn.relu(i)\n", "r"),
                 function(kX, "        r = R.nn.relu(x)\n", "r"), 1);
  expect_unchanged(pass, function(kX,
                                  "        s = R.split(x, indices_or_sections=2, axis=0)\n        i = s[0]\n"
                                  "        r = R.nn.relu(i)\n",
                                  "r"));
}

TEST(GeneratedCode, DominatorPatternsWalkTheRegionToOneParent) {
  const dpl::PassDef& pass = dpl_test_passes::run_dominators_pass();
  std::string conv = "x: R.Tensor((1, 3, 8, 8), dtype=\"float32\"), w: R.Tensor((4, 3, 3, 3), dtype=\"float32\")";
  std::string diamond =
      "        c = R.nn.conv2d(x, w)\n        r = R.nn.relu(c)\n        l = R.nn.leaky_relu(c, alpha=0.5)\n";
  expect_rewrite(pass, function(conv, diamond + "        s = R.add(r, l)\n", "s"),
                 function(conv,
                          "        c = R.nn.conv2d(x, w)\n        l = R.nn.leaky_relu(c, alpha=0.25)\n"
                          "        s = R.multiply(l, R.const(2.0, \"float32\"))\n",
                          "s"),
                 1);
  // The relu is also an output: the add does not post-dominate it.
  expect_unchanged(pass, function(conv, diamond + "        s = R.add(r, l)\n        out = (s, r)\n", "out"));
  // Paths through exp and negative from one transpose; a relu on the way is not on the path.
  std::string square = "x: R.Tensor((4, 3), dtype=\"float32\")";
  expect_rewrite(pass,
                 function(square,
                          "        p = R.permute_dims(x, axes=[1, 0])\n        e = R.exp(p)\n"
                          "        n = R.negative(R.exp(p))\n        s = R.subtract(e, n)\n",
                          "s"),
                 function(square,
                          "        p = R.permute_dims(x, axes=[1, 0])\n        e = R.exp(p)\n"
                          "        n = R.negative(R.exp(p))\n        s = R.add(e, R.negative(n))\n",
                          "s"),
                 1);
  expect_unchanged(pass, function(square,
                                  "        p = R.permute_dims(x, axes=[1, 0])\n        e = R.exp(p)\n"
                                  "        n = R.nn.relu(p)\n        s = R.subtract(e, n)\n",
                                  "s"));
}

// --- the decision tree (run/shared_checks.dpl)

TEST(GeneratedCode, RulesSharingChecksEachFireOnTheirOwnGraphs) {
  const dpl::PassDef& pass = dpl_test_passes::run_shared_checks_pass();
  auto scaled = [](const std::string& multiply) {
    return function(kXY, "        t = R.permute_dims(y, axes=[1, 0])\n        s = R.matmul(x, t)\n" + multiply, "m");
  };
  auto divided = [](const std::string& by) {
    return function(kXY,
                    "        t = R.permute_dims(y, axes=[1, 0])\n        s = R.matmul(x, t)\n"
                    "        m = R.divide(s, R.const(" + by + ", \"float32\"))\n",
                    "m");
  };
  expect_rewrite(pass, scaled("        m = R.multiply(s, R.const(0.5, \"float32\"))\n"), divided("2.0"), 1);
  // The constant first: the same shared checks find the operands the other way round.
  expect_rewrite(pass, scaled("        m = R.multiply(R.const(0.25, \"float32\"), s)\n"), divided("4.0"), 1);
  expect_unchanged(pass, scaled("        m = R.multiply(s, R.const(0.125, \"float32\"))\n"));
  expect_unchanged(pass, function(kXY,
                                  "        t = R.permute_dims(y, axes=[0, 1])\n        s = R.matmul(x, t)\n"
                                  "        m = R.multiply(s, R.const(0.5, \"float32\"))\n",
                                  "m"));
  expect_rewrite(pass, function(kX, "        a = R.log(x)\n        b = R.exp(x)\n        c = R.subtract(a, b)\n", "c"),
                 function(kX, "", "x"), 1);
  expect_rewrite(pass, function(kX, "        a = R.exp(x)\n        b = R.log(x)\n        c = R.subtract(a, b)\n", "c"),
                 function(kX, "", "x"), 1);
  expect_unchanged(pass, function(kXY, "        a = R.exp(x)\n        b = R.log(y)\n        c = R.subtract(a, b)\n", "c"));
}

// The generated source itself (both parts: the run passes are built with dplc --parts 2): the two scaling rules'
// structural checks are written once, their constants once each; the two subtract rules are cases of one switch
// on their first operand's op.
// The generated source of run/<stem>.dpl, both parts.
std::string generated_source(const std::string& stem) {
  std::stringstream text;
  for (const std::string& path : {std::string(DPL_RUN_PASSES_DIR "/") + stem + ".dpl.cpp",
                                  std::string(DPL_RUN_PASSES_DIR "/") + stem + ".dpl.part2.cpp"}) {
    std::ifstream in(path);
    EXPECT_TRUE(in) << path;
    text << in.rdbuf();
  }
  return text.str();
}

// Rules that differ only in a constant's value (run/literal_cases.dpl): the code looks the value up among the
// sorted literals, one case per rule, and each value still picks its own rule; a value no rule names picks none.
TEST(GeneratedCode, RulesThatDifferInALiteralDispatchOnTheValue) {
  const std::string source = generated_source("literal_cases");
  EXPECT_NE(source.find("switch (dpl::literal_case(scalar1, scalar1_cases)) {"), std::string::npos) << source;
  EXPECT_NE(source.find("static constexpr double scalar1_cases[] = {\n      -1.0, 0.5, 1.0, 2.0, 4.0,\n    };"),
            std::string::npos)
      << source;
  EXPECT_EQ(source.find("scalar1 != "), std::string::npos) << source;
  const dpl::PassDef& pass = dpl_test_passes::run_literal_cases_pass();
  auto divided_by = [](const std::string& value) {
    return function(kX, "        a = R.divide(x, R.const(" + value + ", \"float32\"))\n", "a");
  };
  expect_rewrite(pass, divided_by("1.0"), function(kX, "", "x"), 1);
  expect_rewrite(pass, divided_by("2.0"),
                 function(kX, "        a = R.multiply(x, R.const(0.5, \"float32\"))\n", "a"), 1);
  expect_rewrite(pass, divided_by("4.0"),
                 function(kX, "        a = R.multiply(x, R.const(0.25, \"float32\"))\n", "a"), 1);
  expect_rewrite(pass, divided_by("-1.0"), function(kX, "        a = R.negative(x)\n", "a"), 1);
  expect_rewrite(pass, divided_by("0.5"), function(kX, "        a = R.add(x, x)\n", "a"), 1);
  expect_unchanged(pass, divided_by("3.0"));
  expect_unchanged(pass, divided_by("0.25"));
  expect_unchanged(pass, function(kX, "        a = R.divide(R.const(2.0, \"float32\"), x)\n", "a"));
}

// dpl::literal_case: the position of a value among sorted literals, compared as `!=` compares (-0.0 is 0.0, NaN is
// nothing).
TEST(GeneratedCode, LiteralCaseFindsAValueAmongSortedLiterals) {
  static constexpr double kCases[] = {-1.0, 0.0, 0.5, 2.0};
  EXPECT_EQ(dpl::literal_case(-1.0, kCases), 0);
  EXPECT_EQ(dpl::literal_case(0.0, kCases), 1);
  EXPECT_EQ(dpl::literal_case(-0.0, kCases), 1);
  EXPECT_EQ(dpl::literal_case(2.0, kCases), 3);
  EXPECT_EQ(dpl::literal_case(0.25, kCases), -1);
  EXPECT_EQ(dpl::literal_case(-2.0, kCases), -1);
  EXPECT_EQ(dpl::literal_case(3.0, kCases), -1);
  EXPECT_EQ(dpl::literal_case(std::numeric_limits<double>::quiet_NaN(), kCases), -1);
}

TEST(GeneratedCode, ASharedCheckIsEmittedOnce) {
  const std::string source = generated_source("shared_checks");
  auto count = [&](const std::string& needle) {
    int n = 0;
    for (size_t at = source.find(needle); at != std::string::npos; at = source.find(needle, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("is_call_of(dpl::op::matmul)"), 1) << source;
  EXPECT_EQ(count("is_call_of(dpl::op::permute_dims)"), 1) << source;
  EXPECT_EQ(count("kind() != dpl::NodeKind::Constant"), 1) << source;
  EXPECT_EQ(count("// shared by half, quarter"), 1) << source;
  // The constant's value is read once into a local; each rule compares it with its own.
  EXPECT_EQ(count("scalar_value()"), 1) << source;
  EXPECT_EQ(count(" != 0.5)"), 1) << source;
  EXPECT_EQ(count(" != 0.25)"), 1) << source;
  EXPECT_EQ(count("for (int order"), 0) << source;  // disjoint operand heads: no loop over both orders
  EXPECT_EQ(count("case dpl::op::log:"), 1) << source;
  EXPECT_EQ(count("case dpl::op::exp:"), 1) << source;
}

}  // namespace
