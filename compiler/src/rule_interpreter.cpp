// The rule interpreter: each rule alternative becomes a small match program (the checks the emitter would
// generate, in its order, with a choice point where the emitter opens a loop: commutative operand orders, a later
// root's candidate users); guards, right-hand sides, partitions and multi-root replacements are evaluated from the
// checked AST exactly as the generated C++ computes them.
#include "dpl/compiler/rule_interpreter.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <utility>
#include <variant>

#include "dpl/compiler/match_order.h"
#include "dpl/compiler/required_ops.h"
#include "dpl/ir/dominators.h"

namespace dpl::compiler {

namespace {

// --- what a variable holds while a rule is tried ---

enum class SlotKind : uint8_t { Value, Op, Attr, Dim, Let, List, AttrList, DimList, OpList };

struct Binding {
  bool bound = false;
  Node* node = nullptr;           // Value, Let
  OpId op = 0;                    // Op
  const AttrValue* attr = nullptr;  // Attr: the matched node's attribute
  Dim dim = Dim::fixed(0);        // Dim
  int list = -1;  // List: an index into the alternative's lists; AttrList, DimList, OpList: into its attr, dim, op
                  // lists
};

// A guard-like value, as the generated C++ computes it: numbers in double precision (integer arithmetic there is
// exact for every value a graph holds; division is in double there too).
struct OpRef {
  OpId id;
  bool operator==(const OpRef&) const = default;
};
using IntList = std::vector<int64_t>;
using Computed = std::variant<double, bool, DType, std::string, IntList, AttrValue, Node*, OpRef, Dim>;

// One check of a match program. `reg` is the register (a matched node) it looks at.
struct Instr {
  enum class Kind : uint8_t {
    Loop,         // a choice point: operand order 0, then 1 (a commutative call whose operands differ)
    Operand,      // regs[dst] = regs[reg]->operand(index), or the operand the loop's current order picks
    CallOf,       // a call of `op`
    Arity,        // `count` operands (ops with a variable operand count)
    OpVar,        // binds or checks the op variable `slot`
    AttrLiteral,  // attribute `index` equals `*literal`
    AttrVar,      // binds or checks the attribute capture `slot`
    Var,          // binds or checks the value variable `slot`
    Const,        // a constant matching `*constant`
    Type,         // a tensor matching `*type`; `dims` are the slots of its dimension variables (-1: none)
    Param,        // a function parameter (named `*name` when set)
    Item,         // a tuple item (with index `index` unless it is -1)
    Tuple,        // a tuple of `count` fields
    // Fuzzy patterns:
    AtLeast,       // a call with at least `count` operands (`f(a, ...)`)
    TupleAtLeast,  // a tuple of at least `count` fields (`(a, ...)`)
    Rest,         // binds the list slot `slot` (list `index`) to the operands from `count` on (`xs...`)
    Dominator,    // regs[dst] = the parent `*dominator` reaches from regs[reg], the child (find_dominated_parent)
    // Rule kinds beyond one rewritten root:
    Composite,  // a call of a module function whose Composite attribute is `*name`, with `count` operands (at
                // least that many when `index` is 1: `composite("c")(a, ...)`)
    Load,       // regs[dst] = the node of value variable `slot`
    Users,      // a choice point: regs[dst] = each user of regs[reg] in turn (a later root's candidates)
    NotRoot,    // regs[reg] is none of the roots matched so far (registers `roots`, group lists `lists`)
    Guard,      // `*guard` holds (a root's own guard)
    Group,      // collects group `index`'s members (each alternative's candidate program starts at one of `roots`),
                // then goes on at `dst`
    Member,     // the end of a group's candidate program: tries the member program that follows on regs[reg]
    Collect,    // the end of a member program: appends its values to group `index`'s lists
    Accept,     // the end of the match: the rule's guard, then its action
  };
  Kind kind;
  int reg = 0;
  int dst = 0;
  int index = 0;
  int count = 0;
  int loop = -1;
  int slot = -1;
  OpId op = 0;
  const AttrValue* literal = nullptr;
  const ConstPattern* constant = nullptr;
  const TypePattern* type = nullptr;
  const DominatorPattern* dominator = nullptr;
  const std::string* name = nullptr;
  const Expr* guard = nullptr;
  std::vector<int> dims;
  std::vector<int> roots;
  std::vector<int> lists;
};

// A group root of a multi-root rule: the lists its members fill.
struct GroupInfo {
  int members = -1;                             // the list of the members themselves
  std::vector<std::pair<int, int>> collected;  // (value slot inside the member program, list) incl. the members
  std::vector<std::pair<int, int>> collected_attrs;  // (attribute slot inside the member program, attr list)
  std::vector<std::pair<int, int>> collected_dims;   // (dimension slot inside the member program, dim list)
  std::vector<std::pair<int, int>> collected_ops;    // (op slot inside the member program, op list)
};

bool attr_equal(const AttrValue& a, const AttrValue& b) { return a == b; }

// The error for a construct only compiled passes support.
struct Unsupported {
  SourceLoc loc;
  std::string what;
};

const char* extern_kind_name(ExternDecl::Kind kind) {
  return kind == ExternDecl::Kind::Predicate ? "predicate" : "rewriter";
}

// Why the natives cannot stand for `decl`: none of its name, or one of another kind or arity (naming what was
// found); nothing when one fits.
std::optional<std::string> native_mismatch(const ExternDecl& decl, const NativeRegistry& natives) {
  const std::string declared = std::string("extern ") + extern_kind_name(decl.kind) + " '" + decl.name + "'";
  if (natives.empty()) {
    return declared + " needs native code; load a natives library (--natives LIB.so) or compile the rules with dplc";
  }
  const NativeFunction* native = natives.find(decl.name);
  if (native == nullptr) {
    std::string loaded;
    for (const NativeFunction* known : natives.all()) loaded += (loaded.empty() ? "" : ", ") + known->name;
    return declared + " has no native: none named '" + decl.name + "' is loaded (loaded: " + loaded + ")";
  }
  const bool predicate = decl.kind == ExternDecl::Kind::Predicate;
  const std::string found = native->signature() + " (" + native->origin + ")";
  if (predicate != (native->kind == NativeKind::Predicate)) {
    return declared + " is declared a " + extern_kind_name(decl.kind) + ", but the loaded native is a " +
           (predicate ? "rewriter" : "predicate") + ": " + found;
  }
  if (native->arity != decl.params.size()) {
    return declared + " takes " + std::to_string(decl.params.size()) +
           (decl.params.size() == 1 ? " operand" : " operands") + ", but the loaded native takes " +
           std::to_string(native->arity) + ": " + found;
  }
  return std::nullopt;
}

// Walks a rule's expressions for the calls of externs that no loaded native stands for.
class SupportCheck {
 public:
  explicit SupportCheck(const NativeRegistry& natives) : natives_(natives) {}

  std::optional<Unsupported> found;
  std::vector<const ExternDecl*> unresolved;  // each once

  void expr(const Expr& expr) {
    const auto* call = std::get_if<CallExpr>(&expr.node);
    if (call != nullptr && call->native != nullptr) {
      if (std::optional<std::string> mismatch = native_mismatch(*call->native, natives_)) {
        if (!found) found = Unsupported{expr.loc, std::move(*mismatch)};
        if (std::find(unresolved.begin(), unresolved.end(), call->native) == unresolved.end()) {
          unresolved.push_back(call->native);
        }
      }
    }
    for_each_sub_expr(expr, [&](const Expr& sub) { this->expr(sub); });
  }

  void rule(const Rule& rule) {
    for_each_rule_expr(rule, [&](const Expr& top) { expr(top); });
  }

 private:
  const NativeRegistry& natives_;
};

// One alternative of one rule: its match program and what it needs to evaluate the guard and right-hand side.
class Alternative {
 public:
  // Where the pass's matcher tries an alternative: at calls of one op, at calls of composite functions, or at every
  // node (a multi-root rule anchored at `x: _`).
  enum class Anchor : uint8_t { Op, Composite, AnyNode, TupleItem };

  // An alternative-free pattern of a rewrite or partition rule.
  Alternative(const OpRegistry& registry, const NativeBindings& natives, PatternPtr pattern, const Rule& rule,
              size_t rule_index)
      : registry_(registry), natives_(natives), pattern_(std::move(pattern)), rule_(rule), rule_index_(rule_index) {
    specificity_ = pattern_specificity(*pattern_);
    count_mentions(*pattern_, mentions_);
    MatchOrder order(registry_, mentions_);
    anchor_at(*pattern_);
    const int root = new_register();
    compile(*pattern_, root, /*op_known=*/true, order);
    emit_dimension_checks(*pattern_, root, /*in_group=*/false);
    if (rule_.kind == Rule::Kind::Partition) {
      for (const PartitionInput& input : partition_inputs(*pattern_)) {
        input_registers_.emplace_back(input.leaf != nullptr ? leaf_registers_.at(input.leaf)
                                                            : rest_registers_.at(input.rest),
                                      input.leaf != nullptr ? -1 : static_cast<int>(input.first));
      }
    }
    finish();
  }

