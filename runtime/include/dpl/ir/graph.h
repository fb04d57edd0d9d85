// The dataflow IR: value nodes with operands, users and types; functions; modules.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dpl/ir/op_registry.h"
#include "dpl/ir/types.h"
#include "dpl/support/flag_byte.h"

namespace dpl {

enum class NodeKind : uint8_t {
  Param,      // function parameter
  Constant,   // R.const(value, "dtype") — scalar or small literal tensor
  Call,       // R.op(operands..., attrs...)
  Tuple,      // (a, b)
  TupleItem,  // t[i]
  ShapeLit,   // R.shape([1, 11, 768])
  FuncCall,   // cls.fn(args...) — a call of another function of the module
};

// The value of a constant node. Values are stored as doubles (exact for every float32/float16 value and for
// integers up to 2^53); `shape` is empty for a scalar.
struct Literal {
  DType dtype = DType::Float32;
  std::vector<int64_t> shape;
  std::vector<double> values;

  bool is_scalar() const { return shape.empty() && values.size() == 1; }
  bool operator==(const Literal&) const = default;
};

class Function;
class Node;

namespace detail {
// What only constants, shapes and function calls carry, out of line (a node's cold part points to it).
struct NodeExtra {
  Literal literal;
  std::vector<Dim> shape_value;
  std::string callee;
};
inline const NodeExtra kNoNodeExtra{};
inline const AttrList kNoAttrs{};  // what nodes without attributes point to
// Sweeps over nodes() read one node after the other, each from its own cache line: they ask for the node this
// many places ahead, so that on graphs larger than the cache the wait for memory overlaps the work. (Measured on
// the 10^6-node transformer pass with 64-byte nodes: 8 ahead 13.2 ms, 16 ahead 11.0 ms, 32 ahead 9.6-10.2 ms,
// 64 ahead within 3% of 32.)
inline constexpr size_t kPrefetchDistance = 32;

// A node's cold part: see Node. One cache line, as a node is.
struct alignas(64) NodeCold {
  std::unique_ptr<Node*[]> heap_operands;
  std::string name;
  std::unique_ptr<NodeExtra> extra;
  int64_t index = 0;  // TupleItem only; here, not in NodeExtra, a tuple item allocates nothing (combines make many)
};
inline const NodeCold kNoNodeCold{};  // what a node whose cold part was never written reads

}  // namespace detail

// A value in the graph. Binding names are labels: patterns match across them.
//
// A node is one cache line, holding what sweeps, matchers and rewrites read (kind, op, operands, users,
// attributes, type, a constant's value); the rest (name, what only constants, tuple items, shapes and function
// calls carry, more than three operands) is its cold part. The function's arena keeps nodes in blocks of
// kArenaBlockNodes, the nodes first and then their cold parts in the same order, so a sweep reads consecutive
// lines and a node finds its cold part a fixed distance away. A function's first block is smaller
// (kFirstBlockNodes): the many small functions a partition creates then take 4 KB each, not 64 KB.
class alignas(64) Node {
 public:
  static constexpr size_t kArenaBlockNodes = 512;
  static constexpr size_t kFirstBlockNodes = 32;  // ids 0..31; block k >= 1 holds the next kArenaBlockNodes ids

  NodeKind kind() const { return kind_; }
  bool is_call() const { return kind_ == NodeKind::Call; }
  bool is_call_of(OpId op) const { return kind_ == NodeKind::Call && op_ == op; }
  OpId op() const { return op_; }  // Call only
  // The node's head as one number: a call's op, or past every op id, its kind. Generated matchers try a
  // commutative call whose operand patterns have different heads in the one order that can match: the operand
  // with the smaller head first (dplc numbers the patterns' heads the same way).
  uint32_t head_key() const { return kind_ == NodeKind::Call ? uint32_t{op_} : kind_head_key(kind_); }
  static constexpr uint32_t kind_head_key(NodeKind kind) { return 0x10000u + static_cast<uint32_t>(kind); }
  TypeRef type() const { return type_; }
  uint32_t id() const { return id_; }  // unique within its function, in creation order

