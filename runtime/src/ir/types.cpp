// IR types: dtype names, rounding to a dtype, the global hash-consing table of types (dimensions: dims.cpp).
#include "dpl/ir/types.h"

#include <array>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <deque>
#include <functional>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

namespace dpl {

namespace {

struct DTypeName {
  DType dtype;
  std::string_view name;
};

constexpr DTypeName kDTypeNames[] = {
    {DType::Bool, "bool"},       {DType::Int8, "int8"},         {DType::Int16, "int16"},
    {DType::Int32, "int32"},     {DType::Int64, "int64"},       {DType::UInt8, "uint8"},
    {DType::Float16, "float16"}, {DType::BFloat16, "bfloat16"}, {DType::Float32, "float32"},
    {DType::Float64, "float64"},
};

}  // namespace

std::string_view dtype_name(DType dtype) {
  for (const DTypeName& entry : kDTypeNames)
    if (entry.dtype == dtype) return entry.name;
  return "";
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (const DTypeName& entry : kDTypeNames)
    if (entry.name == name) return entry.dtype;
  return std::nullopt;
}

bool is_integer(DType dtype) {
  return dtype == DType::Int8 || dtype == DType::Int16 || dtype == DType::Int32 || dtype == DType::Int64 ||
         dtype == DType::UInt8;
}

// ---------------------------------------------------------------------------------------------------------
// The interning table: a set of Type pointers that can be probed with a not-yet-built key.

namespace {

struct TypeKey {
  TypeKind kind;
  DType dtype;
  int rank;
  bool has_shape;
  std::span<const Dim> dims;
  std::span<const TypeRef> fields;
};

TypeKey key_of(const Type& type) {
  return TypeKey{type.kind(), type.dtype(), type.rank(), type.has_shape(), type.dims(), type.fields()};
}

size_t hash_key(const TypeKey& key) {
  size_t hash = static_cast<size_t>(key.kind) * 0x9E3779B97F4A7C15ull;
  auto mix = [&hash](uint64_t value) { hash = (hash ^ value) * 0x100000001B3ull + (hash >> 29); };
  mix(static_cast<uint64_t>(key.dtype));
  mix(static_cast<uint64_t>(static_cast<int64_t>(key.rank)));
  mix(key.has_shape ? 1 : 0);
  for (const Dim& dim : key.dims) mix(static_cast<uint64_t>(dim.raw()));
  for (TypeRef field : key.fields) mix(reinterpret_cast<uintptr_t>(field));
  return hash;
}

bool keys_equal(const TypeKey& a, const TypeKey& b) {
  return a.kind == b.kind && a.dtype == b.dtype && a.rank == b.rank && a.has_shape == b.has_shape &&
         std::equal(a.dims.begin(), a.dims.end(), b.dims.begin(), b.dims.end()) &&
         std::equal(a.fields.begin(), a.fields.end(), b.fields.begin(), b.fields.end());
}

struct TypeHash {
  using is_transparent = void;
  size_t operator()(const TypeKey& key) const { return hash_key(key); }
  size_t operator()(TypeRef type) const { return hash_key(key_of(*type)); }
};

struct TypeEqual {
  using is_transparent = void;
  static TypeKey key(const TypeKey& key) { return key; }
  static TypeKey key(TypeRef type) { return key_of(*type); }
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    return keys_equal(key(a), key(b));
  }
};

class TypeTable {
 public:
  TypeRef intern(const TypeKey& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = set_.find(key);
    if (it != set_.end()) return *it;
    const Type& type = storage_.emplace_back(key.kind, key.dtype, key.rank, key.has_shape,
                                             std::vector<Dim>(key.dims.begin(), key.dims.end()),
                                             std::vector<TypeRef>(key.fields.begin(), key.fields.end()));
    set_.insert(&type);
    return &type;
  }

 private:
  std::mutex mutex_;
  std::deque<Type> storage_;
  std::unordered_set<TypeRef, TypeHash, TypeEqual> set_;
};

TypeTable& type_table() {
  static TypeTable table;
  return table;
}

}  // namespace

Type::Type(TypeKind kind, DType dtype, int rank, bool has_shape, std::vector<Dim> dims, std::vector<TypeRef> fields)
    : kind_(kind),
      dtype_(dtype),
      rank_(rank),
      has_shape_(has_shape),
      dims_(std::move(dims)),
      fields_(std::move(fields)) {}

