// The operand and result kinds dplc reads off the built-in ops' type inference (never_match.h) hold for concrete
// values: no call of concrete tensors, shapes and tuples type-checks with a kind the signature rules out.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dpl/compiler/never_match.h"
#include "dpl/ir/graph.h"

namespace {

using dpl::compiler::kind_signature;
using dpl::compiler::KindSignature;
using dpl::compiler::ValueKind;

size_t index(ValueKind kind) { return static_cast<size_t>(kind); }

std::optional<ValueKind> kind_of(dpl::TypeRef type) {
  switch (type->kind()) {
    case dpl::TypeKind::Tensor:
      return ValueKind::Tensor;
    case dpl::TypeKind::Shape:
      return ValueKind::Shape;
    case dpl::TypeKind::Tuple:
      return ValueKind::Tuple;
    case dpl::TypeKind::Unknown:
      return ValueKind::Untyped;
    case dpl::TypeKind::Object:
      break;
  }
  return std::nullopt;
}

// Concrete values of every kind: tensors of ranks 0 to 3 in three dtypes, shape literals of ranks 0 to 3, a
// shape-typed value, tuples of one to three tensors, and a value of unknown type.
std::vector<dpl::Node*> concrete_values(dpl::Function& function) {
  std::vector<dpl::Node*> values;
  for (dpl::DType dtype : {dpl::DType::Float32, dpl::DType::Int32, dpl::DType::Bool}) {
    for (size_t rank = 0; rank <= 3; ++rank) {
      std::vector<dpl::Dim> dims(rank, dpl::Dim::fixed(2));
      values.push_back(function.add_param("", dpl::Type::tensor(dtype, dims)));
    }
  }
  for (size_t rank = 0; rank <= 3; ++rank) {
    values.push_back(function.add_shape(std::vector<dpl::Dim>(rank, dpl::Dim::fixed(2))));
  }
  values.push_back(function.add_param("", dpl::Type::shape(2)));
  dpl::TypeRef matrix = dpl::Type::tensor(dpl::DType::Float32, std::vector<dpl::Dim>(2, dpl::Dim::fixed(2)));
  for (size_t fields = 1; fields <= 3; ++fields) {
    values.push_back(function.add_param("", dpl::Type::tuple(std::vector<dpl::TypeRef>(fields, matrix))));
  }
  values.push_back(function.add_param("", dpl::Type::unknown()));
  return values;
}

TEST(KindSignatures, NoConcreteCallTypeChecksWithAKindItsSignatureRulesOut) {
  const dpl::OpRegistry& registry = dpl::OpRegistry::global();
  dpl::Function function("concrete");
  const std::vector<dpl::Node*> values = concrete_values(function);
  size_t checked_calls = 0;
  size_t ruled_out = 0;  // operand positions whose signature rules out some kind: what the check relies on
  for (dpl::OpId op = 0; op < dpl::op::kNumBuiltinOps; ++op) {
    const dpl::OpInfo& info = registry.get(op);
    const size_t most = info.max_operands < 0 ? static_cast<size_t>(info.min_operands) + 1
                                              : static_cast<size_t>(info.max_operands);
    for (size_t count = static_cast<size_t>(info.min_operands); count <= std::min<size_t>(most, 3); ++count) {
      KindSignature signature = kind_signature(registry, op, count);
      if (!signature.known) continue;
      for (const auto& accepts : signature.accepts) {
        for (bool accepted : accepts) ruled_out += accepted ? 0 : 1;
      }
      const dpl::AttrList attrs = info.default_attrs();
      std::vector<size_t> choice(count, 0);
      std::vector<dpl::Node*> operands(count);
      while (true) {
        for (size_t i = 0; i < count; ++i) operands[i] = values[choice[i]];
        std::string error;
        if (dpl::TypeRef result = info.infer(dpl::InferInput{operands, attrs}, error)) {
          ++checked_calls;
          for (size_t i = 0; i < count; ++i) {
            std::optional<ValueKind> kind = kind_of(operands[i]->type());
            ASSERT_TRUE(kind.has_value());
            EXPECT_TRUE(signature.accepts[i][index(*kind)])
                << info.name << " operand " << i << " of " << count << ": " << operands[i]->type()->str();
          }
          std::optional<ValueKind> result_kind = kind_of(result);
          ASSERT_TRUE(result_kind.has_value()) << info.name;
          EXPECT_TRUE(signature.results[index(*result_kind)]) << info.name << " returned " << result->str();
        }
        size_t i = 0;
        while (i < count && ++choice[i] == values.size()) choice[i++] = 0;
        if (i == count) break;
      }
    }
  }
  EXPECT_GT(checked_calls, 1000u);
  EXPECT_GT(ruled_out, 100u);
}

TEST(KindSignatures, ShapeOperandsTupleOperandsAndTupleResults) {
  const dpl::OpRegistry& registry = dpl::OpRegistry::global();
  KindSignature broadcast_to = kind_signature(registry, dpl::op::broadcast_to, 2);
  ASSERT_TRUE(broadcast_to.known);
  EXPECT_TRUE(broadcast_to.accepts[1][index(ValueKind::Shape)]);
  EXPECT_FALSE(broadcast_to.accepts[1][index(ValueKind::Tensor)]);
  EXPECT_FALSE(broadcast_to.accepts[1][index(ValueKind::Tuple)]);
  EXPECT_TRUE(broadcast_to.accepts[0][index(ValueKind::Tensor)]);
  EXPECT_FALSE(broadcast_to.accepts[0][index(ValueKind::Shape)]);

  KindSignature concat = kind_signature(registry, dpl::op::concat, 1);
  ASSERT_TRUE(concat.known);
  EXPECT_TRUE(concat.accepts[0][index(ValueKind::Tuple)]);
  EXPECT_FALSE(concat.accepts[0][index(ValueKind::Tensor)]);

  KindSignature split = kind_signature(registry, dpl::op::split, 1);
  ASSERT_TRUE(split.known);
  EXPECT_TRUE(split.results[index(ValueKind::Tuple)]);
  EXPECT_FALSE(split.results[index(ValueKind::Tensor)]);

  KindSignature exp = kind_signature(registry, dpl::op::exp, 1);
  ASSERT_TRUE(exp.known);
  EXPECT_TRUE(exp.results[index(ValueKind::Tensor)]);
  EXPECT_FALSE(exp.results[index(ValueKind::Tuple)]);
  // An operand of unknown type (an unannotated parameter) is taken for a tensor nothing is known about.
  EXPECT_TRUE(exp.accepts[0][index(ValueKind::Untyped)]);

  // Ops that are not built in, and operand counts the op does not take, say nothing.
  EXPECT_FALSE(kind_signature(registry, dpl::op::exp, 2).known);
}

}  // namespace
