// C++ emitter: the match steps of each rule alternative, merged per pass and root op into a decision tree
// (decision_tree.h) printed as one matcher function per root op, the dispatching matcher and the pass definitions.
#include "dpl/compiler/emit_cpp.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <utility>

#include "dpl/compiler/decision_tree.h"
#include "dpl/compiler/match_order.h"
#include "dpl/compiler/required_ops.h"
#include "dpl/ir/graph.h"
#include "dpl/ir/opaque_ops.h"

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

// Built-in ops are compile-time constants; an op declared in the .dpl file is the id its registration returned
// (emit_op_registrations).
std::string op_constant(const OpInfo& info) {
  if (info.id < std::size(kBuiltinOpIdents)) return std::string("dpl::op::") + kBuiltinOpIdents[info.id];
  return "dpl_op_" + op_ident(info);
}

// `constexpr dpl::OpId NAME[] = {dpl::op::add, ...};`: a table of op ids. An op declared in the file has its id at
// run time only: then the table is `const`, initialized at start-up.
std::string op_table(const std::string& name, const std::vector<OpId>& ops, const OpRegistry& registry) {
  const bool builtin =
      std::all_of(ops.begin(), ops.end(), [](OpId op) { return op < std::size(kBuiltinOpIdents); });
  std::vector<std::string> constants;
  for (OpId op : ops) constants.push_back(op_constant(registry.get(op)));
  return std::string(builtin ? "constexpr" : "const") + " dpl::OpId " + name + "[] = {" +
         fmt::format("{}", fmt::join(constants, ", ")) + "};";
}

