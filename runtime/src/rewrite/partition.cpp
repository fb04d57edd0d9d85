// Rewriter::partition and composite_of: carving a match into a Composite module function, and looking one up.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "../text/lexer.h"
#include "describe.h"
#include "dpl/rewrite/driver.h"

namespace dpl {
namespace {

using detail::describe_node;

// Literal values the function gets its own copy of: they need neither a parameter nor an escape check.
bool is_copyable(const Node* node) {
  return node->kind() == NodeKind::Constant || node->kind() == NodeKind::ShapeLit;
}

// What a partition knows of the function's nodes, by id: whether the match holds them, whether they are inputs
// it reached, and their copies once made. A per-thread table as long as the function's ids, cleared entry by entry
// when the partition is done: hash maps cost an allocation per node, a third of a small partition's time.
class NodeTable {
 public:
  explicit NodeTable(const Function& function) : entries_(scratch().entries), touched_(scratch().touched) {
    if (entries_.size() < function.node_id_bound()) entries_.resize(function.node_id_bound());
  }
  ~NodeTable() {
    for (uint32_t id : touched_) entries_[id] = {};
    touched_.clear();
  }
  NodeTable(const NodeTable&) = delete;
  NodeTable& operator=(const NodeTable&) = delete;

  bool contains(const Node* node) const { return entries_[node->id()].in_match; }
  bool insert(const Node* node) { return set_flag(node, &Entry::in_match); }
  bool reached(const Node* node) const { return entries_[node->id()].reached_input; }
  void mark_reached(const Node* node) { set_flag(node, &Entry::reached_input); }
  Node* copy_of(const Node* node) const { return entries_[node->id()].copy; }
  void set_copy(const Node* node, Node* copy) { entry(node).copy = copy; }

 private:
  struct Entry {
    Node* copy = nullptr;
    bool in_match = false;
    bool reached_input = false;
    bool touched = false;
  };
  struct Scratch {
    std::vector<Entry> entries;
    std::vector<uint32_t> touched;  // the ids whose entries to clear
  };
  static Scratch& scratch() {
    thread_local Scratch table;  // one partition at a time per thread: Rewriter::partition nests none
    return table;
  }
  Entry& entry(const Node* node) {
    Entry& e = entries_[node->id()];
    if (!e.touched) {
      e.touched = true;
      touched_.push_back(node->id());
    }
    return e;
  }
  bool set_flag(const Node* node, bool Entry::*flag) {
    Entry& e = entry(node);
    if (e.*flag) return false;
    e.*flag = true;
    return true;
  }

  std::vector<Entry>& entries_;
  std::vector<uint32_t>& touched_;
};

// The nodes of a partition: the matched ones in topological order (root last) and the inputs they use.
struct Match {
  std::vector<Node*> nodes;
  std::vector<Node*> inputs;  // reached inputs, in the caller's order, without duplicates
};

// The vectors a partition fills, kept per thread and emptied, not freed, after each: a composite function's own
// allocations are what a partition cannot avoid, these it can.
struct PartitionScratch {
  Match match;
  std::vector<std::pair<Node*, size_t>> stack;  // collect_match's depth-first walk
  std::vector<Node*> args;                      // the composite call's arguments
  std::vector<Node*> operands;                  // clone_node's mapped operands
  std::vector<std::string> param_names;
  std::string base_name;  // fused_name()'s

