// Tests of dtypes, dimension symbols, type interning and the TVMScript spelling of types.
#include "dpl/ir/types.h"

#include <gtest/gtest.h>

namespace dpl {
namespace {

std::vector<Dim> dims(std::initializer_list<int64_t> extents) {
  std::vector<Dim> out;
  for (int64_t extent : extents) out.push_back(Dim::fixed(extent));
  return out;
}

TEST(DType, NamesRoundTrip) {
  for (DType dtype : {DType::Bool, DType::Int8, DType::Int16, DType::Int32, DType::Int64, DType::UInt8, DType::Float16,
                      DType::BFloat16, DType::Float32, DType::Float64}) {
    auto parsed = parse_dtype(dtype_name(dtype));
    ASSERT_TRUE(parsed.has_value()) << dtype_name(dtype);
    EXPECT_EQ(*parsed, dtype);
  }
  EXPECT_EQ(dtype_name(DType::Unknown), "");
  EXPECT_FALSE(parse_dtype("float31").has_value());
  EXPECT_FALSE(parse_dtype("void").has_value());
  EXPECT_TRUE(is_float(DType::BFloat16));
  EXPECT_FALSE(is_float(DType::Int32));
  EXPECT_TRUE(is_integer(DType::UInt8));
  EXPECT_FALSE(is_integer(DType::Bool));
}

TEST(Dim, SymbolsAreInternedByName) {
  Dim n = Dim::symbol("n");
  EXPECT_FALSE(n.is_static());
  EXPECT_EQ(n, Dim::symbol("n"));
  EXPECT_NE(n, Dim::symbol("m"));
  EXPECT_EQ(n.symbol_name(), "n");
  EXPECT_EQ(Dim::fixed(4).extent(), 4);
  EXPECT_TRUE(Dim::fixed(0).is_static());
  EXPECT_NE(Dim::fixed(1), n);
}

TEST(Dim, InferredExtentIsMinusOne) {
  EXPECT_EQ(Dim::fixed(-1), Dim::inferred());
  EXPECT_TRUE(Dim::inferred().is_inferred());
  EXPECT_FALSE(Dim::inferred().is_static());
  EXPECT_EQ(Dim::inferred().symbol_name(), "-1");
  EXPECT_FALSE(Dim::symbol("k").is_inferred());
}

TEST(Type, EqualTypesAreTheSamePointer) {
  auto shape = dims({16, 16});
  TypeRef a = Type::tensor(DType::Float32, shape);
  TypeRef b = Type::tensor(DType::Float32, dims({16, 16}));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, Type::tensor(DType::Float16, shape));
  EXPECT_NE(a, Type::tensor(DType::Float32, dims({16})));
  EXPECT_NE(a, Type::tensor_of_rank(DType::Float32, 2));
  EXPECT_EQ(Type::tensor_of_rank(DType::Float32, 2), Type::tensor_of_rank(DType::Float32, 2));
  EXPECT_EQ(Type::tensor_of_rank(DType::Int8, -7), Type::tensor_of_rank(DType::Int8, -1));
  TypeRef fields[] = {a, Type::shape(2)};
  EXPECT_EQ(Type::tuple(fields), Type::tuple(fields));
  EXPECT_NE(Type::tuple(fields), Type::tuple(std::span<const TypeRef>(fields, 1)));
  EXPECT_EQ(Type::unknown(), Type::unknown());
  EXPECT_NE(Type::unknown(), Type::object());
  EXPECT_EQ(Type::shape(3), Type::shape(3));
}

TEST(Type, Accessors) {
  std::vector<Dim> shape = {Dim::fixed(2), Dim::symbol("n")};
  TypeRef t = Type::tensor(DType::Int64, shape);
  EXPECT_TRUE(t->is_tensor());
  EXPECT_EQ(t->rank(), 2);
  EXPECT_TRUE(t->has_shape());
  EXPECT_EQ(t->dtype(), DType::Int64);
  EXPECT_EQ(t->dims()[1], Dim::symbol("n"));
  EXPECT_EQ(t->static_num_elements(), -1);
  EXPECT_EQ(Type::tensor(DType::Float32, dims({2, 3, 4}))->static_num_elements(), 24);
  EXPECT_EQ(Type::tensor(DType::Float32, {})->static_num_elements(), 1);
  EXPECT_EQ(Type::tensor_of_rank(DType::Float32, 2)->static_num_elements(), -1);
  EXPECT_EQ(Type::shape(-1)->rank(), -1);
}

TEST(Type, PrintsLikeTvmScript) {
  EXPECT_EQ(Type::tensor(DType::Float32, dims({16, 16}))->str(), "R.Tensor((16, 16), dtype=\"float32\")");
  EXPECT_EQ(Type::tensor(DType::Unknown, dims({1024}))->str(), "R.Tensor((1024,))");
  EXPECT_EQ(Type::tensor(DType::Float32, {})->str(), "R.Tensor((), dtype=\"float32\")");
  EXPECT_EQ(Type::tensor_of_rank(DType::Float32, 2)->str(), "R.Tensor(dtype=\"float32\", ndim=2)");
  EXPECT_EQ(Type::tensor_of_rank(DType::Unknown, 3)->str(), "R.Tensor(ndim=3)");
  EXPECT_EQ(Type::tensor_of_rank(DType::Int64, -1)->str(), "R.Tensor(dtype=\"int64\")");
  EXPECT_EQ(Type::tensor_of_rank(DType::Unknown, -1)->str(), "R.Tensor");
  std::vector<Dim> symbolic = {Dim::symbol("n"), Dim::fixed(4)};
  EXPECT_EQ(Type::tensor(DType::Float16, symbolic)->str(), "R.Tensor((n, 4), dtype=\"float16\")");
  TypeRef fields[] = {Type::tensor(DType::Float32, dims({2})), Type::tensor(DType::Bool, dims({1, 3}))};
  EXPECT_EQ(Type::tuple(fields)->str(), "R.Tuple(R.Tensor((2,), dtype=\"float32\"), R.Tensor((1, 3), dtype=\"bool\"))");
  EXPECT_EQ(Type::tuple({})->str(), "R.Tuple");
  EXPECT_EQ(Type::shape(4)->str(), "R.Shape(ndim=4)");
  EXPECT_EQ(Type::object()->str(), "R.Object");
  EXPECT_EQ(dims_str(dims({7})), "(7,)");
  EXPECT_EQ(dims_str({}), "()");
}

}  // namespace
}  // namespace dpl
