// Overlap analysis of rules: which alternative covers (matches a superset of) another, which can match one node.
#include "dpl/compiler/overlap.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "dpl/compiler/match_order.h"

namespace dpl::compiler {

namespace {

// Names bound with `name: pattern` in one pattern, to the pattern they are bound to.
using Bindings = std::map<std::string, const Pattern*>;

void collect_bindings(const Pattern& pattern, Bindings& bindings) {
  if (const auto* bind = std::get_if<BindPattern>(&pattern.node)) bindings.emplace(bind->name, bind->inner.get());
  for_each_sub_pattern(pattern, [&](const Pattern& sub) { collect_bindings(sub, bindings); });
}

Bindings bindings_of(const Pattern& pattern) {
  Bindings bindings;
  collect_bindings(pattern, bindings);
  return bindings;
}

// What a position demands of its node: the pattern below `name:`, and for a repeated name the pattern it is
// bound to elsewhere. (Bounded, so that a name bound to itself cannot loop.)
const Pattern& demand(const Pattern& pattern, const Bindings& bindings) {
  const Pattern* current = &pattern;
  for (size_t step = 0; step <= bindings.size(); ++step) {
    if (const auto* bind = std::get_if<BindPattern>(&current->node)) {
      current = bind->inner.get();
    } else if (const auto* var = std::get_if<VarPattern>(&current->node); var != nullptr && bindings.count(var->name)) {
      current = bindings.at(var->name);
    } else {
      break;
    }
  }
  return *current;
}

const std::string* name_at(const Pattern& pattern) {
  if (const auto* var = std::get_if<VarPattern>(&pattern.node)) return &var->name;
  if (const auto* bind = std::get_if<BindPattern>(&pattern.node)) return &bind->name;
  return nullptr;
}

bool is_commutative(const CallPattern& call, const OpRegistry& registry) {
  return !call.composite && !call.ops.empty() && call.operands.size() == 2 && !call.rest &&
         std::all_of(call.ops.begin(), call.ops.end(),
                     [&](const OpName& op) { return registry.get(op.id).has(kCommutative); });
}

bool has_op(const CallPattern& call, OpId id) {
  return std::any_of(call.ops.begin(), call.ops.end(), [&](const OpName& op) { return op.id == id; });
}

const PatternAttr* attr_at(const CallPattern& call, int index) {
  for (const PatternAttr& attr : call.attrs) {
    if (attr.index == index) return &attr;
  }
  return nullptr;
}

// `const(2.0)` (a value, no dtype, written with a fraction) matches float constants only.
bool float_only(const ConstPattern& constant) {
  return constant.value && !constant.integer_value && !constant.dtype;
}

// Whether every constant `special` matches is a float constant, as `float_only` patterns demand.
bool only_floats(const ConstPattern& special) {
  return special.dtype ? is_float(*special.dtype) : float_only(special);
}

// What the special pattern puts where the general one mentions a name: a name of the special pattern (a value,
// op or attribute variable), an op, an attribute literal or a fixed extent. Two mentions of one general name are
// satisfied when the special pattern puts the same thing at both; nothing (nullopt) satisfies no repetition.
using Token = std::variant<std::string, OpId, AttrValue, int64_t>;

// pattern_covers(), with what it learned of the general pattern's names.
class Covering {
 public:
  Covering(const OpRegistry& registry, const Bindings& special_bindings)
      : registry_(registry), special_bindings_(special_bindings) {}

