// Operators without a mapping, kept as opaque calls: the ONNX side of dpl/ir/opaque_ops.h (attribute signatures from
// ONNX's schemas, attribute values, declared output types).
#include <onnx/defs/schema.h>

#include <algorithm>

#include "dpl/ir/opaque_ops.h"
#include "onnx_import_internal.h"

namespace dpl::onnx_import {

namespace {

using ::onnx::AttributeProto;

std::string join_numbers(const auto& values) {
  std::string text = "[";
  for (const auto& value : values) {
    if (text.size() > 1) text += ", ";
    text += attr_value_str(AttrValue(value));
  }
  return text + "]";
}

// The attribute kind an ONNX attribute type is held in: numbers and int lists natively, everything else
// (float lists, strings lists, tensors, graphs) as descriptive text; chosen by the rule the reader uses too.
AttrKind kind_of(AttributeProto::AttributeType type, bool optional) {
  OpaqueAttrValues values;
  switch (type) {
    case AttributeProto::INT: values.add(int64_t{0}); break;
    case AttributeProto::FLOAT: values.add(0.0); break;
    case AttributeProto::INTS: values.add(std::vector<int64_t>()); break;
    default: values.add(std::string()); break;
  }
  if (optional) values.add_none();
  return *values.kind();
}

AttrValue value_of(const AttributeProto& attr) {
  switch (attr.type()) {
    case AttributeProto::INT: return attr.i();
    case AttributeProto::FLOAT: return static_cast<double>(attr.f());
    case AttributeProto::STRING: return attr.s();
    case AttributeProto::INTS: return std::vector<int64_t>(attr.ints().begin(), attr.ints().end());
    case AttributeProto::FLOATS: {
      std::vector<double> values(attr.floats().begin(), attr.floats().end());
      return join_numbers(values);
    }
    case AttributeProto::STRINGS: {
      std::string text;
      for (const std::string& value : attr.strings()) text += (text.empty() ? "" : ",") + value;
      return text;
    }
    case AttributeProto::TENSOR: {
      std::string error;
      TypeRef type = tensor_proto_type(attr.t(), error);
      return type != nullptr ? "tensor " + type->str() : "tensor";
    }
    case AttributeProto::GRAPH: return "graph " + attr.g().name() + " (not imported)";
    default: return std::string("attribute of type ") + AttributeProto::AttributeType_Name(attr.type());
  }
}

// The opaque op's attributes: the operator's ONNX schema when ONNX knows it and the node fits it (every
// attribute, defaults included, so all nodes of the operator share one signature), else the node's own.
std::vector<AttrSpec> attribute_specs(const ::onnx::NodeProto& node, int64_t opset) {
  const std::string domain = is_standard_domain(node.domain()) ? "" : node.domain();
  const ::onnx::OpSchema* schema = ::onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset), domain);
  std::vector<AttrSpec> specs;
  if (schema != nullptr) {
    for (const auto& [name, attr] : schema->attributes()) {
      const bool has_default = attr.default_value.has_type();
      AttrSpec spec{name, kind_of(attr.type, !has_default), std::monostate{}};
      if (has_default) spec.default_value = value_of(attr.default_value);
      specs.push_back(std::move(spec));
    }
    bool fits = true;
    for (const AttributeProto& attr : node.attribute()) {
      auto it =
          std::find_if(specs.begin(), specs.end(), [&](const AttrSpec& spec) { return spec.name == attr.name(); });
      AttrValue value = value_of(attr);
      fits = fits && it != specs.end() && attr_matches_kind(it->kind, value);
    }
    if (fits) return specs;
    specs.clear();
  }
  for (const AttributeProto& attr : node.attribute())
    specs.push_back(AttrSpec{attr.name(), kind_of(attr.type(), false), value_of(attr)});
  std::sort(specs.begin(), specs.end(), [](const AttrSpec& a, const AttrSpec& b) { return a.name < b.name; });
  return specs;
}

}  // namespace

std::vector<Node*> convert_opaque(const NodeView& node, std::string& registered_name) {
  const ::onnx::NodeProto& proto = node.proto;
  const std::string base = std::string(kOnnxOpaquePrefix) +
                           (is_standard_domain(proto.domain()) ? "" : identifier_from(proto.domain()) + ".") +
                           identifier_from(proto.op_type());
  const std::vector<AttrSpec> specs = attribute_specs(proto, node.context.opset());
  // Nodes of one operator may differ in attributes (a custom op's nodes, an op at two opsets): one op per signature.
  std::string error;
  const std::optional<OpId> id = register_onnx_opaque_variant(base, specs, registered_name, error);
  if (!id) throw BuildError(error);
  const OpInfo& registered = OpRegistry::global().get(*id);

  // The defaults are this operator's own: an op of the same signature registered first (by the reader, from the
  // values of its calls) may hold others.
  AttrList attrs;
  for (const AttrSpec& spec : specs) attrs.push_back(spec.default_value);
  attrs.emplace_back(std::string());
  for (const AttributeProto& attr : proto.attribute()) {
    int index = registered.attr_index(attr.name());
    AttrValue value = value_of(attr);
    if (index >= 0 && attr_matches_kind(registered.attrs[static_cast<size_t>(index)].kind, value))
      attrs[static_cast<size_t>(index)] = std::move(value);
  }
  std::vector<TypeRef> output_types;
  for (const std::string& output : proto.output()) output_types.push_back(node.context.declared_type(output));
  attrs.back() = result_types_spelling(output_types);

  std::vector<Node*> operands;
  for (Node* input : node.inputs)
    if (input != nullptr) operands.push_back(input);
  Node* call = node.context.function().add_call(*id, operands, std::move(attrs), error);
  if (call == nullptr) throw BuildError(error);
  if (proto.output_size() == 1) return {call};
  std::vector<Node*> outputs;
  for (int i = 0; i < proto.output_size(); ++i) outputs.push_back(node.context.build().item(call, i));
  return outputs;
}

}  // namespace dpl::onnx_import
