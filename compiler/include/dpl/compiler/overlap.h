// Overlap analysis of the rules of a pass: rules that can never fire, and same-priority rules that compete.
#pragma once

#include "dpl/compiler/ast.h"
#include "dpl/ir/op_registry.h"
#include "dpl/support/diagnostics.h"

namespace dpl::compiler {

// Whether alternative-free pattern `general` matches every node that `special` matches (structurally; guards are
// not read). Conservative: "false" when unsure. Commutative ops of `registry` may match in either operand order.
bool pattern_covers(const Pattern& general, const Pattern& special, const OpRegistry& registry);

// Whether some node could match both alternative-free patterns without a call of constants only inside the
// match (docs/semantics.md). Generous: "true" when unsure (a repeated name is read as the pattern it is bound
// to, but not required to be the same node).
bool patterns_unify(const Pattern& a, const Pattern& b, const OpRegistry& registry);

// For each pass of `file`, in rule order (docs/semantics.md, "Rule order"):
// * an error at a single-root rule or partition each of whose alternatives is covered by an alternative of
//   another rule tried before it that has no guard and cannot decline (no `once`, no extern rewriter, a partition
//   without inner nodes);
// * a warning at the later-declared of two single-root rules of equal priority, not both guarded, with
//   alternatives that can match one node while neither covers the other;
// * the same warning for two multi-root rules that can match at one anchor node and replace the same node there.
// Expects a file that sema checked without errors.
void check_rule_overlaps(const AstFile& file, DiagnosticEngine& diags, const OpRegistry& registry);

}  // namespace dpl::compiler
