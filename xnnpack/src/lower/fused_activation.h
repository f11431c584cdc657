// XNNPACK's unary operators as steps, and the fused activations and clamps
// that run after an op (fused_activation.cpp).
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

// An elementwise XNNPACK op over a whole tensor, in place when in == out.
void unary_step(Context& cx, const Node& n, xnn_operator_t op, int in, int out);
xnn_operator_t make_unary(Context& cx, const Node& n, NodeState& st, std::size_t index, xnn_unary_operator type,
                          const xnn_unary_params* params);
void post_activation(Context& cx, const Node& n, NodeState& st, std::size_t index, const Fused& f, int out);
// A clamp after an op that has no output bounds of its own.
void post_clamp(Context& cx, const Node& n, NodeState& st, std::size_t index, const Fused& f, int out);

}  // namespace tracegraph::xnnpack