  // A multi-root rule (docs/semantics.md), as the emitter's MultiRootEmitter matches it: the anchor at the visited
  // node; each later root among the users of a value bound before it, backtracking over the candidates in users()
  // order; a group collects every candidate that matches.
  // `roots` is one alternative of the rule (expand_root_alternatives).
  Alternative(const OpRegistry& registry, const NativeBindings& natives, RootsAlternative roots, const Rule& rule,
              size_t rule_index)
      : registry_(registry), natives_(natives), roots_(std::move(roots)), rule_(rule), rule_index_(rule_index) {
    mentions_ = root_mentions(rule, roots_);
    specificity_ = root_specificity(roots_);
    MatchOrder order(registry_, mentions_);
    const RootDecl& anchor = rule.roots[0];
    const Pattern& anchor_pattern = *roots_.roots[0][0];
    anchor_at(anchor_pattern);
    const int root = new_register();
    emit(Instr::Kind::Var, root).slot = slot(anchor.name, SlotKind::Value);
    compile(anchor_pattern, root, /*op_known=*/true, order);
    emit_dimension_checks(anchor_pattern, root, /*in_group=*/false);
    if (anchor.guard != nullptr) emit_guard(*anchor.guard, root, /*in_group=*/false);
    root_registers_.push_back(root);
    for (size_t i = 1; i < rule.roots.size(); ++i) {
      if (rule.roots[i].group) {
        compile_group(rule.roots[i], roots_.roots[i], order);
      } else {
        compile_root(rule.roots[i], *roots_.roots[i][0], order);
      }
    }
    finish();
  }

  Anchor anchor() const { return anchor_; }
  OpId root_op() const { return root_op_; }  // Anchor::Op
  size_t rule_index() const { return rule_index_; }
  int priority() const { return rule_.options.priority; }
  size_t specificity() const { return specificity_; }

  // Tries the alternative at `root`; true when it rewrote.
  bool apply(Rewriter& rewriter, Node* root) {
    if (rule_.options.once && rewriter.created_in_run(root)) return false;
    rewriter_ = &rewriter;
    regs_.assign(num_registers_, nullptr);
    regs_[0] = root;
    vars_.assign(kinds_.size(), Binding{});
    for (const auto& [slot, list] : list_slots_) vars_[static_cast<size_t>(slot)].list = list;
    trail_.clear();
    orders_.assign(num_loops_, 0);
    lists_.resize(static_cast<size_t>(num_lists_));
    attr_lists_.resize(static_cast<size_t>(num_attr_lists_));
    dim_lists_.resize(static_cast<size_t>(num_dim_lists_));
    op_lists_.resize(static_cast<size_t>(num_op_lists_));
    fired_ = false;
    run(0);
    return fired_;
  }

 private:
  // --- rule kinds: where the match starts, later roots and groups, what ends it ---

  void anchor_at(const Pattern& pattern) {
    const Pattern* top = &pattern;
    while (const auto* bind = std::get_if<BindPattern>(&top->node)) top = bind->inner.get();
    const auto* call = std::get_if<CallPattern>(&top->node);
    if (std::holds_alternative<ItemPattern>(top->node)) {
      anchor_ = Anchor::TupleItem;
    } else if (std::holds_alternative<DominatorPattern>(top->node)) {
      anchor_ = Anchor::Op;
      root_op_ = root_call(pattern).ops[0].id;
    } else if (call == nullptr) {
      anchor_ = Anchor::AnyNode;
    } else if (call->composite) {
      anchor_ = Anchor::Composite;
    } else {
      anchor_ = Anchor::Op;
      root_op_ = root_call(pattern).ops[0].id;
    }
  }

  // The let slots, the computed attribute values, and the end of the program.
  void finish() {
    for (const LetBinding& let : rule_.lets) {
      slots_[let.name] = static_cast<int>(kinds_.size());
      kinds_.push_back(SlotKind::Let);
    }
    for (const LetBinding& let : rule_.lets) computed_attrs(*let.value, attr_values_);
    if (rule_.rhs != nullptr) computed_attrs(*rule_.rhs, attr_values_);
    for (const RootRewrite& rewrite : rule_.rewrites) computed_attrs(*rewrite.value, attr_values_);
    for (const LetBinding& let : rule_.lets) called_op_variables(*let.value, callees_);
    for (const RootRewrite& rewrite : rule_.rewrites) called_op_variables(*rewrite.value, callees_);
    emit(Instr::Kind::Accept, 0);
  }

  // Checks that regs[reg] is a call of `call`'s op (or of its composite function).
  void check_callee(const CallPattern& call, int reg) {
    if (call.composite) {
      Instr& check = emit(Instr::Kind::Composite, reg);
      check.name = &*call.composite;
      check.count = static_cast<int>(call.operands.size());
      check.index = call.rest ? 1 : 0;  // at least `count` operands
    } else {
      emit(Instr::Kind::CallOf, reg).op = call.ops[0].id;
    }
  }

  // The candidates for a later root: from the value it shares with the roots before it, up the users along the
  // hook's path (innermost call first), each a call of the op on the path. Returns the candidate's register.
  // `scope`: the names bound before the root (a group's alternatives do not see each other's).
  int open_candidates(const Pattern& root, const std::map<std::string, int>& scope) {
    std::optional<RootHook> hook = find_root_hook(root, [&](const std::string& name) {
      auto it = scope.find(name);
      return it != scope.end() && kinds_[static_cast<size_t>(it->second)] == SlotKind::Value;
    });
    int from = new_register();
    Instr& load = emit(Instr::Kind::Load, 0);
    load.dst = from;
    load.slot = scope.at(hook->variable);  // sema reports a root without a hook
    for (size_t depth = hook->path.size(); depth-- > 0;) {
      const int user = new_register();
      emit(Instr::Kind::Users, from).dst = user;
      const Pattern& step = pattern_at(root, std::span(hook->path).first(depth));
      if (const auto* call = std::get_if<CallPattern>(&step.node)) {
        check_callee(*call, user);
      } else {
        emit(Instr::Kind::TupleAtLeast, user).count = 0;  // a tuple on the way to the root
      }
      from = user;
    }
    return from;
  }

  // A root's guard; a group's sees the names as bound in the member (`index`: its scope), not as lists.
  void emit_guard(const Expr& expr, int reg, bool in_group) {
    Instr& guard = emit(Instr::Kind::Guard, reg);
    guard.guard = &expr;
    guard.index = -1;
    if (in_group) {
      guard.index = static_cast<int>(member_scopes_.size());
      member_scopes_.push_back(slots_);
    }
  }

  // A matched root's dimension expressions, compared as a guard compares dimensions.
  void emit_dimension_checks(const Pattern& pattern, int reg, bool in_group) {
    for_each_dimension_check(pattern, [&](const Expr& check) { emit_guard(check, reg, in_group); });
  }

  void check_not_root(int candidate) {
    Instr& check = emit(Instr::Kind::NotRoot, candidate);
    check.roots = root_registers_;
    for (const GroupInfo& group : groups_) check.lists.push_back(group.members);
  }

  // A later root: the first candidate with which the rest of the rule matches.
  void compile_root(const RootDecl& root, const Pattern& pattern, const MatchOrder& order) {
    const int candidate = open_candidates(pattern, slots_);
    check_not_root(candidate);
    emit(Instr::Kind::Var, candidate).slot = slot(root.name, SlotKind::Value);
    compile(pattern, candidate, /*op_known=*/true, order);
    emit_dimension_checks(pattern, candidate, /*in_group=*/false);
    if (root.guard != nullptr) emit_guard(*root.guard, candidate, /*in_group=*/false);
    root_registers_.push_back(candidate);
  }

  // A group: every candidate that matches (with the group's guard) is a member; the values first bound in the
  // member's pattern (by every alternative) become lists, one entry per member, everywhere after it. Each
  // alternative scans its candidates in turn (Group's `starts`); the members so far are no candidates again.
  void compile_group(const RootDecl& root, const std::vector<PatternPtr>& alternatives, const MatchOrder& order) {
    const int index = static_cast<int>(groups_.size());
    const size_t group_pc = program_.size();
    emit(Instr::Kind::Group, 0).index = index;
    const std::map<std::string, int> before = slots_;
    GroupInfo group;
    group.members = num_lists_++;
    groups_.push_back(group);  // its own members are not candidates again (a user listed twice)
    const int member_slot = slot(root.name, SlotKind::Value);
    std::map<std::string, size_t> bound_by;  // how many alternatives bind each new name
    for (const PatternPtr& alternative : alternatives) {
      program_[group_pc].roots.push_back(static_cast<int>(program_.size()));  // where its candidates start
      const int candidate = open_candidates(*alternative, before);
      check_not_root(candidate);
      emit(Instr::Kind::Member, candidate);
      emit(Instr::Kind::Var, candidate).slot = member_slot;
      Mentions names;
      count_mentions(*alternative, names);
      for (const auto& [name, count] : names) ++bound_by[name];
      compile(*alternative, candidate, /*op_known=*/true, order);
      emit_dimension_checks(*alternative, candidate, /*in_group=*/true);
      if (root.guard != nullptr) emit_guard(*root.guard, candidate, /*in_group=*/true);
      emit(Instr::Kind::Collect, candidate).index = index;
    }
    program_[group_pc].dst = static_cast<int>(program_.size());
    // Values, ops, attributes and dimensions first bound inside a group: each bound by every alternative becomes
    // a list.
    for (auto it = slots_.begin(); it != slots_.end();) {
      if (before.count(it->first) != 0) {
        ++it;
        continue;
      }
      const bool everywhere = it->second == member_slot || bound_by[it->first] == alternatives.size();
      const SlotKind kind = kinds_[static_cast<size_t>(it->second)];
      if ((kind != SlotKind::Value && kind != SlotKind::Attr && kind != SlotKind::Dim && kind != SlotKind::Op) ||
          !everywhere) {
        it = slots_.erase(it);
        continue;
      }
      GroupInfo& info = groups_[static_cast<size_t>(index)];
      int list = 0;
      if (kind == SlotKind::Attr) {
        list = num_attr_lists_++;
        info.collected_attrs.emplace_back(it->second, list);
      } else if (kind == SlotKind::Dim) {
        list = num_dim_lists_++;
        info.collected_dims.emplace_back(it->second, list);
      } else if (kind == SlotKind::Op) {
        list = num_op_lists_++;
        info.collected_ops.emplace_back(it->second, list);
      } else {
        list = it->second == member_slot ? group.members : num_lists_++;
        info.collected.emplace_back(it->second, list);
      }
      const int list_slot = static_cast<int>(kinds_.size());
      kinds_.push_back(kind == SlotKind::Attr  ? SlotKind::AttrList
                       : kind == SlotKind::Dim ? SlotKind::DimList
                       : kind == SlotKind::Op  ? SlotKind::OpList
                                               : SlotKind::List);
      list_slots_.emplace_back(list_slot, list);
      it->second = list_slot;
      ++it;
    }
  }

