#include "tracegraph/transforms/inplace_to_functional.h"

#include <algorithm>
#include <optional>
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

// The chain of slice/select views from `base` to `self` (outermost first),
// or nullopt when another kind of view is on the way: a write through such a
// chain is a scatter of the written view back into its base.
std::optional<std::vector<NodeId>> slice_chain(const Graph& g, ValueId self, ValueId base) {
  std::vector<NodeId> chain;
  for (ValueId v = self; v != base;) {
    const Value& value = g.value(v);
    if (!value.producer) return std::nullopt;
    const Node& n = g.node(*value.producer);
    const std::string_view op = op_base(n.op);
    if ((op != "slice" && op != "select") || !parse_op_name(n.op) || n.outputs.size() != 1) return std::nullopt;
    chain.push_back(*value.producer);
    v = n.inputs.at(0);
  }
  std::reverse(chain.begin(), chain.end());
  return chain;
}

// `into` with `src` written where the view `view_node` took its values from:
// aten::slice_scatter / aten::select_scatter with the view's own arguments,
// in `module` (the write's: the scatter is the rest of what it does).
ValueId scatter(Graph& g, NodeId view_node, ValueId into, ValueId src, std::optional<NodeId> before, ModuleId module) {
  const Node& view = g.node(view_node);
  const bool slice = op_base(view.op) == "slice";
  std::vector<ValueId> inputs{into, src};
  std::vector<std::string> names{"self", "src"};
  Attributes attrs;
  std::vector<std::string> view_names;
  if (const AttributeValue* a = view.attributes.find(kArgNamesAttribute); a && std::holds_alternative<std::vector<std::string>>(*a)) {
    view_names = std::get<std::vector<std::string>>(*a);
  }
  for (std::size_t i = 1; i < view.inputs.size(); ++i) {
    inputs.push_back(view.inputs[i]);
    names.push_back(i < view_names.size() ? view_names[i] : "arg" + std::to_string(i));
  }
  for (const auto& [name, value] : view.attributes) {
    if (name != kArgNamesAttribute && name != kOverloadAttribute) attrs.set(name, value);
  }
  attrs.set(std::string(kArgNamesAttribute), names);
  const Value& type = g.value(into);
  const NodeId id = g.add_node(slice ? "aten::slice_scatter" : "aten::select_scatter", std::move(inputs),
                               {NewValue(g.unique_value_name(type.name + ".scattered"), type.dtype, type.shape)}, std::move(attrs),
                               {}, before);
  g.set_node_module(id, module);
  return g.node(id).outputs[0];
}

}  // namespace

std::size_t inplace_to_functional(Graph& graph) {
  // Check every in-place op first, so that a refusal leaves the graph unchanged.
  struct Write {
    NodeId node;
    bool scatter = false;  // through slices of a value read later: scattered back into it
  };
  std::vector<Write> todo;
  Positions pos;
  for (std::size_t i = 0; i < graph.nodes().size(); ++i) pos.emplace(graph.nodes()[i].index, i);
  for (NodeId id : graph.nodes()) {
    const Node& n = graph.node(id);
    if (!is_inplace_op(n.op) || n.inputs.empty() || n.outputs.size() != 1) continue;
    const ValueId self = n.inputs[0];
    const ValueId base = view_base(graph, self);
    // Any other value sharing memory with self (the value it views, or a view
    // of it) that is read after the write would see the write. When that is
    // only the base and self is a chain of slices of it (x[:, :1] = v,
    // mask[a:b, c:d].fill_(k)), the write becomes a scatter into the base.
    const std::size_t at = pos.at(id.index);
    bool scatter = false;
    for (std::uint32_t alias : alias_set(graph, pos, base, at)) {
      if (alias == self.index) continue;
      const Value& a = graph.value(ValueId(alias));
      bool read_later = std::find(graph.outputs().begin(), graph.outputs().end(), ValueId(alias)) != graph.outputs().end();
      for (const Use& u : a.users) read_later = read_later || pos.at(u.node.index) > at;
      if (!read_later) continue;
      if (ValueId(alias) == base && slice_chain(graph, self, base)) {
        scatter = true;
        continue;
      }
      fail(ErrorCode::kUnsupported, "node '" + n.name + "' (" + n.op + ") writes %" + graph.value(self).name +
                                        ", which shares memory with %" + a.name + ", and %" + a.name +
                                        " is read after the write; this in-place write cannot be made functional");
    }
    todo.push_back({id, scatter});
  }
  for (const Write& w : todo) {
    const NodeId id = w.node;
    const ValueId self = graph.node(id).inputs[0];
    const ValueId result = graph.node(id).outputs[0];
    // Found now, not before: an earlier write's scatter may have changed the base.
    const ValueId base = view_base(graph, self);
    const std::optional<std::vector<NodeId>> chain = w.scatter ? slice_chain(graph, self, base) : std::nullopt;
    graph.replace_uses_after(id, self, result);
    graph.set_op(id, functional_op_name(graph.node(id).op));
    if (!chain) continue;
    // Scatter back up the chain: each view's base with the written view in it.
    const std::size_t next = graph.position(id) + 1;
    const std::optional<NodeId> before = next < graph.nodes().size() ? std::optional<NodeId>(graph.nodes()[next]) : std::nullopt;
    ValueId written = result;
    NodeId last = id;
    for (auto it = chain->rbegin(); it != chain->rend(); ++it) {
      const ValueId into = graph.node(*it).inputs.at(0);
      written = scatter(graph, *it, into, written, before, graph.node(id).module);
      last = *graph.value(written).producer;
    }
    graph.replace_uses_after(last, base, written);
  }
  return todo.size();
}

}  // namespace tracegraph