  std::span<Node* const> operands() const { return {operand_data(), num_operands_}; }
  Node* operand(size_t i) const { return operand_data()[i]; }
  size_t num_operands() const { return num_operands_; }

  // One entry per use: `add(x, x)` appears twice in x's users.
  std::span<Node* const> users() const { return {users_data_, users_size_}; }
  size_t num_users() const { return users_size_; }

  // Call: one value per AttrSpec of the op. Interned per function: calls with equal attributes share one list.
  const AttrList& attrs() const { return *attrs_; }
  const AttrValue& attr(size_t i) const { return (*attrs_)[i]; }

  const std::string& name() const { return cold().name; }  // binding or parameter name; may be empty
  void set_name(std::string name) {
    if (!name.empty() || has_cold_) cold().name = std::move(name);
  }

  const Literal& literal() const { return extra().literal; }                // Constant only
  // What matchers test of a constant, copied from the literal into the node: testing a constant reads the node
  // alone, not the literal out of line (three more cache lines on a large graph).
  bool is_scalar_constant() const { return kind_ == NodeKind::Constant && constant_.is_scalar; }
  DType constant_dtype() const { return constant_.dtype; }   // Constant only
  double scalar_value() const { return constant_.value; }    // scalar constants only
  int64_t index() const { return cold().index; }                             // TupleItem only
  std::span<const Dim> shape_value() const { return extra().shape_value; }  // ShapeLit only
  const std::string& callee() const { return extra().callee; }              // FuncCall only

  bool is_dead() const { return dead_ != 0; }

 private:
  friend class Function;
  Node() = default;

  using Extra = detail::NodeExtra;
  const Extra& extra() const { return cold().extra ? *cold().extra : detail::kNoNodeExtra; }

  // The cold part is constructed when first written: most nodes that rewrites create have no name and no extras,
  // and a cold part nobody writes costs no store and, in fresh memory, no page fault.
  detail::NodeCold& cold() {
    char* part = reinterpret_cast<char*>(this) + cold_distance();
    if (!has_cold_) {
      new (part) detail::NodeCold;
      has_cold_ = 1;
    }
    return *std::launder(reinterpret_cast<detail::NodeCold*>(part));
  }
  const detail::NodeCold& cold() const {
    if (!has_cold_) return detail::kNoNodeCold;
    const char* part = reinterpret_cast<const char*>(this) + cold_distance();
    return *std::launder(reinterpret_cast<const detail::NodeCold*>(part));
  }
  // The size of the block's node part (sizeof(Node) == sizeof(NodeCold) == 64).
  size_t cold_distance() const { return (id_ < kFirstBlockNodes ? kFirstBlockNodes : kArenaBlockNodes) * 64; }

  // Up to kInlineOperands operands live in the node itself (no pointer chase); more go to the heap.
  static constexpr uint32_t kInlineOperands = 3;
  Node* const* operand_data() const {
    return num_operands_ <= kInlineOperands ? inline_operands_ : cold().heap_operands.get();
  }
  Node** operand_data() { return num_operands_ <= kInlineOperands ? inline_operands_ : cold().heap_operands.get(); }
  void drop_operands() {
    if (num_operands_ > kInlineOperands) cold().heap_operands.reset();  // else the cold part stays untouched
    num_operands_ = 0;
  }

  // The use list's memory comes from the function's UsePool (graph.cpp), in power-of-two capacities (two at first)
  // that are recycled when lists grow or die: use-list updates in a rewrite do not call malloc.
  uint32_t users_capacity() const { return users_data_ == nullptr ? 0 : uint32_t{1} << users_capacity_log2_; }

