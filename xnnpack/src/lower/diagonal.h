// Diagonals and triangles over two dims (diagonal.cpp).
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

// diagonal(self, offset, dim1, dim2): the diagonal as the last dim (a strided read).
void lower_diagonal(Context& cx, const Node& n, NodeState&);
// tril, triu of the last two dims.
void lower_triangle(Context& cx, const Node& n, NodeState&);

}  // namespace tracegraph::xnnpack
