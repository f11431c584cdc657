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
// When the value written is a chain of slices and selects of another value
// (`x[:, :1].sigmoid_()`, `mask[a:b, c:d] = k`) and that value is read after
// the write, the write shows through it: the rewrite scatters the written view
// back into it (aten::slice_scatter, aten::select_scatter, one per view of the
// chain) and later reads read the scattered value:
//
//   %v = aten::slice(%h, 1, 0, 1)       %v = aten::slice(%h, 1, 0, 1)
//   %w = aten::sigmoid_(%v)        ->   %w = aten::sigmoid(%v)
//                                       %h2 = aten::slice_scatter(%h, %w, 1, 0, 1)
//   return (%h)                         return (%h2)
//
// Through any other view (a reshape, a transpose), or when another view of it
// is read after the write, no functional rewrite is safe: the rewrite fails
// with kUnsupported naming the node, leaving the graph unchanged.
#pragma once

#include <cstddef>

#include "tracegraph/graph.h"

namespace tracegraph {

// Returns how many in-place ops it rewrote.
std::size_t inplace_to_functional(Graph& graph);

}  // namespace tracegraph
