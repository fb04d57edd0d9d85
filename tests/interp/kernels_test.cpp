// Kernels of the elementwise, layout, reduction and creation ops, against hand-computed values.
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "interp_test_util.h"

namespace dpl {
namespace {

using interp_test::boolean;
using interp_test::Doubles;
using interp_test::expect_f32;
using interp_test::expect_tensor;
using interp_test::f32;
using interp_test::i64;
using interp_test::Ints;
using interp_test::TestGraph;

// Evaluates `op(a, b)` on two tensors.
Value binary(const std::string& op, const Tensor& a, const Tensor& b) {
  TestGraph g;
  Node* x = g.param("a", a);
  Node* y = g.param("b", b);
  return g.eval(g.b().call(op, {x, y}), {a, b});
}

// Evaluates `op(a, attrs...)` on one tensor.
Value unary(const std::string& op, const Tensor& a, std::initializer_list<Builder::KwArg> attrs = {}) {
  TestGraph g;
  Node* x = g.param("a", a);
  return g.eval(g.b().call(op, {x}, attrs), {a});
}

// --- elementwise binary ---------------------------------------------------------------------------------------

TEST(BinaryKernels, AddBroadcastsARow) {
  expect_f32(binary("add", f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3}, {10, 20, 30})), {2, 3}, {11, 22, 33, 14, 25, 36});
}

TEST(BinaryKernels, SubtractBroadcastsBothWays) {
  expect_f32(binary("subtract", f32({2, 1}, {1, 2}), f32({1, 3}, {1, 2, 3})), {2, 3}, {0, -1, -2, 1, 0, -1});
}

TEST(BinaryKernels, MultiplyByAScalar) {
  expect_f32(binary("multiply", f32({3}, {1, 2, 3}), Tensor::scalar(2.0)), {3}, {2, 4, 6});
}

TEST(BinaryKernels, DivideAndFloorDivide) {
  expect_f32(binary("divide", f32({2}, {1, -3}), f32({2}, {4, 2})), {2}, {0.25, -1.5});
  expect_f32(binary("floor_divide", f32({2}, {7.5, -7.5}), f32({2}, {2, 2})), {2}, {3, -4});
  // Integer division truncates toward zero; floor division rounds down.
  expect_tensor(binary("divide", i64({2}, {7, -7}), i64({2}, {2, 2})), DType::Int64, {2}, {3, -3});
  expect_tensor(binary("floor_divide", i64({2}, {7, -7}), i64({2}, {2, 2})), DType::Int64, {2}, {3, -4});
}

TEST(BinaryKernels, IntegerDivisionByZeroIsAnError) {
  TestGraph g;
  Node* a = g.param("a", DType::Int64, {2});
  Node* b = g.param("b", DType::Int64, {2});
  EvalResult result = g.run(g.b().call("divide", {a, b}), {i64({2}, {1, 2}), i64({2}, {1, 0})});
  EXPECT_FALSE(result.ok());
  EXPECT_NE(result.error.find("integer division by zero"), std::string::npos) << result.error;
}

TEST(BinaryKernels, PowerMaximumMinimum) {
  expect_f32(binary("power", f32({2}, {2, 3}), f32({2}, {3, 2})), {2}, {8, 9});
  expect_f32(binary("maximum", f32({3}, {1, 5, -2}), f32({3}, {4, 2, -3})), {3}, {4, 5, -2});
  expect_f32(binary("minimum", f32({3}, {1, 5, -2}), f32({3}, {4, 2, -3})), {3}, {1, 2, -3});
  const Value nan_max = binary("maximum", f32({1}, {std::nan("")}), f32({1}, {1}));
  EXPECT_TRUE(std::isnan(nan_max.tensor().at(0)));
}

TEST(BinaryKernels, ComparisonsGiveBool) {
  const Tensor a = f32({3}, {1, 2, 3});
  const Tensor b = f32({3}, {2, 2, 2});
  expect_tensor(binary("equal", a, b), DType::Bool, {3}, {0, 1, 0});
  expect_tensor(binary("not_equal", a, b), DType::Bool, {3}, {1, 0, 1});
  expect_tensor(binary("less", a, b), DType::Bool, {3}, {1, 0, 0});
  expect_tensor(binary("less_equal", a, b), DType::Bool, {3}, {1, 1, 0});
  expect_tensor(binary("greater", a, b), DType::Bool, {3}, {0, 0, 1});
  expect_tensor(binary("greater_equal", a, b), DType::Bool, {3}, {0, 1, 1});
}

