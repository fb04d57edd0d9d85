// Opaque ONNX ops: the result_types spelling, their type inference, attribute kinds and registration.
#include "dpl/ir/opaque_ops.h"

#include <charconv>
#include <stdexcept>
#include <type_traits>

namespace dpl {

namespace {

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t begin = 0;
  while (true) {
    const size_t end = text.find(separator, begin);
    parts.push_back(text.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin));
    if (end == std::string_view::npos) return parts;
    begin = end + 1;
  }
}

// One output: `dtype:dims`. An output of no known type (nullptr) is a tensor of unknown dtype and rank.
std::string type_spelling(TypeRef type) {
  std::string spelling(dtype_name(type != nullptr ? type->dtype() : DType::Unknown));
  spelling += ':';
  if (type == nullptr || !type->is_tensor() || type->rank() < 0) return spelling + '*';
  for (int i = 0; i < type->rank(); ++i) {
    if (i > 0) spelling += ',';
    if (!type->has_shape()) {
      spelling += '?';
    } else {
      const Dim dim = type->dims()[static_cast<size_t>(i)];
      spelling += dim.is_static() ? std::to_string(dim.extent()) : std::string(dim.symbol_name());
    }
  }
  return spelling;
}

TypeRef parse_type(std::string_view spelling, std::string& error) {
  const size_t colon = spelling.find(':');
  if (colon == std::string_view::npos) {
    error = "result type '" + std::string(spelling) + "' has no ':' (write dtype:dims, such as float32:1,3,n)";
    return nullptr;
  }
  const std::string_view dtype_text = spelling.substr(0, colon);
  const std::string_view dims_text = spelling.substr(colon + 1);
  DType dtype = DType::Unknown;
  if (!dtype_text.empty()) {
    const std::optional<DType> parsed = parse_dtype(dtype_text);
    if (!parsed) {
      error = "result type '" + std::string(spelling) + "' has an unknown dtype '" + std::string(dtype_text) + "'";
      return nullptr;
    }
    dtype = *parsed;
  }
  if (dims_text == "*") return Type::tensor_of_rank(dtype, -1);
  if (dims_text.empty()) return Type::tensor(dtype, {});
  const std::vector<std::string_view> parts = split(dims_text, ',');
  std::vector<Dim> dims;
  size_t unknown_extents = 0;
  for (std::string_view part : parts) {
    int64_t extent = 0;
    if (part == "?") {
      ++unknown_extents;
    } else if (auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), extent);
               ec == std::errc() && end == part.data() + part.size() && extent >= 0) {
      dims.push_back(Dim::fixed(extent));
    } else if (DimSyntaxError ignored; const std::optional<Dim> dim = parse_dim(
                   part, false, {}, ignored)) {
      dims.push_back(*dim);  // a symbol (`n`) or an expression over symbols (`n * 2`)
    } else {
      error = "result type '" + std::string(spelling) + "' has a bad dimension '" + std::string(part) + "'";
      return nullptr;
    }
  }
  if (unknown_extents == 0) return Type::tensor(dtype, dims);
  if (unknown_extents != parts.size()) {
    error = "result type '" + std::string(spelling) + "' mixes '?' with known dimensions (the spelling knows a "
            "whole shape or only the rank)";
    return nullptr;
  }
  return Type::tensor_of_rank(dtype, static_cast<int>(parts.size()));
}

// The bit of OpaqueAttrValues that stands for values of type T.
template <typename T, size_t I = 0>
constexpr uint8_t bit_of() {
  if constexpr (std::is_same_v<std::variant_alternative_t<I, AttrValue>, T>)
    return static_cast<uint8_t>(1u << I);
  else
    return bit_of<T, I + 1>();
}

OpInfo opaque_op_info(std::string name, std::vector<AttrSpec> attrs) {
  OpInfo info;
  info.name = std::move(name);
  info.min_operands = 0;
  info.max_operands = -1;
  info.traits = kOpaque;
  info.infer = infer_onnx_opaque;
  info.attrs = std::move(attrs);
  info.attrs.push_back(AttrSpec{std::string(kResultTypesAttr), AttrKind::String, std::string()});
  return info;
}

}  // namespace

