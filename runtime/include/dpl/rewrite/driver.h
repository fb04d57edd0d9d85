// The rewrite driver: one worklist sweep per pass, the Rewriter API used by compiled matchers, pass registry.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dpl/ir/graph.h"
#include "dpl/support/flag_byte.h"

namespace dpl {

struct RuleInfo {
  std::string_view name;
  std::string_view location;  // "simplify.dpl:3"
  // Ops of which every match of the rule holds a call, sorted, an op once per call of it a match surely holds
  // (dplc reads them off the left-hand side: `negative(negative(x))` lists negative twice; empty: none is
  // certain). A function that holds fewer calls of one of them (Function::num_calls_of) gives the rule nothing to
  // match; where that is so for every rule of a pass, the driver does not sweep the function.
  std::span<const OpId> needs = {};
};

class Rewriter;
namespace detail {
class Sweep;
}  // namespace detail

// A matcher tries the pass's rules on `root` in priority order. When one matches and its right-hand side
// type-checks, it calls Rewriter::replace and returns the rule's index; otherwise it returns -1 and leaves the
// graph as it was (nodes it created and did not use are removed as dead).
using MatchFn = int (*)(Rewriter& rewriter, Node* root);

// The order in which the sweep first visits a function's nodes (docs/semantics.md). Rewrite passes visit operands
// before users, so a rule sees its operands already simplified; partition passes visit users first, so each
// match is as large as it can be (a conv2d+bn+relu is carved out before the conv2d+bn inside it can be).
enum class VisitOrder : uint8_t { OperandsFirst, UsersFirst };

// The driver's loop over one function, specialized for one pass (dpl/rewrite/sweep.h: compiled_sweep).
using SweepFn = void (*)(detail::Sweep& sweep);

struct PassDef {
  std::string_view name;
  std::string_view description;
  std::string_view source;  // the .dpl file it was compiled from
  std::span<const RuleInfo> rules;
  MatchFn match = nullptr;
  VisitOrder order = VisitOrder::OperandsFirst;
  // A rule is anchored at any value (`x: _` in a multi-root rule): function parameters are visited too.
  bool visit_params = false;
  // The ops of the calls the rules are rooted at, when every rule is rooted at an op call (empty: any node may
  // be a root). After a rewrite the driver queues only such calls again: the matcher would turn the others away
  // (`add(x, x) => multiply(x, 2)` rebuilt as a multiply is not visited again). A rule that fires at a node the
  // table leaves out stops the pass with an error (PassResult::error). A function that holds no call of
  // these ops (Function::holds_call_of) is not swept at all.
  std::span<const OpId> root_ops = {};
  // The loop that visits the nodes, with `match` inlined and `order` and `visit_params` fixed (dplc emits
  // compiled_sweep<match, order, visit_params>: a copy that changes those fields must reset this one); nullptr:
  // the driver's loop, which calls `match` per node.
  SweepFn sweep = nullptr;
};

namespace detail {
// Whether `root_op_flags` (PassDef::root_ops by op id; empty: any node may be a root) lets a rule be rooted at a
// node that is a call (`is_call`) of `op`. The driver's queue and its check of a rule that fired both ask.
inline bool root_op_listed(std::span<const uint8_t> root_op_flags, bool is_call, OpId op) {
  return root_op_flags.empty() || (is_call && op < root_op_flags.size() && root_op_flags[op] != 0);
}
}  // namespace detail

// `pipeline NAME = a, b, c;` in a .dpl file: passes run in sequence under one name.
struct PipelineDef {
  std::string_view name;
  std::string_view description;
  std::string_view source;
  std::span<const std::string_view> passes;
};

struct PassStats {
  std::string pass;
  std::vector<std::string> rule_names;
  std::vector<uint64_t> fired;  // per rule
  uint64_t nodes_visited = 0;
  uint64_t rewrites = 0;
  uint64_t nodes_removed = 0;
  // Functions the pass did not sweep because the ops of their calls show that none of its rules can match there
  // (PassDef::root_ops, RuleInfo::needs).
  uint64_t functions_not_swept = 0;
  double seconds = 0;
  // Replacements the rewriter declined because they do not fit where the rule matched (its guard held, and a call
  // of its right-hand side cannot be built there, or the replacement's type is not the matched node's: dplc
  // --verify warns at such a rule), and why the first one was declined.
  uint64_t type_declines = 0;
  std::string first_type_decline;
};

struct PassResult {
  PassStats stats;
  std::string error;  // non-empty when the pass stopped (rewrite budget exhausted)
  bool ok() const { return error.empty(); }
};

struct RunOptions {
  bool verify_each = false;      // run the IR verifier after every rewrite (tests)
  uint64_t budget_per_node = 16;  // rewrite budget = budget_per_node * live nodes + 1024
  // Sweep a function even where the ops of its calls show that no rule can match (PassDef::root_ops,
  // RuleInfo::needs): what a benchmark of matching alone, or a check that skipping changes nothing, asks for.
  bool sweep_every_function = false;
};

// The dtype a new constant takes when a rule does not name one: that of the first candidate with a known tensor
// dtype (compiled rules pass the constant's sibling operand, then the node being replaced), else float32.
DType first_known_dtype(std::initializer_list<const Node*> candidates);

// The position of `value` in `sorted` (ascending, distinct, finite), or -1: how a decision tree picks, in log time,
// the one rule among many whose literal a constant's value equals.
inline int literal_case(double value, std::span<const double> sorted) {
  const auto at = std::lower_bound(sorted.begin(), sorted.end(), value);
  return at != sorted.end() && *at == value ? static_cast<int>(at - sorted.begin()) : -1;
}

// `split_indices(sizes)` in a rule: the running sums of `sizes` without the total ([a, b, c] -> [a, a + b]), the
// split points split(indices_or_sections=...) takes, written over `points` (a compiled rule reuses one list: no
// allocation per rewrite once it has grown).
inline void split_indices(std::span<const int64_t> sizes, std::vector<int64_t>& points) {
  points.clear();
  int64_t sum = 0;
  for (size_t i = 0; i + 1 < sizes.size(); ++i) points.push_back(sum += sizes[i]);
}
inline void split_indices(std::initializer_list<int64_t> sizes, std::vector<int64_t>& points) {
  split_indices(std::span<const int64_t>(sizes.begin(), sizes.size()), points);
}
inline std::vector<int64_t> split_indices(std::span<const int64_t> sizes) {
  std::vector<int64_t> points;
  points.reserve(sizes.empty() ? 0 : sizes.size() - 1);
  split_indices(sizes, points);
  return points;
}

// A node's mark in the sweep's queued flags: seeded and not reached yet, or pushed and not popped yet.
inline constexpr FlagByte kQueued{1};

// What compiled right-hand sides call. Node-creating calls return nullptr when type inference fails; the
// matcher then declines the rule.
class Rewriter {
 public:
  // `root_op_flags`, by op id: the ops the pass's rules are rooted at (empty: any node may be a root).
  Rewriter(Function& function, std::vector<Node*>& worklist, std::vector<FlagByte>& queued,
           std::span<const uint8_t> root_op_flags = {});

