// The ops every match of a rule contains (required_ops.h), read off its left-hand side's patterns.
#include "dpl/compiler/required_ops.h"

#include <algorithm>
#include <iterator>
#include <utility>

namespace dpl::compiler {
namespace {

// Sorted; an op appears once per call of it that every match holds (a multiset). On multisets set_union keeps
// the larger count of each op and set_intersection the smaller.
using OpSet = std::vector<OpId>;

// Patterns that may match the same node (sibling operands, the roots of a multi-root rule): a match holds what
// the one needing more holds, not the sum.
OpSet united(OpSet a, const OpSet& b) {
  OpSet out;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

OpSet intersected(const OpSet& a, const OpSet& b) {
  OpSet out;
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

// A call and what its operands' patterns match are different nodes (a graph has no cycles): the counts add up.
OpSet with_call_of(OpSet below, OpId op) {
  below.insert(std::upper_bound(below.begin(), below.end(), op), op);
  return below;
}

OpSet required_by(const Pattern& pattern);

OpSet required_by_all(const std::vector<PatternPtr>& patterns) {
  OpSet out;
  for (const PatternPtr& pattern : patterns) out = united(std::move(out), required_by(*pattern));
  return out;
}

OpSet required_by(const Pattern& pattern) {
  if (const auto* bind = std::get_if<BindPattern>(&pattern.node)) return required_by(*bind->inner);
  if (const auto* alt = std::get_if<AltPattern>(&pattern.node)) {
    if (alt->alternatives.empty()) return {};
    OpSet out = required_by(*alt->alternatives.front());
    for (size_t i = 1; i < alt->alternatives.size(); ++i) out = intersected(out, required_by(*alt->alternatives[i]));
    return out;
  }
  if (const auto* call = std::get_if<CallPattern>(&pattern.node)) {
    // `nn.relu?(x)` may be x alone; a composite's call is a call of a function, not of an op.
    if (call->optional) return call->operands.size() == 1 ? required_by(*call->operands.front()) : OpSet{};
    OpSet out = required_by_all(call->operands);
    return call->ops.size() == 1 && !call->composite ? with_call_of(std::move(out), call->ops.front().id) : out;
  }
  if (const auto* item = std::get_if<ItemPattern>(&pattern.node)) return required_by(*item->tuple);
  if (const auto* tuple = std::get_if<TuplePattern>(&pattern.node)) return required_by_all(tuple->fields);
  // The child is matched at the root; whether a walk up reaches the parent depends on the graph.
  if (const auto* region = std::get_if<DominatorPattern>(&pattern.node)) return required_by(*region->child);
  return {};  // `_`, a variable, a constant, a type, a parameter
}

}  // namespace

std::vector<OpId> required_ops(const Rule& rule) {
  if (rule.kind == Rule::Kind::MultiRoot) {
    OpSet out;
    // Every root matches, a group with two members at least (docs/semantics.md, "Multi-root and group rules").
    for (const RootDecl& root : rule.roots) {
      if (root.pattern) out = united(std::move(out), required_by(*root.pattern));
    }
    return out;
  }
  return rule.lhs ? required_by(*rule.lhs) : OpSet{};
}

}  // namespace dpl::compiler
