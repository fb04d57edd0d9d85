// How a matcher walks an alternative-free pattern: which operands it matches first and where a commutative call
// tries both operand orders. The C++ emitter and the rule interpreter both follow these decisions, so that the
// interpreter enumerates candidate matches in the same order as the emitted nested loops (and so fires the same
// rule on the same match).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "dpl/compiler/ast.h"

namespace dpl::compiler {

// How often each name (value, op, attribute or dimension variable) is mentioned. (The emitter declares no C++
// variable for a name mentioned once in an alternative and its right-hand side: it is never read.)
using Mentions = std::map<std::string, int>;
void count_mentions(const Pattern& pattern, Mentions& mentions);
void count_mentions(const Expr& expr, Mentions& mentions);

// `pattern_mentions` counts the names of the whole pattern the call belongs to (of every root, and the roots'
// guards, in a multi-root rule).
class MatchOrder {
 public:
  MatchOrder(const OpRegistry& registry, const Mentions& pattern_mentions)
      : registry_(registry), pattern_mentions_(pattern_mentions) {}

  // A commutative call is tried in both operand orders, unless swapping cannot change whether it matches:
  // identical operand patterns (`add(x, x)`) or two unconstrained ones (`add(a, b)`).
  bool needs_both_orders(const CallPattern& call) const;
  // Operands whose matching opens no loop go first, so that their checks run once, not once per order; among
  // those, smaller patterns first: a constant or a repeated name is checked before a deep sub-pattern is walked,
  // which is where most candidates fail. (Which operand is matched first does not change what matches.)
  std::vector<size_t> operand_order(const CallPattern& call) const;
  // Whether matching `pattern` opens an operand-order loop somewhere.
  bool has_choice(const Pattern& pattern) const;

 private:
  bool unconstrained(const Pattern& pattern) const;

  const OpRegistry& registry_;
  const Mentions& pattern_mentions_;
};

// How many checks matching `pattern` takes, roughly: one per node of the pattern.
size_t pattern_size(const Pattern& pattern);

// How much an alternative-free pattern constrains what it matches, for the rule order (docs/semantics.md): one
// point per op call (or composite call), attribute literal, constant (one more each for its value and its dtype),
// var() (one more with a name), tuple, tuple item index, type dtype, type rank and fixed dimension, and one per
// mention of a name after its first. Wildcards, first mentions and attribute captures count nothing; guards are
// not counted.
size_t pattern_specificity(const Pattern& pattern);

// A multi-root rule's alternative (expand_root_alternatives): the mentions of its roots' names, patterns and
// guards (a group's alternatives count as their most-mentioning one, name by name, as a member matches one), and
// its specificity: the sum over the roots, a group counting its least specific alternative.
Mentions root_mentions(const Rule& rule, const RootsAlternative& alternative);
size_t root_specificity(const RootsAlternative& alternative);

// The right-hand side's computed values (attribute values other than literals, and `const(expr)`), in order: a
// matcher reads the properties they need (and declines the rule when one is unknown) before it builds any node.
void computed_attrs(const Expr& expr, std::vector<const Expr*>& out);
// The op variables the right-hand side calls (`op(a, b)`), each once, in order: a group's op list stands for the
// members' common op, which a matcher checks before it builds any node.
void called_op_variables(const Expr& expr, std::vector<std::string>& out);

// The call at the top of a rule's pattern (below any `name:` binding, a dominator pattern's child): its op is what
// the rule is dispatched on. Not for a pattern whose root is a tuple item (root_is_item).
const CallPattern& root_call(const Pattern& pattern);

// What gives a partition's alternative-free pattern the composite function's inputs (Rewriter::partition's
// `inputs`), in pattern order as written: every wildcard, constant, type and var() leaf, the first occurrence of
// each name, and each rest (`...`, `xs...`: every operand or field from `first` on of the call or tuple matched by
// the pattern that ends with it). A name bound to an inner call of the match (`c` in `c: nn.conv2d(...)`) is part
// of the match, not an input.
struct PartitionInput {
  const Pattern* leaf = nullptr;      // a leaf's matched value, or
  const RestPattern* rest = nullptr;  // the operands a rest matched
  size_t first = 0;                   // the rest's first operand (field) position
};
std::vector<PartitionInput> partition_inputs(const Pattern& pattern);
// Whether an alternative-free rule pattern has a tuple item at the top (below any binding): the rule is tried at
// tuple items.
bool root_is_item(const Pattern& pattern);

}  // namespace dpl::compiler
