// The rewrite driver: the worklist sweep, the Rewriter API that compiled matchers call, the pass registry and
// the statistics table.
#include "dpl/rewrite/driver.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "dpl/ir/analysis.h"

namespace dpl {
namespace {

// Why `replacement` cannot stand in for `root` (empty when it can): a different kind of value, dtype, rank or
// static dimension. What one side does not know (unknown dtype, rank or symbolic dim) does not conflict.
std::string type_mismatch(TypeRef root, TypeRef replacement) {
  if (root == replacement || root->kind() == TypeKind::Unknown || replacement->kind() == TypeKind::Unknown) {
    return {};
  }
  if (root->kind() != replacement->kind()) return "a different kind of value";
  switch (root->kind()) {
    case TypeKind::Tensor: {
      if (root->dtype() != DType::Unknown && replacement->dtype() != DType::Unknown &&
          root->dtype() != replacement->dtype()) {
        return fmt::format("dtype {} instead of {}", dtype_name(replacement->dtype()), dtype_name(root->dtype()));
      }
      if (root->rank() >= 0 && replacement->rank() >= 0 && root->rank() != replacement->rank()) {
        return fmt::format("rank {} instead of {}", replacement->rank(), root->rank());
      }
      if (root->has_shape() && replacement->has_shape()) {
        for (size_t i = 0; i < root->dims().size(); ++i) {
          const Dim want = root->dims()[i];
          const Dim got = replacement->dims()[i];
          if (want.is_static() && got.is_static() && want != got) {
            return fmt::format("dimension {} is {} instead of {}", i, got.extent(), want.extent());
          }
        }
      }
      return {};
    }
    case TypeKind::Tuple: {
      if (root->fields().size() != replacement->fields().size()) {
        return fmt::format("{} tuple fields instead of {}", replacement->fields().size(), root->fields().size());
      }
      for (size_t i = 0; i < root->fields().size(); ++i) {
        std::string field = type_mismatch(root->fields()[i], replacement->fields()[i]);
        if (!field.empty()) return fmt::format("tuple field {}: {}", i, field);
      }
      return {};
    }
    case TypeKind::Shape:
      if (root->rank() >= 0 && replacement->rank() >= 0 && root->rank() != replacement->rank()) {
        return fmt::format("a shape of {} dimensions instead of {}", replacement->rank(), root->rank());
      }
      return {};
    case TypeKind::Unknown:
    case TypeKind::Object:
      return {};
  }
  return {};
}

// Appends to `created`, operands first, the nodes of `value`'s expression that the current rewrite created:
// ids the driver does not know yet (>= `known`). The root may appear in it (`x => relu(x)`) but is not new.
void collect_created(Node* value, const Node* root, size_t known, std::vector<Node*>& created) {
  if (value == root || value->id() < known) return;
  if (std::find(created.begin(), created.end(), value) != created.end()) return;
  for (Node* operand : value->operands()) collect_created(operand, root, known, created);
  created.push_back(value);
}

// Parameters and constants never match a rule's root; nodes nothing uses any more were replaced.
bool worth_visiting(const Function& function, const Node* node) {
  if (node->kind() == NodeKind::Param || node->kind() == NodeKind::Constant || node->is_dead()) return false;
  return node->num_users() > 0 || node == function.output();
}

std::string describe_node(const Node* node) {
  std::string what = node->is_call() ? "R." + OpRegistry::global().get(node->op()).name : "value";
  if (node->name().empty()) return fmt::format("an unnamed {} node", what);
  return fmt::format("binding '{}' ({})", node->name(), what);
}

// The rules of the last rewrites, to name the culprits when the budget runs out.
class RecentRules {
 public:
  void add(int rule) { ring_[count_++ % ring_.size()] = rule; }

  // "mul_to_add (128), add_to_mul (128)": the rules that fired most among the last rewrites.
  std::string most_frequent(std::span<const std::string> rule_names, size_t limit) const {
    std::map<int, uint64_t> per_rule;
    const size_t n = std::min<size_t>(count_, ring_.size());
    for (size_t i = 0; i < n; ++i) ++per_rule[ring_[i]];
    std::vector<std::pair<int, uint64_t>> ranked(per_rule.begin(), per_rule.end());
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    std::string text;
    for (size_t i = 0; i < ranked.size() && i < limit; ++i) {
      if (!text.empty()) text += ", ";
      text += fmt::format("{} ({})", rule_names[static_cast<size_t>(ranked[i].first)], ranked[i].second);
    }
    return text;
  }
  size_t window() const { return std::min<size_t>(count_, ring_.size()); }

