// Node descriptions shared by the rewrite driver's error messages ("binding 'lv3' (R.add)").
#pragma once

#include <string>

#include "dpl/ir/graph.h"

namespace dpl::detail {

std::string describe_node(const Node* node);
// The same for an op call as it was before Rewriter::rebuild() made it a call of another op.
std::string describe_node(const Node* node, OpId op_before);

}  // namespace dpl::detail
