// Folding shape arithmetic: small integer results of calls on literals, computed by the reference interpreter.
#include <unordered_map>

#include "dpl/interp/interpreter.h"
#include "onnx_import_internal.h"

namespace dpl::onnx_import {

namespace {

// A literal, or a tuple of literals (concat's operand).
bool is_literal_tree(const Node* node) {
  if (node->kind() == NodeKind::Constant) return true;
  if (node->kind() != NodeKind::Tuple) return false;
  for (const Node* field : node->operands())
    if (field->kind() != NodeKind::Constant) return false;
  return true;
}

// Copies a literal tree into `scratch`.
Node* copy_literal_tree(Function& scratch, const Node* node) {
  if (node->kind() == NodeKind::Constant) return scratch.add_constant(node->literal());
  std::vector<Node*> fields;
  for (const Node* field : node->operands()) fields.push_back(scratch.add_constant(field->literal()));
  return scratch.add_tuple(fields);
}

}  // namespace

Node* fold_shape_arithmetic(Function& function, Node* value, int64_t max_elements) {
  if (!value->is_call() || is_onnx_opaque_op(value->op())) return nullptr;
  TypeRef type = value->type();
  if (!type->is_tensor() || !(is_integer(type->dtype()) || type->dtype() == DType::Bool)) return nullptr;
  const int64_t count = type->static_num_elements();
  if (count < 0 || count > max_elements) return nullptr;
  for (const Node* operand : value->operands())
    if (!is_literal_tree(operand)) return nullptr;

  Function scratch("fold");
  std::vector<Node*> operands;
  for (const Node* operand : value->operands()) operands.push_back(copy_literal_tree(scratch, operand));
  std::string error;
  Node* call = scratch.add_call(value->op(), operands, value->attrs(), error);
  if (call == nullptr) return nullptr;
  scratch.set_output(call);
  EvalResult result = Interpreter().evaluate(scratch, {});
  if (!result.ok() || !result.value.is_tensor()) return nullptr;  // left to run time, as the model wrote it
  const Tensor& tensor = result.value.tensor();
  return function.add_constant(Literal{tensor.dtype(), tensor.shape(), tensor.values()});
}

}  // namespace dpl::onnx_import