  Function& function() { return function_; }

  // A list passed by reference (dplc's constant lists) is compared with the lists the function holds, not copied.
  Node* call(OpId op, std::initializer_list<Node*> operands, AttrList&& attrs);
  Node* call(OpId op, std::initializer_list<Node*> operands, const AttrList& attrs);
  Node* call(OpId op, std::initializer_list<Node*> operands);  // default attributes
  // call(op, operands) without the checks dplc's right-hand sides have passed at compile time: the op is
  // registered and takes that many operands, and each operand is a live node (a pattern variable or a node just
  // built). Only type inference can still decline. Other callers use call().
  Node* proven_call(OpId op, std::initializer_list<Node*> operands);
  Node* call(OpId op, std::span<Node* const> operands, AttrList&& attrs);
  Node* call(OpId op, std::span<Node* const> operands, const AttrList& attrs);
  // A scalar constant of `value` rounded to `dtype` (round_to_dtype: float32 to the nearest float, integers toward
  // zero). Equal scalars (same dtype and bit pattern) built during one run of the pass are one node
  // while it has fewer than kMaxScalarUses uses, so most rewrites build no constant.
  Node* scalar(double value, DType dtype) {
    // The value asked for last, found before rounding and hashing: most right-hand sides build one constant.
    const uint64_t bits = std::bit_cast<uint64_t>(value);
    if (last_scalar_.node != nullptr && last_scalar_.bits == bits && last_scalar_.dtype == dtype &&
        shareable(last_scalar_.node)) {
      return last_scalar_.node;
    }
    return shared_scalar(value, dtype);
  }
  static constexpr uint32_t kMaxScalarUses = 64;
  Node* shape(std::vector<Dim> dims);
  Node* tuple(std::span<Node* const> fields);
  Node* tuple(std::initializer_list<Node*> fields) {
    return tuple(std::span<Node* const>(fields.begin(), fields.size()));
  }
  Node* item(Node* tuple, int64_t index);

