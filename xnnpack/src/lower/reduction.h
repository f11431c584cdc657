// Reductions (reduction.cpp): mean and sum, the portable reductions (norms,
// amax, amin, prod, var, std, logsumexp, argmax, argmin), max/min, aminmax,
// any and all.
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

void lower_mean(Context& cx, const Node& n, NodeState&);
// A mean (or sum) over `dims`, adjacent in storage.
void reduce_step(Context& cx, const Node& n, int x0, std::vector<i64> dims, bool keepdim, bool mean = true);
// `shape` less the dims marked in `reduced` (1s in their place with keepdim).
Shape reduced_shape(const Shape& shape, const std::vector<bool>& reduced, bool keepdim);
// linalg_vector_norm, amax, amin over any dims (portable::reduce).
void lower_reduce(Context& cx, const Node& n, NodeState&);
// aminmax (of all elements, or along a dim): the min and the max.
void lower_aminmax(Context& cx, const Node& n, NodeState&);
// max/min: of all elements (a 0-d tensor), along a dim (values and indices),
// or of two tensors (maximum/minimum).
void lower_max_min(Context& cx, const Node& n, NodeState&);
// any and all, over dims or everything.
void lower_any_all(Context& cx, const Node& n, NodeState&);

}  // namespace tracegraph::xnnpack
