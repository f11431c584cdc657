// Attention (attention.cpp).
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

// torch.nn.MultiheadAttention's fused eval path (torchvision's ViT), without a mask.
void lower_attention(Context& cx, const Node& n, NodeState& st);
// scaled_dot_product_attention (query, key, value with the same batch dims;
// an additive or boolean mask broadcast; causal; scale): XNNPACK's fused
// attention, or a portable kernel where the mask would be too large.
void lower_sdpa(Context& cx, const Node& n, NodeState& st);

}  // namespace tracegraph::xnnpack
