// The dplc warning about rules that undo each other: a right-hand side, read as a term over the rule's own
// variables, is matched against the left-hand side of another rule (or of the rule itself).
#include "dpl/compiler/termination.h"

#include <algorithm>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace dpl::compiler {

namespace {

// The right-hand side of one rule as a term: its lets are substituted, its left-hand-side variables are opaque
// leaves. For a leaf bound as `c: const`, the pattern it was bound with (`const`) is all that is known of it.
class Term {
 public:
  explicit Term(const Rule& rule) {
    for (const LetBinding& let : rule.lets) lets_[let.name] = let.value.get();
    if (rule.lhs != nullptr) record_bound_patterns(*rule.lhs);
    for (const RootDecl& root : rule.roots) {
      bound_patterns_.emplace(root.name, root.pattern.get());
      record_bound_patterns(*root.pattern);
    }
  }

  // The expression a name stands for after let substitution (itself when it is a left-hand-side variable).
  const Expr& resolve(const Expr& expr) const {
    if (const auto* var = std::get_if<VarExpr>(&expr.node)) {
      if (auto let = lets_.find(var->name); let != lets_.end()) return resolve(*let->second);
    }
    return expr;
  }

  // What the rule's left-hand side says about the leaf `name` (`const` in `c: const`), or nullptr.
  const Pattern* bound_pattern(const std::string& name) const {
    auto it = bound_patterns_.find(name);
    return it == bound_patterns_.end() ? nullptr : it->second;
  }

  bool same(const Expr& a_written, const Expr& b_written) const {
    const Expr& a = resolve(a_written);
    const Expr& b = resolve(b_written);
    if (a.node.index() != b.node.index()) return false;
    auto same_expr = [&](const Expr& x, const Expr& y) { return same(x, y); };
    return std::visit(Overloaded{
                          [&](const VarExpr& e) { return e.name == std::get<VarExpr>(b.node).name; },
                          [&](const ConstExpr& e) {
                            const auto& other = std::get<ConstExpr>(b.node);
                            if (e.dtype != other.dtype || (e.computed == nullptr) != (other.computed == nullptr)) {
                              return false;
                            }
                            // Two computed values are the same when written alike (they read the same names).
                            return e.computed != nullptr ? to_string(*e.computed) == to_string(*other.computed)
                                                         : e.value == other.value;
                          },
                          [&](const CallExpr& e) {
                            const auto& other = std::get<CallExpr>(b.node);
                            const auto copied = [](const CallExpr& call) {
                              return call.attrs_from ? call.attrs_from->name : std::string();
                            };
                            if (e.op.text != other.op.text || e.operands.size() != other.operands.size() ||
                                e.attrs.size() != other.attrs.size() || copied(e) != copied(other)) {
                              return false;
                            }
                            if (!same_each(e.operands, other.operands, same_expr)) return false;
                            for (size_t i = 0; i < e.attrs.size(); ++i) {
                              if (e.attrs[i].name != other.attrs[i].name ||
                                  to_string(*e.attrs[i].value) != to_string(*other.attrs[i].value)) {
                                return false;
                              }
                            }
                            return true;
                          },
                          [&](const ItemExpr& e) {
                            const auto& other = std::get<ItemExpr>(b.node);
                            return e.index == other.index && same(*e.tuple, *other.tuple);
                          },
                          [&](const TupleExpr& e) {
                            return same_each(e.fields, std::get<TupleExpr>(b.node).fields, same_expr);
                          },
                          [&](const auto&) { return to_string(a) == to_string(b); },
                      },
                      a.node);
  }

 private:
  void record_bound_patterns(const Pattern& pattern) {
    if (std::holds_alternative<AltPattern>(pattern.node)) return;  // what an alternative binds is not known for sure
    if (const auto* bind = std::get_if<BindPattern>(&pattern.node)) {
      bound_patterns_.emplace(bind->name, bind->inner.get());
    }
    for_each_sub_pattern(pattern, [&](const Pattern& sub) { record_bound_patterns(sub); });
  }