  // Replaces every use of `root` by `replacement` and queues the new nodes and the users of `root`.
  // Declines (returns false, graph unchanged apart from unused new nodes) when the replacement's type differs
  // from root's in dtype, rank or a static dimension.
  bool replace(Node* root, Node* replacement);
  // replace(root, call(op, operands, attrs)) without the new node: `root` becomes that call in place (its id,
  // name and users stay), so the rewrite moves no use. What dplc emits for a right-hand side that is one op call.
  // Where the operands depend on `root` (`x => relu(x)`), or `root` is not an op call (a composite function's
  // call), it builds the call and replaces. Declines as call() and replace() do, changing nothing.
  bool rebuild(Node* root, OpId op, std::initializer_list<Node*> operands, AttrList&& attrs = {});
  bool rebuild(Node* root, OpId op, std::initializer_list<Node*> operands, const AttrList& attrs);
  // rebuild() with the op's default attributes, without the checks dplc's right-hand sides have passed at compile
  // time (as proven_call()) and without looking for operands that depend on `root`: dplc emits it only for a
  // right-hand side that does not name the matched node (what a pattern's variables bind lies below it).
  bool proven_rebuild(Node* root, OpId op, std::initializer_list<Node*> operands);
  // All or nothing: checks every (root, replacement) pair as replace() does, then replaces them all (multi-root
  // and group rules). Declines, changing nothing, when any pair does not fit.
  bool replace_all(std::span<const std::pair<Node*, Node*>> replacements);

  // Carves the match rooted at `root` into a new module function and replaces `root` with a call of it. The
  // match is every node reachable from `root` through operands without passing through `inputs` (the values the
  // pattern's leaves bound, in pattern order; duplicates ignored). Constant and shape-literal inputs are copied
  // into the function, the others become its parameters in order (named like the input when that name is a
  // valid identifier no other input has, else p0, p1, ...). The private function gets the attributes
  // Composite=`composite` and Primitive=True and a name from the matched ops (`fused_nn_conv2d_nn_batch_norm`,
  // made unique). Declines (nullptr, last_error() says why) when a matched value other than `root` is used
  // outside the match (constants excepted: they are copied), when `root` is an input, when a parameter is reached
  // without being an input, or when the pass runs on a function outside a module.
  Node* partition(std::string_view composite, Node* root, std::span<Node* const> inputs);

  // The `Composite` attribute of the function a FuncCall node calls; empty when it has none (or no module, or
  // the node is not a FuncCall).
  std::string_view composite_of(const Node* func_call) const;

  // True for nodes created during this run of the pass (`once` rules never fire on them).
  bool created_in_run(const Node* node) const { return node->id() >= first_new_id_; }

  Module* module() const { return module_; }  // nullptr when the pass runs on a lone function
  void set_module(Module* module) { module_ = module; }

  const std::string& last_error() const { return last_error_; }
  // Replacements declined because they do not fit where the rule matched (a right-hand side's call that cannot be
  // built there, or a replacement whose type is not its root's), and the first reason.
  uint64_t type_declines() const { return type_declines_; }
  const std::string& first_type_decline() const { return first_type_decline_; }

