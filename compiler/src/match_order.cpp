// The order in which matchers walk patterns (operand order, commutative choice points), and mention counts.
#include "dpl/compiler/match_order.h"

#include <algorithm>

namespace dpl::compiler {

void count_mentions(const Pattern& pattern, Mentions& mentions) {
  std::visit(Overloaded{
                 [&](const VarPattern& p) { ++mentions[p.name]; },
                 [&](const BindPattern& p) { ++mentions[p.name]; },
                 [&](const CallPattern& p) {
                   if (!p.op_var.empty()) ++mentions[p.op_var];
                   for (const PatternAttr& attr : p.attrs) {
                     if (!attr.literal) ++mentions[attr.capture];
                   }
                 },
                 [&](const TypePattern& p) {
                   if (!p.shape) return;
                   for (const DimPattern& dim : *p.shape) {
                     if (dim.kind == DimPattern::Kind::Var) ++mentions[dim.name];
                   }
                 },
                 [](const auto&) {},
             },
             pattern.node);
  for_each_sub_pattern(pattern, [&](const Pattern& sub) { count_mentions(sub, mentions); });
}

void count_mentions(const Expr& expr, Mentions& mentions) {
  if (const auto* var = std::get_if<VarExpr>(&expr.node)) ++mentions[var->name];
  const auto* call = std::get_if<CallExpr>(&expr.node);
  if (call != nullptr && call->op_is_var) ++mentions[call->op.text];
  for_each_sub_expr(expr, [&](const Expr& sub) { count_mentions(sub, mentions); });
}

// `_` or a variable mentioned nowhere else in the pattern: matches anything and constrains nothing.
bool MatchOrder::unconstrained(const Pattern& pattern) const {
  if (std::holds_alternative<WildcardPattern>(pattern.node)) return true;
  const auto* var = std::get_if<VarPattern>(&pattern.node);
  return var != nullptr && pattern_mentions_.at(var->name) == 1;
}

bool MatchOrder::needs_both_orders(const CallPattern& call) const {
  if (call.composite || call.operands.size() != 2 || !registry_.get(call.ops[0].id).has(kCommutative)) return false;
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
bool MatchOrder::has_choice(const Pattern& pattern) const {
  if (const auto* bind = std::get_if<BindPattern>(&pattern.node)) return has_choice(*bind->inner);
  const auto* call = std::get_if<CallPattern>(&pattern.node);
  if (call == nullptr) return false;
  if (needs_both_orders(*call)) return true;
  return std::any_of(call->operands.begin(), call->operands.end(),
                     [&](const PatternPtr& operand) { return has_choice(*operand); });
}

std::vector<size_t> MatchOrder::operand_order(const CallPattern& call) const {
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

size_t pattern_size(const Pattern& pattern) {
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

size_t pattern_specificity(const Pattern& pattern) {
  Mentions mentions;
  count_mentions(pattern, mentions);
  size_t points = 0;
  for (const auto& [name, count] : mentions) points += static_cast<size_t>(count - 1);
  struct Visitor {
    size_t& points;
    void operator()(const Pattern& p) const {
      std::visit(Overloaded{
                     [&](const BindPattern& b) { (*this)(*b.inner); },
                     [&](const CallPattern& c) {
                       points += 1;
                       for (const PatternAttr& attr : c.attrs) points += attr.literal ? 1 : 0;
                       for (const PatternPtr& operand : c.operands) (*this)(*operand);
                     },
                     [&](const ConstPattern& c) { points += 1 + (c.value ? 1 : 0) + (c.dtype ? 1 : 0); },
                     [&](const ParamPattern& v) { points += 1 + (v.name ? 1 : 0); },
                     [&](const TuplePattern& t) {
                       points += 1;
                       for (const PatternPtr& field : t.fields) (*this)(*field);
                     },
                     [&](const ItemPattern& i) {
                       points += i.index ? 1 : 0;
                       (*this)(*i.tuple);
                     },
                     [&](const TypePattern& t) {
                       points += t.dtype ? 1 : 0;
                       if (!t.shape) return;
                       points += 1;
                       for (const DimPattern& dim : *t.shape) points += dim.kind == DimPattern::Kind::Fixed ? 1 : 0;
                     },
                     [](const auto&) {},
                 },
                 p.node);
    }
  };
  Visitor{points}(pattern);
  return points;
}

}  // namespace dpl::compiler
