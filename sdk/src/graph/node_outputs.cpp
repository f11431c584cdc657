#include "tracegraph/node_outputs.h"

#include <unordered_map>

namespace tracegraph {

std::string node_output_key(const std::string& node_name, std::uint32_t k) {
  return k == 0 ? node_name : node_name + ":" + std::to_string(k);
}

std::vector<NodeOutput> expose_node_outputs(Graph& graph) {
  std::unordered_map<std::uint32_t, std::size_t> output_at;  // value index -> its place among the graph's outputs
  for (std::size_t i = 0; i < graph.outputs().size(); ++i) output_at.emplace(graph.outputs()[i].index, i);
  std::vector<NodeOutput> out;
  for (NodeId id : graph.nodes()) {
    const Node& n = graph.node(id);
    for (std::uint32_t k = 0; k < n.outputs.size(); ++k) {
      const ValueId v = n.outputs[k];
      auto at = output_at.find(v.index);
      if (at == output_at.end()) {
        if (graph.value(v).users.empty()) continue;
        at = output_at.emplace(v.index, graph.outputs().size()).first;
        graph.add_output(v);
      }
      out.push_back({node_output_key(n.name, k), id, k, v, at->second});
    }
  }
  return out;
}

}  // namespace tracegraph