 private:
  void enqueue(Node* node);
  // Whether the pass has a rule rooted at `node` (PassDef::root_ops), as far as its kind and op tell.
  bool may_be_root(const Node* node) const {
    if (root_op_flags_.empty()) return node->kind() != NodeKind::Param && node->kind() != NodeKind::Constant;
    return detail::root_op_listed(root_op_flags_, node->is_call(), node->op());
  }
  Node* shared_scalar(double value, DType dtype);  // scalar() past its last-asked entry
  static bool shareable(const Node* scalar) { return !scalar->is_dead() && scalar->num_users() < kMaxScalarUses; }
  // After a rewrite: queues the old users of its roots, then what it `created` (operands first, so that they pop
  // first); everything below the id bound is known from now on.
  void queue_rewritten(size_t known, std::span<Node* const> users, std::span<Node* const> created);
  // Why `replacement` cannot replace `root` (empty when it can); `types_differ` says whether that is the reason.
  std::string replacement_problem(const Node* root, const Node* replacement, bool& types_differ) const;
  static std::string type_problem(const Node* root, TypeRef replacement, bool& types_differ);
  void count_decline(bool types_differ);  // after last_error_ says why a replacement was declined
  Node* built(Node* node);                // counts a right-hand side's call that could not be built (null)
  bool depends_on(std::span<Node* const> operands, const Node* root) const;
  bool rebuilds_in_place(const Node* root, std::span<Node* const> operands) const;
  bool rebuild_in_place(Node* root, OpId op, std::span<Node* const> operands, const AttrList* attrs);
  // The steps of replace() and replace_all(): queue the users of the roots and the nodes the rewrite created
  // (ids from `known` on); give a root's uses to its replacement; erase the root if nothing uses it any more.
  void queue_replaced(size_t known, std::span<Node* const> users);
  void take_uses(Node* root, Node* replacement, size_t known);
  void erase_replaced(Node* root, const Node* replacement, size_t known);
  // rebuild() once the attributes are checked and interned (nullptr: a check failed, last_error_ says which).
  bool rebuild_interned(Node* root, OpId op, std::span<Node* const> operands, const AttrList* interned);

  Function& function_;
  Module* module_ = nullptr;
  uint32_t first_new_id_ = 0;
  std::vector<Node*>& worklist_;
  std::vector<FlagByte>& queued_;  // by node id: kQueued while on the worklist
  std::span<const uint8_t> root_op_flags_;
  size_t known_ids_;              // ids below this were known before the current rewrite
  std::string last_error_;
  uint64_t type_declines_ = 0;
  std::string first_type_decline_;
  // Reused by every rewrite: the nodes it created, the users of several matched nodes (replace_all() with more
  // than one root) and more than two users in the order they are queued.
  std::vector<Node*> created_scratch_;
  std::vector<Node*> users_scratch_;
  std::vector<Node*> sorted_users_scratch_;
  // scalar()'s constants, direct-mapped by dtype and bit pattern (a collision just builds a new constant).
  struct SharedScalar {
    DType dtype = DType::Unknown;
    uint64_t bits = 0;
    Node* node = nullptr;
  };
  static constexpr int kSharedScalarSlotsLog2 = 4;
  std::array<SharedScalar, size_t{1} << kSharedScalarSlotsLog2> shared_scalars_{};
  SharedScalar last_scalar_;  // by the bit pattern asked for, not rounded
  // composite_of(): callee name -> function, so a composite pattern tried at every node does not scan the module.
  mutable std::map<std::string, const Function*, std::less<>> callees_;
};

// A lone function: Rewriter::module() is null, so partition rules decline.
PassResult run_pass(const PassDef& pass, Function& function, const RunOptions& options = {});
// Every function of the module that existed when the pass started (not those its partitions create). At the end,
// private functions with a Composite attribute that were called before or created by the pass, and that nothing
// calls any more, are removed.
PassResult run_pass(const PassDef& pass, Module& module, const RunOptions& options = {});

// Passes linked into a program register themselves here (generated code does it with DPL_REGISTER_PASS).
class PassRegistry {
 public:
  static void add(const PassDef& pass);
  static const PassDef* find(std::string_view name);
  static std::vector<const PassDef*> all();  // sorted by name
  static void add_pipeline(const PipelineDef& pipeline);
  static const PipelineDef* find_pipeline(std::string_view name);
  static std::vector<const PipelineDef*> all_pipelines();  // sorted by name
};

struct PipelineRegistration {
  explicit PipelineRegistration(const PipelineDef& pipeline) { PassRegistry::add_pipeline(pipeline); }
};

struct PassRegistration {
  explicit PassRegistration(const PassDef& pass) { PassRegistry::add(pass); }
};

// Statistics as an aligned text table (rule, location, fired), for `dpl-opt --stats`.
std::string format_stats(const PassStats& stats, std::span<const RuleInfo> rules);

}  // namespace dpl
