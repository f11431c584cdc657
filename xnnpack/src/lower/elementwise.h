// Elementwise ops (elementwise.cpp): unary activations, binary arithmetic
// with broadcasting, numbers known before the run, comparisons, masks and fills.
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

void lower_unary(Context& cx, const Node& n, NodeState& st);
// add/sub/mul/div: scalars are computed now; tensors with numpy
// broadcasting by XNNPACK, in the layout of the larger operand.
void lower_binary(Context& cx, const Node& n, NodeState& st);
// Elementwise ops, in whatever layout their input has (in place for x_ on a non-constant).
void lower_pointwise(Context& cx, const Node& n, NodeState&);
// eq/ne/lt/le/gt/ge of a tensor and a number or a tensor (broadcast): 1 or 0.
void lower_compare(Context& cx, const Node& n, NodeState&);
// maximum, minimum, logical_and/or/xor, atan2 of two tensors (broadcast), portable.
void lower_binary_portable(Context& cx, const Node& n, NodeState&);
// lerp(self, end, weight), addcmul/addcdiv(self, tensor1, tensor2, value): three operands broadcast.
void lower_ternary(Context& cx, const Node& n, NodeState&);
// glu(self, dim): the first half times the sigmoid of the second.
void lower_glu(Context& cx, const Node& n, NodeState&);
// bitwise_not/and/or/xor (and TorchScript's __and__, __or__, __xor__,
// __invert__) of masks and integers held as floats: the logical ops on a mask,
// the integer ones otherwise; a number operand too.
void lower_bitwise(Context& cx, const Node& n, NodeState&);
// op(a, b) of two tensors (or values held as floats), broadcast, on a portable kernel: its output slot.
int portable_binary(Context& cx, const Node& n, portable::Binary op, ValueId a, ValueId b);
// The same of two slots planning already holds.
int portable_binary(Context& cx, const Node& n, portable::Binary op, int x, int y);
// masked_fill(self, mask, value): value where the mask (broadcast to self) is set.
void lower_masked_fill(Context& cx, const Node& n, NodeState&);
// new_zeros/new_ones/new_full (of a size), zeros_like/ones_like/full_like
// and fill (of self's shape): one value everywhere, written on each run.
void lower_full(Context& cx, const Node& n, NodeState&);

}  // namespace tracegraph::xnnpack
