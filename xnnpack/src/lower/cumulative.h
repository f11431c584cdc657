// Cumulative ops along a dim (cumulative.cpp): cumsum, cumprod, cummax, cummin.
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

// cumsum and cumprod along a dim.
void lower_cumsum(Context& cx, const Node& n, NodeState&);
// cummax/cummin along a dim: the running extreme and its position.
void lower_cum_extreme(Context& cx, const Node& n, NodeState&);

}  // namespace tracegraph::xnnpack