TEST(BinaryKernels, LogicalAndBitwise) {
  const Tensor p = boolean({4}, {0, 0, 1, 1});
  const Tensor q = boolean({4}, {0, 1, 0, 1});
  expect_tensor(binary("logical_and", p, q), DType::Bool, {4}, {0, 0, 0, 1});
  expect_tensor(binary("logical_or", p, q), DType::Bool, {4}, {0, 1, 1, 1});
  const Tensor m = Tensor::from_values(DType::Int32, {2}, {12, 10});
  const Tensor n = Tensor::from_values(DType::Int32, {2}, {10, 6});
  expect_tensor(binary("bitwise_and", m, n), DType::Int32, {2}, {8, 2});
  expect_tensor(binary("bitwise_or", m, n), DType::Int32, {2}, {14, 14});
}

// --- dtype emulation ------------------------------------------------------------------------------------------

TEST(DTypeEmulation, Float32AdditionRounds) {
  expect_f32(binary("add", f32({1}, {16777216}), f32({1}, {1})), {1}, {16777216}, 0.0);
}

TEST(DTypeEmulation, Float16AdditionRounds) {
  const Tensor a = Tensor::from_values(DType::Float16, {2}, {2048, 0.1});
  const Tensor b = Tensor::from_values(DType::Float16, {2}, {1, 0.2});
  // 2049 is not a half (rounds to 2048); 0.1 + 0.2 in half precision is 0.2998046875.
  expect_tensor(binary("add", a, b), DType::Float16, {2}, {2048, 0.2998046875}, 0.0);
}

TEST(DTypeEmulation, BFloat16MultiplicationRounds) {
  const Tensor a = Tensor::from_values(DType::BFloat16, {1}, {1.0078125});         // 1 + 2^-7
  expect_tensor(binary("multiply", a, a), DType::BFloat16, {1}, {1.015625}, 0.0);  // 1 + 2^-6 + 2^-14 rounded
}

TEST(DTypeEmulation, Int32AdditionWraps) {
  const Tensor a = Tensor::from_values(DType::Int32, {1}, {2147483647});
  const Tensor one = Tensor::from_values(DType::Int32, {1}, {1});
  expect_tensor(binary("add", a, one), DType::Int32, {1}, {-2147483648.0}, 0.0);
}

// --- elementwise unary ----------------------------------------------------------------------------------------

TEST(UnaryKernels, MathFunctions) {
  const Tensor x = f32({2}, {0.5, 2.0});
  expect_f32(unary("exp", x), {2}, {std::exp(0.5), std::exp(2.0)});
  expect_f32(unary("log", x), {2}, {std::log(0.5), std::log(2.0)});
  expect_f32(unary("sqrt", x), {2}, {0.70710678, 1.41421356});
  expect_f32(unary("rsqrt", x), {2}, {1.41421356, 0.70710678});
  expect_f32(unary("negative", x), {2}, {-0.5, -2});
  expect_f32(unary("abs", f32({2}, {-3, 3})), {2}, {3, 3});
  expect_f32(unary("tanh", x), {2}, {0.46211716, 0.96402758});
  expect_f32(unary("sigmoid", f32({2}, {0, 2})), {2}, {0.5, 0.88079708});
  expect_f32(unary("erf", x), {2}, {0.52049988, 0.99532227});
  expect_f32(unary("cos", x), {2}, {0.87758256, -0.41614684});
  expect_f32(unary("sin", x), {2}, {0.47942554, 0.90929743});
  expect_tensor(unary("logical_not", boolean({2}, {0, 1})), DType::Bool, {2}, {1, 0});
}

TEST(UnaryKernels, Activations) {
  const Tensor x = f32({3}, {-1, 0, 1});
  expect_f32(unary("nn.relu", x), {3}, {0, 0, 1});
  expect_f32(unary("nn.leaky_relu", x, {{"alpha", 0.1}}), {3}, {-0.1, 0, 1});
  expect_f32(unary("nn.gelu", x), {3}, {-0.15865525, 0, 0.84134475});
  expect_f32(unary("nn.gelu_tanh", x), {3}, {-0.15880801, 0, 0.84119199});
  expect_f32(unary("nn.silu", x), {3}, {-0.26894142, 0, 0.73105858});
}

TEST(UnaryKernels, Clip) {
  expect_f32(unary("clip", f32({3}, {-1, 3, 7}), {{"min", 0.0}, {"max", 6.0}}), {3}, {0, 3, 6});
  expect_f32(unary("clip", f32({2}, {-1, 7}), {{"max", 6.0}}), {2}, {-1, 6});  // min=None: no lower bound
}