  std::map<std::string, const Expr*> lets_;
  std::map<std::string, const Pattern*> bound_patterns_;
};

// Matches an alternative-free left-hand side against a term, the way the generated matcher would match the graph
// the term builds. Answers "yes" only when the match is certain from the text: whatever is not known (a computed
// attribute, the type of a leaf) makes it "no".
class TermMatcher {
 public:
  TermMatcher(const Term& term, const OpRegistry& registry) : term_(term), registry_(registry) {}

  // Whether `name` is bound to something other than the variable of that name.
  bool rebound(const std::string& name) const {
    auto it = bindings_.find(name);
    if (it == bindings_.end()) return false;
    const auto* var = std::get_if<VarExpr>(&term_.resolve(*it->second).node);
    return var == nullptr || var->name != name;
  }
  // Binds a root's name to the value that replaces it.
  bool bind_root(const std::string& name, const Expr& expr) { return bind(name, expr); }

  bool match(const Pattern& pattern, const Expr& written) {
    const Expr& expr = term_.resolve(written);
    if (std::holds_alternative<SpreadExpr>(expr.node)) return false;  // any number of values: not certain
    return std::visit(
        Overloaded{
            [](const WildcardPattern&) { return true; },
            [&](const VarPattern& p) { return bind(p.name, expr); },
            [&](const BindPattern& p) { return bind(p.name, expr) && match(*p.inner, expr); },
            [&](const CallPattern& p) { return match_call(p, pattern, expr); },
            [&](const ConstPattern& p) {
              if (const auto* constant = std::get_if<ConstExpr>(&expr.node)) {
                // A computed value is not known here: it certainly matches only a pattern that asks no value.
                const bool value_matches = !p.value || (constant->computed == nullptr && *p.value == constant->value);
                return value_matches && (!p.dtype || p.dtype == constant->dtype);
              }
              return leaf_known_as(pattern, expr);
            },
            [&](const ItemPattern& p) {
              const auto* item = std::get_if<ItemExpr>(&expr.node);
              if (item == nullptr) return leaf_known_as(pattern, expr);
              return (!p.index || *p.index == item->index) && match(*p.tuple, *item->tuple);
            },
            [&](const TuplePattern& p) {
              const auto* tuple = std::get_if<TupleExpr>(&expr.node);
              if (tuple == nullptr || tuple->fields.size() != p.fields.size()) return leaf_known_as(pattern, expr);
              for (size_t i = 0; i < p.fields.size(); ++i) {
                if (!match(*p.fields[i], *tuple->fields[i])) return false;
              }
              return true;
            },
            [&](const auto&) { return leaf_known_as(pattern, expr); },  // types, var(): only what a leaf says
        },
        pattern.node);
  }

 private:
  // A name of the pattern: bound to the term on first use, the same term on later ones.
  bool bind(const std::string& name, const Expr& expr) {
    auto [it, fresh] = bindings_.emplace(name, &expr);
    return fresh || term_.same(*it->second, expr);
  }

  // A leaf of the term matches a constraining pattern only when it was bound with that very pattern.
  bool leaf_known_as(const Pattern& pattern, const Expr& expr) const {
    const auto* var = std::get_if<VarExpr>(&expr.node);
    const Pattern* known = var != nullptr ? term_.bound_pattern(var->name) : nullptr;
    return known != nullptr && same_pattern(*known, pattern);
  }

  bool match_call(const CallPattern& pattern, const Pattern& whole, const Expr& expr) {
    const auto* call = std::get_if<CallExpr>(&expr.node);
    if (call == nullptr) return leaf_known_as(whole, expr);
    if (pattern.composite || call->op_is_var || call->native != nullptr || pattern.ops.size() != 1 ||
        pattern.ops[0].id != call->op.id || pattern.operands.size() != call->operands.size()) {
      return false;
    }
    const OpInfo& info = registry_.get(call->op.id);
    for (const PatternAttr& attr : pattern.attrs) {
      if (!attr.literal) continue;  // a capture takes any value
      if (!attr_is(info, *call, attr.name, *attr.literal)) return false;
    }
    auto match_operands = [&](bool swapped) {
      std::map<std::string, const Expr*> saved = bindings_;
      for (size_t i = 0; i < pattern.operands.size(); ++i) {
        size_t from = swapped ? pattern.operands.size() - 1 - i : i;
        if (!match(*pattern.operands[i], *call->operands[from])) {
          bindings_ = std::move(saved);
          return false;
        }
      }
      return true;
    };
    // The generated matcher tries a commutative op's two operands in both orders.
    return match_operands(false) || (pattern.operands.size() == 2 && info.has(kCommutative) && match_operands(true));
  }

