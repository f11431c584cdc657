// Training graphs' backward ops (backward.cpp).
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

// The core opset's backward ops (training graphs): max_pool2d_with_indices_
// backward, avg_pool2d_backward, _adaptive_avg_pool2d_backward,
// embedding_dense_backward, native_layer_norm_backward,
// native_group_norm_backward, convolution_backward.
void lower_backward(Context& cx, const Node& n, NodeState&);

}  // namespace tracegraph::xnnpack
