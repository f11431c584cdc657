// Factories (factory.cpp).
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

// arange, full, scalar_tensor, zeros, ones: constants made while planning;
// empty, empty_strided, new_empty as zeros (torch leaves their values unset).
void lower_factory(Context& cx, const Node& n, NodeState&);
// A factory's 'size' (zeros, full, rand, ...): a shape of no negative dim.
Shape size_arg(const Context& cx, const Node& n);

}  // namespace tracegraph::xnnpack
