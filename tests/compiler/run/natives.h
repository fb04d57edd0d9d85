// The C++ predicate and rewriter that run/natives.dpl declares extern; dplc's generated code includes this header.
#pragma once

#include "dpl/ir/graph.h"
#include "dpl/ir/op_registry.h"
#include "dpl/rewrite/driver.h"

// True for a value whose type is a rank-2 tensor.
inline bool is_matrix(const dpl::Node* x) {
  return x->type() != nullptr && x->type()->is_tensor() && x->type()->rank() == 2;
}

// -(a - b) becomes b - a; declines (nullptr, "no match") when a and b are one value.
inline dpl::Node* flip_subtract(dpl::Rewriter& rewriter, dpl::Node* a, dpl::Node* b) {
  if (a == b) return nullptr;
  return rewriter.call(dpl::op::subtract, {b, a});
}
