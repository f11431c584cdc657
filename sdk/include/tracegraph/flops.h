// The arithmetic of a node, for the profiles' GFLOP/s: floating-point
// operations (a multiply-add counts two) of convolutions (transposed too),
// linear layers and matrix products, from the shapes of the node's inputs and
// outputs as they are at run time.
#pragma once

#include <optional>
#include <span>

#include "tracegraph/graph.h"

namespace tracegraph {

// nullopt for the ops not counted (pointwise, pooling, layout) or when a shape
// it needs is missing.
std::optional<double> node_flops(const Node& node, std::span<const Shape> inputs, std::span<const Shape> outputs);
// The same, at the shapes the graph's values have: nullopt also when one of
// them is not known or not static.
std::optional<double> node_flops(const Graph& graph, NodeId node);

}  // namespace tracegraph
