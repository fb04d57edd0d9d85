// The driver's worklist loop as a template: a compiled pass instantiates it with its matcher inlined
// (PassDef::sweep, emitted by dplc), other passes run it through their MatchFn.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "dpl/rewrite/driver.h"

namespace dpl {
namespace detail {

// The rules of the last rewrites, to name the culprits when the budget runs out.
class RecentRules {
 public:
  void add(int rule) { ring_[count_++ % ring_.size()] = rule; }
  // "mul_to_add (128), add_to_mul (128)": the rules that fired most among the last rewrites.
  std::string most_frequent(std::span<const std::string> rule_names, size_t limit) const;
  size_t window() const { return count_ < ring_.size() ? count_ : ring_.size(); }

 private:
  std::array<int, 256> ring_;  // only the first min(count_, 256) are read: not cleared per function
  size_t count_ = 0;
};

// One run of a pass over one function (docs/semantics.md, "The sweep"; docs/architecture.md, "A compiled pass runs
// its own sweep"). Conceptually the worklist is one stack seeded with every node of the function, in reverse
// topological order (popping visits operands before their users) or in topological order (users before their
// operands), onto which rewrites push the nodes they affect. The seeded part is not copied: a cursor walks nodes()
// in the popping order and `queued` marks the nodes seeded and not yet reached, so the stack holds only what
// rewrites pushed, which pops first. (A seeded node is never pushed before the cursor reaches it: it is still
// queued.) The driver builds it; the loop below reads the inline members on every visit and calls the out-of-line
// ones only after a visit that built nodes or fired a rule.
class Sweep {
 public:
  Sweep(const PassDef& pass, std::span<const uint8_t> root_op_flags, Function& function, Module* module,
        const RunOptions& options, PassResult& result, std::vector<Node*>& worklist, std::vector<FlagByte>& queued);
  Sweep(const Sweep&) = delete;
  Sweep& operator=(const Sweep&) = delete;

  // Calls visit(node) for each node worth visiting, in the sweep's order, until it returns false or nothing is
  // left: what rewrites pushed first, then the next seeded node still queued. Written as the seeded walk with the
  // stack drained before each visit (not as a next() per node), the walk's position stays in a register and a
  // visit that pushed nothing costs one test of the stack. The walk past nodes not worth visiting calls nothing,
  // so the order's and the flags' buffers stay in registers there; a visit may move them (rewrites append and
  // queue new ids): they are read again after it.
  template <VisitOrder Order, bool VisitParams, typename Visit>
  void for_each_to_visit(Visit visit) {
    uint64_t visited = 0;  // counted here, in a register, and added to the stats once, after the walk
    auto visit_counted = [&](Node* node) __attribute__((always_inline)) {
      ++visited;
      return visit(node);
    };
    walk<Order, VisitParams>(visit_counted);
    result_.stats.nodes_visited += visited;
  }

  // Parameters and constants never match a rule's root, except parameters in a pass with a rule anchored at any
  // value; nodes nothing uses any more were replaced.
  template <bool VisitParams>
  bool worth_visiting(const Node* node) const {
    if (VisitParams && node->kind() == NodeKind::Param && !node->is_dead()) return node->num_users() > 0;
    // One branch, not three: constants sit between the calls that read them, a coin flip to the predictor.
    static_assert(NodeKind::Param < NodeKind::Constant && NodeKind::Constant < NodeKind::Call);
    const bool leaf = node->kind() <= NodeKind::Constant;
    const bool dead = node->is_dead();
    if (leaf | dead) return false;
    return node->num_users() > 0 || node == function_.output();
  }

  Rewriter& rewriter() { return rewriter_; }
  const PassDef& pass() const { return pass_; }
  size_t nodes_listed() const { return function_.nodes().size(); }
  // Removes the nodes from position `listed_before` of the order on that a visit built and did not use (a rule
  // declined after building part of its right-hand side, whether or not another fired after it).
  void discard_unused(size_t listed_before);
  // After `rule` fired at `node` (a call of `op` before, if `was_call`): counts it, runs the checks the options
  // ask for. False when the pass must stop (PassResult::error says why). Counting is inline, since most visits of
  // a cascade fire; the checks and the errors are not.
  bool fired(int rule, const Node* node, OpId op, bool was_call) {
    if (static_cast<size_t>(rule) >= pass_.rules.size() || !root_op_listed(root_op_flags_, was_call, op)) [[unlikely]] {
      return misreported(rule, node, op);
    }
    PassStats& stats = result_.stats;
    ++stats.rewrites;
    ++stats.fired[static_cast<size_t>(rule)];
    recent_.add(rule);
    if (options_.verify_each || stats.rewrites - rewrites_before_ > budget_) [[unlikely]] {
      return checked(rule, node, op);
    }
    return true;
  }

