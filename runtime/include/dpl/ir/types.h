// IR types: dtypes, static or symbolic dimensions, and interned (immutable, pointer-comparable) types.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dpl {

enum class DType : uint8_t {
  Unknown,  // not annotated: TVMScript `R.Tensor((4,))`
  Bool,
  Int8,
  Int16,
  Int32,
  Int64,
  UInt8,
  Float16,
  BFloat16,
  Float32,
  Float64,
};

std::string_view dtype_name(DType dtype);  // "float32"; "" for Unknown
std::optional<DType> parse_dtype(std::string_view name);
// Inline: matchers test it on every constant they read.
inline bool is_float(DType dtype) {
  return dtype == DType::Float16 || dtype == DType::BFloat16 || dtype == DType::Float32 || dtype == DType::Float64;
}
bool is_integer(DType dtype);  // signed or unsigned, not bool

// One tensor dimension: a static extent (>= 0) or a named symbol such as `n`.
class Dim {
 public:
  static Dim fixed(int64_t extent) { return Dim(extent); }
  static Dim symbol(std::string_view name);
  // The `-1` of `R.shape([-1, 768])` as reshape's operand: an extent that reshape infers. It is the reserved
  // symbol named "-1" (so `Dim::fixed(-1) == Dim::inferred()`), never a static extent.
  static Dim inferred() { return Dim(-1); }
  bool is_inferred() const { return value_ == -1; }

  bool is_static() const { return value_ >= 0; }
  int64_t extent() const { return value_; }  // only when is_static()
  std::string_view symbol_name() const;      // only when !is_static()

  bool operator==(const Dim&) const = default;
  int64_t raw() const { return value_; }  // for hashing

 private:
  explicit Dim(int64_t value) : value_(value) {}
  int64_t value_;  // >= 0: extent; < 0: -(symbol id + 1)
};

// Python tuple spelling of a shape: `(16, 16)`, `(1024,)`, `()`, `(n, 4)`.
std::string dims_str(std::span<const Dim> dims);

enum class TypeKind : uint8_t {
  Unknown,  // nothing known (reader before inference, opaque results)
  Tensor,   // dtype (maybe Unknown), rank (maybe unknown), dims (when the shape is known)
  Tuple,
  Shape,  // the type of `R.shape([...])`: R.Shape(ndim=k)
  Object,
};

class Type;
// Types are interned: equal types are the same pointer, so comparison is `a == b`.
using TypeRef = const Type*;

class Type {
 public:
  static TypeRef unknown();
  static TypeRef object();
  static TypeRef tensor(DType dtype, std::span<const Dim> dims);  // known shape
  static TypeRef tensor_of_rank(DType dtype, int rank);           // rank known, shape not; rank -1: unknown
  static TypeRef tuple(std::span<const TypeRef> fields);
  static TypeRef shape(int rank);  // rank -1: unknown

  TypeKind kind() const { return kind_; }
  bool is_tensor() const { return kind_ == TypeKind::Tensor; }
  bool is_tuple() const { return kind_ == TypeKind::Tuple; }
  DType dtype() const { return dtype_; }
  int rank() const { return rank_; }  // -1 when unknown
  bool has_shape() const { return has_shape_; }
  std::span<const Dim> dims() const { return dims_; }
  std::span<const TypeRef> fields() const { return fields_; }
  // Number of elements when the shape is fully static, else -1.
  int64_t static_num_elements() const;

  // TVMScript spelling: `R.Tensor((16, 16), dtype="float32")`, `R.Tuple(...)`, `R.Shape(ndim=4)`, `R.Object`.
  std::string str() const;

  // Public only for the interning table; use the factories above.
  Type(TypeKind kind, DType dtype, int rank, bool has_shape, std::vector<Dim> dims, std::vector<TypeRef> fields);

 private:
  TypeKind kind_;
  DType dtype_;
  int rank_;
  bool has_shape_;
  std::vector<Dim> dims_;
  std::vector<TypeRef> fields_;
};

// Why a value of type `replacement` cannot stand in for one of type `root` (empty when it can): a different kind
// of value, dtype, rank or static dimension. What one side does not know (unknown dtype, rank or symbolic dim)
// does not conflict. The rewriter checks replacements with it; dplc checks right-hand sides with it.
std::string type_mismatch(TypeRef root, TypeRef replacement);

}  // namespace dpl
