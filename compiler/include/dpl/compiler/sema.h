// Semantic checks: op names and signatures from the op registry, attributes, variables, rule and pass names.
#pragma once

#include <string>
#include <string_view>

#include "dpl/compiler/ast.h"
#include "dpl/ir/op_registry.h"
#include "dpl/support/diagnostics.h"

namespace dpl::compiler {

// Checks `file` and resolves it in place (op ids, op variables on the right, literals converted to the kind of
// the attribute they meet). Reports every problem of the file to `diags`; returns true when there was no error
// (warnings, such as unused variables, do not count).
bool check(AstFile& file, DiagnosticEngine& diags, const OpRegistry& registry = OpRegistry::global());

// The registered op name closest to `name` by edit distance, or "" when nothing is close enough to suggest.
std::string nearest_op_name(std::string_view name, const OpRegistry& registry);

}  // namespace dpl::compiler
