// Dominator patterns: finds the region between a matched child node and the single parent node it hangs from.
#pragma once

#include <span>
#include <type_traits>

#include "dpl/ir/graph.h"

namespace dpl {

// A non-owning reference to a `bool(const Node*)` callable (usually a lambda that outlives the call taking it).
class NodeTest {
 public:
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, NodeTest> && std::is_invocable_r_v<bool, const F&, const Node*>)
  NodeTest(const F& test)  // NOLINT(google-explicit-constructor): lambdas convert implicitly
      : object_(&test), call_([](const void* object, const Node* node) -> bool {
          return (*static_cast<const F*>(object))(node);
        }) {}

  bool operator()(const Node* node) const { return call_(object_, node); }

 private:
  const void* object_;
  bool (*call_)(const void*, const Node*);
};

// Walks up from the operands of `child` (docs/semantics.md, dominator patterns). Every node reached is either
// the parent (`is_parent` holds: the walk stops there) or on the path (`on_path` holds: its operands are walked
// in turn); any other node, or a second node for which `is_parent` holds, ends the search without a parent.
// Then every node between parent and child, and the parent itself, must be used only by the child or by nodes
// between (and not be the function's output): the child post-dominates the region. Returns the parent, or
// nullptr. `on_path` is asked only about nodes for which `is_parent` does not hold.
Node* find_dominated_parent(const Function& function, const Node* child, NodeTest is_parent, NodeTest on_path);

// Whether `node` is a call of one of `ops` (a dominator pattern's path: its ops, op classes expanded).
bool is_call_of_any(const Node* node, std::span<const OpId> ops);

}  // namespace dpl