TEST(UnaryKernels, AstypeRoundsToTheNewDType) {
  expect_tensor(unary("astype", f32({3}, {1.7, -1.7, 2.5}), {{"dtype", std::string("int32")}}), DType::Int32, {3},
                {1, -1, 2});
  expect_tensor(unary("astype", f32({2}, {0, 0.5}), {{"dtype", std::string("bool")}}), DType::Bool, {2}, {0, 1});
  expect_tensor(unary("astype", i64({1}, {2049}), {{"dtype", std::string("float16")}}), DType::Float16, {1}, {2048});
  expect_tensor(unary("astype", boolean({2}, {1, 0}), {{"dtype", std::string("float32")}}), DType::Float32, {2},
                {1, 0});
}

TEST(UnaryKernels, Where) {
  TestGraph g;
  Node* c = g.param("c", DType::Bool, {3});
  Node* x = g.param("x", DType::Float32, {3});
  Node* zero = g.b().scalar(0.0);
  expect_f32(g.eval(g.b().call("where", {c, x, zero}), {boolean({3}, {1, 0, 1}), f32({3}, {1, 2, 3})}), {3}, {1, 0, 3});
}

// --- linear algebra -------------------------------------------------------------------------------------------

TEST(Matmul, TwoByThreeTimesThreeByTwo) {
  expect_f32(binary("matmul", f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({3, 2}, {7, 8, 9, 10, 11, 12})), {2, 2},
             {58, 64, 139, 154});
}

TEST(Matmul, BatchDimsBroadcast) {
  // Two batches of 1x2 rows times one shared 2x2 matrix.
  expect_f32(binary("matmul", f32({2, 1, 2}, {1, 0, 0, 1}), f32({2, 2}, {1, 2, 3, 4})), {2, 1, 2}, {1, 2, 3, 4});
  // (2, 1, 1, 2) x (3, 2, 1) -> (2, 3, 1, 1)
  const Value out = binary("matmul", f32({2, 1, 1, 2}, {1, 1, 2, 2}), f32({3, 2, 1}, {1, 2, 3, 4, 5, 6}));
  expect_f32(out, {2, 3, 1, 1}, {3, 7, 11, 6, 14, 22});
}

TEST(Matmul, OneDimensionalOperandsArePromoted) {
  const Tensor m23 = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor v3 = f32({3}, {1, 2, 3});
  expect_f32(binary("matmul", v3, f32({3, 2}, {7, 8, 9, 10, 11, 12})), {2}, {58, 64});
  expect_f32(binary("matmul", m23, v3), {2}, {14, 32});
  expect_f32(binary("matmul", v3, v3), {}, {14});
}

TEST(Dense, MultipliesByTheTransposedWeight) {
  expect_f32(binary("nn.dense", f32({1, 3}, {1, 2, 3}), f32({2, 3}, {1, 0, 0, 1, 1, 1})), {1, 2}, {1, 6});
}

// --- layout ---------------------------------------------------------------------------------------------------

TEST(Layout, PermuteDims) {
  expect_f32(unary("permute_dims", f32({2, 3}, {1, 2, 3, 4, 5, 6})), {3, 2}, {1, 4, 2, 5, 3, 6});
  // (2, 2, 2) with axes [1, 0, 2]: out[i][j][k] = in[j][i][k].
  const Value out = unary("permute_dims", f32({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}), {{"axes", Ints{1, 0, 2}}});
  expect_f32(out, {2, 2, 2}, {0, 1, 4, 5, 2, 3, 6, 7});
}

TEST(Layout, ReshapeWithAnInferredDim) {
  TestGraph g;
  Node* x = g.param("x", DType::Float32, {2, 3});
  const Value out = g.eval(g.b().call("reshape", {x, g.b().shape({-1, 2})}), {f32({2, 3}, {1, 2, 3, 4, 5, 6})});
  expect_f32(out, {3, 2}, {1, 2, 3, 4, 5, 6});
}

TEST(Layout, BroadcastTo) {
  TestGraph g;
  Node* x = g.param("x", DType::Float32, {3, 1});
  const Value out = g.eval(g.b().call("broadcast_to", {x, g.b().shape({2, 3, 2})}), {f32({3, 1}, {1, 2, 3})});
  expect_f32(out, {2, 3, 2}, {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3});
}