  bool covers(const Pattern& general, const Pattern& special) {
    const Pattern& target = demand(special, special_bindings_);
    // A dominator pattern matches only nodes its child matches.
    if (const auto* dominator = std::get_if<DominatorPattern>(&target.node)) return covers(general, *dominator->child);
    return std::visit(
        Overloaded{
            [](const WildcardPattern&) { return true; },
            [&](const VarPattern& g) {
              see(g.name, special);
              return true;
            },
            [&](const BindPattern& g) {
              see(g.name, special);
              return covers(*g.inner, special);
            },
            [&](const CallPattern& g) {
              const auto* s = std::get_if<CallPattern>(&target.node);
              return s != nullptr && covers_call(g, *s);
            },
            [&](const ConstPattern& g) {
              const auto* s = std::get_if<ConstPattern>(&target.node);
              return s != nullptr && covers_const(g, *s);
            },
            [&](const TypePattern& g) {
              if (const auto* s = std::get_if<TypePattern>(&target.node)) return covers_type(g, *s);
              // A constant is a tensor; its dtype is known only when the pattern writes it.
              const auto* s = std::get_if<ConstPattern>(&target.node);
              return s != nullptr && !g.shape && (!g.dtype || s->dtype == g.dtype);
            },
            [&](const ItemPattern& g) {
              const auto* s = std::get_if<ItemPattern>(&target.node);
              return s != nullptr && (!g.index || g.index == s->index) && covers(*g.tuple, *s->tuple);
            },
            [&](const TuplePattern& g) {
              const auto* s = std::get_if<TuplePattern>(&target.node);
              return s != nullptr && covers_each(g.fields, g.rest, s->fields, s->rest);
            },
            [&](const ParamPattern& g) {
              const auto* s = std::get_if<ParamPattern>(&target.node);
              return s != nullptr && (!g.name || g.name == s->name);
            },
            [](const AltPattern&) { return false; },  // expanded before the analysis
            [](const DominatorPattern&) { return false; },  // the region around the node is not compared
        },
        general.node);
  }

  // Every name the general pattern repeats meets the same thing at each of its mentions.
  bool repetitions_hold() const {
    for (const auto& [name, tokens] : seen_) {
      if (tokens.size() < 2) continue;
      for (const std::optional<Token>& token : tokens) {
        if (!token || *token != *tokens.front()) return false;
      }
    }
    return true;
  }

 private:
  void see(const std::string& name, std::optional<Token> token) { seen_[name].push_back(std::move(token)); }
  void see(const std::string& name, const Pattern& special) {
    const std::string* special_name = name_at(special);
    see(name, special_name ? std::optional<Token>(*special_name) : std::nullopt);
  }

  // Operands (or fields), each list perhaps followed by `...`: `special`'s lists fit `general`'s count and
  // each of `general`'s covers its counterpart.
  bool covers_each(const std::vector<PatternPtr>& general, const std::optional<RestPattern>& general_rest,
                   const std::vector<PatternPtr>& special, const std::optional<RestPattern>& special_rest) {
    if (general_rest) {
      if (special.size() < general.size()) return false;
      if (!general_rest->name.empty()) see(general_rest->name, std::nullopt);
    } else if (special_rest || special.size() != general.size()) {
      return false;
    }
    for (size_t i = 0; i < general.size(); ++i) {
      if (!covers(*general[i], *special[i])) return false;
    }
    return true;
  }

  bool covers_call(const CallPattern& g, const CallPattern& s) {
    // A result type covers the same or a narrower one only (a call's type is not known from its pattern).
    if (g.result_type && !(s.result_type && covers_type(*g.result_type, *s.result_type))) return false;
    if (g.composite || s.composite) {
      if (g.composite != s.composite) return false;
    } else if (!std::all_of(s.ops.begin(), s.ops.end(), [&](const OpName& op) { return has_op(g, op.id); })) {
      return false;
    }
    for (const PatternAttr& attr : g.attrs) {
      const PatternAttr* other = attr_at(s, attr.index);
      if (attr.literal) {
        if (other == nullptr || other->literal != attr.literal) return false;
      } else if (other == nullptr) {
        see(attr.capture, std::nullopt);
      } else {
        see(attr.capture, other->literal ? Token(*other->literal) : Token(other->capture));
      }
    }
    if (!g.op_var.empty()) {
      see(g.op_var, s.ops.size() == 1   ? std::optional<Token>(s.ops[0].id)
                    : s.op_var.empty() ? std::nullopt
                                       : std::optional<Token>(s.op_var));
    }
    if (!is_commutative(g, registry_) || s.rest || s.operands.size() != 2) {
      return covers_each(g.operands, g.rest, s.operands, s.rest);
    }
    auto before = seen_;
    if (covers(*g.operands[0], *s.operands[0]) && covers(*g.operands[1], *s.operands[1])) return true;
    seen_ = std::move(before);
    return covers(*g.operands[0], *s.operands[1]) && covers(*g.operands[1], *s.operands[0]);
  }

  static bool covers_const(const ConstPattern& g, const ConstPattern& s) {
    if (g.dtype && s.dtype != g.dtype) return false;
    if (!g.value) return true;
    return s.value == g.value && (!float_only(g) || only_floats(s));
  }

