// Generated .dpl rule sets for the benchmarks: many rules on one root op, and a large mixed set for dplc.
#pragma once

#include <cstddef>
#include <string>

namespace dpl::bench {

// `pass bench_rules_<count>`: `count` rules rooted at `multiply` that all look for the attention scale of
// build_transformer(), `multiply(matmul(_, permute_dims(_, axes=[0, 1, 3, 2])), const(v))`. The first count - 1
// want other constants, so they fail at the last check; the last one (lowest priority) wants 0.125 and fires.
std::string same_root_rules(size_t count);

// `pass bench_diverse_<count>`: `count` rules rooted at `add` that differ in their operands' ops, which the
// transformer graph never has (`add(exp(x), sigmoid(y))`, one pair of 24 ops each): the first count - 1 fail at
// the operands' heads. The last one, `add(m: multiply(_, const(1.0)), const(0.0)) => m`, fires once per layer.
// Unlike same_root_rules(), no check but the root's is shared by all: the decision tree must switch on the
// operands' ops to stay flat.
std::string diverse_rules(size_t count);

// `pass bench_mixed_<count>`: `count` rules over six binary and eight unary elementwise ops in four shapes (a
// unary operand, a nested binary op, a unary root, a repeated constant). Every rule has its own constant, so no
// two rules can match the same node.
std::string mixed_rules(size_t count);

}  // namespace dpl::bench
