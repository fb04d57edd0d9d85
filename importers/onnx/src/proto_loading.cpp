// ONNX protobuf in: parsing a ModelProto, ONNX shape inference, and ONNX types and tensors as dpl types and literals.
#include <fmt/format.h>
#include <onnx/shape_inference/implementation.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>

#include "onnx_import_internal.h"

namespace dpl::onnx_import {

namespace {

using ::onnx::TensorProto;

// IEEE half and bfloat16 bit patterns as the doubles they denote.
double half_to_double(uint16_t bits) {
  const int sign = (bits >> 15) != 0 ? -1 : 1;
  const int exponent = (bits >> 10) & 0x1F;
  const int mantissa = bits & 0x3FF;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  if (exponent == 31)
    return mantissa != 0 ? std::numeric_limits<double>::quiet_NaN() : sign * std::numeric_limits<double>::infinity();
  return sign * std::ldexp(mantissa + 1024, exponent - 25);
}

double bfloat16_to_double(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

// Reads `count` little-endian values of type T from raw bytes (x86 and ARM are little-endian; ONNX stores LE).
template <typename T>
bool read_raw(const std::string& raw, int64_t count, std::vector<double>& values) {
  if (raw.size() != static_cast<size_t>(count) * sizeof(T)) return false;
  values.resize(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    T value;
    std::memcpy(&value, raw.data() + i * static_cast<int64_t>(sizeof(T)), sizeof(T));
    values[static_cast<size_t>(i)] = static_cast<double>(value);
  }
  return true;
}

template <typename Field>
bool copy_field(const Field& field, int64_t count, std::vector<double>& values) {
  if (field.size() != count) return false;
  values.assign(field.begin(), field.end());
  return true;
}

}  // namespace

bool parse_model(const SourceFile& model, const std::map<std::string, int64_t>& dims, ::onnx::ModelProto& proto,
                 std::string& error) {
  const std::string& bytes = model.text();
  if (bytes.empty()) {
    error = "the file is empty, not an ONNX model";
    return false;
  }
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    error = "not an ONNX model (the bytes do not parse as an onnx.ModelProto)";
    return false;
  }
  if (!proto.has_graph() || (proto.graph().node_size() == 0 && proto.graph().output_size() == 0)) {
    error = "not an ONNX model (it has no graph)";
    return false;
  }
  for (auto& input : *proto.mutable_graph()->mutable_input()) {
    if (!input.type().tensor_type().has_shape()) continue;
    for (auto& dim : *input.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
      if (!dim.has_dim_param()) continue;
      auto extent = dims.find(dim.dim_param());
      if (extent == dims.end()) extent = dims.find(identifier_from(dim.dim_param()));
      if (extent != dims.end()) dim.set_dim_value(extent->second);  // replaces the dim_param (a oneof)
    }
  }
  infer_shapes(proto);
  return true;
}

void declare_shape(::onnx::ModelProto& proto, const std::string& name, DType dtype, std::span<const Dim> dims) {
  ::onnx::ValueInfoProto* info = nullptr;
  for (auto& existing : *proto.mutable_graph()->mutable_value_info())
    if (existing.name() == name) info = &existing;  // inference left it without a shape: replaced
  if (info == nullptr) info = proto.mutable_graph()->add_value_info();
  info->set_name(name);
  info->clear_type();
  auto* tensor = info->mutable_type()->mutable_tensor_type();
  for (int32_t onnx_dtype = TensorProto::FLOAT; onnx_dtype <= TensorProto::BFLOAT16; ++onnx_dtype)
    if (dtype_of(onnx_dtype) == dtype) tensor->set_elem_type(onnx_dtype);
  auto* shape = tensor->mutable_shape();
  for (Dim dim : dims) {
    ::onnx::TensorShapeProto::Dimension* out = shape->add_dim();  // neither value nor name: unknown
    if (dim.is_static()) out->set_dim_value(dim.extent());
    if (dim.is_static() || dim.is_inferred()) continue;
    // The model's own spelling of the symbol, so that ONNX relates it to the graph inputs' dims.
    for (const auto& input : proto.graph().input())
      for (const auto& input_dim : input.type().tensor_type().shape().dim())
        if (input_dim.has_dim_param() && identifier_from(input_dim.dim_param()) == dim.symbol_name())
          out->set_dim_param(input_dim.dim_param());
  }
}

void infer_shapes(::onnx::ModelProto& proto) {
  try {
    ::onnx::shape_inference::InferShapes(proto);
  } catch (const std::exception&) {
    // Shape inference is a help, not a requirement: the model keeps the value_info it declares.
  }
}

bool is_standard_domain(std::string_view domain) { return domain.empty() || domain == "ai.onnx"; }

int64_t default_opset(const ::onnx::ModelProto& proto) {
  for (const auto& opset : proto.opset_import())
    if (is_standard_domain(opset.domain())) return opset.version();
  return 1;
}

std::optional<DType> dtype_of(int32_t onnx_data_type) {
  switch (onnx_data_type) {
    case TensorProto::FLOAT: return DType::Float32;
    case TensorProto::UINT8: return DType::UInt8;
    case TensorProto::INT8: return DType::Int8;
    case TensorProto::INT16: return DType::Int16;
    case TensorProto::INT32: return DType::Int32;
    case TensorProto::INT64: return DType::Int64;
    case TensorProto::BOOL: return DType::Bool;
    case TensorProto::FLOAT16: return DType::Float16;
    case TensorProto::DOUBLE: return DType::Float64;
    case TensorProto::BFLOAT16: return DType::BFloat16;
    default: return std::nullopt;
  }
}

std::string onnx_dtype_name(int32_t onnx_data_type) {
  if (TensorProto::DataType_IsValid(onnx_data_type))
    return TensorProto::DataType_Name(static_cast<TensorProto::DataType>(onnx_data_type));
  return fmt::format("data type {}", onnx_data_type);
}

std::string identifier_from(std::string_view name) {
  std::string out;
  for (char c : name) {
    const bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    out.push_back(word ? c : '_');
  }
  if (out.empty() || (out[0] >= '0' && out[0] <= '9')) out.insert(out.begin(), 'v');
  return out;
}

TypeRef type_of(const ::onnx::TypeProto& type) {
  if (!type.has_tensor_type()) return nullptr;
  const auto& tensor = type.tensor_type();
  std::optional<DType> dtype = dtype_of(tensor.elem_type());
  if (!dtype) return nullptr;
  if (!tensor.has_shape()) return Type::tensor_of_rank(*dtype, -1);
  std::vector<Dim> dims;
  for (const auto& dim : tensor.shape().dim()) {
    if (dim.has_dim_value() && dim.dim_value() >= 0) {
      dims.push_back(Dim::fixed(dim.dim_value()));
    } else if (dim.has_dim_param() && !dim.dim_param().empty()) {
      dims.push_back(Dim::symbol(identifier_from(dim.dim_param())));
    } else {
      return Type::tensor_of_rank(*dtype, tensor.shape().dim_size());
    }
  }
  return Type::tensor(*dtype, dims);
}

TypeRef tensor_proto_type(const TensorProto& tensor, std::string& error) {
  std::optional<DType> dtype = dtype_of(tensor.data_type());
  if (!dtype) {
    error = fmt::format("tensor '{}' has {}, which dpl has no dtype for", tensor.name(),
                        onnx_dtype_name(tensor.data_type()));
    return nullptr;
  }
  std::vector<Dim> dims;
  for (int64_t extent : tensor.dims()) {
    if (extent < 0) {
      error = fmt::format("tensor '{}' has a negative dimension {}", tensor.name(), extent);
      return nullptr;
    }
    dims.push_back(Dim::fixed(extent));
  }
  return Type::tensor(*dtype, dims);
}

bool decode_tensor(const TensorProto& tensor, Literal& literal, std::string& error) {
  TypeRef type = tensor_proto_type(tensor, error);
  if (type == nullptr) return false;
  if (tensor.data_location() == TensorProto::EXTERNAL) {
    error = fmt::format("tensor '{}' keeps its values in an external file, which the importer does not read",
                        tensor.name());
    return false;
  }
  literal.dtype = type->dtype();
  literal.shape.assign(tensor.dims().begin(), tensor.dims().end());
  const int64_t count = type->static_num_elements();
  std::vector<double>& values = literal.values;
  const std::string& raw = tensor.raw_data();
  bool ok = false;
  // Half-precision values arrive as bit patterns (in raw_data, or widened into int32_data).
  bool half_bits = false;
  if (tensor.has_raw_data()) {
    switch (tensor.data_type()) {
      case TensorProto::FLOAT: ok = read_raw<float>(raw, count, values); break;
      case TensorProto::DOUBLE: ok = read_raw<double>(raw, count, values); break;
      case TensorProto::INT64: ok = read_raw<int64_t>(raw, count, values); break;
      case TensorProto::INT32: ok = read_raw<int32_t>(raw, count, values); break;
      case TensorProto::INT16: ok = read_raw<int16_t>(raw, count, values); break;
      case TensorProto::INT8: ok = read_raw<int8_t>(raw, count, values); break;
      case TensorProto::UINT8:
      case TensorProto::BOOL: ok = read_raw<uint8_t>(raw, count, values); break;
      case TensorProto::FLOAT16:
      case TensorProto::BFLOAT16: ok = read_raw<uint16_t>(raw, count, values), half_bits = true; break;
      default: break;
    }
  } else {
    switch (tensor.data_type()) {
      case TensorProto::FLOAT: ok = copy_field(tensor.float_data(), count, values); break;
      case TensorProto::DOUBLE: ok = copy_field(tensor.double_data(), count, values); break;
      case TensorProto::INT64: ok = copy_field(tensor.int64_data(), count, values); break;
      case TensorProto::FLOAT16:
      case TensorProto::BFLOAT16: ok = copy_field(tensor.int32_data(), count, values), half_bits = true; break;
      default: ok = copy_field(tensor.int32_data(), count, values); break;
    }
  }
  if (!ok) {
    error = fmt::format("tensor '{}' of shape {} does not hold {} values of {}", tensor.name(),
                        dims_str(type->dims()), count, onnx_dtype_name(tensor.data_type()));
    return false;
  }
  if (half_bits) {
    for (double& value : values) {
      const auto bits = static_cast<uint16_t>(value);
      value = tensor.data_type() == TensorProto::FLOAT16 ? half_to_double(bits) : bfloat16_to_double(bits);
    }
  }
  return true;
}

}  // namespace dpl::onnx_import

namespace dpl {

bool read_onnx_tensor(const SourceFile& file, Literal& literal, std::string& error) {
  ::onnx::TensorProto tensor;
  const std::string& bytes = file.text();
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !tensor.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    error = file.path() + ": not an ONNX tensor (the bytes do not parse as an onnx.TensorProto)";
    return false;
  }
  if (!onnx_import::decode_tensor(tensor, literal, error)) {
    error = file.path() + ": " + error;
    return false;
  }
  return true;
}

}  // namespace dpl