  bool covers_type(const TypePattern& g, const TypePattern& s) {
    if (g.dtype && s.dtype != g.dtype) return false;
    if (!g.shape) return true;
    if (!s.shape || s.shape->size() != g.shape->size()) return false;
    for (size_t i = 0; i < g.shape->size(); ++i) {
      const DimPattern& gd = (*g.shape)[i];
      const DimPattern& sd = (*s.shape)[i];
      switch (gd.kind) {
        case DimPattern::Kind::Any:
          break;
        case DimPattern::Kind::Fixed:
          if (sd.kind != DimPattern::Kind::Fixed || sd.extent != gd.extent) return false;
          break;
        case DimPattern::Kind::Var:
          see(gd.name, sd.kind == DimPattern::Kind::Fixed ? std::optional<Token>(sd.extent)
                       : sd.kind == DimPattern::Kind::Any  ? std::nullopt
                                                           : std::optional<Token>(sd.name));
          break;
        case DimPattern::Kind::Expr:  // holds only for some values: not covered (a missed report, never a false one)
          return false;
      }
    }
    return true;
  }

  const OpRegistry& registry_;
  const Bindings& special_bindings_;
  std::map<std::string, std::vector<std::optional<Token>>> seen_;
};

// patterns_unify() for two positions, each read with its own pattern's bindings.
class Unifier {
 public:
  Unifier(const OpRegistry& registry, const Bindings& a_bindings, const Bindings& b_bindings)
      : registry_(registry), a_bindings_(a_bindings), b_bindings_(b_bindings) {}

  bool unify(const Pattern& a_position, const Pattern& b_position) const {
    const Pattern& a = demand(a_position, a_bindings_);
    const Pattern& b = demand(b_position, b_bindings_);
    if (matches_anything(a) || matches_anything(b)) return true;
    if (const auto* dominator = std::get_if<DominatorPattern>(&a.node)) return unify(*dominator->child, b);
    if (const auto* dominator = std::get_if<DominatorPattern>(&b.node)) return unify(a, *dominator->child);
    if (const auto* type = std::get_if<TypePattern>(&a.node)) return unify_type(*type, b);
    if (const auto* type = std::get_if<TypePattern>(&b.node)) return unify_type(*type, a);
    if (a.node.index() != b.node.index()) return false;  // different kinds of node
    return std::visit(
        Overloaded{
            [&](const CallPattern& x) { return unify_call(x, std::get<CallPattern>(b.node)); },
            [&](const ConstPattern& x) { return unify_const(x, std::get<ConstPattern>(b.node)); },
            [&](const ParamPattern& x) {
              const ParamPattern& y = std::get<ParamPattern>(b.node);
              return !x.name || !y.name || x.name == y.name;
            },
            [&](const ItemPattern& x) {
              const ItemPattern& y = std::get<ItemPattern>(b.node);
              return (!x.index || !y.index || x.index == y.index) && unify(*x.tuple, *y.tuple);
            },
            [&](const TuplePattern& x) {
              const TuplePattern& y = std::get<TuplePattern>(b.node);
              return unify_each(x.fields, x.rest.has_value(), y.fields, y.rest.has_value(), false);
            },
            [](const auto&) { return true; },
        },
        a.node);
  }

 private:
  // `_`, a name bound nowhere to a pattern, and what is left unexpanded.
  static bool matches_anything(const Pattern& pattern) {
    return std::holds_alternative<WildcardPattern>(pattern.node) || std::holds_alternative<VarPattern>(pattern.node) ||
           std::holds_alternative<BindPattern>(pattern.node) || std::holds_alternative<AltPattern>(pattern.node);
  }

  // Operands (or fields), each list perhaps followed by `...`; `swapped`: two operands, the second list reversed.
  bool unify_each(const std::vector<PatternPtr>& a, bool a_rest, const std::vector<PatternPtr>& b, bool b_rest,
                  bool swapped) const {
    if (a.size() != b.size() && !(a.size() < b.size() ? a_rest : b_rest)) return false;
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
      if (!unify(*a[i], *b[swapped ? b.size() - 1 - i : i])) return false;
    }
    return true;
  }

