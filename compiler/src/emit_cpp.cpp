// C++ emitter: one matcher function per rule alternative (straight-line nested checks, loops only where
// commutative operands need both orders), one dispatching matcher per pass, and the pass definitions.
#include "dpl/compiler/emit_cpp.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <set>

namespace dpl::compiler {

namespace {

// The C++ identifiers of the built-in ops (`dpl::op::nn_softmax`), straight from ops.def.
constexpr const char* kBuiltinOpIdents[] = {
#define DPL_OP(ident, name) #ident,
#include "dpl/ir/ops.def"
#undef DPL_OP
};

std::string string_literal(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\{:03o}", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// `nn_softmax`: usable in C++ names.
std::string op_ident(const OpInfo& info) {
  if (info.id < std::size(kBuiltinOpIdents)) return kBuiltinOpIdents[info.id];
  std::string ident = info.name;
  std::replace(ident.begin(), ident.end(), '.', '_');
  return ident;
}

// Built-in ops are compile-time constants; any other op is looked up by name once.
std::string op_constant(const OpInfo& info) {
  if (info.id < std::size(kBuiltinOpIdents)) return std::string("dpl::op::") + kBuiltinOpIdents[info.id];
  return "dpl::OpRegistry::global().find(" + string_literal(info.name) + ")->id";
}

// What the generated source needs beyond the dpl headers.
struct Needs {
  bool string = false;
  bool vector = false;
  bool variant = false;  // std::monostate, std::get
  bool string_view = false;
};

std::string dtype_constant(DType dtype) {
  switch (dtype) {
    case DType::Unknown:
      return "dpl::DType::Unknown";
    case DType::Bool:
      return "dpl::DType::Bool";
    case DType::Int8:
      return "dpl::DType::Int8";
    case DType::Int16:
      return "dpl::DType::Int16";
    case DType::Int32:
      return "dpl::DType::Int32";
    case DType::Int64:
      return "dpl::DType::Int64";
    case DType::UInt8:
      return "dpl::DType::UInt8";
    case DType::Float16:
      return "dpl::DType::Float16";
    case DType::BFloat16:
      return "dpl::DType::BFloat16";
    case DType::Float32:
      return "dpl::DType::Float32";
    case DType::Float64:
      return "dpl::DType::Float64";
  }
  return "dpl::DType::Unknown";
}

// One line of source text inside a `//` comment.
std::string comment_text(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

// A C++ expression of type dpl::AttrValue (or convertible to it in an AttrList initializer).
std::string attr_value_cpp(const AttrValue& value, Needs& needs) {
  return std::visit(Overloaded{
                        [&](std::monostate) -> std::string {
                          needs.variant = true;
                          return "std::monostate{}";
                        },
                        [](bool b) -> std::string { return b ? "true" : "false"; },
                        [](int64_t i) { return fmt::format("int64_t{{{}}}", i); },
                        [](double d) { return format_double(d); },
                        [&](const std::string& s) {
                          needs.string = true;
                          return "std::string(" + string_literal(s) + ")";
                        },
                        [&](const std::vector<int64_t>& list) {
                          needs.vector = true;
                          return fmt::format("std::vector<int64_t>{{{}}}", fmt::join(list, ", "));
                        },
                    },
                    value);
}

bool is_scalar_attr(const AttrValue& value) {
  return !std::holds_alternative<std::string>(value) && !std::holds_alternative<std::vector<int64_t>>(value);
}

// C++ keywords and alternative tokens.
const std::set<std::string, std::less<>>& cpp_keywords() {
  static const std::set<std::string, std::less<>> names = {
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch", "char",
      "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr", "constinit",
      "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete", "do", "double",
      "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for", "friend", "goto", "if",
      "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or",
      "or_eq", "private", "protected", "public", "register", "reinterpret_cast", "requires", "return", "short",
      "signed", "sizeof", "static", "static_assert", "static_cast", "struct", "switch", "template", "this",
      "thread_local", "throw", "true", "try", "typedef", "typeid", "typename", "union", "unsigned", "using", "virtual",
      "void", "volatile", "wchar_t", "while", "xor", "xor_eq"};
  return names;
}

const std::set<std::string>& reserved_names() {
  static const std::set<std::string> names = [] {
    std::set<std::string> all(cpp_keywords().begin(), cpp_keywords().end());
    // Names the generated code itself relies on.
    all.insert({"dpl", "std", "int64_t", "root", "rewriter", "main"});
    return all;
  }();
  return names;
}

// Hands out C++ identifiers that collide with nothing already handed out, nor with reserved names.
class NameTable {
 public:
  std::string fresh(const std::string& wanted) {
    // Hidden variables from pattern declarations (`to_bsh#1.t`) hold characters C++ names cannot.
    std::string base = wanted;
    for (char& c : base) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
    }
    std::string name = base;
    for (int suffix = 1; reserved_names().count(name) != 0 || taken_.count(name) != 0; ++suffix) {
      name = base + "_" + std::to_string(suffix);
    }
    taken_.insert(name);
    return name;
  }
  // For temporaries: `add1`, `add2`, ... reads better than `add`, `add_1`.
  std::string numbered(const std::string& base) {
    for (int n = 1;; ++n) {
      std::string name = base + std::to_string(n);
      if (reserved_names().count(name) == 0 && taken_.count(name) == 0) {
        taken_.insert(name);
        return name;
      }
    }
  }

 private:
  std::set<std::string> taken_;
};

// Lines with indentation.
class CodeWriter {
 public:
  void line(const std::string& text) {
    if (!text.empty()) out_.append(static_cast<size_t>(indent_) * 2, ' ');
    out_ += text;
    out_ += '\n';
  }
  void blank() { out_ += '\n'; }
  void text(const std::string& lines) { out_ += lines; }  // already indented
  void indent() { ++indent_; }
  void dedent() { --indent_; }
  const std::string& str() const { return out_; }

 private:
  std::string out_;
  int indent_ = 0;
};

// How often each variable is mentioned in an alternative and its right-hand side; a variable mentioned once is
// never read, so the emitter declares no C++ variable for it.
using Mentions = std::map<std::string, int>;

void count_mentions(const Pattern& pattern, Mentions& mentions) {
  std::visit(Overloaded{
                 [&](const VarPattern& p) { ++mentions[p.name]; },
                 [&](const BindPattern& p) {
                   ++mentions[p.name];
                   count_mentions(*p.inner, mentions);
                 },
                 [&](const CallPattern& p) {
                   if (!p.op_var.empty()) ++mentions[p.op_var];
                   for (const PatternAttr& attr : p.attrs) {
                     if (!attr.literal) ++mentions[attr.capture];
                   }
                   for (const PatternPtr& operand : p.operands) count_mentions(*operand, mentions);
                 },
                 [&](const AltPattern& p) {
                   for (const PatternPtr& alternative : p.alternatives) count_mentions(*alternative, mentions);
                 },
                 [&](const TypePattern& p) {
                   if (!p.shape) return;
                   for (const DimPattern& dim : *p.shape) {
                     if (dim.kind == DimPattern::Kind::Var) ++mentions[dim.name];
                   }
                 },
                 [&](const ItemPattern& p) { count_mentions(*p.tuple, mentions); },
                 [&](const TuplePattern& p) {
                   for (const PatternPtr& field : p.fields) count_mentions(*field, mentions);
                 },
                 [](const auto&) {},
             },
             pattern.node);
}

void count_mentions(const Expr& expr, Mentions& mentions) {
  std::visit(Overloaded{
                 [&](const VarExpr& e) { ++mentions[e.name]; },
                 [&](const CallExpr& e) {
                   if (e.op_is_var) ++mentions[e.op.text];
                   for (const ExprPtr& operand : e.operands) count_mentions(*operand, mentions);
                   for (const ExprAttr& attr : e.attrs) count_mentions(*attr.value, mentions);
                 },
                 [&](const MemberExpr& e) { count_mentions(*e.object, mentions); },
                 [&](const IndexExpr& e) {
                   count_mentions(*e.object, mentions);
                   count_mentions(*e.index, mentions);
                 },
                 [&](const UnaryExpr& e) { count_mentions(*e.operand, mentions); },
                 [&](const ItemExpr& e) { count_mentions(*e.tuple, mentions); },
                 [&](const TupleExpr& e) {
                   for (const ExprPtr& field : e.fields) count_mentions(*field, mentions);
                 },
                 [&](const BinaryExpr& e) {
                   count_mentions(*e.lhs, mentions);
                   count_mentions(*e.rhs, mentions);
                 },
                 [](const auto&) {},
             },
             expr.node);
}

// The right-hand side's attribute values that are computed (not literals or plain captures), in order.
void computed_attrs(const Expr& expr, std::vector<const Expr*>& out) {
  if (const auto* item = std::get_if<ItemExpr>(&expr.node)) computed_attrs(*item->tuple, out);
  if (const auto* tuple = std::get_if<TupleExpr>(&expr.node)) {
    for (const ExprPtr& field : tuple->fields) computed_attrs(*field, out);
  }
  if (const auto* call = std::get_if<CallExpr>(&expr.node)) {
    for (const ExprPtr& operand : call->operands) computed_attrs(*operand, out);
    for (const ExprAttr& attr : call->attrs) {
      if (!std::holds_alternative<LiteralExpr>(attr.value->node)) out.push_back(attr.value.get());
    }
  }
}

const CallPattern& root_call(const Pattern& pattern) {
  if (const auto* bind = std::get_if<BindPattern>(&pattern.node)) return root_call(*bind->inner);
  return std::get<CallPattern>(pattern.node);
}

// Emits the matcher function of one alternative of one rule.
class RuleEmitter {
 public:
  RuleEmitter(const OpRegistry& registry, const Pattern& pattern, const Rule& rule, Needs& needs)
      : registry_(registry), pattern_(pattern), guard_(rule.guard.get()), lets_(rule.lets), rhs_(*rule.rhs),
        needs_(needs) {
    count_mentions(pattern, pattern_mentions_);
    mentions_ = pattern_mentions_;
    if (guard_ != nullptr) count_mentions(*guard_, mentions_);
    for (const LetBinding& let : lets_) count_mentions(*let.value, mentions_);
    count_mentions(rhs_, mentions_);
  }

  void emit(CodeWriter& out, const std::string& function_name) {
    out.line("bool " + function_name + "(dpl::Rewriter& rewriter, dpl::Node* root) {");
    out.indent();
    body_ = &out;
    match(pattern_, "root", /*op_known=*/true);
    if (guard_ != nullptr) check("!" + computed(*guard_));
    // Properties read by computed attributes are checked before any node is built.
    std::vector<const Expr*> attr_values;
    for (const LetBinding& let : lets_) computed_attrs(*let.value, attr_values);
    computed_attrs(rhs_, attr_values);
    for (const Expr* value : attr_values) computed(*value);
    for (const LetBinding& let : lets_) bound_[let.name] = local(build(*let.value, nullptr), let.name, 2);
    std::string result = build(rhs_, nullptr);
    if (loops_ == 0) {
      out.line("return rewriter.replace(root, " + result + ");");
    } else {
      out.line("if (rewriter.replace(root, " + result + ")) return true;");
      for (int i = 0; i < loops_; ++i) {
        out.dedent();
        out.line("}");
      }
      out.line("return false;");
    }
    out.dedent();
    out.line("}");
  }

 private:
  std::string fail() const { return loops_ > 0 ? "continue;" : "return false;"; }
  void check(const std::string& failure_condition) { body_->line("if (" + failure_condition + ") " + fail()); }
  bool read_later(const std::string& variable) const {
    auto it = mentions_.find(variable);
    return it != mentions_.end() && it->second > 1;
  }

  // Makes `subject` a local when it is needed more than once (a plain name already is one).
  std::string local(const std::string& subject, const std::string& base, int uses) {
    bool is_name = subject.find_first_of("(->") == std::string::npos;
    if (is_name || uses <= 1) return subject;
    std::string name = names_.numbered(base);
    body_->line("dpl::Node* " + name + " = " + subject + ";");
    return name;
  }

  // Binds `variable` to `subject`, or checks that it is the same node as before.
  // Returns the C++ expression for the bound value.
  std::string bind(const std::string& variable, const std::string& subject) {
    if (auto it = bound_.find(variable); it != bound_.end()) {
      check(subject + " != " + it->second);
      return it->second;
    }
    if (!read_later(variable)) return subject;
    std::string name = names_.fresh(variable);
    body_->line("dpl::Node* " + name + " = " + subject + ";");
    bound_[variable] = name;
    return name;
  }

  void match(const Pattern& pattern, const std::string& subject, bool op_known) {
    std::visit(Overloaded{
                   [](const WildcardPattern&) {}, [&](const VarPattern& p) { bind(p.name, subject); },
                   [&](const BindPattern& p) { match(*p.inner, bind(p.name, subject), op_known); },
                   [&](const ConstPattern& p) { match_const(p, subject); },
                   [&](const TypePattern& p) { match_type(p, subject); },
                   [&](const ParamPattern& p) {
                     std::string node = local(subject, "param", p.name ? 2 : 1);
                     check(node + "->kind() != dpl::NodeKind::Param");
                     if (p.name) check(node + "->name() != " + string_literal(*p.name));
                   },
                   [&](const ItemPattern& p) {
                     bool deeper = !std::holds_alternative<WildcardPattern>(p.tuple->node);
                     std::string node = local(subject, "item", 1 + (p.index ? 1 : 0) + (deeper ? 1 : 0));
                     check(node + "->kind() != dpl::NodeKind::TupleItem");
                     if (p.index) check(node + "->index() != " + std::to_string(*p.index));
                     match(*p.tuple, node + "->operand(0)", false);
                   },
                   [&](const TuplePattern& p) {
                     std::string node = local(subject, "tuple", 1 + static_cast<int>(p.fields.size()));
                     check(node + "->kind() != dpl::NodeKind::Tuple || " + node +
                           "->num_operands() != " + std::to_string(p.fields.size()));
                     for (size_t i = 0; i < p.fields.size(); ++i) {
                       match(*p.fields[i], node + "->operand(" + std::to_string(i) + ")", false);
                     }
                   },
                   [&](const CallPattern& p) { match_call(p, subject, op_known); },
                   [](const AltPattern&) {},  // expanded into separate alternatives before emission
               },
               pattern.node);
  }

  void match_const(const ConstPattern& constant, const std::string& subject) {
    int uses = 1 + (constant.value || constant.dtype ? 1 : 0);
    std::string node = local(subject, "constant", uses);
    check(node + "->kind() != dpl::NodeKind::Constant");
    constant_nodes_.insert(node);
    if (constant.value) {
      std::string value = format_double(*constant.value);
      std::string condition = "!" + node + "->literal().is_scalar() || " + node + "->literal().values[0] != " + value;
      if (!constant.integer_value && !constant.dtype) condition += " || !dpl::is_float(" + node + "->literal().dtype)";
      check(condition);
    }
    if (constant.dtype) check(node + "->literal().dtype != " + dtype_constant(*constant.dtype));
  }

  void match_type(const TypePattern& type, const std::string& subject) {
    std::string node = local(subject, "tensor", 2);
    std::string type_of = node + "->type()";
    check("!" + type_of + "->is_tensor()");
    if (type.dtype) check(type_of + "->dtype() != " + dtype_constant(*type.dtype));
    if (!type.shape) return;
    check(type_of + "->rank() != " + std::to_string(type.shape->size()));
    bool reads_dims = std::any_of(type.shape->begin(), type.shape->end(),
                                  [](const DimPattern& dim) { return dim.kind != DimPattern::Kind::Any; });
    if (!reads_dims) return;
    check("!" + type_of + "->has_shape()");
    for (size_t i = 0; i < type.shape->size(); ++i) {
      const DimPattern& dim = (*type.shape)[i];
      std::string read = type_of + "->dims()[" + std::to_string(i) + "]";
      if (dim.kind == DimPattern::Kind::Fixed) {
        check(read + " != dpl::Dim::fixed(" + std::to_string(dim.extent) + ")");
      } else if (dim.kind == DimPattern::Kind::Var) {
        if (auto it = bound_.find(dim.name); it != bound_.end()) {
          check(read + " != " + it->second);
        } else if (read_later(dim.name)) {
          std::string name = names_.fresh(dim.name);
          body_->line("const dpl::Dim " + name + " = " + read + ";");
          bound_[dim.name] = name;
          dims_.insert(dim.name);
        }
      }
    }
  }

  void match_call(const CallPattern& call, const std::string& subject, bool op_known) {
    const OpInfo& info = registry_.get(call.ops[0].id);
    const size_t arity = call.operands.size();
    bool check_arity = info.min_operands != info.max_operands;
    bool binds_op = !call.op_var.empty() && (bound_.count(call.op_var) != 0 || read_later(call.op_var));
    int uses = (op_known ? 0 : 1) + (check_arity ? 1 : 0) + (binds_op ? 1 : 0) + static_cast<int>(call.attrs.size());
    for (const PatternPtr& operand : call.operands) {
      if (!std::holds_alternative<WildcardPattern>(operand->node)) ++uses;
    }
    std::string node = local(subject, op_ident(info), uses);

    if (!op_known) check("!" + node + "->is_call_of(" + op_constant(info) + ")");
    if (check_arity) check(node + "->num_operands() != " + std::to_string(arity));
    if (binds_op) {
      if (auto it = bound_.find(call.op_var); it != bound_.end()) {
        check(node + "->op() != " + it->second);
      } else {
        std::string name = names_.fresh(call.op_var);
        body_->line("dpl::OpId " + name + " = " + node + "->op();");
        bound_[call.op_var] = name;
      }
    }
    for (const PatternAttr& attr : call.attrs) {
      std::string read = node + "->attr(" + std::to_string(info.attr_index(attr.name)) + ")";
      if (attr.literal) {
        if (is_scalar_attr(*attr.literal)) {
          check(read + " != dpl::AttrValue(" + attr_value_cpp(*attr.literal, needs_) + ")");
        } else {
          check(read + " != " + constant_attr(*attr.literal, attr.name + "_value"));
        }
      } else if (auto it = bound_.find(attr.capture); it != bound_.end()) {
        check(read + " != " + it->second);
      } else if (read_later(attr.capture)) {
        std::string name = names_.fresh(attr.capture);
        body_->line("const dpl::AttrValue& " + name + " = " + read + ";");
        bound_[attr.capture] = name;
      }
    }

    std::vector<size_t> order = operand_order(call);
    if (needs_both_orders(call)) {
      std::string order_var = names_.numbered("order");
      body_->line("for (int " + order_var + " = 0; " + order_var + " < 2; ++" + order_var + ") {");
      body_->indent();
      ++loops_;
      const std::string subjects[2] = {node + "->operand(" + order_var + ")",
                                       node + "->operand(1 - " + order_var + ")"};
      for (size_t i : order) match(*call.operands[i], subjects[i], false);
      return;  // the loop closes after the right-hand side, so a later failure tries the other order
    }
    for (size_t i : order) match(*call.operands[i], node + "->operand(" + std::to_string(i) + ")", false);
  }

  // `_` or a variable mentioned nowhere else in the pattern: matches anything and constrains nothing.
  bool unconstrained(const Pattern& pattern) const {
    if (std::holds_alternative<WildcardPattern>(pattern.node)) return true;
    const auto* var = std::get_if<VarPattern>(&pattern.node);
    return var != nullptr && pattern_mentions_.at(var->name) == 1;
  }

  // A commutative call is tried in both operand orders, unless swapping cannot change whether it matches:
  // identical operand patterns (`add(x, x)`) or two unconstrained ones (`add(a, b)`).
  bool needs_both_orders(const CallPattern& call) const {
    if (call.operands.size() != 2 || !registry_.get(call.ops[0].id).has(kCommutative)) return false;
    if (same_pattern(*call.operands[0], *call.operands[1])) return false;
    // `add(a: p, a)`: both operands must be one node, in either order.
    auto top_name = [](const Pattern& p) -> const std::string* {
      if (const auto* bind = std::get_if<BindPattern>(&p.node)) return &bind->name;
      if (const auto* var = std::get_if<VarPattern>(&p.node)) return &var->name;
      return nullptr;
    };
    for (int i = 0; i < 2; ++i) {
      const auto* var = std::get_if<VarPattern>(&call.operands[1 - i]->node);
      const std::string* other = top_name(*call.operands[i]);
      if (var != nullptr && other != nullptr && var->name == *other) return false;
    }
    return !(unconstrained(*call.operands[0]) && unconstrained(*call.operands[1]));
  }

  // Whether matching `pattern` opens an operand-order loop somewhere.
  bool has_choice(const Pattern& pattern) const {
    if (const auto* bind = std::get_if<BindPattern>(&pattern.node)) return has_choice(*bind->inner);
    const auto* call = std::get_if<CallPattern>(&pattern.node);
    if (call == nullptr) return false;
    if (needs_both_orders(*call)) return true;
    return std::any_of(call->operands.begin(), call->operands.end(),
                       [&](const PatternPtr& operand) { return has_choice(*operand); });
  }

  // Operands whose matching opens no loop go first, so that their checks run once, not once per order; among
  // those, smaller patterns first: a constant or a repeated name is checked before a deep sub-pattern is walked,
  // which is where most candidates fail. (Which operand is matched first does not change what matches.)
  std::vector<size_t> operand_order(const CallPattern& call) const {
    std::vector<size_t> order(call.operands.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      bool choice_a = has_choice(*call.operands[a]);
      bool choice_b = has_choice(*call.operands[b]);
      if (choice_a != choice_b) return !choice_a;
      return pattern_size(*call.operands[a]) < pattern_size(*call.operands[b]);
    });
    return order;
  }

  // How many checks matching `pattern` takes, roughly: one per node of the pattern.
  static size_t pattern_size(const Pattern& pattern) {
    return std::visit(Overloaded{
                          [](const WildcardPattern&) -> size_t { return 0; },
                          [](const BindPattern& p) { return pattern_size(*p.inner); },
                          [](const CallPattern& p) {
                            size_t size = 1 + p.attrs.size();
                            for (const PatternPtr& operand : p.operands) size += pattern_size(*operand);
                            return size;
                          },
                          [](const ItemPattern& p) { return 1 + pattern_size(*p.tuple); },
                          [](const TuplePattern& p) {
                            size_t size = 1;
                            for (const PatternPtr& field : p.fields) size += pattern_size(*field);
                            return size;
                          },
                          [](const auto&) -> size_t { return 1; },
                      },
                      pattern.node);
  }

  // Emits the statements building `expr`; returns the C++ expression of the new value. `sibling` is a value
  // built or matched next to it (for the dtype of constants).
  std::string build(const Expr& expr, const std::string* sibling) {
    return std::visit(
        Overloaded{
            [&](const VarExpr& e) { return bound_.at(e.name); },
            [&](const ConstExpr& e) { return build_constant(e, sibling); },
            [&](const CallExpr& e) { return build_call(e); },
            [&](const ItemExpr& e) {
              std::string tuple = build(*e.tuple, nullptr);
              std::string name = names_.numbered("item");
              body_->line("dpl::Node* " + name + " = rewriter.item(" + tuple + ", " + std::to_string(e.index) + ");");
              check(name + " == nullptr");
              return name;
            },
            [&](const TupleExpr& e) {
              std::vector<std::string> fields;
              for (const ExprPtr& field : e.fields) fields.push_back(build(*field, nullptr));
              needs_.vector = true;
              std::string name = names_.numbered("tuple");
              body_->line("dpl::Node* " + name + " = rewriter.tuple(std::vector<dpl::Node*>{" +
                          fmt::format("{}", fmt::join(fields, ", ")) + "});");
              check(name + " == nullptr");
              return name;
            },
            [](const auto&) -> std::string { return "nullptr"; },  // sema rejects anything else
        },
        expr.node);
  }

  std::string build_constant(const ConstExpr& constant, const std::string* sibling) {
    std::string dtype;
    if (constant.dtype) {
      dtype = dtype_constant(*constant.dtype);
    } else {
      dtype = "dpl::first_known_dtype({" + (sibling != nullptr ? *sibling + ", " : std::string()) + "root})";
    }
    return "rewriter.scalar(" + format_double(constant.value) + ", " + dtype + ")";
  }

  std::string build_call(const CallExpr& call) {
    if (call.native != nullptr) return build_native(call);
    // Operands other than constants first, so that a constant can take its dtype from one of them.
    std::vector<std::string> operands(call.operands.size());
    const std::string* sibling = nullptr;
    for (size_t i = 0; i < call.operands.size(); ++i) {
      if (std::holds_alternative<ConstExpr>(call.operands[i]->node)) continue;
      operands[i] = build(*call.operands[i], nullptr);
      if (sibling == nullptr) sibling = &operands[i];
    }
    for (size_t i = 0; i < call.operands.size(); ++i) {
      if (std::holds_alternative<ConstExpr>(call.operands[i]->node)) operands[i] = build(*call.operands[i], sibling);
    }
    std::string op = call.op_is_var ? bound_.at(call.op.text) : op_constant(registry_.get(call.op.id));
    std::string arguments = op + ", {" + fmt::format("{}", fmt::join(operands, ", ")) + "}";
    if (!call.attrs.empty()) arguments += ", " + attr_list(call);
    std::string base = call.op_is_var ? call.op.text : op_ident(registry_.get(call.op.id));
    std::string name = names_.numbered(base);
    body_->line("dpl::Node* " + name + " = rewriter.call(" + arguments + ");");
    check(name + " == nullptr");
    return name;
  }

  // An extern rewriter builds the replacement itself; nullptr means it declines.
  std::string build_native(const CallExpr& call) {
    std::vector<std::string> arguments = {"rewriter"};
    for (const ExprPtr& operand : call.operands) arguments.push_back(build(*operand, nullptr));
    std::string name = names_.numbered(call.native->name);
    body_->line("dpl::Node* " + name + " = ::" + call.native->name + "(" +
                fmt::format("{}", fmt::join(arguments, ", ")) + ");");
    check(name + " == nullptr");
    return name;
  }

  // A call of an extern predicate, on matched values.
  std::string native_predicate(const CallExpr& call) {
    std::vector<std::string> arguments;
    for (const ExprPtr& operand : call.operands) arguments.push_back(bound_.at(std::get<VarExpr>(operand->node).name));
    return "::" + call.native->name + "(" + fmt::format("{}", fmt::join(arguments, ", ")) + ")";
  }

  // The full attribute list: the given values, the op's defaults elsewhere.
  std::string attr_list(const CallExpr& call) {
    const OpInfo& info = registry_.get(call.op.id);
    std::vector<std::string> values;
    for (size_t i = 0; i < info.attrs.size(); ++i) {
      const AttrSpec& spec = info.attrs[i];
      std::string value = attr_value_cpp(spec.default_value, needs_);
      for (const ExprAttr& attr : call.attrs) {
        if (attr.name != spec.name) continue;
        value = attr_value(*attr.value, spec.kind);
      }
      values.push_back("/*" + spec.name + "=*/" + value);
    }
    return "dpl::AttrList{" + fmt::format("{}", fmt::join(values, ", ")) + "}";
  }

  // An attribute value of `kind` on the right: a literal, a capture copied whole, or a computed value.
  std::string attr_value(const Expr& value, AttrKind kind) {
    if (const auto* literal = std::get_if<LiteralExpr>(&value.node)) return attr_value_cpp(literal->value, needs_);
    if (const auto* var = std::get_if<VarExpr>(&value.node);
        var != nullptr && !value.dtype_literal && value.attr_kind == kind && value.type != ExprType::Value) {
      return bound_.at(var->name);
    }
    std::string computed_value = computed(value);
    switch (kind) {
      case AttrKind::Int:
      case AttrKind::OptInt:
        return "static_cast<int64_t>(" + computed_value + ")";
      case AttrKind::Float:
      case AttrKind::OptFloat:
        return "static_cast<double>(" + computed_value + ")";
      case AttrKind::DType:
        needs_.string = true;
        if (value.type == ExprType::DType) return "std::string(dpl::dtype_name(" + computed_value + "))";
        return "std::string(" + computed_value + ")";
      case AttrKind::String:
      case AttrKind::OptString:
        needs_.string = true;
        return "std::string(" + computed_value + ")";
      default:
        return computed_value;  // Bool, and int lists from a capture
    }
  }

  // --- guards and computed values ---

  // A C++ expression for a guard-like expression. Property reads become locals, each preceded by the checks
  // that the property is known (a static dimension, a scalar constant); when it is not, the rule fails here.
  std::string computed(const Expr& expr) {
    return std::visit(
        Overloaded{
            [&](const LiteralExpr& e) { return literal_cpp(e.value); },
            [&](const VarExpr& e) { return name_cpp(e, expr); }, [&](const MemberExpr& e) { return property(e); },
            [&](const IndexExpr& e) { return shape_dim(e); },
            [&](const UnaryExpr& e) { return std::string(e.op == UnaryOp::Negate ? "-" : "!") + computed(*e.operand); },
            [&](const BinaryExpr& e) { return binary_cpp(e); },
            [&](const CallExpr& e) { return native_predicate(e); },
            [](const auto&) -> std::string { return "false"; },  // sema rejects anything else
        },
        expr.node);
  }

  std::string literal_cpp(const AttrValue& value) {
    return std::visit(Overloaded{
                          [](int64_t i) { return std::to_string(i); },
                          [](double d) { return format_double(d); },
                          [](bool b) -> std::string { return b ? "true" : "false"; },
                          [](const std::string& text) { return string_literal(text); },
                          [&](const auto&) { return attr_value_cpp(value, needs_); },
                      },
                      value);
  }

  std::string name_cpp(const VarExpr& var, const Expr& expr) {
    if (expr.dtype_literal) return dtype_constant(*expr.dtype_literal);
    const std::string& local = bound_.at(var.name);
    if (dims_.count(var.name) != 0) {  // a dimension read as a number must be static
      std::string key = "dim " + var.name;
      if (std::string known = property_local(key); !known.empty()) return known;
      check("!" + local + ".is_static()");
      std::string extent = names_.fresh(local + "_extent");
      body_->line("const int64_t " + extent + " = " + local + ".extent();");
      properties_[key] = extent;
      return extent;
    }
    if (expr.type != ExprType::Value && expr.type != ExprType::Op && expr.type != ExprType::Attr) needs_.variant = true;
    if (expr.type == ExprType::String || expr.type == ExprType::IntList) needs_.string = needs_.vector = true;
    switch (expr.type) {
      case ExprType::Number:
        return expr.attr_kind == AttrKind::Float ? "std::get<double>(" + local + ")"
                                                 : "std::get<int64_t>(" + local + ")";
      case ExprType::Bool:
        return "std::get<bool>(" + local + ")";
      case ExprType::String:
        return "std::get<std::string>(" + local + ")";
      case ExprType::IntList:
        return "std::get<std::vector<int64_t>>(" + local + ")";
      default:
        return local;  // a node, an op id, or a whole attribute value
    }
  }

  // A local holding a property, declared once per rule alternative.
  std::string property_local(const std::string& key) {
    auto it = properties_.find(key);
    return it == properties_.end() ? std::string() : it->second;
  }

  std::string property(const MemberExpr& member) {
    const std::string& node = bound_.at(std::get<VarExpr>(member.object->node).name);
    if (member.member == "dtype") return node + "->type()->dtype()";
    if (member.member == "uses") return "static_cast<int64_t>(" + node + "->num_users())";
    std::string key = node + "." + member.member;
    if (std::string local = property_local(key); !local.empty()) return local;
    std::string local = names_.fresh(node + "_" + member.member);
    if (member.member == "rank") {
      body_->line("const int " + local + " = " + node + "->type()->rank();");
      check(local + " < 0");
    } else {  // value
      if (constant_nodes_.count(node) != 0) {
        check("!" + node + "->literal().is_scalar()");
      } else {
        check(node + "->kind() != dpl::NodeKind::Constant || !" + node + "->literal().is_scalar()");
      }
      body_->line("const double " + local + " = " + node + "->literal().values[0];");
    }
    properties_[key] = local;
    return local;
  }

  std::string shape_dim(const IndexExpr& index) {
    const auto& member = std::get<MemberExpr>(index.object->node);
    const std::string& node = bound_.at(std::get<VarExpr>(member.object->node).name);
    int64_t position = std::get<int64_t>(std::get<LiteralExpr>(index.index->node).value);
    std::string key = node + ".shape[" + std::to_string(position) + "]";
    if (std::string local = property_local(key); !local.empty()) return local;
    std::string type = node + "->type()";
    std::string dims = type + "->dims()";
    // A negative position counts from the end, as in Python.
    std::string at = position >= 0 ? std::to_string(position)
                                   : "static_cast<size_t>(" + type + "->rank() - " + std::to_string(-position) + ")";
    int64_t needed_rank = position >= 0 ? position + 1 : -position;
    check("!" + type + "->has_shape() || " + type + "->rank() < " + std::to_string(needed_rank) + " || !" + dims + "[" +
          at + "].is_static()");
    std::string local =
        names_.fresh(node + "_shape_" + (position >= 0 ? "" : "m") + std::to_string(std::abs(position)));
    body_->line("const int64_t " + local + " = " + dims + "[" + at + "].extent();");
    properties_[key] = local;
    return local;
  }

  // A list or string attribute value, built once (a function-local static), not at every match; one per value.
  std::string constant_attr(const AttrValue& value, const std::string& base) {
    std::string text = attr_value_cpp(value, needs_);
    std::string key = "constant " + text;
    if (std::string local = property_local(key); !local.empty()) return local;
    std::string name = names_.fresh(base);
    body_->line("static const dpl::AttrValue " + name + " = " + text + ";");
    properties_[key] = name;
    return name;
  }

  bool is_dim(const Expr& expr) const {
    const auto* var = std::get_if<VarExpr>(&expr.node);
    return var != nullptr && dims_.count(var->name) != 0;
  }

  std::string binary_cpp(const BinaryExpr& binary) {
    bool equality = binary.op == BinaryOp::Equal || binary.op == BinaryOp::NotEqual;
    std::string op(binary_op_spelling(binary.op));
    if (equality && is_dim(*binary.lhs) && is_dim(*binary.rhs)) {
      // Two dimensions compare as dimensions, so that equal symbolic ones (`n` and `n`) are equal.
      return "(" + bound_.at(std::get<VarExpr>(binary.lhs->node).name) + " " + op + " " +
             bound_.at(std::get<VarExpr>(binary.rhs->node).name) + ")";
    }
    if (equality && (binary.lhs->type == ExprType::Attr || binary.rhs->type == ExprType::Attr)) {
      return "(" + whole_attr(*binary.lhs) + " " + op + " " + whole_attr(*binary.rhs) + ")";
    }
    if (equality && binary.lhs->type != binary.rhs->type) {  // a dtype and a string holding a dtype name
      auto as_text = [&](const Expr& side) {
        std::string text = computed(side);
        needs_.string_view = true;
        return side.type == ExprType::DType ? "dpl::dtype_name(" + text + ")" : "std::string_view(" + text + ")";
      };
      return "(" + as_text(*binary.lhs) + " " + op + " " + as_text(*binary.rhs) + ")";
    }
    if (equality && binary.lhs->type == ExprType::IntList) {
      return "(" + whole_attr(*binary.lhs) + " " + op + " " + whole_attr(*binary.rhs) + ")";
    }
    std::string lhs = computed(*binary.lhs);
    std::string rhs = computed(*binary.rhs);
    if (binary.op == BinaryOp::Divide) {
      return "(static_cast<double>(" + lhs + ") / static_cast<double>(" + rhs + "))";
    }
    return "(" + lhs + " " + op + " " + rhs + ")";
  }

  // A side of an equality between whole attribute values: a capture as it is, a literal as a constant.
  std::string whole_attr(const Expr& side) {
    if (const auto* literal = std::get_if<LiteralExpr>(&side.node)) {
      if (is_scalar_attr(literal->value)) return "dpl::AttrValue(" + attr_value_cpp(literal->value, needs_) + ")";
      return constant_attr(literal->value, "literal");
    }
    return bound_.at(std::get<VarExpr>(side.node).name);
  }

  const OpRegistry& registry_;
  const Pattern& pattern_;
  const Expr* guard_;
  const std::vector<LetBinding>& lets_;
  const Expr& rhs_;
  std::map<std::string, std::string> properties_;  // "x.rank" -> its local
  std::set<std::string> constant_nodes_;           // locals already checked to be constants
  std::set<std::string> dims_;                     // variables bound to a dpl::Dim
  Needs& needs_;
  Mentions pattern_mentions_;  // in the pattern only
  Mentions mentions_;          // in the pattern and the right-hand side
  NameTable names_;
  std::map<std::string, std::string> bound_;  // variable -> C++ local
  CodeWriter* body_ = nullptr;
  int loops_ = 0;
};

// Stands for a rule function's name while its body is compared with the other alternatives'.
constexpr const char* kFunctionName = "@function@";

// One alternative of one rule, as dispatched by the pass matcher.
struct Alternative {
  size_t rule_index;
  const Rule* rule;
  OpId root_op;
  std::string function;
  std::string comment;
};

std::string output_stem(const std::string& basename) {
  if (basename.size() > 4 && basename.ends_with(".dpl")) return basename.substr(0, basename.size() - 4);
  return basename;
}

void open_namespace(CodeWriter& out, const std::string& name) { out.line("namespace " + name + " {"); }
void close_namespace(CodeWriter& out, const std::string& name) { out.line("}  // namespace " + name); }

// The pass's matcher: dispatch on the root op, then the alternatives rooted there in priority order.
void emit_matcher(CodeWriter& out, const Pass& pass, const std::string& matcher,
                  const std::vector<Alternative>& alternatives, const OpRegistry& registry) {
  // Root ops in order of first appearance, so the output follows the file.
  std::vector<OpId> root_ops;
  for (const Alternative& alternative : alternatives) {
    if (std::find(root_ops.begin(), root_ops.end(), alternative.root_op) == root_ops.end()) {
      root_ops.push_back(alternative.root_op);
    }
  }
  out.line("// Tries the rules of pass " + pass.name + " on `root`; returns the index of the rule that fired, or -1.");
  if (root_ops.empty()) {
    out.line("int " + matcher + "(dpl::Rewriter&, dpl::Node*) { return -1; }");
    out.blank();
    return;
  }
  out.line("int " + matcher + "(dpl::Rewriter& rewriter, dpl::Node* root) {");
  out.indent();
  out.line("if (!root->is_call()) return -1;");
  out.line("switch (root->op()) {");
  out.indent();
  for (OpId op : root_ops) {
    out.line("case " + op_constant(registry.get(op)) + ":");
    out.indent();
    for (const Alternative& alternative : alternatives) {
      if (alternative.root_op != op) continue;
      out.line(alternative.comment);
      out.line(fmt::format("if ({}(rewriter, root)) return {};", alternative.function, alternative.rule_index));
    }
    out.line("return -1;");
    out.dedent();
  }
  out.line("default:");
  out.indent();
  out.line("return -1;");
  out.dedent();
  out.dedent();
  out.line("}");
  out.dedent();
  out.line("}");
  out.blank();
}

}  // namespace

bool is_cpp_keyword(std::string_view name) { return cpp_keywords().count(name) != 0; }

EmittedCpp emit_cpp(const AstFile& file, const EmitOptions& options, const OpRegistry& registry) {
  EmittedCpp result;
  std::string stem = output_stem(file.basename);
  result.header_name = stem + ".dpl.h";
  result.source_name = stem + ".dpl.cpp";
  const std::string banner = "// Generated by dplc from " + file.basename + "; do not edit.";

  // File-level names: the public pass functions first, so that they keep their documented spelling.
  NameTable names;
  std::map<const Pass*, std::string> pass_functions;
  for (const Pass& pass : file.passes) pass_functions[&pass] = names.fresh(pass.name + "_pass");

  // --- header ---
  CodeWriter header;
  header.line(banner);
  header.line("#pragma once");
  header.blank();
  header.line("#include \"dpl/rewrite/driver.h\"");
  header.blank();
  open_namespace(header, options.namespace_name);
  header.blank();
  for (const Pass& pass : file.passes) {
    std::string summary =
        "// pass " + pass.name + (pass.description.empty() ? "" : ": " + comment_text(pass.description));
    header.line(summary);
    header.line("const dpl::PassDef& " + pass_functions[&pass] + "();");
  }
  header.blank();
  close_namespace(header, options.namespace_name);
  result.header = header.str();

  // --- rule functions ---
  CodeWriter rules_code;
  Needs needs;
  std::map<const Pass*, std::vector<Alternative>> alternatives;
  for (const Pass& pass : file.passes) {
    for (size_t rule_index = 0; rule_index < pass.rules.size(); ++rule_index) {
      const Rule& rule = pass.rules[rule_index];
      std::vector<PatternPtr> expanded = expand_alternatives(*rule.lhs);
      std::string location = file.basename + ":" + std::to_string(rule.name_loc.line);
      // Alternatives that differ only in the root op (which the dispatch switch has checked) share a function.
      struct Function {
        std::string name;
        std::string text;
        const Pattern* pattern;  // the first alternative's
        std::vector<size_t> alternatives;
      };
      std::vector<Function> functions;
      std::map<std::string, size_t> function_of_body;
      const std::string guard = rule.guard ? " where " + to_string(*rule.guard) : "";
      const std::string header = "// rule " + rule.name + " (" + location + ")";
      for (size_t k = 0; k < expanded.size(); ++k) {
        CodeWriter function;
        RuleEmitter(registry, *expanded[k], rule, needs).emit(function, kFunctionName);
        auto [shared, fresh] = function_of_body.emplace(function.str(), functions.size());
        if (fresh) {
          std::string name = names.fresh(expanded.size() == 1 ? "rule_" + rule.name
                                                              : "rule_" + rule.name + "_" + std::to_string(k + 1));
          std::string text = function.str();
          text.replace(text.find(kFunctionName), std::string_view(kFunctionName).size(), name);
          functions.push_back(Function{name, std::move(text), expanded[k].get(), {}});
        }
        Function& target = functions[shared->second];
        target.alternatives.push_back(k + 1);
        Alternative alternative;
        alternative.rule_index = rule_index;
        alternative.rule = &rule;
        alternative.root_op = root_call(*expanded[k]).ops[0].id;
        alternative.function = target.name;
        alternative.comment = header;
        if (expanded.size() > 1) alternative.comment += fmt::format(", alternative {} of {}", k + 1, expanded.size());
        alternatives[&pass].push_back(std::move(alternative));
      }
      for (const Function& function : functions) {
        if (function.alternatives.size() == 1) {
          rules_code.line(expanded.size() == 1 ? header
                                               : header + fmt::format(", alternative {} of {}",
                                                                      function.alternatives[0], expanded.size()));
          rules_code.line("// " + comment_text(to_string(*function.pattern) + guard + " => " + rhs_to_string(rule)));
        } else {
          std::string which =
              function.alternatives.size() == expanded.size()
                  ? fmt::format("all {} alternatives", expanded.size())
                  : fmt::format("alternatives {} of {}", fmt::join(function.alternatives, ", "), expanded.size());
          rules_code.line(header + ", " + which + " (they differ in the root op only)");
          rules_code.line("// " + comment_text(to_string(*rule.lhs) + guard + " => " + rhs_to_string(rule)));
        }
        rules_code.text(function.text);
        rules_code.blank();
      }
    }
  }

  // --- source ---
  CodeWriter source;
  source.line(banner);
  source.line("#include \"" + result.header_name + "\"");
  source.blank();
  std::vector<std::string> system_includes = {"<cstdint>"};
  if (needs.string) system_includes.push_back("<string>");
  if (needs.string_view) system_includes.push_back("<string_view>");
  if (needs.variant) system_includes.push_back("<variant>");
  if (needs.vector) system_includes.push_back("<vector>");
  for (const std::string& include : system_includes) source.line("#include " + include);
  source.blank();
  source.line("#include \"dpl/ir/graph.h\"");
  source.line("#include \"dpl/ir/op_registry.h\"");
  source.line("#include \"dpl/rewrite/driver.h\"");
  source.blank();
  // The headers of extern predicates and rewriters, as written, each once.
  std::vector<std::string> extern_headers;
  for (const ExternDecl& decl : file.externs) {
    if (std::find(extern_headers.begin(), extern_headers.end(), decl.header) == extern_headers.end())
      extern_headers.push_back(decl.header);
  }
  for (const std::string& header_path : extern_headers) source.line("#include " + string_literal(header_path));
  if (!extern_headers.empty()) source.blank();
  open_namespace(source, options.namespace_name);
  source.line("namespace {");
  source.blank();
  std::string rules_text = rules_code.str();  // each rule function ends with a blank line already
  if (rules_text.ends_with('\n')) rules_text.pop_back();
  source.line(rules_text);

  // Per pass: the dispatching matcher and the rule table (file-local), then the public PassDef accessors, then
  // the registrations.
  std::map<const Pass*, std::pair<std::string, std::string>> matcher_and_table;
  for (const Pass& pass : file.passes) {
    std::string matcher = names.fresh("match_" + pass.name);
    std::string rule_table = names.fresh(pass.name + "_rules");
    matcher_and_table[&pass] = {matcher, rule_table};
    emit_matcher(source, pass, matcher, alternatives[&pass], registry);
    if (pass.rules.empty()) {
      source.line("const std::span<const dpl::RuleInfo> " + rule_table + ";");
    } else {
      source.line("const dpl::RuleInfo " + rule_table + "[] = {");
      source.indent();
      for (const Rule& rule : pass.rules) {
        source.line("{" + string_literal(rule.name) + ", " +
                    string_literal(file.basename + ":" + std::to_string(rule.name_loc.line)) + "},");
      }
      source.dedent();
      source.line("};");
    }
    source.blank();
  }
  source.line("}  // namespace");
  source.blank();
  for (const Pass& pass : file.passes) {
    const auto& [matcher, rule_table] = matcher_and_table[&pass];
    source.line("const dpl::PassDef& " + pass_functions[&pass] + "() {");
    source.indent();
    source.line("static const dpl::PassDef pass{" + string_literal(pass.name) + ", " +
                string_literal(pass.description) + ", " + string_literal(file.basename) + ", " + rule_table + ", &" +
                matcher + "};");
    source.line("return pass;");
    source.dedent();
    source.line("}");
    source.blank();
  }
  source.line("namespace {");
  for (const Pass& pass : file.passes) {
    source.line("const dpl::PassRegistration " + names.fresh(pass.name + "_registration") + "(" +
                pass_functions[&pass] + "());");
  }
  source.line("}  // namespace");
  source.blank();
  close_namespace(source, options.namespace_name);
  result.source = source.str();
  return result;
}

}  // namespace dpl::compiler