TEST(Layout, ExpandDimsAndSqueeze) {
  const Value expanded = unary("expand_dims", f32({2}, {1, 2}), {{"axis", Ints{0, -1}}});
  expect_f32(expanded, {1, 2, 1}, {1, 2});
  expect_f32(unary("squeeze", f32({1, 2, 1}, {1, 2})), {2}, {1, 2});
  expect_f32(unary("squeeze", f32({1, 2, 1}, {1, 2}), {{"axis", Ints{0}}}), {2, 1}, {1, 2});
}

TEST(Layout, StridedSlice) {
  const Tensor x = f32({5}, {0, 1, 2, 3, 4});
  auto slice = [&](int64_t begin, int64_t end, int64_t stride) {
    return unary("strided_slice", x,
                 {{"axes", Ints{0}}, {"begin", Ints{begin}}, {"end", Ints{end}}, {"strides", Ints{stride}}});
  };
  expect_f32(slice(1, 100, 2), {2}, {1, 3});
  expect_f32(slice(4, -6, -2), {3}, {4, 2, 0});
  expect_f32(slice(-2, 5, 1), {2}, {3, 4});
  expect_f32(slice(3, 1, 1), {0}, {});
  // A 2-D slice along the second axis only.
  const Value columns = unary("strided_slice", f32({2, 3}, {1, 2, 3, 4, 5, 6}),
                              {{"axes", Ints{1}}, {"begin", Ints{1}}, {"end", Ints{3}}});
  expect_f32(columns, {2, 2}, {2, 3, 5, 6});
}

TEST(Layout, Concat) {
  TestGraph g;
  Node* a = g.param("a", DType::Float32, {2, 1});
  Node* b = g.param("b", DType::Float32, {2, 2});
  Node* out = g.b().call("concat", {g.b().tuple({a, b})}, {{"axis", int64_t{1}}});
  expect_f32(g.eval(out, {f32({2, 1}, {1, 2}), f32({2, 2}, {3, 4, 5, 6})}), {2, 3}, {1, 3, 4, 2, 5, 6});
}

TEST(Layout, SplitIntoSectionsAndAtIndices) {
  TestGraph g;
  Node* x = g.param("x", DType::Float32, {7});
  Node* parts = g.b().call("split", {x}, {{"indices_or_sections", int64_t{3}}});
  const Value sections = g.eval(parts, {f32({7}, {0, 1, 2, 3, 4, 5, 6})});
  ASSERT_TRUE(sections.is_tuple());
  ASSERT_EQ(sections.fields().size(), 3u);
  expect_f32(sections.fields()[0], {3}, {0, 1, 2});
  expect_f32(sections.fields()[1], {3}, {3, 4, 5});
  expect_f32(sections.fields()[2], {1}, {6});

  TestGraph h;
  Node* y = h.param("y", DType::Float32, {2, 3});
  Node* pieces = h.b().call("split", {y}, {{"indices_or_sections", Ints{1}}, {"axis", int64_t{1}}});
  Node* second = h.b().item(pieces, 1);
  expect_f32(h.eval(second, {f32({2, 3}, {1, 2, 3, 4, 5, 6})}), {2, 2}, {2, 3, 5, 6});
}

TEST(Layout, TakeAlongAnAxis) {
  const Tensor table = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  TestGraph g;
  Node* t = g.param("table", table);
  Node* ids = g.param("ids", DType::Int64, {2, 2});
  const Value rows = g.eval(g.b().call("take", {t, ids}, {{"axis", int64_t{0}}}), {table, i64({2, 2}, {2, 0, 1, 1})});
  expect_f32(rows, {2, 2, 2}, {5, 6, 1, 2, 3, 4, 3, 4});

  TestGraph h;
  Node* t2 = h.param("table", table);
  Node* column = h.param("column", DType::Int64, {1});
  const Value cols = h.eval(h.b().call("take", {t2, column}, {{"axis", int64_t{1}}}), {table, i64({1}, {1})});
  expect_f32(cols, {3, 1}, {2, 4, 6});
}

TEST(Layout, TakeModes) {
  const Tensor table = f32({3}, {10, 20, 30});
  const Tensor ids = i64({3}, {-1, 3, 1});
  auto take = [&](const std::string& mode) {
    TestGraph g;
    Node* t = g.param("table", table);
    Node* i = g.param("ids", ids);
    return g.run(g.b().call("take", {t, i}, {{"axis", int64_t{0}}, {"mode", mode}}), {table, ids});
  };
  EvalResult clip = take("clip");
  ASSERT_TRUE(clip.ok()) << clip.error;
  expect_f32(clip.value, {3}, {10, 30, 20});
  EvalResult wrap = take("wrap");
  ASSERT_TRUE(wrap.ok()) << wrap.error;
  expect_f32(wrap.value, {3}, {30, 10, 20});
  EvalResult fast = take("fast");
  EXPECT_FALSE(fast.ok());
  EXPECT_NE(fast.error.find("take: index -1 is out of range for an axis of extent 3"), std::string::npos) << fast.error;
}

