// The order in which matchers walk patterns (operand order, commutative choice points), and mention counts.
#include "dpl/compiler/match_order.h"

#include <algorithm>
#include <set>

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
                   if (p.rest && !p.rest->name.empty()) ++mentions[p.rest->name];
                 },
                 [&](const TuplePattern& p) {
                   if (p.rest && !p.rest->name.empty()) ++mentions[p.rest->name];
                 },
                 [](const auto&) {},
             },
             pattern.node);
  if (const TypePattern* type = type_of_pattern(pattern); type != nullptr && type->shape) {
    for (const DimPattern& dim : *type->shape) {
      if (dim.binds()) ++mentions[dim.name];
    }
  }
  for_each_sub_pattern(pattern, [&](const Pattern& sub) { count_mentions(sub, mentions); });
}

void count_mentions(const Expr& expr, Mentions& mentions) {
  if (const auto* var = std::get_if<VarExpr>(&expr.node)) ++mentions[var->name];
  if (const auto* spread = std::get_if<SpreadExpr>(&expr.node)) ++mentions[spread->name];
  const auto* call = std::get_if<CallExpr>(&expr.node);
  if (call != nullptr && call->op_is_var) ++mentions[call->op.text];
  if (call != nullptr && call->attrs_from) ++mentions[call->attrs_from->name];
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
                        [](const DominatorPattern& p) { return 1 + pattern_size(*p.parent) + pattern_size(*p.child); },
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
  if (const auto* constant = std::get_if<ConstExpr>(&expr.node); constant != nullptr && constant->computed) {
    out.push_back(constant->computed.get());
  }
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

void called_op_variables(const Expr& expr, std::vector<std::string>& out) {
  if (const auto* item = std::get_if<ItemExpr>(&expr.node)) called_op_variables(*item->tuple, out);
  if (const auto* tuple = std::get_if<TupleExpr>(&expr.node)) {
    for (const ExprPtr& field : tuple->fields) called_op_variables(*field, out);
  }
  if (const auto* call = std::get_if<CallExpr>(&expr.node)) {
    if (call->op_is_var && std::find(out.begin(), out.end(), call->op.text) == out.end()) out.push_back(call->op.text);
    for (const ExprPtr& operand : call->operands) called_op_variables(*operand, out);
  }
}

const CallPattern& root_call(const Pattern& pattern) {
  if (const auto* bind = std::get_if<BindPattern>(&pattern.node)) return root_call(*bind->inner);
  if (const auto* dominator = std::get_if<DominatorPattern>(&pattern.node)) return root_call(*dominator->child);
  return std::get<CallPattern>(pattern.node);
}

bool root_is_item(const Pattern& pattern) {
  if (const auto* bind = std::get_if<BindPattern>(&pattern.node)) return root_is_item(*bind->inner);
  return std::holds_alternative<ItemPattern>(pattern.node);
}

namespace {

bool is_leaf(const Pattern& pattern) {
  return !std::holds_alternative<CallPattern>(pattern.node) && !std::holds_alternative<BindPattern>(pattern.node) &&
         !std::holds_alternative<ItemPattern>(pattern.node) && !std::holds_alternative<TuplePattern>(pattern.node) &&
         !std::holds_alternative<DominatorPattern>(pattern.node);
}

void collect_inner_binds(const Pattern& pattern, std::set<std::string>& names) {
  const auto* bind = std::get_if<BindPattern>(&pattern.node);
  if (bind != nullptr && !is_leaf(*bind->inner)) names.insert(bind->name);
  for_each_sub_pattern(pattern, [&](const Pattern& sub) { collect_inner_binds(sub, names); });
}

void collect_input_leaves(const Pattern& pattern, std::set<std::string>& seen, std::vector<PartitionInput>& leaves) {
  if (const auto* bind = std::get_if<BindPattern>(&pattern.node)) {
    if (is_leaf(*bind->inner) && !seen.insert(bind->name).second) return;
  } else if (const auto* var = std::get_if<VarPattern>(&pattern.node)) {
    if (seen.insert(var->name).second) leaves.push_back(PartitionInput{&pattern});
    return;
  } else if (is_leaf(pattern)) {
    leaves.push_back(PartitionInput{&pattern});
    return;
  } else if (const auto* dominator = std::get_if<DominatorPattern>(&pattern.node)) {
    // Every node the child's operands lead to is in the region, up to the parent: its leaves are the inputs.
    collect_input_leaves(*dominator->parent, seen, leaves);
    return;
  }
  for_each_sub_pattern(pattern, [&](const Pattern& sub) { collect_input_leaves(sub, seen, leaves); });
  // The operands (fields) a rest matched follow the written ones.
  if (const auto* call = std::get_if<CallPattern>(&pattern.node); call != nullptr && call->rest) {
    leaves.push_back(PartitionInput{nullptr, &*call->rest, call->operands.size()});
  } else if (const auto* tuple = std::get_if<TuplePattern>(&pattern.node); tuple != nullptr && tuple->rest) {
    leaves.push_back(PartitionInput{nullptr, &*tuple->rest, tuple->fields.size()});
  }
}

}  // namespace

std::vector<PartitionInput> partition_inputs(const Pattern& pattern) {
  std::set<std::string> seen;
  collect_inner_binds(pattern, seen);
  std::vector<PartitionInput> leaves;
  collect_input_leaves(pattern, seen, leaves);
  return leaves;
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
                     [&](const DominatorPattern& d) {
                       points += 1;
                       (*this)(*d.parent);
                       (*this)(*d.child);
                     },
                     [](const auto&) {},
                 },
                 p.node);
      if (const TypePattern* t = type_of_pattern(p)) {
        points += t->dtype ? 1 : 0;
        if (!t->shape) return;
        points += 1;
        for (const DimPattern& dim : *t->shape) {
          points += dim.kind == DimPattern::Kind::Fixed || dim.kind == DimPattern::Kind::Expr ? 1 : 0;
        }
      }
    }
  };
  Visitor{points}(pattern);
  return points;
}

Mentions root_mentions(const Rule& rule, const RootsAlternative& alternative) {
  Mentions mentions;
  for (size_t i = 0; i < rule.roots.size(); ++i) {
    ++mentions[rule.roots[i].name];
    Mentions most;
    for (const PatternPtr& pattern : alternative.roots[i]) {
      Mentions one;
      count_mentions(*pattern, one);
      for (const auto& [name, count] : one) most[name] = std::max(most[name], count);
    }
    for (const auto& [name, count] : most) mentions[name] += count;
  }
  for (const RootDecl& root : rule.roots) {
    if (root.guard != nullptr) count_mentions(*root.guard, mentions);
  }
  return mentions;
}

size_t root_specificity(const RootsAlternative& alternative) {
  size_t sum = 0;
  for (const std::vector<PatternPtr>& patterns : alternative.roots) {
    size_t least = pattern_specificity(*patterns[0]);
    for (const PatternPtr& pattern : patterns) least = std::min(least, pattern_specificity(*pattern));
    sum += least;
  }
  return sum;
}

}  // namespace dpl::compiler