  // Partition inputs: the nodes the input leaves matched.
  bool partition() {
    std::vector<Node*> inputs;
    for (const auto& [reg, first] : input_registers_) {
      Node* node = regs_[static_cast<size_t>(reg)];
      if (first < 0) {
        inputs.push_back(node);
      } else {
        const std::span<Node* const> rest = node->operands().subspan(static_cast<size_t>(first));
        inputs.insert(inputs.end(), rest.begin(), rest.end());
      }
    }
    return rewriter_->partition(rule_.name, regs_[0], inputs) != nullptr;
  }

  // After a multi-root rule has matched, a right-hand side that does not build declines the rule (the roots'
  // candidates are not tried further: the graph may have gained users while building).
  bool replace_roots() {
    for (const LetBinding& let : rule_.lets) {
      Node* value = build(*let.value, nullptr);
      if (value == nullptr) return false;
      bind_let(let, value);
    }
    std::vector<std::pair<Node*, Node*>> replacements;
    for (const RootRewrite& rewrite : rule_.rewrites) {
      Node* value = build(*rewrite.value, nullptr);
      if (value == nullptr) return false;
      const Binding& root = variable(rewrite.root);
      if (kind_of(rewrite.root) != SlotKind::List) {
        replacements.emplace_back(root.node, value);
        continue;
      }
      // A group's members take the fields of the tuple that replaces the group, one each.
      const std::vector<Node*>& members = lists_[static_cast<size_t>(root.list)];
      if (!value->type()->is_tuple() || value->type()->fields().size() != members.size()) return false;
      for (size_t i = 0; i < members.size(); ++i) {
        Node* item = rewriter_->item(value, static_cast<int64_t>(i));
        if (item == nullptr) return false;
        replacements.emplace_back(members[i], item);
      }
    }
    return rewriter_->replace_all(replacements);
  }

  // The end of the match: true stops the search (fired_ says whether the rule rewrote); false backtracks to the
  // latest choice point, as the generated code's `continue`.
  bool accept() {
    if (rule_.guard != nullptr) {
      std::optional<Computed> guard = compute(*rule_.guard);
      if (!guard || !std::get<bool>(*guard)) return false;
    }
    for (const Expr* value : attr_values_) {
      if (!compute(*value)) return false;
    }
    for (const std::string& callee : callees_) {
      if (kind_of(callee) == SlotKind::OpList && !common_op(callee)) return false;
    }
    switch (rule_.kind) {
      case Rule::Kind::Partition:
        fired_ = partition();
        return fired_;
      case Rule::Kind::MultiRoot:
        fired_ = replace_roots();
        return true;
      case Rule::Kind::Rewrite:
        break;
    }
    for (const LetBinding& let : rule_.lets) {
      Node* value = build(*let.value, nullptr);
      if (value == nullptr) return false;
      bind_let(let, value);
    }
    Node* replacement = build(*rule_.rhs, nullptr);
    fired_ = replacement != nullptr && rewriter_->replace(regs_[0], replacement);
    return fired_;
  }

  void bind_let(const LetBinding& let, Node* value) {
    Binding& var = vars_[static_cast<size_t>(slots_.at(let.name))];
    var.node = value;
    var.bound = true;
  }

  // --- the match program, in the emitter's order ---

  int new_register() { return num_registers_++; }

  int slot(const std::string& name, SlotKind kind) {
    auto [it, fresh] = slots_.emplace(name, static_cast<int>(kinds_.size()));
    if (fresh) kinds_.push_back(kind);
    return it->second;
  }

  Instr& emit(Instr::Kind kind, int reg) {
    program_.push_back(Instr{});
    program_.back().kind = kind;
    program_.back().reg = reg;
    return program_.back();
  }

  // A register holding operand `index` of `reg` (picked by `loop`'s order when it is not -1).
  int operand(int reg, size_t index, int loop) {
    int dst = new_register();
    Instr& load = emit(Instr::Kind::Operand, reg);
    load.dst = dst;
    load.index = static_cast<int>(index);
    load.loop = loop;
    return dst;
  }

  void compile(const Pattern& pattern, int reg, bool op_known, const MatchOrder& order) {
    leaf_registers_[&pattern] = reg;  // what a partition's input leaf matched
    std::visit(Overloaded{
                   [](const WildcardPattern&) {},
                   [&](const VarPattern& p) { emit(Instr::Kind::Var, reg).slot = slot(p.name, SlotKind::Value); },
                   [&](const BindPattern& p) {
                     emit(Instr::Kind::Var, reg).slot = slot(p.name, SlotKind::Value);
                     compile(*p.inner, reg, op_known, order);
                   },
                   [&](const ConstPattern& p) { emit(Instr::Kind::Const, reg).constant = &p; },
                   [&](const TypePattern& p) { compile_type(p, reg); },
                   [&](const ParamPattern& p) { emit(Instr::Kind::Param, reg).name = p.name ? &*p.name : nullptr; },
                   [&](const ItemPattern& p) {
                     emit(Instr::Kind::Item, reg).index = p.index ? static_cast<int>(*p.index) : -1;
                     compile(*p.tuple, operand(reg, 0, -1), false, order);
                   },
                   [&](const TuplePattern& p) {
                     emit(p.rest ? Instr::Kind::TupleAtLeast : Instr::Kind::Tuple, reg).count =
                         static_cast<int>(p.fields.size());
                     if (p.rest) compile_rest(*p.rest, reg, p.fields.size());
                     for (size_t i = 0; i < p.fields.size(); ++i) {
                       compile(*p.fields[i], operand(reg, i, -1), false, order);
                     }
                   },
                   [&](const CallPattern& p) { compile_call(p, reg, op_known, order); },
                   [&](const DominatorPattern& p) {
                     compile(*p.child, reg, op_known, order);
                     const int parent = new_register();
                     Instr& walk = emit(Instr::Kind::Dominator, reg);
                     walk.dst = parent;
                     walk.dominator = &p;
                     walk.op = root_call(*p.parent).ops[0].id;
                     compile(*p.parent, parent, /*op_known=*/true, order);  // the walk stops at calls of that op
                   },
                   [](const AltPattern&) {},  // expanded into separate alternatives
               },
               pattern.node);
  }

  // A type pattern's checks at `reg`, or a call's result type; each dimension variable gets its slot.
  void compile_type(const TypePattern& type, int reg) {
    Instr& check = emit(Instr::Kind::Type, reg);
    check.type = &type;
    if (!type.shape) return;
    for (const DimPattern& dim : *type.shape) {
      check.dims.push_back(dim.binds() ? slot(dim.name, SlotKind::Dim) : -1);
    }
  }

  // `xs...` from operand `first` on; `...` binds nothing.
  void compile_rest(const RestPattern& rest, int reg, size_t first) {
    rest_registers_[&rest] = reg;
    if (rest.name.empty()) return;
    const int list = num_lists_++;
    const int list_slot = slot(rest.name, SlotKind::List);
    list_slots_.emplace_back(list_slot, list);
    Instr& bind = emit(Instr::Kind::Rest, reg);
    bind.slot = list_slot;
    bind.index = list;
    bind.count = static_cast<int>(first);
  }

  void compile_call(const CallPattern& call, int reg, bool op_known, const MatchOrder& order) {
    if (call.composite) {  // checked whole even at the root, as the emitter does; no operand-order choice
      check_callee(call, reg);
      if (call.rest) compile_rest(*call.rest, reg, call.operands.size());
      if (call.result_type) compile_type(*call.result_type, reg);
      for (size_t i : order.operand_order(call)) compile(*call.operands[i], operand(reg, i, -1), false, order);
      return;
    }
    const OpInfo& info = registry_.get(call.ops[0].id);
    if (!op_known) emit(Instr::Kind::CallOf, reg).op = info.id;
    if (info.min_operands != info.max_operands) {
      emit(call.rest ? Instr::Kind::AtLeast : Instr::Kind::Arity, reg).count = static_cast<int>(call.operands.size());
    }
    if (call.rest) compile_rest(*call.rest, reg, call.operands.size());
    if (!call.op_var.empty()) emit(Instr::Kind::OpVar, reg).slot = slot(call.op_var, SlotKind::Op);
    for (const PatternAttr& attr : call.attrs) {
      if (attr.literal) {
        Instr& check = emit(Instr::Kind::AttrLiteral, reg);
        check.index = info.attr_index(attr.name);
        check.literal = &*attr.literal;
      } else {
        Instr& check = emit(Instr::Kind::AttrVar, reg);
        check.index = info.attr_index(attr.name);
        check.slot = slot(attr.capture, SlotKind::Attr);
      }
    }
    if (call.result_type) compile_type(*call.result_type, reg);
    int loop = -1;
    if (order.needs_both_orders(call)) {
      loop = num_loops_++;
      emit(Instr::Kind::Loop, reg).loop = loop;
    }
    for (size_t i : order.operand_order(call)) compile(*call.operands[i], operand(reg, i, loop), false, order);
  }

  // --- running it ---

  void bind(int slot) {
    vars_[static_cast<size_t>(slot)].bound = true;
    trail_.push_back(slot);
  }

  void unbind_to(size_t mark) {
    while (trail_.size() > mark) {
      vars_[static_cast<size_t>(trail_.back())].bound = false;
      trail_.pop_back();
    }
  }