TypeRef Type::unknown() {
  static TypeRef type = type_table().intern(TypeKey{TypeKind::Unknown, DType::Unknown, -1, false, {}, {}});
  return type;
}

TypeRef Type::object() {
  static TypeRef type = type_table().intern(TypeKey{TypeKind::Object, DType::Unknown, -1, false, {}, {}});
  return type;
}

TypeRef Type::tensor(DType dtype, std::span<const Dim> dims) {
  auto intern_tensor = [dtype](std::span<const Dim> shape) {
    return type_table().intern(TypeKey{TypeKind::Tensor, dtype, static_cast<int>(shape.size()), true, shape, {}});
  };
  if (!dims.empty()) return intern_tensor(dims);
  // Scalars are what rewrites create most (`const(2.0)`): one interned type per dtype, looked up without the
  // table's lock and hash.
  static const auto scalars = [] {
    std::array<TypeRef, static_cast<size_t>(DType::Float64) + 1> types{};
    for (size_t i = 0; i < types.size(); ++i) {
      types[i] = type_table().intern(TypeKey{TypeKind::Tensor, static_cast<DType>(i), 0, true, {}, {}});
    }
    return types;
  }();
  const auto index = static_cast<size_t>(dtype);
  return index < scalars.size() ? scalars[index] : intern_tensor(dims);
}

TypeRef Type::tensor_of_rank(DType dtype, int rank) {
  return type_table().intern(TypeKey{TypeKind::Tensor, dtype, rank < 0 ? -1 : rank, false, {}, {}});
}

TypeRef Type::tuple(std::span<const TypeRef> fields) {
  return type_table().intern(
      TypeKey{TypeKind::Tuple, DType::Unknown, static_cast<int>(fields.size()), false, {}, fields});
}

TypeRef Type::shape(int rank) {
  return type_table().intern(TypeKey{TypeKind::Shape, DType::Unknown, rank < 0 ? -1 : rank, false, {}, {}});
}

int64_t Type::static_num_elements() const {
  if (kind_ != TypeKind::Tensor || !has_shape_) return -1;
  int64_t count = 1;
  for (const Dim& dim : dims_) {
    if (!dim.is_static()) return -1;
    count *= dim.extent();
  }
  return count;
}

namespace {

void append_type(std::string& out, const Type& type) {
  switch (type.kind()) {
    case TypeKind::Unknown:
    case TypeKind::Object: out += "R.Object"; return;
    case TypeKind::Shape: out += "R.Shape(ndim=" + std::to_string(type.rank()) + ")"; return;
    case TypeKind::Tuple:
      out += "R.Tuple";
      if (type.fields().empty()) return;
      out += '(';
      for (size_t i = 0; i < type.fields().size(); ++i) {
        if (i > 0) out += ", ";
        append_type(out, *type.fields()[i]);
      }
      out += ')';
      return;
    case TypeKind::Tensor: {
      // TVM's order: the shape, then dtype, then ndim (only when the shape is unknown).
      std::string args;
      if (type.has_shape()) args += dims_str(type.dims());
      if (type.dtype() != DType::Unknown) {
        if (!args.empty()) args += ", ";
        args += "dtype=\"";
        args += dtype_name(type.dtype());
        args += '"';
      }
      if (!type.has_shape() && type.rank() >= 0) {
        if (!args.empty()) args += ", ";
        args += "ndim=" + std::to_string(type.rank());
      }
      out += "R.Tensor";
      if (!args.empty()) out += "(" + args + ")";
      return;
    }
  }
}

}  // namespace

std::string dims_str(std::span<const Dim> dims) {
  std::string out = "(";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) out += ", ";
    out += dims[i].str();
  }
  if (dims.size() == 1) out += ',';
  return out + ")";
}

std::string Type::str() const {
  std::string out;
  append_type(out, *this);
  return out;
}