bool is_onnx_opaque_name(std::string_view name) {
  if (name.starts_with("R."))
    name.remove_prefix(2);
  else if (name.starts_with("relax."))
    name.remove_prefix(6);
  return name.starts_with(kOnnxOpaquePrefix) && name.size() > kOnnxOpaquePrefix.size();
}

bool is_onnx_opaque_op(OpId op) {
  const OpRegistry& registry = OpRegistry::global();
  return op < registry.size() && registry.get(op).infer == infer_onnx_opaque;
}

std::string result_types_spelling(std::span<const TypeRef> outputs) {
  std::string spelling;
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (i > 0) spelling += ';';
    spelling += type_spelling(outputs[i]);
  }
  return spelling;
}

TypeRef parse_result_types(std::string_view spelling, std::string& error) {
  if (spelling.empty()) {
    error = "no result_types: an opaque op's result type is the one its result_types attribute spells";
    return nullptr;
  }
  std::vector<TypeRef> fields;
  for (std::string_view entry : split(spelling, ';')) {
    TypeRef field = parse_type(entry, error);
    if (field == nullptr) return nullptr;
    fields.push_back(field);
  }
  return fields.size() == 1 ? fields[0] : Type::tuple(fields);
}

TypeRef infer_onnx_opaque(const InferInput& input, std::string& error) {
  const auto* spelling = input.attrs.empty() ? nullptr : std::get_if<std::string>(&input.attrs.back());
  if (spelling == nullptr) {
    error = "an opaque ONNX op needs its result_types attribute, last";
    return nullptr;
  }
  return parse_result_types(*spelling, error);
}

std::optional<AttrKind> OpaqueAttrValues::kind() const {
  constexpr uint8_t none = bit_of<std::monostate>();
  constexpr uint8_t boolean = bit_of<bool>();
  constexpr uint8_t integer = bit_of<int64_t>();
  constexpr uint8_t real = bit_of<double>();
  constexpr uint8_t text = bit_of<std::string>();
  constexpr uint8_t list = bit_of<std::vector<int64_t>>();
  const bool optional = (seen_ & none) != 0;
  switch (seen_ & ~none) {
    case 0: return optional ? std::optional(AttrKind::OptString) : std::nullopt;
    case boolean: return optional ? std::nullopt : std::optional(AttrKind::Bool);
    case integer: return optional ? AttrKind::OptInt : AttrKind::Int;
    case real:
    case real | integer: return optional ? AttrKind::OptFloat : AttrKind::Float;
    case text: return optional ? AttrKind::OptString : AttrKind::String;
    case list: return optional ? AttrKind::OptIntList : AttrKind::IntList;
    case integer | list: return optional ? std::nullopt : std::optional(AttrKind::IntOrIntList);
    default: return std::nullopt;
  }
}

namespace {

// OpRegistry::add() with its refusal (name taken by another signature, registry full) as `error`.
std::optional<OpId> add_to_registry(OpInfo info, std::string& error) {
  try {
    return OpRegistry::global().add(std::move(info));
  } catch (const std::invalid_argument& failure) {
    error = failure.what();
    return std::nullopt;
  }
}

}  // namespace

std::optional<OpId> register_onnx_opaque_op(const std::string& name, std::vector<AttrSpec> attrs,
                                            std::string& error) {
  return add_to_registry(opaque_op_info(name, std::move(attrs)), error);
}

std::optional<OpId> register_onnx_opaque_variant(const std::string& base, std::vector<AttrSpec> attrs,
                                                 std::string& registered_name, std::string& error) {
  OpRegistry& registry = OpRegistry::global();
  OpInfo info = opaque_op_info(base, std::move(attrs));
  for (int variant = 1;; ++variant) {
    info.name = variant == 1 ? base : base + "_" + std::to_string(variant);
    const OpInfo* existing = registry.find(info.name);
    if (existing != nullptr && (existing->infer != infer_onnx_opaque || !same_signature(*existing, info)))
      continue;  // taken by another op or signature
    registered_name = info.name;
    return add_to_registry(std::move(info), error);  // fails only when the registry is full
  }
}

}  // namespace dpl