  // Runs the program from `pc`; true stops the search (Accept decided, or a group member was collected), false
  // backtracks to the latest choice point.
  bool run(size_t pc) {
    for (; pc < program_.size(); ++pc) {
      const Instr& instr = program_[pc];
      switch (instr.kind) {
        case Instr::Kind::Loop:
          for (int order = 0; order < 2; ++order) {
            orders_[static_cast<size_t>(instr.loop)] = order;
            const size_t mark = trail_.size();
            if (run(pc + 1)) return true;
            unbind_to(mark);
          }
          return false;
        case Instr::Kind::Users: {
          // By index: a user list may grow while a right-hand side that then declines is built.
          const Node* from = regs_[static_cast<size_t>(instr.reg)];
          for (size_t i = 0; i < from->num_users(); ++i) {
            regs_[static_cast<size_t>(instr.dst)] = from->users()[i];
            const size_t mark = trail_.size();
            if (run(pc + 1)) return true;
            unbind_to(mark);
          }
          return false;
        }
        case Instr::Kind::Group: {
          const GroupInfo& group = groups_[static_cast<size_t>(instr.index)];
          for (const auto& [slot, list] : group.collected) lists_[static_cast<size_t>(list)].clear();
          for (const auto& [slot, list] : group.collected_attrs) attr_lists_[static_cast<size_t>(list)].clear();
          for (const auto& [slot, list] : group.collected_dims) dim_lists_[static_cast<size_t>(list)].clear();
          for (const auto& [slot, list] : group.collected_ops) op_lists_[static_cast<size_t>(list)].clear();
          // Each alternative's candidates, each ending in Member.
          for (int start : instr.roots) run(static_cast<size_t>(start));
          if (lists_[static_cast<size_t>(group.members)].size() < 2) return false;
          pc = static_cast<size_t>(instr.dst) - 1;
          break;
        }
        case Instr::Kind::Member: {
          const size_t mark = trail_.size();
          run(pc + 1);  // the member program, ending in Collect when it matches
          unbind_to(mark);
          return false;  // the next candidate
        }
        case Instr::Kind::Collect: {
          const GroupInfo& group = groups_[static_cast<size_t>(instr.index)];
          for (const auto& [slot, list] : group.collected) {
            lists_[static_cast<size_t>(list)].push_back(vars_[static_cast<size_t>(slot)].node);
          }
          for (const auto& [slot, list] : group.collected_attrs) {
            attr_lists_[static_cast<size_t>(list)].push_back(*vars_[static_cast<size_t>(slot)].attr);
          }
          for (const auto& [slot, list] : group.collected_dims) {
            dim_lists_[static_cast<size_t>(list)].push_back(vars_[static_cast<size_t>(slot)].dim);
          }
          for (const auto& [slot, list] : group.collected_ops) {
            op_lists_[static_cast<size_t>(list)].push_back(vars_[static_cast<size_t>(slot)].op);
          }
          return true;
        }
        case Instr::Kind::Accept:
          return accept();
        default:
          if (!check(instr)) return false;
      }
    }
    return false;  // not reached: every program ends in Accept
  }

  bool check(const Instr& instr) {
    Node* node = regs_[static_cast<size_t>(instr.reg)];
    switch (instr.kind) {
      case Instr::Kind::Loop:
        return true;
      case Instr::Kind::Operand: {
        size_t index = static_cast<size_t>(instr.index);
        if (instr.loop >= 0) {
          const size_t order = static_cast<size_t>(orders_[static_cast<size_t>(instr.loop)]);
          index = index == 0 ? order : 1 - order;
        }
        regs_[static_cast<size_t>(instr.dst)] = node->operand(index);
        return true;
      }
      case Instr::Kind::CallOf:
        return node->is_call_of(instr.op);
      case Instr::Kind::Arity:
        return node->num_operands() == static_cast<size_t>(instr.count);
      case Instr::Kind::OpVar: {
        Binding& var = vars_[static_cast<size_t>(instr.slot)];
        if (var.bound) return node->op() == var.op;
        var.op = node->op();
        bind(instr.slot);
        return true;
      }
      case Instr::Kind::AttrLiteral:
        return attr_equal(node->attr(static_cast<size_t>(instr.index)), *instr.literal);
      case Instr::Kind::AttrVar: {
        Binding& var = vars_[static_cast<size_t>(instr.slot)];
        const AttrValue& value = node->attr(static_cast<size_t>(instr.index));
        if (var.bound) return attr_equal(value, *var.attr);
        var.attr = &value;
        bind(instr.slot);
        return true;
      }
      case Instr::Kind::Var: {
        Binding& var = vars_[static_cast<size_t>(instr.slot)];
        if (var.bound) return node == var.node;
        var.node = node;
        bind(instr.slot);
        return true;
      }
      case Instr::Kind::Const:
        return check_const(*instr.constant, node);
      case Instr::Kind::Type:
        return check_type(instr, node);
      case Instr::Kind::Param:
        return node->kind() == NodeKind::Param && (instr.name == nullptr || node->name() == *instr.name);
      case Instr::Kind::Item:
        return node->kind() == NodeKind::TupleItem && (instr.index < 0 || node->index() == instr.index);
      case Instr::Kind::Tuple:
        return node->kind() == NodeKind::Tuple && node->num_operands() == static_cast<size_t>(instr.count);
      case Instr::Kind::AtLeast:
        return node->num_operands() >= static_cast<size_t>(instr.count);
      case Instr::Kind::TupleAtLeast:
        return node->kind() == NodeKind::Tuple && node->num_operands() >= static_cast<size_t>(instr.count);
      case Instr::Kind::Rest: {
        std::vector<Node*>& list = lists_[static_cast<size_t>(instr.index)];
        list.assign(node->operands().begin() + instr.count, node->operands().end());
        bind(instr.slot);
        return true;
      }
      case Instr::Kind::Dominator: {
        const std::span<const OpId> path = instr.dominator->path_ops;
        const OpId head = instr.op;
        Node* parent = find_dominated_parent(
            rewriter_->function(), node, [&](const Node* reached) { return reached->is_call_of(head); },
            [&](const Node* reached) { return is_call_of_any(reached, path); });
        regs_[static_cast<size_t>(instr.dst)] = parent;
        return parent != nullptr;
      }
      case Instr::Kind::Composite:
        return node->kind() == NodeKind::FuncCall &&
               (instr.index == 1 ? node->num_operands() >= static_cast<size_t>(instr.count)
                                 : node->num_operands() == static_cast<size_t>(instr.count)) &&
               rewriter_->composite_of(node) == *instr.name;
      case Instr::Kind::Load:
        regs_[static_cast<size_t>(instr.dst)] = vars_[static_cast<size_t>(instr.slot)].node;
        return true;
      case Instr::Kind::NotRoot:
        return not_root(instr, node);
      case Instr::Kind::Guard: {
        if (instr.index >= 0) scope_ = &member_scopes_[static_cast<size_t>(instr.index)];
        std::optional<Computed> guard = compute(*instr.guard);
        scope_ = &slots_;
        return guard && std::get<bool>(*guard);
      }
      case Instr::Kind::Users:  // run() takes these
      case Instr::Kind::Group:
      case Instr::Kind::Member:
      case Instr::Kind::Collect:
      case Instr::Kind::Accept:
        return false;
    }
    return false;
  }

  bool not_root(const Instr& instr, const Node* node) const {
    for (int reg : instr.roots) {
      if (node == regs_[static_cast<size_t>(reg)]) return false;
    }
    for (int list : instr.lists) {
      const std::vector<Node*>& members = lists_[static_cast<size_t>(list)];
      if (std::find(members.begin(), members.end(), node) != members.end()) return false;
    }
    return true;
  }

  // `const(2)` matches integer and float constants of value 2; `const(2.0)` float ones only (unless a dtype is
  // written, which decides alone).
  static bool check_const(const ConstPattern& constant, const Node* node) {
    if (node->kind() != NodeKind::Constant) return false;
    if (constant.value) {
      if (!node->is_scalar_constant() || node->scalar_value() != *constant.value) return false;
      if (!constant.integer_value && !constant.dtype && !is_float(node->constant_dtype())) return false;
    }
    return !constant.dtype || node->constant_dtype() == *constant.dtype;
  }

  bool check_type(const Instr& instr, const Node* node) {
    const TypePattern& pattern = *instr.type;
    TypeRef type = node->type();
    if (!type->is_tensor()) return false;
    if (pattern.dtype && type->dtype() != *pattern.dtype) return false;
    if (!pattern.shape) return true;
    if (type->rank() != static_cast<int>(pattern.shape->size())) return false;
    bool reads_dims = false;
    for (const DimPattern& dim : *pattern.shape) reads_dims = reads_dims || dim.kind != DimPattern::Kind::Any;
    if (!reads_dims) return true;
    if (!type->has_shape()) return false;
    for (size_t i = 0; i < pattern.shape->size(); ++i) {
      const DimPattern& dim = (*pattern.shape)[i];
      const Dim actual = type->dims()[i];
      if (dim.kind == DimPattern::Kind::Fixed && actual != Dim::fixed(dim.extent)) return false;
      if (!dim.binds()) continue;
      Binding& var = vars_[static_cast<size_t>(instr.dims[i])];
      if (var.bound) {
        if (actual != var.dim) return false;
      } else {
        var.dim = actual;
        bind(instr.dims[i]);
      }
    }
    return true;
  }

  // --- guard and right-hand side ---

  const Binding& variable(const std::string& name) const { return vars_[static_cast<size_t>(scope_->at(name))]; }
  SlotKind kind_of(const std::string& name) const { return kinds_[static_cast<size_t>(scope_->at(name))]; }

