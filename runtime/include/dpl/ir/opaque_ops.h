// Opaque ONNX ops: ops registered at run time as `onnx.<OpType>` whose result type travels in a `result_types` attribute.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dpl/ir/op_registry.h"

namespace dpl {

// An ONNX operator without a Relax op is kept as a call of an opaque op named `onnx.<OpType>`
// (`onnx.<domain>.<OpType>` outside the standard domain, `onnx.<OpType>_2` for a second attribute signature). It
// takes any number of operands; its last attribute, `result_types`, spells the type of each output, and type
// inference returns exactly that, so importing, printing and reading back all see one type. The importer
// registers these ops from the ONNX nodes, the TVMScript reader from the calls it reads, a `.dpl` file by an `op`
// declaration; all three use the functions below.
inline constexpr std::string_view kOnnxOpaquePrefix = "onnx.";
inline constexpr std::string_view kResultTypesAttr = "result_types";

// True for a name in the opaque namespace, with or without `R.`/`relax.`: "onnx.Resize", "R.onnx.com_ms.Foo".
bool is_onnx_opaque_name(std::string_view name);
// True when `op` is registered with opaque type inference (by the importer, the reader or a declaration).
bool is_onnx_opaque_op(OpId op);

// `result_types` spelling: one entry per output, `;`-separated; an entry is `dtype:dims`, dims comma-separated
// extents or symbols, `?` for each dimension of a tensor whose rank only is known, `*` for a tensor of unknown
// rank; the dtype is empty when unknown. `float32:1,3,n,n;int64:*`. A tuple type spells its fields.
std::string result_types_spelling(std::span<const TypeRef> outputs);
// The type a `result_types` value spells: the one entry's type, or a tuple of the entries' types. nullptr with
// `error` set ("result type 'float32:1,x y' has a bad dimension 'x y'") when it is malformed.
TypeRef parse_result_types(std::string_view spelling, std::string& error);

// The type inference of every opaque op: the type its `result_types` attribute (the last) spells.
TypeRef infer_onnx_opaque(const InferInput& input, std::string& error);

// The values one attribute of an opaque op has been seen with, as a set of AttrValue alternatives; folded into
// the kind that holds them all, as the importer and the reader both choose it.
class OpaqueAttrValues {
 public:
  void add(const AttrValue& value) { seen_ |= static_cast<uint8_t>(1u << value.index()); }
  void add_none() { add(AttrValue{}); }
  bool empty() const { return seen_ == 0; }
  // ints: int; floats (ints among them too): float; strings: string; int lists: int list; ints and int lists:
  // int or int list; bools: bool. With None among them the optional kind (`int or None`, ...); None alone: string
  // or None. nullopt for other mixtures (a string and an int, a bool and None).
  std::optional<AttrKind> kind() const;

 private:
  uint8_t seen_ = 0;
};

// Registers the opaque op `name` (in the `onnx.` namespace, without `R.`) taking any number of operands, with
// `attrs` and then `result_types` (a string, default "") as its attributes. Returns its id, or the id of the op of
// that name already registered with the same signature (attribute names and kinds); nullopt with `error` set when
// the name is taken by another signature or the registry is full.
std::optional<OpId> register_onnx_opaque_op(const std::string& name, std::vector<AttrSpec> attrs,
                                            std::string& error);
// As register_onnx_opaque_op under `base`, else `base_2`, `base_3`, ...: the first name that is free or holds an
// opaque op of the same signature (an op of another kind is never shadowed). Sets `registered_name`. nullopt with
// `error` set only when the registry is full.
std::optional<OpId> register_onnx_opaque_variant(const std::string& base, std::vector<AttrSpec> attrs,
                                                 std::string& registered_name, std::string& error);

}  // namespace dpl
