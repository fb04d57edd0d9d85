// IR types: dtypes, static or symbolic dimensions, and interned (immutable, pointer-comparable) types.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
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
// Rounds `value` to the nearest value of `dtype`, so a double computation matches what the dtype would compute:
// float32/float16/bfloat16 round to nearest, ties to even (overflow gives infinity); integers truncate toward zero
// and wrap to their width (out-of-int64-range values saturate first, NaN becomes 0); bool is `value != 0`.
double round_to_dtype(double value, DType dtype);

// One tensor dimension: a static extent (>= 0), a named symbol such as `n`, or an expression over symbols such
// as `n * 48`, `n + m` or `n // 2` (dims.cpp). Symbols and expressions are interned: a Dim stays one int64 and
// equality one compare. Expressions are canonical polynomials (integer coefficients, floor-division and modulo
// atoms), so `48 * n == n * 48` and `n + n == n * 2`; an expression without symbols is a static extent.
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
  // A plain symbol's name; an expression's TVM spelling (`n * 48`). Only when !is_static().
  std::string_view symbol_name() const;
  bool is_symbol() const;      // a named symbol (not inferred, not an expression)
  bool is_expression() const;  // arithmetic over symbols
  std::string str() const;     // `16`, `n`, `n * 48`, `(n + 1) // 2`: as TVM prints a PrimExpr
  // The named symbols the dim mentions, each once, in the order its spelling names them.
  std::vector<Dim> symbols() const;
  // The value once every symbol has one (`value_of` gives nullopt for an unknown symbol); nullopt when a symbol
  // is unknown, a division is by zero or the arithmetic overflows.
  std::optional<int64_t> evaluate(const std::function<std::optional<int64_t>(Dim symbol)>& value_of) const;

  bool operator==(const Dim&) const = default;
  int64_t raw() const { return value_; }  // for hashing

 private:
  friend class DimTable;
  explicit Dim(int64_t value) : value_(value) {}
  int64_t value_;  // >= 0: extent; < 0: -(id + 1) of an interned symbol or expression
};

// Arithmetic on extents. Each gives nullopt when the result is not a Dim (a negative static value, overflow, an
// expression too large to keep, the inferred extent as an operand, division by zero or by a negative number).
std::optional<Dim> dim_add(Dim a, Dim b);
std::optional<Dim> dim_sub(Dim a, Dim b);
std::optional<Dim> dim_mul(Dim a, Dim b);
std::optional<Dim> dim_floor_div(Dim a, Dim b);  // `a // b`; exact parts fold: (n * 4 + m) // 2 == n * 2 + m // 2
std::optional<Dim> dim_floor_mod(Dim a, Dim b);  // `a % b`
// `a / b` only when the division is provably exact for every value of the symbols (n * 96 / 48 == n * 2).
std::optional<Dim> dim_exact_div(Dim a, Dim b);

// The arithmetic of a guard over dimensions (`q.shape[0] == b * n`, language.md): exact integers, negative ones
// included, while every operand is static, so that static shapes compute what numbers would; a symbolic dimension
// once one operand is symbolic; nothing when the result is neither (overflow, a negative integer meeting a symbol,
// a dimension too large to keep). Generated guards and the rule interpreter compute with it alike.
class DimValue {
 public:
  DimValue(Dim dim);    // NOLINT(google-explicit-constructor): a dimension is a value
  DimValue(int64_t n);  // NOLINT(google-explicit-constructor)
  static DimValue none() { return DimValue(); }

  friend DimValue operator+(const DimValue& a, const DimValue& b);
  friend DimValue operator-(const DimValue& a, const DimValue& b);
  friend DimValue operator*(const DimValue& a, const DimValue& b);
  // Whether the two are equal for every value of their symbols: true when they are the same polynomial, false
  // when they differ by a nonzero constant (two static extents that differ), nullopt when that depends on the
  // symbols' values (`n` and `m`, `n` and 4) or either is nothing.
  friend std::optional<bool> dims_equal(const DimValue& a, const DimValue& b);

 private:
  using IntegerOp = bool (*)(int64_t, int64_t, int64_t*);  // true on overflow, as __builtin_add_overflow
  using DimOp = std::optional<Dim> (*)(Dim, Dim);
  DimValue() = default;
  static DimValue apply(const DimValue& a, const DimValue& b, IntegerOp integer_op, DimOp dim_op);
  std::optional<Dim> as_dim() const;  // an integer that is an extent, or the symbolic dimension
  std::variant<std::monostate, int64_t, Dim> value_;  // nothing, an exact integer, a symbolic dimension
};
DimValue operator+(const DimValue& a, const DimValue& b);
DimValue operator-(const DimValue& a, const DimValue& b);
DimValue operator*(const DimValue& a, const DimValue& b);
std::optional<bool> dims_equal(const DimValue& a, const DimValue& b);

// A dimension in TVM's PrimExpr spelling: integers, symbols, `+ - * // %`, unary minus and parentheses.
// `check_symbol` returns why a name cannot be used (empty when it can; without a function any name can). A
// negative static result is an error, except -1 when `allow_inferred` (reshape's inferred extent).
struct DimSyntaxError {
  size_t offset = 0;  // into the text
  size_t length = 1;
  std::string message;
};
std::optional<Dim> parse_dim(std::string_view text, bool allow_inferred,
                             const std::function<std::string(std::string_view name)>& check_symbol,
                             DimSyntaxError& error);

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