  // The attribute `name` of the built call is `value`: written as that literal, or left at that default.
  static bool attr_is(const OpInfo& info, const CallExpr& call, const std::string& name, const AttrValue& value) {
    for (const ExprAttr& attr : call.attrs) {
      if (attr.name != name) continue;
      const auto* literal = std::get_if<LiteralExpr>(&attr.value->node);
      return literal != nullptr && literal->value == value;
    }
    if (call.attrs_from) return false;  // copied by `**c`: known when the rule fires, like a capture
    int index = info.attr_index(name);
    return index >= 0 && info.attrs[static_cast<size_t>(index)].default_value == value;
  }

  const Term& term_;
  const OpRegistry& registry_;
  std::map<std::string, const Expr*> bindings_;
};

// A rule the check looks at: a plain rewrite, without a guard or `once`, whose right-hand side the text shows.
bool considered(const Rule& rule) {
  if (rule.kind != Rule::Kind::Rewrite || rule.guard != nullptr || rule.options.once || rule.rhs == nullptr) {
    return false;
  }
  const auto* call = std::get_if<CallExpr>(&rule.rhs->node);
  return call == nullptr || call->native == nullptr;
}

// The ops a pattern's root can be (all of them for `(add | multiply)(...)` and for `nn.relu?(p)` with p's).
void root_ops(const Pattern& pattern, std::vector<OpId>& ops) {
  if (const auto* bind = std::get_if<BindPattern>(&pattern.node)) return root_ops(*bind->inner, ops);
  if (const auto* alt = std::get_if<AltPattern>(&pattern.node)) {
    for (const PatternPtr& alternative : alt->alternatives) root_ops(*alternative, ops);
    return;
  }
  const auto* call = std::get_if<CallPattern>(&pattern.node);
  if (call == nullptr) return;
  for (const OpName& op : call->ops) ops.push_back(op.id);
  if (call->optional && call->operands.size() == 1) root_ops(*call->operands[0], ops);
}

// What the pairwise check needs of one considered rule, computed once (the pairs are quadratic in the rules of a
// pass): its right-hand side as a term and that term's root op, its left-hand side's root ops, and the left-hand
// side's alternatives, expanded on first use.
class RuleFacts {
 public:
  explicit RuleFacts(const Rule& rule) : rule_(rule), term_(rule) {
    const auto* call = std::get_if<CallExpr>(&term_.resolve(*rule.rhs).node);
    if (call != nullptr && !call->op_is_var && call->native == nullptr) rhs_op_ = call->op.id;
    root_ops(*rule.lhs, lhs_ops_);
  }

  const Rule& rule() const { return rule_; }

  // Some alternative of `to`'s left-hand side matches this rule's right-hand side.
  bool rhs_matches_lhs_of(RuleFacts& to, const OpRegistry& registry) const {
    // A quick no: the right-hand side's root op is none of the left-hand side's.
    if (!rhs_op_ || std::find(to.lhs_ops_.begin(), to.lhs_ops_.end(), *rhs_op_) == to.lhs_ops_.end()) return false;
    if (!to.alternatives_) to.alternatives_ = expand_alternatives(*to.rule_.lhs);
    for (size_t k = 0; k < to.alternatives_->size(); ++k) {
      if (to.rule_.is_dropped(k)) continue;  // it can never match (never_match.h)
      if (TermMatcher(term_, registry).match(*(*to.alternatives_)[k], *rule_.rhs)) return true;
    }
    return false;
  }