  static std::optional<double> number(const AttrValue& value) {
    if (const auto* i = std::get_if<int64_t>(&value)) return static_cast<double>(*i);
    if (const auto* d = std::get_if<double>(&value)) return *d;
    return std::nullopt;
  }

  // A guard-like expression; nullopt when a property it reads is not known (the rule declines), as the generated
  // code checks every property an expression reads before it evaluates the expression.
  std::optional<Computed> compute(const Expr& expr) {
    if (expr.op_literal) return Computed(OpRef{*expr.op_literal});
    return std::visit(
        Overloaded{
            [&](const LiteralExpr& e) -> std::optional<Computed> { return literal(e.value); },
            [&](const VarExpr& e) { return name(e, expr); },
            [&](const MemberExpr& e) { return property(e); },
            [&](const IndexExpr& e) { return shape_dim(e); },
            [&](const UnaryExpr& e) -> std::optional<Computed> {
              std::optional<Computed> operand = compute(*e.operand);
              if (!operand) return std::nullopt;
              if (e.op == UnaryOp::Negate) return Computed(-std::get<double>(*operand));
              return Computed(!std::get<bool>(*operand));
            },
            [&](const BinaryExpr& e) { return expr.compares_dimensions ? dims_comparison(e) : binary(e); },
            [&](const CallExpr& e) { return e.native != nullptr ? call_predicate(e) : split_points(e); },
            [](const auto&) -> std::optional<Computed> { return std::nullopt; },  // rejected before
        },
        expr.node);
  }

  // An extern predicate on matched values (sema: names bound on the left).
  std::optional<Computed> call_predicate(const CallExpr& call) {
    if (skip_predicates_) return Computed(false);  // its value does not count (binary())
    std::vector<Node*> operands;
    for (const ExprPtr& operand : call.operands) {
      operands.push_back(variable(std::get<VarExpr>(operand->node).name).node);
    }
    return Computed(natives_.at(call.native)->predicate(operands));
  }

  // An extern rewriter builds the replacement itself from the built operands; nullptr declines the rule.
  Node* build_native(const CallExpr& call) {
    std::vector<Node*> operands;
    for (const ExprPtr& operand : call.operands) {
      operands.push_back(build(*operand, nullptr));
      if (operands.back() == nullptr) return nullptr;
    }
    return natives_.at(call.native)->rewriter(*rewriter_, operands);
  }

  // `split_indices(ws.shape[1])` or `split_indices(a, b, c)`: the running sums of the sizes without the total.
  std::optional<Computed> split_points(const CallExpr& call) {
    IntList sizes;
    if (call.operands.size() == 1 && call.operands[0]->type == ExprType::NumberList) {
      std::optional<Computed> list = compute(*call.operands[0]);
      if (!list) return std::nullopt;
      sizes = std::get<IntList>(*list);
    } else {
      for (const ExprPtr& operand : call.operands) {
        std::optional<Computed> size = compute(*operand);
        if (!size) return std::nullopt;
        sizes.push_back(static_cast<int64_t>(std::get<double>(*size)));
      }
    }
    return Computed(std::in_place_type<IntList>, split_indices(sizes));
  }

  const std::vector<Node*>& list_of(const std::string& name) const {
    return lists_[static_cast<size_t>(variable(name).list)];
  }
  const std::vector<AttrValue>& attr_list_of(const std::string& name) const {
    return attr_lists_[static_cast<size_t>(variable(name).list)];
  }

  // A group's op list as a callee: the members' common op; nullopt when they differ.
  std::optional<OpId> common_op(const std::string& name) const {
    const std::vector<OpId>& members = op_lists_[static_cast<size_t>(variable(name).list)];
    if (std::adjacent_find(members.begin(), members.end(), std::not_equal_to<>()) != members.end()) {
      return std::nullopt;
    }
    return members[0];
  }

  static Computed literal(const AttrValue& value) {
    if (const auto* i = std::get_if<int64_t>(&value)) return static_cast<double>(*i);
    if (const auto* d = std::get_if<double>(&value)) return *d;
    if (const auto* b = std::get_if<bool>(&value)) return *b;
    if (const auto* s = std::get_if<std::string>(&value)) return Computed(std::in_place_type<std::string>, *s);
    return Computed(std::in_place_type<AttrValue>, value);
  }

  std::optional<Computed> name(const VarExpr& var, const Expr& expr) {
    if (expr.dtype_literal) return Computed(*expr.dtype_literal);
    const Binding& bound = variable(var.name);
    switch (kind_of(var.name)) {
      case SlotKind::Dim:  // a dimension read as a number must be static
        if (!bound.dim.is_static()) return std::nullopt;
        return Computed(static_cast<double>(bound.dim.extent()));
      case SlotKind::Value:
      case SlotKind::Let:
        return Computed(bound.node);
      case SlotKind::Op:
        return Computed(OpRef{bound.op});
      case SlotKind::List:  // read through .count and .shape[i], compared as a whole (binary())
      case SlotKind::OpList:  // a callee only
        return std::nullopt;
      case SlotKind::DimList: {  // read as numbers: every member's extent, all static or the rule fails
        IntList extents;
        for (const Dim& dim : dim_lists_[static_cast<size_t>(bound.list)]) {
          if (!dim.is_static()) return std::nullopt;
          extents.push_back(dim.extent());
        }
        return Computed(std::in_place_type<IntList>, std::move(extents));
      }
      case SlotKind::AttrList: {  // as an attribute value: the members' common value, or the rule fails
        const std::vector<AttrValue>& members = attr_list_of(var.name);
        if (std::adjacent_find(members.begin(), members.end(), std::not_equal_to<>()) != members.end()) {
          return std::nullopt;
        }
        return Computed(std::in_place_type<AttrValue>, members[0]);
      }
      case SlotKind::Attr:
        break;
    }
    const AttrValue& value = *bound.attr;
    switch (expr.type) {
      case ExprType::Number:
        if (std::optional<double> n = number(value)) return Computed(*n);
        return std::nullopt;
      case ExprType::Bool:
        return Computed(std::get<bool>(value));
      case ExprType::String:
        return Computed(std::in_place_type<std::string>, std::get<std::string>(value));
      case ExprType::IntList:
        return Computed(std::in_place_type<IntList>, std::get<IntList>(value));
      default:
        return Computed(std::in_place_type<AttrValue>, value);
    }
  }

  std::optional<Computed> property(const MemberExpr& member) {
    const std::string& name = std::get<VarExpr>(member.object->node).name;
    if (member.member == "count") return Computed(static_cast<double>(list_of(name).size()));
    const Node* node = variable(name).node;
    if (member.member == "dtype") return Computed(node->type()->dtype());
    if (member.member == "uses") return Computed(static_cast<double>(node->num_users()));
    if (member.member == "rank") {
      if (node->type()->rank() < 0) return std::nullopt;
      return Computed(static_cast<double>(node->type()->rank()));
    }
    // value
    if (!node->is_scalar_constant()) return std::nullopt;
    return Computed(node->scalar_value());
  }

  // `x.shape[i]`: a number; over a group's list, one per member (every member must have that static dimension).
  std::optional<Computed> shape_dim(const IndexExpr& index) {
    const auto& member = std::get<MemberExpr>(index.object->node);
    const std::string& name = std::get<VarExpr>(member.object->node).name;
    const int64_t position = std::get<int64_t>(std::get<LiteralExpr>(index.index->node).value);
    if (kind_of(name) != SlotKind::List) {
      std::optional<int64_t> extent = static_extent(variable(name).node, position);
      if (!extent) return std::nullopt;
      return Computed(static_cast<double>(*extent));
    }
    IntList extents;
    for (const Node* node : list_of(name)) {
      std::optional<int64_t> extent = static_extent(node, position);
      if (!extent) return std::nullopt;
      extents.push_back(*extent);
    }
    return Computed(std::in_place_type<IntList>, std::move(extents));
  }

  // `x.shape[i]`: nullopt when the type has no such dimension.
  static std::optional<Dim> dim_at(const Node* node, int64_t position) {
    TypeRef type = node->type();
    // A negative position counts from the end, as in Python.
    const int64_t needed_rank = position >= 0 ? position + 1 : -position;
    if (!type->has_shape() || type->rank() < needed_rank) return std::nullopt;
    return type->dims()[static_cast<size_t>(position >= 0 ? position : type->rank() + position)];
  }

  static std::optional<int64_t> static_extent(const Node* node, int64_t position) {
    const std::optional<Dim> dim = dim_at(node, position);
    if (!dim || !dim->is_static()) return std::nullopt;
    return dim->extent();
  }

  // `==`/`!=` between dimensions (Expr::compares_dimensions): decided for every value of the symbols, or unknown
  // (the rule declines), as the generated guard does.
  std::optional<Computed> dims_comparison(const BinaryExpr& binary) const {
    const std::optional<bool> equal = dims_equal(dim_value(*binary.lhs), dim_value(*binary.rhs));
    if (!equal) return std::nullopt;
    return Computed(binary.op == BinaryOp::Equal ? *equal : !*equal);
  }

  // A side of a dimension comparison.
  DimValue dim_value(const Expr& expr) const {
    return std::visit(
        Overloaded{
            [](const LiteralExpr& e) { return DimValue(std::get<int64_t>(e.value)); },
            [&](const VarExpr& e) { return DimValue(variable(e.name).dim); },
            [&](const IndexExpr& e) {
              const auto& member = std::get<MemberExpr>(e.object->node);
              const std::optional<Dim> dim = dim_at(variable(std::get<VarExpr>(member.object->node).name).node,
                                                    std::get<int64_t>(std::get<LiteralExpr>(e.index->node).value));
              return dim ? DimValue(*dim) : DimValue::none();
            },
            [&](const BinaryExpr& e) {
              const DimValue lhs = dim_value(*e.lhs);
              const DimValue rhs = dim_value(*e.rhs);
              if (e.op == BinaryOp::Add) return lhs + rhs;
              return e.op == BinaryOp::Subtract ? lhs - rhs : lhs * rhs;
            },
            [](const auto&) { return DimValue::none(); },  // not dimension arithmetic (sema)
        },
        expr.node);
  }

