// The dataflow IR: node construction with type inference, use lists, replacement, dead-node removal, modules.
#include "dpl/ir/graph.h"

#include <algorithm>

#include "op_table.h"

namespace dpl {

Function::Function(std::string name) : name_(std::move(name)) {}

Node* Function::new_node(NodeKind kind, TypeRef type, std::span<Node* const> operands) {
  if (arena_used_ == kArenaBlock) {
    arena_.push_back(std::unique_ptr<Node[]>(new Node[kArenaBlock]));
    arena_used_ = 0;
  }
  Node& node = arena_.back()[arena_used_++];
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

void Function::set_output(Node* output) { output_ = output; }

size_t Function::num_live_nodes() const { return order_.size() - dead_in_order_; }

void Function::replace_all_uses(Node* old_value, Node* replacement) {
  if (old_value == replacement) return;
  std::vector<Node*> users = std::move(old_value->users_);
  old_value->users_.clear();
  // A user that appears k times was visited k times in `users`; its slots are all rewritten on the first visit.
  for (Node* user : users) {
    if (user == replacement) {
      old_value->users_.push_back(user);
      continue;
    }
    for (Node*& operand : std::span(user->operand_data(), user->num_operands_)) {
      if (operand != old_value) continue;
      operand = replacement;
      replacement->users_.push_back(user);
      // Listed after its user unless both were appended since the last compact() in this order, or only the
      // user was; for two older nodes assume the worst (compact() then merely checks the user's operands).
      const bool listed_before_user = user->id_ >= appended_from_id_ && replacement->id_ < user->id_;
      if (!listed_before_user) {
        late_users_.push_back(user);
        order_stale_ = true;
      }
    }
  }
  if (output_ == old_value) output_ = replacement;
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
  return removed;
}

namespace {
// compact()'s marks per node id: already in the new order; a late user (see late_users_).
constexpr uint8_t kEmitted = 1;
constexpr uint8_t kLateUser = 2;
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
  if (!compact_if_all_used()) compact_unreachable();
  late_users_.clear();
  appended_from_id_ = next_id_;
  dead_in_order_ = 0;
  order_stale_ = false;
}

// After a rewrite pass erase_unused() has already removed every node a rewrite orphaned, so every live node but
// the parameters and the output has a user. Then the output depends on all of them (the graph is acyclic) and
// one walk over the order suffices: it drops the dead, and only the late users (nodes that a replacement gave an
// operand listed after them) pull their late operands in before them; everyone else's operands come earlier.
bool Function::compact_if_all_used() {
  if (output_ == nullptr || output_->dead_) return false;
  std::vector<Node*> order;
  order.reserve(order_.size() - dead_in_order_);
  std::vector<uint8_t> state;  // per node id; only needed to restore a stale order
  std::vector<std::pair<Node*, size_t>> dfs;
  if (order_stale_) {
    state.assign(next_id_, 0);
    for (Node* user : late_users_) state[user->id_] = kLateUser;
  }
  for (Node* param : params_) {
    if (order_stale_) state[param->id_] = kEmitted;
    order.push_back(param);
  }
  for (Node* node : order_) {
    if (node->dead_ || node->kind_ == NodeKind::Param) continue;
    if (node->users_.empty() && node != output_) return false;  // unreachable: needs compact_unreachable()
    if (!order_stale_) {
      order.push_back(node);  // its operands come earlier in a topological order
    } else if (state[node->id_] & kEmitted) {
      continue;  // pulled in before a late user
    } else if (state[node->id_] & kLateUser) {
      emit_after_operands(node, state, dfs, order);
    } else {
      state[node->id_] = kEmitted;
      order.push_back(node);
    }
  }
  order_ = std::move(order);
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

std::string Module::unique_function_name(std::string_view base) const {
  std::string name(base);
  for (int suffix = 1; find(name) != nullptr; ++suffix) name = std::string(base) + "_" + std::to_string(suffix);
  return name;
}

}  // namespace dpl
