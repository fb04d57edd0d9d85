// Static typing of right-hand sides: what a rule builds must be able to stand in for what it matched.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dpl/compiler/ast.h"
#include "dpl/ir/op_registry.h"
#include "dpl/support/diagnostics.h"

namespace dpl::compiler {

// For every rewrite rule (and every rewritten root of a multi-root rule) of `file`, types the left-hand side from
// what it guarantees (type patterns, constant patterns, op results inferred by `registry` from their operands and
// literal attributes; dimension variables stay symbolic) and the right-hand side with the registry's inference.
// Reports an error at the rule when the right-hand side certainly cannot be built, or certainly produces another
// dtype, rank or static dimension than the value it replaces. What is unknown statically conflicts with nothing
// (Rewriter::replace checks it at run time). Expects a file that sema checked without errors.
void check_rhs_types(const AstFile& file, DiagnosticEngine& diags, const OpRegistry& registry);

// A call of a left-hand side whose type inference fails for certain: every attribute written as a literal, every
// operand of a known kind (docs/semantics.md, "Patterns that never match").
struct LhsTypeFailure {
  SourceLoc loc;      // the call pattern
  std::string error;  // the registry's message: "add: dimension 1: 3 and 5 do not broadcast"
};
struct LhsTyping {
  std::optional<LhsTypeFailure> failure;     // the first one, in the order the pattern is typed
  std::map<std::string, TypeRef> bound;      // the type each name of the pattern is known to have
};
// Types the alternative-free left-hand side `alternative` as check_rhs_types does; a leaf named in `leaf_types`
// (what a guard tells about it) has that type instead of an unknown one.
LhsTyping type_lhs(const Pattern& alternative, const std::map<std::string, TypeRef>& leaf_types,
                   const OpRegistry& registry);
// One value type of each kind about which nothing else is known: a tensor and a shape of any rank and dtype,
// tuples of one to three fields of unknown type, and the unknown type. Inference fails on all of them only for
// what it rejects whatever the value's rank, dtype and fields (the convention check_rhs_types relies on).
const std::vector<TypeRef>& types_of_any_value();
// Calls visit(choice) for every way of giving each of `slots` slots one of `options` options (choice[i] < options,
// the first slot varying fastest; one empty choice for no slots) until visit returns false. Returns whether every
// choice was visited.
bool for_each_choice(size_t slots, size_t options, const std::function<bool(const std::vector<size_t>&)>& visit);
// `Tensor[(n, _), float32]`: a type as a pattern spells it, for messages.
std::string type_spelling(TypeRef type);

}  // namespace dpl::compiler
