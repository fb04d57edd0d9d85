// Whole-graph queries: structural equality modulo binding names, and the IR verifier.
#pragma once

#include <string>

#include "dpl/ir/graph.h"

namespace dpl {

struct EqualityResult {
  bool equal = true;
  std::string difference;  // where the first difference is, e.g. "main: binding x4: op multiply vs add"
  explicit operator bool() const { return equal; }
};

// Graphs are equal when their outputs are equal; two nodes are equal when kind, op, attributes, literal values,
// types and operands (recursively) are. Binding names and node order do not matter; parameter names do not
// either, parameter positions do. Modules compare functions by name.
EqualityResult structurally_equal(const Function& a, const Function& b);
EqualityResult structurally_equal(const Module& a, const Module& b);

// Checks invariants: operands precede users in nodes() (while Function::order_is_topological(); between a
// rewrite and the next compact() the graph must still be acyclic), use lists mirror operand lists exactly, no
// live node uses a dead one, every call's type equals what the registry infers, the output is live.
// Returns an empty string when well-formed, else a description of the first violation.
std::string verify(const Function& function);
std::string verify(const Module& module);

}  // namespace dpl
