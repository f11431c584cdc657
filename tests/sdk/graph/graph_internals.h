// Reaches into a Graph to break its invariants on purpose, so that tests can
// check that verify() (and whoever runs it) sees what the editing API prevents.
#pragma once

#include "tracegraph/graph.h"

namespace tracegraph {

struct GraphInternals {
  static Node& node(Graph& g, NodeId id) { return g.nodes_[id.index]; }
  static Value& value(Graph& g, ValueId id) { return g.values_[id.index]; }
  static std::vector<NodeId>& order(Graph& g) { return g.order_; }
  static std::vector<ValueId>& inputs(Graph& g) { return g.inputs_; }
  static void kill(Graph& g, ValueId id) { g.value_live_[id.index] = false; }
};

}  // namespace tracegraph