std::string type_mismatch(TypeRef root, TypeRef replacement) {
  if (root == replacement || root->kind() == TypeKind::Unknown || replacement->kind() == TypeKind::Unknown) {
    return {};
  }
  if (root->kind() != replacement->kind()) return "a different kind of value";
  switch (root->kind()) {
    case TypeKind::Tensor: {
      if (root->dtype() != DType::Unknown && replacement->dtype() != DType::Unknown &&
          root->dtype() != replacement->dtype()) {
        return "dtype " + std::string(dtype_name(replacement->dtype())) + " instead of " +
               std::string(dtype_name(root->dtype()));
      }
      if (root->rank() >= 0 && replacement->rank() >= 0 && root->rank() != replacement->rank()) {
        return "rank " + std::to_string(replacement->rank()) + " instead of " + std::to_string(root->rank());
      }
      if (root->has_shape() && replacement->has_shape()) {
        for (size_t i = 0; i < root->dims().size(); ++i) {
          const Dim want = root->dims()[i];
          const Dim got = replacement->dims()[i];
          if (want.is_static() && got.is_static() && want != got) {
            return "dimension " + std::to_string(i) + " is " + std::to_string(got.extent()) + " instead of " +
                   std::to_string(want.extent());
          }
        }
      }
      return {};
    }
    case TypeKind::Tuple: {
      if (root->fields().size() != replacement->fields().size()) {
        return std::to_string(replacement->fields().size()) + " tuple fields instead of " +
               std::to_string(root->fields().size());
      }
      for (size_t i = 0; i < root->fields().size(); ++i) {
        std::string field = type_mismatch(root->fields()[i], replacement->fields()[i]);
        if (!field.empty()) return "tuple field " + std::to_string(i) + ": " + field;
      }
      return {};
    }
    case TypeKind::Shape:
      if (root->rank() >= 0 && replacement->rank() >= 0 && root->rank() != replacement->rank()) {
        return "a shape of " + std::to_string(replacement->rank()) + " dimensions instead of " +
               std::to_string(root->rank());
      }
      return {};
    case TypeKind::Unknown:
    case TypeKind::Object:
      return {};
  }
  return {};
}

namespace {

// Rounds to a binary floating-point format with `mantissa_bits` explicit bits, smallest normal exponent
// `min_exponent` (smaller values become subnormal) and largest finite value `max_finite`; ties to even.
double round_to_float_format(double value, int mantissa_bits, int min_exponent, double max_finite) {
  if (!std::isfinite(value) || value == 0.0) return value;
  int exponent = 0;
  std::frexp(value, &exponent);  // value = m * 2^exponent, 0.5 <= |m| < 1
  const int leading_bit = std::max(exponent - 1, min_exponent);
  const double quantum = std::ldexp(1.0, leading_bit - mantissa_bits);
  const double rounded = std::nearbyint(value / quantum) * quantum;  // default rounding mode: ties to even
  if (std::fabs(rounded) > max_finite) return std::copysign(std::numeric_limits<double>::infinity(), value);
  return rounded;
}

double round_to_integer(double value, DType dtype) {
  if (std::isnan(value)) return 0.0;
  // Saturate to the int64 range first: casting a larger double to an integer is undefined behaviour.
  constexpr double kTwo63 = 9223372036854775808.0;
  const double truncated = std::trunc(value);
  const int64_t whole = truncated >= kTwo63   ? std::numeric_limits<int64_t>::max()
                        : truncated < -kTwo63 ? std::numeric_limits<int64_t>::min()
                                              : static_cast<int64_t>(truncated);
  switch (dtype) {  // narrowing integer conversions wrap (two's complement) in C++20
    case DType::Int8: return static_cast<int8_t>(whole);
    case DType::Int16: return static_cast<int16_t>(whole);
    case DType::Int32: return static_cast<int32_t>(whole);
    case DType::UInt8: return static_cast<uint8_t>(whole);
    default: return static_cast<double>(whole);
  }
}

}  // namespace

double round_to_dtype(double value, DType dtype) {
  switch (dtype) {
    case DType::Float32:
      // The hardware conversion rounds to nearest even; only out-of-range values need the general path.
      if (std::fabs(value) <= FLT_MAX || !std::isfinite(value)) return static_cast<float>(value);
      return round_to_float_format(value, 23, -126, FLT_MAX);
    case DType::Float16: return round_to_float_format(value, 10, -14, 65504.0);
    case DType::BFloat16: return round_to_float_format(value, 7, -126, 3.3895313892515355e38);
    case DType::Float64:
    case DType::Unknown: return value;
    case DType::Bool: return value != 0.0 ? 1.0 : 0.0;
    case DType::Int8:
    case DType::Int16:
    case DType::Int32:
    case DType::Int64:
    case DType::UInt8: return round_to_integer(value, dtype);
  }
  return value;
}

}  // namespace dpl
