// The dataflow IR: node construction with type inference, use lists, replacement, dead-node removal, modules.
#include "dpl/ir/graph.h"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <type_traits>
#include <unordered_set>
#include <variant>

#include "dpl/support/hash_slot.h"
#include "op_table.h"

// AddressSanitizer is told about the node blocks the cache below holds, so that a use of a dead function's node
// is still reported.
#if defined(__SANITIZE_ADDRESS__)
#define DPL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DPL_ASAN 1
#endif
#endif
#ifdef DPL_ASAN
#include <sanitizer/asan_interface.h>
#define DPL_POISON(address, size) ASAN_POISON_MEMORY_REGION(address, size)
#define DPL_UNPOISON(address, size) ASAN_UNPOISON_MEMORY_REGION(address, size)
#else
#define DPL_POISON(address, size) ((void)(address), (void)(size))
#define DPL_UNPOISON(address, size) ((void)(address), (void)(size))
#endif

namespace dpl {

namespace {
// Nodes per arena block (graph.h: a block holds its nodes, then their cold parts). Larger blocks (even huge-page
// backed ones, tried) were slower in the benchmarks: glibc then maps and unmaps them per graph, and every new graph
// pays fresh page faults and page clearing, where blocks of this size are recycled from the heap. (Round 7 of
// docs/performance.md: 2 MB huge-page chunks for large functions only, still no gain in bench_rewrite.)
constexpr size_t kArenaBlock = Node::kArenaBlockNodes;
constexpr size_t kArenaBlockBytes = kArenaBlock * (sizeof(Node) + sizeof(detail::NodeCold));
constexpr size_t kFirstBlock = Node::kFirstBlockNodes;
constexpr size_t kFirstBlockBytes = kFirstBlock * (sizeof(Node) + sizeof(detail::NodeCold));

// Bits of Function::node_states_: what compaction knows of a node without reading the node.
constexpr FlagByte kDeadState{1};
constexpr FlagByte kLateUserState{2};
constexpr FlagByte kParamState{4};
constexpr FlagByte kEmitted{8};  // compaction's mark: already in the new order

// Attribute lists are interned by representation: doubles compare bit for bit, so -0.0 and 0.0 (equal as values)
// keep their own lists and print as given, and a NaN attribute is found again.
size_t hash_attr(const AttrValue& value) {
  const size_t kind = value.index();
  const size_t hash = std::visit(
      [](const auto& v) -> size_t {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return 0;
        } else if constexpr (std::is_same_v<T, double>) {
          return std::hash<uint64_t>{}(std::bit_cast<uint64_t>(v));
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          size_t h = v.size();
          for (int64_t x : v) h = h * 1000003u ^ std::hash<int64_t>{}(x);
          return h;
        } else {
          return std::hash<T>{}(v);
        }
      },
      value);
  return hash * 31u + kind;
}

struct AttrListHash {
  size_t operator()(const AttrList& attrs) const noexcept {
    size_t h = attrs.size();
    for (const AttrValue& value : attrs) h = h * 1000003u ^ hash_attr(value);
    return h;
  }
};

bool same_representation(const AttrValue& a, const AttrValue& b) {
  const double* x = std::get_if<double>(&a);
  const double* y = std::get_if<double>(&b);
  if (x != nullptr && y != nullptr) return std::bit_cast<uint64_t>(*x) == std::bit_cast<uint64_t>(*y);
  return a == b;
}

struct AttrListEqual {
  bool operator()(const AttrList& a, const AttrList& b) const noexcept {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), same_representation);
  }
};

// Whether the op's inference over `operands` reads their types alone (and the attributes): a built-in op none of
// whose operands is a shape literal or a tuple node, the only operands whose values inference reads. Then calls
// of the op with equal attributes over operands of equal types get one type (the memo and add_call_like rely on it).
bool infers_from_types(OpId op, std::span<Node* const> operands) {
  return op < op::kNumBuiltinOps && std::none_of(operands.begin(), operands.end(), [](const Node* operand) {
           return operand->kind() == NodeKind::ShapeLit || operand->kind() == NodeKind::Tuple;
         });
}
}  // namespace

// What add_call remembers. Calls with equal attributes share one list: a new call allocates nothing for attributes
// it shares, and the generated matchers' attribute checks read a few lists that stay in cache instead of one list
// per node. Rewrites create calls of a few signatures over and over (`multiply` of a tensor by a scalar constant,
// ...), so inferred types are remembered per op, attribute list and operand types.
struct Function::CallMemo {
  std::unordered_set<AttrList, AttrListHash, AttrListEqual> lists;  // node-based: stable addresses
  std::vector<const AttrList*> defaults;                            // per op id, interned on first use
  std::vector<const AttrList*> last_of_op;                          // per op id: what intern_for() gave last

  // A direct-mapped cache of inferred types, for calls of at most kMaxOperands operands whose type follows from
  // the operand types (infers_from_types). Made once the function has made kCallsBeforeMemo such calls: the small
  // functions a partition creates would not use it.
  struct Inferred {
    OpId op = 0;
    uint32_t count = 0;
    const AttrList* attrs = nullptr;
    static constexpr size_t kMaxOperands = 4;  // nn.attention's query, key, value and bias
    std::array<TypeRef, kMaxOperands> operands{};
    TypeRef result = nullptr;  // nullptr: empty slot
  };
  static constexpr uint32_t kCallsBeforeMemo = 16;
  static constexpr int kInferredSlotsLog2 = 8;
  using InferredTable = std::array<Inferred, size_t{1} << kInferredSlotsLog2>;
  std::unique_ptr<InferredTable> inferred;
  uint32_t calls_without_memo = 0;
  // The memo of the function whose lists this function's nodes may also point to (add_call_like).
  std::shared_ptr<const CallMemo> borrowed;

  // Holds on to `source`'s lists, unless this memo holds another's already or `source` holds on to this one
  // (a cycle would keep both alive forever).
  bool borrow(const std::shared_ptr<const CallMemo>& source) {
    if (borrowed != nullptr) return false;
    for (const CallMemo* memo = source.get(); memo != nullptr; memo = memo->borrowed.get()) {
      if (memo == this) return false;
    }
    borrowed = source;
    return true;
  }

