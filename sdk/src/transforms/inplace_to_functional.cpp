#include "tracegraph/transforms/inplace_to_functional.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "tracegraph/op_table.h"

namespace tracegraph {
namespace {

// Position of each node in the order; the check below asks for it often, and
// nothing moves until the rewrite.
using Positions = std::unordered_map<std::uint32_t, std::size_t>;

// The value a view was (transitively) taken of.
ValueId view_base(const Graph& g, ValueId v) {
  for (;;) {
    const Value& value = g.value(v);
    if (!value.producer) return v;
    const Node& n = g.node(*value.producer);
    if (!is_view_op(n.op) || n.inputs.empty()) return v;
    v = n.inputs[0];
  }
}

// Every value that shares memory with `base` when the node at position
// `before` runs: itself and the views of it taken earlier, transitively.
// (Views taken later read the rewritten result and need no care.)
std::set<std::uint32_t> alias_set(const Graph& g, const Positions& pos, ValueId base, std::size_t before) {
  std::set<std::uint32_t> out{base.index};
  std::vector<ValueId> work{base};
  while (!work.empty()) {
    ValueId v = work.back();
    work.pop_back();
    for (const Use& u : g.value(v).users) {
      const Node& n = g.node(u.node);
      if (u.input_index != 0 || !is_view_op(n.op) || pos.at(u.node.index) >= before) continue;
      for (ValueId o : n.outputs) {
        if (out.insert(o.index).second) work.push_back(o);
      }
    }
  }
  return out;
}

}  // namespace

std::size_t inplace_to_functional(Graph& graph) {
  // Check every in-place op first, so that a refusal leaves the graph unchanged.
  std::vector<NodeId> todo;
  Positions pos;
  for (std::size_t i = 0; i < graph.nodes().size(); ++i) pos.emplace(graph.nodes()[i].index, i);
  for (NodeId id : graph.nodes()) {
    const Node& n = graph.node(id);
    if (!is_inplace_op(n.op) || n.inputs.empty() || n.outputs.size() != 1) continue;
    const ValueId self = n.inputs[0];
    const ValueId base = view_base(graph, self);
    // Any other value sharing memory with self (the value it views, or a view
    // of it) that is read after the write would see the write.
    const std::size_t at = pos.at(id.index);
    for (std::uint32_t alias : alias_set(graph, pos, base, at)) {
      if (alias == self.index) continue;
      const Value& a = graph.value(ValueId(alias));
      bool read_later = std::find(graph.outputs().begin(), graph.outputs().end(), ValueId(alias)) != graph.outputs().end();
      for (const Use& u : a.users) read_later = read_later || pos.at(u.node.index) > at;
      if (read_later) {
        fail(ErrorCode::kUnsupported, "node '" + n.name + "' (" + n.op + ") writes %" + graph.value(self).name +
                                          ", which shares memory with %" + a.name +
                                          ", and %" + a.name + " is read after the write; this in-place write cannot be made functional");
      }
    }
    todo.push_back(id);
  }
  for (NodeId id : todo) {
    const Node& n = graph.node(id);
    const ValueId self = n.inputs[0];
    const ValueId result = n.outputs[0];
    graph.replace_uses_after(id, self, result);
    graph.set_op(id, functional_op_name(n.op));
  }
  return todo.size();
}

}  // namespace tracegraph
