// Patterns no graph can match: operand kinds an op never takes, guards contradicting themselves, the pattern's
// types or the op's typing; such alternatives are dropped, and a rule left with none is an error.
//
// Every call node of a graph passed its op's type inference when it was made (Function::add_call), so what
// inference rejects for certain is never in a graph. "For certain" follows the convention the inference functions
// and check_rhs_types share: a value of unknown rank, dtype or dimension may be anything, and inference fails
// only on what is known. Built-in ops check operand kinds (tensor, shape, tuple) unconditionally, whatever the
// attributes, ranks and dtypes (runtime/src/ir/op_table.cpp), so probing with the default attributes and values
// of unknown rank and dtype gives the kinds an operand position accepts and the kind a call returns.
#include "dpl/compiler/never_match.h"

#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "dpl/compiler/rhs_types.h"
#include "dpl/ir/graph.h"

namespace dpl::compiler {

namespace {

constexpr size_t kMaxProbedOperands = 5;

const char* kind_name(ValueKind kind) {
  switch (kind) {
    case ValueKind::Tensor:
      return "a tensor";
    case ValueKind::Shape:
      return "a shape";
    case ValueKind::Tuple:
      return "a tuple";
    case ValueKind::Untyped:
      break;
  }
  return "a value of unknown type";
}

std::optional<ValueKind> kind_of_type(TypeRef type) {
  switch (type->kind()) {
    case TypeKind::Tensor:
      return ValueKind::Tensor;
    case TypeKind::Shape:
      return ValueKind::Shape;
    case TypeKind::Tuple:
      return ValueKind::Tuple;
    case TypeKind::Unknown:
      return ValueKind::Untyped;
    case TypeKind::Object:
      break;
  }
  return std::nullopt;
}

// "a shape", "a tensor or a tuple": the kinds a position accepts (values of unknown type left out: they are
// what the reader makes of unannotated values, not something a pattern asks for).
std::string accepted_kinds(const std::array<bool, kValueKinds>& accepts) {
  std::string out;
  for (ValueKind kind : {ValueKind::Tensor, ValueKind::Shape, ValueKind::Tuple}) {
    if (!accepts[static_cast<size_t>(kind)]) continue;
    out += (out.empty() ? "" : " or ") + std::string(kind_name(kind));
  }
  return out.empty() ? "nothing" : out;
}

// --- operand kinds -----------------------------------------------------------------------------------------------

// What is known about the pattern's names and their kinds; a name's kind is that of the pattern it is bound to.
class KindChecker {
 public:
  explicit KindChecker(const OpRegistry& registry) : registry_(registry) {}

  std::optional<NeverMatch> check(const Pattern& pattern) {
    collect_kinds(pattern);
    return find_mismatch(pattern);
  }

  // Names matched somewhere as an operand neither a shape nor a tuple can be: a rank the guard gives them (a
  // shape's is its length, a tuple's its number of fields) makes them tensors.
  const std::set<std::string>& tensor_operands() const { return tensor_operands_; }

 private:
  std::optional<ValueKind> kind_of(const Pattern& pattern) const {
    return std::visit(Overloaded{
                          [](const ConstPattern&) -> std::optional<ValueKind> { return ValueKind::Tensor; },
                          [](const TypePattern&) -> std::optional<ValueKind> { return ValueKind::Tensor; },
                          [](const TuplePattern&) -> std::optional<ValueKind> { return ValueKind::Tuple; },
                          [&](const BindPattern& p) { return kind_of(*p.inner); },
                          [&](const DominatorPattern& p) { return kind_of(*p.child); },
                          [&](const VarPattern& p) -> std::optional<ValueKind> {
                            auto it = names_.find(p.name);
                            return it == names_.end() ? std::nullopt : it->second;
                          },
                          [&](const CallPattern& p) { return result_kind(p); },
                          [](const auto&) -> std::optional<ValueKind> { return std::nullopt; },
                      },
                      pattern.node);
  }

