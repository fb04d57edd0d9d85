// The rule interpreter: each rule alternative becomes a small match program (the checks the emitter would
// generate, in its order, with a choice point where the emitter opens a commutative-operand loop); guards and
// right-hand sides are evaluated from the checked AST exactly as the generated C++ computes them.
#include "dpl/compiler/rule_interpreter.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <utility>
#include <variant>

#include "dpl/compiler/match_order.h"

namespace dpl::compiler {

namespace {

// --- what a variable holds while a rule is tried ---

enum class SlotKind : uint8_t { Value, Op, Attr, Dim, Let };

struct Binding {
  bool bound = false;
  Node* node = nullptr;           // Value, Let
  OpId op = 0;                    // Op
  const AttrValue* attr = nullptr;  // Attr: the matched node's attribute
  Dim dim = Dim::fixed(0);        // Dim
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
  const std::string* name = nullptr;
  std::vector<int> dims;
};

bool attr_equal(const AttrValue& a, const AttrValue& b) { return a == b; }

const std::string kNotYet = " are not supported by the interpreter yet (dplc compiles them)";

// The error for a construct only compiled passes support.
struct Unsupported {
  SourceLoc loc;
  std::string what;
};

// Walks a rule's patterns and expressions for what the interpreter cannot run.
class SupportCheck {
 public:
  std::optional<Unsupported> found;

  void pattern(const Pattern& pattern) {
    const auto* call = std::get_if<CallPattern>(&pattern.node);
    if (call != nullptr && call->composite) report(pattern.loc, "composite(...) patterns" + kNotYet);
    for_each_sub_pattern(pattern, [&](const Pattern& sub) { this->pattern(sub); });
  }

  void expr(const Expr& expr) {
    if (expr.type == ExprType::ValueList || expr.type == ExprType::NumberList) report(expr.loc, "group values" + kNotYet);
    const auto* call = std::get_if<CallExpr>(&expr.node);
    if (call != nullptr && call->native != nullptr) {
      report(expr.loc, std::string("extern ") +
                           (call->native->kind == ExternDecl::Kind::Predicate ? "predicate" : "rewriter") + " '" +
                           call->native->name + "' needs native code; compile the rules with dplc");
    }
    for_each_sub_expr(expr, [&](const Expr& sub) { this->expr(sub); });
  }

  void report(SourceLoc loc, std::string what) {
    if (!found) found = Unsupported{loc, std::move(what)};
  }
};

// One alternative of one rule: its match program and what it needs to evaluate the guard and right-hand side.
class Alternative {
 public:
  Alternative(const OpRegistry& registry, PatternPtr pattern, const Rule& rule, size_t rule_index)
      : registry_(registry), pattern_(std::move(pattern)), rule_(rule), rule_index_(rule_index) {
    specificity_ = pattern_specificity(*pattern_);
    Mentions mentions;
    count_mentions(*pattern_, mentions);
    MatchOrder order(registry_, mentions);
    compile(*pattern_, new_register(), /*op_known=*/true, order);
    for (const LetBinding& let : rule_.lets) {
      slots_[let.name] = static_cast<int>(kinds_.size());
      kinds_.push_back(SlotKind::Let);
    }
    for (const LetBinding& let : rule_.lets) computed_attrs(*let.value, attr_values_);
    computed_attrs(*rule_.rhs, attr_values_);
  }

  OpId root_op() const { return root_call(*pattern_).ops[0].id; }
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
    trail_.clear();
    orders_.assign(num_loops_, 0);
    return run(0);
  }

