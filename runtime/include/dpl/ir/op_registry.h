// The op registry: one source of truth for op names, arity, attributes, traits and type inference.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "dpl/ir/types.h"

namespace dpl {

class Node;
using OpId = uint16_t;

// Built-in op ids, in ops.def order: dpl::op::add, dpl::op::nn_softmax, ...
namespace op {
enum : OpId {
#define DPL_OP(ident, name) ident,
#include "dpl/ir/ops.def"
#undef DPL_OP
  kNumBuiltinOps
};
}  // namespace op

// An attribute value. `None` (TVMScript `None`) is monostate; dtypes and layouts are strings;
// `axes=[1, 0]` is an int list; `min=0.0` a double.
using AttrValue = std::variant<std::monostate, bool, int64_t, double, std::string, std::vector<int64_t>>;
using AttrList = std::vector<AttrValue>;  // one value per AttrSpec of the op, in schema order

// Whether an attribute holds this literal: the same alternative and an equal value, as `==` on AttrValue says,
// without building an AttrValue for the literal (what a compiled pattern's `axes=[1, 0]` tests on every visit).
// One name per alternative: a braced int list or a string literal would convert to more than one overload.
inline bool attr_is_none(const AttrValue& value) { return std::holds_alternative<std::monostate>(value); }
inline bool attr_is_bool(const AttrValue& value, bool literal) {
  const bool* held = std::get_if<bool>(&value);
  return held != nullptr && *held == literal;
}
inline bool attr_is_int(const AttrValue& value, int64_t literal) {
  const int64_t* held = std::get_if<int64_t>(&value);
  return held != nullptr && *held == literal;
}
inline bool attr_is_float(const AttrValue& value, double literal) {
  const double* held = std::get_if<double>(&value);
  return held != nullptr && *held == literal;
}
inline bool attr_is_string(const AttrValue& value, std::string_view literal) {
  const std::string* held = std::get_if<std::string>(&value);
  return held != nullptr && *held == literal;
}
inline bool attr_is_ints(const AttrValue& value, std::initializer_list<int64_t> literal) {
  const std::vector<int64_t>* held = std::get_if<std::vector<int64_t>>(&value);
  return held != nullptr && std::equal(held->begin(), held->end(), literal.begin(), literal.end());
}

enum class AttrKind : uint8_t {
  Bool,
  Int,
  Float,
  String,
  DType,      // string holding a dtype name or "void"
  IntList,
  OptInt,     // int or None
  OptFloat,   // double or None
  OptIntList, // int list or None (permute_dims axes=None)
  IntOrIntList,  // split's indices_or_sections
  OptString,  // string or None (conv2d out_layout=None means "same as data_layout")
};

struct AttrSpec {
  std::string name;
  AttrKind kind;
  AttrValue default_value;
};

enum OpTrait : uint32_t {
  kCommutative = 1u << 0,
  kElementwise = 1u << 1,  // same-shape pointwise
  kBroadcast = 1u << 2,    // pointwise with numpy broadcasting
  kInjective = 1u << 3,    // layout / data movement
  kReduction = 1u << 4,
  kOpaque = 1u << 5,       // anything else (matmul, conv, softmax, ...)
  // Inference gives the operands' type when they all have it, or one operand's when the others are rank-0 tensors
  // of its dtype (`x * 2.0`): Function takes that answer without running inference (internal, not declarable).
  kTypeOfOperands = 1u << 6,
};

// What type inference sees: the operand nodes (their types, and literal values such as `R.shape([...])`)
// and the op's full attribute list.
struct InferInput {
  std::span<Node* const> operands;
  const AttrList& attrs;
};
// Returns the result type, or nullptr with `error` set ("matmul: inner dimensions 64 and 32 differ").
using InferFn = TypeRef (*)(const InferInput& input, std::string& error);

struct OpInfo {
  OpId id = 0;
  std::string name;  // as written after `R.`: "add", "nn.softmax"
  int min_operands = 0;
  int max_operands = 0;  // -1: variadic
  std::vector<AttrSpec> attrs;
  uint32_t traits = 0;
  InferFn infer = nullptr;

  bool has(OpTrait trait) const { return (traits & trait) != 0; }
  int attr_index(std::string_view attr_name) const;  // -1 when absent
  AttrList default_attrs() const;
  std::string qualified_name() const { return "relax." + name; }
};

// Whether two ops take the same operands (counts) and attributes (names and kinds, in order): what
// OpRegistry::add() asks of a second registration under one name.
bool same_signature(const OpInfo& a, const OpInfo& b);

class OpRegistry {
 public:
  // The process-wide registry, with every built-in op registered.
  static OpRegistry& global();

  const OpInfo& get(OpId id) const { return ops_[id]; }
  // Accepts "add", "R.add", "relax.add", "nn.softmax", "R.nn.softmax", "relax.nn.softmax".
  const OpInfo* find(std::string_view name) const;
  // Registers a user op (declared in a .dpl file or by a program); returns its id, or the existing id when an
  // op of that name with the same signature (same_signature) is already registered. Throws
  // std::invalid_argument when the name is taken by an op with a different signature (check with find() first).
  OpId add(OpInfo info);
  size_t size() const { return ops_.size(); }

 private:
  OpRegistry();
  std::vector<OpInfo> ops_;
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view name) const noexcept { return std::hash<std::string_view>{}(name); }
  };
  std::unordered_map<std::string, OpId, NameHash, std::equal_to<>> by_name_;  // name as written after `R.`
};

// Checks `value` against `kind` (an int is accepted where a float is expected and is converted).
bool attr_matches_kind(AttrKind kind, AttrValue& value);
// Whether attr_matches_kind() would convert `value` (an int given for a float).
bool attr_needs_conversion(AttrKind kind, const AttrValue& value);
std::string_view attr_kind_name(AttrKind kind);
// TVMScript spelling of an attribute value: `[1, 0]`, `"float32"`, `-1`, `True`, `None`, `1e-05`.
std::string attr_value_str(const AttrValue& value);
void append_attr_value(std::string& out, const AttrValue& value);  // the same, appended to `out`

}  // namespace dpl
