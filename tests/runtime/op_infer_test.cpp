// Tests of the registry's type inference for every op family, including the error messages.
#include <gtest/gtest.h>

#include <algorithm>

#include "dpl/ir/builder.h"

namespace dpl {
namespace {

using Ints = std::vector<int64_t>;

std::string f32(const std::string& shape) { return "R.Tensor(" + shape + ", dtype=\"float32\")"; }
std::string typed(const std::string& shape, const std::string& dtype) {
  return "R.Tensor(" + shape + ", dtype=\"" + dtype + "\")";
}

class Infer : public ::testing::Test {
 protected:
  Node* tensor(std::vector<Dim> dims, DType dtype = DType::Float32) {
    return b.param("p" + std::to_string(f.params().size()), Type::tensor(dtype, dims));
  }
  Node* tensor(std::initializer_list<int64_t> extents, DType dtype = DType::Float32) {
    std::vector<Dim> dims;
    for (int64_t extent : extents) dims.push_back(Dim::fixed(extent));
    return tensor(dims, dtype);
  }
  Node* of_rank(int rank, DType dtype = DType::Float32) {
    return b.param("r" + std::to_string(f.params().size()), Type::tensor_of_rank(dtype, rank));
  }
  std::string type(std::string_view op, const std::vector<Node*>& operands,
                   const std::vector<Builder::KwArg>& attrs = {}) {
    try {
      return b.call(op, operands, attrs)->type()->str();
    } catch (const BuildError& error) {
      return std::string("error: ") + error.what();
    }
  }
  std::string error(std::string_view op, const std::vector<Node*>& operands,
                    const std::vector<Builder::KwArg>& attrs = {}) {
    try {
      b.call(op, operands, attrs);
    } catch (const BuildError& error) {
      return error.what();
    }
    return "no error";
  }

