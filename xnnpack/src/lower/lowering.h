// What every lowering needs: the planning context (plan/context.h) and the
// lowering's signature. A lowering turns a node into steps on the context;
// each op family's lowerings are in a file of their own (lower/<family>.cpp,
// declared in lower/<family>.h), and table.cpp finds the one for a node's op.
// Private to xnnpack/src.
#pragma once

#include "plan/context.h"

namespace tracegraph::xnnpack {

// Lowers one node: defines its outputs' slots and adds its steps.
using Lowering = void (*)(Context& cx, const Node& n, NodeState& st);

}  // namespace tracegraph::xnnpack