  static bool memoizable(OpId op, std::span<Node* const> operands) {
    return operands.size() <= Inferred::kMaxOperands && infers_from_types(op, operands);
  }
  // Null while the function is young.
  Inferred* slot(OpId op, const AttrList* attrs, std::span<Node* const> operands) {
    if (inferred == nullptr) {
      if (++calls_without_memo < kCallsBeforeMemo) return nullptr;
      inferred = std::make_unique<InferredTable>();
    }
    uint64_t h = op * 0x9E3779B97F4A7C15u ^ reinterpret_cast<uintptr_t>(attrs);
    for (const Node* operand : operands) h = (h ^ reinterpret_cast<uintptr_t>(operand->type())) * 0x100000001B3u;
    // Types allocated close together differ in low address bits only: hash_slot() lets them reach the slot.
    return &(*inferred)[hash_slot(h, kInferredSlotsLog2)];
  }
  static bool holds(const Inferred& entry, OpId op, const AttrList* attrs, std::span<Node* const> operands) {
    if (entry.result == nullptr || entry.op != op || entry.attrs != attrs || entry.count != operands.size())
      return false;
    for (size_t i = 0; i < operands.size(); ++i) {
      if (entry.operands[i] != operands[i]->type()) return false;
    }
    return true;
  }

  const AttrList* intern(AttrList&& attrs) {
    if (attrs.empty()) return &detail::kNoAttrs;
    return &*lists.insert(std::move(attrs)).first;
  }
  // As intern(), for a call of `op`: calls of one op mostly repeat its last list (a rewrite's `permute_dims` to
  // heads, a reader's run of `matmul(..., out_dtype="void")`), which one comparison finds without hashing.
  // A list passed by reference is copied only when it is new.
  template <typename List>
  const AttrList* intern_for(OpId op, List&& attrs) {
    if (attrs.empty()) return &detail::kNoAttrs;
    if (last_of_op.size() <= op) last_of_op.resize(op + 1u, nullptr);
    const AttrList*& last = last_of_op[op];
    if (last == nullptr || !AttrListEqual{}(*last, attrs)) last = &*lists.insert(std::forward<List>(attrs)).first;
    return last;
  }
  // The op's default attributes, stored as add_call stores given ones.
  const AttrList* defaults_of(const OpInfo& info) {
    if (defaults.size() <= info.id) defaults.resize(info.id + 1u, nullptr);
    if (defaults[info.id] == nullptr) {
      AttrList attrs = info.default_attrs();
      for (size_t i = 0; i < attrs.size(); ++i) attr_matches_kind(info.attrs[i].kind, attrs[i]);
      defaults[info.id] = intern(std::move(attrs));
    }
    return defaults[info.id];
  }
};

// Use-list memory: blocks of 2^k pointers carved from chunks the function owns. A block that its list outgrows, or
// whose node dies, goes to the free list of its size, threaded through its first slot; the next list of that
// size takes it, so a rewrite's use-list updates mostly reuse memory that is still in cache.
struct Function::UsePool {
  static constexpr size_t kFirstChunk = 32;  // slots: a small function costs 256 bytes
  // Chunks double up to 64 KB, the size of a node block: larger ones would be mapped and unmapped by glibc for
  // every function, paying fresh page faults, where these are recycled from the heap.
  static constexpr size_t kMaxChunk = 8192;
  std::array<Node**, 33> free{};  // per log2(capacity)
  std::vector<std::unique_ptr<Node*[]>> chunks;
  Node** unused = nullptr;  // the rest of the last chunk
  size_t left = 0;
  size_t next_chunk = kFirstChunk;

  Node** take(uint32_t capacity) {  // a power of two
    Node**& head = free[static_cast<size_t>(std::countr_zero(capacity))];
    if (Node** block = head) {
      head = reinterpret_cast<Node**>(block[0]);
      return block;
    }
    return carve(capacity);
  }
  // take() when no block of that size is free: from the last chunk, or a new one.
  Node** carve(uint32_t capacity) {
    if (left < capacity) {
      while (left > 0) {  // the rest of the chunk goes to the free lists
        const size_t piece = std::bit_floor(left);
        give(unused, static_cast<uint32_t>(piece));
        unused += piece;
        left -= piece;
      }
      left = std::max<size_t>(next_chunk, capacity);
      chunks.emplace_back(new Node*[left]);
      unused = chunks.back().get();
      next_chunk = std::min(next_chunk * 2, kMaxChunk);
    }
    Node** block = unused;
    unused += capacity;
    left -= capacity;
    return block;
  }
  void give(Node** block, uint32_t capacity) {
    Node**& head = free[static_cast<size_t>(std::countr_zero(capacity))];
    block[0] = reinterpret_cast<Node*>(head);
    head = block;
  }
};

// Node blocks of functions that died, kept per thread for the next functions: a program that builds or reads
// graph after graph (a pipeline over many models, a language server, the benchmarks) would otherwise get fresh
// pages from the system for every graph and pay a page fault per 4 KB of new nodes, or not, depending on what
// glibc kept of earlier frees (measured: a fifth of a cascading pass when it did not). At most kMaxBytes per thread.
class ArenaBlockCache {
 public:
  static constexpr size_t kMaxBytes = size_t{64} << 20;

  static Node* take() {
    std::vector<Node*>& blocks = local().blocks_;
    if (blocks.empty()) return static_cast<Node*>(::operator new(kArenaBlockBytes, std::align_val_t{alignof(Node)}));
    Node* block = blocks.back();
    blocks.pop_back();
    DPL_UNPOISON(block, kArenaBlockBytes);
    return block;
  }
  // Blocks given last are taken first.
  static void give(Node* block) {
    // A function may die after its thread's cache did (a static module at exit) or on a thread without one.
    ArenaBlockCache* cache = alive_;
    if (cache == nullptr || cache->blocks_.size() * kArenaBlockBytes >= kMaxBytes) return free_block(block);
    DPL_POISON(block, kArenaBlockBytes);
    cache->blocks_.push_back(block);
  }

  ArenaBlockCache(const ArenaBlockCache&) = delete;
  ArenaBlockCache& operator=(const ArenaBlockCache&) = delete;

 private:
  ArenaBlockCache() { alive_ = this; }
  ~ArenaBlockCache() {
    alive_ = nullptr;
    for (Node* block : blocks_) {
      DPL_UNPOISON(block, kArenaBlockBytes);
      free_block(block);
    }
  }
  static ArenaBlockCache& local() {
    thread_local ArenaBlockCache cache;
    return cache;
  }
  static void free_block(Node* block) { ::operator delete(block, std::align_val_t{alignof(Node)}); }

  static thread_local ArenaBlockCache* alive_;  // trivially destructible: readable after the cache is gone
  std::vector<Node*> blocks_;
};
thread_local ArenaBlockCache* ArenaBlockCache::alive_ = nullptr;

Function::Function(std::string name)
    : name_(std::move(name)), call_memo_(std::make_shared<CallMemo>()), use_pool_(std::make_unique<UsePool>()) {}