  bool unify_call(const CallPattern& a, const CallPattern& b) const {
    if (a.composite || b.composite) {
      if (a.composite != b.composite) return false;
    } else if (std::none_of(a.ops.begin(), a.ops.end(), [&](const OpName& op) { return has_op(b, op.id); })) {
      return false;
    }
    for (const PatternAttr& attr : a.attrs) {
      const PatternAttr* other = attr_at(b, attr.index);
      if (attr.literal && other != nullptr && other->literal && other->literal != attr.literal) return false;
    }
    if (unify_each(a.operands, a.rest.has_value(), b.operands, b.rest.has_value(), false) &&
        !only_constants(a.operands, b.operands, false)) {
      return true;
    }
    if (is_commutative(a, registry_) && is_commutative(b, registry_)) {
      return unify_each(a.operands, false, b.operands, false, true) && !only_constants(a.operands, b.operands, true);
    }
    // A commutative op with `...` on one side: the orders it may be matched in are not followed.
    return (a.rest || b.rest) && !a.composite && !a.ops.empty() && registry_.get(a.ops[0].id).has(kCommutative);
  }

  static bool unify_const(const ConstPattern& a, const ConstPattern& b) {
    if (a.value && b.value && a.value != b.value) return false;
    if (a.dtype && b.dtype && a.dtype != b.dtype) return false;
    return !(float_only(a) && b.dtype && !is_float(*b.dtype)) && !(float_only(b) && a.dtype && !is_float(*a.dtype));
  }

  bool constant(const Pattern& pattern, const Bindings& bindings) const {
    return std::holds_alternative<ConstPattern>(demand(pattern, bindings).node);
  }

  // Whether the operands of two calls, paired as unify_each() pairs them, meet only where every operand is a
  // constant and each call has a name or type there that only the other makes a constant: an accidental
  // constant expression (`multiply(x, const(2.0))` and `multiply(x, const(1.0))` meet only at
  // `multiply(const(1.0), const(2.0))`), which model graphs rarely hold. Such overlaps are not reported. A name
  // that meets a constant is a constant wherever its pattern mentions it.
  bool only_constants(const std::vector<PatternPtr>& a, const std::vector<PatternPtr>& b, bool swapped) const {
    if (a.empty() || a.size() != b.size()) return false;
    auto other = [&](size_t i) -> const Pattern& { return *b[swapped ? b.size() - 1 - i : i]; };
    std::set<std::string> a_constants;
    std::set<std::string> b_constants;
    for (size_t i = 0; i < a.size(); ++i) {
      if (const std::string* name = name_at(*a[i]); name != nullptr && constant(other(i), b_bindings_)) {
        a_constants.insert(*name);
      }
      if (const std::string* name = name_at(other(i)); name != nullptr && constant(*a[i], a_bindings_)) {
        b_constants.insert(*name);
      }
    }
    bool a_surprised = false;
    bool b_surprised = false;
    for (size_t i = 0; i < a.size(); ++i) {
      const std::string* a_name = name_at(*a[i]);
      const std::string* b_name = name_at(other(i));
      bool a_constant = constant(*a[i], a_bindings_);
      bool b_constant = constant(other(i), b_bindings_);
      // Both patterns meet one node here: a constant if either side makes it one.
      bool forced = a_constant || b_constant || (a_name != nullptr && a_constants.count(*a_name) != 0) ||
                    (b_name != nullptr && b_constants.count(*b_name) != 0);
      if (!forced) return false;
      a_surprised = a_surprised || !a_constant;
      b_surprised = b_surprised || !b_constant;
    }
    return a_surprised && b_surprised;
  }

  // A type pattern against any other pattern (already read through bindings).
  static bool unify_type(const TypePattern& type, const Pattern& other) {
    if (std::holds_alternative<TuplePattern>(other.node)) return false;  // a tuple is not a tensor
    if (const auto* constant = std::get_if<ConstPattern>(&other.node)) {
      if (type.dtype && constant->dtype && type.dtype != constant->dtype) return false;
      return !(float_only(*constant) && type.dtype && !is_float(*type.dtype));
    }
    const auto* y = std::get_if<TypePattern>(&other.node);
    if (y == nullptr) return true;
    if (type.dtype && y->dtype && type.dtype != y->dtype) return false;
    if (!type.shape || !y->shape) return true;
    if (type.shape->size() != y->shape->size()) return false;
    for (size_t i = 0; i < type.shape->size(); ++i) {
      const DimPattern& p = (*type.shape)[i];
      const DimPattern& q = (*y->shape)[i];
      if (p.kind == DimPattern::Kind::Fixed && q.kind == DimPattern::Kind::Fixed && p.extent != q.extent) return false;
    }
    return true;
  }