  std::optional<ValueKind> result_kind(const CallPattern& call) const {
    if (call.ops.size() != 1 || call.composite || call.rest) return std::nullopt;
    KindSignature signature = kind_signature(registry_, call.ops[0].id, call.operands.size());
    if (!signature.known) return std::nullopt;
    std::optional<ValueKind> only;
    for (size_t k = 0; k < kValueKinds; ++k) {
      if (!signature.results[k]) continue;
      if (only) return std::nullopt;
      only = static_cast<ValueKind>(k);
    }
    return only;
  }

  void collect_kinds(const Pattern& pattern) {
    if (const auto* bind = std::get_if<BindPattern>(&pattern.node)) names_.emplace(bind->name, kind_of(*bind->inner));
    for_each_sub_pattern(pattern, [&](const Pattern& inner) { collect_kinds(inner); });
  }

  std::optional<NeverMatch> find_mismatch(const Pattern& pattern) {
    if (const auto* call = std::get_if<CallPattern>(&pattern.node)) {
      if (std::optional<NeverMatch> found = check_operands(*call)) return found;
    }
    if (const auto* item = std::get_if<ItemPattern>(&pattern.node)) {
      if (std::optional<NeverMatch> found = check_item(*item, pattern)) return found;
    }
    std::optional<NeverMatch> found;
    for_each_sub_pattern(pattern, [&](const Pattern& inner) {
      if (!found) found = find_mismatch(inner);
    });
    return found;
  }

  std::optional<NeverMatch> check_operands(const CallPattern& call) {
    if (call.ops.size() != 1 || call.composite || call.rest) return std::nullopt;
    const OpName& op = call.ops[0];
    KindSignature signature = kind_signature(registry_, op.id, call.operands.size());
    if (!signature.known) return std::nullopt;
    const std::string& name = registry_.get(op.id).name;
    for (size_t i = 0; i < call.operands.size(); ++i) {
      const Pattern& operand = *call.operands[i];
      const auto& accepts = signature.accepts[i];
      if (const auto* var = std::get_if<VarPattern>(&operand.node);
          var != nullptr && !accepts[static_cast<size_t>(ValueKind::Shape)] &&
          !accepts[static_cast<size_t>(ValueKind::Tuple)]) {
        tensor_operands_.insert(var->name);
      }
      std::optional<ValueKind> kind = kind_of(operand);
      if (!kind || accepts[static_cast<size_t>(*kind)]) continue;
      std::string position = "operand " + std::to_string(i) + " of " + name;
      return NeverMatch{position + " is always " + accepted_kinds(accepts) + ", but " + to_string(operand) +
                            " is always " + kind_name(*kind),
                        operand.loc,
                        {{op.loc, name + "'s type inference rejects " + kind_name(*kind) + " as operand " +
                                      std::to_string(i)}}};
    }
    return std::nullopt;
  }

  std::optional<NeverMatch> check_item(const ItemPattern& item, const Pattern& pattern) const {
    const Pattern& tuple = *item.tuple;
    std::optional<ValueKind> kind = kind_of(tuple);
    if (kind && *kind != ValueKind::Tuple) {
      return NeverMatch{"the tuple of a tuple item is always a tuple, but " + to_string(tuple) + " is always " +
                            kind_name(*kind),
                        tuple.loc, {{pattern.loc, "the item is taken here"}}};
    }
    const Pattern* inner = &tuple;
    while (const auto* bind = std::get_if<BindPattern>(&inner->node)) inner = bind->inner.get();
    const auto* fields = std::get_if<TuplePattern>(&inner->node);
    if (item.index && fields != nullptr && !fields->rest &&
        (*item.index < 0 || *item.index >= static_cast<int64_t>(fields->fields.size()))) {
      return NeverMatch{"item " + std::to_string(*item.index) + " of a tuple of " +
                            std::to_string(fields->fields.size()) + " fields does not exist",
                        pattern.loc, {{tuple.loc, "the tuple is matched here"}}};
    }
    return std::nullopt;
  }

