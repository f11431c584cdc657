// Resizes and resampling (resize.cpp).
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

// grid_sampler_2d (grid_sampler): an input read at a grid of points, portable.
void lower_grid_sample(Context& cx, const Node& n, NodeState&);
// upsample_nearest2d and upsample_nearest3d on the layout kernels.
void lower_resize(Context& cx, const Node& n, NodeState&);
// Linear, bilinear, trilinear, bicubic, 1D nearest and nearest-exact resizes, torch layout.
void lower_resize_portable(Context& cx, const Node& n, NodeState&);

}  // namespace tracegraph::xnnpack