Function::~Function() {
  // Last block first: the cache hands blocks out last in, first out, so the next function gets them in this
  // function's address order (sweeps then walk memory upwards, as the hardware prefetcher expects).
  for (size_t i = arena_.size(); i-- > 0;) {
    Node* block = arena_[i];
    const size_t used = i + 1 == arena_.size() ? arena_used_ : i == 0 ? kFirstBlock : kArenaBlock;
    for (size_t slot = 0; slot < used; ++slot) {
      if (block[slot].has_cold_) block[slot].cold().~NodeCold();
      block[slot].~Node();
    }
    if (i == 0) {
      ::operator delete(first_block_memory_);  // the small first block: malloc keeps those
    } else {
      ArenaBlockCache::give(block);
    }
  }
}

void Function::add_arena_block() {
  if (arena_.empty()) {
    // Aligned here, not by an aligned operator new: glibc's memalign costs a fifth more than malloc at this size.
    size_t space = kFirstBlockBytes + alignof(Node);
    first_block_memory_ = ::operator new(space);
    void* aligned = first_block_memory_;
    arena_.push_back(static_cast<Node*>(std::align(alignof(Node), kFirstBlockBytes, aligned, space)));
    arena_capacity_ = kFirstBlock;
  } else {
    arena_.push_back(ArenaBlockCache::take());
    arena_capacity_ = kArenaBlock;
  }
  arena_used_ = 0;
}

Node* Function::new_node(NodeKind kind, TypeRef type, std::span<Node* const> operands) {
  if (arena_used_ == arena_capacity_) add_arena_block();
  Node* slot = &arena_.back()[arena_used_++];
  // Default-initialized, not value-initialized (`Node()`): every member has an initializer, and value-
  // initialization would first clear the whole object (a `rep stos` per node, measured 16% of a cascading pass).
  Node& node = *new (slot) Node;  // its cold part is constructed on first write (Node::cold)
  compacted_ = false;
  node.kind_ = kind;
  node.id_ = next_id_++;
  node.type_ = type;
  set_operands(&node, operands);
  order_.push_back(&node);
  return &node;
}

void Function::set_operands(Node* node, std::span<Node* const> operands) {
  node->num_operands_ = static_cast<uint32_t>(operands.size());
  if (node->num_operands_ > Node::kInlineOperands) node->cold().heap_operands.reset(new Node*[operands.size()]);
  Node** slots = node->operand_data();
  for (size_t i = 0; i < operands.size(); ++i) {  // not std::copy: a memmove call for two or three pointers
    slots[i] = operands[i];
    add_use(operands[i], node);
  }
}

// Inline, with the rest out of line: a rewrite adds a use or two per node it touches, and the growing path's
// register saves cost the common case more than its one store.
inline void Function::add_use(Node* value, Node* user) {
  if (value->users_size_ == value->users_capacity()) [[unlikely]] make_room_for_use(value);
  value->users_data_[value->users_size_++] = user;
}

void Function::make_room_for_use(Node* value) {
  if (value->users_data_ == nullptr) {  // its first user (a new node's, in a rewrite): nothing to copy or give back
    count_first_use(value);
    // Room for two: a rewrite builds its right-hand side before the matched nodes go, so a value with one user
    // mostly gets a second one for a moment (a cascade's distribution: 5% of its instructions went to growing).
    value->users_data_ = use_pool_->take(2);
    value->users_capacity_log2_ = 1;
  } else {
    grow_uses(value, value->users_capacity() * 2);
  }
}

// Compaction counts the nodes that never had a user (Function::first_used_).
inline void Function::count_first_use(const Node* value) {
  if (value->kind_ != NodeKind::Param && !value->dead_) ++first_used_;
}

void Function::reserve_uses(Node* value, uint32_t size) {
  if (size > value->users_capacity()) grow_uses(value, std::bit_ceil(size));
}

void Function::grow_uses(Node* value, uint32_t capacity) {
  const uint32_t old_capacity = value->users_capacity();
  if (old_capacity == 0) count_first_use(value);
  Node** data = use_pool_->take(capacity);
  // Not std::copy_n: a memmove call for the one to four entries of a typical list.
  for (uint32_t i = 0; i < value->users_size_; ++i) data[i] = value->users_data_[i];
  if (value->users_data_ != nullptr) use_pool_->give(value->users_data_, old_capacity);
  value->users_data_ = data;
  value->users_capacity_log2_ = static_cast<uint8_t>(std::countr_zero(capacity)) & 0x3f;
}

inline void Function::release_uses(Node* node) {
  if (node->users_data_ != nullptr) use_pool_->give(node->users_data_, node->users_capacity());
  node->users_data_ = nullptr;
  node->users_size_ = 0;
}

Node* Function::add_param(std::string name, TypeRef type) {
  Node* node = new_node(NodeKind::Param, type, {});
  node->set_name(std::move(name));
  state_of(node->id_) |= kParamState;
  params_.push_back(node);
  param_ids_.push_back(node->id_);
  return node;
}

Node* Function::add_constant(Literal literal) {
  std::vector<Dim> dims;
  dims.reserve(literal.shape.size());
  for (int64_t extent : literal.shape) dims.push_back(Dim::fixed(extent));
  Node* node = new_node(NodeKind::Constant, Type::tensor(literal.dtype, dims), {});
  node->cold().extra = std::make_unique<Node::Extra>();
  const Literal& stored = node->cold().extra->literal = std::move(literal);
  node->constant_ = {stored.is_scalar() ? stored.values[0] : 0.0, stored.dtype, stored.is_scalar()};
  leader_ids_.push_back(node->id_);
  return node;
}

bool Function::check_call(OpId op, std::span<Node* const> operands, const AttrList& attrs, std::string& error) {
  if (op >= registry_.size()) {
    error = "unknown op id " + std::to_string(op);
    return false;
  }
  const OpInfo& info = registry_.get(op);
  // Empty `attrs` stand for the defaults, interned once per op: creating such a call allocates nothing for them.
  if (!detail::check_signature(info, operands, attrs.empty() ? *default_attrs(op) : attrs, error)) return false;
  for (Node* operand : operands) {
    if (operand->dead_) {
      error = info.name + ": an operand was removed from the graph";
      return false;
    }
  }
  return true;
}

// Interned before inference, so that the memo can key on the list (a call that fails leaves only its list).
const AttrList* Function::checked_attrs(OpId op, std::span<Node* const> operands, AttrList&& attrs,
                                        std::string& error) {
  if (op < registry_.size()) {
    // Stores int literals given for float attributes as doubles; check_signature reports any other mismatch.
    const OpInfo& info = registry_.get(op);
    for (size_t i = 0; i < attrs.size() && i < info.attrs.size(); ++i) attr_matches_kind(info.attrs[i].kind, attrs[i]);
  }
  if (!check_call(op, operands, attrs, error)) return nullptr;
  return attrs.empty() ? default_attrs(op) : call_memo_->intern_for(op, std::move(attrs));
}

