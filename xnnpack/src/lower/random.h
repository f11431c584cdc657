// Random values (random.cpp).
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

// rand, randn, randint (and their _like forms) and randperm: new values at
// every run from a generator of ours (not torch's: the same distributions,
// other draws), its stream from the node's name and the run's number.
void lower_random(Context& cx, const Node& n, NodeState&);

}  // namespace tracegraph::xnnpack
