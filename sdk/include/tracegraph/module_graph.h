// The module_graph view: what a torch model computes, in the shape that
// output-activation tooling reads. `(nodes, output)`: each node has its op
// (the format's own name, e.g. "aten::hardtanh"), the names of the values it
// reads and writes, and for a clip its constant min and max; `output` names
// the value the model returns (`outputs` names all of them, in order).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tracegraph/graph.h"

namespace tracegraph {

struct ModuleGraphNode {
  std::string op;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::optional<double> min;  // clips only, when constant
  std::optional<double> max;
};

struct ModuleGraph {
  std::vector<ModuleGraphNode> nodes;
  std::string output;                // the first (usually only) returned value
  std::vector<std::string> outputs;  // every returned value
};

ModuleGraph module_graph(const Graph& graph);
// {"nodes": [{"op", "inputs", "outputs", "min"?, "max"?}], "output": ..., "outputs": [...]}
std::string module_graph_json(const ModuleGraph& view, int indent = -1);

}  // namespace tracegraph
