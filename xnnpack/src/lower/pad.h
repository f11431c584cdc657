// Padding (pad.cpp).
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

// pad / constant_pad_nd / reflection_padNd / replication_padNd.
void lower_pad(Context& cx, const Node& n, NodeState& st);

}  // namespace tracegraph::xnnpack