  // Packed to leave room for the type: dead, whether the cold part was constructed and the use list's capacity
  // share a byte.
  NodeKind kind_ = NodeKind::Param;
  uint8_t dead_ : 1 = 0;
  uint8_t has_cold_ : 1 = 0;
  uint8_t users_capacity_log2_ : 6 = 0;
  OpId op_ = 0;
  uint32_t id_ = 0;
  uint32_t num_operands_ = 0;
  uint32_t users_size_ = 0;
  Node** users_data_ = nullptr;
  // A constant has no operands; their slots hold its summary instead.
  struct ConstantSummary {
    double value;
    DType dtype;
    bool is_scalar;
  };
  union {
    Node* inline_operands_[kInlineOperands] = {};
    ConstantSummary constant_;
  };
  const AttrList* attrs_ = &detail::kNoAttrs;  // owned by the function's CallMemo
  TypeRef type_ = nullptr;
};

static_assert(sizeof(Node) == 64 && sizeof(detail::NodeCold) == 64, "Node::cold_distance assumes one line each");

// A function attribute from `R.func_attr({...})`: "Composite" -> "ccompiler.add", "Primitive" -> True.
using FuncAttr = std::pair<std::string, AttrValue>;

// A function: parameters, a graph of nodes in topological order, and one output value.
class Function {
 public:
  explicit Function(std::string name);
  ~Function();
  Function(const Function&) = delete;
  Function& operator=(const Function&) = delete;

  // Fixed at creation: a module finds its functions by name (Module::find).
  const std::string& name() const { return name_; }

  // --- construction (each returns the new node; calls infer their type from the op registry) ---
  Node* add_param(std::string name, TypeRef type);
  Node* add_constant(Literal literal);  // type: tensor of literal.dtype and literal.shape
  // Checks arity and attribute kinds and infers the type; on failure returns nullptr, sets `error` and adds
  // nothing. An empty `attrs` stands for the op's defaults. A list passed by reference (a constant the caller
  // keeps, as dplc's right-hand sides do) is compared with the interned ones and copied only when it is new.
  Node* add_call(OpId op, std::span<Node* const> operands, AttrList&& attrs, std::string& error);
  Node* add_call(OpId op, std::span<Node* const> operands, const AttrList& attrs, std::string& error);
  // add_call() with the op's default attributes, for callers that have proved what add_call() checks (dplc's
  // right-hand sides): `op` is registered, `operands` are as many as it takes, none null or removed. Only type
  // inference can still fail (nullptr + error).
  Node* add_call_with_defaults(OpId op, std::span<Node* const> operands, std::string& error);
  // add_call() once checked_attrs() passed, with the list it gave.
  Node* add_interned_call(OpId op, std::span<Node* const> operands, const AttrList* interned, std::string& error);
  // A copy of `original`, a call of `source` (any function), reading `operands` where it reads its operands (as
  // many): its op and attributes, and its type without inference when inference could not give another one (every
  // operand has the type of the one it stands for, none is a shape literal or a tuple, whose values inference
  // reads, and the op is built in); otherwise what add_call() gives. A partition copies its match this way. The
  // copy points to the original's attribute list itself when this function may hold on to `source`'s lists (the
  // first function it copies from, unless that one holds on to this one's): a composite function carved from
  // `main` allocates nothing for its calls' attributes, and keeps `main`'s lists alive as long as it lives.
  Node* add_call_like(const Function& source, const Node& original, std::span<Node* const> operands,
                      std::string& error);
  Node* add_tuple(std::span<Node* const> fields);
  // Fails (nullptr + error) when `tuple` is not a tuple or the index is out of range.
  Node* add_tuple_item(Node* tuple, int64_t index, std::string& error);
  Node* add_shape(std::vector<Dim> dims);
  Node* add_func_call(std::string callee, std::span<Node* const> args, TypeRef result_type);
  // Whether add_func_call() was ever called (its nodes may have been removed since): a module's call graph need
  // not read the nodes of the functions that call nothing (the 10^4 composites of a partitioned model).
  bool may_call_functions() const { return may_call_functions_; }
  // How many live calls of `op` the function holds, kept as calls are created, rebuilt and removed (verify()
  // recounts them). A pass whose rules are all rooted at ops the function does not hold has nothing to visit there.
  uint32_t num_calls_of(OpId op) const { return op < calls_of_op_.size() ? calls_of_op_[op] : 0; }
  bool holds_call_of(OpId op) const { return num_calls_of(op) != 0; }

