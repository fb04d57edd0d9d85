// The rewrite driver: the worklist sweep, the Rewriter API that compiled matchers call, the pass registry and
// the statistics table.
#include "dpl/rewrite/driver.h"
#include "dpl/rewrite/sweep.h"

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstdio>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "describe.h"
#include "dpl/ir/analysis.h"
#include "dpl/support/hash_slot.h"

namespace dpl {
namespace {

// Appends to `created`, operands first, the live nodes that the current rewrite created: the tail of the order with
// ids the driver does not know yet (>= `known`), in creation order. Read from the order, not by walking the
// replacements' operands, which are mostly old nodes: cold on a large graph. The tail may hold nodes that a rule
// built and declined earlier in the same visit; the driver removes those after the visit (and skips them when
// they pop).
inline void collect_created(const Function& function, size_t known, std::vector<Node*>& created) {
  const std::vector<Node*>& order = function.nodes();
  if (order.empty() || order.back()->id() < known) [[likely]] return;  // most in-place rebuilds create nothing
  size_t first = order.size();
  while (first > 0 && order[first - 1]->id() >= known) --first;
  for (size_t i = first; i < order.size(); ++i) {
    if (!order[i]->is_dead()) created.push_back(order[i]);
  }
}

// The sweep's worklist and visit flags, kept per thread from one pass to the next: for a 10^6-node graph the flags
// are a megabyte, and glibc's free() of a chunk that large consolidates every small chunk freed before it
// (measured: 11% of the transformer pass). A pass run from inside a pass (an extern rewriter) gets its own.
class SweepScratch {
 public:
  SweepScratch() : shared_(shared().busy ? &own_ : &shared()) { shared_->busy = true; }
  ~SweepScratch() { shared_->busy = false; }
  SweepScratch(const SweepScratch&) = delete;
  SweepScratch& operator=(const SweepScratch&) = delete;

  std::vector<Node*>& worklist() { return shared_->worklist; }
  std::vector<FlagByte>& queued() { return shared_->queued; }

