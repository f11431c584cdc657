// The numbers planning knows (scalar.cpp): sizes, lists of integers,
// TorchScript's scalar casts, and item().
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

// A list of integers known before the run (a shape for view, pad, resize).
void lower_list(Context& cx, const Node& n, NodeState&);
// size, dim and the other numbers of a tensor's layout as torch sees it
// (sym_numel, sym_stride, ...): known while planning.
void lower_size(Context& cx, const Node& n, NodeState&);
// __getitem__ of a list of integers.
void lower_getitem(Context& cx, const Node& n, NodeState&);
// NumToTensor, Int, Float, ScalarImplicit of a number known while planning.
void lower_scalar_identity(Context& cx, const Node& n, NodeState&);
// item / _local_scalar_dense: the one element as a number the rest of the
// plan knows, read by the run (Context::read_by_run()).
void lower_item(Context& cx, const Node& n, NodeState&);

}  // namespace tracegraph::xnnpack