  // Room for this many nodes in all, `params` of them parameters: a function built to a known size (a partition's
  // composite) then grows its lists once.
  void reserve(size_t nodes, size_t params);

  void set_output(Node* output);
  Node* output() const { return output_; }
  std::span<Node* const> params() const { return params_; }

  // Nodes in topological order (operands before users), parameters first. Valid after construction and after
  // compact(); rewrites append new nodes at the end until the next compact().
  const std::vector<Node*>& nodes() const { return order_; }
  // False once a rewrite may have made a node use one listed after it; compact() restores the order.
  bool order_is_topological() const { return !order_stale_; }
  size_t num_live_nodes() const;
  // Every node id of this function is below this bound (for side tables indexed by Node::id()).
  uint32_t node_id_bound() const { return next_id_; }

  // --- mutation ---
  // Redirects every use of `old_value` (and the function output) to `replacement`. Uses by `replacement`
  // itself stay, so `replace_all_uses(x, relu(x))` inserts the relu after x instead of making a cycle.
  void replace_all_uses(Node* old_value, Node* replacement);
  // What add_call() checks (the op is registered, arity and attribute kinds fit, no operand was removed) and the
  // attribute list it would give its call, interned (empty `attrs`: the op's defaults); nullptr + error when a
  // check fails.
  const AttrList* checked_attrs(OpId op, std::span<Node* const> operands, AttrList&& attrs, std::string& error);
  const AttrList* checked_attrs(OpId op, std::span<Node* const> operands, const AttrList& attrs, std::string& error);
  const AttrList* default_attrs(OpId op);  // the op's defaults, interned: what add_call_with_defaults() gives
  // The type a call op(operands) with `attrs` (interned above) would get, without creating it (nullptr + error
  // when inference fails).
  TypeRef infer_call(OpId op, std::span<Node* const> operands, const AttrList* attrs, std::string& error) {
    return infer_checked_call(registry_.get(op), operands, attrs, error);
  }
  // Makes the live op call `node` (NodeKind::Call) the call op(operands) with `attrs` and `type` (from the two
  // above) in place: its id, name and users stay, so a rewrite whose right-hand side is one call creates no node
  // and moves no use. Old operands left without a user are removed as erase_unused() removes them. No operand may
  // be `node` or depend on it. Returns how many nodes were removed.
  size_t rebuild_call(Node* node, OpId op, std::span<Node* const> operands, const AttrList* attrs, TypeRef type);
  // Removes `node` if nothing uses it (and it is neither a parameter nor the output), then every operand that
  // becomes unused the same way. Removed nodes are marked dead and leave their operands' use lists at once;
  // they stay in nodes() until the next compact(). Returns how many nodes were removed.
  size_t erase_unused(Node* node);
  // Removes nodes that the output does not depend on (parameters stay) and rebuilds a topological order that
  // keeps the existing relative order where it can.
  void compact();
  // A removed call of another function (NodeKind::FuncCall): its node id and callee.
  struct RemovedCall {
    uint32_t id = 0;
    std::string callee;
  };
  // The calls of other functions removed since the last take, in removal order: a module pass finds the
  // functions it may have left uncalled from these, without walking every call of the module.
  std::vector<RemovedCall> take_removed_calls() { return std::exchange(removed_calls_, {}); }

  // --- function-level metadata ---
  std::vector<FuncAttr>& attrs() { return attrs_; }
  const std::vector<FuncAttr>& attrs() const { return attrs_; }
  const AttrValue* find_attr(std::string_view key) const;
  bool is_private() const { return private_; }
  void set_private(bool value) { private_ = value; }
  // Printed inside `with R.dataflow():` (TVM's form for graph-level functions).
  bool has_dataflow_block() const { return dataflow_; }
  void set_dataflow_block(bool value) { dataflow_ = value; }
  // The declared return type (the output's type unless the text said otherwise).
  TypeRef return_type() const;
  void set_return_type(TypeRef type) { declared_return_type_ = type; }  // nullptr: the output's type

