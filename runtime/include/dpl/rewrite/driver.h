// The rewrite driver: one worklist sweep per pass, the Rewriter API used by compiled matchers, pass registry.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dpl/ir/graph.h"

namespace dpl {

struct RuleInfo {
  std::string_view name;
  std::string_view location;  // "simplify.dpl:3"
};

class Rewriter;

// A matcher tries the pass's rules on `root` in priority order. When one matches and its right-hand side
// type-checks, it calls Rewriter::replace and returns the rule's index; otherwise it returns -1 and leaves the
// graph as it was (nodes it created and did not use are removed as dead).
using MatchFn = int (*)(Rewriter& rewriter, Node* root);

struct PassDef {
  std::string_view name;
  std::string_view description;
  std::string_view source;  // the .dpl file it was compiled from
  std::span<const RuleInfo> rules;
  MatchFn match = nullptr;
};

struct PassStats {
  std::string pass;
  std::vector<std::string> rule_names;
  std::vector<uint64_t> fired;  // per rule
  uint64_t nodes_visited = 0;
  uint64_t rewrites = 0;
  uint64_t nodes_removed = 0;
  double seconds = 0;
};

struct PassResult {
  PassStats stats;
  std::string error;  // non-empty when the pass stopped (rewrite budget exhausted)
  bool ok() const { return error.empty(); }
};

struct RunOptions {
  bool verify_each = false;      // run the IR verifier after every rewrite (tests)
  uint64_t budget_per_node = 16;  // rewrite budget = budget_per_node * live nodes + 1024
};

// The dtype a new constant takes when a rule does not name one: that of the first candidate with a known tensor
// dtype (compiled rules pass the constant's sibling operand, then the node being replaced), else float32.
DType first_known_dtype(std::initializer_list<const Node*> candidates);

// What compiled right-hand sides call. Node-creating calls return nullptr when type inference fails; the
// matcher then declines the rule.
class Rewriter {
 public:
  Rewriter(Function& function, std::vector<Node*>& worklist, std::vector<uint8_t>& queued);

  Function& function() { return function_; }

  Node* call(OpId op, std::initializer_list<Node*> operands, AttrList attrs);
  Node* call(OpId op, std::initializer_list<Node*> operands);  // default attributes
  Node* call(OpId op, std::span<Node* const> operands, AttrList attrs);
  Node* scalar(double value, DType dtype);
  Node* shape(std::vector<Dim> dims);
  Node* tuple(std::span<Node* const> fields);
  Node* item(Node* tuple, int64_t index);

  // Replaces every use of `root` by `replacement` and queues the new nodes and the users of `root`.
  // Declines (returns false, graph unchanged apart from unused new nodes) when the replacement's type differs
  // from root's in dtype, rank or a static dimension.
  bool replace(Node* root, Node* replacement);

  const std::string& last_error() const { return last_error_; }

 private:
  void enqueue(Node* node);

  Function& function_;
  std::vector<Node*>& worklist_;
  std::vector<uint8_t>& queued_;
  std::string last_error_;
  // Reused by every replace(): the nodes a rewrite created and the matched node's users.
  std::vector<Node*> created_scratch_;
  std::vector<Node*> users_scratch_;
};

PassResult run_pass(const PassDef& pass, Function& function, const RunOptions& options = {});
PassResult run_pass(const PassDef& pass, Module& module, const RunOptions& options = {});

// Passes linked into a program register themselves here (generated code does it with DPL_REGISTER_PASS).
class PassRegistry {
 public:
  static void add(const PassDef& pass);
  static const PassDef* find(std::string_view name);
  static std::vector<const PassDef*> all();  // sorted by name
};

struct PassRegistration {
  explicit PassRegistration(const PassDef& pass) { PassRegistry::add(pass); }
};

// Statistics as an aligned text table (rule, location, fired), for `dpl-opt --stats`.
std::string format_stats(const PassStats& stats, std::span<const RuleInfo> rules);

}  // namespace dpl
