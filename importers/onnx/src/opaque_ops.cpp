// Operators without a mapping, kept as opaque calls: ops registered at run time as `onnx.<OpType>`, whose result
// type travels in a `result_types` attribute so that type inference, printing and reading back all see it.
#include <fmt/format.h>
#include <onnx/defs/schema.h>

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "onnx_import_internal.h"

namespace dpl::onnx_import {

namespace {

using ::onnx::AttributeProto;

constexpr std::string_view kResultTypesAttr = "result_types";

// `result_types` spelling: one entry per output, `;`-separated; an entry is `dtype:dims` where dims are
// comma-separated extents or symbols, `?` for each dimension of a tensor whose rank only is known, and `*` for a
// tensor of unknown rank. The dtype is empty when unknown. `float32:1,3,n,n;int64:*`.
std::string type_spec(TypeRef type) {
  std::string spec(dtype_name(type != nullptr ? type->dtype() : DType::Unknown));
  spec += ':';
  if (type == nullptr || !type->is_tensor() || type->rank() < 0) return spec + '*';
  for (int i = 0; i < type->rank(); ++i) {
    if (i > 0) spec += ',';
    if (!type->has_shape()) {
      spec += '?';
    } else {
      Dim dim = type->dims()[static_cast<size_t>(i)];
      spec += dim.is_static() ? std::to_string(dim.extent()) : std::string(dim.symbol_name());
    }
  }
  return spec;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t begin = 0;
  while (true) {
    size_t end = text.find(separator, begin);
    parts.push_back(text.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin));
    if (end == std::string_view::npos) return parts;
    begin = end + 1;
  }
}

TypeRef parse_type_spec(std::string_view spec, std::string& error) {
  size_t colon = spec.find(':');
  if (colon == std::string_view::npos) {
    error = fmt::format("result type '{}' has no ':'", spec);
    return nullptr;
  }
  std::string_view dtype_text = spec.substr(0, colon);
  std::string_view dims_text = spec.substr(colon + 1);
  DType dtype = DType::Unknown;
  if (!dtype_text.empty()) {
    std::optional<DType> parsed = parse_dtype(dtype_text);
    if (!parsed) {
      error = fmt::format("result type '{}' has an unknown dtype", spec);
      return nullptr;
    }
    dtype = *parsed;
  }
  if (dims_text == "*") return Type::tensor_of_rank(dtype, -1);
  if (dims_text.empty()) return Type::tensor(dtype, {});
  std::vector<Dim> dims;
  bool shape_known = true;
  for (std::string_view part : split(dims_text, ',')) {
    int64_t extent = 0;
    if (part == "?") {
      shape_known = false;
    } else if (auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), extent);
               ec == std::errc() && end == part.data() + part.size() && extent >= 0) {
      dims.push_back(Dim::fixed(extent));
    } else if (!part.empty() && identifier_from(part) == part) {
      dims.push_back(Dim::symbol(part));
    } else {
      error = fmt::format("result type '{}' has a bad dimension '{}'", spec, part);
      return nullptr;
    }
  }
  if (!shape_known) return Type::tensor_of_rank(dtype, static_cast<int>(split(dims_text, ',').size()));
  return Type::tensor(dtype, dims);
}

// The type inference of every opaque op: what its `result_types` attribute (always the last) declares.
TypeRef infer_opaque(const InferInput& in, std::string& error) {
  const auto* spec = in.attrs.empty() ? nullptr : std::get_if<std::string>(&in.attrs.back());
  if (spec == nullptr) {
    error = "an opaque ONNX op needs its result_types attribute";
    return nullptr;
  }
  std::vector<TypeRef> fields;
  for (std::string_view entry : split(*spec, ';')) {
    TypeRef field = parse_type_spec(entry, error);
    if (field == nullptr) return nullptr;
    fields.push_back(field);
  }
  return fields.size() == 1 ? fields[0] : Type::tuple(fields);
}

std::string join_numbers(const auto& values) {
  std::string text = "[";
  for (const auto& value : values) {
    if (text.size() > 1) text += ", ";
    text += attr_value_str(AttrValue(value));
  }
  return text + "]";
}

// The attribute kind an ONNX attribute type is held in: numbers and int lists natively, everything else
// (float lists, strings lists, tensors, graphs) as descriptive text.
AttrKind kind_of(AttributeProto::AttributeType type, bool optional) {
  switch (type) {
    case AttributeProto::INT: return optional ? AttrKind::OptInt : AttrKind::Int;
    case AttributeProto::FLOAT: return optional ? AttrKind::OptFloat : AttrKind::Float;
    case AttributeProto::INTS: return optional ? AttrKind::OptIntList : AttrKind::IntList;
    default: return optional ? AttrKind::OptString : AttrKind::String;
  }
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
  OpInfo info;
  std::string base = "onnx." + (is_standard_domain(proto.domain()) ? "" : identifier_from(proto.domain()) + ".") +
                     identifier_from(proto.op_type());
  info.min_operands = 0;
  info.max_operands = -1;
  info.traits = kOpaque;
  info.infer = infer_opaque;
  info.attrs = attribute_specs(proto, node.context.opset());
  info.attrs.push_back(AttrSpec{std::string(kResultTypesAttr), AttrKind::String, std::string("")});

  // Nodes of one operator may differ in attributes (a custom op's nodes, an op at two opsets): one op per signature.
  OpRegistry& registry = OpRegistry::global();
  OpId id = 0;
  for (int variant = 1;; ++variant) {
    info.name = variant == 1 ? base : fmt::format("{}_{}", base, variant);
    const OpInfo* existing = registry.find(info.name);
    if (existing != nullptr && existing->infer != infer_opaque) continue;  // never shadow a real op
    try {
      id = registry.add(info);
      break;
    } catch (const std::invalid_argument& failure) {
      if (existing == nullptr) throw BuildError(failure.what());  // not a name clash: the registry is full
      // taken with another signature: try the next name
    }
  }
  registered_name = info.name;
  const OpInfo& registered = registry.get(id);

  AttrList attrs = registered.default_attrs();
  for (const AttributeProto& attr : proto.attribute()) {
    int index = registered.attr_index(attr.name());
    AttrValue value = value_of(attr);
    if (index >= 0 && attr_matches_kind(registered.attrs[static_cast<size_t>(index)].kind, value))
      attrs[static_cast<size_t>(index)] = std::move(value);
  }
  std::string specs;
  for (const std::string& output : proto.output()) {
    if (!specs.empty()) specs += ';';
    specs += type_spec(node.context.declared_type(output));
  }
  attrs.back() = specs;

  std::vector<Node*> operands;
  for (Node* input : node.inputs)
    if (input != nullptr) operands.push_back(input);
  std::string error;
  Node* call = node.context.function().add_call(id, operands, std::move(attrs), error);
  if (call == nullptr) throw BuildError(error);
  if (proto.output_size() == 1) return {call};
  std::vector<Node*> outputs;
  for (int i = 0; i < proto.output_size(); ++i) outputs.push_back(node.context.build().item(call, i));
  return outputs;
}

bool is_opaque_op(OpId op) { return OpRegistry::global().get(op).infer == infer_opaque; }

}  // namespace dpl::onnx_import

namespace dpl {

bool is_onnx_opaque_op(OpId op) { return op < OpRegistry::global().size() && onnx_import::is_opaque_op(op); }

}  // namespace dpl
