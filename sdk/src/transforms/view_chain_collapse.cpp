#include <numeric>

#include "tracegraph/transforms/transforms.h"
#include "transforms/util.h"

namespace tracegraph {
namespace {

bool is_reshape_like(const std::string& name) {
  return name == "view" || name == "reshape" || name == "flatten" || name == "squeeze" || name == "unsqueeze";
}

// The permutation a permute or transpose node applies, when constant.
std::optional<std::vector<std::int64_t>> permutation(const Graph& g, const Node& n) {
  const std::string name = transforms::canonical_name(n);
  const auto in = transforms::data_input(n);
  if (!in || n.inputs.size() != 1) return std::nullopt;
  const auto& shape = g.value(*in).shape;
  if (!shape) return std::nullopt;
  const auto rank = static_cast<std::int64_t>(shape->size());
  auto norm = [rank](std::int64_t d) { return d < 0 ? d + rank : d; };
  if (name == "permute") {
    auto dims = arg_ints(n, "dims");
    if (!dims || static_cast<std::int64_t>(dims->size()) != rank) return std::nullopt;
    for (auto& d : *dims) d = norm(d);
    return dims;
  }
  if (name == "transpose") {
    auto d0 = arg_int(n, "dim0"), d1 = arg_int(n, "dim1");
    if (!d0 || !d1) return std::nullopt;
    std::vector<std::int64_t> p(static_cast<std::size_t>(rank));
    std::iota(p.begin(), p.end(), 0);
    std::swap(p[static_cast<std::size_t>(norm(*d0))], p[static_cast<std::size_t>(norm(*d1))]);
    return p;
  }
  return std::nullopt;
}

}  // namespace

std::size_t view_chain_collapse(Graph& g, TransformContext& ctx) {
  std::size_t rewrites = 0;
  const std::vector<NodeId> order = g.nodes();
  for (NodeId id : order) {
    if (!g.is_live(id)) continue;
    const Node& n = g.node(id);
    const std::string name = transforms::canonical_name(n);
    const auto in = transforms::data_input(n);
    if (!in || !g.value(*in).producer || n.outputs.size() != 1) continue;
    const NodeId prev_id = *g.value(*in).producer;
    const Node& prev = g.node(prev_id);
    const std::string prev_name = transforms::canonical_name(prev);
    const auto prev_in = transforms::data_input(prev);
    if (!prev_in) continue;

    if (is_reshape_like(name) && is_reshape_like(prev_name) && n.inputs.size() == 1 && prev.inputs.size() == 1) {
      // reshape(reshape(x, a), b) == reshape(x, b): one node with b's static shape.
      const auto shape = transforms::static_shape(g.value(n.outputs[0]));
      if (!shape || !ctx.take()) continue;
      Attributes attrs;
      attrs.set("shape", *shape);
      attrs.set(std::string(kArgNamesAttribute), std::vector<std::string>{"self"});
      const Value& out = g.value(n.outputs[0]);
      const NodeId r = g.add_node("aten::reshape", {*prev_in}, {NewValue("", out.dtype, out.shape)}, std::move(attrs), {}, id);
      g.set_node_module(r, g.node(id).module);  // the reshape that replaces it does what it did
      transforms::bypass(g, id, g.node(r).outputs[0]);
      ++rewrites;
      continue;
    }
    const auto p = permutation(g, n);
    const auto q = permutation(g, prev);
    if (p && q && p->size() == q->size()) {
      // out[i] = in[q[p[i]]]: the identity when q∘p is.
      bool identity = true;
      for (std::size_t i = 0; i < p->size(); ++i) identity = identity && (*q)[static_cast<std::size_t>((*p)[i])] == static_cast<std::int64_t>(i);
      if (!identity || !ctx.take()) continue;
      transforms::bypass(g, id, *prev_in);
      ++rewrites;
    }
  }
  return rewrites;
}

}  // namespace tracegraph
