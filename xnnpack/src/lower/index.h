// Reads by index (index.cpp): index.Tensor (boolean masks too), nonzero,
// masked_select, index_select, gather and embedding, where.
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

// Whether value `v` is a boolean mask: its dtype, or where the reader left it
// untyped, the op that made it (a comparison, a cast to bool, a view of a mask).
bool is_mask(const Graph& g, ValueId v, int depth = 0);
// The number of nonzero elements of slot `x`, which only the run knows: a
// step reads it and checks it against the count planned for
// (Context::read_by_run()). nullopt where no run has read it yet: the plan stops.
std::optional<i64> nonzero_count(Context& cx, int x);
// masked_select(self, mask): the elements under the mask (both broadcast), [count].
void lower_masked_select(Context& cx, const Node& n, NodeState&);
// index.Tensor (Tensor?[] indices, Nones kept whole; a boolean mask as its
// nonzero() coordinates, counted by the run), index_select.
void lower_index(Context& cx, const Node& n, NodeState&);
// nonzero / argwhere: [count, rank] coordinates, the count read by the run
// (Context::read_by_run()); nonzero_numpy (as_tuple): one [count] per dim;
// nonzero_static: [size, rank], the rest fill_value.
void lower_nonzero(Context& cx, const Node& n, NodeState&);
void lower_index_select(Context& cx, const Node& n, NodeState&);
// gather(self, dim, index); embedding(weight, indices) as a gather of rows.
void lower_gather(Context& cx, const Node& n, NodeState&);
// where(condition, self, other), broadcast.
void lower_where(Context& cx, const Node& n, NodeState&);

}  // namespace tracegraph::xnnpack