const AttrList* Function::checked_attrs(OpId op, std::span<Node* const> operands, const AttrList& attrs,
                                        std::string& error) {
  if (op < registry_.size()) {
    const OpInfo& info = registry_.get(op);
    for (size_t i = 0; i < attrs.size() && i < info.attrs.size(); ++i) {
      if (attr_needs_conversion(info.attrs[i].kind, attrs[i])) return checked_attrs(op, operands, AttrList(attrs), error);
    }
  }
  if (!check_call(op, operands, attrs, error)) return nullptr;
  return attrs.empty() ? default_attrs(op) : call_memo_->intern_for(op, attrs);
}

Node* Function::add_call(OpId op, std::span<Node* const> operands, AttrList&& attrs, std::string& error) {
  return add_interned_call(op, operands, checked_attrs(op, operands, std::move(attrs), error), error);
}

Node* Function::add_call(OpId op, std::span<Node* const> operands, const AttrList& attrs, std::string& error) {
  return add_interned_call(op, operands, checked_attrs(op, operands, attrs, error), error);
}

// Inline: every call created or rebuilt counts its op (one increment, in a table of a few hundred entries).
inline void Function::count_call_of(OpId op) {
  if (op >= calls_of_op_.size()) [[unlikely]] return count_first_call_beyond(op);
  ++calls_of_op_[op];
}

void Function::count_first_call_beyond(OpId op) {
  calls_of_op_.resize(std::max<size_t>(size_t{op} + 1, registry_.size()), 0);
  ++calls_of_op_[op];
}

Node* Function::add_interned_call(OpId op, std::span<Node* const> operands, const AttrList* interned,
                                  std::string& error) {
  if (interned == nullptr) return nullptr;  // checked_attrs() set the error
  return add_checked_call(registry_.get(op), operands, interned, error);
}

Node* Function::add_call_with_defaults(OpId op, std::span<Node* const> operands, std::string& error) {
  const OpInfo& info = registry_.get(op);
  return add_checked_call(info, operands, defaults_of(info), error);
}

namespace {

// The type every operand has, the rank-0 tensors of its dtype aside (a scalar broadcasts to any shape), or nullptr:
// what an op with kTypeOfOperands infers for them, found without its inference or the memo's hash.
TypeRef type_of_operands(std::span<Node* const> operands) {
  TypeRef shared = nullptr;
  for (const Node* operand : operands) {
    TypeRef type = operand->type();
    if (type == shared) continue;
    if (!type->is_tensor() || type->dtype() == DType::Unknown) return nullptr;
    auto is_scalar_of = [](TypeRef scalar, TypeRef of) {
      return scalar->rank() == 0 && scalar->has_shape() && scalar->dtype() == of->dtype();
    };
    if (shared == nullptr || is_scalar_of(shared, type)) {
      shared = type;
    } else if (!is_scalar_of(type, shared)) {
      return nullptr;
    }
  }
  return shared;
}

}  // namespace

// Inline: a right-hand side's elementwise calls mostly take their operands' type, found here without a call.
inline TypeRef Function::infer_inline(const OpInfo& info, std::span<Node* const> operands, const AttrList* interned,
                                      std::string& error) {
  if (info.infer == nullptr) return Type::unknown();
  if (info.has(kTypeOfOperands)) {
    if (TypeRef type = type_of_operands(operands)) return type;
  }
  return infer_by_op(info, operands, interned, error);
}

TypeRef Function::infer_checked_call(const OpInfo& info, std::span<Node* const> operands, const AttrList* interned,
                                     std::string& error) {
  return infer_inline(info, operands, interned, error);
}

TypeRef Function::infer_by_op(const OpInfo& info, std::span<Node* const> operands, const AttrList* interned,
                              std::string& error) {
  const OpId op = info.id;
  CallMemo::Inferred* memo = CallMemo::memoizable(op, operands) ? call_memo_->slot(op, interned, operands) : nullptr;
  if (memo != nullptr && CallMemo::holds(*memo, op, interned, operands)) return memo->result;
  TypeRef type = info.infer(InferInput{operands, *interned}, error);
  if (type != nullptr && memo != nullptr) {
    *memo = {op, static_cast<uint32_t>(operands.size()), interned, {}, type};
    for (size_t i = 0; i < operands.size(); ++i) memo->operands[i] = operands[i]->type();
  }
  return type;
}

Node* Function::add_checked_call(const OpInfo& info, std::span<Node* const> operands, const AttrList* interned,
                                 std::string& error) {
  TypeRef type = infer_inline(info, operands, interned, error);
  if (type == nullptr) return nullptr;
  Node* node = new_node(NodeKind::Call, type, operands);
  node->op_ = info.id;
  node->attrs_ = interned;
  count_call_of(info.id);
  return node;
}

Node* Function::add_call_like(const Function& source, const Node& original, std::span<Node* const> operands,
                              std::string& error) {
  bool same_types = original.kind_ == NodeKind::Call && operands.size() == original.num_operands_;
  for (size_t i = 0; same_types && i < operands.size(); ++i) {
    same_types = operands[i] != nullptr && !operands[i]->dead_ && operands[i]->type_ == original.operand(i)->type_;
  }
  if (!same_types || !infers_from_types(original.op_, original.operands()) ||
      !infers_from_types(original.op_, operands)) {
    return add_call(original.op_, operands, original.attrs(), error);
  }
  const AttrList* attrs = attrs_of(source, original.op_, original.attrs_);
  Node* node = new_node(NodeKind::Call, original.type_, operands);
  node->op_ = original.op_;
  node->attrs_ = attrs;
  count_call_of(original.op_);
  return node;
}

// `attrs`, interned by `source`, as a list this function's nodes may point to: itself when this function holds on
// to source's lists, else this function's own copy.
const AttrList* Function::attrs_of(const Function& source, OpId op, const AttrList* attrs) {
  if (attrs == &detail::kNoAttrs || &source == this) return attrs;
  if (call_memo_->borrowed == source.call_memo_ || call_memo_->borrow(source.call_memo_)) return attrs;
  return call_memo_->intern_for(op, *attrs);
}

const AttrList* Function::default_attrs(OpId op) { return defaults_of(registry_.get(op)); }

// Inline: a right-hand side's calls ask for their op's defaults (most ops have no attributes).
inline const AttrList* Function::defaults_of(const OpInfo& info) {
  return info.attrs.empty() ? &detail::kNoAttrs : call_memo_->defaults_of(info);
}

// Inline: rebuild_call() and listed_before() ask on every rewrite.
inline bool Function::is_late_user(const Node* node) const {
  return node->id_ < node_states_.size() && any(node_states_[node->id_] & kLateUserState);
}

