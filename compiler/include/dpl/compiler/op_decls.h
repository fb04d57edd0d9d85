// Custom op declarations (`op my.scale(x, factor: float = 1.0) : elementwise -> same_as(x);`): checking them and
// the op registry a file is checked and compiled against.
#pragma once

#include <memory>

#include "dpl/compiler/ast.h"
#include "dpl/ir/op_registry.h"
#include "dpl/support/diagnostics.h"

namespace dpl::compiler {

// Checks the `op` declarations of `file` and returns `registry` extended by the valid ones (a copy: `registry`
// itself is not changed), with each declaration's `id` and `same_as` filled in. Reports what is wrong to `diags`.
std::shared_ptr<const OpRegistry> declare_ops(AstFile& file, DiagnosticEngine& diags, const OpRegistry& registry);

}  // namespace dpl::compiler
