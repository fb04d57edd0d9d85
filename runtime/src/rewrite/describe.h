// Node descriptions shared by the rewrite driver's error messages ("binding 'lv3' (R.add)").
#pragma once

#include <string>

#include "dpl/ir/graph.h"

namespace dpl::detail {

std::string describe_node(const Node* node);

}  // namespace dpl::detail
