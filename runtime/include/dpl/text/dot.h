// Graphviz (DOT) pictures of a module before and after a rewrite, with the nodes the rewrite changed highlighted.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "dpl/ir/graph.h"

namespace dpl {

// Which nodes a rewrite changed. The "after" module is a separate copy, so nodes are compared structurally: two
// nodes are the same when kind, op, attributes, literal values, tuple index, shape, callee, type and operands
// (recursively) are; binding names are ignored and parameters are identified by their position. A node downstream
// of a rewrite differs from its old self only through its operands: it is "rewired", neither replaced nor created.
struct RewriteDiff {
  std::vector<const Node*> replaced;  // nodes of `before` with no structural equal in `after` (matched, rewritten)
  std::vector<const Node*> created;   // nodes of `after` with no structural equal in `before` (built by a rewrite)
  // Nodes of either module without a structural equal in the other but whose own computation (kind, op,
  // attributes, type) on the operands both modules share, and on some changed operands, the other module has too.
  std::vector<const Node*> rewired;
};
RewriteDiff diff_rewrite(const Module& before, const Module& after);

// A digraph with two clusters side by side, "before" and "after", one sub-cluster per function when a module has
// several. Edges run from operand to user; replaced nodes are filled red in "before", created nodes green in
// "after", rewired nodes have a dashed outline and each function's output a double border. `title` labels the whole picture.
std::string rewrite_to_dot(const Module& before, const Module& after, std::string_view title);

}  // namespace dpl
