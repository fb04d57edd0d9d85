// Internal: the built-in op table (signatures, attributes, traits, inference) that seeds the OpRegistry.
#pragma once

#include <array>
#include <span>
#include <string>
#include <vector>

#include "dpl/ir/op_registry.h"

namespace dpl::detail {

// One OpInfo per DPL_OP of ops.def, in that order (index == OpId).
std::vector<OpInfo> builtin_ops();

// Checks operand count, missing operands, attribute count and attribute kinds (as stored, see
// attr_holds_kind); sets `error` ("matmul: expected 2 operands, got 3") and returns false on a mismatch.
bool check_signature(const OpInfo& info, std::span<Node* const> operands, const AttrList& attrs, std::string& error);

// Whether `value` already has the representation `kind` stores (no int-to-float conversion).
bool attr_holds_kind(AttrKind kind, const AttrValue& value);

// Room for `size` types: on the stack for the usual few (a tuple's fields, a concat's operands), so that gathering
// them allocates nothing; on the heap beyond that.
class FewTypes {
 public:
  explicit FewTypes(size_t size)
      : many_(size > kFew ? size : 0), types_(many_.empty() ? std::span(few_.data(), size) : std::span(many_)) {}
  FewTypes(const FewTypes&) = delete;  // types_ points into the object
  FewTypes& operator=(const FewTypes&) = delete;
  std::span<TypeRef> span() { return types_; }

 private:
  static constexpr size_t kFew = 8;
  std::array<TypeRef, kFew> few_;
  std::vector<TypeRef> many_;
  std::span<TypeRef> types_;
};

}  // namespace dpl::detail