  const OpRegistry& registry_;
  std::map<std::string, std::optional<ValueKind>> names_;
  std::set<std::string> tensor_operands_;
};

// --- guard facts -------------------------------------------------------------------------------------------------

// One thing a match guarantees: a property compared with a literal (`x.rank == 2`, `x.dtype != float16`,
// `n > 4`), from a conjunct of the guard or from the pattern's types.
struct Fact {
  std::string term;  // "x.rank", "x.shape[1]", "x.dtype", "n"
  bool is_dtype = false;
  bool integer = false;  // ranks, extents, use counts: whole numbers, never negative
  BinaryOp op = BinaryOp::Equal;
  double number = 0;
  std::set<DType> dtypes;  // the dtypes a dtype fact allows
  std::string text;        // `x.rank == 2`, or `x is Tensor[(_, _)]` for a fact of the pattern
  SourceLoc loc;
  bool from_pattern = false;
};

// Every dtype a value can have: DType's members after Unknown.
const std::vector<DType>& all_dtypes() {
  static const std::vector<DType> dtypes = [] {
    std::vector<DType> out;
    for (auto d = static_cast<int>(DType::Bool); d <= static_cast<int>(DType::Float64); ++d) {
      out.push_back(static_cast<DType>(d));
    }
    return out;
  }();
  return dtypes;
}

std::optional<double> number_literal(const Expr& expr) {
  if (const auto* literal = std::get_if<LiteralExpr>(&expr.node)) {
    if (const auto* i = std::get_if<int64_t>(&literal->value)) return static_cast<double>(*i);
    if (const auto* d = std::get_if<double>(&literal->value)) return *d;
  }
  if (const auto* unary = std::get_if<UnaryExpr>(&expr.node); unary != nullptr && unary->op == UnaryOp::Negate) {
    if (std::optional<double> inner = number_literal(*unary->operand)) return -*inner;
  }
  return std::nullopt;
}

std::optional<DType> dtype_literal(const Expr& expr) {
  if (expr.dtype_literal) return expr.dtype_literal;
  if (const auto* literal = std::get_if<LiteralExpr>(&expr.node)) {
    if (const auto* text = std::get_if<std::string>(&literal->value)) {
      std::optional<DType> dtype = parse_dtype(*text);
      if (dtype && *dtype != DType::Unknown) return dtype;
    }
  }
  return std::nullopt;
}

BinaryOp mirrored(BinaryOp op) {
  switch (op) {
    case BinaryOp::Less:
      return BinaryOp::Greater;
    case BinaryOp::LessEqual:
      return BinaryOp::GreaterEqual;
    case BinaryOp::Greater:
      return BinaryOp::Less;
    case BinaryOp::GreaterEqual:
      return BinaryOp::LessEqual;
    default:
      return op;
  }
}

bool is_comparison(BinaryOp op) {
  return op == BinaryOp::Equal || op == BinaryOp::NotEqual || op == BinaryOp::Less || op == BinaryOp::LessEqual ||
         op == BinaryOp::Greater || op == BinaryOp::GreaterEqual;
}

// Turns the guard's `&&`-joined comparisons of a property with a literal into facts; anything else says nothing.
class FactCollector {
 public:
  FactCollector(const std::set<std::string>& dimension_variables, const std::map<std::string, TypeRef>& bound)
      : dimension_variables_(dimension_variables), bound_(bound) {}

  void collect(const Expr& guard, std::vector<Fact>& facts) const {
    const auto* binary = std::get_if<BinaryExpr>(&guard.node);
    if (binary == nullptr) return;
    if (binary->op == BinaryOp::And) {
      collect(*binary->lhs, facts);
      collect(*binary->rhs, facts);
      return;
    }
    if (!is_comparison(binary->op)) return;
    if (std::optional<Fact> fact = comparison(*binary->lhs, binary->op, *binary->rhs, guard)) {
      facts.push_back(std::move(*fact));
    } else if (std::optional<Fact> mirror = comparison(*binary->rhs, mirrored(binary->op), *binary->lhs, guard)) {
      facts.push_back(std::move(*mirror));
    }
  }

