// The Builder: graph construction by op name and keyword attributes, throwing BuildError on any mistake.
#include "dpl/ir/builder.h"

namespace dpl {

namespace {

void require_operands(std::string_view what, std::span<Node* const> operands) {
  for (Node* operand : operands)
    if (operand == nullptr) throw BuildError(std::string(what) + ": an operand is null");
}

}  // namespace

Node* Builder::param(std::string name, TypeRef type) {
  if (type == nullptr) throw BuildError("parameter " + name + " has no type");
  return function_.add_param(std::move(name), type);
}

Node* Builder::scalar(double value, DType dtype) {
  if (dtype == DType::Unknown) throw BuildError("a constant needs a dtype");
  Literal literal;
  literal.dtype = dtype;
  literal.values = {value};
  return function_.add_constant(std::move(literal));
}

Node* Builder::call(std::string_view op, std::initializer_list<Node*> operands, std::initializer_list<KwArg> attrs) {
  return call(op, std::vector<Node*>(operands), std::vector<KwArg>(attrs));
}

Node* Builder::call(std::string_view op, const std::vector<Node*>& operands, const std::vector<KwArg>& attrs) {
  const OpInfo* info = OpRegistry::global().find(op);
  if (info == nullptr) throw BuildError("unknown op '" + std::string(op) + "'");
  require_operands(info->name, operands);
  AttrList values = info->default_attrs();
  for (const auto& [name, value] : attrs) {
    int index = info->attr_index(name);
    if (index < 0) throw BuildError(info->name + " has no attribute '" + std::string(name) + "'");
    values[static_cast<size_t>(index)] = value;
  }
  std::string error;
  Node* node = function_.add_call(info->id, operands, std::move(values), error);
  if (node == nullptr) throw BuildError(error);
  return node;
}

Node* Builder::shape(std::vector<int64_t> dims) {
  std::vector<Dim> values;
  values.reserve(dims.size());
  for (int64_t extent : dims) {
    if (extent < -1) throw BuildError("shape extent " + std::to_string(extent) + " is negative");
    values.push_back(extent == -1 ? Dim::inferred() : Dim::fixed(extent));
  }
  return function_.add_shape(std::move(values));
}

Node* Builder::tuple(std::initializer_list<Node*> fields) {
  require_operands("tuple", fields);
  return function_.add_tuple(std::vector<Node*>(fields));
}

Node* Builder::item(Node* tuple, int64_t index) {
  std::string error;
  Node* node = function_.add_tuple_item(tuple, index, error);
  if (node == nullptr) throw BuildError(error);
  return node;
}

void Builder::output(Node* value) {
  if (value == nullptr) throw BuildError("the output is null");
  function_.set_output(value);
}

}  // namespace dpl
