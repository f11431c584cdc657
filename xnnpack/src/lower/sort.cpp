// sort and topk along a dim: values and indices (portable::sort).
#include "lower/sort.h"

namespace tracegraph::xnnpack {

void lower_sort(Context& cx, const Node& n, NodeState&) {
  const bool topk = base_op(n.op) == "topk";
  const int x = cx.tensor_arg(n, "self", 0);
  const Shape shape = cx.slot(x).shape;
  const std::size_t rank = std::max<std::size_t>(shape.size(), 1);  // a 0-d tensor is one line of one
  const auto dim = static_cast<std::size_t>(normalize_dim(cx.int_arg(n, "dim").value_or(-1), rank, cx.where(n)));
  const i64 size = shape.empty() ? 1 : shape[dim];
  const i64 outer = prod(shape, 0, std::min(dim, shape.size())), inner = shape.empty() ? 1 : prod(shape, dim + 1, shape.size());
  i64 k = size;
  bool descending = cx.int_arg(n, "descending").value_or(0) != 0;
  if (topk) {
    const auto want = cx.int_arg(n, "k");
    if (!want || *want < 0 || *want > size)
      fail(ErrorCode::kInvalidArgument, cx.where(n) + ": k " + (want ? std::to_string(*want) : std::string("missing")) + " for a dim of " + std::to_string(size));
    k = *want;
    descending = cx.int_arg(n, "largest").value_or(1) != 0;  // sorted=False may be in any order: sorted is one
  }
  Shape out_shape = shape;
  if (!out_shape.empty()) out_shape[dim] = k;
  const int values = cx.new_tensor(out_shape, false), indices = cx.new_tensor(out_shape, false);
  std::vector<int> ins{x};
  Step& step = cx.portable_step(ins, {values, indices});
  step.run = [&cx, xi = ins[0], values, indices, outer, size, inner, k, descending] {
    portable::sort(cx.ptr(xi), cx.ptr(values), cx.ptr(indices), outer, size, inner, k, descending);
  };
  cx.define(n.outputs[0], values);
  if (n.outputs.size() > 1) cx.define(n.outputs[1], indices);
}

}  // namespace tracegraph::xnnpack
