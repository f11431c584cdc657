// Pooling (pool.cpp): max and average pooling (ceil mode, padding),
// adaptive pooling, 1D pooling.
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

void lower_max_pool(Context& cx, const Node& n, NodeState& st);
// Max pooling over 1 to 3 spatial dims on the portable kernel, with the
// maxima's positions where the graph reads them (*_with_indices), with or
// without a batch dim.
void lower_max_pool_portable(Context& cx, const Node& n, NodeState&);
void lower_avg_pool(Context& cx, const Node& n, NodeState& st);
// avg_pool3d (XNNPACK has no 3D average pooling), portable.
void lower_avg_pool_portable(Context& cx, const Node& n, NodeState&);
// Adaptive pooling: the identity, a global mean, a plain average pooling
// when the output divides the input (XNNPACK), else portable kernels.
void lower_adaptive_pool(Context& cx, const Node& n, NodeState& st);
// 1D pooling over the last dim of [N, C, L] (or [C, L]).
void lower_pool1d(Context& cx, const Node& n, NodeState&);

}  // namespace tracegraph::xnnpack
