// The ops every match of a rule contains: what lets the driver skip a pass in a function that holds none of them.
#pragma once

#include <vector>

#include "dpl/compiler/ast.h"

namespace dpl::compiler {

// The ops of which every match of `rule` holds a call, sorted: an op named alone at a call pattern that cannot be
// skipped (not `op?(x)`), in every alternative, or in any root of a multi-root rule. An op appears as many times
// as a match surely holds distinct calls of it: twice for `negative(negative(x))`, where one call is the other's
// operand; once for `add(exp(x), exp(y))`, whose two exps may be one node. Empty when no op is certain
// (`(add | multiply)(x, y)`, `_`). Expects a rule that sema checked (op ids filled in).
std::vector<OpId> required_ops(const Rule& rule);

}  // namespace dpl::compiler
