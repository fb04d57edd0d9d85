// Static typing of right-hand sides: each rule's left-hand side is typed from what its pattern guarantees, its
// right-hand side with the op registry's inference, and a replacement that certainly does not fit is an error.
//
// The types live in a scratch dpl::Function: every value is a parameter node carrying the statically known type
// (the registry's inference reads only operand types, plus the literal of an `R.shape([...])`, which patterns
// cannot match). A `_` dimension becomes a fresh symbol, a dimension variable the symbol of its name, so that
// inference treats them as "maybe equal" and only static facts conflict.
#include "dpl/compiler/rhs_types.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include "dpl/ir/graph.h"

namespace dpl::compiler {

namespace {

// The prefix of the symbols standing for `_` dimensions; dimension variables are identifiers, so never clash.
constexpr char kAnyDimPrefix = '?';

// `Tensor[(n, _), float32]`, `Tensor[float32]` (rank unknown), `(Tensor[...], ...)`: a type as a pattern spells
// it, for messages.
std::string type_text(TypeRef type) {
  switch (type->kind()) {
    case TypeKind::Unknown:
      return "a value of unknown type";
    case TypeKind::Object:
      return "an object";
    case TypeKind::Shape:
      return type->rank() < 0 ? "a shape" : "a shape of rank " + std::to_string(type->rank());
    case TypeKind::Tuple: {
      std::string out = "(";
      for (size_t i = 0; i < type->fields().size(); ++i) out += (i > 0 ? ", " : "") + type_text(type->fields()[i]);
      return out + (type->fields().size() == 1 ? ",)" : ")");
    }
    case TypeKind::Tensor:
      break;
  }
  std::string shape;
  if (type->has_shape()) {
    shape = "(";
    for (size_t i = 0; i < type->dims().size(); ++i) {
      Dim dim = type->dims()[i];
      std::string text = dim.is_static() ? std::to_string(dim.extent()) : std::string(dim.symbol_name());
      if (text.starts_with(kAnyDimPrefix)) text = "_";
      shape += (i > 0 ? ", " : "") + text;
    }
    shape += type->dims().size() == 1 ? ",)" : ")";
  } else if (type->rank() >= 0) {
    shape = "(";
    for (int i = 0; i < type->rank(); ++i) shape += i > 0 ? ", _" : "_";
    shape += type->rank() == 1 ? ",)" : ")";
  }
  std::string dtype = type->dtype() == DType::Unknown ? "" : std::string(dtype_name(type->dtype()));
  if (shape.empty() && dtype.empty()) return "Tensor[_]";
  if (shape.empty()) return "Tensor[" + dtype + "]";
  return "Tensor[" + shape + (dtype.empty() ? "" : ", " + dtype) + "]";
}

// Whether inference that failed on these operands failed for a fact known statically: an operand of unknown
// type (a name matched by `_`, an op result whose attributes the pattern leaves open) may be anything.
bool operands_known(std::span<Node* const> operands) {
  for (const Node* operand : operands) {
    if (operand->type()->kind() == TypeKind::Unknown) return false;
  }
  return true;
}

// Types one alternative of a rule: the left-hand side's nodes, then each right-hand side.
class RuleTyper {
 public:
  RuleTyper(const OpRegistry& registry, DiagnosticEngine& diags) : registry_(registry), diags_(diags) {}

