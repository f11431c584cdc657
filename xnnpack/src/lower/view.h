// Views (view.cpp): the same values read with another shape, or a strided
// read of them.
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

// flatten, view, reshape: plain storage read with another shape.
void lower_view(Context& cx, const Node& n, NodeState&);
// unsqueeze, squeeze: the same bytes in torch's layout with another shape.
void lower_reshape_dims(Context& cx, const Node& n, NodeState&);
// expand(self, size), expand_as(self, other): broadcast (a copy).
void lower_expand(Context& cx, const Node& n, NodeState&);
// as_strided over the input's contiguous storage (portable::as_strided).
void lower_as_strided(Context& cx, const Node& n, NodeState&);
// Tensor.unfold(dimension, size, step): the windows of `size` along a dim,
// `step` apart, as a new last dim (torch.stft's frames in core ATen).
void lower_unfold(Context& cx, const Node& n, NodeState&);
// resize_(self, size) / resize_as_(self, the_template): the input's contiguous
// storage read as `size`; elements past the input's own (memory torch leaves
// uninitialized) are zeros here.
void lower_resize_storage(Context& cx, const Node& n, NodeState&);
// Runs `lower` on a node whose input `arg` has no batch dim (torch's unbatched
// convolutions and poolings) as on a batch of one: the input read as [1, ...],
// each tensor output read back without its leading 1. The same bytes: no copy.
void lower_as_batch_of_one(Context& cx, const Node& n, NodeState& st, Lowering lower, std::string_view arg, std::size_t position);

}  // namespace tracegraph::xnnpack
