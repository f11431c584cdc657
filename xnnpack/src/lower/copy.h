// Identities and copies (copy.cpp).
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

// dropout in eval, detach, contiguous, alias, clone: the input itself; a
// clone that a later op updates in place, a copy.
void lower_identity(Context& cx, const Node& n, NodeState&);
// native_dropout in eval (train false): the input and a mask of ones.
void lower_native_dropout(Context& cx, const Node& n, NodeState&);
// copy(self, src): src broadcast to self's shape.
void lower_copy(Context& cx, const Node& n, NodeState&);

}  // namespace tracegraph::xnnpack
