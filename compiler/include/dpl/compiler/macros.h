// Pattern declarations (`pattern name(params) = body;`): checked, then expanded at every use in a rule.
#pragma once

#include <vector>

#include "dpl/compiler/ast.h"
#include "dpl/ir/op_registry.h"
#include "dpl/support/diagnostics.h"

namespace dpl::compiler {

// Checks the declarations of `file` and replaces every use of a declaration (its own or one of `imported`) in
// the rules' patterns by the declaration's body, the parameters replaced by the arguments. A parameter used
// more than once stands for one value. Reports problems to `diags`; returns true when there was none.
bool expand_macros(AstFile& file, const std::vector<const PatternMacro*>& imported, DiagnosticEngine& diags,
                   const OpRegistry& registry = OpRegistry::global());

}  // namespace dpl::compiler
