// int64 tensors, exact (integer.cpp).
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

// A node with an int64 input (Slot::int64): the layout ops over its pairs,
// the ops of computes_on_int64() exactly, any other on a float32 copy of it
// (refused at the run past 2^24 where that would not be torch's result).
// `rest`: the lowering of a node without int64 inputs.
void lower_with_int64(Context& cx, const Node& n, NodeState& st, Lowering lower, const std::function<void(const Node&)>& rest);

}  // namespace tracegraph::xnnpack