// What the generated source needs beyond the dpl headers.
struct Needs {
  bool string = false;
  bool vector = false;
  bool variant = false;  // std::monostate, std::get
  bool string_view = false;
  bool algorithm = false;  // std::find (group rules)
  bool utility = false;    // std::pair (multi-root rules)
  bool dominators = false;  // dpl::find_dominated_parent (dominator patterns)
  bool opaque_ops = false;  // dpl::infer_onnx_opaque (declared ops in the onnx. namespace)
  bool optional = false;    // std::optional (guards comparing dimensions)
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

// `read` holds `literal` (dpl::attr_is_*): no AttrValue is built for the literal, no static to guard.
std::string attr_literal_test(const std::string& read, const AttrValue& literal) {
  return std::visit(
      Overloaded{
          [&](std::monostate) { return fmt::format("dpl::attr_is_none({})", read); },
          [&](bool b) { return fmt::format("dpl::attr_is_bool({}, {})", read, b); },
          [&](int64_t i) { return fmt::format("dpl::attr_is_int({}, {})", read, i); },
          [&](double d) { return fmt::format("dpl::attr_is_float({}, {})", read, format_double(d)); },
          [&](const std::string& text) { return fmt::format("dpl::attr_is_string({}, {})", read, string_literal(text)); },
          [&](const std::vector<int64_t>& list) {
            return fmt::format("dpl::attr_is_ints({}, {{{}}})", read, fmt::join(list, ", "));
          },
      },
      literal);
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

// The names of one dispatch group's matcher function: a node reached by the same path, or a constant with the
// same value, gets the same local in every rule of the group, so that the rules' steps are textually equal and the
// tree can share them. Names elsewhere in a rule (its tail) come from a copy, so they collide with none of these.
class GroupNames {
 public:
  // `numbered`: `add1`, `add2`, ... for nodes; otherwise `base` first (for named constants).
  std::string shared(const std::string& key, const std::string& base, bool numbered = true) {
    auto [it, fresh] = memo_.emplace(base + "@" + key, std::string());
    if (fresh) it->second = numbered ? table_.numbered(base) : table_.fresh(base);
    return it->second;
  }
  const NameTable& table() const { return table_; }

 private:
  NameTable table_;
  std::map<std::string, std::string> memo_;
};

// What a pattern requires of a node before anything else: to be a call of one op, or a node of one kind.
struct Head {
  std::string constant;    // "dpl::op::matmul", "dpl::NodeKind::Constant"
  std::string case_label;  // a built-in op's constant, usable as a case label
  bool is_op = false;
  // Node::head_key() of the nodes it holds, where known when dplc runs (not for an op declared in the .dpl file,
  // numbered when the pass registers it).
  std::optional<uint32_t> key;
  std::string holds(const std::string& node) const {
    return is_op ? node + "->is_call_of(" + constant + ")" : node + "->kind() == " + constant;
  }
  std::string fails(const std::string& node) const {
    return is_op ? "!" + node + "->is_call_of(" + constant + ")" : node + "->kind() != " + constant;
  }
};

// The steps of one alternative of one rule (single-root rules: the matching prefix the decision tree may share,
// and the tail), or, for a multi-root rule (MultiRootEmitter), its whole matcher function written directly.
class RuleEmitter {
 public:
  RuleEmitter(const OpRegistry& registry, const Pattern& pattern, const Rule& rule, Needs& needs, GroupNames& group)
      : registry_(registry), pattern_(&pattern), guard_(rule.guard.get()), lets_(rule.lets), rhs_(rule.rhs.get()),
        partition_(rule.kind == Rule::Kind::Partition ? &rule.name : nullptr), needs_(needs), group_(&group) {
    count_mentions(pattern, pattern_mentions_);
    count_rule_mentions(rule);
    collect_bound_patterns(pattern);
  }

  // The heads the root's operand patterns require (RuleLeaf::root_heads): unknown for a composite call, a
  // variadic one, or a tuple item.
  OperandHeads root_heads() const {
    OperandHeads heads;
    if (root_is_item(*pattern_)) return heads;
    const CallPattern& call = root_call(*pattern_);
    if (call.composite || call.rest) return heads;
    heads.known = true;
    heads.commutative = call.operands.size() == 2 && registry_.get(call.ops[0].id).has(kCommutative);
    for (const PatternPtr& operand : call.operands) {
      const std::optional<Head> head = head_of(*operand);
      heads.heads.push_back(head ? head->constant : "");
    }
    return heads;
  }

  // Whether a commutative call whose operand patterns have different heads takes its operands in the order of
  // their heads (Node::head_key()), the same for every rule of the group: set where the group has rules to share
  // it with (one rule alone tests the head it wants, one check fewer).
  void order_operands_by_head(bool enabled) { order_by_head_ = enabled; }

  // The matching steps, then the tail: `once`, the aliases of the variables the rest reads, the guard, the
  // right-hand side and the final action.
  void build_steps(std::vector<MatchStep>& prefix, std::vector<MatchStep>& tail, bool once, bool in_place) {
    steps_ = &prefix;
    match(*pattern_, "root", /*op_known=*/true);
    steps_ = &tail;
    if (once) check("rewriter.created_in_run(root)");
    define_aliases();
    check_dimensions(*pattern_);
    if (guard_ != nullptr) check("!" + computed(*guard_));
    std::string action;
    if (partition_ != nullptr) {
      action = partition_call();
    } else {
      // Properties read by computed attributes are checked before any node is built.
      std::vector<const Expr*> attr_values;
      for (const LetBinding& let : lets_) computed_attrs(*let.value, attr_values);
      computed_attrs(*rhs_, attr_values);
      for (const Expr* value : attr_values) computed(*value);
      for (const LetBinding& let : lets_) bound_[let.name] = local(build(*let.value, nullptr), let.name, 2);
      action = replace_action(in_place);
    }
    tail.push_back(MatchStep{MatchStep::Kind::Action, action});
    drop_unread_definitions(prefix, tail);
  }

 protected:
  // An alternative of a multi-root rule (MultiRootEmitter): mentions are counted over every root, guard and
  // rewrite.
  RuleEmitter(const OpRegistry& registry, const Rule& rule, const RootsAlternative& roots, Needs& needs)
      : registry_(registry), pattern_(nullptr), guard_(rule.guard.get()), lets_(rule.lets), rhs_(nullptr),
        partition_(nullptr), needs_(needs), pattern_mentions_(root_mentions(rule, roots)), group_(nullptr) {
    count_rule_mentions(rule);
    for (const std::vector<PatternPtr>& root : roots.roots) {
      for (const PatternPtr& alternative : root) count_dimension_checks(*alternative);
    }
  }

  void count_rule_mentions(const Rule& rule) {
    mentions_ = pattern_mentions_;
    if (pattern_ != nullptr) count_dimension_checks(*pattern_);
    if (guard_ != nullptr) count_mentions(*guard_, mentions_);
    for (const LetBinding& let : lets_) count_mentions(*let.value, mentions_);
    if (rhs_ != nullptr) count_mentions(*rhs_, mentions_);
    for (const RootRewrite& rewrite : rule.rewrites) {
      ++mentions_[rewrite.root];
      count_mentions(*rewrite.value, mentions_);
    }
  }

  // A dimension expression's check reads its hidden variable and the variables it names after the pattern.
  void count_dimension_checks(const Pattern& pattern) {
    for_each_dimension_check(pattern, [&](const Expr& check) { count_mentions(check, mentions_); });
  }

  // The dimension expressions of a matched root (or alternative), compared as a guard compares dimensions.
  void check_dimensions(const Pattern& pattern) {
    for_each_dimension_check(pattern, [&](const Expr& dimension) { check("!" + computed(dimension)); });
  }

  // After a multi-root rule has matched, a right-hand side that does not build declines the rule (the roots'
  // candidate loops are not resumed: the graph may have gained users while building).
  std::string fail() const { return loops_ > 0 && !committed_ ? "continue;" : "return false;"; }
  // Steps are recorded for the decision tree; a multi-root rule's statements go straight into its function body.
  bool recording() const { return body_ == nullptr; }
  using Placement = MatchStep::Placement;
  // `placement`: whether the decision tree may run the check later than written (see MatchStep::Placement).
  void check(const std::string& failure_condition, Placement placement = Placement::Structure) {
    if (recording()) {
      steps_->push_back(MatchStep{MatchStep::Kind::Check, failure_condition});
      steps_->back().placement = placement;
    } else {
      body_->line("if (" + failure_condition + ") " + fail());
    }
  }
  // `subject` must have `head`: the first check on a node, so that rules testing one node share it.
  void check_head(const std::string& subject, const Head& head) {
    if (!recording()) return check(head.fails(subject));
    MatchStep step{MatchStep::Kind::Check, head.fails(subject)};
    step.subject = subject;
    step.head = head.constant;
    step.case_label = head.case_label;
    steps_->push_back(std::move(step));
  }
  // A declaration without side effects; `declares`, when given, is dropped if nothing reads it.
  // `placement` as for check(): a definition that reads what a literal check guards moves with it.
  void define(const std::string& text, const std::string& declares = "", Placement placement = Placement::Structure) {
    if (recording()) {
      steps_->push_back(MatchStep{MatchStep::Kind::Define, text, declares});
      steps_->back().placement = placement;
    } else {
      body_->line(text);
    }
  }
  // A statement that builds part of the right-hand side.
  void statement(const std::string& text) {
    if (recording()) {
      steps_->push_back(MatchStep{MatchStep::Kind::Statement, text});
    } else {
      body_->line(text);
    }
  }
  bool read_later(const std::string& variable) const {
    auto it = mentions_.find(variable);
    return it != mentions_.end() && it->second > 1;
  }

  // Makes `subject` a local when it is needed more than once (a plain name already is one). While recording, a
  // node always gets its local (dropped again when nothing reads it), named after its path across the group.
  std::string local(const std::string& subject, const std::string& base, int uses) {
    bool is_name = subject.find_first_of("(->") == std::string::npos;
    if (is_name) return subject;
    if (recording()) {
      if (auto it = node_locals_.find(subject); it != node_locals_.end()) return it->second;
      std::string name = group_->shared(subject, base);
      define("dpl::Node* " + name + " = " + subject + ";", name);
      node_locals_[subject] = name;
      return name;
    }
    if (uses <= 1) return subject;
    std::string name = names_.numbered(base);
    body_->line("dpl::Node* " + name + " = " + subject + ";");
    return name;
  }

  // The local of a node matched at `path`, if it has one.
  std::string resolved(const std::string& path) const {
    auto it = node_locals_.find(path);
    return it == node_locals_.end() ? path : it->second;
  }

  // While recording, a variable stands for the expression it matched (a later mention compares expressions);
  // the tail declares a local for it when the guard or the right-hand side reads it (define_aliases).
  void alias(const std::string& variable, const std::string& expression, const std::string& declaration) {
    bound_[variable] = expression;
    aliases_.emplace_back(variable, declaration);
  }

  void define_aliases() {
    names_ = group_->table();
    for (const auto& [variable, declaration] : aliases_) {
      auto all = mentions_.find(variable);
      auto in_pattern = pattern_mentions_.find(variable);
      if (all == mentions_.end() || all->second <= (in_pattern == pattern_mentions_.end() ? 0 : in_pattern->second)) {
        continue;
      }
      std::string expression = resolved(bound_.at(variable));
      std::string name = names_.fresh(variable);
      define(declaration + name + " = " + expression + ";", name);
      bound_[variable] = name;
    }
  }

  // Binds `variable` to `subject`, or checks that it is the same node as before.
  // Returns the C++ expression for the bound value.
  std::string bind(const std::string& variable, const std::string& subject) {
    if (auto it = bound_.find(variable); it != bound_.end()) {
      check(subject + " != " + resolved(it->second), Placement::Value);
      return it->second;
    }
    if (recording()) {
      alias(variable, subject, "dpl::Node* ");
      return subject;
    }
    if (!read_later(variable)) return subject;
    std::string name = names_.fresh(variable);
    body_->line("dpl::Node* " + name + " = " + subject + ";");
    bound_[variable] = name;
    return name;
  }

  // The head a pattern requires, if any; a repeated name has the head of the pattern that binds it
  // (`add(add(x, c: const), c)`: both operands have one).
  std::optional<Head> head_of(const Pattern& pattern, bool through_names = true) const {
    return std::visit(Overloaded{
                          [&](const BindPattern& p) { return head_of(*p.inner, through_names); },
                          [&](const VarPattern& p) -> std::optional<Head> {
                            const auto it = bound_patterns_.find(p.name);
                            if (!through_names || it == bound_patterns_.end()) return std::nullopt;
                            return head_of(*it->second, false);
                          },
                          [&](const CallPattern& p) -> std::optional<Head> {
                            if (p.composite) return kind_head("FuncCall");
                            return head_of_call(registry_.get(p.ops[0].id));
                          },
                          [&](const ConstPattern&) -> std::optional<Head> { return kind_head("Constant"); },
                          [&](const ParamPattern&) -> std::optional<Head> { return kind_head("Param"); },
                          [&](const ItemPattern&) -> std::optional<Head> { return kind_head("TupleItem"); },
                          [&](const TuplePattern&) -> std::optional<Head> { return kind_head("Tuple"); },
                          [](const auto&) -> std::optional<Head> { return std::nullopt; },
                      },
                      pattern.node);
  }
  static Head kind_head(const std::string& kind) {
    static const std::map<std::string, dpl::NodeKind> kinds = {
        {"Param", dpl::NodeKind::Param},         {"Constant", dpl::NodeKind::Constant},
        {"FuncCall", dpl::NodeKind::FuncCall},   {"TupleItem", dpl::NodeKind::TupleItem},
        {"Tuple", dpl::NodeKind::Tuple}};
    return Head{"dpl::NodeKind::" + kind, "", false, dpl::Node::kind_head_key(kinds.at(kind))};
  }
  static std::optional<Head> head_of_call(const OpInfo& info) {
    bool builtin = info.id < std::size(kBuiltinOpIdents);
    return Head{op_constant(info), builtin ? op_constant(info) : "", true,
                builtin ? std::optional<uint32_t>(info.id) : std::nullopt};
  }

  void match(const Pattern& pattern, const std::string& subject, bool op_known) {
    std::visit(Overloaded{
                   [&](const WildcardPattern&) { leaf_subjects_[&pattern] = subject; },
                   [&](const VarPattern& p) { leaf_subjects_[&pattern] = bind(p.name, subject); },
                   [&](const BindPattern& p) { match(*p.inner, bind(p.name, subject), op_known); },
                   [&](const ConstPattern& p) { leaf_subjects_[&pattern] = match_const(p, subject); },
                   [&](const TypePattern& p) { leaf_subjects_[&pattern] = match_type(p, subject); },
                   [&](const ParamPattern& p) {
                     check_head(subject, kind_head("Param"));
                     std::string node = local(subject, "param", (p.name ? 1 : 0) + (partition_ != nullptr ? 1 : 0));
                     leaf_subjects_[&pattern] = node;
                     if (p.name) check(node + "->name() != " + string_literal(*p.name), Placement::Value);
                   },
                   [&](const ItemPattern& p) {
                     check_head(subject, kind_head("TupleItem"));
                     bool deeper = !std::holds_alternative<WildcardPattern>(p.tuple->node);
                     std::string node = local(subject, "item", (p.index ? 1 : 0) + (deeper ? 1 : 0));
                     if (p.index) check(node + "->index() != " + std::to_string(*p.index), Placement::Value);
                     match(*p.tuple, node + "->operand(0)", false);
                   },
                   [&](const TuplePattern& p) {
                     check_head(subject, kind_head("Tuple"));
                     std::string node = local(subject, "tuple", 1 + static_cast<int>(p.fields.size()));
                     if (!p.rest || !p.fields.empty()) {
                       check(node + "->num_operands() " + (p.rest ? "< " : "!= ") + std::to_string(p.fields.size()));
                     }
                     bind_rest(p.rest, node, p.fields.size());
                     for (size_t i = 0; i < p.fields.size(); ++i) {
                       match(*p.fields[i], node + "->operand(" + std::to_string(i) + ")", false);
                     }
                   },
                   [&](const CallPattern& p) { match_call(p, subject, op_known); },
                   [](const AltPattern&) {},  // expanded into separate alternatives before emission
                   [&](const DominatorPattern& p) { match_dominator(p, subject, op_known); },
               },
               pattern.node);
  }

  // `xs...` from operand (field) `first` of `node` on: a list of the operands; `...` binds nothing.
  void bind_rest(const std::optional<RestPattern>& rest, const std::string& node, size_t first) {
    if (rest && partition_ != nullptr) rest_subjects_[&*rest] = node;  // its operands are inputs
    if (!rest || rest->name.empty()) return;
    lists_.insert(rest->name);
    const std::string operands = node + "->operands().subspan(" + std::to_string(first) + ")";
    if (recording()) return alias(rest->name, operands, "const std::span<dpl::Node* const> ");
    if (!read_later(rest->name)) return;
    std::string name = names_.fresh(rest->name);
    body_->line("const std::span<dpl::Node* const> " + name + " = " + operands + ";");
    bound_[rest->name] = name;
  }

  // `dominates(parent, path, child)` (docs/semantics.md): the child at `subject`, then the walk up to the one
  // parent node (dpl::find_dominated_parent, shared with the rule interpreter), then the parent pattern there.
  void match_dominator(const DominatorPattern& dominator, const std::string& subject, bool op_known) {
    match(*dominator.child, subject, op_known);
    needs_.dominators = true;
    const OpInfo& head = registry_.get(root_call(*dominator.parent).ops[0].id);
    std::vector<std::string> path;
    for (OpId op : dominator.path_ops) path.push_back(op_constant(registry_.get(op)));
    const std::string path_list = fmt::format("{}", fmt::join(path, ", "));
    std::string on_path = "[](const dpl::Node*) { return false; }";  // a class without ops
    if (!path.empty()) {
      const std::string path_ops = recording() ? group_->shared(path_list, "path_ops") : names_.numbered("path_ops");
      define("static const dpl::OpId " + path_ops + "[] = {" + path_list + "};", path_ops);
      on_path = "[](const dpl::Node* node) { return dpl::is_call_of_any(node, " + path_ops + "); }";
    }
    const std::string child = resolved(subject);
    const std::string walk = "dpl::find_dominated_parent(rewriter.function(), " + child +
                             ", [](const dpl::Node* node) { return node->is_call_of(" + op_constant(head) + "); }, " +
                             on_path + ")";
    const std::string parent = recording() ? group_->shared(walk, "parent") : names_.numbered("parent");
    define("dpl::Node* " + parent + " = " + walk + ";", parent);
    check(parent + " == nullptr");
    // The walk returns a call of the parent's op; the head is checked again all the same, as a name the parent
    // pattern repeats stands for the node it was first bound to.
    match(*dominator.parent, parent, /*op_known=*/false);
  }

  // Returns the C++ expression of the matched node.
  std::string match_const(const ConstPattern& constant, const std::string& subject) {
    check_head(subject, kind_head("Constant"));
    int uses = (constant.value || constant.dtype ? 1 : 0) + (partition_ != nullptr ? 1 : 0);
    std::string node = local(subject, "constant", uses);
    if (constant.value) {
      // Three steps, the first two textually equal in every rule that tests this node's value: rules that differ
      // only in the constant share them in the decision tree and then compare a local, one compare per rule.
      std::string is_scalar = "!" + node + "->is_scalar_constant()";
      if (!constant.integer_value && !constant.dtype) is_scalar += " || !dpl::is_float(" + node + "->constant_dtype())";
      check(is_scalar, Placement::Literal);
      const std::string read = node + "->scalar_value()";
      const std::string scalar = recording() ? group_->shared(read, "scalar") : names_.numbered("scalar");
      define("const double " + scalar + " = " + read + ";", scalar, Placement::Literal);
      check(scalar + " != " + format_double(*constant.value), Placement::Literal);
      if (recording()) {  // rules that differ only in this value: a dispatch on it (decision_tree.cpp)
        steps_->back().subject = scalar;
        steps_->back().literal = *constant.value;
      }
    }
    if (constant.dtype) check(node + "->constant_dtype() != " + dtype_constant(*constant.dtype), Placement::Literal);
    return node;
  }

  // Returns the C++ expression of the matched node.
  std::string match_type(const TypePattern& type, const std::string& subject) {
    std::string node = local(subject, "tensor", 2);
    std::string type_of = node + "->type()";
    check("!" + type_of + "->is_tensor()", Placement::Value);
    if (type.dtype) check(type_of + "->dtype() != " + dtype_constant(*type.dtype), Placement::Value);
    if (!type.shape) return node;
    check(type_of + "->rank() != " + std::to_string(type.shape->size()), Placement::Value);
    bool reads_dims = std::any_of(type.shape->begin(), type.shape->end(),
                                  [](const DimPattern& dim) { return dim.kind != DimPattern::Kind::Any; });
    if (!reads_dims) return node;
    check("!" + type_of + "->has_shape()", Placement::Value);
    for (size_t i = 0; i < type.shape->size(); ++i) {
      const DimPattern& dim = (*type.shape)[i];
      std::string read = type_of + "->dims()[" + std::to_string(i) + "]";
      if (dim.kind == DimPattern::Kind::Fixed) {
        check(read + " != dpl::Dim::fixed(" + std::to_string(dim.extent) + ")", Placement::Value);
      } else if (dim.binds()) {
        if (auto it = bound_.find(dim.name); it != bound_.end()) {
          check(read + " != " + it->second, Placement::Value);
        } else if (recording()) {
          alias(dim.name, read, "const dpl::Dim ");
          dims_.insert(dim.name);
        } else if (read_later(dim.name)) {
          std::string name = names_.fresh(dim.name);
          body_->line("const dpl::Dim " + name + " = " + read + ";");
          bound_[dim.name] = name;
          dims_.insert(dim.name);
        }
      }
    }
    return node;
  }

  // `composite("name")(p, q)`: a call of a module function whose Composite attribute is `name`.
  void match_composite_call(const CallPattern& call, const std::string& subject, bool kind_known) {
    if (!kind_known) check_head(subject, kind_head("FuncCall"));
    std::string node = local(subject, "composite_call", 2 + static_cast<int>(call.operands.size()));
    needs_.string_view = true;
    const std::string arity = call.rest ? (call.operands.empty() ? "" : node + "->num_operands() < " +
                                                                            std::to_string(call.operands.size()) + " || ")
                                        : node + "->num_operands() != " + std::to_string(call.operands.size()) + " || ";
    check(arity + "rewriter.composite_of(" + node + ") != " + string_literal(*call.composite));
    bind_rest(call.rest, node, call.operands.size());
    if (call.result_type) match_type(*call.result_type, node);
    match_operands(call, node);
  }

  // The operands of a call, in operand_order(). A commutative call whose two operand patterns have different heads
  // can match in one order at most: the order is chosen by the head of its first operand, without a loop
  // (identical results: in the other order a head check fails). Otherwise both orders are tried in a loop.
  void match_operands(const CallPattern& call, const std::string& node) {
    std::vector<size_t> order = order_.operand_order(call);
    if (!order_.needs_both_orders(call)) {
      for (size_t i : order) match(*call.operands[i], node + "->operand(" + std::to_string(i) + ")", false);
      return;
    }
    std::string order_var = recording() ? group_->shared(node, "order") : names_.numbered("order");
    const std::string subjects[2] = {node + "->operand(" + order_var + ")", node + "->operand(1 - " + order_var + ")"};
    std::optional<Head> heads[2] = {head_of(*call.operands[0]), head_of(*call.operands[1])};
    if (heads[0] && heads[1] && heads[0]->constant != heads[1]->constant) {
      if (order_by_head_ && heads[0]->key && heads[1]->key) {
        // The operand with the smaller head first (Node::head_key()): every such rule on this node defines the
        // order alike, so the decision tree shares it and switches on the op of each operand in turn, however
        // many pairs of heads the rules want.
        const size_t first = *heads[1]->key < *heads[0]->key ? 1 : 0;
        define("const int " + order_var + " = " + node + "->operand(0)->head_key() <= " + node +
                   "->operand(1)->head_key() ? 0 : 1;",
               order_var);
        // At the root, the smaller head is checked first, whichever way round the rule was written (the rules of
        // the group switch on its op), unless only the other operand's pattern is free of operand-order loops
        // (those come last). Deeper, the cheaper operand stays first (MatchOrder::operand_order()).
        if (node == "root" &&
            order_.has_choice(*call.operands[first]) == order_.has_choice(*call.operands[1 - first])) {
          order = {first, 1 - first};
        }
        for (size_t i : order) match(*call.operands[i], subjects[i == first ? 0 : 1], false);
        return;
      }
      // An op declared in the .dpl file has no number yet: the order is chosen by the head of the operand pattern
      // whose constant sorts first, so that rules written either way round test the same thing.
      size_t first = heads[1]->constant < heads[0]->constant ? 1 : 0;
      define("const int " + order_var + " = " + heads[first]->holds(node + "->operand(0)") + " ? 0 : 1;", order_var);
      for (size_t i : order) match(*call.operands[i], subjects[i == first ? 0 : 1], false);
      return;
    }
    std::string header = "for (int " + order_var + " = 0; " + order_var + " < 2; ++" + order_var + ")";
    if (recording()) {
      steps_->push_back(MatchStep{MatchStep::Kind::Loop, header});
    } else {
      body_->line(header + " {");
      body_->indent();
      ++loops_;
    }
    // The loop closes after the right-hand side, so a later failure tries the other order.
    for (size_t i : order) match(*call.operands[i], subjects[i], false);
  }

  void match_call(const CallPattern& call, const std::string& subject, bool op_known) {
    if (call.composite) return match_composite_call(call, subject, op_known);
    const OpInfo& info = registry_.get(call.ops[0].id);
    const size_t arity = call.operands.size();
    bool check_arity = info.min_operands != info.max_operands;
    bool binds_op = !call.op_var.empty() && (bound_.count(call.op_var) != 0 || read_later(call.op_var));
    int uses = (check_arity ? 1 : 0) + (binds_op ? 1 : 0) + static_cast<int>(call.attrs.size()) +
               (call.result_type ? 1 : 0);
    for (const PatternPtr& operand : call.operands) {
      if (!std::holds_alternative<WildcardPattern>(operand->node)) ++uses;
    }
    if (!op_known) check_head(subject, *head_of_call(info));
    std::string node = local(subject, op_ident(info), uses);

    if (check_arity && (!call.rest || arity > 0)) {
      check(node + "->num_operands() " + (call.rest ? "< " : "!= ") + std::to_string(arity));
    }
    bind_rest(call.rest, node, arity);
    if (binds_op) {
      if (auto it = bound_.find(call.op_var); it != bound_.end()) {
        check(node + "->op() != " + it->second, Placement::Value);
      } else if (recording()) {
        alias(call.op_var, node + "->op()", "dpl::OpId ");
      } else {
        std::string name = names_.fresh(call.op_var);
        body_->line("dpl::OpId " + name + " = " + node + "->op();");
        bound_[call.op_var] = name;
      }
    }
    for (const PatternAttr& attr : call.attrs) {
      std::string read = node + "->attr(" + std::to_string(info.attr_index(attr.name)) + ")";
      if (attr.literal) {
        check("!" + attr_literal_test(read, *attr.literal), Placement::Value);
      } else if (auto it = bound_.find(attr.capture); it != bound_.end()) {
        check(read + " != " + it->second, Placement::Value);
      } else if (recording()) {
        alias(attr.capture, read, "const dpl::AttrValue& ");
      } else if (read_later(attr.capture)) {
        std::string name = names_.fresh(attr.capture);
        body_->line("const dpl::AttrValue& " + name + " = " + read + ";");
        bound_[attr.capture] = name;
      }
    }
    if (call.result_type) match_type(*call.result_type, node);
    match_operands(call, node);
  }

  // Emits the statements building `expr`; returns the C++ expression of the new value. `sibling` is a value
  // built or matched next to it (for the dtype of constants).
  std::string build(const Expr& expr, const std::string* sibling) {
    return std::visit(
        Overloaded{
            [&](const VarExpr& e) { return lists_.count(e.name) != 0 ? build_list_tuple(e.name) : bound_.at(e.name); },
            [&](const ConstExpr& e) { return build_constant(e, sibling); },
            [&](const CallExpr& e) { return build_call(e); },
            [&](const ItemExpr& e) {
              std::string tuple = build(*e.tuple, nullptr);
              std::string name = names_.numbered("item");
              statement("dpl::Node* " + name + " = rewriter.item(" + tuple + ", " + std::to_string(e.index) + ");");
              check(name + " == nullptr");
              return name;
            },
            [&](const TupleExpr& e) {
              std::vector<std::string> fields;
              for (const ExprPtr& field : e.fields) {
                fields.push_back(std::holds_alternative<SpreadExpr>(field->node) ? "" : build(*field, nullptr));
              }
              std::string name = names_.numbered("tuple");
              statement("dpl::Node* " + name + " = rewriter.tuple(" + node_values(e.fields, fields) + ");");
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
    // A computed number is a double or an int64_t (a dimension, an int attribute): scalar() takes either.
    const std::string value = constant.computed != nullptr ? computed(*constant.computed) : format_double(constant.value);
    return "rewriter.scalar(" + value + ", " + dtype + ")";
  }

  // The values of `written` operands (fields): `built[i]`, or a spread list's values. A braced list of the values
  // when none is a spread (an initializer list, no allocation), else a `std::vector<dpl::Node*>`.
  std::string node_values(const std::vector<ExprPtr>& written, const std::vector<std::string>& built) {
    auto is_spread = [](const ExprPtr& value) { return std::holds_alternative<SpreadExpr>(value->node); };
    if (std::none_of(written.begin(), written.end(), is_spread)) {
      return "{" + fmt::format("{}", fmt::join(built, ", ")) + "}";
    }
    needs_.vector = true;
    std::string values = names_.numbered("values");
    statement("std::vector<dpl::Node*> " + values + ";");
    for (size_t i = 0; i < written.size(); ++i) {
      if (const auto* spread = std::get_if<SpreadExpr>(&written[i]->node)) {
        const std::string& list = bound_.at(spread->name);
        statement(values + ".insert(" + values + ".end(), " + list + ".begin(), " + list + ".end());");
      } else {
        statement(values + ".push_back(" + built[i] + ");");
      }
    }
    return values;
  }

  // The values of a call's operands, built (spreads left empty). Operands other than constants and spreads
  // first, so that a constant can take its dtype from one of them.
  std::vector<std::string> build_operands(const CallExpr& call) {
    std::vector<std::string> operands(call.operands.size());
    const std::string* sibling = nullptr;
    for (size_t i = 0; i < call.operands.size(); ++i) {
      if (std::holds_alternative<ConstExpr>(call.operands[i]->node)) continue;
      if (std::holds_alternative<SpreadExpr>(call.operands[i]->node)) continue;
      operands[i] = build(*call.operands[i], nullptr);
      if (sibling == nullptr) sibling = &operands[i];
    }
    for (size_t i = 0; i < call.operands.size(); ++i) {
      if (std::holds_alternative<ConstExpr>(call.operands[i]->node)) operands[i] = build(*call.operands[i], sibling);
    }
    return operands;
  }

  static bool has_spreads(const CallExpr& call) {
    return std::any_of(call.operands.begin(), call.operands.end(), [](const ExprPtr& operand) {
      return std::holds_alternative<SpreadExpr>(operand->node);
    });
  }

  // A named op with its default attributes and a fixed operand list: the checks passed here (sema checked the
  // arity; operands are pattern variables or nodes built above), so the runtime skips them.
  static bool is_proven(const CallExpr& call) {
    return call.native == nullptr && !call.op_is_var && !has_spreads(call) && call.attrs.empty() && !call.attrs_from;
  }

  // The rewrite: `root` replaced by the right-hand side's value, or, when that is one op call with a fixed operand
  // list, rebuilt in place as that call (Rewriter::rebuild: no new node). `once` rules keep replace(): a rebuilt
  // node keeps its id, and created_in_run() tells new nodes by their ids.
  std::string replace_action(bool in_place) {
    const auto* call = std::get_if<CallExpr>(&rhs_->node);
    if (!in_place || call == nullptr || call->native != nullptr || has_spreads(*call)) {
      return "rewriter.replace(root, " + build(*rhs_, nullptr) + ")";
    }
    const bool proven = is_proven(*call) && !may_yield_root();
    return std::string("rewriter.") + (proven ? "proven_rebuild" : "rebuild") + "(root, " + call_arguments(*call) +
           ")";
  }

  // Whether the right-hand side's operands may be the matched node or be built from it: the right-hand side (or a
  // let) names the root (`r: exp(x) => relu(r)`) or calls an extern rewriter. Every other variable binds a value
  // below the root, which cannot depend on it (proven_rebuild() does not look).
  bool may_yield_root() const {
    Mentions mentioned;
    count_mentions(*rhs_, mentioned);
    for (const LetBinding& let : lets_) count_mentions(*let.value, mentioned);
    const Pattern* top = pattern_;
    while (const auto* bind = top != nullptr ? std::get_if<BindPattern>(&top->node) : nullptr) {
      if (mentioned.count(bind->name) != 0) return true;
      top = bind->inner.get();
    }
    return calls_extern(*rhs_) || std::any_of(lets_.begin(), lets_.end(), [](const LetBinding& let) {
             return calls_extern(*let.value);
           });
  }

  // What follows the op in Rewriter::call(): the operands, then the attributes unless they are the defaults of a
  // fixed operand list.
  std::string call_arguments(const CallExpr& call) {
    std::vector<std::string> operands = build_operands(call);
    std::string op = call.op_is_var ? bound_.at(call.op.text) : op_constant(registry_.get(call.op.id));
    const bool spreads = has_spreads(call);
    std::string arguments = op + ", " +
                            (spreads ? node_values(call.operands, operands)
                                     : "{" + fmt::format("{}", fmt::join(operands, ", ")) + "}");
    if (spreads && call.op_is_var && !call.attrs_from) {  // the span overload takes the attributes: the defaults
      arguments += ", dpl::OpRegistry::global().get(" + op + ").default_attrs()";
    } else if (spreads || !call.attrs.empty() || call.attrs_from) {
      arguments += ", " + attr_list(call);
    }
    return arguments;
  }

  std::string build_call(const CallExpr& call) {
    if (call.native != nullptr) return build_native(call);
    const std::string arguments = call_arguments(call);
    std::string base = call.op_is_var ? call.op.text : op_ident(registry_.get(call.op.id));
    std::string name = names_.numbered(base);
    statement("dpl::Node* " + name + " = rewriter." + (is_proven(call) ? "proven_call(" : "call(") + arguments + ");");
    check(name + " == nullptr");
    return name;
  }

  // An extern rewriter builds the replacement itself; nullptr means it declines.
  std::string build_native(const CallExpr& call) {
    std::vector<std::string> arguments = {"rewriter"};
    for (const ExprPtr& operand : call.operands) arguments.push_back(build(*operand, nullptr));
    std::string name = names_.numbered(call.native->name);
    statement("dpl::Node* " + name + " = ::" + call.native->name + "(" +
                fmt::format("{}", fmt::join(arguments, ", ")) + ");");
    check(name + " == nullptr");
    return name;
  }

  // `rewriter.partition(...)` with the values the pattern's leaves matched, first occurrences left to right
  // (a name bound to an inner call of the match, `c` in `c: nn.conv2d(...)`, is part of the match, not an input).
  std::string partition_call() {
    std::vector<std::string> inputs;
    const std::vector<PartitionInput> sources = partition_inputs(*pattern_);
    if (std::any_of(sources.begin(), sources.end(), [](const PartitionInput& input) { return input.rest; })) {
      return "rewriter.partition(" + string_literal(*partition_) + ", root, " + variadic_inputs(sources) +
             ") != nullptr";
    }
    for (const PartitionInput& input : sources) inputs.push_back(resolved(leaf_subjects_.at(input.leaf)));
    std::string list = "{}";
    if (!inputs.empty()) {
      list = names_.fresh("inputs");
      define("dpl::Node* const " + list + "[] = {" + fmt::format("{}", fmt::join(inputs, ", ")) + "};");
    }
    return "rewriter.partition(" + string_literal(*partition_) + ", root, " + list + ") != nullptr";
  }

  // A partition's inputs when a rest (`...`) gives some of them: a vector, the rest's operands spliced in.
  std::string variadic_inputs(const std::vector<PartitionInput>& sources) {
    needs_.vector = true;
    std::string list = names_.fresh("inputs");
    statement("static thread_local std::vector<dpl::Node*> " + list + ";");
    statement(list + ".clear();");
    for (const PartitionInput& input : sources) {
      if (input.leaf != nullptr) {
        statement(list + ".push_back(" + resolved(leaf_subjects_.at(input.leaf)) + ");");
        continue;
      }
      const std::string rest = names_.fresh("rest");
      statement("const std::span<dpl::Node* const> " + rest + " = " + resolved(rest_subjects_.at(input.rest)) +
                "->operands().subspan(" + std::to_string(input.first) + ");");
      statement(list + ".insert(" + list + ".end(), " + rest + ".begin(), " + rest + ".end());");
    }
    return list;
  }

  // A call of an extern predicate, on matched values.
  std::string native_predicate(const CallExpr& call) {
    std::vector<std::string> arguments;
    for (const ExprPtr& operand : call.operands) arguments.push_back(bound_.at(std::get<VarExpr>(operand->node).name));
    return "::" + call.native->name + "(" + fmt::format("{}", fmt::join(arguments, ", ")) + ")";
  }

  // The full attribute list: the given values, elsewhere the op's defaults or, with `**c`, c's attributes (its
  // list itself when none is given). A list of literals is a static local, built once: the rewriter compares it
  // with the lists the function holds instead of building and freeing one per rewrite. A list with values known
  // only when the rule fires is a thread-local static too, its constant entries written once and the others
  // assigned on each rewrite (into the storage of the last rewrite's: a captured axis list or split points cost
  // no allocation once they have grown); with `**c`, c's list is copied over it whole and the given values
  // assigned after.
  std::string attr_list(const CallExpr& call) {
    const std::string source = call.attrs_from ? bound_.at(call.attrs_from->name) : std::string();
    if (!source.empty() && call.attrs.empty()) return source + "->attrs()";
    std::optional<OpId> op = call.op.id;
    if (call.op_is_var) op = fixed_op(call.op.text);
    if (!op) return replaced_attrs(call, source);
    const OpInfo& info = registry_.get(*op);
    if (!source.empty()) return copied_attrs(call, info, source);
    std::vector<std::string> values;
    std::vector<std::pair<size_t, std::string>> computed;  // (index, value) of the entries set per rewrite
    for (size_t i = 0; i < info.attrs.size(); ++i) {
      const AttrSpec& spec = info.attrs[i];
      std::string value = source.empty() ? attr_value_cpp(spec.default_value, needs_)
                                         : source + "->attr(" + std::to_string(i) + ")";
      bool constant = source.empty();
      for (const ExprAttr& attr : call.attrs) {
        if (attr.name != spec.name) continue;
        value = attr_value(*attr.value, spec.kind);
        constant = std::holds_alternative<LiteralExpr>(attr.value->node);
      }
      if (!constant) {
        computed.emplace_back(i, value);
        value = "{}";
      }
      values.push_back("/*" + spec.name + "=*/" + value);
    }
    const std::string initializer = "{" + fmt::format("{}", fmt::join(values, ", ")) + "}";
    if (!computed.empty()) {
      const std::string list = names_.numbered(op_ident(info) + "_attrs");
      statement("static thread_local dpl::AttrList " + list + initializer + ";");
      for (const auto& [index, value] : computed) {
        statement(list + "[" + std::to_string(index) + "] = " + value + ";  // " + info.attrs[index].name);
      }
      return list;
    }
    auto [it, fresh] = attr_constants_.emplace(initializer, std::string());  // one per distinct list
    if (fresh) {
      it->second = names_.numbered(op_ident(info) + "_attrs");
      statement("static const dpl::AttrList " + it->second + initializer + ";");
    }
    return it->second;
  }

  // `nn.conv2d(x, w, **c, kernel_layout="HWIO")`: c's list copied into a thread-local list (no allocation once its
  // entries have grown), then the given attributes assigned, a literal list or string from a static constant.
  std::string copied_attrs(const CallExpr& call, const OpInfo& info, const std::string& source) {
    const std::string list = names_.numbered(op_ident(info) + "_attrs");
    copy_into_local(list, source);
    for (size_t i = 0; i < info.attrs.size(); ++i) {
      const AttrSpec& spec = info.attrs[i];
      for (const ExprAttr& attr : call.attrs) {
        if (attr.name != spec.name) continue;
        const auto* literal = std::get_if<LiteralExpr>(&attr.value->node);
        const std::string value = literal != nullptr && !is_scalar_attr(literal->value)
                                      ? constant_attr(literal->value, spec.name + "_value")
                                      : attr_value(*attr.value, spec.kind);
        statement(list + "[" + std::to_string(i) + "] = " + value + ";  // " + spec.name);
      }
    }
    return list;
  }

  // The thread-local list `list`, holding the attributes of the call `source` from here on.
  void copy_into_local(const std::string& list, const std::string& source) {
    statement("static thread_local dpl::AttrList " + list + ";");
    statement(list + " = " + source + "->attrs();");
  }

  // The op an op variable stands for in the alternative being emitted, when the alternative fixes it (the decision
  // tree gives `(op: sum | max)(...)` one alternative per op); nullopt otherwise.
  std::optional<OpId> fixed_op(const std::string& op_var) const {
    std::optional<OpId> found;
    std::function<void(const Pattern&)> visit = [&](const Pattern& pattern) {
      const auto* call = std::get_if<CallPattern>(&pattern.node);
      if (call != nullptr && call->op_var == op_var && call->ops.size() == 1 && !call->optional) found = call->ops[0].id;
      for_each_sub_pattern(pattern, visit);
    };
    if (pattern_ != nullptr) visit(*pattern_);
    return found;
  }

  // `op(x, **r, keepdims=False)` where the op is known only when the rule fires: r's list, copied into a
  // thread-local one, with the written attributes replaced, found by name in that op (sema:
  // every op the variable may hold has them, of one kind).
  std::string replaced_attrs(const CallExpr& call, const std::string& source) {
    needs_.vector = needs_.variant = needs_.utility = true;
    const std::string list = names_.fresh(call.op.text + "_attrs");
    const std::string info = names_.fresh(call.op.text + "_info");
    copy_into_local(list, source);
    statement("const dpl::OpInfo& " + info + " = dpl::OpRegistry::global().get(" + bound_.at(call.op.text) + ");");
    for (const ExprAttr& attr : call.attrs) {
      statement(list + "[static_cast<size_t>(" + info + ".attr_index(" + string_literal(attr.name) + "))] = " +
                attr_value(*attr.value, attr.kind) + ";");
    }
    return list;
  }

  // An attribute value of `kind` on the right: a literal, a capture copied whole, or a computed value.
  std::string attr_value(const Expr& value, AttrKind kind) {
    if (const auto* literal = std::get_if<LiteralExpr>(&value.node)) {
      AttrValue stored = literal->value;  // as a call stores it: an int given for a float as its double
      attr_matches_kind(kind, stored);
      return attr_value_cpp(stored, needs_);
    }
    if (value.type == ExprType::AttrList) return common_member(std::get<VarExpr>(value.node).name);
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
    if (expr.op_literal) return op_constant(registry_.get(*expr.op_literal));
    return std::visit(
        Overloaded{
            [&](const LiteralExpr& e) { return literal_cpp(e.value); },
            [&](const VarExpr& e) { return name_cpp(e, expr); }, [&](const MemberExpr& e) { return property(e); },
            [&](const IndexExpr& e) { return shape_dim(e); },
            [&](const UnaryExpr& e) { return std::string(e.op == UnaryOp::Negate ? "-" : "!") + computed(*e.operand); },
            [&](const BinaryExpr& e) { return expr.compares_dimensions ? dims_comparison(e) : binary_cpp(e); },
            [&](const CallExpr& e) { return e.native != nullptr ? native_predicate(e) : split_indices(e); },
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
    if (expr.type == ExprType::AttrList) return common_member(var.name);
    if (expr.type == ExprType::NumberList) return static_extents(var.name);
    const std::string& local = bound_.at(var.name);
    if (dims_.count(var.name) != 0) {  // a dimension read as a number must be static
      std::string key = "dim " + var.name;
      if (std::string known = property_local(key); !known.empty()) return known;
      check("!" + local + ".is_static()");
      std::string extent = names_.fresh(local + "_extent");
      define("const int64_t " + extent + " = " + local + ".extent();");
      properties_[key] = extent;
      return extent;
    }
    if (expr.type != ExprType::Value && expr.type != ExprType::ValueList && expr.type != ExprType::Op &&
        expr.type != ExprType::Attr) {
      needs_.variant = true;
    }
    if (expr.type == ExprType::String || expr.type == ExprType::IntList) needs_.string = needs_.vector = true;
    switch (expr.type) {
      case ExprType::Number: {
        const bool real = expr.attr_kind == AttrKind::Float || expr.attr_kind == AttrKind::OptFloat;
        const std::string type = real ? "double" : "int64_t";
        // An optional number read as a number: None declines the rule (checked once per alternative).
        if ((expr.attr_kind == AttrKind::OptInt || expr.attr_kind == AttrKind::OptFloat) &&
            properties_.emplace("present " + var.name, local).second) {
          check("!std::holds_alternative<" + type + ">(" + local + ")");
        }
        return "std::get<" + type + ">(" + local + ")";
      }
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
    if (member.member == "count") return "static_cast<int64_t>(" + list_of(*member.object) + ".size())";
    const std::string& node = bound_.at(std::get<VarExpr>(member.object->node).name);
    if (member.member == "dtype") return node + "->type()->dtype()";
    if (member.member == "uses") return "static_cast<int64_t>(" + node + "->num_users())";
    std::string key = node + "." + member.member;
    if (std::string local = property_local(key); !local.empty()) return local;
    std::string local = names_.fresh(node + "_" + member.member);
    if (member.member == "rank") {
      define("const int " + local + " = " + node + "->type()->rank();");
      check(local + " < 0");
    } else {  // value
      check("!" + node + "->is_scalar_constant()");
      define("const double " + local + " = " + node + "->scalar_value();");
    }
    properties_[key] = local;
    return local;
  }

  // Dimension `position` of a single value's type, as written in `x.shape[i]`: the C++ naming the dimension,
  // the condition under which the type has no such dimension, and a stem for the local that holds it.
  struct DimAccess {
    std::string key;
    std::string dim;
    std::string missing;
    std::string stem;
  };
  DimAccess dim_access(const IndexExpr& index) const {
    const auto& member = std::get<MemberExpr>(index.object->node);
    const std::string& node = bound_.at(std::get<VarExpr>(member.object->node).name);
    const int64_t position = std::get<int64_t>(std::get<LiteralExpr>(index.index->node).value);
    const std::string type = node + "->type()";
    // A negative position counts from the end, as in Python.
    const std::string at =
        position >= 0 ? std::to_string(position)
                      : "static_cast<size_t>(" + type + "->rank() - " + std::to_string(-position) + ")";
    const int64_t needed_rank = position >= 0 ? position + 1 : -position;
    return {node + ".shape[" + std::to_string(position) + "]", type + "->dims()[" + at + "]",
            "!" + type + "->has_shape() || " + type + "->rank() < " + std::to_string(needed_rank),
            node + "_shape_" + (position >= 0 ? "" : "m") + std::to_string(std::abs(position))};
  }

  // `x.shape[i]` as a number: the dimension must be static.
  std::string shape_dim(const IndexExpr& index) {
    const auto& member = std::get<MemberExpr>(index.object->node);
    if (lists_.count(std::get<VarExpr>(member.object->node).name) != 0) return list_shape_dims(index);
    const DimAccess access = dim_access(index);
    if (std::string local = property_local(access.key); !local.empty()) return local;
    check(access.missing + " || !" + access.dim + ".is_static()");
    std::string local = names_.fresh(access.stem);
    define("const int64_t " + local + " = " + access.dim + ".extent();");
    properties_[access.key] = local;
    return local;
  }

  // `x.shape[i]` as a dimension, static or symbolic (compared as dimensions).
  std::string shape_dim_of(const IndexExpr& index) {
    const DimAccess access = dim_access(index);
    const std::string key = "dim " + access.key;
    if (std::string local = property_local(key); !local.empty()) return local;
    check(access.missing);
    std::string local = names_.fresh(access.stem + "_dim");
    define("const dpl::Dim " + local + " = " + access.dim + ";");
    properties_[key] = local;
    return local;
  }

  // A list or string attribute value, built once (a function-local static), not at every match; one per value.
  std::string constant_attr(const AttrValue& value, const std::string& base) {
    std::string text = attr_value_cpp(value, needs_);
    std::string key = "constant " + text;
    if (std::string local = property_local(key); !local.empty()) return local;
    std::string name = recording() ? group_->shared(text, base, /*numbered=*/false) : names_.fresh(base);
    define("static const dpl::AttrValue " + name + " = " + text + ";", name);
    properties_[key] = name;
    return name;
  }

  // `==`/`!=` between dimensions (Expr::compares_dimensions): decided for every value of the symbols (`q.shape[0] ==
  // b * n` holds for q of shape (batch * 12, ...), b = batch, n = 12), or the rule fails here.
  std::string dims_comparison(const BinaryExpr& binary) {
    const std::string lhs = dim_value(*binary.lhs);
    const std::string rhs = dim_value(*binary.rhs);
    needs_.optional = true;
    std::string local = names_.fresh("equal_dims");
    define("const std::optional<bool> " + local + " = dpl::dims_equal(" + lhs + ", " + rhs + ");");
    check("!" + local + ".has_value()");
    return std::string(binary.op == BinaryOp::Equal ? "*" : "!*") + local;
  }

  // A side of a dimension comparison as a dpl::DimValue expression.
  std::string dim_value(const Expr& expr) {
    if (const auto* literal = std::get_if<LiteralExpr>(&expr.node)) {
      return "dpl::DimValue(int64_t{" + std::to_string(std::get<int64_t>(literal->value)) + "})";
    }
    if (const auto* var = std::get_if<VarExpr>(&expr.node)) return "dpl::DimValue(" + bound_.at(var->name) + ")";
    if (const auto* index = std::get_if<IndexExpr>(&expr.node)) return "dpl::DimValue(" + shape_dim_of(*index) + ")";
    const auto& binary = std::get<BinaryExpr>(expr.node);
    const std::string lhs = dim_value(*binary.lhs);
    const std::string rhs = dim_value(*binary.rhs);
    return "(" + lhs + " " + std::string(binary_op_spelling(binary.op)) + " " + rhs + ")";
  }

  std::string binary_cpp(const BinaryExpr& binary) {
    bool equality = binary.op == BinaryOp::Equal || binary.op == BinaryOp::NotEqual;
    std::string op(binary_op_spelling(binary.op));
    if (equality && (binary.lhs->type == ExprType::AttrList || binary.rhs->type == ExprType::AttrList)) {
      return attr_list_equality(binary);
    }
    if (binary.lhs->type == ExprType::NumberList || binary.rhs->type == ExprType::NumberList) {
      return number_list_comparison(binary);
    }
    if (binary.lhs->type == ExprType::ValueList || binary.rhs->type == ExprType::ValueList) {
      return value_list_equality(binary);
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

  // An attribute list (one value per group member) against a literal or a single capture: the comparison holds
  // for every member; against another attribute list: the lists compare as wholes.
  std::string attr_list_equality(const BinaryExpr& binary) {
    const bool list_left = binary.lhs->type == ExprType::AttrList;
    const std::string& list = bound_.at(std::get<VarExpr>((list_left ? binary.lhs : binary.rhs)->node).name);
    const Expr& other = list_left ? *binary.rhs : *binary.lhs;
    const std::string op(binary_op_spelling(binary.op));
    if (other.type == ExprType::AttrList) {
      return "(" + list + " " + op + " " + bound_.at(std::get<VarExpr>(other.node).name) + ")";
    }
    needs_.algorithm = true;
    return "std::all_of(" + list + ".begin(), " + list + ".end(), [&](const dpl::AttrValue& member) { return " +
           "member " + op + " " + whole_attr(other) + "; })";
  }

  // A list of graph values (a group's std::vector, a rest's std::span) against one value: every member is that
  // node (`==`), none is (`!=`); two lists: as wholes, the same nodes in the same order.
  std::string value_list_equality(const BinaryExpr& binary) {
    const std::string op(binary_op_spelling(binary.op));
    const std::string lhs = computed(*binary.lhs);
    const std::string rhs = computed(*binary.rhs);
    needs_.algorithm = true;
    if (binary.lhs->type == binary.rhs->type) {
      return std::string(binary.op == BinaryOp::Equal ? "" : "!") + "std::equal(" + lhs + ".begin(), " + lhs +
             ".end(), " + rhs + ".begin(), " + rhs + ".end())";
    }
    const bool list_left = binary.lhs->type == ExprType::ValueList;
    const std::string& list = list_left ? lhs : rhs;
    return "std::all_of(" + list + ".begin(), " + list + ".end(), [&](const dpl::Node* member) { return member " + op +
           " " + (list_left ? rhs : lhs) + "; })";
  }

  // A list of numbers against a number: the comparison holds for every member (in double precision, as guards
  // compute); two lists: as wholes.
  std::string number_list_comparison(const BinaryExpr& binary) {
    const std::string op(binary_op_spelling(binary.op));
    const std::string lhs = computed(*binary.lhs);
    const std::string rhs = computed(*binary.rhs);
    if (binary.lhs->type == binary.rhs->type) return "(" + lhs + " " + op + " " + rhs + ")";
    needs_.algorithm = true;
    const bool list_left = binary.lhs->type == ExprType::NumberList;
    const std::string& list = list_left ? lhs : rhs;
    const std::string member = "static_cast<double>(member)";
    return "std::all_of(" + list + ".begin(), " + list + ".end(), [&](int64_t member) { return " +
           (list_left ? member : "static_cast<double>(" + lhs + ")") + " " + op + " " +
           (list_left ? "static_cast<double>(" + rhs + ")" : member) + "; })";
  }

  // A group's dimension list read as numbers: every member's extent, all static or the rule fails here.
  std::string static_extents(const std::string& variable) {
    const std::string& list = bound_.at(variable);
    const std::string key = "extents " + list;
    if (std::string local = property_local(key); !local.empty()) return local;
    needs_.vector = true;
    std::string local = names_.fresh(list + "_extents");
    statement("static thread_local std::vector<int64_t> " + local + ";");
    statement(local + ".clear();");
    statement("for (const dpl::Dim& dim : " + list + ") {");
    statement("  if (!dim.is_static()) break;");
    statement("  " + local + ".push_back(dim.extent());");
    statement("}");
    check(local + ".size() != " + list + ".size()");
    properties_[key] = local;
    return local;
  }

  // An attribute list as an attribute value on the right, an op list as a callee: the members' common value; the
  // rule fails here when the members differ.
  std::string common_member(const std::string& variable) {
    const std::string& list = bound_.at(variable);
    const std::string key = "common " + list;
    if (std::string local = property_local(key); !local.empty()) return local;
    needs_.algorithm = true;
    check("!std::equal(" + list + ".begin() + 1, " + list + ".end(), " + list + ".begin())");
    properties_[key] = list + "[0]";
    return list + "[0]";
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
  const Pattern* pattern_;  // null for a multi-root rule (its patterns are its roots)
  const Expr* guard_;
  const std::vector<LetBinding>& lets_;
  const Expr* rhs_;  // null for a multi-root rule (its right-hand sides are its rewrites) and a partition
  const std::string* partition_;  // a partition's composite name; null for a rewrite
  std::map<const Pattern*, std::string> leaf_subjects_;  // the node each leaf of the pattern matched
  std::map<const RestPattern*, std::string> rest_subjects_;  // a partition's: the node whose operands a rest matched
  std::map<std::string, std::string> properties_;  // "x.rank" -> its local
  std::set<std::string> dims_;                     // variables bound to a dpl::Dim
  Needs& needs_;
  Mentions pattern_mentions_;  // in the pattern only
  Mentions mentions_;          // in the pattern and the right-hand side
  // The alternative's `name: pattern` bindings (head_of() of a repeated name); none for a multi-root rule.
  void collect_bound_patterns(const Pattern& pattern) {
    if (const auto* bind = std::get_if<BindPattern>(&pattern.node)) {
      bound_patterns_.emplace(bind->name, bind->inner.get());
    }
    for_each_sub_pattern(pattern, [&](const Pattern& inner) { collect_bound_patterns(inner); });
  }
  std::map<std::string, const Pattern*> bound_patterns_;

  MatchOrder order_{registry_, pattern_mentions_};
  bool order_by_head_ = false;  // order_operands_by_head()
  NameTable names_;
  std::map<std::string, std::string> bound_;  // variable -> C++ local
  std::map<std::string, std::string> attr_constants_;  // a constant attribute list's initializer -> its static
  CodeWriter* body_ = nullptr;  // a multi-root rule's function body; null while recording steps
  std::vector<MatchStep>* steps_ = nullptr;  // where recorded steps go: the prefix, then the tail
  GroupNames* group_;                        // null for a multi-root rule
  std::map<std::string, std::string> node_locals_;  // path expression -> its local (recording)
  std::vector<std::pair<std::string, std::string>> aliases_;  // variable, declaration: in binding order
  int loops_ = 0;
  bool committed_ = false;       // a multi-root rule has matched; see fail()
  std::set<std::string> lists_;  // variables bound in a group: bound_ holds a std::vector<dpl::Node*>

  // --- lists (group rules) ---

  std::string list_of(const Expr& expr) const { return bound_.at(std::get<VarExpr>(expr.node).name); }

  // A list as an operand: the tuple of its values (concat's operand).
  std::string build_list_tuple(const std::string& variable) {
    std::string name = names_.numbered("tuple");
    statement("dpl::Node* " + name + " = rewriter.tuple(" + bound_.at(variable) + ");");
    check(name + " == nullptr");
    return name;
  }

  // `ws.shape[1]`: one static extent per member, in a list reused across calls.
  std::string list_shape_dims(const IndexExpr& index) {
    const auto& member = std::get<MemberExpr>(index.object->node);
    const std::string& list = list_of(*member.object);
    int64_t position = std::get<int64_t>(std::get<LiteralExpr>(index.index->node).value);
    std::string key = list + ".shape[" + std::to_string(position) + "]";
    if (std::string local = property_local(key); !local.empty()) return local;
    needs_.vector = true;
    std::string local = names_.fresh(list + "_shape_" + (position >= 0 ? "" : "m") + std::to_string(std::abs(position)));
    statement("static thread_local std::vector<int64_t> " + local + ";");
    statement(local + ".clear();");
    std::string value = names_.numbered("value");
    std::string type = value + "->type()";
    std::string at = position >= 0 ? std::to_string(position)
                                   : "static_cast<size_t>(" + type + "->rank() - " + std::to_string(-position) + ")";
    int64_t needed_rank = position >= 0 ? position + 1 : -position;
    // A member without that static dimension fails the whole rule, not just this loop.
    statement("for (const dpl::Node* " + value + " : " + list + ") {");
    statement("  if (!" + type + "->has_shape() || " + type + "->rank() < " + std::to_string(needed_rank) + " || !" +
              type + "->dims()[" + at + "].is_static()) break;");
    statement("  " + local + ".push_back(" + type + "->dims()[" + at + "].extent());");
    statement("}");
    check(local + ".size() != " + list + ".size()");
    properties_[key] = local;
    return local;
  }

  // `split_indices(sizes)` or `split_indices(a, b, c)`: the running sums without the total.
  std::string split_indices(const CallExpr& call) {
    needs_.vector = true;
    std::string sizes;
    if (call.operands.size() == 1 && call.operands[0]->type == ExprType::NumberList) {
      sizes = computed(*call.operands[0]);
    } else {
      std::vector<std::string> parts;
      for (const ExprPtr& operand : call.operands) parts.push_back("static_cast<int64_t>(" + computed(*operand) + ")");
      sizes = "{" + fmt::format("{}", fmt::join(parts, ", ")) + "}";  // an initializer list
    }
    std::string key = "split_indices " + sizes;
    if (std::string local = property_local(key); !local.empty()) return local;
    std::string local = names_.numbered("split_indices");
    define("static thread_local std::vector<int64_t> " + local + ";");
    define("dpl::split_indices(" + sizes + ", " + local + ");");
    properties_[key] = local;
    return local;
  }
};

// Emits the matcher function of a multi-root rule (docs/semantics.md): the anchor is matched at `root`; each later
// root is searched among the users of a value bound before it (backtracking over the candidates in users()
// order); a group collects every fitting user into lists. Then the right-hand sides are built and all roots are
// replaced at once.
class MultiRootEmitter : public RuleEmitter {
 public:
  MultiRootEmitter(const OpRegistry& registry, const Rule& rule, const RootsAlternative& roots, Needs& needs)
      : RuleEmitter(registry, rule, roots, needs), rule_(rule), roots_(roots) {}

  void emit(CodeWriter& out, const std::string& function_name) {
    out.line("bool " + function_name + "(dpl::Rewriter& rewriter, dpl::Node* root) {");
    out.indent();
    body_ = &out;
    const RootDecl& anchor = rule_.roots[0];
    // The dispatcher checked a call's op.
    match(*roots_.roots[0][0], bind(anchor.name, "root"), /*op_known=*/true);
    check_dimensions(*roots_.roots[0][0]);
    if (anchor.guard != nullptr) check("!" + computed(*anchor.guard));
    root_nodes_.push_back("root");
    for (size_t i = 1; i < rule_.roots.size(); ++i) {
      if (rule_.roots[i].group) {
        collect_group(rule_.roots[i], roots_.roots[i]);
      } else {
        find_root(rule_.roots[i], *roots_.roots[i][0]);
      }
    }
    if (guard_ != nullptr) check("!" + computed(*guard_));
    std::vector<const Expr*> attr_values;
    for (const LetBinding& let : lets_) computed_attrs(*let.value, attr_values);
    for (const RootRewrite& rewrite : rule_.rewrites) computed_attrs(*rewrite.value, attr_values);
    for (const Expr* value : attr_values) computed(*value);
    std::vector<std::string> callees;
    for (const LetBinding& let : lets_) called_op_variables(*let.value, callees);
    for (const RootRewrite& rewrite : rule_.rewrites) called_op_variables(*rewrite.value, callees);
    for (const std::string& callee : callees) {
      if (op_lists_.count(callee) != 0) bound_[callee] = common_member(callee);
    }
    committed_ = true;
    for (const LetBinding& let : lets_) bound_[let.name] = local(build(*let.value, nullptr), let.name, 2);
    emit_replacements();
    for (int i = 0; i < loops_; ++i) {
      out.dedent();
      out.line("}");
    }
    if (loops_ > 0) out.line("return false;");
    out.dedent();
    out.line("}");
  }

 private:
  // A condition that holds when `candidate` is one of the roots matched so far.
  std::string earlier_root(const std::string& candidate) {
    std::vector<std::string> parts;
    for (const std::string& node : root_nodes_) parts.push_back(candidate + " == " + node);
    for (const std::string& list : root_lists_) {
      needs_.algorithm = true;
      parts.push_back("std::find(" + list + ".begin(), " + list + ".end(), " + candidate + ") != " + list + ".end()");
    }
    return fmt::format("{}", fmt::join(parts, " || "));
  }

  // Opens the loops that walk from the hook value up the path to candidates for `root`; returns the candidate.
  // Each loop is left open (loops_ counts it) or closed by the caller.
  std::string open_candidate_loops(const RootDecl& root, const Pattern& pattern) {
    std::optional<RootHook> hook = find_root_hook(pattern, [&](const std::string& name) {
      return bound_.count(name) != 0 && lists_.count(name) == 0 && dims_.count(name) == 0;
    });
    std::string from = bound_.at(hook->variable);
    for (size_t depth = hook->path.size(); depth-- > 0;) {
      const Pattern& step = pattern_at(pattern, std::span(hook->path).first(depth));
      std::string user = depth == 0 ? names_.fresh(root.name) : names_.numbered("user");
      body_->line("for (dpl::Node* " + user + " : " + from + "->users()) {");
      body_->indent();
      ++loops_;
      check(head_of(step)->fails(user));
      from = user;
    }
    return from;
  }

  // A later root: tried on each candidate in turn; a failure further on resumes with the next candidate.
  void find_root(const RootDecl& root, const Pattern& pattern) {
    std::string candidate = open_candidate_loops(root, pattern);
    check(earlier_root(candidate));
    bound_[root.name] = candidate;
    match(pattern, candidate, /*op_known=*/true);
    check_dimensions(pattern);
    if (root.guard != nullptr) check("!" + computed(*root.guard));
    root_nodes_.push_back(candidate);
  }

  // A group: every candidate that matches (with the group's guard) becomes a member; the values first bound in
  // the member's pattern are collected into lists, one entry per member. With alternatives, the candidates are
  // scanned once per alternative, in order; a candidate that is a member already is skipped.
  void collect_group(const RootDecl& root, const std::vector<PatternPtr>& alternatives) {
    needs_.vector = true;
    const std::set<std::string> before = bound_names();
    const auto saved_bound = bound_;
    const auto saved_properties = properties_;
    const auto saved_dims = dims_;
    const auto saved_lists = lists_;
    const int saved_loops = loops_;

    // The member matchers: lambdas, so that a failed check (`return false;`) rejects only that candidate. They
    // are written aside: the lists they fill are declared above them, and which lists there are shows only once
    // every alternative has been matched.
    struct MemberMatcher {
      CodeWriter lambda;
      std::string function;
      std::map<std::string, std::string> bound;
      std::set<std::string> dims;
      std::set<std::string> lists;  // `xs...` inside the member: read in its guard only
      int loops = 0;
    };
    std::vector<MemberMatcher> matchers(alternatives.size());
    CodeWriter* outer = body_;
    for (size_t k = 0; k < alternatives.size(); ++k) {
      MemberMatcher& matcher = matchers[k];
      for (int i = 0; i < outer->indent_level(); ++i) matcher.lambda.indent();
      body_ = &matcher.lambda;
      bound_ = saved_bound;
      properties_ = saved_properties;
      dims_ = saved_dims;
      lists_ = saved_lists;
      matcher.function = names_.fresh(root.name + "_member");
      std::string member = names_.fresh(root.name + "_node");
      body_->line("auto " + matcher.function + " = [&](dpl::Node* " + member + ") -> bool {");
      body_->indent();
      loops_ = 0;
      bound_[root.name] = member;
      match(*alternatives[k], member, /*op_known=*/true);
      check_dimensions(*alternatives[k]);
      if (root.guard != nullptr) check("!" + computed(*root.guard));
      matcher.bound = bound_;
      matcher.dims = dims_;
      matcher.lists = lists_;
      matcher.loops = loops_;
    }
    // The lists: the member itself and every value first bound inside the pattern (by every alternative) that is
    // read again.
    std::vector<std::string> collected;
    for (const auto& entry : matchers[0].bound) {
      const std::string& variable = entry.first;  // not a structured binding: clang 14 cannot capture one
      bool everywhere = std::all_of(matchers.begin(), matchers.end(), [&](const MemberMatcher& matcher) {
        return matcher.bound.count(variable) != 0 && matcher.lists.count(variable) == 0;
      });
      // Hidden variables (`#` in the name: a pattern declaration's repeated parameter, a dimension expression's
      // dimension) are read inside the member only.
      const bool hidden = variable.find('#') != std::string::npos;
      if (before.count(variable) == 0 && everywhere && !hidden) collected.push_back(variable);
    }
    std::vector<std::string> lists;
    for (const std::string& variable : collected) lists.push_back(names_.fresh(variable + "_list"));
    std::set<std::string> captures;  // attributes: their lists hold dpl::AttrValue copies
    std::set<std::string> ops;       // op variables: their lists hold dpl::OpId
    for (const PatternPtr& alternative : alternatives) {
      captures.merge(attribute_captures(*alternative));
      ops.merge(op_captures(*alternative));
    }
    const std::set<std::string>& member_dims = matchers[0].dims;  // dimensions: their lists hold dpl::Dim
    for (MemberMatcher& matcher : matchers) {
      body_ = &matcher.lambda;
      std::string pushes;
      for (size_t i = 0; i < collected.size(); ++i) {
        pushes += lists[i] + ".push_back(" + matcher.bound.at(collected[i]) + "); ";
      }
      if (matcher.loops == 0) {
        body_->line(pushes + "return true;");
      } else {
        body_->line("{ " + pushes + "return true; }");
        for (int i = 0; i < matcher.loops; ++i) {
          body_->dedent();
          body_->line("}");
        }
        body_->line("return false;");
      }
      body_->dedent();
      body_->line("};");
    }
    body_ = outer;

    // Back outside the lambdas: their locals are gone; the lists replace the values bound inside.
    bound_ = saved_bound;
    properties_ = saved_properties;
    dims_ = saved_dims;
    lists_ = saved_lists;
    loops_ = saved_loops;
    // The lists, then the lambdas that fill them.
    std::string members_list;
    for (size_t i = 0; i < collected.size(); ++i) {
      bound_[collected[i]] = lists[i];
      const bool attribute = captures.count(collected[i]) != 0;
      const bool dim = member_dims.count(collected[i]) != 0;
      const bool op = ops.count(collected[i]) != 0;
      // Attribute and dimension lists are read as AttrList- and NumberList-typed expressions, op lists as callees.
      if (!attribute && !dim && !op) lists_.insert(collected[i]);
      if (op) op_lists_.insert(collected[i]);
      if (collected[i] == root.name) members_list = lists[i];
      // Reused across calls, so that collecting allocates only while a list grows past its largest size yet.
      const char* element = attribute ? "dpl::AttrValue" : dim ? "dpl::Dim" : op ? "dpl::OpId" : "dpl::Node*";
      body_->line(std::string("static thread_local std::vector<") + element + "> " + lists[i] + ";");
      body_->line(lists[i] + ".clear();");
    }
    for (const MemberMatcher& matcher : matchers) body_->text(matcher.lambda.str());

    // Candidates: the users of the hook value, up the path, each distinct from the roots and members so far.
    root_lists_.push_back(members_list);
    for (size_t k = 0; k < alternatives.size(); ++k) {
      const int loops_outside = loops_;
      std::string candidate = open_candidate_loops(root, *alternatives[k]);
      check(earlier_root(candidate));
      body_->line(matchers[k].function + "(" + candidate + ");");
      while (loops_ > loops_outside) {
        body_->dedent();
        body_->line("}");
        --loops_;
      }
    }
    check(members_list + ".size() < 2");
  }

  std::set<std::string> bound_names() const {
    std::set<std::string> names;
    for (const auto& [variable, local] : bound_) names.insert(variable);
    return names;
  }

  // Every rewritten root with its replacement, replaced all at once; a group's members take the fields of the
  // tuple that replaces the group, one each.
  void emit_replacements() {
    needs_.vector = needs_.utility = true;
    std::string pairs = names_.fresh("replacements");
    body_->line("static thread_local std::vector<std::pair<dpl::Node*, dpl::Node*>> " + pairs + ";");
    body_->line(pairs + ".clear();");
    for (const RootRewrite& rewrite : rule_.rewrites) {
      std::string value = build(*rewrite.value, nullptr);
      if (lists_.count(rewrite.root) == 0) {
        body_->line(pairs + ".emplace_back(" + bound_.at(rewrite.root) + ", " + value + ");");
        continue;
      }
      const std::string& members = bound_.at(rewrite.root);
      check("!" + value + "->type()->is_tuple() || " + value + "->type()->fields().size() != " + members +
            ".size()");
      std::string i = names_.numbered("i");
      body_->line("for (size_t " + i + " = 0; " + i + " < " + members + ".size(); ++" + i + ") {");
      body_->indent();
      std::string item = names_.numbered("item");
      body_->line("dpl::Node* " + item + " = rewriter.item(" + value + ", static_cast<int64_t>(" + i + "));");
      check(item + " == nullptr");
      body_->line(pairs + ".emplace_back(" + members + "[" + i + "], " + item + ");");
      body_->dedent();
      body_->line("}");
    }
    body_->line("return rewriter.replace_all(" + pairs + ");");
  }

  const Rule& rule_;
  const RootsAlternative& roots_;        // the patterns of this alternative's roots
  std::vector<std::string> root_nodes_;  // the locals of the single roots matched so far
  std::vector<std::string> root_lists_;  // the member lists of the groups collected so far
  std::set<std::string> op_lists_;       // op variables bound in a group: bound_ holds a std::vector<dpl::OpId>
};

// One alternative of one rule, as the pass matcher tries it.
struct Alternative {
  size_t rule_index;
  const Rule* rule;
  const Pattern* pattern = nullptr;  // a single-root rule's alternative (a multi-root rule has `function`)
  OpId root_op = 0;
  std::string function;              // a multi-root rule's matcher function
  std::vector<std::string> comment;  // lines, without `// `
  // Alternatives that differ in the root op only may share a group function (emit_matcher); its comment names
  // them together: the rule's header, the alternative's number among `count`, the whole rule.
  std::string header;
  size_t number = 1;
  size_t count = 1;
  std::string rule_text;
  bool any_node = false;  // a multi-root rule anchored at `x: _`: tried on every node, whatever its op
  bool composite_root = false;  // rooted at `composite("name")(...)`: tried on FuncCall nodes
  bool item_root = false;       // rooted at a tuple item (`t[0]`): tried on TupleItem nodes
  size_t specificity = 0;       // pattern_specificity() of the alternative (summed over the roots of a multi-root rule)
};

std::string output_stem(const std::string& basename) {
  if (basename.size() > 4 && basename.ends_with(".dpl")) return basename.substr(0, basename.size() - 4);
  return basename;
}

void open_namespace(CodeWriter& out, const std::string& name) { out.line("namespace " + name + " {"); }
void close_namespace(CodeWriter& out, const std::string& name) { out.line("}  // namespace " + name); }

std::string attr_kind_cpp(AttrKind kind) {
  switch (kind) {
    case AttrKind::Bool: return "dpl::AttrKind::Bool";
    case AttrKind::Int: return "dpl::AttrKind::Int";
    case AttrKind::Float: return "dpl::AttrKind::Float";
    case AttrKind::String: return "dpl::AttrKind::String";
    case AttrKind::DType: return "dpl::AttrKind::DType";
    case AttrKind::IntList: return "dpl::AttrKind::IntList";
    case AttrKind::OptInt: return "dpl::AttrKind::OptInt";
    case AttrKind::OptFloat: return "dpl::AttrKind::OptFloat";
    case AttrKind::OptIntList: return "dpl::AttrKind::OptIntList";
    case AttrKind::IntOrIntList: return "dpl::AttrKind::IntOrIntList";
    case AttrKind::OptString: return "dpl::AttrKind::OptString";
  }
  return "";
}

// A function of the generated source that a source split into parts may put in another file: a pass's decision
// tree for one root op (or for several whose code is the same), or a multi-root rule's function.
struct SplitFunction {
  std::string name;
  std::string definition;           // with its comment, ending with a blank line
  std::string_view result = "int";  // "bool" for a multi-root rule's function
  bool is_rule() const { return result == "bool"; }
  // `int NAME(dpl::Rewriter& rewriter, dpl::Node* root);`: what a part that calls it and does not define it reads.
  std::string declaration() const {
    return std::string(result) + " " + name + "(dpl::Rewriter& rewriter, dpl::Node* root);";
  }
};

// The ops declared in the .dpl file, each registered in the process's registry by a static initializer (before
// main, so that the TVMScript reader and printer know them wherever the pass library is linked). The rules refer
// to an op by the id its registration returned: `dpl_op_my_scale`.
// With `shared` (a source split into parts) the ids have external linkage: trees in the other parts read them.
void emit_op_registrations(CodeWriter& out, const AstFile& file, const OpRegistry& registry, NameTable& names,
                           Needs& needs, bool shared) {
  static constexpr std::pair<OpTrait, const char*> kTraitNames[] = {
      {kCommutative, "dpl::kCommutative"}, {kElementwise, "dpl::kElementwise"}, {kBroadcast, "dpl::kBroadcast"},
      {kInjective, "dpl::kInjective"},     {kReduction, "dpl::kReduction"},     {kOpaque, "dpl::kOpaque"}};
  for (const OpDecl& decl : file.ops) {
    const OpInfo& info = registry.get(decl.id);
    std::string function = names.fresh("register_" + op_ident(info));
    out.line("// op " + info.name + " (" + file.basename + ":" + std::to_string(decl.name_loc.line) + ")");
    out.line("dpl::OpId " + function + "() {");
    out.indent();
    out.line("dpl::OpInfo info;");
    out.line("info.name = " + string_literal(info.name) + ";");
    out.line(fmt::format("info.min_operands = {};", info.min_operands));
    out.line(fmt::format("info.max_operands = {};", info.max_operands));
    for (const AttrSpec& attr : info.attrs) {
      out.line("info.attrs.push_back(dpl::AttrSpec{" + string_literal(attr.name) + ", " + attr_kind_cpp(attr.kind) +
               ", " + attr_value_cpp(attr.default_value, needs) + "});");
    }
    std::vector<std::string> traits;
    for (const auto& [trait, name] : kTraitNames) {
      if (info.has(trait)) traits.push_back(name);
    }
    if (!traits.empty()) out.line("info.traits = " + fmt::format("{}", fmt::join(traits, " | ")) + ";");
    if (info.infer == infer_onnx_opaque) {
      out.line("info.infer = dpl::infer_onnx_opaque;  // the type its result_types attribute spells");
      needs.opaque_ops = true;
    }
    if (decl.same_as >= 0) {
      out.line("// same_as(" + decl.operands[static_cast<size_t>(decl.same_as)] + ")");
      out.line("info.infer = [](const dpl::InferInput& input, std::string&) -> dpl::TypeRef {");
      out.indent();
      out.line(fmt::format("return input.operands[{}]->type();", decl.same_as));
      out.dedent();
      out.line("};");
    }
    needs.utility = true;
    out.line("return dpl::OpRegistry::global().add(std::move(info));");
    out.dedent();
    out.line("}");
    out.line((shared ? "extern const dpl::OpId " : "[[maybe_unused]] const dpl::OpId ") + op_constant(info) + " = " +
             function + "();");
    out.blank();
  }
}

// Dispatch on the root op of a call to the matcher function of each op: an op declared in the .dpl file (whose id
// is known at run time only, so it cannot be a case label) behind an `if`, then a switch over the built-in ops, ops
// that share a function sharing a case. After the dispatch, a call of any other op returns -1 when
// `only_op_roots`, else falls through.
void emit_op_dispatch(CodeWriter& out, const std::vector<std::pair<OpId, std::string>>& functions, bool only_op_roots,
                      const OpRegistry& registry) {
  std::vector<std::string> builtin_functions;  // in order of first appearance
  for (const auto& [op, function] : functions) {
    if (op < std::size(kBuiltinOpIdents)) {
      if (std::find(builtin_functions.begin(), builtin_functions.end(), function) == builtin_functions.end())
        builtin_functions.push_back(function);
      continue;
    }
    out.line("if (root->op() == " + op_constant(registry.get(op)) + ") return " + function + "(rewriter, root);");
  }
  if (builtin_functions.empty()) {
    if (only_op_roots) out.line("return -1;");
    return;
  }
  out.line("switch (root->op()) {");
  out.indent();
  for (const std::string& function : builtin_functions) {
    for (const auto& [op, op_function] : functions) {
      if (op_function == function && op < std::size(kBuiltinOpIdents)) {
        out.line("case " + op_constant(registry.get(op)) + ":");
      }
    }
    out.indent();
    out.line("return " + function + "(rewriter, root);");
    out.dedent();
  }
  out.line("default:");
  out.indent();
  out.line(only_op_roots ? "return -1;" : "break;");
  out.dedent();
  out.dedent();
  out.line("}");
}

// The matcher functions of a multi-root rule, one per alternative (expand_root_alternatives), written to `code`;
// the alternatives the pass matcher dispatches.
std::vector<Alternative> emit_multi_root_rule(const Rule& rule, size_t rule_index, const std::string& location,
                                              NameTable& names, const OpRegistry& registry, Needs& needs,
                                              std::vector<SplitFunction>& rule_functions) {
  std::vector<Alternative> alternatives;
  const std::vector<RootsAlternative> expanded = expand_root_alternatives(rule);
  for (size_t k = 0; k < expanded.size(); ++k) {
    const RootsAlternative& roots = expanded[k];
    Alternative alternative;
    alternative.rule_index = rule_index;
    alternative.rule = &rule;
    alternative.function = names.fresh("rule_" + rule.name);
    std::string which = expanded.size() == 1 ? "" : fmt::format(", alternative {} of {}", k + 1, expanded.size());
    alternative.comment = {"rule " + rule.name + " (" + location + ")" + which};
    const Pattern& anchor = *roots.roots[0][0];
    const Pattern* call = &anchor;
    while (const auto* bind = std::get_if<BindPattern>(&call->node)) call = bind->inner.get();
    alternative.any_node = !std::holds_alternative<CallPattern>(call->node);
    alternative.root_op = alternative.any_node ? OpId{0} : root_call(anchor).ops[0].id;
    alternative.specificity = root_specificity(roots);
    std::vector<std::string> texts;
    for (size_t i = 0; i < rule.roots.size(); ++i) {
      const RootDecl& root = rule.roots[i];
      std::vector<std::string> patterns;
      for (const PatternPtr& pattern : roots.roots[i]) patterns.push_back(to_string(*pattern));
      texts.push_back(std::string(root.group ? "group " : "") + root.name + ": " +
                      fmt::format("{}", fmt::join(patterns, " | ")) +
                      (root.guard ? " where " + to_string(*root.guard) : ""));
    }
    CodeWriter code;
    code.line("// " + alternative.comment[0]);
    code.line("// " + comment_text(fmt::format("{{ {}; {}=> {}; }}", fmt::join(texts, "; "),
                                               rule.guard ? "where " + to_string(*rule.guard) + "; " : "",
                                               rhs_to_string(rule))));
    MultiRootEmitter(registry, rule, roots, needs).emit(code, alternative.function);
    code.blank();
    rule_functions.push_back({alternative.function, code.str(), "bool"});
    alternatives.push_back(std::move(alternative));
  }
  return alternatives;
}

// The rules of one pass as decision trees, one per dispatch group: a root op, composite-call roots, any node.
struct PassTrees {
  struct Group {
    enum class Kind : unsigned char { Op, Composite, TupleItem, AnyNode };
    Kind kind;
    OpId op = 0;
    DecisionTree tree;
    std::vector<const Alternative*> members;  // in the order they were added to the tree
  };
  std::vector<Group> groups;
  std::vector<Alternative> alternatives;  // in rule order
  std::vector<PatternPtr> patterns;       // the alternatives' patterns
};

// The PassDef initializers after the matcher: a partition pass visits users first; a pass with a rule anchored at
// any value visits parameters too (a rewrite pass, so operands first); the table of root ops (`root_ops`, empty
// when some rule is rooted elsewhere); then, on a line of its own, the driver's loop instantiated with the matcher
// inlined.
std::vector<std::string> visit_initializers(const Pass& pass, const std::vector<Alternative>& alternatives,
                                            const std::string& matcher, const std::string& root_ops) {
  bool any_node = std::any_of(alternatives.begin(), alternatives.end(), [](const Alternative& a) { return a.any_node; });
  bool partition = std::any_of(pass.rules.begin(), pass.rules.end(),
                               [](const Rule& rule) { return rule.kind == Rule::Kind::Partition; });
  std::string order = partition ? "dpl::VisitOrder::UsersFirst" : "dpl::VisitOrder::OperandsFirst";
  std::string visit_params = any_node ? "true" : "false";
  return {order + ", /*visit_params=*/" + visit_params + ", " + (root_ops.empty() ? "{}" : root_ops),
          "&dpl::compiled_sweep<&" + matcher + ", " + order + ", " + visit_params + ">"};
}

// The ops the pass's rules are rooted at, in id order, when every rule is rooted at an op call; else none.
std::vector<OpId> root_ops_of(const PassTrees& trees) {
  std::vector<OpId> ops;
  for (const PassTrees::Group& group : trees.groups) {
    if (group.kind != PassTrees::Group::Kind::Op) return {};
    ops.push_back(group.op);
  }
  std::sort(ops.begin(), ops.end());
  ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
  return ops;
}

// Builds the trees of `pass`; multi-root rules' functions are appended to `rule_functions`. Within a group the
// alternatives are added in rule order (docs/semantics.md, "Rule order"): higher priority first, then the more
// specific, then declaration order; any-node alternatives (multi-root rules anchored at `x: _`) are in every group,
// each in its place in the order.
PassTrees build_pass_trees(const AstFile& file, const Pass& pass, const OpRegistry& registry, NameTable& names,
                           Needs& needs, std::vector<SplitFunction>& rule_functions) {
  PassTrees trees;
  std::vector<Alternative>& alternatives = trees.alternatives;
  for (size_t rule_index = 0; rule_index < pass.rules.size(); ++rule_index) {
    const Rule& rule = pass.rules[rule_index];
    std::string location = file.basename + ":" + std::to_string(rule.name_loc.line);
    if (rule.kind == Rule::Kind::MultiRoot) {
      for (Alternative& alternative : emit_multi_root_rule(rule, rule_index, location, names, registry, needs,
                                                           rule_functions)) {
        alternatives.push_back(std::move(alternative));
      }
      continue;
    }
    std::vector<PatternPtr> expanded = expand_alternatives(*rule.lhs);
    const bool partition = rule.kind == Rule::Kind::Partition;
    const std::string guard = rule.guard ? " where " + to_string(*rule.guard) : "";
    const std::string action = partition ? "" : " => " + rhs_to_string(rule);
    const std::string header = partition ? "partition " + string_literal(rule.name) + " (" + location + ")"
                                         : "rule " + rule.name + " (" + location + ")";
    for (size_t k = 0; k < expanded.size(); ++k) {
      if (rule.is_dropped(k)) continue;  // it can never match (never_match.h)
      Alternative alternative;
      alternative.rule_index = rule_index;
      alternative.rule = &rule;
      alternative.pattern = expanded[k].get();
      alternative.item_root = root_is_item(*expanded[k]);
      alternative.composite_root = !alternative.item_root && root_call(*expanded[k]).composite.has_value();
      alternative.root_op =
          alternative.composite_root || alternative.item_root ? OpId{0} : root_call(*expanded[k]).ops[0].id;
      alternative.specificity = pattern_specificity(*expanded[k]);
      std::string which = expanded.size() == 1 ? "" : fmt::format(", alternative {} of {}", k + 1, expanded.size());
      alternative.comment = {header + which, comment_text(to_string(*expanded[k]) + guard + action)};
      alternative.header = header;
      alternative.number = k + 1;
      alternative.count = expanded.size();
      alternative.rule_text = comment_text(to_string(*rule.lhs) + guard + action);
      alternatives.push_back(std::move(alternative));
      trees.patterns.push_back(std::move(expanded[k]));
    }
  }
  // Root ops in order of first appearance, so the output follows the file.
  for (const Alternative& alternative : alternatives) {
    bool op_root = !alternative.any_node && !alternative.composite_root && !alternative.item_root;
    if (op_root && std::none_of(trees.groups.begin(), trees.groups.end(), [&](const PassTrees::Group& group) {
          return group.op == alternative.root_op;
        })) {
      trees.groups.push_back({PassTrees::Group::Kind::Op, alternative.root_op, {}, {}});
    }
  }
  auto has = [&](auto predicate) { return std::any_of(alternatives.begin(), alternatives.end(), predicate); };
  if (has([](const Alternative& a) { return a.composite_root; })) {
    trees.groups.push_back({PassTrees::Group::Kind::Composite, 0, {}, {}});
  }
  if (has([](const Alternative& a) { return a.item_root; })) {
    trees.groups.push_back({PassTrees::Group::Kind::TupleItem, 0, {}, {}});
  }
  if (has([](const Alternative& a) { return a.any_node; })) {
    trees.groups.push_back({PassTrees::Group::Kind::AnyNode, 0, {}, {}});
  }

  std::stable_sort(alternatives.begin(), alternatives.end(), [](const Alternative& a, const Alternative& b) {
    if (a.rule->options.priority != b.rule->options.priority) {
      return a.rule->options.priority > b.rule->options.priority;
    }
    return a.specificity > b.specificity;
  });
  // A node rebuilt in place keeps its id: in a pass with `once` rules, which tell new nodes by their ids, every
  // rewrite builds a new node.
  const bool any_once = has([](const Alternative& a) { return a.rule->options.once; });
  for (PassTrees::Group& group : trees.groups) {
    GroupNames group_names;
    auto fits = [&](const Alternative& alternative) {
      return alternative.any_node ||
             (group.kind == PassTrees::Group::Kind::Op && !alternative.composite_root && !alternative.item_root &&
              alternative.root_op == group.op) ||
             (group.kind == PassTrees::Group::Kind::Composite && alternative.composite_root) ||
             (group.kind == PassTrees::Group::Kind::TupleItem && alternative.item_root);
    };
    const bool shared = std::count_if(alternatives.begin(), alternatives.end(), fits) > 1;
    for (const Alternative& alternative : alternatives) {
      if (!fits(alternative)) continue;
      std::vector<MatchStep> prefix;
      RuleLeaf leaf;
      leaf.rule_index = alternative.rule_index;
      leaf.rule_name = alternative.rule->name;
      leaf.comment = alternative.comment;
      const bool once = alternative.rule->options.once;
      if (alternative.pattern == nullptr) {
        if (once) leaf.tail.emplace_back(MatchStep::Kind::Check, "rewriter.created_in_run(root)");
        leaf.tail.emplace_back(MatchStep::Kind::Action, alternative.function + "(rewriter, root)");
      } else {
        RuleEmitter emitter(registry, *alternative.pattern, *alternative.rule, needs, group_names);
        emitter.order_operands_by_head(shared);
        emitter.build_steps(prefix, leaf.tail, once, !any_once);
        leaf.root_heads = emitter.root_heads();
      }
      group.tree.add(std::move(prefix), std::move(leaf));
      group.members.push_back(&alternative);
    }
  }
  return trees;
}

// The name a group's matcher function is based on.
std::string group_suffix(const PassTrees::Group& group, const OpRegistry& registry) {
  switch (group.kind) {
    case PassTrees::Group::Kind::Op:
      return op_ident(registry.get(group.op));
    case PassTrees::Group::Kind::Composite:
      return "composite_call";
    case PassTrees::Group::Kind::TupleItem:
      return "tuple_item";
    case PassTrees::Group::Kind::AnyNode:
      break;
  }
  return "any_node";
}

std::string group_title(const PassTrees::Group& group, const OpRegistry& registry) {
  switch (group.kind) {
    case PassTrees::Group::Kind::Op:
      return registry.get(group.op).name;
    case PassTrees::Group::Kind::Composite:
      return "a composite call";
    case PassTrees::Group::Kind::TupleItem:
      return "a tuple item";
    case PassTrees::Group::Kind::AnyNode:
      break;
  }
  return "any other node";
}

// "1 rule", "2 rules"
std::string counted(size_t count, const std::string& noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

// The pass's matcher: one function per dispatch group (groups whose functions would read the same share one),
// appended to `tree_functions`, then the matcher dispatching on the root, written to `out`.
void emit_matcher(CodeWriter& out, std::vector<SplitFunction>& tree_functions, const Pass& pass,
                  const std::string& matcher, const PassTrees& trees, NameTable& names, const OpRegistry& registry) {
  if (trees.groups.empty()) {
    out.line("// Pass " + pass.name + " has no rules.");
    out.line("int " + matcher + "(dpl::Rewriter&, dpl::Node*) { return -1; }");
    out.blank();
    return;
  }
  // Groups whose code differs in comments only (alternatives that differ in the root op only) share a function.
  struct Function {
    std::string name;
    std::string code;  // without comments
    std::vector<const PassTrees::Group*> groups;
  };
  std::vector<Function> functions;
  std::vector<size_t> function_of_group;
  for (const PassTrees::Group& group : trees.groups) {
    CodeWriter code;
    group.tree.print_cpp(code, [](const RuleLeaf&) { return std::vector<std::string>(); });
    auto same =
        std::find_if(functions.begin(), functions.end(), [&](const Function& f) { return f.code == code.str(); });
    if (same == functions.end()) {
      functions.push_back({names.fresh(matcher + "_" + group_suffix(group, registry)), code.str(), {}});
      same = functions.end() - 1;
    }
    same->groups.push_back(&group);
    function_of_group.push_back(static_cast<size_t>(same - functions.begin()));
  }
  // The group functions come first; the pass matcher below calls them.
  for (const Function& function : functions) {
    CodeWriter definition;
    std::vector<std::string> titles;
    for (const PassTrees::Group* group : function.groups) titles.push_back(group_title(*group, registry));
    definition.line(
        fmt::format("// Pass {}, rooted at {}: the decision tree of its rules.", pass.name, fmt::join(titles, ", ")));
    definition.line("[[gnu::noinline]] int " + function.name + "(dpl::Rewriter& rewriter, dpl::Node* root) {");
    definition.indent();
    const PassTrees::Group& first = *function.groups[0];
    first.tree.print_cpp(definition, [&](const RuleLeaf& leaf) {
      if (function.groups.size() == 1) return leaf.comment;
      // The leaf at this position in every group of the function: the same rule, one alternative each.
      const Alternative& alternative = *first.members[leaf.position];
      if (alternative.pattern == nullptr) return leaf.comment;
      std::vector<size_t> numbers;
      for (const PassTrees::Group* group : function.groups) numbers.push_back(group->members[leaf.position]->number);
      std::string which = numbers.size() == alternative.count
                              ? fmt::format("all {} alternatives", alternative.count)
                              : fmt::format("alternatives {} of {}", fmt::join(numbers, ", "), alternative.count);
      return std::vector<std::string>{alternative.header + ", " + which + " (they differ in the root op only)",
                                      alternative.rule_text};
    });
    definition.line("return -1;");
    definition.dedent();
    definition.line("}");
    definition.blank();
    tree_functions.push_back({function.name, definition.str()});
  }
  out.line("// Tries the rules of pass " + pass.name + " on `root`; returns the index of the rule that fired, or -1.");
  out.line("// Inlined into the pass's sweep (dpl::compiled_sweep) and its trees kept out of line: a node no rule is");
  out.line("// rooted at costs the sweep this dispatch, not a call.");
  std::vector<std::pair<OpId, std::string>> op_functions;
  std::string composite_function;
  std::string item_function;
  std::string any_node_function;
  for (size_t i = 0; i < trees.groups.size(); ++i) {
    const std::string& name = functions[function_of_group[i]].name;
    switch (trees.groups[i].kind) {
      case PassTrees::Group::Kind::Op:
        op_functions.emplace_back(trees.groups[i].op, name);
        break;
      case PassTrees::Group::Kind::Composite:
        composite_function = name;
        break;
      case PassTrees::Group::Kind::TupleItem:
        item_function = name;
        break;
      case PassTrees::Group::Kind::AnyNode:
        any_node_function = name;
        break;
    }
  }
  const bool only_op_roots = composite_function.empty() && item_function.empty() && any_node_function.empty();
  out.line("[[gnu::always_inline]] inline int " + matcher + "(dpl::Rewriter& rewriter, dpl::Node* root) {");
  out.indent();
  if (!op_functions.empty()) {
    if (only_op_roots) {
      out.line("if (!root->is_call()) return -1;");
    } else {
      out.line("if (root->is_call()) {");
      out.indent();
    }
    emit_op_dispatch(out, op_functions, only_op_roots, registry);
    if (!only_op_roots) {
      out.dedent();
      out.line("}");
    }
  }
  if (!composite_function.empty()) {
    out.line("if (root->kind() == dpl::NodeKind::FuncCall) return " + composite_function + "(rewriter, root);");
  }
  if (!item_function.empty()) {
    out.line("if (root->kind() == dpl::NodeKind::TupleItem) return " + item_function + "(rewriter, root);");
  }
  if (!any_node_function.empty()) {
    out.line("return " + any_node_function + "(rewriter, root);");
  } else if (!only_op_roots) {
    out.line("return -1;");
  }
  out.dedent();
  out.line("}");
  out.blank();
}

}  // namespace

bool is_cpp_keyword(std::string_view name) { return cpp_keywords().count(name) != 0; }

std::string part_source_name(const std::string& stem, size_t part) {
  return fmt::format("{}.dpl.part{}.cpp", stem, part + 1);
}

namespace {

// The namespace of the functions a source split into parts shares between them: from the file's stem, so that
// two rule files of one library do not share it.
std::string parts_namespace_name(const std::string& stem) {
  std::string name = "dpl_parts_";
  for (char c : stem) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

// The part (0 = the first, the file that also holds everything else) of each function: largest first, to the part
// with the least code so far; the first part starts with `first_part_load` (the size of its other code).
std::vector<size_t> assign_parts(const std::vector<const SplitFunction*>& functions, size_t parts,
                                 size_t first_part_load) {
  std::vector<size_t> part_of(functions.size(), 0);
  if (parts <= 1) return part_of;
  std::vector<size_t> load(parts, 0);
  load[0] = first_part_load;
  std::vector<size_t> order(functions.size());
  for (size_t i = 0; i < functions.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return functions[a]->definition.size() > functions[b]->definition.size();
  });
  for (size_t i : order) {
    const size_t part = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    part_of[i] = part;
    load[part] += functions[i]->definition.size();
  }
  return part_of;
}

}  // namespace

std::string emit_plan(const AstFile& file, const OpRegistry& given_registry) {
  const OpRegistry& registry = file.op_registry ? *file.op_registry : given_registry;
  CodeWriter out;
  NameTable names;
  Needs needs;
  std::vector<SplitFunction> rule_functions;  // not shown: a multi-root rule is one opaque step of the tree
  for (const Pass& pass : file.passes) {
    PassTrees trees = build_pass_trees(file, pass, registry, names, needs, rule_functions);
    out.line(fmt::format("pass {} ({}): {}, {}", pass.name, file.basename, counted(pass.rules.size(), "rule"),
                         counted(trees.alternatives.size(), "alternative")));
    out.indent();
    for (const PassTrees::Group& group : trees.groups) {
      out.line(
          fmt::format("rooted at {}: {}", group_title(group, registry), counted(group.tree.size(), "alternative")));
      out.indent();
      group.tree.print_plan(out);
      out.dedent();
    }
    for (const Rule& rule : pass.rules) {
      if (rule.dropped.empty()) continue;
      const size_t count = expand_alternatives(*rule.lhs).size();
      for (const DroppedAlternative& dropped : rule.dropped) {
        out.line(fmt::format("dropped: rule {} ({}:{}), alternative {} of {}: it can never match: {}", rule.name,
                             file.basename, rule.name_loc.line, dropped.index + 1, count, dropped.reason));
      }
    }
    out.dedent();
  }
  return out.str();
}

EmittedCpp emit_cpp(const AstFile& file, const EmitOptions& options, const OpRegistry& given_registry) {
  const OpRegistry& registry = file.op_registry ? *file.op_registry : given_registry;  // with the file's `op`s
  EmittedCpp result;
  std::string stem = output_stem(file.basename);
  result.header_name = stem + ".dpl.h";
  result.source_name = stem + ".dpl.cpp";
  const std::string banner = "// Generated by dplc from " + file.basename + "; do not edit.";

  // File-level names: the public pass functions first, so that they keep their documented spelling.
  NameTable names;
  std::map<const Pass*, std::string> pass_functions;
  for (const Pass& pass : file.passes) pass_functions[&pass] = names.fresh(pass.name + "_pass");
  std::vector<std::string> pipeline_functions;
  for (const PipelineDecl& pipeline : file.pipelines) pipeline_functions.push_back(names.fresh(pipeline.name + "_pipeline"));

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
  for (size_t i = 0; i < file.pipelines.size(); ++i) {
    const PipelineDecl& pipeline = file.pipelines[i];
    header.line("// pipeline " + pipeline.name + " = " + fmt::format("{}", fmt::join(pipeline.passes, ", ")) +
                (pipeline.description.empty() ? "" : ": " + comment_text(pipeline.description)));
    header.line("const dpl::PipelineDef& " + pipeline_functions[i] + "();");
  }
  header.blank();
  close_namespace(header, options.namespace_name);
  result.header = header.str();

  // --- multi-root rule functions, and the decision trees ---
  std::vector<SplitFunction> rule_functions;
  Needs needs;
  std::map<const Pass*, PassTrees> trees;
  for (const Pass& pass : file.passes) {
    trees[&pass] = build_pass_trees(file, pass, registry, names, needs, rule_functions);
  }
  // Split into parts, the functions and the declared ops' ids have external linkage in a namespace of their own.
  const bool split = options.parts > 1;
  CodeWriter op_registrations;
  emit_op_registrations(op_registrations, file, registry, names, needs, split);

  // --- source ---
  CodeWriter includes;  // what every part of the source includes
  std::vector<std::string> system_includes = {"<cstdint>"};
  if (needs.string) system_includes.push_back("<string>");
  if (needs.string_view || !file.pipelines.empty()) system_includes.push_back("<string_view>");
  if (needs.optional) system_includes.push_back("<optional>");
  if (needs.utility) system_includes.push_back("<utility>");
  if (needs.variant) system_includes.push_back("<variant>");
  if (needs.vector) system_includes.push_back("<vector>");
  if (needs.algorithm) system_includes.insert(system_includes.begin(), "<algorithm>");
  for (const std::string& include : system_includes) includes.line("#include " + include);
  includes.blank();
  if (needs.dominators) includes.line("#include \"dpl/ir/dominators.h\"");
  includes.line("#include \"dpl/ir/graph.h\"");
  includes.line("#include \"dpl/ir/op_registry.h\"");
  if (needs.opaque_ops) includes.line("#include \"dpl/ir/opaque_ops.h\"");
  includes.line("#include \"dpl/rewrite/driver.h\"");
  includes.line("#include \"dpl/rewrite/sweep.h\"");
  includes.blank();
  // The headers of extern predicates and rewriters, as written, each once.
  std::vector<std::string> extern_headers;
  for (const ExternDecl& decl : file.externs) {
    if (std::find(extern_headers.begin(), extern_headers.end(), decl.header) == extern_headers.end())
      extern_headers.push_back(decl.header);
  }
  for (const std::string& header_path : extern_headers) includes.line("#include " + string_literal(header_path));
  if (!extern_headers.empty()) includes.blank();

  // Per pass: its decision-tree functions, the dispatching matcher and the rule table (file-local), then the
  // public PassDef accessors, then the registrations.
  struct PassCode {
    std::vector<SplitFunction> tree_functions;
    std::string matcher_and_table;
  };
  std::vector<PassCode> pass_code;
  struct PassNames {
    std::string matcher;
    std::string rule_table;
    std::string root_ops;  // empty: the pass has no table of root ops
  };
  std::map<const Pass*, PassNames> pass_names;
  for (const Pass& pass : file.passes) {
    std::string matcher = names.fresh("match_" + pass.name);
    std::string rule_table = names.fresh(pass.name + "_rules");
    const std::vector<OpId> root_ops = root_ops_of(trees[&pass]);
    std::string root_ops_table = root_ops.empty() ? "" : names.fresh(pass.name + "_root_ops");
    pass_names[&pass] = {matcher, rule_table, root_ops_table};
    PassCode& code = pass_code.emplace_back();
    CodeWriter out;
    emit_matcher(out, code.tree_functions, pass, matcher, trees[&pass], names, registry);
    // constexpr: a `const` table of string_views is initialized when the program starts, and its initializer
    // costs the C++ compiler about 2 ms per rule at -O2.
    if (pass.rules.empty()) {
      out.line("constexpr std::span<const dpl::RuleInfo> " + rule_table + ";");
    } else {
      // Per rule, the ops every match of it holds a call of (RuleInfo::needs): where the function holds none of
      // some rule's and none of the others', the driver does not sweep it.
      std::vector<std::string> needs_tables;
      bool explained = false;  // the tables' comment goes before the first one
      for (const Rule& rule : pass.rules) {
        const std::vector<OpId> needs = required_ops(rule);
        needs_tables.push_back(needs.empty() ? "" : names.fresh(pass.name + "_" + rule.name + "_needs"));
        if (needs.empty()) continue;
        if (!std::exchange(explained, true)) {
          out.line("// The ops every match of a rule holds a call of, once per call: a function without them for "
                   "each rule is not swept.");
        }
        out.line(op_table(needs_tables.back(), needs, registry));
      }
      out.line("constexpr dpl::RuleInfo " + rule_table + "[] = {");
      out.indent();
      for (size_t i = 0; i < pass.rules.size(); ++i) {
        const Rule& rule = pass.rules[i];
        out.line("{" + string_literal(rule.name) + ", " +
                 string_literal(file.basename + ":" + std::to_string(rule.name_loc.line)) +
                 (needs_tables[i].empty() ? "" : ", " + needs_tables[i]) + "},");
      }
      out.dedent();
      out.line("};");
    }
    out.blank();
    if (!root_ops.empty()) {
      out.line("// The ops the rules of pass " + pass.name + " are rooted at: the driver queues no other node again.");
      out.line(op_table(root_ops_table, root_ops, registry));
      out.blank();
    }
    code.matcher_and_table = out.str();
  }
  // The multi-root rules' functions first, as the single file lists them, then the decision trees.
  std::vector<const SplitFunction*> all_functions;
  for (const SplitFunction& function : rule_functions) all_functions.push_back(&function);
  size_t first_part_load = op_registrations.str().size();
  for (PassCode& code : pass_code) {
    for (const SplitFunction& function : code.tree_functions) all_functions.push_back(&function);
    first_part_load += code.matcher_and_table.size();
  }
  const std::vector<size_t> part_of = assign_parts(all_functions, options.parts, first_part_load);
  const std::string parts_namespace = parts_namespace_name(stem);
  // What the parts share (split only): the rule functions, wherever they are defined (trees in any part call
  // them), the trees the other parts define, and the declared ops' ids.
  std::vector<std::string> shared_declarations;
  std::vector<std::string> shared_names;
  std::vector<std::string> op_id_declarations;  // every part that is not the first reads them too
  if (split) {
    for (size_t i = 0; i < all_functions.size(); ++i) {
      if (part_of[i] == 0 && !all_functions[i]->is_rule()) continue;
      shared_declarations.push_back(all_functions[i]->declaration());
      shared_names.push_back(all_functions[i]->name);
    }
    for (const OpDecl& decl : file.ops) {
      const std::string id = op_constant(registry.get(decl.id));
      op_id_declarations.push_back("extern const dpl::OpId " + id + ";");
      shared_names.push_back(id);
    }
    shared_declarations.insert(shared_declarations.end(), op_id_declarations.begin(), op_id_declarations.end());
  }

  CodeWriter source;
  source.line(banner);
  source.line("#include \"" + result.header_name + "\"");
  source.blank();
  source.text(includes.str());
  open_namespace(source, options.namespace_name);
  if (!shared_declarations.empty()) {
    source.line("// What the parts of this file's output share: multi-root rule functions, the decision trees the other");
    source.line("// parts define, the ids of the ops this file declares.");
    open_namespace(source, parts_namespace);
    for (const std::string& declaration : shared_declarations) source.line(declaration);
    source.blank();
    source.text(op_registrations.str());
    for (size_t i = 0; i < all_functions.size(); ++i) {
      if (part_of[i] == 0 && all_functions[i]->is_rule()) source.text(all_functions[i]->definition);
    }
    close_namespace(source, parts_namespace);
    source.blank();
  }
  source.line("namespace {");
  source.blank();
  for (const std::string& name : shared_names) source.line("using " + parts_namespace + "::" + name + ";");
  if (!shared_names.empty()) source.blank();
  if (!split) {
    source.text(op_registrations.str());
    for (const SplitFunction& function : rule_functions) source.text(function.definition);
  }
  size_t function_index = rule_functions.size();
  for (const PassCode& code : pass_code) {
    for (const SplitFunction& function : code.tree_functions) {
      if (part_of[function_index++] == 0) source.text(function.definition);
    }
    source.text(code.matcher_and_table);
  }
  source.line("}  // namespace");
  source.blank();
  for (const Pass& pass : file.passes) {
    const PassNames& named = pass_names[&pass];
    source.line("const dpl::PassDef& " + pass_functions[&pass] + "() {");
    source.indent();
    // One line per group of fields: what the pass is, its rules and matcher, how it visits, its sweep.
    std::vector<std::string> fields = {
        string_literal(pass.name) + ", " + string_literal(pass.description) + ", " + string_literal(file.basename),
        named.rule_table + ", &" + named.matcher};
    for (std::string& field : visit_initializers(pass, trees[&pass].alternatives, named.matcher, named.root_ops)) {
      fields.push_back(std::move(field));
    }
    const std::string opening = "static const dpl::PassDef pass{";
    const std::string continuation(2 * static_cast<size_t>(source.indent_level()) + opening.size(), ' ');
    source.line(opening + fmt::format("{}", fmt::join(fields, ",\n" + continuation)) + "};");
    source.line("return pass;");
    source.dedent();
    source.line("}");
    source.blank();
  }
  for (size_t i = 0; i < file.pipelines.size(); ++i) {
    const PipelineDecl& pipeline = file.pipelines[i];
    std::vector<std::string> passes;
    for (const std::string& name : pipeline.passes) passes.push_back(string_literal(name));
    source.line("const dpl::PipelineDef& " + pipeline_functions[i] + "() {");
    source.indent();
    source.line("static constexpr std::string_view passes[] = {" + fmt::format("{}", fmt::join(passes, ", ")) + "};");
    source.line("static const dpl::PipelineDef pipeline{" + string_literal(pipeline.name) + ", " +
                string_literal(pipeline.description) + ", " + string_literal(file.basename) + ", passes};");
    source.line("return pipeline;");
    source.dedent();
    source.line("}");
    source.blank();
  }
  source.line("namespace {");
  for (const Pass& pass : file.passes) {
    source.line("const dpl::PassRegistration " + names.fresh(pass.name + "_registration") + "(" +
                pass_functions[&pass] + "());");
  }
  for (size_t i = 0; i < file.pipelines.size(); ++i) {
    source.line("const dpl::PipelineRegistration " + names.fresh(file.pipelines[i].name + "_registration") + "(" +
                pipeline_functions[i] + "());");
  }
  source.line("}  // namespace");
  source.blank();
  close_namespace(source, options.namespace_name);
  result.source = source.str();

  // The other parts: the functions assigned to them, with external linkage in the parts namespace, after what
  // they may call from elsewhere (rule functions, declared ops' ids).
  for (size_t part = 1; part < options.parts; ++part) {
    CodeWriter text;
    text.line(fmt::format("// Generated by dplc from {} (part {} of {}: functions {} calls); do not edit.",
                          file.basename, part + 1, options.parts, result.source_name));
    text.blank();
    text.text(includes.str());
    open_namespace(text, options.namespace_name);
    open_namespace(text, parts_namespace);
    text.blank();
    bool declared = !op_id_declarations.empty();
    for (size_t i = 0; i < all_functions.size(); ++i) {
      if (part_of[i] == part || !all_functions[i]->is_rule()) continue;
      text.line(all_functions[i]->declaration());
      declared = true;
    }
    for (const std::string& declaration : op_id_declarations) text.line(declaration);
    if (declared) text.blank();
    for (size_t i = 0; i < all_functions.size(); ++i) {
      if (part_of[i] == part) text.text(all_functions[i]->definition);
    }
    close_namespace(text, parts_namespace);
    close_namespace(text, options.namespace_name);
    result.parts.push_back({part_source_name(stem, part), text.str()});
  }
  return result;
}

}  // namespace dpl::compiler