 private:
  std::optional<Fact> comparison(const Expr& property, BinaryOp op, const Expr& literal, const Expr& whole) const {
    Fact fact;
    if (!term(property, fact)) return std::nullopt;
    fact.op = op;
    fact.text = to_string(whole);
    fact.loc = whole.loc;
    if (fact.is_dtype) {
      std::optional<DType> dtype = dtype_literal(literal);
      if (!dtype || (op != BinaryOp::Equal && op != BinaryOp::NotEqual)) return std::nullopt;
      for (DType candidate : all_dtypes()) {
        if ((candidate == *dtype) == (op == BinaryOp::Equal)) fact.dtypes.insert(candidate);
      }
      return fact;
    }
    std::optional<double> number = number_literal(literal);
    if (!number) return std::nullopt;
    fact.number = *number;
    return fact;
  }

  // `x.rank`, `x.dtype`, `x.uses`, `c.value`, `x.shape[i]`, a dimension variable or a captured number.
  bool term(const Expr& expr, Fact& fact) const {
    if (const auto* var = std::get_if<VarExpr>(&expr.node)) {
      if (expr.type != ExprType::Number) return false;
      fact.term = var->name;
      fact.integer = dimension_variables_.count(var->name) != 0;
      return true;
    }
    if (const auto* member = std::get_if<MemberExpr>(&expr.node)) {
      const auto* object = std::get_if<VarExpr>(&member->object->node);
      if (object == nullptr || member->object->type != ExprType::Value) return false;
      if (member->member != "rank" && member->member != "uses" && member->member != "value" &&
          member->member != "dtype") {
        return false;
      }
      fact.term = object->name + "." + member->member;
      fact.is_dtype = member->member == "dtype";
      fact.integer = member->member == "rank" || member->member == "uses";
      return true;
    }
    if (const auto* index = std::get_if<IndexExpr>(&expr.node)) {
      const auto* shape = std::get_if<MemberExpr>(&index->object->node);
      if (shape == nullptr || shape->member != "shape") return false;
      const auto* object = std::get_if<VarExpr>(&shape->object->node);
      std::optional<double> position = number_literal(*index->index);
      if (object == nullptr || !position) return false;
      auto i = static_cast<int64_t>(*position);
      // A negative index counts from the end: the same dimension as a positive one when the rank is known.
      if (i < 0) {
        auto it = bound_.find(object->name);
        if (it == bound_.end() || !it->second->is_tensor() || it->second->rank() < 0) {
          fact.term = object->name + ".shape[" + std::to_string(i) + "]";
          fact.integer = true;
          return true;
        }
        i += it->second->rank();
      }
      fact.term = object->name + ".shape[" + std::to_string(i) + "]";
      fact.integer = true;
      return true;
    }
    return false;
  }