 private:
  const Rule& rule_;
  Term term_;
  std::optional<OpId> rhs_op_;
  std::vector<OpId> lhs_ops_;
  std::optional<std::vector<PatternPtr>> alternatives_;
};

// What replaces the root `name` of a multi-root rule; null for a root it keeps (or a name that is no root).
const Expr* replacement_of(const Rule& rule, const std::string& name) {
  for (const RootRewrite& rewrite : rule.rewrites) {
    if (rewrite.root == name) return rewrite.value.get();
  }
  return nullptr;
}

// A multi-root rule the check looks at: no guard anywhere, not `once`, the anchor replaced, no group (a group's
// replacement is a list of parts, which the text does not show as calls).
bool considered_multi_root(const Rule& rule) {
  if (rule.kind != Rule::Kind::MultiRoot || rule.guard != nullptr || rule.options.once || rule.roots.empty()) {
    return false;
  }
  for (const RootDecl& root : rule.roots) {
    if (root.guard != nullptr || root.group) return false;
  }
  return replacement_of(rule, rule.roots.front().name) != nullptr;
}

// Names a pattern mentions (variables and binds), in any alternative.
void mentioned_names(const Pattern& pattern, std::vector<std::string>& names) {
  if (const auto* var = std::get_if<VarPattern>(&pattern.node)) names.push_back(var->name);
  if (const auto* bind = std::get_if<BindPattern>(&pattern.node)) names.push_back(bind->name);
  for_each_sub_pattern(pattern, [&](const Pattern& sub) { mentioned_names(sub, names); });
}

// Whether a multi-root rule certainly matches again where it fired: each replaced root's replacement matches that
// root's own pattern, with one binding of the names across the roots, and each root it keeps (context) reads only
// names bound to what they were (`x` to `x`) or replaced roots (which it now uses in their new form).
bool recreates_its_roots(const Rule& rule, const OpRegistry& registry) {
  Term term(rule);
  for (const RootsAlternative& alternative : expand_root_alternatives(rule)) {
    TermMatcher matcher(term, registry);
    bool all = true;
    for (size_t r = 0; r < rule.roots.size() && all; ++r) {
      const Expr* replacement = replacement_of(rule, rule.roots[r].name);
      if (replacement == nullptr) continue;
      all = matcher.match(*alternative.roots[r].front(), *replacement) &&
            matcher.bind_root(rule.roots[r].name, *replacement);
    }
    // A kept root still sees its values where the names it reads are bound to themselves (or not at all).
    for (size_t r = 0; r < rule.roots.size() && all; ++r) {
      if (replacement_of(rule, rule.roots[r].name) != nullptr) continue;
      std::vector<std::string> names;
      mentioned_names(*alternative.roots[r].front(), names);
      all = std::none_of(names.begin(), names.end(), [&](const std::string& name) {
        return replacement_of(rule, name) == nullptr && matcher.rebound(name);
      });
    }
    if (all) return true;
  }
  return false;
}

}  // namespace

void warn_rules_that_undo_each_other(const AstFile& file, DiagnosticEngine& diags, const OpRegistry& registry) {
  for (const Pass& pass : file.passes) {
    std::vector<RuleFacts> facts;  // the considered rules so far, the current one last
    facts.reserve(pass.rules.size());
    for (const Rule& b : pass.rules) {
      if (considered_multi_root(b) && recreates_its_roots(b, registry)) {
        diags.warning(b.name_loc, "rule '" + b.name +
                                      "' matches its own replacements (each replaced root's new value matches that "
                                      "root's pattern), so the pass can rewrite forever (until the rewrite budget "
                                      "stops it); add a guard or 'once'");
        continue;
      }
      if (!considered(b)) continue;
      RuleFacts& later = facts.emplace_back(b);  // stays put: reserved
      if (later.rhs_matches_lhs_of(later, registry)) {
        diags.warning(b.name_loc, "rule '" + b.name +
                                      "' matches its own right-hand side, so the pass can rewrite forever (until the "
                                      "rewrite budget stops it); add a guard or 'once'");
        continue;
      }
      for (RuleFacts& earlier : std::span(facts).first(facts.size() - 1)) {
        if (!earlier.rhs_matches_lhs_of(later, registry) || !later.rhs_matches_lhs_of(earlier, registry)) continue;
        const Rule& a = earlier.rule();
        Diagnostic& diag = diags.warning(
            b.name_loc, "rules '" + a.name + "' and '" + b.name +
                            "' undo each other: each one's right-hand side matches the other's left-hand side, so "
                            "the pass can rewrite forever (until the rewrite budget stops it); add a guard or 'once'");
        DiagnosticEngine::add_note(diag, a.name_loc, "'" + a.name + "' is here");
      }
    }
  }
}

}  // namespace dpl::compiler