  // The type of what `pattern` matches; binds the pattern's names.
  Node* type_pattern(const Pattern& pattern) {
    Node* node = std::visit(
        Overloaded{
            [&](const WildcardPattern&) { return value(Type::unknown()); },
            [&](const ParamPattern&) { return value(Type::unknown()); },
            [&](const VarPattern& p) {
              auto [it, fresh] = values_.emplace(p.name, nullptr);
              if (fresh) it->second = value(leaf_type(p.name));
              return it->second;
            },
            [&](const BindPattern& p) {
              Node* inner = type_pattern(*p.inner);
              values_.emplace(p.name, inner);  // a name bound twice is the same value
              return inner;
            },
            [&](const ConstPattern& p) {
              DType dtype = p.dtype.value_or(DType::Unknown);
              return value(p.value ? Type::tensor(dtype, {}) : Type::tensor_of_rank(dtype, -1));
            },
            [&](const TypePattern& p) { return value(tensor_type(p)); },
            [&](const TuplePattern& p) {
              std::vector<TypeRef> fields;
              for (const PatternPtr& field : p.fields) fields.push_back(type_pattern(*field)->type());
              return value(p.rest ? Type::unknown() : Type::tuple(fields));  // `(a, ...)`: any number of fields
            },
            [&](const DominatorPattern& p) {
              type_pattern(*p.parent);
              return type_pattern(*p.child);
            },
            [&](const ItemPattern& p) {
              TypeRef tuple = type_pattern(*p.tuple)->type();
              return value(p.index ? item_type(tuple, *p.index) : Type::unknown());
            },
            [&](const CallPattern& p) { return type_call_pattern(p, pattern.loc); },
            [&](const AltPattern&) { return value(Type::unknown()); },  // expanded before typing
        },
        pattern.node);
    return node;
  }

  // The type of the value `expr` builds, or nullopt after reporting that it cannot be built; null when it is
  // not known statically (an extern rewriter, a list, anything a spread `xs...` takes part in).
  std::optional<Node*> type_expr(const Expr& expr, Node* root, const Node* sibling = nullptr) {
    return std::visit(
        Overloaded{
            [&](const VarExpr& e) -> std::optional<Node*> {
              auto it = values_.find(e.name);
              return it == values_.end() ? nullptr : it->second;  // a group's list: not typed
            },
            [&](const ConstExpr& e) -> std::optional<Node*> {
              return value(Type::tensor(const_dtype(e, root, sibling), {}));
            },
            [&](const CallExpr& e) { return type_call(e, expr, root); },
            [&](const ItemExpr& e) -> std::optional<Node*> {
              std::optional<Node*> tuple = type_expr(*e.tuple, root);
              if (!tuple || *tuple == nullptr) return tuple;
              TypeRef type = (*tuple)->type();
              if (type->kind() == TypeKind::Unknown) return value(Type::unknown());
              if (!type->is_tuple() || e.index >= static_cast<int64_t>(type->fields().size())) {
                diags_.error(expr.loc, "cannot take item " + std::to_string(e.index) + " of " + type_text(type));
                return std::nullopt;
              }
              return value(type->fields()[static_cast<size_t>(e.index)]);
            },
            [&](const TupleExpr& e) -> std::optional<Node*> {
              std::vector<TypeRef> fields;
              for (const ExprPtr& field : e.fields) {
                std::optional<Node*> node = type_expr(*field, root);
                if (!node || *node == nullptr) return node;
                fields.push_back((*node)->type());
              }
              return value(Type::tuple(fields));
            },
            [&](const auto&) -> std::optional<Node*> { return nullptr; },
        },
        expr.node);
  }

  // Types the lets in order and binds their names; false after an error was reported.
  bool type_lets(const std::vector<LetBinding>& lets, Node* root) {
    for (const LetBinding& let : lets) {
      std::optional<Node*> node = type_expr(*let.value, root);
      if (!node) return false;
      bind(let.name, *node);
    }
    return true;
  }

  void bind(const std::string& name, Node* node) { values_[name] = node; }
  // Leaves named here get these types instead of an unknown one (what a guard tells about them).
  void refine_leaves(const std::map<std::string, TypeRef>& types) { leaf_types_ = &types; }
  // The first call of the left-hand side whose inference failed on what is known for certain.
  const std::optional<LhsTypeFailure>& lhs_failure() const { return lhs_failure_; }
  std::map<std::string, TypeRef> bound_types() const {
    std::map<std::string, TypeRef> types;
    for (const auto& [name, node] : values_) types.emplace(name, node->type());
    return types;
  }
  Node* bound(const std::string& name) const {
    auto it = values_.find(name);
    return it == values_.end() ? nullptr : it->second;
  }