  static PartitionScratch& take() {
    thread_local PartitionScratch scratch;  // one partition at a time per thread, as NodeTable
    scratch.match.nodes.clear();
    scratch.match.inputs.clear();
    scratch.stack.clear();
    scratch.args.clear();
    scratch.param_names.clear();
    return scratch;
  }
};

// Walks operands from `root`, depth first, stopping at `inputs`. Fails (returns the reason) on a parameter that
// is not an input: the pattern's leaves should have bound it.
std::string collect_match(Node* root, std::span<Node* const> inputs, NodeTable& table, PartitionScratch& scratch) {
  auto is_input = [&](const Node* node) { return std::find(inputs.begin(), inputs.end(), node) != inputs.end(); };
  Match& match = scratch.match;
  std::vector<std::pair<Node*, size_t>>& stack = scratch.stack;
  stack.emplace_back(root, 0);
  table.insert(root);
  while (!stack.empty()) {
    Node* node = stack.back().first;
    const size_t next = stack.back().second++;
    if (next == node->num_operands()) {
      match.nodes.push_back(node);
      stack.pop_back();
      continue;
    }
    Node* operand = node->operand(next);
    if (is_input(operand)) {
      table.mark_reached(operand);
    } else if (operand->kind() == NodeKind::Param) {
      return fmt::format("parameter '{}' is used by the match but is none of its inputs", operand->name());
    } else if (table.insert(operand)) {
      stack.emplace_back(operand, 0);
    }
  }
  for (Node* input : inputs) {
    if (table.reached(input) && std::find(match.inputs.begin(), match.inputs.end(), input) == match.inputs.end()) {
      match.inputs.push_back(input);
    }
  }
  return {};
}

// Why the match cannot become a function (empty when it can): a matched value that something outside uses.
std::string escaping_value(const Function& function, const Node* root, const Match& match, const NodeTable& table) {
  for (const Node* node : match.nodes) {
    if (node == root || is_copyable(node)) continue;
    if (node == function.output()) return fmt::format("{} is the function's output", describe_node(node));
    for (const Node* user : node->users()) {
      if (!table.contains(user)) {
        return fmt::format("{} is also used outside the match, by {}", describe_node(node), describe_node(user));
      }
    }
  }
  return {};
}

// "fused_" and the matched call ops, operands first, '.' spelled '_': fused_nn_conv2d_nn_batch_norm (into `name`).
void fused_name(const Match& match, std::string& name) {
  name = "fused";
  for (const Node* node : match.nodes) {
    if (!node->is_call()) continue;
    name += '_';
    const size_t start = name.size();
    name += OpRegistry::global().get(node->op()).name;
    std::replace(name.begin() + static_cast<std::ptrdiff_t>(start), name.end(), '.', '_');
  }
}

// Parameter names, appended to `names`: the input's binding name when it is a valid identifier that no other input
// has, else p<i>. (Linear searches: a partition has a handful of parameters.)
void parameter_names(std::span<Node* const> params, std::vector<std::string>& names) {
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string& wanted = params[i]->name();
    const bool unique = std::count_if(params.begin(), params.end(),
                                      [&](const Node* param) { return param->name() == wanted; }) == 1;
    const bool keep = unique && text::is_identifier(wanted) && !text::is_reserved_word(wanted);
    std::string name = keep ? wanted : fmt::format("p{}", i);
    while (std::find(names.begin(), names.end(), name) != names.end()) name += "_";
    names.push_back(std::move(name));
  }
}

// A copy of `node`, a node of `source`, in `target`, its operands mapped through `copies`; nullptr (and `error`)
// if it does not build. `operands` is scratch, reused from node to node.
Node* clone_node(const Function& source, Function& target, const Node* node, const NodeTable& copies,
                 std::vector<Node*>& operands, std::string& error) {
  operands.clear();
  for (const Node* operand : node->operands()) {
    Node* copy = copies.copy_of(operand);
    if (copy == nullptr) {
      error = "an operand was not copied before its user";
      return nullptr;
    }
    operands.push_back(copy);
  }
  switch (node->kind()) {
    case NodeKind::Constant: return target.add_constant(node->literal());
    case NodeKind::ShapeLit:
      return target.add_shape(std::vector<Dim>(node->shape_value().begin(), node->shape_value().end()));
    case NodeKind::Call: return target.add_call_like(source, *node, operands, error);
    case NodeKind::Tuple: return target.add_tuple(operands);
    case NodeKind::TupleItem: return target.add_tuple_item(operands.at(0), node->index(), error);
    case NodeKind::FuncCall: return target.add_func_call(node->callee(), operands, node->type());
    case NodeKind::Param: break;
  }
  error = "a parameter cannot be copied";
  return nullptr;
}

}  // namespace