 private:
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
    std::visit(Overloaded{
                   [](const WildcardPattern&) {},
                   [&](const VarPattern& p) { emit(Instr::Kind::Var, reg).slot = slot(p.name, SlotKind::Value); },
                   [&](const BindPattern& p) {
                     emit(Instr::Kind::Var, reg).slot = slot(p.name, SlotKind::Value);
                     compile(*p.inner, reg, op_known, order);
                   },
                   [&](const ConstPattern& p) { emit(Instr::Kind::Const, reg).constant = &p; },
                   [&](const TypePattern& p) {
                     Instr& check = emit(Instr::Kind::Type, reg);
                     check.type = &p;
                     if (p.shape) {
                       for (const DimPattern& dim : *p.shape) {
                         check.dims.push_back(dim.kind == DimPattern::Kind::Var ? slot(dim.name, SlotKind::Dim) : -1);
                       }
                     }
                   },
                   [&](const ParamPattern& p) { emit(Instr::Kind::Param, reg).name = p.name ? &*p.name : nullptr; },
                   [&](const ItemPattern& p) {
                     emit(Instr::Kind::Item, reg).index = p.index ? static_cast<int>(*p.index) : -1;
                     compile(*p.tuple, operand(reg, 0, -1), false, order);
                   },
                   [&](const TuplePattern& p) {
                     emit(Instr::Kind::Tuple, reg).count = static_cast<int>(p.fields.size());
                     for (size_t i = 0; i < p.fields.size(); ++i) {
                       compile(*p.fields[i], operand(reg, i, -1), false, order);
                     }
                   },
                   [&](const CallPattern& p) { compile_call(p, reg, op_known, order); },
                   [](const AltPattern&) {},  // expanded into separate alternatives
               },
               pattern.node);
  }

  void compile_call(const CallPattern& call, int reg, bool op_known, const MatchOrder& order) {
    const OpInfo& info = registry_.get(call.ops[0].id);
    if (!op_known) emit(Instr::Kind::CallOf, reg).op = info.id;
    if (info.min_operands != info.max_operands) emit(Instr::Kind::Arity, reg).count = static_cast<int>(call.operands.size());
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

  bool run(size_t pc) {
    for (; pc < program_.size(); ++pc) {
      const Instr& instr = program_[pc];
      if (instr.kind == Instr::Kind::Loop) {
        for (int order = 0; order < 2; ++order) {
          orders_[static_cast<size_t>(instr.loop)] = order;
          const size_t mark = trail_.size();
          if (run(pc + 1)) return true;
          while (trail_.size() > mark) {
            vars_[static_cast<size_t>(trail_.back())].bound = false;
            trail_.pop_back();
          }
        }
        return false;
      }
      if (!check(instr)) return false;
    }
    return rewrite();
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
    }
    return false;
  }

