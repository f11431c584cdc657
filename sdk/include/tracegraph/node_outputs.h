// Every node's value as a graph output, so that one run gives each node's
// result: for comparing two runs node by node (a backend against LibTorch, a
// model against a changed copy), the first node where they part. The CLI's
// `run --dump-nodes` writes them, the JS API's keepNodeOutputs() returns them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tracegraph/graph.h"

namespace tracegraph {

// One node's output as a run gives it back.
struct NodeOutput {
  std::string key;           // the node's name for its first output, "NAME:K" for output K >= 1
  NodeId node;
  std::uint32_t output = 0;  // which output of the node
  ValueId value;
  std::size_t graph_output = 0;  // its index among the graph's outputs
};

// The key a dump holds node output `k` of the node named `node_name` under.
std::string node_output_key(const std::string& node_name, std::uint32_t k);

// Makes every node output that the graph reads (a node's input or a graph
// output) a graph output, after the graph's own outputs, and returns them in
// node order with their keys. A value nothing reads is left out: a backend
// need not compute it (native_layer_norm's mean and rstd), so asking for it
// could make a run fail that otherwise works. A value that already is a graph
// output is not added again. The graph's out spec no longer fits: make the
// TracedGraph again with a flat one.
std::vector<NodeOutput> expose_node_outputs(Graph& graph);

}  // namespace tracegraph
