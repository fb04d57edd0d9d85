// A compile-time look at termination: rules that visibly undo each other (docs/semantics.md, "Termination").
#pragma once

#include "dpl/compiler/ast.h"
#include "dpl/ir/op_registry.h"
#include "dpl/support/diagnostics.h"

namespace dpl::compiler {

// Warns about pairs of rewrite rules of one pass whose right-hand sides each match the other's left-hand side
// (the pass can ping-pong between them until the rewrite budget stops it), and about single rules whose
// right-hand side matches their own left-hand side, or multi-root rules whose replacements match their own
// roots. Rules with a guard or `once` are left out: the guard or the option may be what stops them. Expects a
// file that sema checked without errors.
void warn_rules_that_undo_each_other(const AstFile& file, DiagnosticEngine& diags, const OpRegistry& registry);

}  // namespace dpl::compiler