 private:
  struct Vectors {
    std::vector<Node*> worklist;
    std::vector<FlagByte> queued;
    bool busy = false;
  };
  static Vectors& shared() {
    thread_local Vectors vectors;
    return vectors;
  }
  Vectors own_;
  Vectors* shared_;
};

std::string format_duration(double seconds) {
  if (seconds < 1e-3) return fmt::format("{:.1f} us", seconds * 1e6);
  if (seconds < 1.0) return fmt::format("{:.2f} ms", seconds * 1e3);
  return fmt::format("{:.2f} s", seconds);
}

std::map<std::string_view, const PassDef*>& registered_passes() {
  static std::map<std::string_view, const PassDef*> passes;
  return passes;
}

std::map<std::string_view, const PipelineDef*>& registered_pipelines() {
  static std::map<std::string_view, const PipelineDef*> pipelines;
  return pipelines;
}

// Registers `def` under its name; a second definition of the name is reported once at start-up and ignored.
template <typename Def>
void register_once(std::map<std::string_view, const Def*>& registry, const Def& def, std::string_view what) {
  auto [it, inserted] = registry.emplace(def.name, &def);
  if (!inserted && it->second != &def) {
    std::fprintf(stderr, "dpl: warning: %.*s '%.*s' is defined twice (%.*s and %.*s); using the first\n",
                 static_cast<int>(what.size()), what.data(), static_cast<int>(def.name.size()), def.name.data(),
                 static_cast<int>(it->second->source.size()), it->second->source.data(),
                 static_cast<int>(def.source.size()), def.source.data());
  }
}

template <typename Def>
const Def* find_registered(const std::map<std::string_view, const Def*>& registry, std::string_view name) {
  auto it = registry.find(name);
  return it == registry.end() ? nullptr : it->second;
}

template <typename Def>
std::vector<const Def*> all_registered(const std::map<std::string_view, const Def*>& registry) {
  std::vector<const Def*> defs;
  for (const auto& [name, def] : registry) defs.push_back(def);
  return defs;
}

}  // namespace

std::string detail::describe_node(const Node* node) { return describe_node(node, node->op()); }

std::string detail::describe_node(const Node* node, OpId op_before) {
  std::string what = node->is_call() ? "R." + OpRegistry::global().get(op_before).name : "value";
  if (node->kind() == NodeKind::FuncCall) what = "call of " + node->callee();
  if (node->name().empty()) return fmt::format("an unnamed {} node", what);
  return fmt::format("binding '{}' ({})", node->name(), what);
}

using detail::describe_node;

// --- Rewriter ---

Rewriter::Rewriter(Function& function, std::vector<Node*>& worklist, std::vector<FlagByte>& queued,
                   std::span<const uint8_t> root_op_flags)
    : function_(function),
      first_new_id_(function.node_id_bound()),
      worklist_(worklist),
      queued_(queued),
      root_op_flags_(root_op_flags),
      known_ids_(queued.size()) {}

namespace {
// A right-hand side's operands as the function takes them.
std::span<Node* const> as_span(std::initializer_list<Node*> operands) { return {operands.begin(), operands.size()}; }
}  // namespace

// A right-hand side's call that cannot be built where the rule matched (type inference or an attribute check
// failed: its operands do not fit the op there) declines the rule, counted as a replacement of the wrong type is.
Node* Rewriter::built(Node* node) {
  if (node == nullptr) count_decline(true);
  return node;
}

Node* Rewriter::call(OpId op, std::span<Node* const> operands, AttrList&& attrs) {
  return built(function_.add_call(op, operands, std::move(attrs), last_error_));
}

Node* Rewriter::call(OpId op, std::span<Node* const> operands, const AttrList& attrs) {
  return built(function_.add_call(op, operands, attrs, last_error_));
}

Node* Rewriter::call(OpId op, std::initializer_list<Node*> operands, AttrList&& attrs) {
  return call(op, as_span(operands), std::move(attrs));
}

Node* Rewriter::call(OpId op, std::initializer_list<Node*> operands, const AttrList& attrs) {
  return call(op, as_span(operands), attrs);
}

Node* Rewriter::call(OpId op, std::initializer_list<Node*> operands) {
  return call(op, operands, AttrList{});  // empty: the op's defaults, interned by the function
}

Node* Rewriter::proven_call(OpId op, std::initializer_list<Node*> operands) {
  return built(function_.add_call_with_defaults(op, as_span(operands), last_error_));
}

// Right-hand sides build the same few scalars again and again (`x * 2.0` per rewrite): sharing them spares each
// rewrite a node, its Literal and their page faults. Constants print inline, so the text does not change (one
// that is the output has no other users after compact(): nothing else is reachable from it). The cap keeps a
// constant from becoming a hub (removing a user searches the use list); a dead one is never handed out.
Node* Rewriter::shared_scalar(double value, DType dtype) {
  const uint64_t asked = std::bit_cast<uint64_t>(value);
  // A computed value (const(eps), const(c.value * 2)) may need more precision than its dtype has: the constant
  // holds what the dtype holds, as its printed text reads back.
  value = round_to_dtype(value, dtype);
  const uint64_t bits = std::bit_cast<uint64_t>(value);
  // Round values (1.0, 2.0, 0.125) differ only in their exponent, the top bits: folded down for hash_slot().
  const uint64_t key = bits ^ (bits >> 29) ^ static_cast<uint64_t>(dtype);
  SharedScalar& shared = shared_scalars_[hash_slot(key, kSharedScalarSlotsLog2)];
  Node* node = shared.node;
  if (node == nullptr || shared.bits != bits || shared.dtype != dtype || !shareable(node)) {
    Literal literal;
    literal.dtype = dtype;
    literal.values.push_back(value);
    node = function_.add_constant(std::move(literal));
    shared = {dtype, bits, node};
  }
  last_scalar_ = {dtype, asked, node};
  return node;
}

Node* Rewriter::shape(std::vector<Dim> dims) { return function_.add_shape(std::move(dims)); }

Node* Rewriter::tuple(std::span<Node* const> fields) { return function_.add_tuple(fields); }

Node* Rewriter::item(Node* tuple, int64_t index) {
  return built(function_.add_tuple_item(tuple, index, last_error_));
}

namespace {

// The usual replacement, checked without building a reason: two live, distinct nodes of the same (interned) type.
// replacement_problem() says what, if anything, is wrong with any other.
inline bool is_plain_replacement(const Node* root, const Node* replacement) {
  return root != nullptr && replacement != nullptr && root != replacement && !root->is_dead() &&
         root->type() == replacement->type();
}

}  // namespace

std::string Rewriter::replacement_problem(const Node* root, const Node* replacement, bool& types_differ) const {
  types_differ = false;
  if (is_plain_replacement(root, replacement)) return {};
  if (root == nullptr || replacement == nullptr) return "no node given";
  if (root == replacement) return "the replacement is the matched node itself";
  if (root->is_dead()) return "the matched node was removed from the graph";
  return type_problem(root, replacement->type(), types_differ);
}

std::string Rewriter::type_problem(const Node* root, TypeRef replacement, bool& types_differ) {
  types_differ = false;
  if (root->type() == replacement) return {};  // interned: the usual case is one pointer comparison
  std::string why = type_mismatch(root->type(), replacement);
  types_differ = !why.empty();
  if (!types_differ) return why;
  return fmt::format("the replacement has type {}, the matched node {}: {}", replacement->str(), root->type()->str(),
                     why);
}

void Rewriter::count_decline(bool types_differ) {
  if (types_differ && type_declines_++ == 0) first_type_decline_ = last_error_;
}

// Whether `root` is among `operands` or what the new ones among them were built from (old nodes other than root
// are operands of its match: they cannot depend on it).
bool Rewriter::depends_on(std::span<Node* const> operands, const Node* root) const {
  for (const Node* operand : operands) {
    if (operand == root) return true;
    if (operand != nullptr && operand->id() >= known_ids_ && depends_on(operand->operands(), root)) return true;
  }
  return false;
}

// Where the root cannot be rebuilt in place (`x => relu(x)`: the root stays, as the new call's operand; a
// composite function's call or a tuple item is not an op call), the call is a new node that replaces it.
bool Rewriter::rebuilds_in_place(const Node* root, std::span<Node* const> operands) const {
  return root != nullptr && root->is_call() && !depends_on(operands, root);
}

bool Rewriter::rebuild(Node* root, OpId op, std::initializer_list<Node*> operands, AttrList&& attrs) {
  const std::span<Node* const> values = as_span(operands);
  return rebuild_interned(root, op, values, function_.checked_attrs(op, values, std::move(attrs), last_error_));
}

bool Rewriter::rebuild(Node* root, OpId op, std::initializer_list<Node*> operands, const AttrList& attrs) {
  const std::span<Node* const> values = as_span(operands);
  return rebuild_interned(root, op, values, function_.checked_attrs(op, values, attrs, last_error_));
}

bool Rewriter::rebuild_interned(Node* root, OpId op, std::span<Node* const> operands, const AttrList* interned) {
  if (interned == nullptr) {  // an attribute check failed
    count_decline(true);
    return false;
  }
  if (!rebuilds_in_place(root, operands)) {
    Node* replacement = built(function_.add_interned_call(op, operands, interned, last_error_));
    return replacement != nullptr && replace(root, replacement);
  }
  return rebuild_in_place(root, op, operands, interned);
}

bool Rewriter::proven_rebuild(Node* root, OpId op, std::initializer_list<Node*> operands) {
  const std::span<Node* const> values = as_span(operands);
  // No operand depends on root (dplc proved it): only a root that is not an op call is replaced.
  if (!root->is_call()) {
    Node* replacement = proven_call(op, operands);
    return replacement != nullptr && replace(root, replacement);
  }
  return rebuild_in_place(root, op, values, function_.default_attrs(op));
}

bool Rewriter::rebuild_in_place(Node* root, OpId op, std::span<Node* const> operands, const AttrList* attrs) {
  TypeRef type = function_.infer_call(op, operands, attrs, last_error_);
  if (type == nullptr) {
    count_decline(true);
    return false;
  }
  if (type != root->type()) {  // interned: the usual case is this one comparison
    bool types_differ = false;
    if (std::string why = type_problem(root, type, types_differ); !why.empty()) {
      last_error_ = "replace: " + why;
      count_decline(types_differ);
      return false;
    }
  }
  const size_t known = known_ids_;
  std::vector<Node*>& created = created_scratch_;
  created.clear();
  collect_created(function_, known, created);
  created.push_back(root);  // new as a value: queued after the nodes built for it, as a replacement is
  function_.rebuild_call(root, op, operands, attrs, type);
  queue_rewritten(known, root->users(), created);  // the root keeps its users: no copy
  return true;
}

// Inline: the steps of every replacement.
[[gnu::always_inline]] inline void Rewriter::queue_replaced(size_t known, std::span<Node* const> users) {
  std::vector<Node*>& created = created_scratch_;
  created.clear();
  collect_created(function_, known, created);
  queue_rewritten(known, users, created);
}

[[gnu::always_inline]] inline void Rewriter::take_uses(Node* root, Node* replacement, size_t known) {
  // The new value takes over the binding name, as TVM rewrites the value bound to a variable.
  if (replacement->id() >= known && replacement->name().empty()) replacement->set_name(root->name());
  function_.replace_all_uses(root, replacement);
}

// The root and what only it used are gone now, unless the replacement wraps it (`x => relu(x)`); then the root
// stays, unnamed, so that one binding name does not label two live values. A dead root keeps its name for error
// messages.
[[gnu::always_inline]] inline void Rewriter::erase_replaced(Node* root, const Node* replacement, size_t known) {
  if (function_.erase_unused(root) == 0 && replacement->id() >= known) root->set_name("");
}

bool Rewriter::replace(Node* root, Node* replacement) {
  if (!is_plain_replacement(root, replacement)) [[unlikely]] {  // replace_all() says why, or copes (another type)
    const std::pair<Node*, Node*> only{root, replacement};
    return replace_all(std::span(&only, 1));
  }
  // The usual rewrite (`=> x` rules, a right-hand side built as new nodes): one root, nothing to check twice.
  const size_t known = known_ids_;
  queue_replaced(known, root->users());
  take_uses(root, replacement, known);
  erase_replaced(root, replacement, known);
  return true;
}

bool Rewriter::replace_all(std::span<const std::pair<Node*, Node*>> replacements) {
  const std::string_view what = replacements.size() == 1 ? "replace" : "replace_all";
  if (replacements.empty()) {
    last_error_ = "replace_all: no replacement given";
    return false;
  }
  for (size_t i = 0; i < replacements.size(); ++i) {
    const auto [root, replacement] = replacements[i];
    bool types_differ = false;
    if (std::string why; !is_plain_replacement(root, replacement) &&
                         !(why = replacement_problem(root, replacement, types_differ)).empty()) {
      last_error_ = replacements.size() == 1 ? fmt::format("{}: {}", what, why)
                                             : fmt::format("{}: root {} ({}): {}", what, i, describe_node(root), why);
      count_decline(types_differ);
      return false;
    }
    for (size_t j = 0; j < i; ++j) {
      if (replacements[j].first == root) {
        last_error_ = fmt::format("{}: roots {} and {} are the same node", what, j, i);
        return false;
      }
    }
  }
  // The driver knows every node with an id below known_ids_; the others were created by this rewrite.
  const size_t known = known_ids_;
  // Queued before the replacement moves them (which changes neither the worklist nor who they are): one root's
  // users are read from its use list, not copied.
  std::span<Node* const> users = replacements.front().first->users();
  if (replacements.size() > 1) {
    users_scratch_.clear();
    for (const auto& [root, replacement] : replacements) {
      users_scratch_.insert(users_scratch_.end(), root->users().begin(), root->users().end());
    }
    users = users_scratch_;
  }
  queue_replaced(known, users);
  for (const auto& [root, replacement] : replacements) take_uses(root, replacement, known);
  for (const auto& [root, replacement] : replacements) erase_replaced(root, replacement, known);
  return true;
}

// Inline: a rewrite queues three or four nodes.
inline void Rewriter::enqueue(Node* node) {
  if (!may_be_root(node)) return;
  if (any(queued_[node->id()])) return;  // queue_rewritten() sized the flags for every id it knows
  queued_[node->id()] = kQueued;
  worklist_.push_back(node);
}


void Rewriter::queue_rewritten(size_t known, std::span<Node* const> users, std::span<Node* const> created) {
  known_ids_ = function_.node_id_bound();  // each node of the order's tail is scanned by one rewrite at most
  // Grown by half at a time, not to each rewrite's new bound: a call into vector::resize per rewrite adds up.
  if (queued_.size() < known_ids_) queued_.resize(std::max<size_t>(known_ids_, queued_.size() * 3 / 2), FlagByte{});
  // The worklist is a stack: the old users go in first, latest first, so that the new nodes, operands first, come
  // out before them. (New nodes that wrap a root are users too; they keep their place among the new nodes.)
  auto later_first = [](const Node* a, const Node* b) { return a->id() > b->id(); };
  auto enqueue_old = [&](Node* user) {
    if (user->id() < known) enqueue(user);
  };
  if (users.size() == 1) {  // most roots have a user or two: no copy, no call into the sort
    enqueue_old(users[0]);
  } else if (users.size() == 2) {
    const bool swap = later_first(users[1], users[0]);
    enqueue_old(users[swap ? 1 : 0]);
    if (users[1] != users[0]) enqueue_old(users[swap ? 0 : 1]);  // `add(x, x)` is one user
  } else if (users.size() > 2) {
    std::vector<Node*>& sorted = sorted_users_scratch_;
    sorted.assign(users.begin(), users.end());
    std::sort(sorted.begin(), sorted.end(), later_first);
    for (Node* user : sorted) enqueue_old(user);
  }
  for (auto it = created.rbegin(); it != created.rend(); ++it) enqueue(*it);
}

// --- the sweep ---

std::string detail::RecentRules::most_frequent(std::span<const std::string> rule_names, size_t limit) const {
  std::map<int, uint64_t> per_rule;
  for (size_t i = 0; i < window(); ++i) ++per_rule[ring_[i]];
  std::vector<std::pair<int, uint64_t>> ranked(per_rule.begin(), per_rule.end());
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string text;
  for (size_t i = 0; i < ranked.size() && i < limit; ++i) {
    if (!text.empty()) text += ", ";
    text += fmt::format("{} ({})", rule_names[static_cast<size_t>(ranked[i].first)], ranked[i].second);
  }
  return text;
}

detail::Sweep::Sweep(const PassDef& pass, std::span<const uint8_t> root_op_flags, Function& function, Module* module,
                     const RunOptions& options, PassResult& result, std::vector<Node*>& worklist,
                     std::vector<FlagByte>& queued)
    : pass_(pass),
      root_op_flags_(root_op_flags),
      function_(function),
      options_(options),
      result_(result),
      worklist_(worklist),
      queued_(queued),
      rewriter_(function, worklist, queued, root_op_flags),
      seeded_(function.nodes().size()),
      rewrites_before_(result.stats.rewrites),
      live_nodes_(function.num_live_nodes()),
      budget_(options.budget_per_node * live_nodes_ + 1024) {
  worklist_.clear();
  rewriter_.set_module(module);
}

void detail::Sweep::discard_unused(size_t listed_before) {
  for (size_t i = listed_before; i < function_.nodes().size(); ++i) {
    Node* created = function_.nodes()[i];
    if (!created->is_dead() && created->num_users() == 0 && created != function_.output()) {
      discarded_ += function_.erase_unused(created);
    }
  }
}

bool detail::Sweep::misreported(int rule, const Node* node, OpId op) {
  if (static_cast<size_t>(rule) >= pass_.rules.size()) {
    result_.error = fmt::format("pass {}: the matcher reported rule #{}, but the pass has {} rule{}", pass_.name,
                                rule, pass_.rules.size(), pass_.rules.size() == 1 ? "" : "s");
  } else {
    // A hand-written PassDef whose root ops leave out where a rule fires would miss visits of such nodes.
    result_.error = fmt::format("pass {}: rule {} fired at {}, which PassDef::root_ops does not list", pass_.name,
                                pass_.rules[static_cast<size_t>(rule)].name, describe_node(node, op));
  }
  return false;
}

bool detail::Sweep::checked(int rule, const Node* node, OpId op) {
  const RuleInfo& info = pass_.rules[static_cast<size_t>(rule)];
  if (options_.verify_each) {
    // A partition also created a module function: verify that too.
    Module* module = rewriter_.module();
    std::string problem = module != nullptr ? verify(*module) : verify(function_);
    if (!problem.empty()) {
      result_.error = fmt::format("pass {}: the IR is malformed after rule {} ({}) rewrote {}: {}", pass_.name,
                                  info.name, info.location, describe_node(node, op), problem);
      return false;
    }
  }
  const PassStats& stats = result_.stats;
  if (stats.rewrites - rewrites_before_ > budget_) {
    result_.error = fmt::format(
        "pass {}: rewrite budget exhausted ({} rewrites = {} per node x {} nodes + 1024) in function {} at {}; "
        "rules firing most in the last {} rewrites: {} (do they undo each other?)",
        pass_.name, budget_, options_.budget_per_node, live_nodes_, function_.name(), describe_node(node, op),
        recent_.window(), recent_.most_frequent(stats.rule_names, 4));
    return false;
  }
  return true;
}

namespace {

// A result for `pass` with nothing counted yet.
PassResult empty_result(const PassDef& pass) {
  PassResult result;
  result.stats.pass = std::string(pass.name);
  for (const RuleInfo& rule : pass.rules) result.stats.rule_names.emplace_back(rule.name);
  result.stats.fired.assign(pass.rules.size(), 0);
  return result;
}

// PassDef::root_ops by op id (empty: any node may be a root), built once per run of the pass.
std::vector<uint8_t> root_op_flags_of(const PassDef& pass) {
  std::vector<uint8_t> flags;
  if (pass.root_ops.empty()) return flags;
  flags.resize(*std::max_element(pass.root_ops.begin(), pass.root_ops.end()) + size_t{1}, 0);
  for (OpId op : pass.root_ops) flags[op] = 1;
  return flags;
}

// The driver's loop for a pass without its own (PassDef::sweep): its matcher called through the pointer per node.
template <VisitOrder Order, bool VisitParams>
void sweep_calling_match(detail::Sweep& sweep) {
  detail::run_sweep<Order, VisitParams>(sweep, sweep.pass().match);
}

// The loop that runs `pass`: its own, or the driver's for its visit order and parameter setting.
SweepFn sweep_of(const PassDef& pass) {
  if (pass.sweep != nullptr) return pass.sweep;
  constexpr VisitOrder kUsersFirst = VisitOrder::UsersFirst;
  constexpr VisitOrder kOperandsFirst = VisitOrder::OperandsFirst;
  if (pass.order == kUsersFirst) {
    return pass.visit_params ? &sweep_calling_match<kUsersFirst, true> : &sweep_calling_match<kUsersFirst, false>;
  }
  return pass.visit_params ? &sweep_calling_match<kOperandsFirst, true> : &sweep_calling_match<kOperandsFirst, false>;
}

// Whether some rule of the pass may match in `function`, as far as the ops of its calls tell. A pipeline runs
// many passes whose rules need ops a model does not have (convolutions over a language model, rsqrt for RMSNorm
// over BERT): those cost a look at their tables, not a sweep. Rules rooted at any value (no table of root ops)
// may be rooted anywhere; a rule that needs no op may match anywhere.
bool may_match_in(const PassDef& pass, const Function& function) {
  const auto held = [&function](OpId op) { return function.holds_call_of(op); };
  if (!pass.root_ops.empty() && !pass.visit_params &&
      std::none_of(pass.root_ops.begin(), pass.root_ops.end(), held)) {
    return false;
  }
  // A rule's table lists an op once per call of it that every match holds (sorted, so repeats are adjacent).
  const auto holds_all = [&function](std::span<const OpId> needs) {
    for (auto run = needs.begin(); run != needs.end();) {
      const auto run_end = std::find_if(run, needs.end(), [op = *run](OpId other) { return other != op; });
      if (function.num_calls_of(*run) < static_cast<size_t>(run_end - run)) return false;
      run = run_end;
    }
    return true;
  };
  return pass.rules.empty() || std::any_of(pass.rules.begin(), pass.rules.end(),
                                           [&holds_all](const RuleInfo& rule) { return holds_all(rule.needs); });
}

// One sweep over `function` (none where no rule can be rooted; compacted either way, as a pass leaves every
// function), counted into `result` (a module's functions share one: a pass over 10^4 composite functions does not
// build 10^4 copies of the rule names); `module` (may be null) is where partitions put the
// functions they create; `root_op_flags` from root_op_flags_of(pass). Sets result.error when the pass stopped.
void run_on_function(const PassDef& pass, std::span<const uint8_t> root_op_flags, Function& function, Module* module,
                     const RunOptions& options, PassResult& result) {
  PassStats& stats = result.stats;
  uint64_t discarded = 0;
  if (!options.sweep_every_function && !may_match_in(pass, function)) {
    ++stats.functions_not_swept;
  } else {
    SweepScratch scratch;
    std::vector<FlagByte>& queued = scratch.queued();
    queued.assign(function.node_id_bound(), kQueued);
    detail::Sweep sweep(pass, root_op_flags, function, module, options, result, scratch.worklist(), queued);
    if (pass.match != nullptr) sweep_of(pass)(sweep);
    discarded = sweep.discarded();
    if (stats.type_declines == 0) stats.first_type_decline = sweep.rewriter().first_type_decline();
    stats.type_declines += sweep.rewriter().type_declines();
  }
  const size_t before = function.nodes().size();
  function.compact();
  const size_t removed = before - function.nodes().size() - discarded;
  stats.nodes_removed += removed;
}

bool is_private_composite(const Function& function) {
  return function.is_private() && function.find_attr("Composite") != nullptr;
}

// Calls visit(callee) for each live call of `function` to a function of `module`, found through the module's name
// index (names of composites share long prefixes: comparing them is what a sorted list of names would spend its
// time on).
template <typename Visit>
void for_each_callee(const Module& module, const Function& function, Visit visit) {
  if (!function.may_call_functions()) return;
  for (const Node* node : function.nodes()) {
    if (node->kind() != NodeKind::FuncCall || node->is_dead()) continue;
    if (const Function* callee = module.find(node->callee())) visit(callee);
  }
}

// The functions that live calls of a module call. Valid while the module keeps its functions.
class CalledFunctions {
 public:
  explicit CalledFunctions(const Module& module) {
    for (const auto& function : module.functions()) {
      for_each_callee(module, *function, [this](const Function* callee) { called_.push_back(callee); });
    }
    std::sort(called_.begin(), called_.end());
  }
  bool contains(const Function* function) const {
    return std::binary_search(called_.begin(), called_.end(), function);
  }

