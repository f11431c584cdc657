#include "tracegraph/op_table.h"
#include "tracegraph/transforms/transforms.h"
#include "transforms/util.h"

namespace tracegraph {

std::size_t dead_code_elimination(Graph& g, TransformContext& ctx) {
  std::size_t rewrites = 0;
  // Walk backwards so a chain of dead nodes goes in one pass.
  const std::vector<NodeId> order = g.nodes();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const Node& n = g.node(*it);
    if (is_inplace_op(n.op)) continue;  // writes something: not dead just because its result is unread
    bool read = false;
    for (ValueId o : n.outputs) read = read || !g.value(o).users.empty() || transforms::is_graph_output(g, o);
    if (read || !ctx.take()) continue;
    g.erase_node(*it);
    ++rewrites;
  }
  for (ValueId c : g.constants()) {
    if (!g.value(c).users.empty() || transforms::is_graph_output(g, c) || !ctx.take()) continue;
    g.erase_value(c);
    ++rewrites;
  }
  return rewrites;
}

}  // namespace tracegraph