  // A side of an equality between whole attribute values: a capture as it is, a literal as written.
  AttrValue whole_attr(const Expr& side) const {
    if (const auto* literal = std::get_if<LiteralExpr>(&side.node)) return literal->value;
    return *variable(std::get<VarExpr>(side.node).name).attr;
  }

  static std::string_view text(const Computed& value) {
    if (const auto* dtype = std::get_if<DType>(&value)) return dtype_name(*dtype);
    return std::get<std::string>(value);
  }

  std::optional<Computed> binary(const BinaryExpr& binary) {
    const bool equality = binary.op == BinaryOp::Equal || binary.op == BinaryOp::NotEqual;
    auto result = [&](bool equal) { return Computed(binary.op == BinaryOp::Equal ? equal : !equal); };
    if (equality && (binary.lhs->type == ExprType::AttrList || binary.rhs->type == ExprType::AttrList)) {
      // Against a literal or a single capture: for every member; two attribute lists compare as wholes.
      const bool list_left = binary.lhs->type == ExprType::AttrList;
      const Expr& list_side = list_left ? *binary.lhs : *binary.rhs;
      const std::vector<AttrValue>& list = attr_list_of(std::get<VarExpr>(list_side.node).name);
      const Expr& other = list_left ? *binary.rhs : *binary.lhs;
      if (other.type == ExprType::AttrList) return result(list == attr_list_of(std::get<VarExpr>(other.node).name));
      const AttrValue value = whole_attr(other);
      return Computed(std::all_of(list.begin(), list.end(), [&](const AttrValue& member) {
        return binary.op == BinaryOp::Equal ? member == value : member != value;
      }));
    }
    if (binary.lhs->type == ExprType::NumberList || binary.rhs->type == ExprType::NumberList) {
      return number_list_comparison(binary);
    }
    if (binary.lhs->type == ExprType::ValueList || binary.rhs->type == ExprType::ValueList) {
      return value_list_equality(binary);
    }
    if (equality && (binary.lhs->type == ExprType::Attr || binary.rhs->type == ExprType::Attr ||
                     (binary.lhs->type == binary.rhs->type && binary.lhs->type == ExprType::IntList))) {
      return result(whole_attr(*binary.lhs) == whole_attr(*binary.rhs));
    }
    // Both sides are computed (and their properties checked) whatever the operator: `&&` and `||` too. Only an
    // extern predicate on the side that does not count is not called, as the compiled guard's C++ `&&` and `||`
    // skip it (a native may assume what the other side checked).
    std::optional<Computed> lhs = compute(*binary.lhs);
    const bool decided = lhs && ((binary.op == BinaryOp::And && !std::get<bool>(*lhs)) ||
                                 (binary.op == BinaryOp::Or && std::get<bool>(*lhs)));
    const bool skipped_before = skip_predicates_;
    skip_predicates_ = skip_predicates_ || decided;
    std::optional<Computed> rhs = compute(*binary.rhs);
    skip_predicates_ = skipped_before;
    if (!lhs || !rhs) return std::nullopt;
    if (equality && binary.lhs->type != binary.rhs->type) return result(text(*lhs) == text(*rhs));
    if (equality) return result(*lhs == *rhs);
    switch (binary.op) {
      case BinaryOp::And:
        return Computed(std::get<bool>(*lhs) && std::get<bool>(*rhs));
      case BinaryOp::Or:
        return Computed(std::get<bool>(*lhs) || std::get<bool>(*rhs));
      default:
        break;
    }
    const double a = std::get<double>(*lhs);
    const double b = std::get<double>(*rhs);
    switch (binary.op) {
      case BinaryOp::Add:
        return Computed(a + b);
      case BinaryOp::Subtract:
        return Computed(a - b);
      case BinaryOp::Multiply:
        return Computed(a * b);
      case BinaryOp::Divide:
        return Computed(a / b);
      case BinaryOp::Less:
      case BinaryOp::LessEqual:
      case BinaryOp::Greater:
      case BinaryOp::GreaterEqual:
        return Computed(compare(binary.op, a, b));
      default:
        return std::nullopt;
    }
  }

  // A list of graph values against one value: every member is that node (`==`), none is (`!=`); two lists: as
  // wholes, the same nodes in the same order.
  std::optional<Computed> value_list_equality(const BinaryExpr& binary) {
    const bool equal = binary.op == BinaryOp::Equal;
    if (binary.lhs->type == binary.rhs->type) {
      const std::vector<Node*>& a = list_of(std::get<VarExpr>(binary.lhs->node).name);
      const std::vector<Node*>& b = list_of(std::get<VarExpr>(binary.rhs->node).name);
      return Computed((a == b) == equal);
    }
    const bool list_left = binary.lhs->type == ExprType::ValueList;
    const std::vector<Node*>& list = list_of(std::get<VarExpr>((list_left ? binary.lhs : binary.rhs)->node).name);
    std::optional<Computed> other = compute(list_left ? *binary.rhs : *binary.lhs);
    if (!other) return std::nullopt;
    const Node* value = std::get<Node*>(*other);
    return Computed(std::all_of(list.begin(), list.end(), [&](const Node* member) { return (member == value) == equal; }));
  }

  // A list of numbers against a number: for every member; two lists (== and != only): as wholes.
  std::optional<Computed> number_list_comparison(const BinaryExpr& binary) {
    std::optional<Computed> lhs = compute(*binary.lhs);
    std::optional<Computed> rhs = compute(*binary.rhs);
    if (!lhs || !rhs) return std::nullopt;
    if (binary.lhs->type == binary.rhs->type) {
      const bool equal = std::get<IntList>(*lhs) == std::get<IntList>(*rhs);
      return Computed(binary.op == BinaryOp::Equal ? equal : !equal);
    }
    const bool list_left = binary.lhs->type == ExprType::NumberList;
    const IntList& list = std::get<IntList>(list_left ? *lhs : *rhs);
    const double number = std::get<double>(list_left ? *rhs : *lhs);
    return Computed(std::all_of(list.begin(), list.end(), [&](int64_t member) {
      const double a = list_left ? static_cast<double>(member) : number;
      const double b = list_left ? number : static_cast<double>(member);
      return compare(binary.op, a, b);
    }));
  }

  static bool compare(BinaryOp op, double a, double b) {
    switch (op) {
      case BinaryOp::Equal:
        return a == b;
      case BinaryOp::NotEqual:
        return a != b;
      case BinaryOp::Less:
        return a < b;
      case BinaryOp::LessEqual:
        return a <= b;
      case BinaryOp::Greater:
        return a > b;
      default:
        return a >= b;
    }
  }

  // Builds `expr`; nullptr when a node cannot be built (type inference failed), which declines the rule.
  // `sibling` is a value built next to it (the dtype of constants).
  Node* build(const Expr& expr, Node* sibling) {
    return std::visit(Overloaded{
                          [&](const VarExpr& e) {
                            // A list as an operand: the tuple of its values (concat's operand).
                            if (kind_of(e.name) == SlotKind::List) return rewriter_->tuple(list_of(e.name));
                            return variable(e.name).node;
                          },
                          [&](const ConstExpr& e) {
                            DType dtype = e.dtype ? *e.dtype
                                          : sibling != nullptr ? first_known_dtype({sibling, regs_[0]})
                                                               : first_known_dtype({regs_[0]});
                            if (e.computed == nullptr) return rewriter_->scalar(e.value, dtype);
                            std::optional<Computed> value = compute(*e.computed);  // known: accept() checked
                            const double* number = value ? std::get_if<double>(&*value) : nullptr;
                            return number == nullptr ? nullptr : rewriter_->scalar(*number, dtype);
                          },
                          [&](const CallExpr& e) { return e.native != nullptr ? build_native(e) : build_call(e); },
                          [&](const ItemExpr& e) -> Node* {
                            Node* tuple = build(*e.tuple, nullptr);
                            return tuple == nullptr ? nullptr : rewriter_->item(tuple, e.index);
                          },
                          [&](const TupleExpr& e) -> Node* {
                            std::vector<Node*> fields;
                            for (const ExprPtr& field : e.fields) {
                              if (const auto* spread = std::get_if<SpreadExpr>(&field->node)) {
                                const std::vector<Node*>& values = list_of(spread->name);
                                fields.insert(fields.end(), values.begin(), values.end());
                                continue;
                              }
                              fields.push_back(build(*field, nullptr));
                              if (fields.back() == nullptr) return nullptr;
                            }
                            return rewriter_->tuple(fields);
                          },
                          [](const auto&) -> Node* { return nullptr; },  // sema rejects anything else
                      },
                      expr.node);
  }

  // `built` (one node per written operand) with each spread `xs...` replaced by the values of xs.
  std::vector<Node*> spread_lists(const std::vector<ExprPtr>& written, std::vector<Node*> built) const {
    auto is_spread = [](const ExprPtr& operand) { return std::holds_alternative<SpreadExpr>(operand->node); };
    if (std::none_of(written.begin(), written.end(), is_spread)) return built;
    std::vector<Node*> operands;
    for (size_t i = 0; i < written.size(); ++i) {
      if (const auto* spread = std::get_if<SpreadExpr>(&written[i]->node)) {
        const std::vector<Node*>& values = list_of(spread->name);
        operands.insert(operands.end(), values.begin(), values.end());
      } else {
        operands.push_back(built[i]);
      }
    }
    return operands;
  }

