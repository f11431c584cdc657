// A diagonal, and the triangles of the last two dims: diagonal, tril, triu.
#include "lower/diagonal.h"

namespace tracegraph::xnnpack {

void lower_diagonal(Context& cx, const Node& n, NodeState&) {
  const int x = cx.tensor_arg(n, "self", 0);
  const Shape in = cx.slot(x).shape;
  if (in.size() < 2) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": the diagonal of " + shape_str(in) + " (2 dims or more)");
  const auto d1 = static_cast<std::size_t>(normalize_dim(cx.int_arg(n, "dim1").value_or(0), in.size(), cx.where(n)));
  const auto d2 = static_cast<std::size_t>(normalize_dim(cx.int_arg(n, "dim2").value_or(1), in.size(), cx.where(n)));
  if (d1 == d2) fail(ErrorCode::kInvalidArgument, cx.where(n) + ": dim1 and dim2 are both " + std::to_string(d1));
  const i64 offset = cx.int_arg(n, "offset").value_or(0);
  std::vector<i64> stride(in.size(), 1);
  for (std::size_t i = in.size() - 1; i > 0; --i) stride[i - 1] = stride[i] * in[i];
  // Entries (i, i + offset) of the two dims, the others kept in order before them.
  const i64 length = std::max<i64>(0, offset >= 0 ? std::min(in[d1], in[d2] - offset) : std::min(in[d1] + offset, in[d2]));
  const i64 start = length == 0 ? 0 : offset >= 0 ? offset * stride[d2] : -offset * stride[d1];
  std::vector<i64> size, steps;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (i == d1 || i == d2) continue;
    size.push_back(in[i]);
    steps.push_back(stride[i]);
  }
  size.push_back(length);
  steps.push_back(stride[d1] + stride[d2]);
  const int out = cx.new_tensor(size, false);
  cx.portable_map(x, out, [size, steps, start](const float* a, float* b) { portable::as_strided(a, b, size, steps, start); });
  cx.define(n.outputs[0], out);
}

void lower_triangle(Context& cx, const Node& n, NodeState&) {
  const int x = cx.tensor_arg(n, "self", 0);
  const Shape shape = cx.slot(x).shape;
  if (shape.size() < 2) fail(ErrorCode::kShapeMismatch, cx.where(n) + ": " + base_op(n.op) + " of " + shape_str(shape) + " (2 dims or more)");
  const i64 diagonal = cx.int_arg(n, "diagonal").value_or(0);
  const bool lower = base_op(n.op).rfind("tril", 0) == 0;
  const i64 rows = shape[shape.size() - 2], cols = shape.back(), planes = numel(shape) / std::max<i64>(rows * cols, 1);
  const int out = cx.new_tensor(shape, false);
  cx.portable_map(x, out, [planes, rows, cols, diagonal, lower](const float* a, float* b) { portable::triangle(a, b, planes, rows, cols, diagonal, lower); });
  cx.define(n.outputs[0], out);
}

}  // namespace tracegraph::xnnpack