 private:
  Node* value(TypeRef type) { return scratch_.add_param("", type); }

  // Whether inference fails with each operand of unknown type replaced by a value of each kind about which nothing
  // else is known (a tensor or shape of any rank, a tuple of up to three fields, or left unknown).
  bool fails_for_any_unknowns(const OpInfo& info, std::vector<Node*> operands, const AttrList& attrs) {
    std::vector<size_t> unknown;
    for (size_t i = 0; i < operands.size(); ++i) {
      if (operands[i]->type()->kind() == TypeKind::Unknown) unknown.push_back(i);
    }
    if (unknown.empty()) return true;
    if (unknown.size() > 4) return false;
    if (kind_probes_.empty()) {
      for (TypeRef type : types_of_any_value()) kind_probes_.push_back(value(type));
    }
    return for_each_choice(unknown.size(), kind_probes_.size(), [&](const std::vector<size_t>& choice) {
      for (size_t k = 0; k < unknown.size(); ++k) operands[unknown[k]] = kind_probes_[choice[k]];
      std::string error;
      return info.infer(InferInput{operands, attrs}, error) == nullptr;  // go on while it fails
    });
  }

  TypeRef leaf_type(const std::string& name) const {
    if (leaf_types_ == nullptr) return Type::unknown();
    auto it = leaf_types_->find(name);
    return it == leaf_types_->end() ? Type::unknown() : it->second;
  }

  // Dimension arithmetic as written in a type pattern, over the symbols its variables stand for.
  static std::optional<Dim> dimension_of(const Expr& expr) {
    if (const auto* var = std::get_if<VarExpr>(&expr.node)) return Dim::symbol(var->name);
    if (const auto* literal = std::get_if<LiteralExpr>(&expr.node)) {
      const int64_t value = std::get<int64_t>(literal->value);
      return value < 0 ? std::nullopt : std::optional<Dim>(Dim::fixed(value));
    }
    const auto& binary = std::get<BinaryExpr>(expr.node);
    std::optional<Dim> lhs = dimension_of(*binary.lhs);
    std::optional<Dim> rhs = dimension_of(*binary.rhs);
    if (!lhs || !rhs) return std::nullopt;
    switch (binary.op) {
      case BinaryOp::Add:
        return dim_add(*lhs, *rhs);
      case BinaryOp::Subtract:
        return dim_sub(*lhs, *rhs);
      default:
        return dim_mul(*lhs, *rhs);
    }
  }

  TypeRef tensor_type(const TypePattern& pattern) {
    DType dtype = pattern.dtype.value_or(DType::Unknown);
    if (!pattern.shape) return Type::tensor_of_rank(dtype, -1);
    std::vector<Dim> dims;
    for (const DimPattern& dim : *pattern.shape) {
      switch (dim.kind) {
        case DimPattern::Kind::Fixed:
          dims.push_back(Dim::fixed(dim.extent));
          break;
        case DimPattern::Kind::Var:
          dims.push_back(Dim::symbol(dim.name));
          break;
        case DimPattern::Kind::Any:
          dims.push_back(Dim::symbol(kAnyDimPrefix + std::to_string(++any_dims_)));
          break;
        case DimPattern::Kind::Expr:
          dims.push_back(dimension_of(dim.written()).value_or(Dim::symbol(dim.name)));
          break;
      }
    }
    return Type::tensor(dtype, dims);
  }

  static TypeRef item_type(TypeRef tuple, int64_t index) {
    if (!tuple->is_tuple() || index < 0 || index >= static_cast<int64_t>(tuple->fields().size()))
      return Type::unknown();
    return tuple->fields()[static_cast<size_t>(index)];
  }

