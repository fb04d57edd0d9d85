// Tests of the Builder API: construction by op name, keyword attributes, and BuildError messages.
#include "dpl/ir/builder.h"

#include <gtest/gtest.h>

#include "dpl/ir/analysis.h"

namespace dpl {
namespace {

std::vector<Dim> dims(std::initializer_list<int64_t> extents) {
  std::vector<Dim> out;
  for (int64_t extent : extents) out.push_back(Dim::fixed(extent));
  return out;
}

TEST(Builder, BuildsALinearLayer) {
  Function f("main");
  Builder b(f);
  Node* x = b.param("x", Type::tensor(DType::Float32, dims({1, 11, 768})));
  Node* w = b.param("w", Type::tensor(DType::Float32, dims({3072, 768})));
  Node* bias = b.param("b", Type::tensor(DType::Float32, dims({3072})));
  Node* wt = b.call("R.permute_dims", {w}, {{"axes", std::vector<int64_t>{1, 0}}});
  Node* y = b.call("matmul", {x, wt}, {{"out_dtype", std::string("void")}});
  Node* out = b.call("relax.add", {y, bias});
  b.output(out);
  EXPECT_EQ(out->type()->str(), "R.Tensor((1, 11, 3072), dtype=\"float32\")");
  EXPECT_EQ(wt->op(), op::permute_dims);
  EXPECT_EQ(std::get<std::vector<int64_t>>(wt->attr(0)), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(f.output(), out);
  EXPECT_EQ(&b.function(), &f);
  EXPECT_EQ(verify(f), "");
}

TEST(Builder, ConstantsShapesTuples) {
  Function f("main");
  Builder b(f);
  Node* half = b.scalar(0.5, DType::Float16);
  EXPECT_TRUE(half->literal().is_scalar());
  EXPECT_EQ(half->literal().values[0], 0.5);
  // The summary matchers read instead of the literal.
  EXPECT_TRUE(half->is_scalar_constant());
  EXPECT_EQ(half->scalar_value(), 0.5);
  EXPECT_EQ(half->constant_dtype(), DType::Float16);
  Node* vector = f.add_constant(Literal{DType::Int32, {2}, {1, 2}});
  EXPECT_FALSE(vector->is_scalar_constant());
  EXPECT_EQ(vector->constant_dtype(), DType::Int32);
  EXPECT_FALSE(b.call("add", {half, half})->is_scalar_constant());
  EXPECT_EQ(half->type()->str(), "R.Tensor((), dtype=\"float16\")");
  Node* shape = b.shape({2, -1});
  EXPECT_TRUE(shape->shape_value()[1].is_inferred());
  EXPECT_THROW(b.shape({-2}), BuildError);
  Node* pair = b.tuple({half, half});
  EXPECT_EQ(b.item(pair, 0)->type(), half->type());
  EXPECT_THROW(b.item(pair, 5), BuildError);
  EXPECT_THROW(b.output(nullptr), BuildError);
  EXPECT_THROW(b.scalar(1.0, DType::Unknown), BuildError);
}

TEST(Builder, ErrorsCarryTheRegistryMessage) {
  Function f("main");
  Builder b(f);
  Node* a = b.param("a", Type::tensor(DType::Float32, dims({4, 64})));
  Node* c = b.param("c", Type::tensor(DType::Float32, dims({32, 2})));
  try {
    b.call("matmul", {a, c});
    FAIL() << "expected a BuildError";
  } catch (const BuildError& error) {
    EXPECT_STREQ(error.what(), "matmul: inner dimensions 64 and 32 differ");
  }
  EXPECT_THROW(b.call("matmul", {a}), BuildError);
  EXPECT_THROW(b.call("nope", {a}), BuildError);
  EXPECT_THROW(b.call("nn.softmax", {a}, {{"dim", int64_t{1}}}), BuildError);
  EXPECT_EQ(f.nodes().size(), 2u);
}

}  // namespace
}  // namespace dpl