  const OpRegistry& registry_;
  const Bindings& a_bindings_;
  const Bindings& b_bindings_;
};

// One alternative of a rule, at its place in the rule order.
struct Candidate {
  const Rule* rule = nullptr;
  size_t rule_index = 0;
  PatternPtr pattern;
  Bindings bindings;
  size_t specificity = 0;
  bool certain = false;  // fires_whenever_it_matches()
  // Has a dominator pattern: whether two such regions can be one is not followed, so no overlap is reported.
  bool regional = false;
};

// A partition declines when a matched node other than the root has users outside the match.
bool has_inner_nodes(const Pattern& pattern) {
  bool found = false;
  for_each_sub_pattern(pattern, [&](const Pattern& sub) {
    found = found || std::holds_alternative<CallPattern>(sub.node) || std::holds_alternative<TuplePattern>(sub.node) ||
            std::holds_alternative<ItemPattern>(sub.node) || has_inner_nodes(sub);
  });
  return found;
}

bool has_dominator(const Pattern& pattern) {
  bool found = std::holds_alternative<DominatorPattern>(pattern.node);
  for_each_sub_pattern(pattern, [&](const Pattern& sub) { found = found || has_dominator(sub); });
  return found;
}

const Pattern& below_bindings(const Pattern& pattern) {
  if (const auto* bind = std::get_if<BindPattern>(&pattern.node)) return below_bindings(*bind->inner);
  return pattern;
}

// The pattern the matcher is dispatched on: below bindings and a dominator pattern's parent.
const Pattern& dispatched(const Pattern& pattern) {
  const Pattern& top = below_bindings(pattern);
  if (const auto* dominator = std::get_if<DominatorPattern>(&top.node)) return dispatched(*dominator->child);
  return top;
}

// Whether a rule, once `alternative` of its pattern matched, certainly fires: nothing can make it fall through
// to the next rule.
bool fires_whenever_it_matches(const Rule& rule, const Pattern& alternative) {
  if (rule.guard != nullptr || rule.options.once) return false;
  if (rule.kind == Rule::Kind::Partition) return !has_inner_nodes(below_bindings(alternative));
  for (const LetBinding& let : rule.lets) {
    if (calls_extern(*let.value)) return false;
  }
  return rule.rhs == nullptr || !calls_extern(*rule.rhs);
}

std::string describe(const Rule& rule) {
  return (rule.kind == Rule::Kind::Partition ? "partition '" : "rule '") + rule.name + "'";
}

// Why `first` is tried before `second` (it is): two Candidates, or two RootsCandidates.
template <typename C>
const char* tried_first_because(const C& first, const C& second) {
  if (first.rule->options.priority != second.rule->options.priority) return "higher priority";
  if (first.specificity != second.specificity) return "more specific";
  return "declared first";
}

// One alternative of a multi-root rule, at its place in the rule order: per root its patterns (a group's every
// alternative), the names bound in any of them (a root's name to its first pattern), which roots it replaces.
struct RootsCandidate {
  const Rule* rule = nullptr;
  size_t rule_index = 0;
  RootsAlternative roots;
  Bindings bindings;
  size_t specificity = 0;
  std::vector<bool> replaced;
};

RootsCandidate roots_candidate(const Rule& rule, size_t rule_index, RootsAlternative roots) {
  RootsCandidate candidate;
  candidate.rule = &rule;
  candidate.rule_index = rule_index;
  candidate.specificity = root_specificity(roots);
  for (size_t r = 0; r < rule.roots.size(); ++r) {
    candidate.bindings.emplace(rule.roots[r].name, roots.roots[r].front().get());
    for (const PatternPtr& pattern : roots.roots[r]) collect_bindings(*pattern, candidate.bindings);
    candidate.replaced.push_back(std::any_of(rule.rewrites.begin(), rule.rewrites.end(), [&](const RootRewrite& w) {
      return w.root == rule.roots[r].name;
    }));
  }
  candidate.roots = std::move(roots);
  return candidate;
}

bool guarded(const Rule& rule) {
  return rule.guard != nullptr ||
         std::any_of(rule.roots.begin(), rule.roots.end(), [](const RootDecl& root) { return root.guard != nullptr; });
}

bool has_dominator(const RootsCandidate& candidate) {
  for (const std::vector<PatternPtr>& patterns : candidate.roots.roots) {
    for (const PatternPtr& pattern : patterns) {
      if (has_dominator(*pattern)) return true;
    }
  }
  return false;
}

// The rule order, for a stable sort of Candidates or RootsCandidates: higher priority first, then the more specific.
template <typename C>
bool tried_before(const C& a, const C& b) {
  if (a.rule->options.priority != b.rule->options.priority) return a.rule->options.priority > b.rule->options.priority;
  return a.specificity > b.specificity;
}

// The dispatch key of an alternative: its root op, or its composite name; rules with different keys never meet.
std::string root_key(const Pattern& pattern) {
  const auto* call = std::get_if<CallPattern>(&dispatched(pattern).node);
  if (call == nullptr) return "?";
  if (call->composite) return "composite " + *call->composite;
  return call->ops.empty() ? "?" : std::to_string(call->ops[0].id);
}

class PassOverlaps {
 public:
  PassOverlaps(const Pass& pass, DiagnosticEngine& diags, const OpRegistry& registry)
      : diags_(diags), registry_(registry) {
    for (size_t i = 0; i < pass.rules.size(); ++i) {
      const Rule& rule = pass.rules[i];
      if (rule.kind == Rule::Kind::MultiRoot) {
        for (RootsAlternative& roots : expand_root_alternatives(rule)) {
          multi_roots_.push_back(roots_candidate(rule, i, std::move(roots)));
        }
        continue;
      }
      if (rule.lhs == nullptr) continue;
      std::vector<PatternPtr> alternatives = expand_alternatives(*rule.lhs);
      for (size_t k = 0; k < alternatives.size(); ++k) {
        if (rule.is_dropped(k)) continue;  // it can never match, so it neither shadows nor overlaps (never_match.h)
        PatternPtr& alternative = alternatives[k];
        Candidate candidate;
        candidate.rule = &rule;
        candidate.rule_index = i;
        candidate.specificity = pattern_specificity(*alternative);
        candidate.bindings = bindings_of(*alternative);
        candidate.certain = fires_whenever_it_matches(rule, *alternative);
        candidate.regional = has_dominator(*alternative);
        candidate.pattern = std::move(alternative);
        order_.push_back(std::move(candidate));
      }
    }
    // The rule order of emit_matcher(): priority, then specificity, then declaration (a stable sort).
    std::stable_sort(order_.begin(), order_.end(), tried_before<Candidate>);
    for (size_t position = 0; position < order_.size(); ++position) {
      by_root_[root_key(*order_[position].pattern)].push_back(position);
    }
    std::stable_sort(multi_roots_.begin(), multi_roots_.end(), tried_before<RootsCandidate>);
    rules_ = &pass.rules;
  }