  // An op call matched on the left has the type inference gives its operands and attributes; an attribute the
  // pattern leaves open or captures may hold anything (see open_attrs_type); a composite call's type is unknown.
  Node* type_call_pattern(const CallPattern& call, SourceLoc loc) {
    std::vector<Node*> operands;
    for (const PatternPtr& operand : call.operands) operands.push_back(type_pattern(*operand));
    if (!call.op_var.empty() && call.ops.size() == 1) ops_[call.op_var] = call.ops[0].id;
    // With `xs...` the operands are not all known; a list is not typed, so its spreads on the right are not either.
    if (call.composite || call.ops.size() != 1 || call.rest) return value(Type::unknown());
    const OpInfo& info = registry_.get(call.ops[0].id);
    AttrList attrs = info.default_attrs();
    std::vector<bool> open(info.attrs.size(), true);
    for (const PatternAttr& attr : call.attrs) {
      int index = info.attr_index(attr.name);
      if (index < 0 || !attr.literal) continue;
      attrs[static_cast<size_t>(index)] = *attr.literal;
      open[static_cast<size_t>(index)] = false;
    }
    std::string error;
    TypeRef type = infer(info, operands, attrs, open, error);
    // With every attribute written, inference failed on facts no match escapes, whatever the operands of unknown
    // type are.
    if (type == nullptr && !lhs_failure_ && std::find(open.begin(), open.end(), true) == open.end() &&
        fails_for_any_unknowns(info, operands, attrs)) {
      lhs_failure_ = LhsTypeFailure{loc, error};
    }
    return value(type != nullptr ? type : Type::unknown());  // a failure: the pattern matches nothing so typed
  }

  // The type `info` infers from `operands` and `attrs`, where the attributes marked `open` are not known
  // statically. An open dtype attribute (out_dtype, astype's dtype) decides only the result's dtype: the shape
  // inferred with its default stands, the dtype becomes unknown. Any other open attribute (an axis, a shape) makes
  // the whole result unknown. Null with `error` set when inference fails.
  static TypeRef infer(const OpInfo& info, std::span<Node* const> operands, const AttrList& attrs,
                       const std::vector<bool>& open, std::string& error) {
    bool open_dtype = false;
    for (size_t i = 0; i < open.size(); ++i) {
      if (!open[i]) continue;
      if (info.attrs[i].kind != AttrKind::DType) return Type::unknown();
      open_dtype = true;
    }
    if (info.infer == nullptr) return Type::unknown();
    TypeRef type = info.infer(InferInput{operands, attrs}, error);
    if (type == nullptr || !open_dtype) return type;
    if (!type->is_tensor()) return Type::unknown();
    return type->has_shape() ? Type::tensor(DType::Unknown, type->dims())
                             : Type::tensor_of_rank(DType::Unknown, type->rank());
  }

  // A new constant's dtype as the generated code picks it (docs/language.md): explicit, else the first
  // non-constant operand of the same call, else the replaced node; unknown when that is not known statically.
  static DType const_dtype(const ConstExpr& constant, const Node* root, const Node* sibling) {
    if (constant.dtype) return *constant.dtype;
    const Node* source = sibling != nullptr ? sibling : root;
    if (source == nullptr || !source->type()->is_tensor()) return DType::Unknown;
    return source->type()->dtype();
  }