 private:
  Node* new_node(NodeKind kind, TypeRef type, std::span<Node* const> operands);
  // checked_attrs() but the interning, on a list whose values are stored as calls store them.
  bool check_call(OpId op, std::span<Node* const> operands, const AttrList& attrs, std::string& error);
  // add_call() once its checks passed and its attributes are interned: type inference (or the memo) and the node.
  Node* add_checked_call(const OpInfo& info, std::span<Node* const> operands, const AttrList* interned,
                         std::string& error);
  // Its type inference (or the memo's answer): infer_inline() out of line. The inline part takes the operands'
  // type for an op that has it (kTypeOfOperands); infer_by_op() asks the memo, then the op's inference.
  TypeRef infer_checked_call(const OpInfo& info, std::span<Node* const> operands, const AttrList* interned,
                             std::string& error);
  TypeRef infer_inline(const OpInfo& info, std::span<Node* const> operands, const AttrList* interned,
                       std::string& error);
  TypeRef infer_by_op(const OpInfo& info, std::span<Node* const> operands, const AttrList* interned,
                      std::string& error);
  // compact() in one walk when every live node but the parameters and the output has a user; false otherwise
  // (then the general path finishes the job).
  bool compact_if_all_used();
  void compact_in_place();  // compact_if_all_used() for a topological order: drops the dead without allocating
  // Whether some live node other than the parameters and the output may have no user (then it is unreachable).
  bool may_hold_unused_node() const;
  // The node's bits in node_states_ (graph.cpp), which grows to cover every id on demand.
  FlagByte& state_of(uint32_t id);
  // Listed in late_user_ids_ (its state bit says so) until the next compact().
  bool is_late_user(const Node* node) const;
  const AttrList* defaults_of(const OpInfo& info);  // default_attrs(info.id), the op looked up already
  void count_first_use(const Node* value);  // when `value` gets its first user ever
  // Marks the node removed: Node::dead_ now, its state bit at the next compaction (from dead_ids_), so that a
  // rewrite does not pay a scattered write per removed node.
  void set_dead(Node* node);
  [[gnu::noinline, gnu::cold]] void record_removed_call(const Node* node);  // set_dead() of a FuncCall node
  void record_dead_states();  // moves dead_ids_ into node_states_
  // The node of that id, found in the arena (node ids are arena slots) without reading any node.
  Node* node_with_id(uint32_t id) const;
  // Calls visit(id, node) for every id the function gave out, in id order, walking the arena block by block.
  template <typename Visit>
  void for_each_id_in_arena(Visit visit) const;
  // Calls visit_block(first_id, end_id, first_node) for each arena block, in id order (ids first_id .. end_id - 1
  // are the consecutive nodes from first_node).
  template <typename VisitBlock>
  void for_each_arena_block(VisitBlock visit_block) const;
  // Calls visit(id, node) for every node order_ lists, in its order (and, when order_by_id_, for the nodes
  // removed by earlier compactions too: their state says dead).
  template <typename Visit>
  void for_each_listed_node(Visit visit) const;
  // A rebuilt order is written into the buffers of the order before the last one (cleared, `capacity`
  // reserved), and install_order() keeps the replaced order's buffers for the next time: a pass that rebuilds the
  // order does not allocate and page-fault a fresh 8 bytes per node (the re-scan baseline rebuilds it per scan).
  void take_spare_order(std::vector<Node*>& order, std::vector<uint32_t>& ids, size_t capacity);
  void take_spare_ids(std::vector<uint32_t>& ids, size_t capacity);  // the ids' part alone
  // Makes `order` the order, parameters first; its ids are kept, or dropped when the order is by id.
  void install_order(std::vector<Node*>&& order, std::vector<uint32_t>&& ids);
  // Marks `node` as a late user (its operands are to be pulled in before it at the next compact()).
  void mark_late_user(Node* node);
  // Whether `user`, which now reads `value` where it read `old_value`, must become a late user. A value that
  // leads at compaction never makes it one; relying on that only makes the order stale.
  bool now_late(const Node* value, const Node* user, const Node* old_value);
  // Whether compact() lists `value` first, after the parameters: a constant or shape literal appended since the
  // last compaction (leader_ids_). A rewrite's new constants need not be pulled in before each of their users.
  bool leads_at_compaction(const Node* value) const;
  // Whether `replacement` is surely listed before `user` (a user of `old_value`) in order_.
  bool listed_before(const Node* replacement, const Node* user, const Node* old_value) const;
  // Gives `node`, which holds no operands, the list `operands`, and each of them a use by it.
  void set_operands(Node* node, std::span<Node* const> operands);
  void compact_unreachable();  // compact() when some live node may be unreachable from the output
  // Removes one entry of `user` from `value`'s use list; the last entry fills its slot.
  void drop_use(Node* value, Node* user);
  // Appends `root` to `order` after those of its operands (transitively) not emitted yet, marking them.
  static void emit_after_operands(Node* root, std::vector<FlagByte>& emitted,
                                  std::vector<std::pair<Node*, size_t>>& dfs, std::vector<Node*>& order,
                                  std::vector<uint32_t>& order_ids);

