#include "tracegraph/flops.h"

#include "tracegraph/op_table.h"

namespace tracegraph {

namespace {

double product(std::span<const std::int64_t> dims) {
  double n = 1;
  for (std::int64_t d : dims) n *= static_cast<double>(d);
  return n;
}

}  // namespace

std::optional<double> node_flops(const Node& node, std::span<const Shape> inputs, std::span<const Shape> outputs) {
  const auto canonical = canonical_op(node);
  if (!canonical || outputs.empty()) return std::nullopt;
  const std::string& op = canonical->name;
  const double out = product(outputs[0]);
  auto input = [&](std::size_t i) -> const Shape* { return i < inputs.size() && !inputs[i].empty() ? &inputs[i] : nullptr; };
  if (op == "conv" || op == "conv_transpose") {
    // Weight [out, in / groups, k...] (transposed: [in, out / groups, k...]):
    // each output (each input, transposed) takes in/groups * k... multiply-adds.
    const Shape* x = input(0);
    const Shape* w = input(1);
    if (!x || !w || w->size() < 2) return std::nullopt;
    const double per = product(std::span(*w).subspan(1));
    return 2 * (op == "conv" ? out : product(*x)) * per;
  }
  if (op == "linear" || op == "matmul") {
    // linear(x, w[out, in]); addmm(bias, a, b); matmul/mm/bmm(a, b): K is a's last dim.
    const bool addmm = node.op.find("addmm") != std::string::npos;
    const Shape* k_from = input(op == "matmul" ? 0 : 1);  // linear's weight is [out, in]; addmm's mat1 [n, in]
    if (!k_from || (addmm && k_from->size() != 2)) return std::nullopt;
    return 2 * out * static_cast<double>(k_from->back());
  }
  return std::nullopt;
}

std::optional<double> node_flops(const Graph& graph, NodeId id) {
  const Node& n = graph.node(id);
  auto shapes = [&](const std::vector<ValueId>& values) -> std::optional<std::vector<Shape>> {
    std::vector<Shape> out;
    for (ValueId v : values) {
      Shape s;  // empty for an optional input left out
      if (v.valid()) {
        const auto& shape = graph.value(v).shape;
        if (!shape) return std::nullopt;
        for (const Dim& d : *shape) {
          if (!d.is_static()) return std::nullopt;
          s.push_back(d.size);
        }
      }
      out.push_back(std::move(s));
    }
    return out;
  };
  const auto in = shapes(n.inputs);
  const auto out = shapes(n.outputs);
  if (!in || !out) return std::nullopt;
  return node_flops(n, *in, *out);
}

}  // namespace tracegraph