  const std::set<std::string>& dimension_variables_;
  const std::map<std::string, TypeRef>& bound_;
};

// The facts the pattern's types give a name: its dtype, rank and static dimensions.
void type_facts(const std::string& name, TypeRef type, SourceLoc loc, std::vector<Fact>& facts) {
  if (!type->is_tensor()) return;
  const std::string text = name + " is " + type_spelling(type);
  auto add = [&](std::string term, double number, bool is_dtype, DType dtype) {
    Fact fact;
    fact.term = std::move(term);
    fact.number = number;
    fact.is_dtype = is_dtype;
    fact.integer = !is_dtype;
    if (is_dtype) fact.dtypes = {dtype};
    fact.text = text;
    fact.loc = loc;
    fact.from_pattern = true;
    facts.push_back(std::move(fact));
  };
  if (type->dtype() != DType::Unknown) add(name + ".dtype", 0, true, type->dtype());
  if (type->rank() >= 0) add(name + ".rank", type->rank(), false, DType::Unknown);
  if (!type->has_shape()) return;
  for (size_t i = 0; i < type->dims().size(); ++i) {
    Dim dim = type->dims()[i];
    if (dim.is_static()) {
      add(name + ".shape[" + std::to_string(i) + "]", static_cast<double>(dim.extent()), false, DType::Unknown);
    }
  }
}

// The closed interval [low, high] a numeric fact allows (after rounding for whole-number terms), and the value it
// excludes (`!=`).
struct Range {
  double low = -std::numeric_limits<double>::infinity();
  double high = std::numeric_limits<double>::infinity();
  std::optional<double> excluded;
};

Range range_of(const Fact& fact) {
  Range range;
  const double v = fact.number;
  const bool whole = fact.integer;
  switch (fact.op) {
    case BinaryOp::Equal:
      range.low = range.high = v;
      if (whole && v != std::floor(v)) range.low = range.high + 1;  // no whole number equals it: empty
      break;
    case BinaryOp::NotEqual:
      range.excluded = v;
      break;
    case BinaryOp::Less:
      range.high = whole ? std::ceil(v) - 1 : std::nextafter(v, -std::numeric_limits<double>::infinity());
      break;
    case BinaryOp::LessEqual:
      range.high = whole ? std::floor(v) : v;
      break;
    case BinaryOp::Greater:
      range.low = whole ? std::floor(v) + 1 : std::nextafter(v, std::numeric_limits<double>::infinity());
      break;
    case BinaryOp::GreaterEqual:
      range.low = whole ? std::ceil(v) : v;
      break;
    default:
      break;
  }
  if (whole) range.low = std::max(range.low, 0.0);  // ranks, extents and use counts are never negative
  return range;
}

// Whether no value satisfies both facts (one fact twice: whether it can hold at all).
bool contradict(const Fact& a, const Fact& b) {
  if (a.is_dtype) {
    return std::none_of(a.dtypes.begin(), a.dtypes.end(), [&](DType dtype) { return b.dtypes.count(dtype) != 0; });
  }
  Range ra = range_of(a);
  Range rb = range_of(b);
  const double low = std::max(ra.low, rb.low);
  const double high = std::min(ra.high, rb.high);
  if (low > high) return true;
  if (low < high) return false;
  return ra.excluded == low || rb.excluded == low;  // one value left, and one fact excludes it
}

// Whether no number satisfies facts[last] and the facts on its term before it, all at once.
bool together_impossible(const std::vector<Fact>& facts, size_t last) {
  Range all;
  std::set<double> excluded;
  for (size_t j = 0; j <= last; ++j) {
    if (facts[j].term != facts[last].term || facts[j].is_dtype) continue;
    Range range = range_of(facts[j]);
    all.low = std::max(all.low, range.low);
    all.high = std::min(all.high, range.high);
    if (range.excluded) excluded.insert(*range.excluded);
  }
  if (all.low > all.high) return true;
  if (!facts[last].integer) return all.low == all.high && excluded.count(all.low) != 0;
  // Whole numbers: impossible when every one in a short range is excluded.
  if (all.high - all.low > static_cast<double>(excluded.size())) return false;
  for (double v = all.low; v <= all.high; v += 1) {
    if (excluded.count(v) == 0) return false;
  }
  return true;
}

std::optional<NeverMatch> contradiction(const std::vector<Fact>& facts) {
  for (size_t i = 0; i < facts.size(); ++i) {
    const Fact& fact = facts[i];
    if (fact.from_pattern) continue;  // the pattern's own facts agree: inference made them
    if (contradict(fact, fact)) {
      return NeverMatch{"its guard can never hold: " + fact.text + " is never true", fact.loc,
                        {{fact.loc, fact.integer ? fact.term + " is a whole number, never negative"
                                                 : fact.term + " is compared here"}}};
    }
    for (size_t j = 0; j < i; ++j) {
      const Fact& earlier = facts[j];
      if (earlier.term != fact.term || earlier.is_dtype != fact.is_dtype || !contradict(earlier, fact)) continue;
      if (earlier.from_pattern) {
        return NeverMatch{"its guard can never hold: " + fact.text + " contradicts the pattern, where " +
                              earlier.text,
                          fact.loc, {{fact.loc, "this condition"}, {earlier.loc, earlier.text + " here"}}};
      }
      return NeverMatch{"its guard can never hold: " + fact.text + " contradicts " + earlier.text, fact.loc,
                        {{fact.loc, "this condition"}, {earlier.loc, "contradicts this one"}}};
    }
    if (!fact.is_dtype && together_impossible(facts, i)) {
      NeverMatch never{"its guard can never hold: " + fact.text + " contradicts the conditions on " + fact.term +
                           " before it",
                       fact.loc, {{fact.loc, "this condition"}}};
      for (size_t j = 0; j < i; ++j) {
        if (facts[j].term == fact.term) never.notes.emplace_back(facts[j].loc, "together with this one");
      }
      return never;
    }
  }
  return std::nullopt;
}

// The names of the pattern: where each is first bound (for notes), and the dimension variables.
struct PatternNames {
  std::map<std::string, SourceLoc> first_bound;
  std::set<std::string> dimensions;
  std::vector<std::pair<std::string, const ConstPattern*>> constants;  // `c: const(2.0)`

