// Tests of structural equality (modulo names, with the first difference reported) and of the IR verifier.
#include "dpl/ir/analysis.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "dpl/ir/builder.h"
#include "tensor_types.h"

namespace dpl {
namespace {

using test::f32;

// softmax(x * scale + y) with the given binding prefix, scale and softmax axis.
void build(Function& f, const std::string& prefix, double scale = 0.125, int64_t axis = -1,
           const char* inner = "multiply") {
  Builder b(f);
  Node* x = b.param(prefix + "x", f32({2, 8}));
  Node* y = b.param(prefix + "y", f32({2, 8}));
  Node* scaled = b.call(inner, {x, b.scalar(scale)});
  scaled->set_name(prefix + "0");
  Node* sum = b.call("add", {scaled, y});
  sum->set_name(prefix + "1");
  Node* out = b.call("nn.softmax", {sum}, {{"axis", axis}});
  out->set_name(prefix + "2");
  b.output(out);
}

TEST(Equality, EqualModuloNames) {
  Function a("main"), b("main");
  build(a, "lv");
  build(b, "v");
  EqualityResult result = structurally_equal(a, b);
  EXPECT_TRUE(result.equal) << result.difference;
  EXPECT_TRUE(static_cast<bool>(result));
  EXPECT_EQ(result.difference, "");
}

TEST(Equality, ReportsOpDifference) {
  Function a("main"), b("main");
  build(a, "lv");
  build(b, "lv", 0.125, -1, "add");
  EqualityResult result = structurally_equal(a, b);
  EXPECT_FALSE(result.equal);
  EXPECT_EQ(result.difference, "main: binding lv0: op multiply vs add");
}

TEST(Equality, ReportsAttributeAndConstantDifferences) {
  Function a("main"), b("main"), c("main");
  build(a, "lv");
  build(b, "lv", 0.125, 1);
  build(c, "w", 0.12);
  EXPECT_EQ(structurally_equal(a, b).difference, "main: binding lv2: nn.softmax attribute axis: -1 vs 1");
  EXPECT_EQ(structurally_equal(a, c).difference,
            "main: binding lv0 vs w0 operand 1: constant float32 0.125 vs float32 0.12");
}

TEST(Equality, ParameterPositionsMatter) {
  Function a("main"), b("main");
  {
    Builder builder(a);
    Node* x = builder.param("x", f32({4}));
    Node* y = builder.param("y", f32({4}));
    builder.output(builder.call("subtract", {x, y}));
  }
  {
    Builder builder(b);
    Node* x = builder.param("x", f32({4}));
    Node* y = builder.param("y", f32({4}));
    builder.output(builder.call("subtract", {y, x}));
  }
  EXPECT_EQ(structurally_equal(a, b).difference, "main: binding x vs y: parameter 0 vs parameter 1");
}

TEST(Equality, ParameterTypesAndCounts) {
  Function a("main"), b("main"), c("main");
  Builder(a).output(Builder(a).param("x", f32({4})));
  Builder(b).output(Builder(b).param("x", f32({5})));
  Builder(c).param("x", f32({4}));
  Builder(c).output(Builder(c).param("y", f32({4})));
  EXPECT_EQ(structurally_equal(a, b).difference,
            "main: parameter 0 (x vs x): type R.Tensor((4,), dtype=\"float32\") vs R.Tensor((5,), dtype=\"float32\")");
  EXPECT_EQ(structurally_equal(a, c).difference, "main: 1 parameters vs 2");
}

TEST(Equality, SharingMatters) {
  // exp(x) used twice vs two separate exp(x) nodes.
  Function a("main"), b("main");
  {
    Builder builder(a);
    Node* x = builder.param("x", f32({4}));
    Node* e = builder.call("exp", {x});
    e->set_name("e");
    builder.output(builder.call("add", {e, e}));
  }
  {
    Builder builder(b);
    Node* x = builder.param("x", f32({4}));
    Node* e1 = builder.call("exp", {x});
    e1->set_name("e1");
    Node* e2 = builder.call("exp", {x});
    e2->set_name("e2");
    builder.output(builder.call("add", {e1, e2}));
  }
  EqualityResult result = structurally_equal(a, b);
  EXPECT_FALSE(result.equal);
  EXPECT_EQ(result.difference, "main: binding e vs e2: e stands for e1 elsewhere in the other graph");
}

TEST(Equality, ConstantsCompareByValue) {
  // One constant used twice equals two equal constants (TVMScript writes constants inline).
  Function a("main"), b("main");
  {
    Builder builder(a);
    Node* x = builder.param("x", f32({4}));
    Node* two = builder.scalar(2.0);
    builder.output(builder.call("add", {builder.call("multiply", {x, two}), two}));
  }
  {
    Builder builder(b);
    Node* x = builder.param("x", f32({4}));
    builder.output(builder.call("add", {builder.call("multiply", {x, builder.scalar(2.0)}), builder.scalar(2.0)}));
  }
  EXPECT_TRUE(structurally_equal(a, b).equal) << structurally_equal(a, b).difference;
}

TEST(Equality, ModulesCompareFunctionsByName) {
  Module a, b;
  build(a.add_function("main"), "lv");
  build(a.add_function("helper"), "h");
  build(b.add_function("helper"), "k");
  build(b.add_function("main"), "v");
  EXPECT_TRUE(structurally_equal(a, b).equal) << structurally_equal(a, b).difference;
  b.find("helper")->attrs().emplace_back("Composite", std::string("x.add"));
  EXPECT_EQ(structurally_equal(a, b).difference, "helper: function attribute Composite only in the second");
  Module c;
  build(c.add_function("main"), "lv");
  EXPECT_EQ(structurally_equal(a, c).difference, "function helper is only in the first module");
}

TEST(Verify, AcceptsWellFormedGraphs) {
  Module m;
  build(m.add_function("main"), "lv");
  EXPECT_EQ(verify(m), "");
}

TEST(Verify, CatchesABrokenUseList) {
  Function f("main");
  build(f, "lv");
  Node* x = f.params()[0];
  Node* y = f.params()[1];
  ASSERT_EQ(x->num_users(), 1u);
  // Corrupt x's use list from outside (the storage itself is not const).
  const_cast<Node**>(x->users().data())[0] = y;
  std::string problem = verify(f);
  EXPECT_NE(problem.find("main: the use list of lvx"), std::string::npos) << problem;
}

TEST(Verify, CatchesOrderAndMissingOutput) {
  Function f("main");
  build(f, "lv");
  auto& order = const_cast<std::vector<Node*>&>(f.nodes());
  std::swap(order[3], order[4]);  // the add now precedes the multiply it uses (params, const, multiply, add)
  EXPECT_EQ(verify(f), "main: lv1 comes before its operand lv0 in nodes()");
  Function g("empty");
  EXPECT_EQ(verify(g), "empty: the function has no output");
}

TEST(Verify, CatchesStaleTypes) {
  Function f("main");
  Builder b(f);
  Node* x = b.param("x", f32({4}));
  Node* wide = b.param("wide", f32({2, 4}));
  Node* e = b.call("exp", {x});
  e->set_name("e");
  b.output(e);
  f.replace_all_uses(x, wide);  // exp's recorded type no longer follows from its operand
  EXPECT_EQ(verify(f),
            "main: e has type R.Tensor((4,), dtype=\"float32\") but its definition gives "
            "R.Tensor((2, 4), dtype=\"float32\")");
}

TEST(Verify, CatchesCyclesBetweenRewriteAndCompact) {
  Function f("main");
  Builder b(f);
  Node* x = b.param("x", f32({4}));
  Node* e = b.call("exp", {x});
  e->set_name("e");
  Node* t = b.call("tanh", {e});
  t->set_name("t");
  b.output(t);
  Node* n = b.call("negative", {t});
  n->set_name("n");
  f.replace_all_uses(e, n);  // t := tanh(negative(t))
  EXPECT_EQ(verify(f), "main: t depends on itself (a cycle through n)");
}

TEST(Verify, CatchesNodesOfAnotherFunction) {
  Function other("other");
  Builder(other).param("foreign", f32({4}));
  Node* foreign = Builder(other).call("exp", {other.params()[0]});
  foreign->set_name("foreign_exp");
  Function f("main");
  Builder b(f);
  Node* x = b.param("x", f32({4}));
  Node* e = b.call("exp", {x});
  b.output(e);
  f.set_output(foreign);
  EXPECT_EQ(verify(f), "main: the output foreign_exp is not live");
}

TEST(Verify, CatchesCallsOfUnknownFunctions) {
  Module m;
  Function& f = m.add_function("main");
  Builder b(f);
  Node* x = b.param("x", f32({4}));
  Node* call = f.add_func_call("missing", std::span(&x, 1), f32({4}));
  call->set_name("lv0");
  b.output(call);
  EXPECT_EQ(verify(m), "main: lv0 calls the unknown function missing");
}

}  // namespace
}  // namespace dpl
