// Random rule sets and random graphs for the differential test of compiled against interpreted passes.
#pragma once

#include <cstdint>
#include <string>

#include "dpl/ir/graph.h"

namespace dpl::testing {

// A small deterministic generator (splitmix64): the same seed gives the same rules and graphs everywhere.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t next();
  size_t below(size_t n) { return static_cast<size_t>(next() % n); }
  bool chance(double p) { return static_cast<double>(next() % 1000000) < p * 1000000.0; }

 private:
  uint64_t state_;
};

// A .dpl file with one pass named `pass_name` of `num_rules` random rules over add, multiply, subtract, maximum,
// nn.relu, exp, negative, permute_dims and sum: repeated variables, `_`, constants, commutative ops, op
// alternatives and op variables, optional ops, attribute literals and captures, attributes copied (`**_s`), type
// patterns with dimension variables, bound sub-patterns, guards and lets, variadic operands (`...`, `_r...` spread
// on the right) and dominator patterns at the root. Every rule passes dplc's checks (candidates that do not are
// drawn again).
std::string random_rule_file(uint64_t seed, const std::string& pass_name, int num_rules);

// A .dpl file with one pass of `num_rules` random multi-root rules: two or three single roots sharing a value
// (QKV-like, rewritten through one combined matmul and a split, or root by root), a group of every matching user
// (rewritten through a split), or a context root that must exist but is not rewritten. Roots are calls of matmul,
// add, multiply, maximum or subtract on the shared value (either operand position), maybe below nn.relu or a bias
// add; anchors at any value, at a typed value or at a parameter; guards on roots, groups and the whole rule;
// priorities and `once`. Every rule passes dplc's checks.
std::string random_multi_root_file(uint64_t seed, const std::string& pass_name, int num_rules);

// Fills `function` (empty) with a random graph in which a few values have many users: float32 values of shapes
// (2, 4), (4, 4), (4, 3), (4, 1), weights as parameters and constants, combined by matmul, add, multiply,
// maximum, subtract and nn.relu.
void build_random_fanout_graph(Function& function, uint64_t seed);

// Fills `function` (empty) with a random graph over the same ops on float32 tensors of shapes (4, 4), (1, 4)
// and (4, 1) and a few scalar constants; the same seed gives the same graph.
void build_random_graph(Function& function, uint64_t seed);

}  // namespace dpl::testing