// Inline: replace_all_uses() asks once per use it moves.
inline bool Function::now_late(const Node* value, const Node* user, const Node* old_value) {
  if (value->id_ >= appended_from_id_) {
    if (leads_at_compaction(value)) {
      order_stale_ = true;
      return false;
    }
    // Appended since the last compaction after the user (appending keeps id order): surely later.
    if (value->id_ > user->id_) return true;
  }
  return !listed_before(value, user, old_value);
}

inline bool Function::leads_at_compaction(const Node* value) const {
  return value->id_ >= appended_from_id_ && (value->kind_ == NodeKind::Constant || value->kind_ == NodeKind::ShapeLit);
}

size_t Function::rebuild_call(Node* node, OpId op, std::span<Node* const> operands, const AttrList* attrs,
                              TypeRef type) {
  compacted_ = false;
  // Same arity, operands inline (the usual rebuild): only the slots that change move a use, so `add(x, x) =>
  // multiply(x, 2)` touches x's use list once, not four times.
  const bool slot_by_slot =
      operands.size() == node->num_operands_ && node->num_operands_ <= Node::kInlineOperands;
  // Whether each new operand is surely listed before the node (else compaction must pull it in first): as a
  // replacement before a user, with the node's old operands as what is known to come earlier. An operand the
  // node keeps in its slot stays where it was.
  bool late = false;
  if (!is_late_user(node)) {
    for (size_t i = 0; i < operands.size() && !late; ++i) {
      if (slot_by_slot && node->inline_operands_[i] == operands[i]) continue;
      late = now_late(operands[i], node, node);
    }
  }
  // The old operands that lose this use, read before their slots are overwritten (element by element: a memmove
  // call costs more than copying the usual two or three pointers).
  std::array<Node*, Node::kInlineOperands> few;
  std::span<Node*> old_operands;
  if (slot_by_slot) {
    uint32_t changed = 0;
    for (uint32_t i = 0; i < node->num_operands_; ++i) {
      if (node->inline_operands_[i] != operands[i]) few[changed++] = node->inline_operands_[i];
    }
    old_operands = std::span(few.data(), changed);
  } else if (node->num_operands_ <= Node::kInlineOperands) {
    for (uint32_t i = 0; i < node->num_operands_; ++i) few[i] = node->inline_operands_[i];
    old_operands = std::span(few.data(), node->num_operands_);
  } else {
    rebuilt_operands_.assign(node->operands().begin(), node->operands().end());
    old_operands = rebuilt_operands_;
  }
  // Old uses out before the new ones go in: an operand the node keeps does not grow its use list on the way.
  // Nothing is removed before all are in.
  for (Node* old : old_operands) drop_use(old, node);
  if (slot_by_slot) {
    for (uint32_t i = 0; i < node->num_operands_; ++i) {
      if (node->inline_operands_[i] == operands[i]) continue;
      node->inline_operands_[i] = operands[i];
      add_use(operands[i], node);
    }
  } else {
    node->drop_operands();
    set_operands(node, operands);
  }
  --calls_of_op_[node->op_];  // a call, counted when it became one
  node->op_ = op;
  node->attrs_ = attrs;
  node->type_ = type;
  count_call_of(op);
  if (late) mark_late_user(node);
  size_t removed = 0;
  for (Node* old : old_operands) {
    if (old->users_size_ == 0) removed += erase_unused(old);
  }
  return removed;
}

Node* Function::add_tuple(std::span<Node* const> fields) {
  // Interning a known tuple type then allocates nothing.
  detail::FewTypes room(fields.size());
  const std::span<TypeRef> types = room.span();
  for (size_t i = 0; i < fields.size(); ++i) types[i] = fields[i]->type();
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
  node->cold().index = index;
  return node;
}

Node* Function::add_shape(std::vector<Dim> dims) {
  Node* node = new_node(NodeKind::ShapeLit, Type::shape(static_cast<int>(dims.size())), {});
  node->cold().extra = std::make_unique<Node::Extra>();
  node->cold().extra->shape_value = std::move(dims);
  leader_ids_.push_back(node->id_);
  return node;
}

Node* Function::add_func_call(std::string callee, std::span<Node* const> args, TypeRef result_type) {
  Node* node = new_node(NodeKind::FuncCall, result_type ? result_type : Type::unknown(), args);
  may_call_functions_ = true;
  node->cold().extra = std::make_unique<Node::Extra>();
  node->cold().extra->callee = std::move(callee);
  return node;
}

void Function::set_output(Node* output) {
  if (output_ != nullptr && output_ != output && output_->users_size_ == 0) maybe_unused_.push_back(output_);
  output_ = output;
  compacted_ = false;
}

void Function::reserve(size_t nodes, size_t params) {
  order_.reserve(nodes);
  node_states_.reserve(nodes);
  params_.reserve(params);
  param_ids_.reserve(params);
}

FlagByte& Function::state_of(uint32_t id) {
  // Grown by half at a time (compact() trims it to the ids in use): each rewrite of a cascade makes a new late user.
  // At least to what reserve() made room for: a new function's parameters would otherwise grow it one by one.
  if (id >= node_states_.size()) {
    node_states_.resize(std::max({size_t{next_id_}, node_states_.size() * 3 / 2, node_states_.capacity()}), FlagByte{});
  }
  return node_states_[id];
}

inline void Function::set_dead(Node* node) {
  node->dead_ = true;
  if (node->kind_ == NodeKind::Call) --calls_of_op_[node->op_];
  dead_ids_.push_back(node->id_);
  if (node->kind_ == NodeKind::FuncCall) [[unlikely]] record_removed_call(node);
}

void Function::record_removed_call(const Node* node) { removed_calls_.push_back({node->id_, node->callee()}); }

void Function::record_dead_states() {
  for (uint32_t id : dead_ids_) node_states_[id] |= kDeadState;
  dead_ids_.clear();
}

size_t Function::num_live_nodes() const { return order_.size() - dead_in_order_; }

