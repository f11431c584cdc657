// Shuffles of channels and pixels (shuffle.cpp), portable.
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

// pixel_shuffle(self, upscale_factor).
void lower_pixel_shuffle(Context& cx, const Node& n, NodeState&);
// pixel_unshuffle and channel_shuffle: strided reads.
void lower_unshuffle(Context& cx, const Node& n, NodeState&);

}  // namespace tracegraph::xnnpack