 private:
  std::vector<const Function*> called_;
};

// Adds the private composite functions that `function`'s live calls call.
void add_called_composites(const Module& module, const Function& function, std::vector<const Function*>& found) {
  for_each_callee(module, function, [&](const Function* callee) {
    if (callee != &function && is_private_composite(*callee)) found.push_back(callee);
  });
}

// Removes the `candidates` (functions of `module`) that are private composites nothing calls any more,
// repeatedly: a removed function takes its calls with it, so the composites it called become candidates in turn.
void remove_uncalled(Module& module, std::vector<const Function*> candidates) {
  while (!candidates.empty()) {
    std::sort(candidates.begin(), candidates.end());
    candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
    std::vector<const Function*> uncalled;
    {
      const CalledFunctions called(module);  // looked at before anything is removed
      for (const Function* function : candidates) {
        if (is_private_composite(*function) && !called.contains(function)) uncalled.push_back(function);
      }
    }
    candidates.clear();
    for (const Function* function : uncalled) add_called_composites(module, *function, candidates);
    std::erase_if(candidates, [&](const Function* callee) {  // not those about to go (uncalled is sorted)
      return std::binary_search(uncalled.begin(), uncalled.end(), callee);
    });
    for (const Function* function : uncalled) module.remove_function(function->name());
  }
}

// Adds the time from `start` to now to the pass's statistics.
void add_seconds(PassResult& result, std::chrono::steady_clock::time_point start) {
  result.stats.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

PassResult run_pass(const PassDef& pass, Function& function, const RunOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  PassResult result = empty_result(pass);
  run_on_function(pass, root_op_flags_of(pass), function, nullptr, options, result);
  add_seconds(result, start);
  return result;
}

PassResult run_pass(const PassDef& pass, Module& module, const RunOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  PassResult total = empty_result(pass);
  const std::vector<uint8_t> root_op_flags = root_op_flags_of(pass);
  // Partitions add functions while the pass runs; the pass visits only those that existed before. A partition
  // pass leaves existing composite functions alone (as TVM's MergeComposite does), so running it twice carves
  // nothing new.
  std::vector<Function*> existing;
  std::vector<Function*> functions;
  for (const auto& function : module.functions()) {
    existing.push_back(function.get());
    if (pass.order == VisitOrder::UsersFirst && function->find_attr("Composite") != nullptr) continue;
    functions.push_back(function.get());
  }
  // Private composite functions the pass may leave uncalled: those it removed a call of (a call that was there
  // before the pass: a composite nothing called before stays), found from the removals, so that a pass that
  // removes no call (most passes of a pipeline) does not walk every call of the module.
  std::vector<const Function*> candidates;
  for (Function* function : functions) {
    function->take_removed_calls();  // removed before the pass: not its doing
    const uint32_t known = function->node_id_bound();
    run_on_function(pass, root_op_flags, *function, &module, options, total);
    for (const Function::RemovedCall& call : function->take_removed_calls()) {
      // A call that was there before calls a function that was too: the pass removes only functions it created.
      if (call.id >= known) continue;
      if (const Function* callee = module.find(call.callee)) candidates.push_back(callee);
    }
    if (!total.ok()) break;
  }
  // ... and those it created (a later rule of the same pass may have replaced their calls too).
  if (module.functions().size() != existing.size()) {
    std::sort(existing.begin(), existing.end());
    for (const auto& function : module.functions()) {
      if (!std::binary_search(existing.begin(), existing.end(), function.get())) candidates.push_back(function.get());
    }
  }
  remove_uncalled(module, std::move(candidates));
  add_seconds(total, start);
  return total;
}

// --- registry ---

// Two pass libraries defining the same name would make lookups ambiguous, so register_once says so at start-up.
void PassRegistry::add(const PassDef& pass) { register_once(registered_passes(), pass, "pass"); }
const PassDef* PassRegistry::find(std::string_view name) { return find_registered(registered_passes(), name); }
std::vector<const PassDef*> PassRegistry::all() { return all_registered(registered_passes()); }

void PassRegistry::add_pipeline(const PipelineDef& pipeline) {
  register_once(registered_pipelines(), pipeline, "pipeline");
}
const PipelineDef* PassRegistry::find_pipeline(std::string_view name) {
  return find_registered(registered_pipelines(), name);
}
std::vector<const PipelineDef*> PassRegistry::all_pipelines() { return all_registered(registered_pipelines()); }

// --- statistics ---

std::string format_stats(const PassStats& stats, std::span<const RuleInfo> rules) {
  std::string text = fmt::format("pass {}: {} rewrites, {} nodes visited, {} nodes removed, {}", stats.pass,
                                 stats.rewrites, stats.nodes_visited, stats.nodes_removed,
                                 format_duration(stats.seconds));
  if (stats.functions_not_swept != 0) {
    text += fmt::format(", {} function{} not swept (no rule can match there)", stats.functions_not_swept,
                        stats.functions_not_swept == 1 ? "" : "s");
  }
  text += '\n';
  auto rule_name = [&](size_t i) -> std::string_view {
    if (i < rules.size()) return rules[i].name;
    return i < stats.rule_names.size() ? std::string_view(stats.rule_names[i]) : "?";
  };
  auto rule_location = [&](size_t i) -> std::string_view { return i < rules.size() ? rules[i].location : ""; };
  size_t name_width = 4;       // "rule"
  size_t location_width = 8;   // "location"
  for (size_t i = 0; i < stats.fired.size(); ++i) {
    name_width = std::max(name_width, rule_name(i).size());
    location_width = std::max(location_width, rule_location(i).size());
  }
  text += fmt::format("  {:<{}}  {:<{}}  {:>8}\n", "rule", name_width, "location", location_width, "fired");
  for (size_t i = 0; i < stats.fired.size(); ++i) {
    text += fmt::format("  {:<{}}  {:<{}}  {:>8}\n", rule_name(i), name_width, rule_location(i), location_width,
                        stats.fired[i]);
  }
  return text;
}

DType first_known_dtype(std::initializer_list<const Node*> candidates) {
  for (const Node* node : candidates) {
    TypeRef type = node->type();
    if (type != nullptr && type->is_tensor() && type->dtype() != DType::Unknown) return type->dtype();
  }
  return DType::Float32;
}

}  // namespace dpl