void Function::replace_all_uses(Node* old_value, Node* replacement) {
  if (old_value == replacement) return;
  compacted_ = false;
  // The list is filtered in place (no allocation per rewrite): only the replacement's own uses stay.
  Node** users = old_value->users_data_;
  uint32_t kept = 0;
  // `=> x` rules give the users an operand of the old value: listed before it, so before each of its users (a
  // user listed earlier is a late user already). A constant that leads at compaction asks now_late() itself; a
  // node appended after the old value is no operand of it (the old value would be a late user), and is not looked
  // for (a right-hand side's new nodes).
  const bool appended_after = replacement->id_ >= appended_from_id_ && replacement->id_ > old_value->id_;
  const bool listed_before_users = !appended_after && !is_late_user(old_value) && !leads_at_compaction(replacement) &&
                                   std::ranges::find(old_value->operands(), replacement) != old_value->operands().end();
  // A user that appears k times is visited k times; its slots are all rewritten on the first visit.
  for (uint32_t i = 0; i < old_value->users_size_; ++i) {
    Node* user = users[i];
    if (user == replacement) {
      users[kept++] = user;
      continue;
    }
    // Room for every use still to come at once: a new replacement's list does not grow 1, 2, 4, ... entry by entry.
    if (kept == i) reserve_uses(replacement, replacement->users_size_ + old_value->users_size_ - i);
    for (Node*& operand : std::span(user->operand_data(), user->num_operands_)) {
      if (operand != old_value) continue;
      operand = replacement;
      add_use(replacement, user);
      if (!listed_before_users && now_late(replacement, user, old_value)) mark_late_user(user);
    }
  }
  old_value->users_size_ = kept;
  if (kept == 0) maybe_unused_.push_back(old_value);
  if (output_ == old_value) output_ = replacement;
}

void Function::mark_late_user(Node* node) {
  FlagByte& state = state_of(node->id_);
  if (!any(state & kLateUserState)) late_user_ids_.push_back(node->id_);
  state |= kLateUserState;
  order_stale_ = true;
}

// When unsure this says no, which only costs compact() a look at the user's operands. Sure cases:
//  * both were appended since the last compact() (appending keeps id order), or only the user was;
//  * the replacement is an operand, or an operand's operand, of `old_value` (what `=> x` rules give): a node that
//    is not a late user is listed after its operands, so replacement, old_value and user come in this order.
// A call rebuilt in place asks about its new operands with itself as both `user` and `old_value`.
bool Function::listed_before(const Node* replacement, const Node* user, const Node* old_value) const {
  if (user->id_ >= appended_from_id_ && replacement->id_ < user->id_) return true;
  if (is_late_user(user) || is_late_user(old_value)) return false;
  for (const Node* operand : old_value->operands()) {
    if (operand == replacement) return true;
    if (is_late_user(operand)) continue;
    for (const Node* inner : operand->operands()) {
      if (inner == replacement) return true;
    }
  }
  return false;
}

// A value that many nodes read (one weight for every block, a shared constant) loses its users one rewrite at a
// time, mostly in the order they were added or in its reverse (the worklist is a stack): with swap-removal the
// next one then sits next to the slot of the last one removed, and looking there first keeps removing them all
// linear instead of quadratic in their number.
void Function::drop_use(Node* value, Node* user) {
  constexpr uint32_t kShortList = 16;  // searched from the back, where a rewrite's own new nodes are
  Node** users = value->users_data_;
  uint32_t& size = value->users_size_;
  uint32_t at = size;  // not found yet
  DroppedSlot* dropped = nullptr;
  if (size > kShortList) [[unlikely]] {
    dropped = &dropped_slots_[value->id_ % dropped_slots_.size()];
    // Users removed in the order they were added sit one slot up, in the reverse order one slot down (the slot
    // below 0 wraps around and is skipped).
    if (dropped->value == value) {
      for (const uint32_t near : {dropped->slot + 1, dropped->slot - 1}) {
        if (near < size && users[near] == user) {
          at = near;
          break;
        }
      }
    }
  }
  if (at == size) {
    do {
      if (at == 0) return;
    } while (users[--at] != user);
  }
  users[at] = users[--size];
  if (dropped != nullptr) *dropped = {value, at};
}

size_t Function::erase_unused(Node* node) {
  size_t removed = 0;
  std::vector<Node*>& pending = erase_pending_;  // reused: rewrites call this once per rewrite
  pending.assign(1, node);
  while (!pending.empty()) {
    Node* candidate = pending.back();
    pending.pop_back();
    if (candidate == nullptr || candidate->dead_ || candidate->users_size_ != 0 || candidate == output_ ||
        candidate->kind_ == NodeKind::Param)
      continue;
    if (candidate->users_data_ == nullptr) ++never_used_dead_;
    // A rewrite replaces a node, then erases it: the replacement listed it as maybe unused a moment ago.
    if (!maybe_unused_.empty() && maybe_unused_.back() == candidate) maybe_unused_.pop_back();
    set_dead(candidate);
    ++removed;
    for (Node* operand : candidate->operands()) {
      drop_use(operand, candidate);
      pending.push_back(operand);
    }
    candidate->drop_operands();
    release_uses(candidate);  // empty, but may hold memory; compact() no longer visits it
  }
  dead_in_order_ += removed;
  if (removed != 0) compacted_ = false;
  return removed;
}

void Function::emit_after_operands(Node* root, std::vector<FlagByte>& emitted,
                                   std::vector<std::pair<Node*, size_t>>& dfs, std::vector<Node*>& order,
                                   std::vector<uint32_t>& order_ids) {
  // The walk reads each node it reaches, one after the other: on a graph larger than the cache every step would
  // wait for memory. Once the walk is deep (a cascade's chain of late users; most walks end a level or two down),
  // a node's operands are asked for when it is pushed, and, a few levels down, the operands of the operand that a
  // node further up visits next (asked for when that node was pushed, so in cache by now).
  constexpr size_t kDeep = 2;
  constexpr size_t kLookBack = 4;
  auto push = [&](Node* node) {
    if (dfs.size() >= kDeep) {
      for (const Node* operand : node->operands()) __builtin_prefetch(operand);
    }
    if (dfs.size() >= kLookBack) {
      const auto& [above, above_next] = dfs[dfs.size() - kLookBack];
      if (above_next < above->num_operands_) {
        for (const Node* operand : above->operand(above_next)->operands()) __builtin_prefetch(operand);
      }
    }
    dfs.emplace_back(node, 0);  // node, next operand to visit (iterative: graphs are deep)
  };
  emitted[root->id_] |= kEmitted;
  push(root);
  while (!dfs.empty()) {
    auto& [node, next] = dfs.back();
    if (next < node->num_operands_) {
      Node* operand = node->operand(next++);
      if (!any(emitted[operand->id_] & kEmitted)) {
        emitted[operand->id_] |= kEmitted;
        push(operand);
      }
      continue;
    }
    order.push_back(node);
    order_ids.push_back(node->id_);
    dfs.pop_back();
  }
}

void Function::compact() {
  // A pass that rewrote nothing need not walk the graph again (pipelines run many passes that find nothing).
  if (compacted_) return;
  node_states_.resize(next_id_, FlagByte{});
  record_dead_states();
  if (!order_by_id_) {
    order_ids_.reserve(order_.size());
    for (uint32_t id = appended_from_id_; id < next_id_; ++id) order_ids_.push_back(id);
  }
  if (!compact_if_all_used()) compact_unreachable();
  record_dead_states();  // what compact_unreachable() removed
  for (uint32_t id : late_user_ids_) node_states_[id] &= ~kLateUserState;
  late_user_ids_.clear();
  leader_ids_.clear();
  maybe_unused_.clear();
  appended_from_id_ = next_id_;
  dead_in_order_ = 0;
  order_stale_ = false;
  compacted_ = true;
}