  std::optional<Node*> type_call(const CallExpr& call, const Expr& expr, Node* root) {
    if (call.native != nullptr) return nullptr;  // an extern rewriter builds what it likes
    // Non-constant operands first: a constant takes its dtype from the first of them.
    std::vector<Node*> operands(call.operands.size(), nullptr);
    const Node* sibling = nullptr;
    bool unknown = false;
    for (int pass = 0; pass < 2; ++pass) {
      for (size_t i = 0; i < call.operands.size(); ++i) {
        bool constant = std::holds_alternative<ConstExpr>(call.operands[i]->node);
        if (constant != (pass == 1)) continue;
        std::optional<Node*> operand = type_expr(*call.operands[i], root, sibling);
        if (!operand) return std::nullopt;
        if (*operand == nullptr) {
          unknown = true;
          continue;
        }
        operands[i] = *operand;
        if (!constant && sibling == nullptr) sibling = *operand;
      }
    }
    if (unknown) return nullptr;
    std::optional<OpId> op = call.op_is_var ? std::optional<OpId>(op_of(call.op.text)) : call.op.id;
    if (!op) return nullptr;
    const OpInfo& info = registry_.get(*op);
    AttrList attrs = info.default_attrs();
    std::vector<bool> open(info.attrs.size(), call.attrs_from.has_value());  // `**c`: c's, known at run time
    for (const ExprAttr& attr : call.attrs) {
      int index = info.attr_index(attr.name);
      if (index < 0) return value(Type::unknown());
      auto i = static_cast<size_t>(index);
      if (const auto* literal = std::get_if<LiteralExpr>(&attr.value->node)) {
        attrs[i] = literal->value;
        attr_matches_kind(info.attrs[i].kind, attrs[i]);
        open[i] = false;
      } else {
        open[i] = true;  // computed or captured: known at run time only
      }
    }
    std::string error;
    if (TypeRef type = infer(info, operands, attrs, open, error)) return value(type);
    // Certain only when it failed on what is known: no operand of unknown type, no attribute known at run time only.
    if (!operands_known(operands) || std::find(open.begin(), open.end(), true) != open.end())
      return value(Type::unknown());
    Diagnostic& diag = diags_.error(expr.loc, "the right-hand side cannot be built: " + error);
    for (size_t i = 0; i < operands.size(); ++i) {
      DiagnosticEngine::add_note(diag, call.operands[i]->loc,
                                 "operand " + std::to_string(i) + " is " + type_text(operands[i]->type()));
    }
    return std::nullopt;
  }

  std::optional<OpId> op_of(const std::string& name) const {
    auto it = ops_.find(name);
    if (it == ops_.end()) return std::nullopt;
    return it->second;
  }