  void collect(const Pattern& pattern) {
    std::visit(Overloaded{
                   [&](const VarPattern& p) { first_bound.emplace(p.name, pattern.loc); },
                   [&](const BindPattern& p) {
                     first_bound.emplace(p.name, p.name_loc);
                     const Pattern* inner = p.inner.get();
                     while (const auto* bind = std::get_if<BindPattern>(&inner->node)) inner = bind->inner.get();
                     if (const auto* constant = std::get_if<ConstPattern>(&inner->node)) {
                       constants.emplace_back(p.name, constant);
                     }
                   },
                   [](const auto&) {},
               },
               pattern.node);
    if (const TypePattern* type = type_of_pattern(pattern); type != nullptr && type->shape) {
      for (const DimPattern& dim : *type->shape) {
        if (dim.kind == DimPattern::Kind::Var) dimensions.insert(dim.name);
      }
    }
    for_each_sub_pattern(pattern, [&](const Pattern& inner) { collect(inner); });
  }
};

// What the guard's facts say about a leaf's type: a tensor of that dtype (only tensors have one) and rank (a rank
// alone could be a shape's or a tuple's, unless the leaf is an operand neither can be), dimensions where known.
std::map<std::string, TypeRef> leaf_types(const std::vector<Fact>& facts,
                                          const std::set<std::string>& tensor_operands) {
  struct Known {
    std::optional<DType> dtype;
    std::optional<int> rank;
    std::map<int, int64_t> extents;
  };
  std::map<std::string, Known> known;
  for (const Fact& fact : facts) {
    if (fact.from_pattern || fact.op != BinaryOp::Equal) continue;
    size_t dot = fact.term.find('.');
    if (dot == std::string::npos) continue;
    std::string name = fact.term.substr(0, dot);
    std::string property = fact.term.substr(dot + 1);
    if (property == "dtype" && fact.dtypes.size() == 1) known[name].dtype = *fact.dtypes.begin();
    if (property == "rank" && fact.number >= 0 && fact.number == std::floor(fact.number) && fact.number < 64) {
      known[name].rank = static_cast<int>(fact.number);
    }
    if (property.starts_with("shape[") && fact.number >= 0 && fact.number == std::floor(fact.number)) {
      known[name].extents[std::stoi(property.substr(6))] = static_cast<int64_t>(fact.number);
    }
  }
  // A negative index counts from the end, once the rank is known.
  for (auto& [name, what] : known) {
    if (!what.rank) continue;
    std::map<int, int64_t> extents;
    for (auto [index, extent] : what.extents) {
      int position = index < 0 ? index + *what.rank : index;
      if (position >= 0 && position < *what.rank) extents.emplace(position, extent);
    }
    what.extents = std::move(extents);
  }
  std::map<std::string, TypeRef> types;
  for (const auto& [name, what] : known) {
    if (!what.dtype && !(what.rank && tensor_operands.count(name) != 0)) continue;
    DType dtype = what.dtype.value_or(DType::Unknown);
    if (!what.rank) {
      types.emplace(name, Type::tensor_of_rank(dtype, -1));
      continue;
    }
    if (what.extents.empty()) {
      types.emplace(name, Type::tensor_of_rank(dtype, *what.rank));
      continue;
    }
    std::vector<Dim> dims;
    for (int i = 0; i < *what.rank; ++i) {
      auto it = what.extents.find(i);
      // An unknown extent is a symbol of its own, named as the guard reads it (messages show it).
      dims.push_back(it != what.extents.end() ? Dim::fixed(it->second)
                                              : Dim::symbol(name + ".shape[" + std::to_string(i) + "]"));
    }
    types.emplace(name, Type::tensor(dtype, dims));
  }
  return types;
}

// kind_signature() without the cache: up to 4^5 inference calls.
KindSignature probe_kind_signature(const OpInfo& info, size_t operand_count) {
  KindSignature signature;
  if (info.infer == nullptr || static_cast<int>(operand_count) < info.min_operands ||
      (info.max_operands >= 0 && static_cast<int>(operand_count) > info.max_operands)) {
    return signature;
  }
  // Probe values of each kind that inference knows nothing more about.
  Function scratch("kind_probes");
  std::vector<std::pair<ValueKind, Node*>> probes;
  for (TypeRef type : types_of_any_value()) probes.emplace_back(*kind_of_type(type), scratch.add_param("", type));
  const AttrList attrs = info.default_attrs();
  signature.accepts.assign(operand_count, {});
  std::vector<Node*> operands(operand_count, nullptr);
  for_each_choice(operand_count, probes.size(), [&](const std::vector<size_t>& choice) {
    for (size_t i = 0; i < operand_count; ++i) operands[i] = probes[choice[i]].second;
    std::string error;
    if (TypeRef result = info.infer(InferInput{operands, attrs}, error)) {
      signature.known = true;
      for (size_t i = 0; i < operand_count; ++i) {
        signature.accepts[i][static_cast<size_t>(probes[choice[i]].first)] = true;
      }
      if (std::optional<ValueKind> kind = kind_of_type(result)) signature.results[static_cast<size_t>(*kind)] = true;
    }
    return true;
  });
  return signature;
}

}  // namespace

KindSignature kind_signature(const OpRegistry& registry, OpId op, size_t operand_count) {
  if (op >= op::kNumBuiltinOps || operand_count > kMaxProbedOperands) return {};
  // A built-in op's inference reads only its operands and attributes, so its signature is the same in every
  // registry: probed once per thread (a fifth of dplc's time on 1,000 rules before).
  thread_local std::vector<std::optional<KindSignature>> cache(op::kNumBuiltinOps * (kMaxProbedOperands + 1));
  std::optional<KindSignature>& cached = cache[op * (kMaxProbedOperands + 1) + operand_count];
  if (!cached) cached = probe_kind_signature(registry.get(op), operand_count);
  return *cached;
}

std::optional<NeverMatch> never_matches(const Pattern& alternative, const Expr* guard, const OpRegistry& registry) {
  KindChecker kinds(registry);
  if (std::optional<NeverMatch> found = kinds.check(alternative)) return found;

  PatternNames names;
  names.collect(alternative);
  const std::map<std::string, TypeRef> no_refinement;
  LhsTyping typed = type_lhs(alternative, no_refinement, registry);
  if (typed.failure) {
    return NeverMatch{"its type inference always fails: " + typed.failure->error, typed.failure->loc,
                      {{typed.failure->loc, "no graph holds a call that fails type inference"}}};
  }
  std::vector<Fact> facts;
  for (const auto& [name, type] : typed.bound) {
    auto at = names.first_bound.find(name);
    type_facts(name, type, at != names.first_bound.end() ? at->second : alternative.loc, facts);
  }
  for (const auto& [name, constant] : names.constants) {
    if (!constant->value) continue;
    Fact fact;
    fact.term = name + ".value";
    fact.number = *constant->value;
    fact.text = name + " is " + to_string(Pattern{{}, *constant});
    fact.loc = names.first_bound.at(name);
    fact.from_pattern = true;
    facts.push_back(std::move(fact));
  }
  if (guard == nullptr) return std::nullopt;
  FactCollector(names.dimensions, typed.bound).collect(*guard, facts);
  if (std::optional<NeverMatch> found = contradiction(facts)) return found;

  // The guard's dtypes and ranks given to the leaves they name: does the pattern still type-check?
  std::map<std::string, TypeRef> refined = leaf_types(facts, kinds.tensor_operands());
  if (refined.empty()) return std::nullopt;
  LhsTyping retyped = type_lhs(alternative, refined, registry);
  if (!retyped.failure) return std::nullopt;
  return NeverMatch{"its guard rules out every well-typed match: " + retyped.failure->error, guard->loc,
                    {{retyped.failure->loc, "this call fails type inference on what the guard requires"},
                     {guard->loc, "the guard"}}};
}

void check_never_matching(AstFile& file, DiagnosticEngine& diags, const OpRegistry& registry) {
  auto describe = [](const Rule& rule) {
    return (rule.kind == Rule::Kind::Partition ? "partition '" : "rule '") + rule.name + "'";
  };
  auto report = [&](SourceLoc loc, const std::string& message, const NeverMatch& why) {
    Diagnostic& diag = diags.error(loc, message);
    for (const auto& [note_loc, note] : why.notes) DiagnosticEngine::add_note(diag, note_loc, note);
  };
  for (Pass& pass : file.passes) {
    for (Rule& rule : pass.rules) {
      if (rule.kind == Rule::Kind::MultiRoot) {
        for (const RootDecl& root : rule.roots) {
          if (root.group) continue;  // a group is collected member by member: its guard is per member
          std::vector<PatternPtr> alternatives = expand_alternatives(*root.pattern);
          std::vector<NeverMatch> reasons;
          for (const PatternPtr& alternative : alternatives) {
            std::optional<NeverMatch> never = never_matches(*alternative, root.guard.get(), registry);
            if (!never) break;
            reasons.push_back(std::move(*never));
          }
          if (reasons.size() != alternatives.size()) continue;
          report(root.pattern->loc,
                 describe(rule) + " can never match: its root '" + root.name + "' never does: " + reasons[0].reason,
                 reasons[0]);
          break;
        }
        continue;
      }
      std::vector<PatternPtr> alternatives = expand_alternatives(*rule.lhs);
      std::vector<NeverMatch> reasons;
      for (size_t k = 0; k < alternatives.size(); ++k) {
        std::optional<NeverMatch> never = never_matches(*alternatives[k], rule.guard.get(), registry);
        if (!never) continue;
        rule.dropped.push_back({k, never->reason});
        reasons.push_back(std::move(*never));
      }
      if (alternatives.empty() || reasons.size() != alternatives.size()) continue;
      if (reasons.size() == 1) {
        report(rule.lhs->loc, describe(rule) + " can never match: " + reasons[0].reason, reasons[0]);
        continue;
      }
      Diagnostic& diag = diags.error(rule.lhs->loc, describe(rule) + " can never match: none of its " +
                                                        std::to_string(alternatives.size()) + " alternatives can");
      for (size_t k = 0; k < reasons.size(); ++k) {
        DiagnosticEngine::add_note(diag, reasons[k].loc,
                                   "alternative " + std::to_string(k + 1) + ", " + to_string(*alternatives[k]) +
                                       ": " + reasons[k].reason);
      }
    }
  }
}

}  // namespace dpl::compiler
