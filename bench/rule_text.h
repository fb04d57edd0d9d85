// Generated .dpl rule sets for the benchmarks: many rules on one root op, and a large mixed set for dplc.
#pragma once

#include <cstddef>
#include <string>

namespace dpl::bench {

// `pass bench_rules_<count>`: `count` rules rooted at `multiply` that all look for the attention scale of
// build_transformer(), `multiply(matmul(_, permute_dims(_, axes=[0, 1, 3, 2])), const(v))`. The first count - 1
// want other constants, so they fail at the last check; the last one (lowest priority) wants 0.125 and fires.
std::string same_root_rules(size_t count);

// `pass bench_mixed_<count>`: `count` rules over six binary and eight unary elementwise ops in four shapes (a
// unary operand, a nested binary op, a unary root, a repeated constant). Every rule has its own constant, so no
// two rules can match the same node.
std::string mixed_rules(size_t count);

}  // namespace dpl::bench
