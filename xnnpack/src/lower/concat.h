// Joins (concat.cpp): cat and stack.
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

// cat(tensors, dim).
void lower_cat(Context& cx, const Node& n, NodeState&);
// stack(tensors, dim): each with a dim of 1 inserted at dim, concatenated.
void lower_stack(Context& cx, const Node& n, NodeState&);
// The tensors `in` concatenated along dim (in the layout of any that is channels-last).
int concat(Context& cx, const Node& n, std::vector<int> in, i64 dim_arg);

}  // namespace tracegraph::xnnpack
