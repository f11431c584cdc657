// Normalizations and softmax (norm.cpp): batch norm as a scale and shift,
// group/instance/layer and RMS norm, softmax and log-softmax, PReLU.
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

// Batch norm with running statistics folded into a scale and shift; in
// training mode, the batch's own (lower_norm).
void lower_batch_norm(Context& cx, const Node& n, NodeState& st);
// group_norm, instance_norm (statistics of the input), layer_norm, batch
// norm in training mode.
void lower_norm(Context& cx, const Node& n, NodeState&);
// rms_norm(input, normalized_shape, weight, eps): eps by default float32's epsilon, as torch's.
void lower_rms_norm(Context& cx, const Node& n, NodeState&);
void lower_softmax(Context& cx, const Node& n, NodeState& st);
void lower_prelu(Context& cx, const Node& n, NodeState& st);

}  // namespace tracegraph::xnnpack
