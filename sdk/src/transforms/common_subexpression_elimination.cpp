#include <map>

#include "tracegraph/op_table.h"
#include "tracegraph/transforms/transforms.h"
#include "transforms/util.h"

namespace tracegraph {
std::size_t common_subexpression_elimination(Graph& g, TransformContext& ctx) {
  std::size_t rewrites = 0;
  // (op, inputs) -> earlier nodes with that key; attributes compared one by one.
  std::map<std::pair<std::string, std::vector<std::uint32_t>>, std::vector<NodeId>> seen;
  const std::vector<NodeId> order = g.nodes();
  for (NodeId id : order) {
    const Node& n = g.node(id);
    if (is_inplace_op(n.op) || transforms::is_random(n) || n.outputs.empty()) continue;
    std::vector<std::uint32_t> ins;
    for (ValueId v : n.inputs) ins.push_back(v.index);
    auto& earlier = seen[{n.op, ins}];
    bool replaced = false;
    for (NodeId e : earlier) {
      const Node& m = g.node(e);
      if (m.outputs.size() != n.outputs.size() || !(m.attributes == n.attributes)) continue;
      if (!ctx.take()) return rewrites;
      for (std::size_t k = 0; k < n.outputs.size(); ++k) g.replace_all_uses(n.outputs[k], m.outputs[k]);
      g.erase_node(id);
      ++rewrites;
      replaced = true;
      break;
    }
    if (!replaced) earlier.push_back(id);
  }
  return rewrites;
}

}  // namespace tracegraph