  std::string name_;
  // Nodes live in blocks (stable addresses, one allocation per block): a small first one, then blocks of the same
  // size; constructed when taken and destroyed with the function.
  void add_arena_block();
  std::vector<Node*> arena_;
  size_t arena_used_ = 0;      // nodes taken from the last block
  size_t arena_capacity_ = 0;  // and the nodes it holds
  void* first_block_memory_ = nullptr;  // what the first block was carved from (aligned within it)
  // What add_call remembers (interned attribute lists, inferred types) and the memory of the nodes' use lists
  // (graph.cpp).
  struct CallMemo;
  std::shared_ptr<CallMemo> call_memo_;  // shared by the functions that borrow its attribute lists (add_call_like)
  const AttrList* attrs_of(const Function& source, OpId op, const AttrList* attrs);
  const OpRegistry& registry_ = OpRegistry::global();  // a rewrite asks it twice: not a guarded call each time
  struct UsePool;
  std::unique_ptr<UsePool> use_pool_;
  void add_use(Node* value, Node* user);
  [[gnu::noinline]] void make_room_for_use(Node* value);  // add_use() when the list is full (or not there yet)
  void reserve_uses(Node* value, uint32_t size);  // room for `size` users in all
  void grow_uses(Node* value, uint32_t capacity);  // a power of two above the current capacity
  void release_uses(Node* node);  // frees `node`'s use list
  std::vector<Node*> params_;
  std::vector<uint32_t> param_ids_;  // their ids: compaction places the parameters without reading them
  std::vector<Node*> order_;
  Node* output_ = nullptr;
  TypeRef declared_return_type_ = nullptr;
  size_t dead_in_order_ = 0;  // nodes erase_unused() removed that nodes() still lists
  bool order_stale_ = false;
  bool compacted_ = false;  // nothing changed since the last compact(): the next one has nothing to do
  // The ids of the nodes that replace_all_uses() gave an operand listed after them: the only ones compact() must
  // reorder (their state bits say so; these ids are kept to clear the bits without reading the nodes).
  std::vector<uint32_t> late_user_ids_;
  // next_id_ at the last compact(): nodes from here on were appended in id order after all older ones.
  uint32_t appended_from_id_ = 0;
  // The constants and shape literals appended since then, which compaction lists first (leads_at_compaction()).
  std::vector<uint32_t> leader_ids_;
  std::vector<RemovedCall> removed_calls_;  // set_dead() records each FuncCall node it removes
  std::vector<Node*> erase_pending_;  // erase_unused()'s work list, kept to reuse its memory
  std::vector<Node*> rebuilt_operands_;  // rebuild_call()'s old operands beyond three, kept to reuse its memory
  // Where drop_use() last removed a user of a long use list, per value (a few values, by id): see drop_use().
  struct DroppedSlot {
    const Node* value = nullptr;
    uint32_t slot = 0;
  };
  std::array<DroppedSlot, 8> dropped_slots_{};
  // What compaction reads instead of the nodes, a few bytes per node rather than a cache line each:
  //  * per node id, its state bits (dead, late user, parameter; graph.cpp);
  //  * which node order_ lists where. While order_by_id_ (as built, and after every compaction that reordered
  //    nothing) order_ lists the nodes other than the parameters in id order, so that a walk over the ids of
  //    node_states_ is a walk over order_. Otherwise order_ids_ holds the ids of order_, position by position,
  //    as of the last compact(); the nodes appended since follow with ids appended_from_id_, ... in order.
  std::vector<FlagByte> node_states_;
  std::vector<uint32_t> dead_ids_;  // removed since node_states_ last said so
  bool order_by_id_ = true;
  std::vector<uint32_t> order_ids_;
  std::vector<Node*> spare_order_;  // take_spare_order()
  std::vector<uint32_t> spare_ids_;
  // Who may be live without a user, without a sweep over the nodes: nodes whose use list was emptied since the
  // last compact() outside erase_unused() (which removes such nodes itself), and the count of non-parameter
  // nodes that never had a user (a new node has none until add_use() gives it its first).
  std::vector<Node*> maybe_unused_;
  int64_t first_used_ = 0;        // non-parameter nodes that add_use() gave their first user
  int64_t never_used_dead_ = 0;   // non-parameter nodes removed before they ever had a user
  std::vector<FuncAttr> attrs_;
  bool private_ = false;
  bool dataflow_ = true;
  bool may_call_functions_ = false;
  // By op id: the live calls of that op (num_calls_of()).
  std::vector<uint32_t> calls_of_op_;
  void count_call_of(OpId op);
  [[gnu::noinline, gnu::cold]] void count_first_call_beyond(OpId op);  // count_call_of() past the table's end
  uint32_t next_id_ = 0;
};

// A module: several functions (`@I.ir_module class Module:`), e.g. `main` plus composite functions.
//
// Functions are found by name through an index, and fresh names continue from the last one given for their base:
// a pass that partitions a graph into thousands of composite functions names and finds each in constant time
// (the linear scans this replaced made 2,000 partitions take 2.3 s).
class Module {
 public:
  Function& add_function(std::string name);
  // The first function added under `name` that is still in the module.
  Function* find(std::string_view name);
  const Function* find(std::string_view name) const;
  std::span<const std::unique_ptr<Function>> functions() const { return functions_; }
  // Removes the function named `name` (false when there is none; `name` may be that function's own name());
  // pointers to it dangle afterwards.
  bool remove_function(std::string_view name);
  // The first of `base`, `base_1`, `base_2`, ... that no function of the module uses.
  std::string unique_function_name(std::string_view base) const;

  // True when the text was an `@I.ir_module class`; a lone `@R.function` prints as such.
  bool is_ir_module() const { return ir_module_; }
  void set_ir_module(bool value) { ir_module_ = value; }
  const std::string& class_name() const { return class_name_; }
  void set_class_name(std::string name) { class_name_ = std::move(name); }

 private:
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view name) const noexcept { return std::hash<std::string_view>{}(name); }
  };
  std::vector<std::unique_ptr<Function>> functions_;
  // Keys view the functions' own names (fixed once added; a function is erased from here before it dies).
  std::unordered_map<std::string_view, Function*, NameHash, std::equal_to<>> by_name_;
  // Per base given to unique_function_name(): every suffix below this one is taken (0 stands for `base` itself).
  // Lowered when a function of such a name is removed.
  mutable std::unordered_map<std::string, uint64_t, NameHash, std::equal_to<>> first_free_suffix_;
  bool ir_module_ = false;
  std::string class_name_ = "Module";
};

}  // namespace dpl