  Function f{"main"};
  Builder b{f};
  Dim n = Dim::symbol("n");
  Dim m = Dim::symbol("m");
};

// Function answers ops with kTypeOfOperands from their operands' types where it can (no inference, no memo); the
// answer must be what the op's inference gives, for every such op and every pair of these types, and so must the
// failures.
TEST_F(Infer, TheOperandTypeShortcutGivesWhatInferenceGives) {
  const std::vector<Node*> values = {
      tensor({2, 3}),          tensor({}),
      tensor({}, DType::Int64), tensor({2, 3}, DType::Int64),
      tensor(std::vector<Dim>{n, Dim::fixed(3)}), tensor({1}),
      of_rank(2),              of_rank(-1),
      of_rank(0),  // rank 0 without a shape: not a scalar the shortcut may use
      b.param("u", Type::tensor(DType::Unknown, std::vector<Dim>{Dim::fixed(2), Dim::fixed(3)})),
      b.param("s", Type::tensor(DType::Unknown, std::vector<Dim>{})),
      b.param("any", Type::unknown()),
      b.param("t", Type::tuple(std::vector<TypeRef>{Type::tensor_of_rank(DType::Float32, 1)})),
      b.param("shape", Type::shape(2)),
  };
  const OpRegistry& registry = OpRegistry::global();
  size_t ops = 0;
  size_t shortcuts = 0;
  for (OpId op = 0; op < registry.size(); ++op) {
    const OpInfo& info = registry.get(op);
    if (!info.has(kTypeOfOperands)) continue;
    ++ops;
    const AttrList* attrs = f.default_attrs(op);
    auto expect_agreement = [&](std::vector<Node*> operands) {
      std::string direct_error;
      std::string error;
      TypeRef direct = info.infer(InferInput{operands, *attrs}, direct_error);
      TypeRef answered = f.infer_call(op, operands, attrs, error);
      std::string types;
      for (const Node* operand : operands) types += " " + operand->type()->str();
      EXPECT_EQ(answered, direct) << info.name << types << ": " << (answered ? answered->str() : error) << " vs "
                                  << (direct ? direct->str() : direct_error);
      EXPECT_EQ(error.empty(), direct_error.empty()) << info.name << types;
      if (direct != nullptr && std::any_of(operands.begin(), operands.end(),
                                           [&](const Node* operand) { return operand->type() == direct; })) {
        ++shortcuts;
      }
    };
    for (Node* x : values) {
      if (info.max_operands == 1) {
        expect_agreement({x});
        continue;
      }
      for (Node* y : values) expect_agreement({x, y});
    }
  }
  EXPECT_GE(ops, 10u);        // the arithmetic binaries and the unary ops that keep any dtype
  EXPECT_GE(shortcuts, 50u);  // pairs typed as one of their operands: the shortcut's cases are among them
}

TEST_F(Infer, BinaryBroadcasting) {
  Node* a = tensor({2, 3});
  EXPECT_EQ(type("add", {a, a}), f32("(2, 3)"));
  EXPECT_EQ(type("add", {a, tensor({3})}), f32("(2, 3)"));
  EXPECT_EQ(type("multiply", {tensor({4, 1, 3}), tensor({5, 1})}), f32("(4, 5, 3)"));
  EXPECT_EQ(type("subtract", {tensor({}), a}), f32("(2, 3)"));
  EXPECT_EQ(error("add", {a, tensor({4})}), "add: cannot broadcast shapes (2, 3) and (4,)");
  EXPECT_EQ(error("add", {a, tensor({2, 3}, DType::Int64)}), "add: operand dtypes float32 and int64 differ");
  EXPECT_EQ(type("power", {a, tensor({2, 3}, DType::Unknown)}), "R.Tensor((2, 3))");
}

TEST_F(Infer, BinarySymbolicAndRankOnly) {
  Node* x = tensor({n, Dim::fixed(4)});
  EXPECT_EQ(type("add", {x, tensor({4})}), f32("(n, 4)"));
  EXPECT_EQ(type("add", {x, tensor({Dim::fixed(1), Dim::fixed(4)})}), f32("(n, 4)"));
  EXPECT_EQ(type("add", {x, tensor({n, Dim::fixed(1)})}), f32("(n, 4)"));
  // n against m cannot be decided: the rank is known, the shape is not.
  EXPECT_EQ(type("add", {x, tensor({m, Dim::fixed(4)})}), "R.Tensor(dtype=\"float32\", ndim=2)");
  EXPECT_EQ(type("add", {x, of_rank(3)}), "R.Tensor(dtype=\"float32\", ndim=3)");
  EXPECT_EQ(type("add", {x, of_rank(-1)}), "R.Tensor(dtype=\"float32\")");
}

TEST_F(Infer, HighRankTensors) {
  // More dimensions than inference keeps inline.
  Node* a = tensor({2, 1, 3, 1, 4, 1, 5, 1, 6, 1});
  Node* c = tensor({7, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 9});
  EXPECT_EQ(type("add", {a, c}), f32("(7, 1, 2, 1, 3, 1, 4, 1, 5, 1, 6, 9)"));
  EXPECT_EQ(type("sum", {c}, {{"axis", Ints{0}}}), f32("(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 9)"));
}

TEST_F(Infer, ComparisonsAndLogic) {
  Node* a = tensor({2, 3});
  EXPECT_EQ(type("less", {a, tensor({3})}), typed("(2, 3)", "bool"));
  EXPECT_EQ(type("equal", {a, a}), typed("(2, 3)", "bool"));
  Node* mask = tensor({2, 3}, DType::Bool);
  EXPECT_EQ(type("logical_and", {mask, mask}), typed("(2, 3)", "bool"));
  EXPECT_EQ(type("logical_not", {mask}), typed("(2, 3)", "bool"));
  EXPECT_EQ(type("bitwise_or", {tensor({3}, DType::Int32), tensor({3}, DType::Int32)}), typed("(3,)", "int32"));
  EXPECT_EQ(error("bitwise_and", {a, a}), "bitwise_and: requires integer or bool operands, got float32");
}

TEST_F(Infer, UnaryAndCasts) {
  Node* a = tensor({2, 3});
  for (const char* op : {"exp", "log", "sqrt", "rsqrt", "negative", "abs", "tanh", "sigmoid", "erf", "cos", "sin",
                         "nn.relu", "nn.gelu", "nn.gelu_tanh", "nn.silu", "nn.leaky_relu"})
    EXPECT_EQ(type(op, {a}), f32("(2, 3)")) << op;
  Node* ints = tensor({4}, DType::Int64);
  EXPECT_EQ(error("exp", {ints}), "exp: operand must have a float dtype, got int64");
  EXPECT_EQ(type("negative", {ints}), typed("(4,)", "int64"));
  EXPECT_EQ(type("astype", {ints}, {{"dtype", std::string("float32")}}), f32("(4,)"));
  EXPECT_EQ(error("astype", {ints}), "astype: dtype is required");
  EXPECT_EQ(error("astype", {ints}, {{"dtype", std::string("float33")}}),
            "astype: attribute dtype must be dtype, got \"float33\"");
  EXPECT_EQ(type("clip", {a}, {{"min", 0.0}, {"max", int64_t{6}}}), f32("(2, 3)"));
  EXPECT_EQ(error("clip", {a}, {{"min", 1.0}, {"max", 0.0}}), "clip: min 1.0 is greater than max 0.0");
  EXPECT_EQ(error("exp", {a, a}), "exp: expected 1 operands, got 2");
}

TEST_F(Infer, Where) {
  Node* cond = tensor({1, 1, 11, 11}, DType::Bool);
  Node* scalar = b.scalar(-3.4028234663852886e+38);
  EXPECT_EQ(type("where", {cond, scalar, tensor({1, 12, 11, 11})}), f32("(1, 12, 11, 11)"));
  EXPECT_EQ(error("where", {tensor({3}), tensor({3}), tensor({3})}), "where: condition must be bool, got float32");
  EXPECT_EQ(error("where", {cond, scalar, tensor({2}, DType::Float16)}),
            "where: operand dtypes float32 and float16 differ");
}

TEST_F(Infer, Matmul) {
  EXPECT_EQ(type("matmul", {tensor({1, 11, 768}), tensor({768, 3072})}), f32("(1, 11, 3072)"));
  EXPECT_EQ(type("matmul", {tensor({2, 1, 4, 8}), tensor({3, 8, 5})}), f32("(2, 3, 4, 5)"));
  EXPECT_EQ(type("matmul", {tensor({8}), tensor({8, 5})}), f32("(5,)"));
  EXPECT_EQ(type("matmul", {tensor({4, 8}), tensor({8})}), f32("(4,)"));
  EXPECT_EQ(type("matmul", {tensor({8}), tensor({8})}), f32("()"));
  EXPECT_EQ(type("matmul", {tensor({n, Dim::fixed(8)}), tensor({8, 2})}), f32("(n, 2)"));
  EXPECT_EQ(
      type("matmul", {tensor({4, 8}, DType::Int8), tensor({8, 2}, DType::Int8)}, {{"out_dtype", std::string("int32")}}),
      typed("(4, 2)", "int32"));
  EXPECT_EQ(type("matmul", {of_rank(3), tensor({8, 2})}), "R.Tensor(dtype=\"float32\", ndim=3)");
  EXPECT_EQ(error("matmul", {tensor({4, 64}), tensor({32, 2})}), "matmul: inner dimensions 64 and 32 differ");
  EXPECT_EQ(error("matmul", {tensor({2, 4, 8}), tensor({3, 8, 2})}),
            "matmul: cannot broadcast batch shapes (2,) and (3,)");
  EXPECT_EQ(error("matmul", {tensor({4, 8}), tensor({8, 2}, DType::Float16)}),
            "matmul: operand dtypes float32 and float16 differ");
  EXPECT_EQ(error("matmul", {tensor({}), tensor({8, 2})}), "matmul: operands must have rank >= 1, got a scalar");
}

TEST_F(Infer, PermuteDims) {
  Node* w = tensor({768, 3072});
  EXPECT_EQ(type("permute_dims", {w}, {{"axes", Ints{1, 0}}}), f32("(3072, 768)"));
  EXPECT_EQ(type("permute_dims", {w}), f32("(3072, 768)"));
  EXPECT_EQ(type("permute_dims", {tensor({1, 11, 12, 64})}, {{"axes", Ints{0, 2, -1, 1}}}), f32("(1, 12, 64, 11)"));
  EXPECT_EQ(error("permute_dims", {w}, {{"axes", Ints{0, 0}}}), "permute_dims: axes [0, 0] repeat axis 0");
  EXPECT_EQ(error("permute_dims", {w}, {{"axes", Ints{0, 1, 2}}}),
            "permute_dims: axes [0, 1, 2] has 3 entries but the tensor has rank 2");
  EXPECT_EQ(error("permute_dims", {w}, {{"axes", Ints{0, 2}}}), "permute_dims: axis 2 is out of range for rank 2");
}

TEST_F(Infer, Reshape) {
  Node* x = tensor({1, 11, 768});
  EXPECT_EQ(type("reshape", {x, b.shape({1, 11, 12, 64})}), f32("(1, 11, 12, 64)"));
  EXPECT_EQ(type("reshape", {x, b.shape({-1, 64})}), f32("(132, 64)"));
  EXPECT_EQ(error("reshape", {x, b.shape({5, 3})}), "reshape: cannot reshape (1, 11, 768) into (5, 3)");
  EXPECT_EQ(error("reshape", {x, b.shape({-1, 5})}), "reshape: cannot reshape (1, 11, 768) into (-1, 5)");
  EXPECT_EQ(error("reshape", {x, b.shape({-1, -1})}), "reshape: new shape (-1, -1) has more than one -1");
  EXPECT_EQ(error("reshape", {x, x}),
            "reshape: new shape must be a shape (R.shape([...])), got R.Tensor((1, 11, 768), dtype=\"float32\")");
  Node* sym = tensor({n, Dim::fixed(4), Dim::fixed(8)});
  Node* target = f.add_shape({n, Dim::fixed(32)});
  EXPECT_EQ(type("reshape", {sym, target}), f32("(n, 32)"));
  EXPECT_EQ(error("reshape", {sym, f.add_shape({n, Dim::fixed(31)})}),
            "reshape: cannot reshape (n, 4, 8) into (n, 31)");
  EXPECT_EQ(type("reshape", {sym, f.add_shape({Dim::inferred(), Dim::fixed(32)})}), f32("(n, 32)"));
  EXPECT_EQ(type("reshape", {sym, f.add_shape({m, Dim::fixed(32)})}), f32("(m, 32)"));  // cannot be disproved
}

// Extents computed over symbols are expressions: reshape's -1 takes the exact quotient of the element counts.
TEST_F(Infer, ReshapeWithExpressions) {
  Node* x = tensor({Dim::symbol("b"), n, Dim::fixed(48)});
  EXPECT_EQ(type("reshape", {x, f.add_shape({Dim::symbol("b"), Dim::inferred()})}), f32("(b, n * 48)"));
  EXPECT_EQ(type("reshape", {x, f.add_shape({Dim::inferred(), Dim::fixed(24)})}), f32("(b * n * 2, 24)"));
  Node* flat = tensor({*dim_mul(n, Dim::fixed(96))});
  EXPECT_EQ(type("reshape", {flat, f.add_shape({Dim::inferred(), Dim::fixed(2), Dim::fixed(48)})}),
            f32("(n, 2, 48)"));
  Node* shifted = tensor({*dim_add(n, Dim::fixed(1)), Dim::fixed(6)});
  EXPECT_EQ(type("reshape", {shifted, f.add_shape({Dim::inferred(), Dim::fixed(3)})}), f32("(n * 2 + 2, 3)"));
  // Not exact (b * n * 48 / m): only the rank is known.
  EXPECT_EQ(type("reshape", {x, f.add_shape({m, Dim::inferred()})}),
            "R.Tensor(dtype=\"float32\", ndim=2)");
}

TEST_F(Infer, ConcatSplitAndWindowsWithExpressions) {
  Node* a = tensor({Dim::fixed(2), n});
  Node* c = tensor({Dim::fixed(2), m});
  EXPECT_EQ(type("concat", {b.tuple({a, c, a})}, {{"axis", int64_t{1}}}), f32("(2, m + n * 2)"));
  EXPECT_EQ(type("concat", {b.tuple({a, tensor({2, 3})})}, {{"axis", int64_t{1}}}), f32("(2, n + 3)"));
  EXPECT_EQ(type("concat", {b.tuple({a, c})}, {{"axis", AttrValue{}}}), f32("(m * 2 + n * 2,)"));
  EXPECT_EQ(type("split", {tensor({*dim_mul(n, Dim::fixed(4))})}, {{"indices_or_sections", int64_t{2}}}),
            "R.Tuple(" + f32("(n * 2,)") + ", " + f32("(n * 2,)") + ")");
  EXPECT_EQ(type("split", {tensor({n})}, {{"indices_or_sections", int64_t{2}}}),
            "R.Tuple(R.Tensor(dtype=\"float32\", ndim=1), R.Tensor(dtype=\"float32\", ndim=1))");
  Node* image = tensor({Dim::fixed(1), Dim::fixed(3), n, m});
  EXPECT_EQ(type("nn.conv2d", {image, tensor({8, 3, 3, 3})}, {{"strides", Ints{2, 2}}, {"padding", Ints{1, 1, 1, 1}}}),
            f32("(1, 8, (n - 1) // 2 + 1, (m - 1) // 2 + 1)"));
  EXPECT_EQ(type("nn.conv2d", {image, tensor({8, 3, 3, 3})}, {{"padding", Ints{1, 1, 1, 1}}}), f32("(1, 8, n, m)"));
  EXPECT_EQ(type("nn.max_pool2d", {image}, {{"pool_size", Ints{2, 2}}, {"strides", Ints{2, 2}}}),
            f32("(1, 3, n // 2, m // 2)"));
  EXPECT_EQ(type("nn.conv2d_transpose", {image, tensor({3, 4, 2, 2})}, {{"strides", Ints{2, 2}}}),
            f32("(1, 4, n * 2, m * 2)"));
}

TEST_F(Infer, BroadcastToExpandSqueeze) {
  Node* mask = tensor({1, 1, 1, 11});
  EXPECT_EQ(type("broadcast_to", {mask, b.shape({1, 1, 11, 11})}), f32("(1, 1, 11, 11)"));
  EXPECT_EQ(error("broadcast_to", {tensor({3, 4}), b.shape({2, 5})}),
            "broadcast_to: cannot broadcast shape (3, 4) to (2, 5)");
  EXPECT_EQ(error("broadcast_to", {tensor({3, 4}), b.shape({4})}),
            "broadcast_to: shape of rank 2 cannot be broadcast to rank 1");
  Node* ids = tensor({1, 11}, DType::Int64);
  EXPECT_EQ(type("expand_dims", {ids}, {{"axis", Ints{1, 2}}}), typed("(1, 1, 1, 11)", "int64"));
  EXPECT_EQ(type("expand_dims", {ids}, {{"axis", Ints{-1}}}), typed("(1, 11, 1)", "int64"));
  EXPECT_EQ(error("expand_dims", {ids}, {{"axis", Ints{3}}}), "expand_dims: axis 3 is out of range for rank 3");
  Node* pooled = tensor({1, 1, 768});
  EXPECT_EQ(type("squeeze", {pooled}, {{"axis", Ints{1}}}), f32("(1, 768)"));
  EXPECT_EQ(type("squeeze", {pooled}), f32("(768,)"));
  EXPECT_EQ(error("squeeze", {pooled}, {{"axis", Ints{2}}}), "squeeze: axis 2 has extent 768, not 1");
}

TEST_F(Infer, StridedSlice) {
  Node* x = tensor({1, 512});
  EXPECT_EQ(
      type("strided_slice", {x}, {{"axes", Ints{1}}, {"begin", Ints{0}}, {"end", Ints{11}}, {"strides", Ints{1}}}),
      f32("(1, 11)"));
  EXPECT_EQ(type("strided_slice", {tensor({1, 3, 32, 64})},
                 {{"axes", Ints{3}}, {"begin", Ints{32}}, {"end", Ints{9223372036854775807}}}),
            f32("(1, 3, 32, 32)"));
  EXPECT_EQ(
      type("strided_slice", {x}, {{"axes", Ints{-1}}, {"begin", Ints{-10}}, {"end", Ints{-2}}, {"strides", Ints{3}}}),
      f32("(1, 3)"));
  EXPECT_EQ(
      type("strided_slice", {x}, {{"axes", Ints{1}}, {"begin", Ints{-1}}, {"end", Ints{-513}}, {"strides", Ints{-1}}}),
      f32("(1, 512)"));
  EXPECT_EQ(type("strided_slice", {x}, {{"axes", Ints{1}}, {"begin", Ints{600}}, {"end", Ints{700}}}), f32("(1, 0)"));
  EXPECT_EQ(error("strided_slice", {x}, {{"axes", Ints{1}}, {"begin", Ints{0, 0}}, {"end", Ints{1}}}),
            "strided_slice: begin [0, 0] has 2 entries but axes [1] has 1");
  EXPECT_EQ(
      error("strided_slice", {x}, {{"axes", Ints{1}}, {"begin", Ints{0}}, {"end", Ints{1}}, {"strides", Ints{0}}}),
      "strided_slice: strides [0] must not contain 0");
  EXPECT_EQ(
      type("strided_slice", {tensor({n, Dim::fixed(8)})}, {{"axes", Ints{0}}, {"begin", Ints{1}}, {"end", Ints{3}}}),
      "R.Tensor(dtype=\"float32\", ndim=2)");
  // With assume_inbound nothing is clamped, so a slice of a symbolic extent has an exact length.
  Node* dynamic = tensor({Dim::fixed(1), n, Dim::fixed(8)});
  auto inbound = [&](int64_t begin, int64_t end, int64_t stride) {
    return type("strided_slice", {dynamic},
                {{"axes", Ints{1}}, {"begin", Ints{begin}}, {"end", Ints{end}}, {"strides", Ints{stride}},
                 {"assume_inbound", true}});
  };
  EXPECT_EQ(inbound(1, 9223372036854775807, 1), f32("(1, n - 1, 8)"));  // x[:, 1:]
  EXPECT_EQ(inbound(0, -1, 1), f32("(1, n - 1, 8)"));                   // x[:, :-1]
  EXPECT_EQ(inbound(-3, 9223372036854775807, 1), f32("(1, 3, 8)"));     // x[:, -3:]
  EXPECT_EQ(inbound(2, 5, 1), f32("(1, 3, 8)"));
  EXPECT_EQ(inbound(0, 9223372036854775807, 2), f32("(1, (n + 1) // 2, 8)"));  // x[:, ::2]
  EXPECT_EQ(inbound(-1, -9223372036854775807, -1), "R.Tensor(dtype=\"float32\", ndim=3)");  // reversed: rank only
}

TEST_F(Infer, ConcatAndSplit) {
  Node* a = tensor({1, 3, 32});
  Node* c = tensor({1, 3, 16});
  EXPECT_EQ(type("concat", {b.tuple({a, c})}, {{"axis", int64_t{-1}}}), f32("(1, 3, 48)"));
  EXPECT_EQ(type("concat", {b.tuple({a, a})}, {{"axis", AttrValue{}}}), f32("(192,)"));
  Node* pair = b.param("pair", Type::tuple(std::vector<TypeRef>{a->type(), a->type()}));
  EXPECT_EQ(type("concat", {pair}), f32("(2, 3, 32)"));
  EXPECT_EQ(error("concat", {b.tuple({a, c})}, {{"axis", int64_t{0}}}),
            "concat: fields 0 and 1 differ in dimension 2 (32 vs 16)");
  EXPECT_EQ(error("concat", {b.tuple({a, tensor({3, 32})})}), "concat: fields have ranks 3 and 2");
  EXPECT_EQ(error("concat", {a}),
            "concat: operand must be a tuple of tensors, got R.Tensor((1, 3, 32), dtype=\"float32\")");
  Node* y = tensor({1, 11, 2304});
  EXPECT_EQ(type("split", {y}, {{"indices_or_sections", Ints{768, 1536}}, {"axis", int64_t{2}}}),
            "R.Tuple(" + f32("(1, 11, 768)") + ", " + f32("(1, 11, 768)") + ", " + f32("(1, 11, 768)") + ")");
  EXPECT_EQ(type("split", {tensor({10})}, {{"indices_or_sections", int64_t{3}}}),
            "R.Tuple(" + f32("(4,)") + ", " + f32("(4,)") + ", " + f32("(2,)") + ")");
  EXPECT_EQ(error("split", {y}, {{"indices_or_sections", int64_t{0}}}),
            "split: indices_or_sections 0 must be positive");
  EXPECT_EQ(error("split", {y}, {{"axis", int64_t{3}}}), "split: axis 3 is out of range for rank 3");
}

TEST_F(Infer, Take) {
  Node* table = tensor({30522, 768});
  Node* ids = tensor({1, 11}, DType::Int64);
  EXPECT_EQ(type("take", {table, ids}, {{"axis", int64_t{0}}}), f32("(1, 11, 768)"));
  EXPECT_EQ(type("take", {tensor({5, 7}), tensor({3}, DType::Int32)}, {{"axis", int64_t{1}}}), f32("(5, 3)"));
  EXPECT_EQ(type("take", {tensor({7}), ids}), f32("(1, 11)"));
  EXPECT_EQ(error("take", {table, tensor({2})}, {{"axis", int64_t{0}}}),
            "take: indices must have an integer dtype, got float32");
  EXPECT_EQ(error("take", {table, ids}), "take: without an axis the data must be 1-D, got rank 2");
  EXPECT_EQ(error("take", {table, ids}, {{"axis", int64_t{0}}, {"mode", std::string("nearest")}}),
            "take: mode \"nearest\" must be \"fast\", \"clip\" or \"wrap\"");
}

TEST_F(Infer, ReductionsAndScans) {
  Node* x = tensor({1, 3, 2048});
  EXPECT_EQ(type("mean", {x}, {{"axis", Ints{-1}}, {"keepdims", true}}), f32("(1, 3, 1)"));
  EXPECT_EQ(type("sum", {x}, {{"axis", Ints{0, 1}}}), f32("(2048,)"));
  EXPECT_EQ(type("max", {x}), f32("()"));
  EXPECT_EQ(type("min", {x}, {{"keepdims", true}}), f32("(1, 1, 1)"));
  EXPECT_EQ(error("sum", {x}, {{"axis", Ints{1, -2}}}), "sum: axes [1, -2] repeat axis 1");
  Node* mask = tensor({1, 3}, DType::Int64);
  EXPECT_EQ(type("cumsum", {mask}, {{"axis", int64_t{1}}, {"dtype", std::string("int32")}}), typed("(1, 3)", "int32"));
  EXPECT_EQ(type("cumsum", {mask}), typed("(3,)", "int64"));
}

TEST_F(Infer, Creation) {
  EXPECT_EQ(type("arange", {},
                 {{"start", int64_t{0}}, {"end", int64_t{3}}, {"step", int64_t{1}}, {"dtype", std::string("int64")}}),
            typed("(3,)", "int64"));
  EXPECT_EQ(type("arange", {}, {{"start", int64_t{10}}, {"end", int64_t{0}}, {"step", int64_t{-3}}}),
            typed("(4,)", "int64"));
  EXPECT_EQ(type("arange", {}, {{"start", int64_t{5}}}), typed("(5,)", "int64"));
  EXPECT_EQ(error("arange", {}, {{"step", int64_t{0}}}), "arange: step must not be 0");
  Node* fill = b.scalar(-65504.0, DType::Float16);
  EXPECT_EQ(type("full", {b.shape({20, 20}), fill}, {{"dtype", std::string("float16")}}), typed("(20, 20)", "float16"));
  EXPECT_EQ(type("full", {b.shape({2}), fill}), typed("(2,)", "float16"));
  EXPECT_EQ(error("full", {b.shape({2}), tensor({2})}), "full: fill_value must be a scalar, got rank 1");
  EXPECT_EQ(type("zeros", {b.shape({2, 3})}, {{"dtype", std::string("int32")}}), typed("(2, 3)", "int32"));
  EXPECT_EQ(error("ones", {b.shape({2, 3})}), "ones: dtype is required");
  EXPECT_EQ(error("zeros", {b.shape({-1, 3})}, {{"dtype", std::string("int32")}}),
            "zeros: shape (-1, 3) must not contain -1");
  EXPECT_EQ(type("triu", {tensor({4, 4})}, {{"k", int64_t{1}}}), f32("(4, 4)"));
  EXPECT_EQ(error("tril", {tensor({4})}), "tril: operand must have rank >= 2, got 1");
}

TEST_F(Infer, Normalization) {
  Node* x = tensor({1, 11, 768});
  Node* g = tensor({768});
  EXPECT_EQ(type("nn.softmax", {x}, {{"axis", int64_t{-1}}}), f32("(1, 11, 768)"));
  EXPECT_EQ(error("nn.softmax", {x}, {{"axis", int64_t{3}}}), "nn.softmax: axis 3 is out of range for rank 3");
  EXPECT_EQ(type("nn.layer_norm", {x, g, g}, {{"axes", Ints{-1}}, {"epsilon", 1e-12}}), f32("(1, 11, 768)"));
  EXPECT_EQ(error("nn.layer_norm", {x, tensor({512}), g}),
            "nn.layer_norm: gamma has shape (512,) but the data has (768,) on axes [2]");
  EXPECT_EQ(error("nn.layer_norm", {x, g, tensor({768}, DType::Float16)}),
            "nn.layer_norm: operand dtypes float32 and float16 differ");
  EXPECT_EQ(type("nn.rms_norm", {x, g}), f32("(1, 11, 768)"));
  EXPECT_EQ(error("nn.rms_norm", {x, tensor({1, 768})}),
            "nn.rms_norm: weight must have rank 1, got R.Tensor((1, 768), dtype=\"float32\")");
  Node* image = tensor({2, 64, 8, 8});
  Node* c64 = tensor({64});
  EXPECT_EQ(type("nn.group_norm", {image, c64, c64}, {{"num_groups", int64_t{32}}}), f32("(2, 64, 8, 8)"));
  EXPECT_EQ(error("nn.group_norm", {image, c64, c64}, {{"num_groups", int64_t{3}}}),
            "nn.group_norm: channel extent 64 is not divisible by num_groups 3");
  EXPECT_EQ(type("nn.batch_norm", {image, c64, c64, c64, c64}, {{"axis", int64_t{1}}, {"training", false}}),
            "R.Tuple(" + f32("(2, 64, 8, 8)") + ", " + f32("(64,)") + ", " + f32("(64,)") + ")");
  EXPECT_EQ(error("nn.batch_norm", {image, c64, c64, tensor({32}), c64}),
            "nn.batch_norm: moving_mean has shape (32,) but the data has (64,) on axes [1]");
}

TEST_F(Infer, Convolution) {
  Node* x = tensor({1, 3, 224, 224});
  Node* w = tensor({64, 3, 7, 7});
  EXPECT_EQ(type("nn.conv2d", {x, w}, {{"strides", Ints{2, 2}}, {"padding", Ints{3, 3, 3, 3}}}),
            f32("(1, 64, 112, 112)"));
  EXPECT_EQ(type("nn.conv2d", {x, w}, {{"strides", Ints{2}}, {"padding", Ints{3, 3}}}), f32("(1, 64, 112, 112)"));
  EXPECT_EQ(type("nn.conv2d", {x, w}, {{"dilation", Ints{2, 2}}}), f32("(1, 64, 212, 212)"));
  Node* nhwc = tensor({1, 56, 56, 64});
  Node* ohwi = tensor({128, 3, 3, 32});
  EXPECT_EQ(type("nn.conv2d", {nhwc, ohwi},
                 {{"padding", Ints{1, 1, 1, 1}},
                  {"groups", int64_t{2}},
                  {"data_layout", std::string("NHWC")},
                  {"kernel_layout", std::string("OHWI")}}),
            f32("(1, 56, 56, 128)"));
  EXPECT_EQ(type("nn.conv2d", {nhwc, ohwi},
                 {{"groups", int64_t{2}},
                  {"data_layout", std::string("NHWC")},
                  {"kernel_layout", std::string("OHWI")},
                  {"out_layout", std::string("NCHW")}}),
            f32("(1, 128, 54, 54)"));
  EXPECT_EQ(error("nn.conv2d", {x, tensor({64, 4, 7, 7})}),
            "nn.conv2d: data has 3 channels but the weight expects 4 (in-channels 4 x groups 1)");
  EXPECT_EQ(error("nn.conv2d", {x, w}, {{"data_layout", std::string("NCHW4c")}}),
            "nn.conv2d: unsupported data_layout \"NCHW4c\" (expected a permutation of NCHW)");
  EXPECT_EQ(error("nn.conv2d", {x, w}, {{"padding", Ints{1, 1, 1}}}),
            "nn.conv2d: padding [1, 1, 1] must have 1, 2 or 4 values");
  EXPECT_EQ(error("nn.conv2d", {tensor({1, 3, 4, 4}), w}),
            "nn.conv2d: window of extent 7 does not fit the padded input extent 4");
  EXPECT_EQ(type("nn.conv1d", {tensor({1, 1, 16000}), tensor({512, 1, 10})}, {{"strides", Ints{5}}}),
            f32("(1, 512, 3199)"));
  EXPECT_EQ(type("nn.bias_add", {tensor({1, 64, 8, 8}), tensor({64})}), f32("(1, 64, 8, 8)"));
  EXPECT_EQ(error("nn.bias_add", {tensor({1, 64, 8, 8}), tensor({8})}),
            "nn.bias_add: bias has shape (8,) but the data has (64,) on axes [1]");
}

TEST_F(Infer, TransposedConvolution) {
  // out = (in - 1) * stride - pads + dilation * (kernel - 1) + 1 + output_padding; channels = weight O x groups.
  Node* x = tensor({1, 24, 16, 16});
  Node* w = tensor({24, 8, 2, 2});
  EXPECT_EQ(type("nn.conv2d_transpose", {x, w}, {{"strides", Ints{2, 2}}}), f32("(1, 8, 32, 32)"));
  EXPECT_EQ(type("nn.conv2d_transpose", {x, tensor({24, 4, 3, 3})},
                 {{"strides", Ints{2, 2}},
                  {"padding", Ints{1, 1}},
                  {"output_padding", Ints{1, 0}},
                  {"groups", int64_t{3}}}),
            f32("(1, 12, 32, 31)"));
  EXPECT_EQ(type("nn.conv2d_transpose", {x, w}, {{"dilation", Ints{3, 3}}}), f32("(1, 8, 19, 19)"));
  Node* nhwc = tensor({1, 16, 16, 24});
  EXPECT_EQ(type("nn.conv2d_transpose", {nhwc, tensor({2, 2, 8, 24})},
                 {{"strides", Ints{2, 2}},
                  {"data_layout", std::string("NHWC")},
                  {"kernel_layout", std::string("HWOI")}}),
            f32("(1, 32, 32, 8)"));
  // A symbolic extent: (n - 1) * 1 + 2 is an expression.
  EXPECT_EQ(type("nn.conv2d_transpose", {tensor({Dim::fixed(1), Dim::fixed(24), n, n}), w}),
            f32("(1, 8, n + 1, n + 1)"));
  EXPECT_EQ(error("nn.conv2d_transpose", {x, tensor({16, 8, 2, 2})}),
            "nn.conv2d_transpose: data channels and the weight's input channels 24 and 16 differ");
  EXPECT_EQ(error("nn.conv2d_transpose", {x, w}, {{"groups", int64_t{5}}}),
            "nn.conv2d_transpose: input channels 24 are not divisible by groups 5");
  EXPECT_EQ(error("nn.conv2d_transpose", {x, w}, {{"output_padding", Ints{1, 1}}}),
            "nn.conv2d_transpose: output_padding [1, 1] must be smaller than strides [1, 1]");
  EXPECT_EQ(error("nn.conv2d_transpose", {x, w}, {{"output_padding", Ints{-1}}}),
            "nn.conv2d_transpose: output_padding [-1] must be non-negative");
  EXPECT_EQ(error("nn.conv2d_transpose", {x, w}, {{"padding", Ints{9, 9}}}),
            "nn.conv2d_transpose: padding 9 + 9 leaves no output of input extent 16");
  EXPECT_EQ(error("nn.conv2d_transpose", {x, w}, {{"kernel_layout", std::string("IOHW4o")}}),
            "nn.conv2d_transpose: unsupported kernel_layout \"IOHW4o\" (expected a permutation of OIHW)");
}

TEST_F(Infer, Resize2d) {
  Node* x = tensor({1, 96, 4, 4});
  EXPECT_EQ(type("image.resize2d", {x, b.shape({8, 6})}), f32("(1, 96, 8, 6)"));
  EXPECT_EQ(type("image.resize2d", {tensor({2, 4, 4, 3}), b.shape({8, 8})},
                 {{"layout", std::string("NHWC")}, {"method", std::string("nearest_neighbor")}}),
            f32("(2, 8, 8, 3)"));
  EXPECT_EQ(type("image.resize2d", {x, b.shape({8, 8})}, {{"out_dtype", std::string("float16")}}),
            typed("(1, 96, 8, 8)", "float16"));
  EXPECT_EQ(type("image.resize2d", {of_rank(4), b.shape({8, 8})}), "R.Tensor(dtype=\"float32\", ndim=4)");
  EXPECT_EQ(error("image.resize2d", {x, b.shape({8})}), "image.resize2d: size must have 2 extents, got 1");
  EXPECT_EQ(error("image.resize2d", {x, b.shape({8, 0})}), "image.resize2d: size (8, 0) must be positive");
  EXPECT_EQ(error("image.resize2d", {tensor({4, 4}), b.shape({8, 8})}),
            "image.resize2d: data must have rank 4, got R.Tensor((4, 4), dtype=\"float32\")");
  EXPECT_EQ(error("image.resize2d", {x, b.shape({8, 8})}, {{"method", std::string("bilinear")}}),
            "image.resize2d: method \"bilinear\" must be one of \"nearest_neighbor\", \"linear\", \"cubic\"");
  // tf_crop_and_resize reads roi, which dpl does not model.
  EXPECT_EQ(error("image.resize2d", {x, b.shape({8, 8})},
                  {{"coordinate_transformation_mode", std::string("tf_crop_and_resize")}}),
            "image.resize2d: coordinate_transformation_mode \"tf_crop_and_resize\" must be one of \"half_pixel\", "
            "\"align_corners\", \"asymmetric\", \"pytorch_half_pixel\", \"tf_half_pixel_for_nn\"");
  EXPECT_EQ(error("image.resize2d", {x, b.shape({8, 8})}, {{"rounding_method", std::string("up")}}),
            "image.resize2d: rounding_method \"up\" must be one of \"\", \"round\", \"round_prefer_floor\", "
            "\"round_prefer_ceil\", \"floor\", \"ceil\"");
}

TEST_F(Infer, DenseAndPooling) {
  EXPECT_EQ(type("nn.dense", {tensor({4, 16}), tensor({32, 16})}), f32("(4, 32)"));
  EXPECT_EQ(error("nn.dense", {tensor({4, 16}), tensor({32, 8})}), "nn.dense: reduction dimensions 16 and 8 differ");
  Node* x = tensor({1, 64, 112, 112});
  EXPECT_EQ(
      type("nn.max_pool2d", {x}, {{"pool_size", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"padding", Ints{1, 1, 1, 1}}}),
      f32("(1, 64, 56, 56)"));
  EXPECT_EQ(type("nn.avg_pool2d", {tensor({1, 8, 5, 5})},
                 {{"pool_size", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"ceil_mode", true}}),
            f32("(1, 8, 3, 3)"));
  EXPECT_EQ(type("nn.avg_pool2d", {tensor({1, 8, 5, 5})}, {{"pool_size", Ints{2, 2}}, {"strides", Ints{2, 2}}}),
            f32("(1, 8, 2, 2)"));
  EXPECT_EQ(type("nn.adaptive_avg_pool2d", {tensor({1, 2048, 7, 7})}, {{"output_size", Ints{1, 1}}}),
            f32("(1, 2048, 1, 1)"));
  EXPECT_EQ(type("nn.adaptive_avg_pool2d", {tensor({1, 2048, 7, 7})}), f32("(1, 2048, 7, 7)"));
  EXPECT_EQ(error("nn.max_pool2d", {tensor({1, 64, 112})}),
            "nn.max_pool2d: data must have rank 4, got R.Tensor((1, 64, 112), dtype=\"float32\")");
}

TEST_F(Infer, Attention) {
  Node* q = tensor({2, 16, 32, 64});
  Node* k = tensor({2, 20, 4, 64});
  Node* v = tensor({2, 20, 4, 48});
  EXPECT_EQ(type("nn.attention", {q, k, v}), f32("(2, 16, 32, 48)"));
  EXPECT_EQ(type("nn.attention", {q, k, v, tensor({2, 32, 16, 20})},
                 {{"scale", 0.125}, {"causal_mask", std::string("TopLeft")}}),
            f32("(2, 16, 32, 48)"));
  EXPECT_EQ(type("nn.attention", {q, k, v, tensor({1, 1, 16, 20})}), f32("(2, 16, 32, 48)"));
  EXPECT_EQ(error("nn.attention", {q, k, v, tensor({2, 32, 16, 16})}),
            "nn.attention: cannot broadcast bias (2, 32, 16, 16) to (2, 32, 16, 20)");
  EXPECT_EQ(error("nn.attention", {q, tensor({2, 20, 4, 32}), v}),
            "nn.attention: head dimensions of query and key 64 and 32 differ");
  EXPECT_EQ(error("nn.attention", {q, k, tensor({2, 21, 4, 48})}),
            "nn.attention: sequence lengths of key and value 20 and 21 differ");
  EXPECT_EQ(error("nn.attention", {q, tensor({2, 20, 5, 64}), tensor({2, 20, 5, 48})}),
            "nn.attention: query heads 32 are not a multiple of key heads 5");
  EXPECT_EQ(error("nn.attention", {q, k, v}, {{"causal_mask", std::string("Diagonal")}}),
            "nn.attention: causal_mask \"Diagonal\" must be \"TopLeft\", \"BottomRight\" or None");
  EXPECT_EQ(error("nn.attention", {q, k}), "nn.attention: expected 3 to 4 operands, got 2");
}

TEST_F(Infer, AttributeErrors) {
  Node* x = tensor({2, 3});
  EXPECT_EQ(error("nn.softmax", {x}, {{"axis", std::string("last")}}),
            "nn.softmax: attribute axis must be int, got \"last\"");
  EXPECT_EQ(error("nn.softmax", {x}, {{"axes", int64_t{1}}}), "nn.softmax has no attribute 'axes'");
  EXPECT_EQ(error("no_such_op", {x}), "unknown op 'no_such_op'");
  EXPECT_EQ(error("add", {x, nullptr}), "add: an operand is null");
}

}  // namespace
}  // namespace dpl
