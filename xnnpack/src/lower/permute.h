// Permutations (permute.cpp): of dims (permute, transpose, t, movedim), and
// of elements (flip, roll).
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

// permute(self, dims), transpose(self, dim0, dim1), t(self): in the standard layout.
void lower_permute(Context& cx, const Node& n, NodeState&);
// A torch-layout tensor with its dims in the order `perm` (XNNPACK's transpose; none when in order).
int permuted(Context& cx, int x, const std::vector<std::size_t>& perm);
// flip(self, dims).
void lower_flip(Context& cx, const Node& n, NodeState&);
// torch.roll: each (shift, dim) pair, or with no dims over the flattened tensor.
void lower_roll(Context& cx, const Node& n, NodeState&);

}  // namespace tracegraph::xnnpack
