// Slices (slice.cpp): slice, narrow, select, split/chunk and unbind, and
// slice_scatter and select_scatter.
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

// slice(self, dim, start, end, step): slice_of().
void lower_slice(Context& cx, const Node& n, NodeState&);
// narrow(self, dim, start, length).
void lower_narrow(Context& cx, const Node& n, NodeState&);
// chunk(x, chunks, dim), split(x, split_size, dim) with one size or a list,
// split_with_sizes: one slice per output.
void lower_chunk(Context& cx, const Node& n, NodeState&);
// select(self, dim, index): select_of().
void lower_select(Context& cx, const Node& n, NodeState&);
// unbind(self, dim): one select per index.
void lower_unbind(Context& cx, const Node& n, NodeState&);
// slice_scatter(self, src, dim, start, end, step): src written over a slice.
void lower_slice_scatter(Context& cx, const Node& n, NodeState&);
// select_scatter(self, src, dim, index): src written at one index of dim.
void lower_select_scatter(Context& cx, const Node& n, NodeState&);

}  // namespace tracegraph::xnnpack