// --- reductions and scans -------------------------------------------------------------------------------------

TEST(Reductions, SumMeanMaxMin) {
  const Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 9});
  expect_f32(unary("sum", x, {{"axis", Ints{1}}, {"keepdims", true}}), {2, 1}, {6, 18});
  expect_f32(unary("sum", x), {}, {24});
  expect_f32(unary("mean", x, {{"axis", Ints{0}}}), {3}, {2.5, 3.5, 6});
  expect_f32(unary("mean", x, {{"axis", Ints{-1}}, {"keepdims", true}}), {2, 1}, {2, 6});
  expect_f32(unary("max", x, {{"axis", Ints{1}}}), {2}, {3, 9});
  expect_f32(unary("min", x, {{"axis", Ints{0, 1}}}), {}, {1});
}

TEST(Reductions, Cumsum) {
  expect_f32(unary("cumsum", f32({3}, {1, 2, 3}), {{"axis", int64_t{0}}}), {3}, {1, 3, 6});
  expect_f32(unary("cumsum", f32({3}, {1, 2, 3}), {{"axis", int64_t{0}}, {"exclusive", true}}), {3}, {0, 1, 3});
  expect_f32(unary("cumsum", f32({2, 2}, {1, 2, 3, 4}), {{"axis", int64_t{1}}}), {2, 2}, {1, 3, 3, 7});
  // axis=None scans the flattened tensor; dtype changes the result type.
  expect_tensor(unary("cumsum", f32({2, 2}, {1, 2, 3, 4}), {{"dtype", std::string("int64")}}), DType::Int64, {4},
                {1, 3, 6, 10});
}

// --- creation -------------------------------------------------------------------------------------------------

Value create(const std::string& op, std::vector<Node*> (*operands)(Builder&), std::vector<Builder::KwArg> attrs) {
  TestGraph g;
  Node* out = g.b().call(op, operands(g.b()), attrs);
  return g.eval(out, {});
}

TEST(Creation, Arange) {
  auto none = [](Builder&) { return std::vector<Node*>{}; };
  expect_tensor(create("arange", none, {{"start", int64_t{1}}, {"end", int64_t{7}}, {"step", int64_t{2}}}),
                DType::Int64, {3}, {1, 3, 5});
  expect_tensor(create("arange", none, {{"start", int64_t{3}}}), DType::Int64, {3}, {0, 1, 2});  // end=None
  expect_f32(
      create("arange", none,
             {{"start", int64_t{4}}, {"end", int64_t{0}}, {"step", int64_t{-2}}, {"dtype", std::string("float32")}}),
      {2}, {4, 2});
}

TEST(Creation, FullZerosOnes) {
  expect_f32(create("full",
                    [](Builder& b) {
                      return std::vector<Node*>{b.shape({2, 2}), b.scalar(7.0)};
                    },
                    {}),
             {2, 2}, {7, 7, 7, 7});
  expect_tensor(
      create("zeros", [](Builder& b) { return std::vector<Node*>{b.shape({3})}; }, {{"dtype", std::string("int32")}}),
      DType::Int32, {3}, {0, 0, 0});
  expect_tensor(create("ones",
                       [](Builder& b) {
                         return std::vector<Node*>{b.shape({1, 2})};
                       },
                       {{"dtype", std::string("float16")}}),
                DType::Float16, {1, 2}, {1, 1});
}

TEST(Creation, TriuAndTril) {
  const Tensor x = f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  expect_f32(unary("triu", x), {3, 3}, {1, 2, 3, 0, 5, 6, 0, 0, 9});
  expect_f32(unary("triu", x, {{"k", int64_t{1}}}), {3, 3}, {0, 2, 3, 0, 0, 6, 0, 0, 0});
  expect_f32(unary("tril", x), {3, 3}, {1, 0, 0, 4, 5, 0, 7, 8, 9});
  expect_f32(unary("tril", x, {{"k", int64_t{-1}}}), {3, 3}, {0, 0, 0, 4, 0, 0, 7, 8, 0});
}

}  // namespace
}  // namespace dpl
