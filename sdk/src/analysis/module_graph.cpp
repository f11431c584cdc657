#include "tracegraph/module_graph.h"

#include "support/json_util.h"
#include "tracegraph/op_table.h"

namespace tracegraph {

ModuleGraph module_graph(const Graph& graph) {
  ModuleGraph view;
  for (NodeId id : graph.nodes()) {
    const Node& n = graph.node(id);
    ModuleGraphNode out;
    out.op = n.op;
    for (ValueId v : n.inputs) out.inputs.push_back(graph.value(v).name);
    for (ValueId v : n.outputs) out.outputs.push_back(graph.value(v).name);
    if (auto c = canonical_op(n); c && c->name == "clip") {
      out.min = c->attributes.get_float("min");
      out.max = c->attributes.get_float("max");
    }
    view.nodes.push_back(std::move(out));
  }
  view.outputs = graph.output_names();
  if (!view.outputs.empty()) view.output = view.outputs.front();
  return view;
}

std::string module_graph_json(const ModuleGraph& view, int indent) {
  detail::Json nodes = detail::Json::array();
  for (const auto& n : view.nodes) {
    detail::Json j = detail::Json::object();
    j["op"] = n.op;
    j["inputs"] = n.inputs;
    j["outputs"] = n.outputs;
    if (n.min) j["min"] = *n.min;
    if (n.max) j["max"] = *n.max;
    nodes.push_back(std::move(j));
  }
  detail::Json doc = detail::Json::object();
  doc["nodes"] = std::move(nodes);
  doc["output"] = view.output;
  doc["outputs"] = view.outputs;
  return doc.dump(indent);
}

}  // namespace tracegraph