  Node* build_call(const CallExpr& call) {
    // Operands other than constants first, so that a constant can take its dtype from one of them.
    // A spread `xs...` builds nothing and is no constant's sibling; its values take its place at the end.
    std::vector<Node*> operands(call.operands.size(), nullptr);
    Node* sibling = nullptr;
    for (size_t i = 0; i < call.operands.size(); ++i) {
      if (std::holds_alternative<ConstExpr>(call.operands[i]->node)) continue;
      if (std::holds_alternative<SpreadExpr>(call.operands[i]->node)) continue;
      operands[i] = build(*call.operands[i], nullptr);
      if (operands[i] == nullptr) return nullptr;
      if (sibling == nullptr) sibling = operands[i];
    }
    for (size_t i = 0; i < call.operands.size(); ++i) {
      if (std::holds_alternative<ConstExpr>(call.operands[i]->node)) operands[i] = build(*call.operands[i], sibling);
    }
    operands = spread_lists(call.operands, std::move(operands));
    OpId op = call.op.id;
    if (call.op_is_var) {
      std::optional<OpId> known = kind_of(call.op.text) == SlotKind::OpList ? common_op(call.op.text)
                                                                              : variable(call.op.text).op;
      if (!known) return nullptr;
      op = *known;
    }
    const OpInfo& info = registry_.get(op);
    // `**c`: c's attributes where none is given (sema: c matched a call of this op).
    const AttrList* source = call.attrs_from ? &variable(call.attrs_from->name).node->attrs() : nullptr;
    if (call.attrs.empty()) {
      return source != nullptr ? rewriter_->call(op, operands, *source)
                               : rewriter_->call(op, operands, AttrList{});  // empty: the op's defaults
    }
    AttrList attrs;
    for (size_t i = 0; i < info.attrs.size(); ++i) {
      const AttrSpec& spec = info.attrs[i];
      AttrValue value = source != nullptr ? (*source)[i] : spec.default_value;
      for (const ExprAttr& attr : call.attrs) {
        if (attr.name != spec.name) continue;
        std::optional<AttrValue> given = attr_value(*attr.value, spec.kind);
        if (!given) return nullptr;
        value = std::move(*given);
      }
      attrs.push_back(std::move(value));
    }
    return rewriter_->call(op, operands, std::move(attrs));
  }

  // An attribute value of `kind` on the right: a literal, a capture copied whole, or a computed value converted
  // as the generated code converts it.
  std::optional<AttrValue> attr_value(const Expr& value, AttrKind kind) {
    if (const auto* literal = std::get_if<LiteralExpr>(&value.node)) return literal->value;
    if (value.type == ExprType::AttrList) {  // the members' common value (sema: of the attribute's kind)
      std::optional<Computed> common = compute(value);
      if (!common) return std::nullopt;
      return std::get<AttrValue>(*common);
    }
    if (const auto* var = std::get_if<VarExpr>(&value.node); var != nullptr && !value.dtype_literal &&
                                                              value.attr_kind == kind && value.type != ExprType::Value &&
                                                              kind_of(var->name) == SlotKind::Attr) {
      return *variable(var->name).attr;
    }
    std::optional<Computed> computed = compute(value);
    if (!computed) return std::nullopt;
    switch (kind) {
      case AttrKind::Int:
      case AttrKind::OptInt:
        return AttrValue(static_cast<int64_t>(std::get<double>(*computed)));
      case AttrKind::Float:
      case AttrKind::OptFloat:
        return AttrValue(std::get<double>(*computed));
      case AttrKind::DType:
      case AttrKind::String:
      case AttrKind::OptString:
        return AttrValue(std::string(text(*computed)));
      default:
        break;
    }
    if (const auto* b = std::get_if<bool>(&*computed)) return AttrValue(*b);
    if (const auto* list = std::get_if<IntList>(&*computed)) return AttrValue(*list);
    if (const auto* whole = std::get_if<AttrValue>(&*computed)) return *whole;
    return std::nullopt;
  }

  const OpRegistry& registry_;
  const NativeBindings& natives_;  // the natives the rule's extern calls call
  bool skip_predicates_ = false;    // computing the side of `&&`/`||` that the other side decided
  PatternPtr pattern_;
  RootsAlternative roots_;  // a multi-root rule's alternative
  const Rule& rule_;
  size_t rule_index_;
  size_t specificity_ = 0;
  std::vector<Instr> program_;
  int num_registers_ = 0;
  int num_loops_ = 0;
  std::map<std::string, int> slots_;
  // The names a guard sees: slots_ once compiled, but inside a group member the values it binds, not their lists.
  std::vector<std::map<std::string, int>> member_scopes_;
  const std::map<std::string, int>* scope_ = &slots_;
  std::vector<SlotKind> kinds_;
  std::vector<const Expr*> attr_values_;
  std::vector<std::string> callees_;  // the op variables the right-hand side calls
  Mentions mentions_;  // in the pattern (every root and root guard of a multi-root rule)
  Anchor anchor_ = Anchor::Op;
  OpId root_op_ = 0;
  std::map<const Pattern*, int> leaf_registers_;
  std::map<const RestPattern*, int> rest_registers_;  // the call (tuple) each rest's operands (fields) come from
  // A partition's inputs: (register, -1) for a leaf's node, (register, first) for its operands from `first` on.
  std::vector<std::pair<int, int>> input_registers_;
  std::vector<int> root_registers_;   // a multi-root rule's single roots, in order
  std::vector<GroupInfo> groups_;
  std::vector<std::pair<int, int>> list_slots_;  // (List slot, list)
  int num_lists_ = 0;
  // State of the current try (a pass runs on one thread at a time).
  Rewriter* rewriter_ = nullptr;
  std::vector<Node*> regs_;
  std::vector<Binding> vars_;
  std::vector<int> trail_;  // slots bound, in order, to unbind when a choice point backtracks
  std::vector<int> orders_;
  std::vector<std::vector<Node*>> lists_;  // the groups' lists
  std::vector<std::vector<AttrValue>> attr_lists_;  // the attributes captured in groups, per member
  std::vector<std::vector<Dim>> dim_lists_;         // the dimensions bound in groups, per member
  std::vector<std::vector<OpId>> op_lists_;         // the ops bound in groups, per member
  int num_attr_lists_ = 0;
  int num_dim_lists_ = 0;
  int num_op_lists_ = 0;
  bool fired_ = false;
};

// --- passes as PassDefs: a fixed table of plain-function trampolines, one per live pass ---

constexpr size_t kMaxLivePasses = 256;
std::array<InterpretedPass*, kMaxLivePasses> live_passes{};
std::mutex live_passes_mutex;

int match_slot(size_t slot, Rewriter& rewriter, Node* root);

template <size_t Slot>
int trampoline(Rewriter& rewriter, Node* root) {
  return match_slot(Slot, rewriter, root);
}

template <size_t... Slots>
constexpr std::array<MatchFn, sizeof...(Slots)> make_trampolines(std::index_sequence<Slots...>) {
  return {&trampoline<Slots>...};
}
constexpr std::array<MatchFn, kMaxLivePasses> kTrampolines = make_trampolines(std::make_index_sequence<kMaxLivePasses>());

}  // namespace

class InterpretedPass {
 public:
  // `rules` are indices into pass.rules; the pass's rule table lists them in that order.
  InterpretedPass(const AstFile& file, const Pass& pass, const std::vector<size_t>& rules,
                  const NativeBindings& natives) {
    // The file's registry holds its `op` declarations, with the ids RuleInterpreter::create registered them under.
    const OpRegistry& registry = file.op_registry ? *file.op_registry : OpRegistry::global();
    name_ = pass.name;
    description_ = pass.description;
    source_ = file.basename;
    for (size_t rule_index : rules) {
      locations_.push_back(file.basename + ":" + std::to_string(pass.rules[rule_index].name_loc.line));
      needs_.push_back(required_ops(pass.rules[rule_index]));  // as dplc emits them: the driver skips alike
    }
    by_op_.resize(std::max(registry.size(), OpRegistry::global().size()));
    VisitOrder order = VisitOrder::OperandsFirst;
    for (size_t i = 0; i < rules.size(); ++i) {
      const Rule& rule = pass.rules[rules[i]];
      rule_infos_.push_back(RuleInfo{rule.name, locations_[i], needs_[i]});
      if (rule.kind == Rule::Kind::MultiRoot) {
        for (RootsAlternative& roots : expand_root_alternatives(rule)) {
          alternatives_.push_back(std::make_unique<Alternative>(registry, natives, std::move(roots), rule, i));
        }
        continue;
      }
      // A partition pass visits users first, so that each match is as large as it can be.
      if (rule.kind == Rule::Kind::Partition) order = VisitOrder::UsersFirst;
      std::vector<PatternPtr> expanded = expand_alternatives(*rule.lhs);
      for (size_t k = 0; k < expanded.size(); ++k) {
        if (rule.is_dropped(k)) continue;  // it can never match (never_match.h)
        alternatives_.push_back(std::make_unique<Alternative>(registry, natives, std::move(expanded[k]), rule, i));
      }
    }
    // The rule order (docs/semantics.md): higher priority first, then the more specific, then declaration order.
    std::vector<Alternative*> ordered;
    for (const auto& alternative : alternatives_) ordered.push_back(alternative.get());
    std::stable_sort(ordered.begin(), ordered.end(), [](const Alternative* a, const Alternative* b) {
      if (a->priority() != b->priority()) return a->priority() > b->priority();
      return a->specificity() > b->specificity();
    });
    // Each kind of node gets the alternatives that can match it, in that order; any-node ones fit every node.
    bool any_node = false;
    for (Alternative* alternative : ordered) {
      switch (alternative->anchor()) {
        case Alternative::Anchor::Op:
          by_op_[alternative->root_op()].push_back(alternative);
          break;
        case Alternative::Anchor::Composite:
          at_func_calls_.push_back(alternative);
          break;
        case Alternative::Anchor::TupleItem:
          at_items_.push_back(alternative);
          break;
        case Alternative::Anchor::AnyNode:
          any_node = true;
          for (std::vector<Alternative*>& at_op : by_op_) at_op.push_back(alternative);
          at_func_calls_.push_back(alternative);
          at_items_.push_back(alternative);
          at_others_.push_back(alternative);
          break;
      }
    }
    std::lock_guard lock(live_passes_mutex);
    for (size_t slot = 0; slot < kMaxLivePasses; ++slot) {
      if (live_passes[slot] != nullptr) continue;
      live_passes[slot] = this;
      slot_ = slot;
      break;
    }
    if (slot_ == kNoSlot) throw std::length_error("more than 256 interpreted passes alive at once");
    // A rule anchored at any value sees parameters too (in a rewrite pass, as the emitted pass does).
    const bool visit_params = any_node && order == VisitOrder::OperandsFirst;
    // Root ops only when every alternative is rooted at an op call (an any-node one is listed at others too).
    const bool only_op_roots = at_func_calls_.empty() && at_items_.empty() && at_others_.empty();
    for (size_t op = 0; only_op_roots && op < by_op_.size(); ++op) {
      if (!by_op_[op].empty()) root_ops_.push_back(static_cast<OpId>(op));
    }
    def_ = PassDef{name_, description_, source_, rule_infos_, kTrampolines[slot_], order, visit_params, root_ops_};
  }

