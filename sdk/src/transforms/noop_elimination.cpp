#include "tracegraph/transforms/transforms.h"
#include "transforms/util.h"

namespace tracegraph {
namespace {

using transforms::static_shape;

bool same_type(const Value& a, const Value& b) {
  return a.dtype && b.dtype && *a.dtype == *b.dtype && static_shape(a) && static_shape(b) && *static_shape(a) == *static_shape(b);
}

// The input a node returns unchanged, if it is one of the no-ops.
std::optional<ValueId> passthrough(const Graph& g, const Node& n) {
  if (n.outputs.size() != 1) return std::nullopt;
  const auto in = transforms::data_input(n);
  if (!in) return std::nullopt;
  const Value& x = g.value(*in);
  const Value& y = g.value(n.outputs[0]);
  const std::string name = transforms::canonical_name(n);
  if (name == "contiguous") {
    // Same values, but a view after it needs its strides: x.transpose(1,
    // 2).contiguous().view(...) (a channel shuffle) fails on LibTorch without it.
    for (const Use& u : y.users) {
      const std::string_view base = op_base(g.node(u.node).op);
      if (base == "view" || base == "view_as" || base == "view_copy" || base == "_unsafe_view") return std::nullopt;
    }
    return in;
  }
  if (name == "detach" || name == "clone") return in;
  if (name == "dropout") {
    if (!arg_bool(n, "train").value_or(true)) return in;
    return std::nullopt;
  }
  if (name == "cast") {
    // aten::to(self, dtype, ...) to the dtype it already has, on the same device.
    if (n.attributes.contains("device") || arg_bool(n, "copy").value_or(false)) return std::nullopt;
    auto code = n.attributes.find("dtype");
    if (code && std::holds_alternative<std::int64_t>(*code)) {
      auto d = dtype_from_torch_code(std::get<std::int64_t>(*code));
      if (d && x.dtype && *d == *x.dtype && n.inputs.size() == 1) return in;
      return std::nullopt;
    }
    return same_type(x, y) && n.inputs.size() == 1 ? in : std::nullopt;
  }
  if (name == "view" || name == "reshape" || name == "flatten" || name == "squeeze" || name == "unsqueeze" || name == "expand") {
    return same_type(x, y) && n.inputs.size() == 1 ? in : std::nullopt;
  }
  if (name == "slice") {
    // Every element kept: no dynamic bounds, step 1, and the shape unchanged.
    if (n.inputs.size() != 1 || arg_int(n, "step").value_or(1) != 1) return std::nullopt;
    if (arg_int(n, "start").value_or(0) != 0) return std::nullopt;
    return same_type(x, y) ? in : std::nullopt;
  }
  if (name == "mul" || name == "div" || name == "add" || name == "sub") {
    // x*1, x/1, x+0, x-0: the other operand a scalar attribute or a constant,
    // and the result of x's own dtype and shape (no broadcast, no promotion).
    if (!same_type(x, y)) return std::nullopt;
    std::optional<double> other;
    if (const AttributeValue* a = n.attributes.find("other"); a && (std::holds_alternative<double>(*a) || std::holds_alternative<std::int64_t>(*a))) {
      other = n.attributes.get_float("other");
    } else if (auto o = input_for_arg(n, "other", 1)) {
      other = transforms::scalar_constant(g, *o);
    }
    if (!other) return std::nullopt;
    const double alpha = n.attributes.get_float("alpha").value_or(1.0);
    if ((name == "mul" || name == "div") && *other == 1.0) return in;
    if ((name == "add" || name == "sub") && *other * alpha == 0.0) return in;
  }
  return std::nullopt;
}

}  // namespace

std::size_t noop_elimination(Graph& g, TransformContext& ctx) {
  std::size_t rewrites = 0;
  const std::vector<NodeId> order = g.nodes();
  for (NodeId id : order) {
    if (!g.is_live(id)) continue;
    auto in = passthrough(g, g.node(id));
    if (!in || !ctx.take()) continue;
    transforms::bypass(g, id, *in);
    ++rewrites;
  }
  return rewrites;
}

}  // namespace tracegraph