// Node i of the first block has id i, node i of block b >= 1 id kFirstBlock + (b - 1) * kArenaBlock + i: new_node()
// takes the next slot and the next id together.
Node* Function::node_with_id(uint32_t id) const {
  if (id < kFirstBlock) return arena_[0] + id;
  const uint32_t later = id - static_cast<uint32_t>(kFirstBlock);
  return arena_[1 + later / kArenaBlock] + later % kArenaBlock;
}

template <typename VisitBlock>
void Function::for_each_arena_block(VisitBlock visit_block) const {
  uint32_t id = 0;
  for (size_t b = 0; b < arena_.size(); ++b) {
    const uint32_t end = std::min(next_id_, id + static_cast<uint32_t>(b == 0 ? kFirstBlock : kArenaBlock));
    visit_block(id, end, arena_[b]);
    id = end;
  }
}

template <typename Visit>
void Function::for_each_id_in_arena(Visit visit) const {
  for_each_arena_block([&](uint32_t id, uint32_t end, Node* node) {
    for (; id < end; ++id, ++node) visit(id, node);
  });
}

template <typename Visit>
void Function::for_each_listed_node(Visit visit) const {
  if (order_by_id_) {
    for_each_id_in_arena(visit);
  } else {
    for (uint32_t id : order_ids_) visit(id, node_with_id(id));
  }
}

void Function::take_spare_order(std::vector<Node*>& order, std::vector<uint32_t>& ids, size_t capacity) {
  order = std::exchange(spare_order_, {});
  order.clear();
  order.reserve(capacity);
  take_spare_ids(ids, capacity);
}

void Function::take_spare_ids(std::vector<uint32_t>& ids, size_t capacity) {
  ids = std::exchange(spare_ids_, {});
  ids.clear();
  ids.reserve(capacity);
}

void Function::install_order(std::vector<Node*>&& order, std::vector<uint32_t>&& ids) {
  // compact_if_all_used() builds the new order in order_'s own buffer and leaves order_ empty: keep the spare.
  if (order_.capacity() >= spare_order_.capacity()) spare_order_ = std::move(order_);
  order_ = std::move(order);
  const size_t params = std::min(params_.size(), ids.size());
  order_by_id_ = std::is_sorted(ids.begin() + static_cast<std::ptrdiff_t>(params), ids.end());
  if (order_by_id_) {
    order_ids_.clear();
    spare_ids_ = std::move(ids);
  } else {
    spare_ids_ = std::exchange(order_ids_, std::move(ids));
  }
}

// Without reading the nodes: a live node without a user either never had one (counted: every node created is
// counted once, at its first user or at its removal, unless it is a parameter), or lost its users in
// replace_all_uses() or set_output() (listed in maybe_unused_); erase_unused() removes every other node it leaves
// without users, and compact() leaves none behind.
bool Function::may_hold_unused_node() const {
  const int64_t never_used =
      static_cast<int64_t>(next_id_) - static_cast<int64_t>(params_.size()) - first_used_ - never_used_dead_;
  const bool output_never_used = output_->kind_ != NodeKind::Param && output_->users_data_ == nullptr;
  if (never_used != (output_never_used ? 1 : 0)) return true;
  return std::any_of(maybe_unused_.begin(), maybe_unused_.end(), [this](const Node* node) {
    return !node->dead_ && node->users_size_ == 0 && node->kind_ != NodeKind::Param && node != output_;
  });
}

// After a rewrite pass erase_unused() has already removed every node a rewrite orphaned, so every live node but
// the parameters and the output has a user. Then the output depends on all of them (the graph is acyclic) and
// one walk over the order suffices: it drops the dead, and only the late users (nodes that a replacement gave an
// operand listed after them) pull their late operands in before them; everyone else's operands come earlier.
// The walk reads node ids and states, not the nodes, except the late users and their operands.
bool Function::compact_if_all_used() {
  if (output_ == nullptr || output_->dead_ || may_hold_unused_node()) return false;
  if (!order_stale_) {
    compact_in_place();
    return true;
  }
  // The walk reads ids and nodes, never order_: the new order is written over it (a fresh buffer would cost the
  // first compaction of every graph its page faults; measured 23% of a cascading pass on a fresh graph).
  const size_t live = order_.size() - dead_in_order_;
  std::vector<Node*> order = std::move(order_);
  order.clear();
  std::vector<uint32_t> ids;
  take_spare_ids(ids, live);
  std::vector<std::pair<Node*, size_t>> dfs;
  // kEmitted marks go to node_states_ (no fresh array per compact), and are cleared from the new order's ids.
  order.insert(order.end(), params_.begin(), params_.end());
  ids.insert(ids.end(), param_ids_.begin(), param_ids_.end());
  for (uint32_t id : param_ids_) node_states_[id] |= kEmitted;
  for (uint32_t id : leader_ids_) {  // the new constants, which users may have been given without pulling them in
    if (any(node_states_[id] & kDeadState)) continue;
    node_states_[id] |= kEmitted;
    order.push_back(node_with_id(id));
    ids.push_back(id);
  }
  for_each_listed_node([&](uint32_t id, Node* node) {
    const FlagByte state = node_states_[id];
    if (any(state & (kDeadState | kParamState | kEmitted))) return;  // kEmitted: pulled in before a late user
    if (any(state & kLateUserState)) {
      emit_after_operands(node, node_states_, dfs, order, ids);
    } else {
      node_states_[id] = state | kEmitted;
      order.push_back(node);
      ids.push_back(id);
    }
  });
  for (uint32_t id : ids) node_states_[id] &= ~kEmitted;
  install_order(std::move(order), std::move(ids));
  return true;
}

