// Internal: the built-in op table (signatures, attributes, traits, inference) that seeds the OpRegistry.
#pragma once

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

}  // namespace dpl::detail
