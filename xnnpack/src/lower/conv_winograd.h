// Winograd convolutions (conv_winograd.cpp).
#pragma once

#include "lower/conv.h"

namespace tracegraph::xnnpack {

// A 3x3 (3x3x3) stride-1 convolution without groups as Winograd F(2,3) or
// F(4,3) where Options::conv_algorithm asks for it or it measures faster than
// `direct`; false to run it directly.
bool lower_winograd(Context& cx, const Node& n, NodeState& st, int x, const Tensor& w, const Tensor& b, const std::vector<i64>& padding,
                    const Fused& fused, const DirectRun& direct);

}  // namespace tracegraph::xnnpack
