// The walk behind dominator patterns: from a child node up through path nodes to one parent node.
#include "dpl/ir/dominators.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace dpl {

namespace {

// Marks nodes as reached in one walk without clearing a table per walk: a node is reached when its stamp equals
// the current walk's number. Matchers call the walk at many nodes, so it must cost only what it visits.
class ReachedSet {
 public:
  explicit ReachedSet(uint32_t id_bound) {
    if (stamps_.size() < id_bound) stamps_.resize(id_bound, 0);
    if (++walk_ == 0) {  // wrapped around: old stamps could collide
      std::fill(stamps_.begin(), stamps_.end(), 0);
      walk_ = 1;
    }
  }
  bool contains(const Node* node) const { return stamps_[node->id()] == walk_; }
  void insert(const Node* node) { stamps_[node->id()] = walk_; }

 private:
  static thread_local std::vector<uint32_t> stamps_;
  static thread_local uint32_t walk_;
};

thread_local std::vector<uint32_t> ReachedSet::stamps_;
thread_local uint32_t ReachedSet::walk_ = 0;

}  // namespace

Node* find_dominated_parent(const Function& function, const Node* child, NodeTest is_parent, NodeTest on_path) {
  ReachedSet reached(function.node_id_bound());
  Node* parent = nullptr;
  std::vector<Node*> between;
  std::vector<Node*> pending(child->operands().begin(), child->operands().end());
  while (!pending.empty()) {
    Node* node = pending.back();
    pending.pop_back();
    if (reached.contains(node)) continue;
    reached.insert(node);
    if (is_parent(node)) {
      if (parent != nullptr) return nullptr;  // two different parents
      parent = node;
      continue;
    }
    if (!on_path(node)) return nullptr;
    between.push_back(node);
    pending.insert(pending.end(), node->operands().begin(), node->operands().end());
  }
  if (parent == nullptr) return nullptr;
  between.push_back(parent);
  for (const Node* node : between) {
    if (node == function.output()) return nullptr;
    for (const Node* user : node->users()) {
      if (user != child && !reached.contains(user)) return nullptr;
    }
  }
  return parent;
}

bool is_call_of_any(const Node* node, std::span<const OpId> ops) {
  return node->is_call() && std::find(ops.begin(), ops.end(), node->op()) != ops.end();
}

}  // namespace dpl