Node* Rewriter::partition(std::string_view composite, Node* root, std::span<Node* const> inputs) {
  auto decline = [&](std::string why) -> Node* {
    last_error_ = fmt::format("partition \"{}\": {}", composite, why);
    return nullptr;
  };
  if (module_ == nullptr) return decline("the pass runs on a function outside a module (nowhere to put it)");
  if (root == nullptr || root->is_dead()) return decline("no live root node given");
  if (std::find(inputs.begin(), inputs.end(), root) != inputs.end()) {
    return decline(fmt::format("the root {} is one of the inputs", describe_node(root)));
  }
  if (root->kind() == NodeKind::Param || is_copyable(root)) {
    return decline(fmt::format("the root {} is not a computed value", describe_node(root)));
  }
  PartitionScratch& scratch = PartitionScratch::take();
  const Match& match = scratch.match;
  NodeTable table(function_);
  if (std::string why = collect_match(root, inputs, table, scratch); !why.empty()) return decline(std::move(why));
  if (std::string why = escaping_value(function_, root, match, table); !why.empty()) return decline(std::move(why));

  std::vector<Node*>& args = scratch.args;
  for (Node* input : match.inputs) {
    if (!is_copyable(input)) args.push_back(input);
  }
  fused_name(match, scratch.base_name);
  Function& fused = module_->add_function(module_->unique_function_name(scratch.base_name));
  const std::string& name = fused.name();  // fixed once added; remove_function() copies what it is given
  fused.reserve(match.inputs.size() + match.nodes.size(), args.size());
  std::vector<std::string>& param_names = scratch.param_names;
  parameter_names(args, param_names);
  for (size_t i = 0; i < args.size(); ++i) {
    table.set_copy(args[i], fused.add_param(std::move(param_names[i]), args[i]->type()));
  }
  std::string error;
  auto copy = [&](const Node* node) {
    Node* copied = clone_node(function_, fused, node, table, scratch.operands, error);
    if (copied != nullptr) {
      copied->set_name(node->name());
      table.set_copy(node, copied);
    }
    return copied != nullptr;
  };
  for (const Node* input : match.inputs) {
    if (is_copyable(input) && !copy(input)) break;
  }
  for (const Node* node : match.nodes) {
    if (!error.empty() || !copy(node)) break;
  }
  if (!error.empty()) {
    module_->remove_function(name);
    return decline("copying the match failed: " + error);
  }
  fused.set_output(table.copy_of(root));
  fused.set_private(true);
  fused.set_dataflow_block(true);
  fused.attrs().reserve(2);
  fused.attrs().emplace_back("Composite", std::string(composite));
  fused.attrs().emplace_back("Primitive", true);

  Node* call = function_.add_func_call(name, args, root->type());
  if (!replace(root, call)) {
    module_->remove_function(name);
    return decline(last_error_);
  }
  return call;  // composite_of() looks the new function up (and caches it) only if asked
}

std::string_view Rewriter::composite_of(const Node* func_call) const {
  if (module_ == nullptr || func_call == nullptr || func_call->kind() != NodeKind::FuncCall) return {};
  const Function* callee = nullptr;
  if (auto it = callees_.find(func_call->callee()); it != callees_.end()) {
    callee = it->second;
  } else {
    callee = module_->find(func_call->callee());
    if (callee == nullptr) return {};
    callees_.emplace(func_call->callee(), callee);
  }
  const AttrValue* composite = callee->find_attr("Composite");
  const std::string* name = composite != nullptr ? std::get_if<std::string>(composite) : nullptr;
  return name != nullptr ? std::string_view(*name) : std::string_view();
}

}  // namespace dpl
