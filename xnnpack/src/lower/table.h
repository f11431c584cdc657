// The lowering table (table.cpp): which lowering runs each op, and which
// ops of a graph none runs.
#pragma once

#include "lower/lowering.h"

namespace tracegraph::xnnpack {

// The lowering that runs this node's op, or nullptr.
Lowering lowering_for(const Node& n);
// Every node without a lowering, judged by its op alone.
std::vector<UnsupportedNode> unsupported_nodes(const Graph& graph);
// The base names of the ops with a lowering, sorted (docs/ops.md).
std::vector<std::string> lowered_op_names();
// The engines an op's lowering may run it on (kNone: it may compute nothing
// at the run), or nullopt where it has no lowering.
std::optional<std::vector<Engine>> lowered_op_engines(std::string_view base);

}  // namespace tracegraph::xnnpack
