// numpy broadcasting of shapes and of slots (broadcast.cpp).
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

// numpy broadcasting of two shapes.
Shape broadcast_shape(const Context& cx, const Node& n, const Shape& a, const Shape& b);
// Slot `s` in torch layout with shape `to` (broadcast by a step of ours when it differs).
int broadcast_to(Context& cx, int s, const Shape& to);

}  // namespace tracegraph::xnnpack
