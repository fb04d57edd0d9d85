// The re-scan baseline (see rescan.h): TVM's fixed-point loop around a whole-graph scan, with dpl's matcher.
#include "rescan.h"

#include <chrono>
#include <vector>

namespace dpl::bench {
namespace {

// Parameters and constants never match a rule's root; a node nothing uses any more was replaced.
bool is_candidate(const Function& function, const Node* node) {
  if (node->kind() == NodeKind::Param || node->kind() == NodeKind::Constant || node->is_dead()) return false;
  return node->num_users() > 0 || node == function.output();
}

}  // namespace

RescanStats run_rescan(const PassDef& pass, Function& function) {
  const auto start = std::chrono::steady_clock::now();
  RescanStats result;
  PassStats& stats = result.pass;
  stats.pass = std::string(pass.name);
  for (const RuleInfo& rule : pass.rules) stats.rule_names.emplace_back(rule.name);
  stats.fired.assign(pass.rules.size(), 0);

  // The Rewriter queues what a rewrite touched for a worklist driver; this baseline ignores that queue.
  std::vector<Node*> ignored_queue;
  std::vector<FlagByte> queued;
  const uint64_t scan_budget = 16 * static_cast<uint64_t>(function.nodes().size()) + 16;
  bool changed = true;
  while (changed) {
    if (result.scans == scan_budget) {
      result.error = "the re-scan baseline did not converge";
      break;
    }
    changed = false;
    ++result.scans;
    // Ids below queued.size() are what the Rewriter takes as existing nodes; the rest are new.
    queued.assign(function.node_id_bound(), FlagByte{});
    Rewriter rewriter(function, ignored_queue, queued);
    const size_t scan_end = function.nodes().size();  // nodes created during the scan wait for the next one
    for (size_t i = 0; i < scan_end; ++i) {
      // The worklist driver's sweep asks for nodes ahead the same way: the comparison is of strategies.
      if (i + detail::kPrefetchDistance < scan_end) __builtin_prefetch(function.nodes()[i + detail::kPrefetchDistance]);
      Node* node = function.nodes()[i];
      if (!is_candidate(function, node)) continue;
      ++stats.nodes_visited;
      const size_t nodes_before = function.nodes().size();
      const int rule = pass.match(rewriter, node);
      // Like the worklist driver: a rule that declined after building part of its right-hand side leaves
      // unused nodes behind.
      for (size_t j = nodes_before; j < function.nodes().size(); ++j) {
        Node* created = function.nodes()[j];
        if (!created->is_dead() && created->num_users() == 0 && created != function.output()) {
          function.erase_unused(created);
        }
      }
      for (Node* touched : ignored_queue) queued[touched->id()] = FlagByte{};
      ignored_queue.clear();
      if (rule < 0) continue;
      changed = true;
      ++stats.rewrites;
      ++stats.fired[static_cast<size_t>(rule)];
    }
    function.compact();
  }
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace dpl::bench
