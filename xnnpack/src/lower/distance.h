// Distances and similarities of rows (distance.cpp), portable.
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

// cdist (x1, x2 with broadcast batch dims) and pdist: p-norm distances of rows.
void lower_distance(Context& cx, const Node& n, NodeState&);
// pairwise_distance(x1, x2, p, eps, keepdim) over the last dim and
// cosine_similarity(x1, x2, dim, eps), the operands broadcast.
void lower_pairwise_distance(Context& cx, const Node& n, NodeState&);
void lower_cosine_similarity(Context& cx, const Node& n, NodeState&);

}  // namespace tracegraph::xnnpack