  void run() {
    std::set<size_t> dead;
    for (size_t i = 0; i < rules_->size(); ++i) {
      if (report_if_shadowed(i)) dead.insert(i);
    }
    warn_ambiguous(dead);
    warn_ambiguous_multi_root();
  }

 private:
  bool covers(const Candidate& general, const Candidate& special) const {
    Covering covering(registry_, special.bindings);
    return covering.covers(*general.pattern, *special.pattern) && covering.repetitions_hold();
  }

  bool unify(const Candidate& a, const Candidate& b) const {
    return Unifier(registry_, a.bindings, b.bindings).unify(*a.pattern, *b.pattern);
  }

  // The first alternative of another rule, tried before the one at `position`, that certainly fires wherever
  // that one matches; nullptr if none.
  const Candidate* shadower(size_t position) const {
    const Candidate& special = order_[position];
    for (size_t earlier : by_root_.at(root_key(*special.pattern))) {
      if (earlier >= position) break;
      const Candidate& general = order_[earlier];
      if (general.rule != special.rule && general.certain && covers(general, special)) {
        return &general;
      }
    }
    return nullptr;
  }

  // An error when every alternative of rule `index` is shadowed. Returns whether it was.
  bool report_if_shadowed(size_t index) {
    std::vector<std::pair<const Candidate*, const Candidate*>> shadowed;  // (shadower, alternative)
    size_t alternatives = 0;
    for (size_t position = 0; position < order_.size(); ++position) {
      if (order_[position].rule_index != index) continue;
      ++alternatives;
      const Candidate* by = shadower(position);
      if (by == nullptr) return false;
      shadowed.emplace_back(by, &order_[position]);
    }
    if (alternatives == 0) return false;
    const Rule& rule = (*rules_)[index];
    std::vector<const Candidate*> shadowers;
    for (const auto& pair : shadowed) {
      const Candidate* by = pair.first;
      if (std::none_of(shadowers.begin(), shadowers.end(), [&](const Candidate* c) { return c->rule == by->rule; })) {
        shadowers.push_back(by);
      }
    }
    if (shadowers.size() == 1) {
      const Candidate& by = *shadowers[0];
      Diagnostic& diag = diags_.error(rule.name_loc, describe(rule) + " can never fire: " + describe(*by.rule) +
                                                         " (tried first: " +
                                                         tried_first_because(by, *shadowed[0].second) +
                                                         ") matches every node it matches");
      DiagnosticEngine::add_note(diag, by.rule->name_loc, "'" + by.rule->name + "' is here");
      return true;
    }
    std::string names;
    for (const Candidate* by : shadowers) names += (names.empty() ? "'" : ", '") + by->rule->name + "'";
    Diagnostic& diag = diags_.error(rule.name_loc, describe(rule) +
                                                       " can never fire: each of its alternatives is matched by a "
                                                       "rule tried first (" +
                                                       names + ")");
    for (const Candidate* by : shadowers) {
      const Candidate& alternative =
          *std::find_if(shadowed.begin(), shadowed.end(), [&](const auto& s) { return s.first == by; })->second;
      DiagnosticEngine::add_note(diag, by->rule->name_loc,
                                 "'" + by->rule->name + "' is here (tried first: " +
                                     tried_first_because(*by, alternative) + ")");
    }
    return true;
  }

