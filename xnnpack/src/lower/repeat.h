// Tiling (repeat.cpp).
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

// repeat(self, repeats): tiled (portable::repeat).
void lower_repeat(Context& cx, const Node& n, NodeState&);
// repeat_interleave(self, repeats, dim): each slice along dim (of the
// flattened tensor without one) repeated in place; repeats a number, or a
// tensor of one per slice, constant or computed (the output's size then only
// the run knows: Context::read_by_run()). repeat_interleave(repeats): each
// index that many times.
void lower_repeat_interleave(Context& cx, const Node& n, NodeState&);

}  // namespace tracegraph::xnnpack
