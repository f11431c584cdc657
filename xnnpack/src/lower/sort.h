// Sorting (sort.cpp).
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

// sort and topk along a dim: values and indices (portable::sort).
void lower_sort(Context& cx, const Node& n, NodeState&);

}  // namespace tracegraph::xnnpack
