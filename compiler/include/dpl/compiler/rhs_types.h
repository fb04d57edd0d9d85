// Static typing of right-hand sides: what a rule builds must be able to stand in for what it matched.
#pragma once

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

}  // namespace dpl::compiler
