// Cumulative ops along a dim: cumsum and cumprod, cummax and cummin (the
// running extreme and its position), on portable kernels.
#include "lower/cumulative.h"

namespace tracegraph::xnnpack {

void lower_cumsum(Context& cx, const Node& n, NodeState&) {
  const int x = cx.tensor_arg(n, "self", 0);
  const Shape shape = cx.slot(x).shape;
  if (n.attributes.get_int("dtype")) fail(ErrorCode::kUnsupported, cx.where(n) + ": " + base_op(n.op) + " with a dtype");
  const std::size_t rank = std::max<std::size_t>(shape.size(), 1);
  const auto dim = static_cast<std::size_t>(normalize_dim(cx.int_arg(n, "dim").value_or(0), rank, cx.where(n)));
  const i64 outer = prod(shape, 0, dim), size = shape.empty() ? 1 : shape[dim], inner = prod(shape, dim + 1, shape.size());
  const int out = cx.new_tensor(shape, false);
  const bool product = base_op(n.op) == "cumprod";
  cx.portable_map(x, out, [outer, size, inner, product](const float* a, float* b) { portable::cumsum(a, b, outer, size, inner, product); });
  cx.define(n.outputs[0], out);
}

void lower_cum_extreme(Context& cx, const Node& n, NodeState&) {
  const int x = cx.tensor_arg(n, "self", 0);
  const Shape shape = cx.slot(x).shape;
  const std::size_t rank = std::max<std::size_t>(shape.size(), 1);
  const auto dim = static_cast<std::size_t>(normalize_dim(cx.int_arg(n, "dim").value_or(0), rank, cx.where(n)));
  const i64 outer = prod(shape, 0, std::min(dim, shape.size())), size = shape.empty() ? 1 : shape[dim];
  const i64 inner = shape.empty() ? 1 : prod(shape, dim + 1, shape.size());
  const int values = cx.new_tensor(shape, false), indices = cx.new_tensor(shape, false);
  const bool max = base_op(n.op) == "cummax";
  std::vector<int> ins{x};
  Step& step = cx.portable_step(ins, {values, indices});
  step.run = [&cx, xi = ins[0], values, indices, outer, size, inner, max] {
    portable::cum_extreme(cx.ptr(xi), cx.ptr(values), cx.ptr(indices), outer, size, inner, max);
  };
  cx.define(n.outputs[0], values);
  if (n.outputs.size() > 1) cx.define(n.outputs[1], indices);
}

}  // namespace tracegraph::xnnpack