  const OpRegistry& registry_;
  DiagnosticEngine& diags_;
  Function scratch_{"rhs_types"};
  std::map<std::string, Node*> values_;
  std::map<std::string, OpId> ops_;  // op variables: one op per alternative
  int any_dims_ = 0;
  const std::map<std::string, TypeRef>* leaf_types_ = nullptr;
  std::vector<Node*> kind_probes_;
  std::optional<LhsTypeFailure> lhs_failure_;
};

// Types `rhs` against `root`, the value it replaces; reports a misfit at `rhs`. `const_root` is the node a
// constant without a dtype or sibling takes its dtype from (null: not known statically). False after an error.
bool check_replacement(RuleTyper& typer, const Expr& rhs, Node* root, Node* const_root, const Pattern& matched,
                       const std::string& alternative, DiagnosticEngine& diags) {
  std::optional<Node*> replacement = typer.type_expr(rhs, const_root);
  if (!replacement) return false;
  if (*replacement == nullptr) return true;
  std::string why = type_mismatch(root->type(), (*replacement)->type());
  if (why.empty()) return true;
  Diagnostic& diag = diags.error(rhs.loc, "the right-hand side builds " + type_text((*replacement)->type()) +
                                               ", but the value it replaces is " + type_text(root->type()) + ": " +
                                               why + alternative);
  DiagnosticEngine::add_note(diag, matched.loc, "the replaced value is matched here");
  return false;
}

void check_rule(const Rule& rule, const OpRegistry& registry, DiagnosticEngine& diags) {
  if (rule.kind == Rule::Kind::Rewrite) {
    std::vector<PatternPtr> alternatives = expand_alternatives(*rule.lhs);
    for (size_t k = 0; k < alternatives.size(); ++k) {
      if (rule.is_dropped(k)) continue;
      RuleTyper typer(registry, diags);
      Node* root = typer.type_pattern(*alternatives[k]);
      std::string which = alternatives.size() == 1
                              ? ""
                              : " (in alternative " + std::to_string(k + 1) + " of " +
                                    std::to_string(alternatives.size()) + ", " + to_string(*alternatives[k]) + ")";
      // One report per rule: the other alternatives usually repeat it.
      if (!typer.type_lets(rule.lets, root)) return;
      if (!check_replacement(typer, *rule.rhs, root, root, *rule.lhs, which, diags)) return;
    }
    return;
  }
  if (rule.kind != Rule::Kind::MultiRoot) return;
  // Multi-root rules, alternative by alternative; a group's members are typed one by one at run time.
  if (std::any_of(rule.roots.begin(), rule.roots.end(), [](const RootDecl& root) { return root.group; })) return;
  std::vector<RootsAlternative> alternatives = expand_root_alternatives(rule);
  for (size_t k = 0; k < alternatives.size(); ++k) {
    RuleTyper typer(registry, diags);
    std::map<std::string, size_t> roots;
    for (size_t i = 0; i < rule.roots.size(); ++i) {
      typer.bind(rule.roots[i].name, typer.type_pattern(*alternatives[k].roots[i][0]));
      roots.emplace(rule.roots[i].name, i);
    }
    std::string which;
    if (alternatives.size() > 1) {
      which = " (in alternative " + std::to_string(k + 1) + " of " + std::to_string(alternatives.size()) + ")";
    }
    // Which node a constant without a sibling takes its dtype from is the generated code's business: unknown here.
    // One report per rule: the other alternatives usually repeat it.
    if (!typer.type_lets(rule.lets, nullptr)) return;
    for (const RootRewrite& rewrite : rule.rewrites) {
      const size_t i = roots.at(rewrite.root);
      if (!check_replacement(typer, *rewrite.value, typer.bound(rule.roots[i].name), nullptr,
                             *alternatives[k].roots[i][0], which, diags)) {
        return;
      }
    }
  }
}

}  // namespace

const std::vector<TypeRef>& types_of_any_value() {
  static const std::vector<TypeRef> types = [] {
    const TypeRef any = Type::unknown();
    return std::vector<TypeRef>{Type::tensor_of_rank(DType::Unknown, -1), Type::shape(-1),
                                Type::tuple(std::vector{any}), Type::tuple(std::vector{any, any}),
                                Type::tuple(std::vector{any, any, any}), any};
  }();
  return types;
}

bool for_each_choice(size_t slots, size_t options, const std::function<bool(const std::vector<size_t>&)>& visit) {
  if (options == 0) return slots == 0 ? visit({}) : true;
  std::vector<size_t> choice(slots, 0);
  while (true) {
    if (!visit(choice)) return false;
    size_t k = 0;  // an odometer: the first slot turns fastest
    while (k < slots && ++choice[k] == options) choice[k++] = 0;
    if (k == slots) return true;
  }
}

LhsTyping type_lhs(const Pattern& alternative, const std::map<std::string, TypeRef>& leaf_types,
                   const OpRegistry& registry) {
  DiagnosticEngine unused;  // typing a left-hand side reports nothing
  RuleTyper typer(registry, unused);
  typer.refine_leaves(leaf_types);
  typer.type_pattern(alternative);
  return LhsTyping{typer.lhs_failure(), typer.bound_types()};
}

std::string type_spelling(TypeRef type) { return type_text(type); }

void check_rhs_types(const AstFile& file, DiagnosticEngine& diags, const OpRegistry& registry) {
  for (const Pass& pass : file.passes) {
    for (const Rule& rule : pass.rules) check_rule(rule, registry, diags);
  }
}

}  // namespace dpl::compiler