  uint64_t discarded() const { return discarded_; }

 private:
  // for_each_to_visit() without the count of visits.
  template <VisitOrder Order, bool VisitParams, typename Visit>
  void walk(Visit visit) {
    const std::vector<Node*>& order = function_.nodes();  // rewrites append to it: indexed, never iterated
    const size_t prefetched_until = seeded_ > kPrefetchDistance ? seeded_ - kPrefetchDistance : 0;
    size_t cursor = 0;  // the seeded positions reached so far
    for (;;) {
      while (!worklist_.empty()) {
        // A cascade leaves the users it queued deep in the stack, popped long after they were pushed (out of
        // cache by then): ask for the one that pops a few visits from now.
        const size_t pushed = worklist_.size();
        if (pushed > kPrefetchDistance) __builtin_prefetch(worklist_[pushed - 1 - kPrefetchDistance]);
        Node* node = worklist_.back();
        worklist_.pop_back();
        queued_[node->id()] = FlagByte{};
        if (worth_visiting<VisitParams>(node) && !visit(node)) return;
      }
      Node* const* const nodes = order.data();
      FlagByte* const queued = queued_.data();
      Node* node = nullptr;
      while (cursor < seeded_) {
        const size_t position = Order == VisitOrder::UsersFirst ? seeded_ - 1 - cursor : cursor;
        if (cursor < prefetched_until) {
          __builtin_prefetch(nodes[Order == VisitOrder::UsersFirst ? position - kPrefetchDistance
                                                                   : position + kPrefetchDistance]);
        }
        ++cursor;
        Node* seeded = nodes[position];
        FlagByte& flag = queued[seeded->id()];
        if (!any(flag)) continue;  // a rewrite pushed it, and it was visited then
        flag = FlagByte{};
        if (worth_visiting<VisitParams>(seeded)) {
          node = seeded;
          break;
        }
      }
      if (node == nullptr || !visit(node)) return;
    }
  }

  // fired(), when the matcher reported a rule the pass does not have or one rooted where PassDef::root_ops says no
  // rule is: sets the error, returns false.
  bool misreported(int rule, const Node* node, OpId op);
  // fired(), when the options ask for a check after each rewrite or the budget is spent: false when the pass stops.
  bool checked(int rule, const Node* node, OpId op);

  const PassDef& pass_;
  std::span<const uint8_t> root_op_flags_;
  Function& function_;
  const RunOptions& options_;
  PassResult& result_;
  std::vector<Node*>& worklist_;
  std::vector<FlagByte>& queued_;
  Rewriter rewriter_;
  const size_t seeded_;  // rewrites append; what they append is not seeded
  const uint64_t rewrites_before_;
  const uint64_t live_nodes_;
  const uint64_t budget_;
  RecentRules recent_;
  uint64_t discarded_ = 0;  // nodes that right-hand sides built and then did not use
};

// Visits nodes until the worklist and the seeded order are exhausted or a fired rule stops the pass; `match` is
// the pass's matcher (a MatchFn, or a lambda that calls a compiled one directly, so that it is inlined here).
template <VisitOrder Order, bool VisitParams, typename Match>
void run_sweep(Sweep& sweep, Match match) {
  // Inlined at both of the walk's calls, with the matcher in it (the compiled dispatcher is always_inline).
  sweep.for_each_to_visit<Order, VisitParams>([&sweep, &match](Node* node) __attribute__((always_inline)) {
    const size_t listed_before = sweep.nodes_listed();
    const OpId op = node->op();  // for messages: a rule may rebuild the node as another op's call
    const bool was_call = node->is_call();
    const int rule = match(sweep.rewriter(), node);
    if (sweep.nodes_listed() != listed_before) sweep.discard_unused(listed_before);
    return rule < 0 || sweep.fired(rule, node, op, was_call);
  });
}

}  // namespace detail

// The sweep of a compiled pass whose matcher is `Match`: what dplc puts in PassDef::sweep, with the pass's visit
// order and whether it visits parameters.
template <MatchFn Match, VisitOrder Order, bool VisitParams>
void compiled_sweep(detail::Sweep& sweep) {
  detail::run_sweep<Order, VisitParams>(sweep, [](Rewriter& rewriter, Node* root) { return Match(rewriter, root); });
}

}  // namespace dpl