 private:
  std::array<int, 256> ring_{};
  size_t count_ = 0;
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

}  // namespace

// --- Rewriter ---

Rewriter::Rewriter(Function& function, std::vector<Node*>& worklist, std::vector<uint8_t>& queued)
    : function_(function), first_new_id_(function.node_id_bound()), worklist_(worklist), queued_(queued) {}

Node* Rewriter::call(OpId op, std::span<Node* const> operands, AttrList attrs) {
  return function_.add_call(op, operands, std::move(attrs), last_error_);
}

Node* Rewriter::call(OpId op, std::initializer_list<Node*> operands, AttrList attrs) {
  return call(op, std::span<Node* const>(operands.begin(), operands.size()), std::move(attrs));
}

Node* Rewriter::call(OpId op, std::initializer_list<Node*> operands) {
  return call(op, operands, OpRegistry::global().get(op).default_attrs());
}

Node* Rewriter::scalar(double value, DType dtype) {
  Literal literal;
  literal.dtype = dtype;
  literal.values.push_back(value);
  return function_.add_constant(std::move(literal));
}

Node* Rewriter::shape(std::vector<Dim> dims) { return function_.add_shape(std::move(dims)); }

Node* Rewriter::tuple(std::span<Node* const> fields) { return function_.add_tuple(fields); }

Node* Rewriter::item(Node* tuple, int64_t index) { return function_.add_tuple_item(tuple, index, last_error_); }

bool Rewriter::replace(Node* root, Node* replacement) {
  if (root == nullptr || replacement == nullptr) {
    last_error_ = "replace: no node given";
    return false;
  }
  if (root == replacement) {
    last_error_ = "replace: the replacement is the matched node itself";
    return false;
  }
  if (std::string why = type_mismatch(root->type(), replacement->type()); !why.empty()) {
    last_error_ = fmt::format("replace: the replacement has type {}, the matched node {}: {}",
                              replacement->type()->str(), root->type()->str(), why);
    return false;
  }
  // The driver knows every node with an id below queued_.size(); the others were created by this rewrite.
  const size_t known = queued_.size();
  std::vector<Node*>& created = created_scratch_;
  created.clear();
  collect_created(replacement, root, known, created);
  std::vector<Node*>& users = users_scratch_;
  users.assign(root->users().begin(), root->users().end());
  const bool replacement_is_new = !created.empty() && created.back() == replacement;
  // The new value takes over the binding name, as TVM rewrites the value bound to a variable.
  if (replacement_is_new && replacement->name().empty()) replacement->set_name(root->name());
  function_.replace_all_uses(root, replacement);
  // The root and what only it used are gone now, unless the replacement wraps the root (`x => relu(x)`); then
  // the root stays, unnamed, so that one binding name does not label two live values. A dead root keeps its
  // name for error messages.
  if (function_.erase_unused(root) == 0 && replacement_is_new) root->set_name("");

  for (const Node* node : created) queued_.resize(std::max<size_t>(queued_.size(), node->id() + 1), 0);
  // The worklist is a stack: the old users go in first so that the new nodes, operands first, come out before
  // them. (New nodes that wrap the root are users too; they keep their place among the new nodes.)
  std::sort(users.begin(), users.end(), [](const Node* a, const Node* b) { return a->id() > b->id(); });
  for (Node* user : users) {
    if (user->id() < known) enqueue(user);
  }
  for (auto it = created.rbegin(); it != created.rend(); ++it) enqueue(*it);
  return true;
}

void Rewriter::enqueue(Node* node) {
  if (node->kind() == NodeKind::Param || node->kind() == NodeKind::Constant) return;
  if (node->id() >= queued_.size()) queued_.resize(node->id() + 1, 0);
  if (queued_[node->id()]) return;
  queued_[node->id()] = 1;
  worklist_.push_back(node);
}

// --- the sweep ---

PassResult run_pass(const PassDef& pass, Function& function, const RunOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  PassResult result;
  PassStats& stats = result.stats;
  stats.pass = std::string(pass.name);
  for (const RuleInfo& rule : pass.rules) stats.rule_names.emplace_back(rule.name);
  stats.fired.assign(pass.rules.size(), 0);

  // Seeded in reverse so that popping the stack visits operands before their users.
  std::vector<Node*> worklist;
  std::vector<uint8_t> queued(function.node_id_bound(), 0);
  worklist.reserve(function.nodes().size());
  for (auto it = function.nodes().rbegin(); it != function.nodes().rend(); ++it) {
    Node* node = *it;
    if (!worth_visiting(function, node)) continue;
    queued[node->id()] = 1;
    worklist.push_back(node);
  }

  const uint64_t live_nodes = function.num_live_nodes();
  const uint64_t budget = options.budget_per_node * live_nodes + 1024;
  Rewriter rewriter(function, worklist, queued);
  RecentRules recent;
  uint64_t discarded = 0;  // nodes that right-hand sides built and then did not use
  while (!worklist.empty() && pass.match != nullptr) {
    Node* node = worklist.back();
    worklist.pop_back();
    queued[node->id()] = 0;
    if (!worth_visiting(function, node)) continue;
    ++stats.nodes_visited;
    const size_t nodes_before = function.nodes().size();
    const int rule = pass.match(rewriter, node);
    // A rule that declined after building part of its right-hand side leaves those nodes unused.
    for (size_t i = nodes_before; i < function.nodes().size(); ++i) {
      Node* created = function.nodes()[i];
      if (!created->is_dead() && created->num_users() == 0 && created != function.output()) {
        discarded += function.erase_unused(created);
      }
    }
    if (rule < 0) continue;
    if (static_cast<size_t>(rule) >= pass.rules.size()) {
      result.error = fmt::format("pass {}: the matcher reported rule #{}, but the pass has {} rules", pass.name,
                                 rule, pass.rules.size());
      break;
    }
    ++stats.rewrites;
    ++stats.fired[static_cast<size_t>(rule)];
    recent.add(rule);
    const RuleInfo& info = pass.rules[static_cast<size_t>(rule)];
    if (options.verify_each) {
      std::string problem = verify(function);
      if (!problem.empty()) {
        result.error = fmt::format("pass {}: the IR is malformed after rule {} ({}) rewrote {}: {}", pass.name,
                                   info.name, info.location, describe_node(node), problem);
        break;
      }
    }
    if (stats.rewrites > budget) {
      result.error = fmt::format(
          "pass {}: rewrite budget exhausted ({} rewrites = {} per node x {} nodes + 1024) in function {} at {}; "
          "rules firing most in the last {} rewrites: {} (do they undo each other?)",
          pass.name, budget, options.budget_per_node, live_nodes, function.name(), describe_node(node),
          recent.window(), recent.most_frequent(stats.rule_names, 4));
      break;
    }
  }

  const size_t before = function.nodes().size();
  function.compact();
  stats.nodes_removed = before - function.nodes().size() - discarded;
  stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

PassResult run_pass(const PassDef& pass, Module& module, const RunOptions& options) {
  PassResult total;
  total.stats.pass = std::string(pass.name);
  for (const RuleInfo& rule : pass.rules) total.stats.rule_names.emplace_back(rule.name);
  total.stats.fired.assign(pass.rules.size(), 0);
  for (const auto& function : module.functions()) {
    PassResult one = run_pass(pass, *function, options);
    for (size_t i = 0; i < one.stats.fired.size(); ++i) total.stats.fired[i] += one.stats.fired[i];
    total.stats.nodes_visited += one.stats.nodes_visited;
    total.stats.rewrites += one.stats.rewrites;
    total.stats.nodes_removed += one.stats.nodes_removed;
    total.stats.seconds += one.stats.seconds;
    if (!one.ok()) {
      total.error = std::move(one.error);
      break;
    }
  }
  return total;
}

// --- registry ---

void PassRegistry::add(const PassDef& pass) {
  auto [it, inserted] = registered_passes().emplace(pass.name, &pass);
  if (!inserted && it->second != &pass) {
    // Two pass libraries define the same name; lookups would be ambiguous, so say so once at start-up.
    std::fprintf(stderr, "dpl: warning: pass '%.*s' is defined twice (%.*s and %.*s); using the first\n",
                 static_cast<int>(pass.name.size()), pass.name.data(), static_cast<int>(it->second->source.size()),
                 it->second->source.data(), static_cast<int>(pass.source.size()), pass.source.data());
  }
}

const PassDef* PassRegistry::find(std::string_view name) {
  auto it = registered_passes().find(name);
  return it == registered_passes().end() ? nullptr : it->second;
}

std::vector<const PassDef*> PassRegistry::all() {
  std::vector<const PassDef*> passes;
  for (const auto& [name, pass] : registered_passes()) passes.push_back(pass);
  return passes;
}

// --- statistics ---

std::string format_stats(const PassStats& stats, std::span<const RuleInfo> rules) {
  std::string text = fmt::format("pass {}: {} rewrites, {} nodes visited, {} nodes removed, {}\n", stats.pass,
                                 stats.rewrites, stats.nodes_visited, stats.nodes_removed,
                                 format_duration(stats.seconds));
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