  // `const(2)` matches integer and float constants of value 2; `const(2.0)` float ones only (unless a dtype is
  // written, which decides alone).
  static bool check_const(const ConstPattern& constant, const Node* node) {
    if (node->kind() != NodeKind::Constant) return false;
    const Literal& literal = node->literal();
    if (constant.value) {
      if (!literal.is_scalar() || literal.values[0] != *constant.value) return false;
      if (!constant.integer_value && !constant.dtype && !is_float(literal.dtype)) return false;
    }
    return !constant.dtype || literal.dtype == *constant.dtype;
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
      if (dim.kind != DimPattern::Kind::Var) continue;
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

  bool rewrite() {
    if (rule_.guard != nullptr) {
      std::optional<Computed> guard = compute(*rule_.guard);
      if (!guard || !std::get<bool>(*guard)) return false;
    }
    for (const Expr* value : attr_values_) {
      if (!compute(*value)) return false;
    }
    for (const LetBinding& let : rule_.lets) {
      Node* value = build(*let.value, nullptr);
      if (value == nullptr) return false;
      Binding& var = vars_[static_cast<size_t>(slots_.at(let.name))];
      var.node = value;
      var.bound = true;
    }
    Node* replacement = build(*rule_.rhs, nullptr);
    return replacement != nullptr && rewriter_->replace(regs_[0], replacement);
  }

  const Binding& variable(const std::string& name) const { return vars_[static_cast<size_t>(slots_.at(name))]; }
  SlotKind kind_of(const std::string& name) const { return kinds_[static_cast<size_t>(slots_.at(name))]; }

  static std::optional<double> number(const AttrValue& value) {
    if (const auto* i = std::get_if<int64_t>(&value)) return static_cast<double>(*i);
    if (const auto* d = std::get_if<double>(&value)) return *d;
    return std::nullopt;
  }

  // A guard-like expression; nullopt when a property it reads is not known (the rule declines), as the generated
  // code checks every property an expression reads before it evaluates the expression.
  std::optional<Computed> compute(const Expr& expr) {
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
            [&](const BinaryExpr& e) { return binary(e); },
            [](const auto&) -> std::optional<Computed> { return std::nullopt; },  // rejected before
        },
        expr.node);
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
    const Node* node = variable(std::get<VarExpr>(member.object->node).name).node;
    if (member.member == "dtype") return Computed(node->type()->dtype());
    if (member.member == "uses") return Computed(static_cast<double>(node->num_users()));
    if (member.member == "rank") {
      if (node->type()->rank() < 0) return std::nullopt;
      return Computed(static_cast<double>(node->type()->rank()));
    }
    // value
    if (node->kind() != NodeKind::Constant || !node->literal().is_scalar()) return std::nullopt;
    return Computed(node->literal().values[0]);
  }

  std::optional<Computed> shape_dim(const IndexExpr& index) {
    const auto& member = std::get<MemberExpr>(index.object->node);
    const Node* node = variable(std::get<VarExpr>(member.object->node).name).node;
    const int64_t position = std::get<int64_t>(std::get<LiteralExpr>(index.index->node).value);
    TypeRef type = node->type();
    // A negative position counts from the end, as in Python.
    const int64_t needed_rank = position >= 0 ? position + 1 : -position;
    if (!type->has_shape() || type->rank() < needed_rank) return std::nullopt;
    const Dim dim = type->dims()[static_cast<size_t>(position >= 0 ? position : type->rank() + position)];
    if (!dim.is_static()) return std::nullopt;
    return Computed(static_cast<double>(dim.extent()));
  }

  bool is_dim(const Expr& expr) const {
    const auto* var = std::get_if<VarExpr>(&expr.node);
    if (var == nullptr || expr.dtype_literal) return false;
    auto it = slots_.find(var->name);
    return it != slots_.end() && kinds_[static_cast<size_t>(it->second)] == SlotKind::Dim;
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
    if (equality && is_dim(*binary.lhs) && is_dim(*binary.rhs)) {
      // Two dimensions compare as dimensions, so that equal symbolic ones are equal.
      return result(variable(std::get<VarExpr>(binary.lhs->node).name).dim ==
                    variable(std::get<VarExpr>(binary.rhs->node).name).dim);
    }
    if (equality && (binary.lhs->type == ExprType::Attr || binary.rhs->type == ExprType::Attr ||
                     (binary.lhs->type == binary.rhs->type && binary.lhs->type == ExprType::IntList))) {
      return result(whole_attr(*binary.lhs) == whole_attr(*binary.rhs));
    }
    // Both sides are computed (and their properties checked) whatever the operator: `&&` and `||` too.
    std::optional<Computed> lhs = compute(*binary.lhs);
    std::optional<Computed> rhs = compute(*binary.rhs);
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
        return Computed(a < b);
      case BinaryOp::LessEqual:
        return Computed(a <= b);
      case BinaryOp::Greater:
        return Computed(a > b);
      case BinaryOp::GreaterEqual:
        return Computed(a >= b);
      default:
        return std::nullopt;
    }
  }

  // Builds `expr`; nullptr when a node cannot be built (type inference failed), which declines the rule.
  // `sibling` is a value built next to it (the dtype of constants).
  Node* build(const Expr& expr, Node* sibling) {
    return std::visit(Overloaded{
                          [&](const VarExpr& e) { return variable(e.name).node; },
                          [&](const ConstExpr& e) {
                            DType dtype = e.dtype ? *e.dtype
                                          : sibling != nullptr ? first_known_dtype({sibling, regs_[0]})
                                                               : first_known_dtype({regs_[0]});
                            return rewriter_->scalar(e.value, dtype);
                          },
                          [&](const CallExpr& e) { return build_call(e); },
                          [&](const ItemExpr& e) -> Node* {
                            Node* tuple = build(*e.tuple, nullptr);
                            return tuple == nullptr ? nullptr : rewriter_->item(tuple, e.index);
                          },
                          [&](const TupleExpr& e) -> Node* {
                            std::vector<Node*> fields;
                            for (const ExprPtr& field : e.fields) {
                              fields.push_back(build(*field, nullptr));
                              if (fields.back() == nullptr) return nullptr;
                            }
                            return rewriter_->tuple(fields);
                          },
                          [](const auto&) -> Node* { return nullptr; },  // sema rejects anything else
                      },
                      expr.node);
  }

  Node* build_call(const CallExpr& call) {
    // Operands other than constants first, so that a constant can take its dtype from one of them.
    std::vector<Node*> operands(call.operands.size(), nullptr);
    Node* sibling = nullptr;
    for (size_t i = 0; i < call.operands.size(); ++i) {
      if (std::holds_alternative<ConstExpr>(call.operands[i]->node)) continue;
      operands[i] = build(*call.operands[i], nullptr);
      if (operands[i] == nullptr) return nullptr;
      if (sibling == nullptr) sibling = operands[i];
    }
    for (size_t i = 0; i < call.operands.size(); ++i) {
      if (std::holds_alternative<ConstExpr>(call.operands[i]->node)) operands[i] = build(*call.operands[i], sibling);
    }
    const OpId op = call.op_is_var ? variable(call.op.text).op : call.op.id;
    const OpInfo& info = registry_.get(op);
    if (call.attrs.empty()) return rewriter_->call(op, operands, info.default_attrs());
    AttrList attrs;
    for (const AttrSpec& spec : info.attrs) {
      AttrValue value = spec.default_value;
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
  PatternPtr pattern_;
  const Rule& rule_;
  size_t rule_index_;
  size_t specificity_ = 0;
  std::vector<Instr> program_;
  int num_registers_ = 0;
  int num_loops_ = 0;
  std::map<std::string, int> slots_;
  std::vector<SlotKind> kinds_;
  std::vector<const Expr*> attr_values_;
  // State of the current try (a pass runs on one thread at a time).
  Rewriter* rewriter_ = nullptr;
  std::vector<Node*> regs_;
  std::vector<Binding> vars_;
  std::vector<int> trail_;  // slots bound, in order, to unbind when a choice point backtracks
  std::vector<int> orders_;
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
  InterpretedPass(const AstFile& file, const Pass& pass, const std::vector<size_t>& rules) {
    const OpRegistry& registry = OpRegistry::global();
    name_ = pass.name;
    description_ = pass.description;
    source_ = file.basename;
    for (size_t rule_index : rules) {
      locations_.push_back(file.basename + ":" + std::to_string(pass.rules[rule_index].name_loc.line));
    }
    by_op_.resize(registry.size());
    for (size_t i = 0; i < rules.size(); ++i) {
      const Rule& rule = pass.rules[rules[i]];
      rule_infos_.push_back(RuleInfo{rule.name, locations_[i]});
      for (PatternPtr& pattern : expand_alternatives(*rule.lhs)) {
        alternatives_.push_back(std::make_unique<Alternative>(registry, std::move(pattern), rule, i));
      }
    }
    // The rule order (docs/semantics.md): higher priority first, then the more specific, then declaration order.
    std::vector<Alternative*> ordered;
    for (const auto& alternative : alternatives_) ordered.push_back(alternative.get());
    std::stable_sort(ordered.begin(), ordered.end(), [](const Alternative* a, const Alternative* b) {
      if (a->priority() != b->priority()) return a->priority() > b->priority();
      return a->specificity() > b->specificity();
    });
    for (Alternative* alternative : ordered) by_op_[alternative->root_op()].push_back(alternative);
    std::lock_guard lock(live_passes_mutex);
    for (size_t slot = 0; slot < kMaxLivePasses; ++slot) {
      if (live_passes[slot] != nullptr) continue;
      live_passes[slot] = this;
      slot_ = slot;
      break;
    }
    if (slot_ == kNoSlot) throw std::length_error("more than 256 interpreted passes alive at once");
    def_ = PassDef{name_, description_, source_, rule_infos_, kTrampolines[slot_], VisitOrder::OperandsFirst};
  }

  ~InterpretedPass() {
    std::lock_guard lock(live_passes_mutex);
    live_passes[slot_] = nullptr;
  }

  InterpretedPass(const InterpretedPass&) = delete;
  InterpretedPass& operator=(const InterpretedPass&) = delete;

  const PassDef& def() const { return def_; }

  int match(Rewriter& rewriter, Node* root) {
    if (!root->is_call()) return -1;
    for (Alternative* alternative : by_op_[root->op()]) {
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
  std::vector<std::unique_ptr<Alternative>> alternatives_;
  std::vector<std::vector<Alternative*>> by_op_;  // per root op, in rule order then alternative order
  size_t slot_ = kNoSlot;
  PassDef def_;
};

namespace {
int match_slot(size_t slot, Rewriter& rewriter, Node* root) { return live_passes[slot]->match(rewriter, root); }

// What stops the interpreter from running `rule`, if anything.
std::optional<Unsupported> unsupported(const Rule& rule) {
  switch (rule.kind) {
    case Rule::Kind::MultiRoot:
      return Unsupported{rule.name_loc, "multi-root and group rules" + kNotYet};
    case Rule::Kind::Partition:
      return Unsupported{rule.name_loc, "partition rules" + kNotYet};
    case Rule::Kind::Rewrite:
      break;
  }
  SupportCheck check;
  check.pattern(*rule.lhs);
  if (rule.guard != nullptr) check.expr(*rule.guard);
  for (const LetBinding& let : rule.lets) check.expr(*let.value);
  check.expr(*rule.rhs);
  return check.found;
}
}  // namespace

std::unique_ptr<RuleInterpreter> RuleInterpreter::create(const AstFile& file, DiagnosticEngine& diags) {
  // Declared ops live in the file's own registry (AstFile::op_registry), whose ids the process's registry, which
  // the interpreter matches and builds with, does not know.
  if (!file.ops.empty()) {
    diags.error(file.ops[0].name_loc, "a file that declares ops cannot be interpreted yet; compile it with dplc");
    return nullptr;
  }
  bool ok = true;
  for (const Pass& pass : file.passes) {
    for (const Rule& rule : pass.rules) {
      if (std::optional<Unsupported> problem = unsupported(rule)) {
        diags.error(problem->loc, "rule '" + rule.name + "' cannot be interpreted: " + problem->what);
        ok = false;
      }
    }
  }
  if (!ok) return nullptr;
  std::unique_ptr<RuleInterpreter> interpreter(new RuleInterpreter(file));
  for (const Pass& pass : file.passes) {
    std::vector<size_t> rules(pass.rules.size());
    for (size_t i = 0; i < rules.size(); ++i) rules[i] = i;
    interpreter->passes_.push_back(std::make_unique<InterpretedPass>(file, pass, rules));
  }
  return interpreter;
}

std::optional<std::string> RuleInterpreter::unsupported_reason(const Rule& rule) {
  if (std::optional<Unsupported> problem = unsupported(rule)) return problem->what;
  return std::nullopt;
}

std::unique_ptr<RuleInterpreter> RuleInterpreter::create_for_single_rules(const AstFile& file) {
  return std::unique_ptr<RuleInterpreter>(new RuleInterpreter(file));
}

RuleInterpreter::RuleInterpreter(const AstFile& file) : file_(file) {}
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
  single_rule_ = std::make_unique<InterpretedPass>(file_, file_.passes.at(pass_index), std::vector<size_t>{rule_index});
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