  ~InterpretedPass() {
    std::lock_guard lock(live_passes_mutex);
    live_passes[slot_] = nullptr;
  }

  InterpretedPass(const InterpretedPass&) = delete;
  InterpretedPass& operator=(const InterpretedPass&) = delete;

  const PassDef& def() const { return def_; }

  int match(Rewriter& rewriter, Node* root) {
    const std::vector<Alternative*>* alternatives = &at_others_;
    if (root->is_call() && root->op() < by_op_.size()) {
      alternatives = &by_op_[root->op()];
    } else if (root->kind() == NodeKind::FuncCall) {
      alternatives = &at_func_calls_;
    } else if (root->kind() == NodeKind::TupleItem) {
      alternatives = &at_items_;
    }
    for (Alternative* alternative : *alternatives) {
      if (alternative->apply(rewriter, root)) return static_cast<int>(alternative->rule_index());
    }
    return -1;
  }

 private:
  static constexpr size_t kNoSlot = ~size_t{0};
  std::string name_;
  std::string description_;
  std::string source_;
  std::vector<std::string> locations_;
  std::vector<RuleInfo> rule_infos_;
  std::vector<std::vector<OpId>> needs_;  // RuleInfo::needs, per rule
  std::vector<std::unique_ptr<Alternative>> alternatives_;
  // In rule order then alternative order: per root op, at calls of module functions, at tuple items, at other
  // nodes.
  std::vector<std::vector<Alternative*>> by_op_;
  std::vector<Alternative*> at_func_calls_;
  std::vector<Alternative*> at_items_;
  std::vector<Alternative*> at_others_;
  std::vector<OpId> root_ops_;  // PassDef::root_ops
  size_t slot_ = kNoSlot;
  PassDef def_;
};

namespace {
int match_slot(size_t slot, Rewriter& rewriter, Node* root) { return live_passes[slot]->match(rewriter, root); }

// What stops the interpreter from running `rule`, if anything.
std::optional<Unsupported> unsupported(const Rule& rule, const NativeRegistry& natives) {
  SupportCheck check(natives);
  check.rule(rule);
  return check.found;
}

// The natives that stand for the file's externs (those that fit their declaration).
NativeBindings bind_natives(const AstFile& file, const NativeRegistry& natives) {
  NativeBindings bindings;
  for (const ExternDecl& decl : file.externs) {
    if (!native_mismatch(decl, natives)) bindings.emplace(&decl, natives.find(decl.name));
  }
  return bindings;
}

// Registers the file's `op` declarations in the process's registry, as the generated code does before main: the
// IR reader, the printer and type inference of built nodes use that registry. The ids must be those the file was
// checked with (its registry is a copy of the process's, extended by the declarations).
bool register_declared_ops(const AstFile& file, DiagnosticEngine& diags) {
  bool ok = true;
  for (const OpDecl& decl : file.ops) {
    const OpInfo& declared = file.op_registry->get(decl.id);
    try {
      const OpId id = OpRegistry::global().add(declared);
      if (id != decl.id) {
        diags.error(decl.name_loc, "op '" + decl.name + "' was registered under another id since the file was "
                                   "checked; check and interpret the file again");
        ok = false;
      }
    } catch (const std::invalid_argument& error) {
      diags.error(decl.name_loc, std::string(error.what()) + "; the declaration cannot be interpreted here");
      ok = false;
    }
  }
  return ok;
}
}  // namespace

std::unique_ptr<RuleInterpreter> RuleInterpreter::create(const AstFile& file, DiagnosticEngine& diags,
                                                         const NativeRegistry& natives) {
  bool ok = true;
  // Without natives, each rule calling an extern is the error (as before natives could be loaded); with natives,
  // each extern no native fits is, at its declaration, once.
  SupportCheck check(natives);
  for (const Pass& pass : file.passes) {
    for (const Rule& rule : pass.rules) {
      check.found.reset();
      check.rule(rule);
      if (check.found && natives.empty()) {
        diags.error(check.found->loc, "rule '" + rule.name + "' cannot be interpreted: " + check.found->what);
      }
      ok = ok && !check.found;
    }
  }
  if (!natives.empty()) {
    for (const ExternDecl& decl : file.externs) {
      if (std::find(check.unresolved.begin(), check.unresolved.end(), &decl) == check.unresolved.end()) continue;
      diags.error(decl.name_loc, *native_mismatch(decl, natives));
    }
  }
  if (!ok || !register_declared_ops(file, diags)) return nullptr;
  std::unique_ptr<RuleInterpreter> interpreter(new RuleInterpreter(file, natives));
  for (const Pass& pass : file.passes) {
    std::vector<size_t> rules(pass.rules.size());
    for (size_t i = 0; i < rules.size(); ++i) rules[i] = i;
    interpreter->passes_.push_back(std::make_unique<InterpretedPass>(file, pass, rules, interpreter->natives_));
  }
  return interpreter;
}

std::optional<std::string> RuleInterpreter::unsupported_reason(const Rule& rule, const NativeRegistry& natives) {
  if (std::optional<Unsupported> problem = unsupported(rule, natives)) return problem->what;
  return std::nullopt;
}

std::unique_ptr<RuleInterpreter> RuleInterpreter::create_for_single_rules(const AstFile& file,
                                                                          const NativeRegistry& natives) {
  return std::unique_ptr<RuleInterpreter>(new RuleInterpreter(file, natives));
}

RuleInterpreter::RuleInterpreter(const AstFile& file, const NativeRegistry& natives)
    : file_(file), natives_(bind_natives(file, natives)) {}
RuleInterpreter::~RuleInterpreter() = default;

std::vector<const PassDef*> RuleInterpreter::passes() const {
  std::vector<const PassDef*> defs;
  for (const auto& pass : passes_) defs.push_back(&pass->def());
  return defs;
}

const PassDef* RuleInterpreter::find_pass(std::string_view name) const {
  for (const auto& pass : passes_) {
    if (pass->def().name == name) return &pass->def();
  }
  return nullptr;
}

std::vector<const PassDef*> RuleInterpreter::resolve(std::string_view name) const {
  if (const PassDef* pass = find_pass(name)) return {pass};
  std::vector<const PassDef*> passes;
  for (const PipelineDecl& pipeline : file_.pipelines) {
    if (pipeline.name != name) continue;
    for (const std::string& pass : pipeline.passes) {
      if (const PassDef* def = find_pass(pass)) passes.push_back(def);
    }
  }
  return passes;
}

std::string RuleInterpreter::known_names() const {
  std::string names;
  for (const auto& pass : passes_) names += (names.empty() ? "" : ", ") + std::string(pass->def().name);
  for (const PipelineDecl& pipeline : file_.pipelines) names += (names.empty() ? "" : ", ") + pipeline.name + " (pipeline)";
  return names.empty() ? "(none)" : names;
}

bool RuleInterpreter::resolve(const std::vector<std::string>& names, std::vector<const PassDef*>& out,
                              std::string& error) const {
  if (names.empty()) {
    out = passes();
    return true;
  }
  for (const std::string& name : names) {
    std::vector<const PassDef*> found = resolve(name);
    if (found.empty()) {
      error = "'" + name + "' is neither a pass nor a pipeline of " + file_.basename + "; it has: " + known_names();
      return false;
    }
    out.insert(out.end(), found.begin(), found.end());
  }
  return true;
}

const PassDef& RuleInterpreter::single_rule_pass(size_t pass_index, size_t rule_index) {
  single_rule_.reset();
  single_rule_ = std::make_unique<InterpretedPass>(file_, file_.passes.at(pass_index), std::vector<size_t>{rule_index},
                                                   natives_);
  return single_rule_->def();
}

std::unique_ptr<LoadedRules> load_rules(const std::string& path, std::ostream& messages, std::string& error) {
  auto loaded = std::make_unique<LoadedRules>();
  loaded->source = SourceFile::load(path, error);
  if (loaded->source == nullptr) return nullptr;
  DiagnosticEngine diags;
  CompileOptions options;
  options.generate = false;
  loaded->compiled = compile(*loaded->source, diags, options);
  if (loaded->compiled.ok) loaded->interpreter = RuleInterpreter::create(*loaded->compiled.ast, diags);
  diags.print(messages);
  if (loaded->interpreter == nullptr) return nullptr;
  return loaded;
}

}  // namespace dpl::compiler
