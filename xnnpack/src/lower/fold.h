// Sliding windows of an image as columns and back (fold.cpp).
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

// im2col / col2im (F.unfold / F.fold), batched or not.
void lower_fold(Context& cx, const Node& n, NodeState&);

}  // namespace tracegraph::xnnpack
