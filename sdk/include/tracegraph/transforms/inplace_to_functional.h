// In-place ops to their functional form.
//
// An in-place op ("aten::sigmoid_", "aten::relu_", "aten::add_") changes the
// value it is given, and a graph read from TorchScript goes on reading that
// value by its old name afterwards (`x.sigmoid_(); return x` returns %x).
// This rewrite makes each later read (graph outputs included) read the op's
// result instead, and renames the op to its functional form:
//
//   %y = aten::relu_(%x)        %y = aten::relu(%x)
//   %z = aten::conv(%x, ...)  ->  %z = aten::conv(%y, ...)
//   return (%x)                 return (%y)
//
// When the value written is a view of another value (a slice, say) and that
// other value, or another view of it, is read after the write, the write
// would show through it; no functional rewrite is safe then and the rewrite
// fails with kUnsupported naming the node, leaving the graph unchanged.
#pragma once

#include <cstddef>

#include "tracegraph/graph.h"

namespace tracegraph {

// Returns how many in-place ops it rewrote.
std::size_t inplace_to_functional(Graph& graph);

}  // namespace tracegraph
