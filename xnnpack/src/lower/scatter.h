// Writes by index (scatter.cpp).
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

// scatter (src or value, with reduce), scatter_add, scatter_reduce (sum, prod,
// mean, amax, amin; include_self).
void lower_scatter(Context& cx, const Node& n, NodeState&);
// index_add (alpha), index_copy, index_fill along a dim, by a 1-D index.
void lower_index_along(Context& cx, const Node& n, NodeState&);
// index_put(self, indices, values, accumulate): at advanced indices (Nones
// kept whole), or under a boolean mask over the leading dims.
void lower_index_put(Context& cx, const Node& n, NodeState&);
// masked_scatter(self, mask, source): source's elements, in order, where the mask is set.
void lower_masked_scatter(Context& cx, const Node& n, NodeState&);
// embedding_bag (and _embedding_bag): bags of rows summed, averaged or maxed; output 0 only.
void lower_embedding_bag(Context& cx, const Node& n, NodeState&);

}  // namespace tracegraph::xnnpack
