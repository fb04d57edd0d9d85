// The dataflow IR: node construction with type inference, use lists, replacement, dead-node removal, modules.
#include "dpl/ir/graph.h"

#include <algorithm>
#include <memory>
#include <new>

#include "op_table.h"

namespace dpl {

namespace {
// Nodes per arena block. Larger blocks (even huge-page backed ones, tried) were slower in the benchmarks: glibc
// then maps and unmaps them per graph, and every new graph pays fresh page faults and page clearing, where blocks
// of this size are recycled from the heap.
constexpr size_t kArenaBlock = 512;
}  // namespace

Function::Function(std::string name) : name_(std::move(name)) {}

Function::~Function() {
  for (size_t i = 0; i < arena_.size(); ++i) {
    const ArenaBlock& block = arena_[i];
    std::destroy_n(block.nodes, i + 1 == arena_.size() ? arena_used_ : block.capacity);
    ::operator delete(block.nodes, std::align_val_t{block.alignment});
  }
}

void Function::add_arena_block() {
  ArenaBlock block;
  block.capacity = kArenaBlock;
  block.alignment = alignof(Node);
  block.nodes = static_cast<Node*>(::operator new(kArenaBlock * sizeof(Node), std::align_val_t{block.alignment}));
  arena_.push_back(block);
  arena_used_ = 0;
}

Node* Function::new_node(NodeKind kind, TypeRef type, std::span<Node* const> operands) {
  if (arena_.empty() || arena_used_ == arena_.back().capacity) add_arena_block();
  Node& node = *new (&arena_.back().nodes[arena_used_++]) Node();
  compacted_ = false;
  node.kind_ = kind;
  node.id_ = next_id_++;
  node.type_ = type;
  node.num_operands_ = static_cast<uint32_t>(operands.size());
  if (node.num_operands_ > Node::kInlineOperands) node.heap_operands_.reset(new Node*[operands.size()]);
  std::copy(operands.begin(), operands.end(), node.operand_data());
  for (Node* operand : operands) operand->users_.push_back(&node);
  order_.push_back(&node);
  return &node;
}

Node* Function::add_param(std::string name, TypeRef type) {
  Node* node = new_node(NodeKind::Param, type, {});
  node->name_ = std::move(name);
  params_.push_back(node);
  return node;
}

Node* Function::add_constant(Literal literal) {
  std::vector<Dim> dims;
  dims.reserve(literal.shape.size());
  for (int64_t extent : literal.shape) dims.push_back(Dim::fixed(extent));
  Node* node = new_node(NodeKind::Constant, Type::tensor(literal.dtype, dims), {});
  node->extra_ = std::make_unique<Node::Extra>();
  node->extra_->literal = std::move(literal);
  return node;
}

Node* Function::add_call(OpId op, std::span<Node* const> operands, AttrList attrs, std::string& error) {
  const OpRegistry& registry = OpRegistry::global();
  if (op >= registry.size()) {
    error = "unknown op id " + std::to_string(op);
    return nullptr;
  }
  const OpInfo& info = registry.get(op);
  if (attrs.empty()) attrs = info.default_attrs();
  // Stores int literals given for float attributes as doubles; check_signature reports any other mismatch.
  for (size_t i = 0; i < attrs.size() && i < info.attrs.size(); ++i) attr_matches_kind(info.attrs[i].kind, attrs[i]);
  if (!detail::check_signature(info, operands, attrs, error)) return nullptr;
  for (Node* operand : operands) {
    if (operand->dead_) {
      error = info.name + ": an operand was removed from the graph";
      return nullptr;
    }
  }
  TypeRef type = Type::unknown();
  if (info.infer != nullptr) {
    type = info.infer(InferInput{operands, attrs}, error);
    if (type == nullptr) return nullptr;
  }
  Node* node = new_node(NodeKind::Call, type, operands);
  node->op_ = op;
  node->attrs_ = std::move(attrs);
  return node;
}

Node* Function::add_tuple(std::span<Node* const> fields) {
  std::vector<TypeRef> types;
  types.reserve(fields.size());
  for (Node* field : fields) types.push_back(field->type());
  return new_node(NodeKind::Tuple, Type::tuple(types), fields);
}

Node* Function::add_tuple_item(Node* tuple, int64_t index, std::string& error) {
  TypeRef type = tuple ? tuple->type() : nullptr;
  if (type == nullptr || !type->is_tuple()) {
    error = "cannot take item " + std::to_string(index) + " of a non-tuple value of type " +
            (type ? type->str() : "nothing");
    return nullptr;
  }
  if (index < 0 || static_cast<size_t>(index) >= type->fields().size()) {
    error = "tuple index " + std::to_string(index) + " is out of range for " + type->str();
    return nullptr;
  }
  Node* node = new_node(NodeKind::TupleItem, type->fields()[static_cast<size_t>(index)], std::span(&tuple, 1));
  node->extra_ = std::make_unique<Node::Extra>();
  node->extra_->index = index;
  return node;
}

Node* Function::add_shape(std::vector<Dim> dims) {
  Node* node = new_node(NodeKind::ShapeLit, Type::shape(static_cast<int>(dims.size())), {});
  node->extra_ = std::make_unique<Node::Extra>();
  node->extra_->shape_value = std::move(dims);
  return node;
}

Node* Function::add_func_call(std::string callee, std::span<Node* const> args, TypeRef result_type) {
  Node* node = new_node(NodeKind::FuncCall, result_type ? result_type : Type::unknown(), args);
  node->extra_ = std::make_unique<Node::Extra>();
  node->extra_->callee = std::move(callee);
  return node;
}

void Function::set_output(Node* output) {
  output_ = output;
  compacted_ = false;
}

size_t Function::num_live_nodes() const { return order_.size() - dead_in_order_; }

void Function::replace_all_uses(Node* old_value, Node* replacement) {
  if (old_value == replacement) return;
  compacted_ = false;
  // The list is filtered in place (no allocation per rewrite): only the replacement's own uses stay.
  std::vector<Node*>& users = old_value->users_;
  size_t kept = 0;
  // A user that appears k times is visited k times; its slots are all rewritten on the first visit.
  for (size_t i = 0; i < users.size(); ++i) {
    Node* user = users[i];
    if (user == replacement) {
      users[kept++] = user;
      continue;
    }
    for (Node*& operand : std::span(user->operand_data(), user->num_operands_)) {
      if (operand != old_value) continue;
      operand = replacement;
      replacement->users_.push_back(user);
      if (!listed_before(replacement, user, old_value)) {
        if (!user->late_user_) late_users_.push_back(user);
        user->late_user_ = true;
        order_stale_ = true;
      }
    }
  }
  users.resize(kept);
  if (output_ == old_value) output_ = replacement;
}

// When unsure this says no, which only costs compact() a look at the user's operands. Sure cases:
//  * both were appended since the last compact() (appending keeps id order), or only the user was;
//  * the replacement is an operand, or an operand's operand, of `old_value` (what `=> x` rules give): a node that
//    is not a late user is listed after its operands, so replacement, old_value and user come in this order.
bool Function::listed_before(const Node* replacement, const Node* user, const Node* old_value) const {
  if (user->id_ >= appended_from_id_ && replacement->id_ < user->id_) return true;
  if (user->late_user_ || old_value->late_user_) return false;
  for (const Node* operand : old_value->operands()) {
    if (operand == replacement) return true;
    if (operand->late_user_) continue;
    for (const Node* inner : operand->operands()) {
      if (inner == replacement) return true;
    }
  }
  return false;
}

namespace {

// Removes one entry of `user` from `node`'s use list (order of the rest is not kept: O(1) after the search).
void drop_use(std::vector<Node*>& users, Node* user) {
  auto it = std::find(users.rbegin(), users.rend(), user);
  if (it == users.rend()) return;
  *it = users.back();
  users.pop_back();
}

}  // namespace

size_t Function::erase_unused(Node* node) {
  size_t removed = 0;
  std::vector<Node*>& pending = erase_pending_;  // reused: rewrites call this once per rewrite
  pending.assign(1, node);
  while (!pending.empty()) {
    Node* candidate = pending.back();
    pending.pop_back();
    if (candidate == nullptr || candidate->dead_ || !candidate->users_.empty() || candidate == output_ ||
        candidate->kind_ == NodeKind::Param)
      continue;
    candidate->dead_ = true;
    ++removed;
    for (Node* operand : candidate->operands()) {
      drop_use(operand->users_, candidate);
      pending.push_back(operand);
    }
    candidate->drop_operands();
    std::vector<Node*>().swap(candidate->users_);  // empty, but may hold memory; compact() no longer visits it
  }
  dead_in_order_ += removed;
  if (removed != 0) compacted_ = false;
  return removed;
}

namespace {
// compact()'s mark per node id: already in the new order.
constexpr uint8_t kEmitted = 1;
}  // namespace

void Function::emit_after_operands(Node* root, std::vector<uint8_t>& emitted,
                                   std::vector<std::pair<Node*, size_t>>& dfs, std::vector<Node*>& order) {
  emitted[root->id_] |= kEmitted;
  dfs.emplace_back(root, 0);  // node, next operand to visit (iterative: graphs are deep)
  while (!dfs.empty()) {
    auto& [node, next] = dfs.back();
    if (next < node->num_operands_) {
      Node* operand = node->operand(next++);
      if (!(emitted[operand->id_] & kEmitted)) {
        emitted[operand->id_] |= kEmitted;
        dfs.emplace_back(operand, 0);
      }
      continue;
    }
    order.push_back(node);
    dfs.pop_back();
  }
}

void Function::compact() {
  // A pass that rewrote nothing need not walk the graph again (pipelines run many passes that find nothing).
  if (compacted_) return;
  if (!compact_if_all_used()) compact_unreachable();
  for (Node* user : late_users_) user->late_user_ = false;
  late_users_.clear();
  appended_from_id_ = next_id_;
  dead_in_order_ = 0;
  order_stale_ = false;
  compacted_ = true;
}

// After a rewrite pass erase_unused() has already removed every node a rewrite orphaned, so every live node but
// the parameters and the output has a user. Then the output depends on all of them (the graph is acyclic) and
// one walk over the order suffices: it drops the dead, and only the late users (nodes that a replacement gave an
// operand listed after them) pull their late operands in before them; everyone else's operands come earlier.
bool Function::compact_if_all_used() {
  if (output_ == nullptr || output_->dead_) return false;
  if (!order_stale_) return compact_in_place();
  std::vector<Node*> order;
  order.reserve(order_.size() - dead_in_order_);
  std::vector<uint8_t> emitted(next_id_, 0);  // per node id: kEmitted once in `order`
  std::vector<std::pair<Node*, size_t>> dfs;
  for (Node* param : params_) {
    emitted[param->id_] = kEmitted;
    order.push_back(param);
  }
  for (Node* node : order_) {
    if (node->dead_ || node->kind_ == NodeKind::Param) continue;
    if (node->users_.empty() && node != output_) return false;  // unreachable: needs compact_unreachable()
    if (emitted[node->id_] & kEmitted) {
      continue;  // pulled in before a late user
    } else if (node->late_user_) {
      emit_after_operands(node, emitted, dfs, order);
    } else {
      emitted[node->id_] = kEmitted;
      order.push_back(node);
    }
  }
  order_ = std::move(order);
  return true;
}

// The order is topological, so every live node may stay where it is: the non-parameters move down over the dead
// (and the parameters), then the parameters go in front. A pass that rewrote little thus costs one sequential
// walk and no allocation (a fresh order of a 10^6-node graph is 8 MB of page faults).
bool Function::compact_in_place() {
  size_t kept = 0;
  for (size_t i = 0; i < order_.size(); ++i) {
    Node* node = order_[i];
    if (node->dead_ || node->kind_ == NodeKind::Param) continue;
    if (node->users_.empty() && node != output_) {
      // Unreachable: compact_unreachable() takes over; it gets the parameters from params_ and skips the dead.
      order_.erase(order_.begin() + static_cast<std::ptrdiff_t>(kept), order_.begin() + static_cast<std::ptrdiff_t>(i));
      return false;
    }
    order_[kept++] = node;
  }
  order_.resize(kept);
  order_.insert(order_.begin(), params_.begin(), params_.end());
  return true;
}

// The general case: removes what the output does not depend on, then rebuilds the order.
void Function::compact_unreachable() {
  uint32_t id_count = next_id_;
  // 1. What the output depends on (iterative: graphs are deep).
  std::vector<uint8_t> reachable(id_count, 0);
  std::vector<Node*> stack;
  if (output_ != nullptr && !output_->dead_) {
    reachable[output_->id_] = 1;
    stack.push_back(output_);
  }
  while (!stack.empty()) {
    Node* node = stack.back();
    stack.pop_back();
    for (Node* operand : node->operands()) {
      if (reachable[operand->id_]) continue;
      reachable[operand->id_] = 1;
      stack.push_back(operand);
    }
  }
  for (Node* param : params_) reachable[param->id_] = 1;

  // 2. Unlink the dead from the live. A dead node's users are dead too, so only operand lists of live nodes
  //    need filtering; each is filtered once.
  std::vector<Node*> touched;
  for (Node* node : order_) {
    if (reachable[node->id_] || node->dead_) continue;
    node->dead_ = true;
    for (Node* operand : node->operands()) {
      if (reachable[operand->id_] == 1) {
        reachable[operand->id_] = 2;  // live, and its use list holds dead users
        touched.push_back(operand);
      }
    }
  }
  for (Node* node : touched) {
    reachable[node->id_] = 1;
    std::erase_if(node->users_, [](Node* user) { return user->dead_; });
  }
  for (Node* node : order_) {
    if (!node->dead_) continue;
    node->drop_operands();
    std::vector<Node*>().swap(node->users_);
  }

  // 3. The new order: parameters, then the old order with any operand that comes too late pulled in first.
  std::vector<Node*> order;
  order.reserve(order_.size());
  std::vector<uint8_t> emitted(id_count, 0);
  for (Node* param : params_) {
    emitted[param->id_] = kEmitted;
    order.push_back(param);
  }
  std::vector<std::pair<Node*, size_t>> dfs;
  for (Node* root : order_) {
    if (!root->dead_ && !(emitted[root->id_] & kEmitted)) emit_after_operands(root, emitted, dfs, order);
  }
  order_ = std::move(order);
}

const AttrValue* Function::find_attr(std::string_view key) const {
  for (const FuncAttr& attr : attrs_)
    if (attr.first == key) return &attr.second;
  return nullptr;
}

TypeRef Function::return_type() const {
  if (declared_return_type_ != nullptr) return declared_return_type_;
  return output_ != nullptr ? output_->type() : Type::unknown();
}

Function& Module::add_function(std::string name) {
  functions_.push_back(std::make_unique<Function>(std::move(name)));
  return *functions_.back();
}

Function* Module::find(std::string_view name) {
  for (const std::unique_ptr<Function>& function : functions_)
    if (function->name() == name) return function.get();
  return nullptr;
}

const Function* Module::find(std::string_view name) const {
  for (const std::unique_ptr<Function>& function : functions_)
    if (function->name() == name) return function.get();
  return nullptr;
}

bool Module::remove_function(std::string_view name) {
  auto it = std::find_if(functions_.begin(), functions_.end(),
                         [&](const std::unique_ptr<Function>& function) { return function->name() == name; });
  if (it == functions_.end()) return false;
  functions_.erase(it);
  return true;
}

std::string Module::unique_function_name(std::string_view base) const {
  std::string name(base);
  for (int suffix = 1; find(name) != nullptr; ++suffix) name = std::string(base) + "_" + std::to_string(suffix);
  return name;
}

}  // namespace dpl