// The order is topological, so every live node may stay where it is: the non-parameters move down over the dead
// (and the parameters), then the parameters go in front, unless they lead the order already (as compact() left
// them: rewrites only append). A pass that rewrote little thus costs one sequential walk over the node states
// (and ids) and no allocation (a fresh order of a 10^6-node graph is 8 MB of page faults); one that removed
// nothing costs nothing.
void Function::compact_in_place() {
  size_t leading = 0;
  while (leading < params_.size() && leading < order_.size() && order_[leading] == params_[leading]) ++leading;
  // Each parameter is listed once: when they all lead, none comes later.
  const bool params_lead = leading == params_.size();
  if (params_lead && dead_in_order_ == 0) return;
  if (order_by_id_) {  // the same order, rebuilt from the states alone
    if (!params_lead) std::copy(params_.begin(), params_.end(), order_.begin());
    // Branch-free: parameters sit between the calls that read them, so whether a node stays is a coin flip to
    // the branch predictor (a mispredicted branch per parameter was a fifth of a transformer pass's). Every node
    // is written at `kept`, which moves past those that stay, so a write can land one slot past the nodes kept:
    // a dead node listed leaves that slot, else one is added. Eight states are read as one word.
    constexpr FlagByte kDropped = kDeadState | kParamState;
    static_assert(kDeadState == FlagByte{1} && kParamState == FlagByte{4}, "one shift folds the two bits of each byte");
    size_t kept = params_.size();
    if (dead_in_order_ == 0) order_.emplace_back();
    Node** slots = order_.data();
    const FlagByte* states = node_states_.data();
    for_each_arena_block([&](uint32_t id, uint32_t end, Node* node) {
      if constexpr (std::endian::native == std::endian::little) {
        for (; id + 8 <= end; id += 8, node += 8) {
          uint64_t word;
          std::memcpy(&word, states + id, sizeof word);
          const uint64_t stays = ~(word | word >> 2) & 0x0101010101010101;  // bit 0 of each byte
#pragma GCC unroll 8
          for (int i = 0; i < 8; ++i) {
            slots[kept] = node + i;
            kept += (stays >> (8 * i)) & 1;
          }
        }
      }
      for (; id < end; ++id, ++node) {
        slots[kept] = node;
        kept += !any(states[id] & kDropped);
      }
    });
    order_.resize(kept);
    return;
  }
  size_t kept = params_lead ? leading : 0;
  for (size_t i = kept; i < order_.size(); ++i) {
    const uint32_t id = order_ids_[i];
    if (any(node_states_[id] & (kDeadState | kParamState))) continue;
    order_[kept] = order_[i];
    order_ids_[kept] = id;
    ++kept;
  }
  order_.resize(kept);
  order_ids_.resize(kept);
  if (params_lead) return;
  order_.insert(order_.begin(), params_.begin(), params_.end());
  order_ids_.insert(order_ids_.begin(), param_ids_.begin(), param_ids_.end());
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
  for (uint32_t id : param_ids_) reachable[id] = 1;

  // 2. Unlink the dead from the live. A dead node's users are dead too, so only operand lists of live nodes
  //    need filtering; each is filtered once.
  std::vector<Node*> touched;
  for (Node* node : order_) {
    if (reachable[node->id_] || node->dead_) continue;
    if (node->users_data_ == nullptr) ++never_used_dead_;
    set_dead(node);
    for (Node* operand : node->operands()) {
      if (reachable[operand->id_] == 1) {
        reachable[operand->id_] = 2;  // live, and its use list holds dead users
        touched.push_back(operand);
      }
    }
  }
  for (Node* node : touched) {
    reachable[node->id_] = 1;
    Node** users = node->users_data_;
    node->users_size_ = static_cast<uint32_t>(
        std::remove_if(users, users + node->users_size_, [](Node* user) { return user->dead_; }) - users);
  }
  for (Node* node : order_) {
    if (!node->dead_) continue;
    node->drop_operands();
    release_uses(node);
  }

  // 3. The new order: parameters, then the old order with any operand that comes too late pulled in first.
  std::vector<Node*> order;
  std::vector<uint32_t> ids;
  take_spare_order(order, ids, order_.size());
  std::vector<FlagByte> emitted(id_count, FlagByte{});
  order.insert(order.end(), params_.begin(), params_.end());
  ids.insert(ids.end(), param_ids_.begin(), param_ids_.end());
  for (uint32_t id : param_ids_) emitted[id] = kEmitted;
  std::vector<std::pair<Node*, size_t>> dfs;
  for (Node* root : order_) {
    if (!root->dead_ && !any(emitted[root->id_] & kEmitted)) emit_after_operands(root, emitted, dfs, order, ids);
  }
  install_order(std::move(order), std::move(ids));
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
  Function& function = *functions_.back();
  by_name_.try_emplace(function.name(), &function);  // a second function of the same name is found after the first
  return function;
}

Function* Module::find(std::string_view name) {
  const auto it = by_name_.find(name);
  return it != by_name_.end() ? it->second : nullptr;
}

const Function* Module::find(std::string_view name) const {
  const auto it = by_name_.find(name);
  return it != by_name_.end() ? it->second : nullptr;
}

bool Module::remove_function(std::string_view removed_name) {
  const std::string name(removed_name);  // `removed_name` may view the name of the function that dies below
  const auto indexed = by_name_.find(name);
  if (indexed == by_name_.end()) return false;
  const Function* removed = indexed->second;
  by_name_.erase(indexed);
  std::erase_if(functions_, [removed](const std::unique_ptr<Function>& function) { return function.get() == removed; });
  for (const std::unique_ptr<Function>& function : functions_) {  // another function of that name, if any
    if (function->name() == name) {
      by_name_.try_emplace(function->name(), function.get());
      break;
    }
  }
  // The name is free again: as `base` itself, or as `base_k` of a base that unique_function_name() had passed.
  const auto free_again = [this](std::string_view base, uint64_t suffix) {
    const auto hint = first_free_suffix_.find(base);
    if (hint != first_free_suffix_.end() && hint->second > suffix) hint->second = suffix;
  };
  free_again(name, 0);
  const size_t underscore = name.rfind('_');
  if (underscore != std::string_view::npos && underscore + 1 < name.size() && name.size() - underscore <= 19 &&
      std::all_of(name.begin() + static_cast<std::ptrdiff_t>(underscore) + 1, name.end(),
                  [](char c) { return c >= '0' && c <= '9'; })) {
    free_again(std::string_view(name).substr(0, underscore), std::stoull(name.substr(underscore + 1)));
  }
  return true;
}

std::string Module::unique_function_name(std::string_view base) const {
  auto known = first_free_suffix_.find(base);  // no string built for a base seen before
  if (known == first_free_suffix_.end()) known = first_free_suffix_.emplace(std::string(base), 0).first;
  uint64_t& suffix = known->second;
  std::string name;
  name.reserve(base.size() + 21);  // '_' and any suffix: one allocation however many names are taken
  const auto with_suffix = [&] {
    name.assign(base);
    if (suffix == 0) return;
    std::array<char, 21> digits{'_'};
    name.append(digits.data(), std::to_chars(digits.data() + 1, digits.data() + digits.size(), suffix).ptr);
  };
  with_suffix();
  while (find(name) != nullptr) {
    ++suffix;
    with_suffix();
  }
  return name;
}

}  // namespace dpl
