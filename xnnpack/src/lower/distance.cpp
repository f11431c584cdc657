// Distances and similarities of rows: cdist, pdist, pairwise_distance and
// cosine_similarity, on portable kernels.
#include "lower/distance.h"
#include "lower/broadcast.h"

namespace tracegraph::xnnpack {

void lower_distance(Context& cx, const Node& n, NodeState&) {
  const std::string base = base_op(n.op);
  const double p = cx.float_arg(n, "p").value_or(2.0);
  if (!(p >= 0)) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": p " + std::to_string(p) + " (0 or more)");
  if (base == "pdist" || base == "_pdist_forward") {
    const int x = cx.tensor_arg(n, "self", 0);
    const Shape xs = cx.slot(x).shape;
    if (xs.size() != 2) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": input " + shape_str(xs) + " (2 dims)");
    const i64 rows = xs[0], cols = xs[1];
    const int out = cx.new_tensor({rows * std::max<i64>(rows - 1, 0) / 2}, false);
    cx.portable_map(x, out, [rows, cols, p](const float* a, float* b) { portable::pdist(a, b, rows, cols, p); });
    return cx.define(n.outputs[0], out);
  }
  // cdist: x1 [..., P, M], x2 [..., R, M], the leading dims broadcast.
  int x1 = cx.tensor_arg(n, "x1", 0), x2 = cx.tensor_arg(n, "x2", 1);
  const Shape s1 = cx.slot(x1).shape, s2 = cx.slot(x2).shape;
  if (s1.size() < 2 || s2.size() < 2 || s1.back() != s2.back())
    fail(ErrorCode::kShapeMismatch, cx.where(n) + ": x1 " + shape_str(s1) + " and x2 " + shape_str(s2) + " (rows of one length)");
  const auto batch_shape = shape_rules::broadcast(Shape(s1.begin(), s1.end() - 2), Shape(s2.begin(), s2.end() - 2));
  if (!batch_shape) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": the batch dims of " + shape_str(s1) + " and " + shape_str(s2) + " do not broadcast");
  const i64 rows1 = s1[s1.size() - 2], rows2 = s2[s2.size() - 2], cols = s1.back(), batch = numel(*batch_shape);
  Shape b1 = *batch_shape, b2 = *batch_shape, out_shape = *batch_shape;
  b1.insert(b1.end(), {rows1, cols});
  b2.insert(b2.end(), {rows2, cols});
  out_shape.insert(out_shape.end(), {rows1, rows2});
  x1 = cx.as_layout(broadcast_to(cx, x1, b1), false);
  x2 = cx.as_layout(broadcast_to(cx, x2, b2), false);
  const int out = cx.new_tensor(out_shape, false);
  Step& step = cx.add_step({x1, x2}, {out});
  step.run = [&cx, x1, x2, out, batch, rows1, rows2, cols, p] { portable::cdist(cx.ptr(x1), cx.ptr(x2), cx.ptr(out), batch, rows1, rows2, cols, p); };
  cx.define(n.outputs[0], out);
}

void lower_pairwise_distance(Context& cx, const Node& n, NodeState&) {
  int x1 = cx.tensor_arg(n, "x1", 0), x2 = cx.tensor_arg(n, "x2", 1);
  const Shape shape = broadcast_shape(cx, n, cx.slot(x1).shape, cx.slot(x2).shape);
  const double p = cx.float_arg(n, "p").value_or(2.0), eps = cx.float_arg(n, "eps").value_or(1e-6);
  const bool keepdim = cx.int_arg(n, "keepdim").value_or(0) != 0;
  // torch's norm over the last dim of the broadcast shape (a 0-d one is its own).
  const i64 cols = shape.empty() ? 1 : shape.back(), rows = numel(shape) / std::max<i64>(cols, 1);
  Shape out_shape = shape;
  if (!out_shape.empty()) {
    if (keepdim) out_shape.back() = 1;
    else out_shape.pop_back();
  }
  x1 = cx.as_layout(broadcast_to(cx, x1, shape), false);
  x2 = cx.as_layout(broadcast_to(cx, x2, shape), false);
  const int out = cx.new_tensor(out_shape, false);
  Step& step = cx.add_step({x1, x2}, {out});
  step.run = [&cx, x1, x2, out, rows, cols, p, eps] { portable::pairwise_distance(cx.ptr(x1), cx.ptr(x2), cx.ptr(out), rows, cols, p, eps); };
  cx.define(n.outputs[0], out);
}

void lower_cosine_similarity(Context& cx, const Node& n, NodeState&) {
  int x1 = cx.tensor_arg(n, "x1", 0), x2 = cx.tensor_arg(n, "x2", 1);
  const Shape shape = broadcast_shape(cx, n, cx.slot(x1).shape, cx.slot(x2).shape);
  if (shape.empty()) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": 0-dim operands (cosine_similarity needs a dim)");
  const auto dim = static_cast<std::size_t>(normalize_dim(cx.int_arg(n, "dim").value_or(1), shape.size(), cx.where(n)));
  const double eps = cx.float_arg(n, "eps").value_or(1e-8);
  const i64 outer = prod(shape, 0, dim), size = shape[dim], inner = prod(shape, dim + 1, shape.size());
  Shape out_shape = shape;
  out_shape.erase(out_shape.begin() + static_cast<std::ptrdiff_t>(dim));
  x1 = cx.as_layout(broadcast_to(cx, x1, shape), false);
  x2 = cx.as_layout(broadcast_to(cx, x2, shape), false);
  const int out = cx.new_tensor(out_shape, false);
  Step& step = cx.add_step({x1, x2}, {out});
  step.run = [&cx, x1, x2, out, outer, size, inner, eps] { portable::cosine_similarity(cx.ptr(x1), cx.ptr(x2), cx.ptr(out), outer, size, inner, eps); };
  cx.define(n.outputs[0], out);
}

}  // namespace tracegraph::xnnpack