  // Warnings for pairs of live rules of equal priority, not both guarded, whose alternatives can match one node
  // while neither covers the other (a rule covered by another is a deliberate specialization or fallback).
  void warn_ambiguous(const std::set<size_t>& dead) {
    // (later rule, earlier rule) -> positions of the first such pair of alternatives, in rule order.
    std::map<std::pair<size_t, size_t>, std::pair<size_t, size_t>> ambiguous;
    for (const auto& [key, positions] : by_root_) {
      for (size_t i = 0; i < positions.size(); ++i) {
        for (size_t j = i + 1; j < positions.size(); ++j) {
          const Candidate& a = order_[positions[i]];
          const Candidate& b = order_[positions[j]];
          if (a.rule == b.rule || a.rule->options.priority != b.rule->options.priority) continue;
          if (dead.count(a.rule_index) != 0 || dead.count(b.rule_index) != 0) continue;
          if (a.rule->guard != nullptr && b.rule->guard != nullptr) continue;
          if (a.regional || b.regional) continue;
          auto rules = std::minmax(a.rule_index, b.rule_index);
          std::pair<size_t, size_t> pair_key{rules.second, rules.first};
          if (ambiguous.count(pair_key) != 0) continue;
          if (unify(a, b) && !covers(a, b) && !covers(b, a)) {
            ambiguous.emplace(pair_key, std::pair{positions[i], positions[j]});
          }
        }
      }
    }
    for (const auto& [rules, positions] : ambiguous) {
      const Candidate& first = order_[positions.first];
      const Candidate& second = order_[positions.second];
      const Rule& later = (*rules_)[rules.first];
      const Rule& earlier = (*rules_)[rules.second];
      warn_competing(earlier, later,
                     describe(earlier) + " and " + describe(later) +
                         " have the same priority and can match the same node",
                     first.rule->name, tried_first_because(first, second));
    }
  }

  // The warning at the later of two competing rules (`what` they can do), with a note at the earlier one.
  void warn_competing(const Rule& earlier, const Rule& later, const std::string& what, const std::string& first,
                      const char* because) {
    Diagnostic& diag = diags_.warning(later.name_loc, what + ", and neither matches everything the other does: '" +
                                                          first + "' is tried first (" + because + ")");
    DiagnosticEngine::add_note(diag, earlier.name_loc,
                               "'" + earlier.name +
                                   "' is here; give the rule that should win a higher priority to make the order "
                                   "explicit");
  }

  // Every pattern of root `r` of `general` covers the one pattern of the same root of `special`, with one reading
  // of general's names across the roots; the roots must be alike in number and kind.
  bool covers(const RootsCandidate& general, const RootsCandidate& special) const {
    const std::vector<RootDecl>& g_roots = general.rule->roots;
    const std::vector<RootDecl>& s_roots = special.rule->roots;
    if (g_roots.size() != s_roots.size()) return false;
    Covering covering(registry_, special.bindings);
    for (size_t r = 0; r < g_roots.size(); ++r) {
      const std::vector<PatternPtr>& g = general.roots.roots[r];
      const std::vector<PatternPtr>& s = special.roots.roots[r];
      if (g_roots[r].group != s_roots[r].group || general.replaced[r] != special.replaced[r] || g.size() != 1 ||
          s.size() != 1 || !covering.covers(*g.front(), *s.front())) {
        return false;
      }
    }
    return covering.repetitions_hold();
  }

