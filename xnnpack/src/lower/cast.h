// Casts (cast.cpp).
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

// _to_copy, to, type_as: a cast of the values held as floats.
void lower_cast(Context& cx, const Node& n, NodeState&);

}  // namespace tracegraph::xnnpack