  // Whether two multi-root alternatives can fire at one anchor node on a node both replace: their anchors can be
  // one node, and a root one replaces can be a root the other replaces. With the anchors one node, the anchor of
  // one is no later root of the other (a rule's roots are distinct nodes): anchors pair with anchors only.
  bool compete(const RootsCandidate& a, const RootsCandidate& b) const {
    Unifier unifier(registry_, a.bindings, b.bindings);
    if (!unifier.unify(*a.roots.roots.front().front(), *b.roots.roots.front().front())) return false;
    for (size_t i = 0; i < a.roots.roots.size(); ++i) {
      if (!a.replaced[i]) continue;
      for (size_t j = 0; j < b.roots.roots.size(); ++j) {
        if (!b.replaced[j] || (i == 0) != (j == 0)) continue;
        for (const PatternPtr& x : a.roots.roots[i]) {
          for (const PatternPtr& y : b.roots.roots[j]) {
            if (unifier.unify(*x, *y)) return true;
          }
        }
      }
    }
    return false;
  }

  // The multi-root counterpart of warn_ambiguous(): two multi-root rules of equal priority, not both guarded,
  // that compete for a node at one anchor while neither covers the other.
  void warn_ambiguous_multi_root() {
    std::map<std::pair<size_t, size_t>, std::pair<size_t, size_t>> ambiguous;  // as in warn_ambiguous()
    for (size_t i = 0; i < multi_roots_.size(); ++i) {
      for (size_t j = i + 1; j < multi_roots_.size(); ++j) {
        const RootsCandidate& a = multi_roots_[i];
        const RootsCandidate& b = multi_roots_[j];
        if (a.rule == b.rule || a.rule->options.priority != b.rule->options.priority) continue;
        if (guarded(*a.rule) && guarded(*b.rule)) continue;
        if (has_dominator(a) || has_dominator(b)) continue;
        auto rules = std::minmax(a.rule_index, b.rule_index);
        std::pair<size_t, size_t> pair_key{rules.second, rules.first};
        if (ambiguous.count(pair_key) != 0) continue;
        if (compete(a, b) && !covers(a, b) && !covers(b, a)) ambiguous.emplace(pair_key, std::pair{i, j});
      }
    }
    for (const auto& [rules, positions] : ambiguous) {
      const RootsCandidate& first = multi_roots_[positions.first];
      const RootsCandidate& second = multi_roots_[positions.second];
      const Rule& later = (*rules_)[rules.first];
      const Rule& earlier = (*rules_)[rules.second];
      warn_competing(earlier, later,
                     "multi-root rules '" + earlier.name + "' and '" + later.name +
                         "' have the same priority and can match at the same anchor, replacing the same node",
                     first.rule->name, tried_first_because(first, second));
    }
  }

  DiagnosticEngine& diags_;
  const OpRegistry& registry_;
  const std::vector<Rule>* rules_ = nullptr;
  std::vector<RootsCandidate> multi_roots_;  // every alternative of the multi-root rules, in rule order
  std::vector<Candidate> order_;                          // every alternative, in rule order
  std::map<std::string, std::vector<size_t>> by_root_;  // positions in order_, by root_key()
};

}  // namespace

bool pattern_covers(const Pattern& general, const Pattern& special, const OpRegistry& registry) {
  Bindings bindings = bindings_of(special);
  Covering covering(registry, bindings);
  return covering.covers(general, special) && covering.repetitions_hold();
}

bool patterns_unify(const Pattern& a, const Pattern& b, const OpRegistry& registry) {
  Bindings a_bindings = bindings_of(a);
  Bindings b_bindings = bindings_of(b);
  return Unifier(registry, a_bindings, b_bindings).unify(a, b);
}

void check_rule_overlaps(const AstFile& file, DiagnosticEngine& diags, const OpRegistry& registry) {
  for (const Pass& pass : file.passes) PassOverlaps(pass, diags, registry).run();
}

}  // namespace dpl::compiler
